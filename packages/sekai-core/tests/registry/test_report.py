import pytest

from sekai._providers import install_hint
from sekai.plugins import PluginFailure
from sekai.plugins._host import PluginHost
from sekai.registry import EnvRegistry, EnvSpec, SpecSource
from sekai.registry._report import (
    env_hint,
    failure_sentence,
    format_registry,
    mode_hint,
    owner_sentence,
    suggest,
)


def host_with(failures=(), installed=()):
    host = PluginHost(
        EnvRegistry(), entry_points=[], disabled="", is_installed=lambda d: d in installed
    )
    host._failures.extend(failures)
    return host


IMPORT_FAILURE = PluginFailure(
    "acme", "acme-envs", "1.2.0", "import", "ModuleNotFoundError: No module named 'x'"
)


def test_suggest_prefers_other_versions_newest_first():
    ids = ["CartPole-v1", "CartPole-v0", "CartPole-v2", "Market-v0", "CartPoles-v1"]
    assert suggest("CartPole-v9", ids) == ("CartPole-v2", "CartPole-v1", "CartPole-v0")


@pytest.mark.parametrize(
    ("miss", "expected"),
    [
        ("Classic/cartpole-v1", "classic/CartPole-v1"),
        ("CLASSIC/CARTPOLE-v1", "classic/CartPole-v1"),  # too unlike for difflib
        ("CARTPOLE-v1", "CartPole-v1"),
    ],
)
def test_suggest_matches_names_case_insensitively_within_the_namespace(miss, expected):
    assert suggest(miss, ["classic/CartPole-v1", "CartPole-v1", "Pendulum-v1"]) == (expected,)


def test_suggest_falls_back_to_close_matches():
    assert suggest("CartPol-v1", ["CartPole-v1", "Pendulum-v1"]) == ("CartPole-v1",)


def test_suggest_never_suggests_the_id_itself_and_copes_with_malformed_ids():
    assert suggest("A-v0", ["A-v0"]) == ()
    assert suggest("bad id!", ["bad-id-v0"]) == ("bad-id-v0",)


@pytest.mark.parametrize(
    ("stage", "error", "fix"),
    [
        ("import", "ImportError: bad", "Reinstall it or add the missing dependency."),
        ("import", "ModuleNotFoundError: bad", "Reinstall it or add the missing dependency."),
        ("import", "MissingDependency: bad", "Reinstall it or add the missing dependency."),
        (
            "import",
            "RuntimeError: bad",
            "Its module raised while being imported: reinstall it, or report the problem to its "
            "maintainers (SEKAI_DISABLE_PLUGINS=acme skips it).",
        ),
        ("register", "ValueError: bad", "Reinstall it, or report the problem to its maintainers."),
        ("clash", "ValueError: bad", "Uninstall one of the distributions using that plugin name."),
    ],
)
def test_failure_sentence_names_plugin_distribution_error_and_fix(stage, error, fix):
    failure = PluginFailure("acme", "acme-envs", "1.2.0", stage, error)
    assert failure_sentence(failure) == (
        f"Plugin 'acme' (acme-envs 1.2.0) failed to load: {error}. {fix}"
    )


def test_failure_sentence_for_a_reserved_name_asks_for_a_rename_not_an_uninstall():
    # Before: it said to uninstall one of the distributions, which could only be sekai-classic.
    error = "ValueError: plugin name 'Classic' is reserved for sekai-classic"
    failure = PluginFailure("Classic", "acme-envs", "1.0", "clash", error)
    assert failure_sentence(failure) == (
        f"Plugin 'Classic' (acme-envs 1.0) failed to load: {error}. Report it to the "
        "maintainers of acme-envs, or rename that entry point (and the namespace of its IDs) "
        "if the pack is yours."
    )


def test_failure_sentence_for_two_first_party_distributions_asks_for_an_uninstall():
    # Only a broken installation gets here: nothing is to be renamed, one copy is to go.
    error = "ValueError: plugin name 'classic' is also used by sekai-classic"
    failure = PluginFailure("classic", "sekai_classic", "0.3.0", "clash", error)
    assert failure_sentence(failure) == (
        f"Plugin 'classic' (sekai_classic 0.3.0) failed to load: {error}. "
        "Uninstall one of the distributions using that plugin name."
    )


def test_failure_sentence_for_a_disabled_plugin():
    failure = PluginFailure("finance", "sekai-finance", "0.3.0", "disabled", "disabled")
    assert failure_sentence(failure) == "Plugin 'finance' is disabled by SEKAI_DISABLE_PLUGINS."


def test_env_hint_names_the_missing_first_party_distribution():
    assert env_hint("Trading-v0", host_with()) == (
        "sekai-finance",
        (),
        install_hint("sekai-finance"),
    )


def test_env_hint_for_an_installed_first_party_distribution_that_failed():
    failure = PluginFailure("classic", "sekai-classic", "0.3.0", "import", "ImportError: x")
    provider, failures, hint = env_hint(
        "classic/CartPole-v1", host_with([failure], ["sekai-classic"])
    )
    assert (provider, failures) == ("sekai-classic", (failure,))
    assert hint.startswith("Plugin 'classic' (sekai-classic 0.3.0) failed to load: ImportError: x.")


@pytest.mark.parametrize("distribution", ["sekai_classic", "Sekai.Classic"])
def test_env_hint_finds_the_failure_whatever_the_spelling_of_its_distribution(distribution):
    # Metadata may spell the distribution otherwise than the first-party provider table does.
    failure = PluginFailure("classic", distribution, "0.3.0", "import", "ImportError: x")
    assert env_hint("classic/CartPole-v1", host_with([failure]))[1:] == (
        (failure,),
        failure_sentence(failure),
    )


def test_env_hint_for_the_namespace_of_a_failed_third_party_plugin():
    assert env_hint("acme/Foo-v0", host_with([IMPORT_FAILURE])) == (
        None,
        (IMPORT_FAILURE,),
        failure_sentence(IMPORT_FAILURE),
    )


def test_env_hint_is_empty_for_unknown_ids_and_healthy_distributions():
    assert env_hint("Nope-v0", host_with([IMPORT_FAILURE])) == (None, (), None)
    assert env_hint("Trading-v0", host_with(installed=["sekai-finance"])) == (
        "sekai-finance",
        (),
        None,
    )
    assert env_hint("Trading-v0", None) == ("sekai-finance", (), None)


def test_mode_hint_names_the_missing_distribution_of_a_first_party_mode():
    assert mode_hint("ray", host_with()) == install_hint("sekai-ray")
    assert mode_hint("ray", host_with(installed=["sekai-ray"])) is None
    assert mode_hint("foo", host_with()) is None
    assert mode_hint(3, host_with()) is None


def test_owner_sentence_names_the_plugin_or_nothing_for_runtime_specs():
    sourced = EnvSpec("A-v0", "a.b:C", source=SpecSource("p", "d", "1"))
    assert owner_sentence(sourced) == "It is provided by plugin 'p' (d 1)."
    assert owner_sentence(EnvSpec("A-v0", "a.b:C")) is None


def test_format_registry_of_nothing_is_the_header_only():
    assert format_registry([]) == "Registered environments:"


def test_suggest_for_an_unknown_namespace_compares_names_not_whole_ids():
    ids = ["MarketMaking-v0", "CartPole-v1", "classic/CartPole-v1"]
    assert suggest("broken/Thing-v0", ids) == ()
    assert suggest("clasic/CartPole-v1", ids) == ("CartPole-v1", "classic/CartPole-v1")


def test_suggest_within_a_known_namespace_stays_in_it():
    ids = ["acme/Foo-v0", "Fooo-v0"]
    assert suggest("acme/Fo-v0", ids) == ("acme/Foo-v0",)


@pytest.mark.parametrize(
    ("miss", "expected"),
    [
        ("classic/Foo-v0", ()),
        ("classic/Walker-v0", ()),
        ("classic/Trading-v0", ("Trading-v0",)),
        ("classic/CartPol-v1", ("classic/CartPole-v1",)),
        ("classic/MountainCar-v1", ("classic/MountainCar-v0",)),
        ("acmecorporation/Thing-v0", ()),
        ("acmecorporatoin/Thing-v0", ()),
        ("acmecorporatoin/Walker-v0", ("acmecorporation/Walk-v0",)),
    ],
)
def test_suggest_within_a_namespace_compares_names_not_the_shared_namespace(miss, expected):
    # The namespace all its IDs share must not make unrelated names look alike.
    ids = [
        "classic/Acrobot-v1",
        "classic/MountainCar-v0",
        "classic/CartPole-v1",
        "Trading-v0",
        "acmecorporation/Other-v0",
        "acmecorporation/Walk-v0",
    ]
    assert suggest(miss, ids) == expected


def test_suggest_for_an_unknown_namespace_looks_for_a_namespace_typo_only():
    ids = ["Trading-v0", "example/Gridworld-v0"]
    assert suggest("broken/Thing-v0", ids) == ()
    assert suggest("exampel/Gridwrld-v0", ids) == ("example/Gridworld-v0",)


def test_suggest_offers_the_same_name_in_other_namespaces_before_look_alikes():
    ids = ["Market-v0", "MarketMaking-v0", "qc/MarketEnv-v0", "demo/Drift-v0", "demo/Other-v0"]
    assert suggest("Drift-v0", ids) == ("demo/Drift-v0",)
    assert suggest("MarketEnv-v0", ids) == ("qc/MarketEnv-v0", "Market-v0", "MarketMaking-v0")
    assert suggest("demo/MarketEnv-v0", ids)[0] == "qc/MarketEnv-v0"
    # Another version in the ID's own namespace still wins alone (the documented message).
    assert suggest("Cartpole-v1", ["CartPole-v1", "classic/CartPole-v1"]) == ("CartPole-v1",)


@pytest.mark.parametrize("miss", ["Walk-v5", "acm/Walk-v5", "other/Walk-v5"])
def test_suggest_for_a_forgotten_namespace_offers_the_same_version_first(miss):
    # Registration order is oldest first: the cut to three must not drop the exact match.
    ids = [f"acme/Walk-v{v}" for v in range(6)]
    if miss.startswith("other/"):
        ids.append("other/Run-v0")  # a known namespace without that name
    assert suggest(miss, ids) == ("acme/Walk-v5", "acme/Walk-v4", "acme/Walk-v3")


def test_suggest_for_a_forgotten_namespace_ranks_other_versions_newest_first():
    ids = ["acme/Walk-v0", "acme/Walk-v2", "zeta/Walk-v1", "acme/Walk-v1"]
    assert suggest("Walk-v9", ids) == ("acme/Walk-v2", "zeta/Walk-v1", "acme/Walk-v1")
    assert suggest("Walk-v1", ids) == ("zeta/Walk-v1", "acme/Walk-v1", "acme/Walk-v2")
