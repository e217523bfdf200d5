import subprocess
import sys
import types
import warnings
from typing import ClassVar

import pytest

import sekai
from sekai._providers import install_command
from sekai.error import EnvNotFound, PluginLoadWarning
from sekai.plugins import PluginFailure, PluginInfo, hookimpl
from sekai.plugins._host import EntryPointRecord, PluginHost, scan_entry_points
from sekai.registry import EnvRegistry


def record(name, plugin, distribution="acme-envs", version="1.2.0"):
    return EntryPointRecord(name, distribution, version, lambda: plugin)


def failing_import(name, distribution, exc):
    def load():
        raise exc

    return EntryPointRecord(name, distribution, "0.1.0", load)


def registry_of(*records, disabled="", installed=None):
    kwargs = {"entry_points": records, "disabled": disabled}
    if installed is not None:
        kwargs["is_installed"] = lambda dist: dist in installed
    return EnvRegistry(lambda reg: PluginHost(reg, **kwargs))


def load_quietly(reg):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg.all_specs()
    return [w for w in caught if issubclass(w.category, PluginLoadWarning)]


def env_plugin(*env_ids, then_raise=None):
    class Plugin:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            for env_id in env_ids:
                registry.register(env_id, "sekai.testing.envs:LineEnv")
            if then_raise is not None:
                raise then_raise

    return Plugin


def make_fake_distribution(root, name="fake-pack", version="1.0", plugin="fake"):
    """Write a distribution's metadata (no code) declaring one ``sekai`` entry point."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        f"[sekai]\n{plugin} = fake_pack_never_imported._plugin\n"
    )


CORE = PluginInfo("core", "sekai-core", sekai.__version__, (), ("sync", "async", "proc"))


def test_core_builtin_plugin_loads_first_with_its_three_backends():
    reg = registry_of(record("acme", env_plugin("acme/A-v0")))
    report = reg.plugin_report()
    assert report.plugins[0] == CORE
    assert report.plugins[1] == PluginInfo("acme", "acme-envs", "1.2.0", ("acme/A-v0",), ())
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc"]


def test_entry_points_load_sorted_by_distribution_then_name():
    reg = registry_of(
        record("zz", env_plugin("zz/Z-v0"), "b-dist"),
        record("bb", env_plugin("bb/B-v0"), "a-dist"),
        record("aa", env_plugin("aa/A-v0"), "b-dist"),
    )
    assert [s.id for s in reg.all_specs()] == ["bb/B-v0", "aa/A-v0", "zz/Z-v0"]
    assert [p.name for p in reg.plugin_report().plugins] == ["core", "bb", "aa", "zz"]


def _looking_up(env_id, name):
    """A plugin whose hook registers ``{name}/Short-v0`` with the entry point of ``env_id``."""
    registries = []

    class Looking:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            base = registries[0].spec(env_id)
            registry.register(f"{name}/Short-v0", base.entry_point, max_episode_steps=50)

    return Looking, registries.append


@pytest.mark.parametrize("distribution", ["a-bandits", "zeta-bandits"])
def test_a_hook_may_look_up_first_party_specs_whatever_its_distribution_is_called(
    distribution,
):
    plugin, give_registry = _looking_up("CartPole-v1", "bandits")
    reg = registry_of(
        record("bandits", plugin, distribution),
        record("classic", env_plugin("CartPole-v1"), "sekai-classic"),
    )
    give_registry(reg)
    assert load_quietly(reg) == []
    assert [s.id for s in reg.all_specs()] == ["CartPole-v1", "bandits/Short-v0"]


def test_a_plugin_looking_up_another_packs_id_is_told_the_registry_is_incomplete():
    plugin, give_registry = _looking_up("zeta/Z-v0", "bandits")
    reg = registry_of(
        record("bandits", plugin, "a-bandits"),
        record("zeta", env_plugin("zeta/Z-v0"), "zeta-envs"),
    )
    give_registry(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert failure.name == "bandits"
    assert failure.error.startswith("EnvNotFound: Environment 'zeta/Z-v0' not found")
    assert (
        "The registry is incomplete while plugins load: plugin 'bandits' (a-bandits 1.2.0) "
        "looked it up while being loaded, when only sekai's own environments are sure to be "
        "there."
    ) in failure.error


def test_a_plugin_error_ending_with_a_period_gets_one_period_in_the_warning():
    reg = registry_of(failing_import("broken", "sekai-broken-pack", ValueError("no such thing.")))
    (warning,) = load_quietly(reg)
    assert "failed to load and was skipped: ValueError: no such thing. Set" in str(warning.message)
    with pytest.raises(sekai.EnvNotFound) as info:
        reg.spec("broken/A-v0")
    assert ".." not in str(info.value)


def test_specs_carry_the_source_of_their_plugin():
    reg = registry_of(record("acme", env_plugin("acme/A-v0")))
    source = reg.spec("acme/A-v0").source
    assert (source.plugin, source.distribution, source.version) == ("acme", "acme-envs", "1.2.0")


def test_a_plugin_that_fails_to_import_is_skipped_with_one_warning_and_others_load():
    reg = registry_of(
        failing_import(
            "broken",
            "sekai-broken-pack",
            ModuleNotFoundError("No module named 'not_a_real_dependency'"),
        ),
        record("example", env_plugin("example/Gridworld-v0"), "sekai-example-pack", "0.1.0"),
    )
    caught = load_quietly(reg)
    assert [str(w.message) for w in caught] == [
        "sekai plugin 'broken' (sekai-broken-pack 0.1.0) failed to load and was skipped: "
        "ModuleNotFoundError: No module named 'not_a_real_dependency'. "
        "Set SEKAI_DISABLE_PLUGINS=broken to silence this."
    ]
    assert [s.id for s in reg.all_specs()] == ["example/Gridworld-v0"]
    assert reg.plugin_report().failures == (
        PluginFailure(
            "broken",
            "sekai-broken-pack",
            "0.1.0",
            "import",
            "ModuleNotFoundError: No module named 'not_a_real_dependency'",
        ),
    )


def test_env_not_found_in_the_namespace_of_a_failed_plugin_names_the_failure():
    reg = registry_of(failing_import("broken", "sekai-broken-pack", ImportError("nope")))
    load_quietly(reg)
    with pytest.raises(EnvNotFound) as info:
        reg.spec("broken/Thing-v0")
    assert str(info.value) == (
        "Environment 'broken/Thing-v0' not found in registry. Plugin 'broken' "
        "(sekai-broken-pack 0.1.0) failed to load: ImportError: nope. Reinstall it or add the "
        "missing dependency. Use sekai.all_specs() or `sekai list` to see registered environments."
    )
    assert [f.name for f in info.value.failures] == ["broken"]


# Plugin modules that fail in their own import-time code, not only for a missing dependency.
FAILING_MODULES = {
    "import-error": ("import not_a_real_dependency_of_sekai_tests\n", "ModuleNotFoundError"),
    "runtime-error": ('raise RuntimeError("needs a licence key")\n', "RuntimeError"),
    "syntax-error": ("def register(:\n    pass\n", "SyntaxError"),
    "import-time-code": ('import json\nSETTINGS = json.loads("{not json")\n', "JSONDecodeError"),
    "key-error": ('import os\nKEY = os.environ["SEKAI_TEST_NEVER_SET_VARIABLE"]\n', "KeyError"),
    "system-exit": ('import sys\nsys.exit("cannot run here")\n', "SystemExit"),
}


@pytest.mark.parametrize("kind", list(FAILING_MODULES))
def test_a_plugin_module_raising_anything_at_import_is_isolated(kind, tmp_path, monkeypatch):
    from importlib.metadata import EntryPoint

    source, error_type = FAILING_MODULES[kind]
    module = f"sekai_test_failing_plugin_{kind.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    load = EntryPoint("broken", module, "sekai").load
    reg = registry_of(
        EntryPointRecord("broken", "sekai-broken-pack", "0.1.0", load),
        record("example", env_plugin("example/Gridworld-v0"), "sekai-example-pack", "0.1.0"),
    )
    caught = load_quietly(reg)
    assert [s.id for s in reg.all_specs()] == ["example/Gridworld-v0"]  # the others load
    (failure,) = reg.plugin_report().failures
    assert (failure.name, failure.stage) == ("broken", "import")
    assert failure.error.startswith(f"{error_type}: "), failure.error
    assert len(caught) == 1 and str(caught[0].message).startswith(
        f"sekai plugin 'broken' (sekai-broken-pack 0.1.0) failed to load and was skipped: "
        f"{error_type}: "
    )
    with pytest.raises(EnvNotFound) as info:
        reg.spec("broken/Thing-v0")  # make() of its envs explains why
    assert f"Plugin 'broken' (sekai-broken-pack 0.1.0) failed to load: {error_type}: " in str(
        info.value
    )
    fix = "missing dependency" if kind == "import-error" else "raised while being imported"
    assert fix in str(info.value)


_WRONG_ENTRY_POINT = (
    "Fix that entry point in the [project.entry-points.sekai] table of the pack's "
    "pyproject.toml and reinstall it, or report the problem to its maintainers."
)
PLUGIN_SOURCE = (
    "from sekai.plugins import hookimpl\n"
    "class P:\n"
    "    @hookimpl\n"
    "    def sekai_register_envs(self, registry):\n"
    "        registry.register('ep/A-v0', 'sekai.testing.envs:LineEnv')\n"
    "PLUGIN = P()\n"
)


@pytest.mark.parametrize(
    ("source", "value", "error", "fix"),
    [
        (
            PLUGIN_SOURCE,
            "{m}:PLUGN",
            "AttributeError: '{m}' has no attribute 'PLUGN': the pack's entry point names an "
            "attribute that does not exist (ep = {m}:PLUGN)",
            _WRONG_ENTRY_POINT,
        ),
        (
            PLUGIN_SOURCE,
            "{m}_typo:PLUGIN",
            "ModuleNotFoundError: No module named '{m}_typo': the pack's entry point names a "
            "module that does not exist (ep = {m}_typo:PLUGIN)",
            _WRONG_ENTRY_POINT,
        ),
        (
            PLUGIN_SOURCE,
            "{m}_gone._plugin",  # its package is gone (an install older than its code)
            "ModuleNotFoundError: No module named '{m}_gone': the pack's entry point names a "
            "module that does not exist (ep = {m}_gone._plugin)",
            _WRONG_ENTRY_POINT,
        ),
        (
            "import not_a_real_dependency_of_sekai_tests\n",
            "{m}",
            "ModuleNotFoundError: No module named 'not_a_real_dependency_of_sekai_tests'",
            "Reinstall it or add the missing dependency.",
        ),
        (
            "import os\nos.no_such_function()\n",
            "{m}",
            "AttributeError: module 'os' has no attribute 'no_such_function'",
            "Its module raised while being imported",
        ),
    ],
    ids=["attribute-typo", "module-typo", "package-gone", "dependency-missing", "module-raises"],
)
def test_a_wrong_entry_point_is_told_from_a_broken_module(
    source, value, error, fix, tmp_path, monkeypatch, request
):
    module = "sekai_test_ep_" + request.node.callspec.id.replace("-", "_")
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    value = value.format(m=module)
    load = lambda: pytest.fail("discovery imports the entry point itself")  # noqa: E731
    reg = registry_of(EntryPointRecord("ep", "ep-envs", "1.0", load, value=value))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert (failure.stage, failure.error) == ("import", error.format(m=module))
    with pytest.raises(EnvNotFound) as info:
        reg.spec("ep/A-v0")
    assert f"{failure.error}. {fix}" in str(info.value)


def test_an_entry_point_value_naming_an_attribute_path_loads_it(tmp_path, monkeypatch):
    holder = "class Holder:\n    plugin = PLUGIN\n"
    (tmp_path / "sekai_test_ep_path.py").write_text(PLUGIN_SOURCE + holder)
    monkeypatch.syspath_prepend(str(tmp_path))
    load = lambda: pytest.fail("discovery imports the entry point itself")  # noqa: E731
    value = "sekai_test_ep_path:Holder.plugin"
    reg = registry_of(EntryPointRecord("ep", "ep-envs", "1.0", load, value=value))
    assert [s.id for s in reg.all_specs()] == ["ep/A-v0"]


def test_a_hook_that_raises_is_skipped_and_its_partial_registrations_removed():
    reg = registry_of(
        record("acme", env_plugin("acme/A-v0", then_raise=RuntimeError("half done"))),
        record("good", env_plugin("good/G-v0"), "good-envs"),
    )
    caught = load_quietly(reg)
    assert len(caught) == 1
    assert [s.id for s in reg.all_specs()] == ["good/G-v0"]
    (failure,) = reg.plugin_report().failures
    assert (failure.stage, failure.error) == ("register", "RuntimeError: half done")
    assert [p.name for p in reg.plugin_report().plugins] == ["core", "good"]


def test_a_failed_plugin_object_is_unloaded_so_a_second_entry_point_reports_its_own_error():
    plugin = env_plugin(then_raise=RuntimeError("half done"))
    reg = registry_of(record("acme", plugin), record("zeta", plugin, "zeta-envs"))
    load_quietly(reg)
    assert [(f.name, f.stage, f.error) for f in reg.plugin_report().failures] == [
        ("acme", "register", "RuntimeError: half done"),
        ("zeta", "register", "RuntimeError: half done"),
    ]


def test_a_misspelt_hook_is_a_hooks_failure_and_undoes_the_valid_hooks():
    class Misspelt:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("acme/A-v0", "a.b:C")

        @staticmethod
        @hookimpl
        def sekai_register_env(registry):
            pass

    reg = registry_of(record("acme", Misspelt))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert failure.stage == "hooks"
    assert failure.error.startswith("PluginValidationError: unknown hook 'sekai_register_env'")
    assert reg.all_specs() == []


class _Unmarked:
    @staticmethod
    def sekai_register_envs(registry):
        registry.register("acme/A-v0", "a.b:C")


def _marked_hook(registry):
    registry.register("acme/A-v0", "a.b:C")


_marked_hook.__name__ = "sekai_register_envs"


@pytest.mark.parametrize(
    ("plugin", "error"),
    [
        (_Unmarked, "sekai_register_envs is not marked as a hook: decorate it with "
         "@sekai.plugins.hookimpl"),
        (hookimpl(_marked_hook), "the entry point names the function sekai_register_envs; "
         "name its module instead ('module.path', without ':attr')"),
        (None, "the entry point gave NoneType None, which implements no sekai hook"),
    ],
)  # fmt: skip
def test_a_plugin_that_implements_no_hook_is_a_hooks_failure_not_an_empty_plugin(plugin, error):
    reg = registry_of(record("acme", plugin), record("good", env_plugin("good/A-v0")))
    (warning,) = load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert (failure.name, failure.stage) == ("acme", "hooks")
    assert failure.error.startswith(f"PluginValidationError: {error}")
    assert "acme" not in [p.name for p in reg.plugin_report().plugins]
    assert [s.id for s in reg.all_specs()] == ["good/A-v0"]
    assert "acme-envs 1.2.0" in str(warning.message)


def test_a_third_party_plugin_name_that_is_no_namespace_fails_before_its_import():
    imported = []

    def load():
        imported.append(True)
        return env_plugin("acme.envs/A-v0")

    reg = registry_of(EntryPointRecord("acme.envs", "acme-envs", "1.0", load))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert failure.stage == "register" and not imported
    assert failure.error == (
        "ValueError: plugin name 'acme.envs' of acme-envs cannot be the namespace of its env "
        "IDs ('acme.envs/Name-v0'): an entry-point name in the 'sekai' group may hold only "
        "letters, digits, '_' and '-'; rename the entry point"
    )


def test_a_hook_with_an_unknown_argument_is_a_hooks_failure():
    class ExtraArg:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry, config):
            pass

    reg = registry_of(record("acme", ExtraArg))
    load_quietly(reg)
    assert reg.plugin_report().failures[0].stage == "hooks"


@pytest.mark.parametrize(
    "outside",
    [
        "Foo-v0",
        "acmecorp/A-v0",  # another namespace that merely begins with the plugin's name
        "acmeA-v0",  # no namespace at all, though its name begins with the plugin's
    ],
)
def test_a_third_party_plugin_may_not_register_outside_its_namespace(outside):
    reg = registry_of(record("acme", env_plugin("acme/A-v0", outside)))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert failure.error == (
        f"ValueError: plugin 'acme' registered {outside!r}; third-party IDs must start with 'acme/'"
    )
    assert reg.all_specs() == []


def test_a_first_party_plugin_registers_ids_without_namespace():
    reg = registry_of(
        record(
            "classic", env_plugin("CartPole-v1", "classic/CartPole-v1"), "sekai-classic", "0.3.0"
        )
    )
    assert [s.id for s in reg.all_specs()] == ["CartPole-v1", "classic/CartPole-v1"]


def test_two_first_party_plugins_registering_one_id_fail_the_second():
    reg = registry_of(
        record("classic", env_plugin("CartPole-v1"), "sekai-classic", "0.3.0"),
        record("finance", env_plugin("CartPole-v1"), "sekai-finance", "0.3.0"),
    )
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert failure.name == "finance"
    assert failure.error == (
        "EnvAlreadyRegistered: Environment 'CartPole-v1' is already registered. "
        "It is provided by plugin 'classic' (sekai-classic 0.3.0)."
    )
    assert reg.spec("CartPole-v1").source.plugin == "classic"


def test_registrars_reject_non_string_entry_points():
    class Callable:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("acme/A-v0", sekai.Env)

    reg = registry_of(record("acme", Callable))
    load_quietly(reg)
    assert (
        reg.plugin_report()
        .failures[0]
        .error.startswith(
            "TypeError: Plugins must register entry_point as a 'module.path:ClassName' string"
        )
    )


def test_two_third_party_plugins_with_one_name_are_both_skipped_as_a_clash():
    reg = registry_of(
        record("acme", env_plugin("acme/A-v0"), "acme-envs", "1.0"),
        record("acme", env_plugin("acme/B-v0"), "other-envs", "2.0"),
    )
    caught = load_quietly(reg)
    assert len(caught) == 2
    assert reg.all_specs() == []
    failures = reg.plugin_report().failures
    assert [(f.distribution, f.stage) for f in failures] == [
        ("acme-envs", "clash"),
        ("other-envs", "clash"),
    ]
    assert failures[0].error == (
        "ValueError: plugin name 'acme' is also used by other-envs 2.0; both were skipped"
    )


def test_two_first_party_entry_points_with_one_name_load_the_first_and_name_it_for_the_second():
    reg = registry_of(
        record("twin", env_plugin("Twin-v0"), "sekai-classic", "0.3.0"),
        record("twin", env_plugin("Twin-v1"), "sekai-finance", "0.3.0"),
    )
    load_quietly(reg)
    assert [s.id for s in reg.all_specs()] == ["Twin-v0"]
    assert [(f.distribution, f.stage, f.error) for f in reg.plugin_report().failures] == [
        ("sekai-finance", "clash", "ValueError: plugin name 'twin' is also used by sekai-classic")
    ]


def test_core_builtin_plugin_failing_to_import_is_a_failure_and_the_others_load(monkeypatch):
    import sekai.plugins

    monkeypatch.delattr(sekai.plugins, "_builtin", raising=False)
    monkeypatch.setitem(sys.modules, "sekai.plugins._builtin", None)
    reg = registry_of(record("acme", env_plugin("acme/A-v0")))
    load_quietly(reg)
    assert [s.id for s in reg.all_specs()] == ["acme/A-v0"]
    (failure,) = reg.plugin_report().failures
    assert (failure.name, failure.distribution, failure.stage) == ("core", "sekai-core", "import")
    assert failure.error.startswith("ModuleNotFoundError: ")


def test_a_third_party_plugin_using_a_reserved_name_is_skipped_and_first_party_loads():
    reg = registry_of(
        record("finance", env_plugin("Trading-v0"), "sekai-finance", "0.3.0"),
        record("finance", env_plugin("finance/Evil-v0"), "evil-pack", "6.6.6"),
    )
    load_quietly(reg)
    assert [s.id for s in reg.all_specs()] == ["Trading-v0"]
    (failure,) = reg.plugin_report().failures
    assert (failure.distribution, failure.stage) == ("evil-pack", "clash")
    assert failure.error == (
        "ValueError: plugin name 'finance' is reserved for sekai-finance; "
        "evil-pack must use another entry-point name"
    )


@pytest.mark.parametrize("name", ["core", "classic", "ray", "jax", "torch"])
def test_reserved_names_are_refused_to_third_parties_even_without_the_first_party(name):
    reg = registry_of(record(name, env_plugin(), "third-pack"))
    load_quietly(reg)
    assert reg.plugin_report().failures[0].stage == "clash"


def test_reserved_names_are_refused_in_any_case():
    # Before: 'Classic' loaded and served Classic/CartPole-v1 next to classic/CartPole-v1.
    reg = registry_of(
        record("classic", env_plugin("classic/CartPole-v1"), "sekai-classic", "0.3.0"),
        record("Classic", env_plugin("Classic/CartPole-v1"), "evil-pack", "6.6.6"),
    )
    load_quietly(reg)
    assert [s.id for s in reg.all_specs()] == ["classic/CartPole-v1"]
    (failure,) = reg.plugin_report().failures
    assert (failure.name, failure.stage) == ("Classic", "clash")
    assert failure.error == (
        "ValueError: plugin name 'Classic' is reserved for sekai-classic (as 'classic', in any "
        "case); evil-pack must use another entry-point name"
    )


def test_disabled_plugins_are_skipped_silently_and_named_by_env_not_found():
    reg = registry_of(
        record("finance", env_plugin("Trading-v0"), "sekai-finance", "0.3.0"),
        record("acme", env_plugin("acme/A-v0")),
        disabled="finance, other",
    )
    assert load_quietly(reg) == []
    assert [s.id for s in reg.all_specs()] == ["acme/A-v0"]
    assert reg.plugin_report().failures == (
        PluginFailure(
            "finance", "sekai-finance", "0.3.0", "disabled", "disabled by SEKAI_DISABLE_PLUGINS"
        ),
    )
    with pytest.raises(EnvNotFound) as info:
        reg.spec("Trading-v0")
    assert "Plugin 'finance' is disabled by SEKAI_DISABLE_PLUGINS. Use sekai.all_specs()" in str(
        info.value
    )
    assert info.value.provider == "sekai-finance"


def test_star_disables_every_entry_point_but_not_core():
    reg = registry_of(record("acme", env_plugin("acme/A-v0")), disabled="*")
    assert reg.all_specs() == []
    assert [p.name for p in reg.plugin_report().plugins] == ["core"]


def test_disabled_plugins_come_from_the_environment_variable(monkeypatch):
    monkeypatch.setenv("SEKAI_DISABLE_PLUGINS", "acme")
    reg = EnvRegistry(
        lambda r: PluginHost(r, entry_points=[record("acme", env_plugin("acme/A-v0"))])
    )
    assert reg.all_specs() == []
    assert reg.plugin_report().failures[0].stage == "disabled"


def test_first_party_id_of_a_missing_distribution_names_the_pip_command():
    reg = registry_of(installed=set())
    with pytest.raises(EnvNotFound) as info:
        reg.spec("Trading-v0")
    assert str(info.value) == (
        "Environment 'Trading-v0' not found in registry. It is provided by sekai-finance, which "
        f"is not installed: {install_command('sekai-finance')}. Use sekai.all_specs() or "
        "`sekai list` to "
        "see registered environments."
    )
    assert info.value.provider == "sekai-finance"


def test_report_lists_missing_first_party_distributions_in_table_order():
    reg = registry_of(installed={"sekai-classic", "sekai-cli"})
    assert reg.plugin_report().missing == (
        "sekai-finance",
        "sekai-compat",
        "sekai-ray",
        "sekai-jax",
        "sekai-torch",
    )


def test_report_envs_follow_later_deregistrations():
    reg = registry_of(record("acme", env_plugin("acme/A-v0", "acme/B-v0")))
    reg.deregister("acme/A-v0")
    assert reg.plugin_report().plugins[1].envs == ("acme/B-v0",)


class ModePlugin:
    @staticmethod
    @hookimpl
    def sekai_register_vector_backends(registry):
        registry.register("fast", "acme.vec:FastVecEnv")


def test_backend_plugins_add_modes_attributed_to_them():
    reg = registry_of(record("acme", ModePlugin))
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc", "fast"]
    assert reg.plugin_report().plugins[1].backends == ("fast",)
    assert reg.backend_source("fast").plugin == "acme"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("native", "'native' / 'vector_entry_point' are reserved"),
        ("sync", "it is reserved for sekai-core"),
        ("ray", "it is reserved for sekai-ray"),
        ("bad mode", "modes are made of letters"),
    ],
)
def test_backend_registrations_that_break_a_rule_fail_the_plugin(mode, message):
    class Plugin:
        @staticmethod
        @hookimpl
        def sekai_register_vector_backends(registry):
            registry.register("fine", "acme.vec:Fine")
            registry.register(mode, "acme.vec:X")

    reg = registry_of(record("acme", Plugin))
    load_quietly(reg)
    assert message in reg.plugin_report().failures[0].error
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc"]


def test_a_mode_registered_by_two_plugins_is_skipped_for_both_and_their_envs_load():
    class Zeta:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("zeta/Pole-v0", "sekai.testing.envs:LineEnv")

        @staticmethod
        @hookimpl
        def sekai_register_vector_backends(registry):
            registry.register("fast", "zeta.vec:FastVecEnv")
            registry.register("zippy", "zeta.vec:ZippyVecEnv")

    class Third(ModePlugin):
        pass

    reg = registry_of(
        record("acme", ModePlugin), record("zeta", Zeta, "zeta-envs"), record("zz", Third, "zz")
    )
    caught = load_quietly(reg)
    clash = (
        "Vectorization mode 'fast' is registered by plugin 'acme' (acme-envs 1.2.0), plugin "
        "'zeta' (zeta-envs 1.2.0) and plugin 'zz' (zz 1.2.0), so it was skipped (their "
        "environments load normally). Uninstall one of the distributions using that mode name."
    )
    assert [str(w.message) for w in caught] == [clash]
    report = reg.plugin_report()
    assert report.failures == ()
    assert [(p.name, p.envs, p.backends) for p in report.plugins[1:]] == [
        ("acme", (), ()),
        ("zeta", ("zeta/Pole-v0",), ("zippy",)),
        ("zz", (), ()),
    ]
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc", "zippy"]
    with pytest.raises(ValueError) as info:
        reg.backend("fast")
    assert str(info.value).endswith(f"'zippy']. {clash}")


def test_a_mode_registered_twice_by_one_plugin_fails_it():
    class Twice:
        @staticmethod
        @hookimpl
        def sekai_register_vector_backends(registry):
            registry.register("fast", "acme.vec:FastVecEnv")
            registry.register("fast", "acme.vec:FastVecEnv")

    reg = registry_of(record("acme", Twice))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert failure.error == (
        "ValueError: Vectorization mode 'fast' is already provided by plugin 'acme' "
        "(acme-envs 1.2.0)."
    )
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc"]


def test_one_plugin_object_behind_two_entry_points_loads_once():
    reg = registry_of(record("acme", ModePlugin), record("zeta", ModePlugin, "zeta-envs"))
    load_quietly(reg)
    (failure,) = reg.plugin_report().failures
    assert (failure.name, failure.error) == (
        "zeta",
        "ValueError: the same plugin object is already loaded as plugin 'acme'",
    )
    assert reg.backend_source("fast").plugin == "acme"


def test_an_unknown_mode_of_a_failed_first_party_plugin_names_the_failure():
    reg = registry_of(
        failing_import("ray", "sekai-ray", ImportError("no ray")), installed={"sekai-ray"}
    )
    load_quietly(reg)
    with pytest.raises(
        ValueError, match=r"Plugin 'ray' \(sekai-ray 0.1.0\) failed to load: ImportError: no ray"
    ):
        reg.backend("ray")


def test_scan_entry_points_reads_the_sekai_group_without_importing(tmp_path, monkeypatch):
    make_fake_distribution(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    records = {r.name: r for r in scan_entry_points()}
    assert (records["fake"].distribution, records["fake"].version) == ("fake-pack", "1.0")
    assert "fake_pack_never_imported" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="fake_pack_never_imported"):
        records["fake"].load()


def test_a_foreign_sekai_distribution_with_modules_is_warned_about(monkeypatch):
    from sekai import _metadata
    from sekai.plugins import _host

    class FakeDist:
        version = "0.0.1"
        files: ClassVar[list[str]] = ["sekai/__init__.py", "sekai-0.0.1.dist-info/METADATA"]

    reinstall = f"{install_command('sekai-core')} --force-reinstall"  # before faking metadata
    monkeypatch.setattr(_metadata, "distribution", lambda name: FakeDist())
    messages = _host._foreign_sekai_distribution()
    assert len(messages) == 1
    assert messages[0].endswith(f"Fix it with: pip uninstall sekai && {reinstall}")
    FakeDist.files = ["sekai-0.0.1.dist-info/METADATA"]
    assert _host._foreign_sekai_distribution() == []


def test_import_sekai_imports_no_plugin_machinery():
    code = (
        "import sys, sekai\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "{'pluggy', 'importlib_metadata', 'gymnasium', 'pettingzoo', 'cloudpickle'} "
        "or m.startswith(('sekai.plugins', 'sekai.registry', 'sekai.envs.', "
        "'importlib.metadata'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_hook_that_exits_is_skipped_and_the_others_load():
    class Exits:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("exits/A-v0", "sekai.testing.envs:LineEnv")
            sys.exit(3)

    reg = registry_of(record("exits", Exits), record("zeta", env_plugin("zeta/Z-v0"), "zeta-envs"))
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert (failure.name, failure.stage, failure.error) == ("exits", "register", "SystemExit: 3")
    assert [s.id for s in reg.all_specs()] == ["zeta/Z-v0"]


@pytest.mark.parametrize(
    ("env_id", "owner"), [("CartPole-v1", "sekai-classic"), ("zeta/Other-v0", "plugin 'zeta'")]
)
def test_sekai_register_of_an_id_a_plugin_owns_fails_the_plugin_loading(env_id, owner):
    registries = []

    class Escapes:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("escapes/A-v0", "sekai.testing.envs:LineEnv")
            registries[0].register(env_id, "sekai.testing.envs:LineEnv")

    reg = registry_of(record("escapes", Escapes), record("zeta", env_plugin("zeta/Z-v0"), "z"))
    registries.append(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert (failure.name, failure.stage) == ("escapes", "register")
    assert failure.error == (
        f"RuntimeError: sekai.register() of {env_id!r} was called while plugin 'escapes' "
        f"(acme-envs 1.2.0) was being loaded, but {env_id!r} belongs to {owner}. A plugin "
        "registers its environments with the registry argument of its sekai_register_envs "
        "hook (registry.register(...)), in its own namespace."
    )
    assert [s.id for s in reg.all_specs()] == ["zeta/Z-v0"]


@pytest.mark.parametrize("env_id", ["Walk-v0", "helper/Walk-v0"])
def test_sekai_register_while_a_plugin_is_imported_fails_it_and_leaves_nothing(env_id):
    # The gym habit of registering at import (the plugin's or a library's it imports) would
    # place IDs outside its namespace, credited to nobody, and keep them if it failed.
    registries = []

    def load():
        registries[0].register(env_id, "sekai.testing.envs:LineEnv")
        return env_plugin("acme/A-v0")

    reg = registry_of(
        EntryPointRecord("acme", "acme-envs", "1.0", load),
        record("zeta", env_plugin("zeta/Z-v0"), "zeta-envs"),
    )
    registries.append(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert (failure.name, failure.stage) == ("acme", "import")
    assert failure.error == (
        f"RuntimeError: sekai.register() of {env_id!r} was called while plugin 'acme' "
        "(acme-envs 1.0) was being loaded. A plugin registers its environments with the "
        "registry argument of its sekai_register_envs hook (registry.register(...)), in its "
        "own namespace."
    )
    assert [s.id for s in reg.all_specs()] == ["zeta/Z-v0"]


def test_sekai_register_from_a_hook_fails_the_plugin_even_outside_any_namespace():
    registries = []

    class Sly:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("sly/A-v0", "sekai.testing.envs:LineEnv")
            with pytest.raises(RuntimeError, match="was being loaded"):  # even caught,
                registries[0].register("Walk-v0", "sekai.testing.envs:LineEnv")  # nothing stays

    reg = registry_of(record("sly", Sly))
    registries.append(reg)
    assert load_quietly(reg) == []
    assert [s.id for s in reg.all_specs()] == ["sly/A-v0"]
    assert reg.spec("sly/A-v0").source.plugin == "sly"


_OWN_ADVICE = (
    ": a plugin registers its environments with the registry argument of its "
    "sekai_register_envs hook instead (registry.register(...)), which credits them to it and "
    "removes them if it fails."
)


@pytest.mark.parametrize(
    ("name", "distribution", "env_id"),
    [("acme", "acme-envs", "acme/A-v0"), ("classic", "sekai-classic", "CartPole-v1")],
)
def test_a_plugin_calling_sekai_register_for_its_own_ids_at_import_is_told_to_use_the_hook(
    name, distribution, env_id
):
    # The gym habit: the ID is the plugin's own, so the mistake is calling sekai.register().
    registries = []

    def load():
        registries[0].register(env_id, "sekai.testing.envs:LineEnv")
        return env_plugin(env_id)

    reg = registry_of(EntryPointRecord(name, distribution, "1.0", load))
    registries.append(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert failure.stage == "import"
    assert failure.error == (
        f"RuntimeError: plugin {name!r} ({distribution} 1.0) called sekai.register() for "
        f"{env_id!r} during its import" + _OWN_ADVICE
    )
    assert [s.id for s in reg.all_specs()] == []


def test_a_plugin_calling_sekai_register_for_its_own_ids_from_its_hook_is_told_so():
    registries = []

    class Habit:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registries[0].register("habit/A-v0", "sekai.testing.envs:LineEnv")

    reg = registry_of(record("habit", Habit))
    registries.append(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert failure.stage == "register"
    assert failure.error == (
        "RuntimeError: plugin 'habit' (acme-envs 1.2.0) called sekai.register() for "
        "'habit/A-v0' during its sekai_register_envs hook" + _OWN_ADVICE
    )
    assert [s.id for s in reg.all_specs()] == []


def test_a_plugin_calling_sekai_deregister_for_its_own_ids_is_told_it_removes_none():
    registries = []

    class Habit:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("habit/A-v0", "sekai.testing.envs:LineEnv")
            registries[0].deregister("habit/A-v0")

    reg = registry_of(record("habit", Habit))
    registries.append(reg)
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert failure.error == (
        "RuntimeError: plugin 'habit' (acme-envs 1.2.0) called sekai.deregister() for "
        "'habit/A-v0' during its sekai_register_envs hook: a plugin removes none of them while "
        "it loads and registers its environments with the registry argument of its "
        "sekai_register_envs hook instead (registry.register(...)), which credits them to it "
        "and removes them if it fails."
    )


def test_discovery_cut_short_leaves_nothing_behind_and_runs_again():
    calls = []

    def load():
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return env_plugin("acme/A-v0")

    reg = registry_of(EntryPointRecord("acme", "acme-envs", "1.0", load))
    with pytest.raises(KeyboardInterrupt):
        reg.all_specs()
    assert reg.host is None
    assert [s.id for s in reg.all_specs()] == ["acme/A-v0"]
    assert reg.plugin_report().failures == ()
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc"]


def test_a_failure_is_reported_on_one_line():
    reg = registry_of(failing_import("multi", "multi-envs", RuntimeError("first\n  second")))
    load_quietly(reg)
    [failure] = reg.plugin_report().failures
    assert failure.error == "RuntimeError: first second"


def test_scan_entry_points_skips_an_unreadable_distribution_without_sekai_plugins(
    tmp_path, monkeypatch
):
    make_fake_distribution(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    readable = [(r.name, r.distribution, r.version, r.problem) for r in scan_entry_points()]
    info = tmp_path / "unrelated_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: unrelated-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nthis line has no equals sign\n")
    records = [(r.name, r.distribution, r.version, r.problem) for r in scan_entry_points()]
    assert records == readable
    assert ("fake", "fake-pack", "1.0", None) in records


@pytest.mark.parametrize("name_is_none", [False, True], ids=["raises", "none"])
def test_a_sekai_distribution_with_unreadable_metadata_is_a_failure_naming_it(
    tmp_path, monkeypatch, name_is_none
):
    if name_is_none:
        # Python 3.12+ (and backports before 8) give a nameless distribution's entry points
        # with dist.name None instead of raising; the one-call scan must not pass them on.
        from sekai import _metadata

        def entry_points(**select):
            nameless = types.SimpleNamespace(name=None, version="1.0")
            return [types.SimpleNamespace(name="nameless", dist=nameless, load=None)]

        monkeypatch.setattr(_metadata, "entry_points", entry_points)
    make_fake_distribution(tmp_path)
    info = tmp_path / "nameless-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[sekai]\nnameless = nameless_pack._plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    records = [r for r in scan_entry_points() if r.name in ("fake", "nameless")]
    assert sorted(r.name for r in records) == ["fake", "nameless"]
    reg = registry_of(*records)
    load_quietly(reg)
    failures = {f.name: f for f in reg.plugin_report().failures}
    # The readable distribution's plugin is still tried (its module does not exist here).
    assert failures["fake"].error.startswith("ModuleNotFoundError")
    failure = failures["nameless"]
    assert (failure.distribution, failure.stage) == ("unknown", "import")
    # The same error on every Python, whichever importlib.metadata reads the METADATA.
    assert failure.error.startswith("ValueError: the metadata of the distribution at ")
    assert "cannot be read (its METADATA has no Name)" in failure.error
    assert failure.error.endswith("repair or reinstall that distribution")
    assert str(info) in failure.error


def test_an_entry_point_line_without_a_name_is_a_failure_to_repair_not_to_disable(
    tmp_path, monkeypatch
):
    info = tmp_path / "bad_meta-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-meta\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[sekai]\nthis line has no equals\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    records = [r for r in scan_entry_points() if r.distribution == "bad-meta"]
    assert [(r.name, r.version) for r in records] == [("?", "0.1.0")]  # read, not "unknown"
    messages = [str(w.message) for w in load_quietly(registry_of(*records))]
    assert len(messages) == 1
    assert "(bad-meta 0.1.0)" in messages[0]
    assert messages[0].endswith("Repair or reinstall that distribution to silence this.")
    assert "SEKAI_DISABLE_PLUGINS=?" not in messages[0]
