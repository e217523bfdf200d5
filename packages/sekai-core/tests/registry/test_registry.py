import dataclasses
import json
import re
import threading
import warnings

import numpy as np
import pytest

import sekai
from sekai.error import EnvAlreadyRegistered, EnvNotFound, PluginLoadWarning
from sekai.plugins import hookimpl
from sekai.plugins._host import EntryPointRecord, PluginHost
from sekai.registry import EnvRegistry, EnvSpec, SpecSource, WrapperSpec


class Dummy(sekai.Env):
    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    def step(self, action):
        return sekai.StepResult(0, 0.0, False, False, {})


def make_registry(*records, **host_kwargs):
    host_kwargs.setdefault("disabled", "")
    return EnvRegistry(lambda reg: PluginHost(reg, entry_points=records, **host_kwargs))


def record(name, plugin, distribution="acme-envs", version="1.2.0"):
    return EntryPointRecord(name, distribution, version, lambda: plugin)


class AcmePlugin:
    @staticmethod
    @hookimpl
    def sekai_register_envs(registry):
        registry.register("acme/Foo-v0", "acme.envs:Foo")


def test_register_then_spec_returns_the_registered_spec():
    reg = EnvRegistry()
    spec = reg.register("demo/My-v0", Dummy, max_episode_steps=10)
    assert reg.spec("demo/My-v0") is spec
    assert spec.source is None


def test_all_specs_keeps_registration_order():
    reg = EnvRegistry()
    for env_id in ["b/Z-v0", "a/A-v0", "M-v1"]:
        reg.register(env_id, Dummy)
    assert [s.id for s in reg.all_specs()] == ["b/Z-v0", "a/A-v0", "M-v1"]


def test_register_twice_raises_env_already_registered_with_the_spec_message():
    reg = EnvRegistry()
    reg.register("CartPole-v1", Dummy)
    with pytest.raises(EnvAlreadyRegistered) as info:
        reg.register("CartPole-v1", Dummy)
    assert str(info.value) == "Environment 'CartPole-v1' is already registered."


def test_register_of_a_plugin_id_names_the_owning_plugin():
    reg = EnvRegistry()
    reg.add(EnvSpec("CartPole-v1", "a.b:C", source=SpecSource("classic", "sekai-classic", "0.3.0")))
    with pytest.raises(EnvAlreadyRegistered) as info:
        reg.register("CartPole-v1", Dummy)
    assert str(info.value) == "Environment 'CartPole-v1' is already registered."
    assert info.value.__notes__ == ["It is provided by plugin 'classic' (sekai-classic 0.3.0)."]


def test_register_rejects_unknown_keywords():
    with pytest.raises(TypeError):
        EnvRegistry().register("A-v0", Dummy, max_steps=3)


def test_register_rejects_a_missing_entry_point():
    with pytest.raises(TypeError, match="got None"):
        EnvRegistry().register("A-v0", None)


def test_register_validates_entry_point_form_without_importing():
    reg = EnvRegistry()
    with pytest.raises(ValueError, match="Invalid entry_point 'nocolon'"):
        reg.register("A-v0", "nocolon")
    spec = reg.register("B-v0", "sekai_never_imported_module:Env")
    assert spec.entry_point == "sekai_never_imported_module:Env"


@pytest.mark.parametrize(
    "entry_point", ["größe:Umgebung", "paquete.módulo:Entorno.crear", "mod_2:Env_v2"]
)
def test_register_accepts_entry_points_of_any_python_identifiers(entry_point):
    assert EnvRegistry().register("A-v0", entry_point).entry_point == entry_point


@pytest.mark.parametrize("entry_point", ["a:b:c", "a.:b", "1mod:Env", "mod:", ":Env", "a b:c"])
def test_register_refuses_entry_points_that_are_not_dotted_identifiers(entry_point):
    with pytest.raises(ValueError, match=r"Must be 'module\.path:ClassName'"):
        EnvRegistry().register("A-v0", entry_point)


def test_deregister_of_a_malformed_id_raises_the_id_error_as_spec_does():
    reg = EnvRegistry()
    with pytest.raises(ValueError) as by_spec:
        reg.spec("bad id!")
    with pytest.raises(ValueError) as by_deregister:
        reg.deregister("bad id!")
    assert str(by_deregister.value) == str(by_spec.value)


def test_deregister_removes_the_spec():
    reg = EnvRegistry()
    reg.register("A-v0", Dummy)
    reg.deregister("A-v0")
    assert reg.all_specs() == []


def test_the_registry_s_own_spec_cannot_be_renamed_but_a_copy_can():
    reg = EnvRegistry()
    spec = reg.register("A-v0", Dummy)
    with pytest.raises(AttributeError) as info:
        spec.id = "B-v0"
    assert str(info.value) == (
        "Cannot rename 'A-v0' to 'B-v0': this EnvSpec is the registry's own entry "
        "(sekai.spec() returns it, not a copy). Rename a copy instead: "
        "dataclasses.replace(spec, id='B-v0')."
    )
    assert reg.spec("A-v0") is spec and spec.id == "A-v0" and spec.name == "A"
    spec.id = "A-v0"  # the same ID: nothing changes
    renamed = dataclasses.replace(spec, id="B-v0")
    assert (renamed.name, reg.spec("A-v0").name) == ("B", "A")
    reg.deregister("A-v0")
    spec.id = "C-v0"  # no longer the registry's
    assert spec.name == "C"


@pytest.mark.parametrize("given", [["A-v0"], EnvSpec("A-v0", Dummy), None])
def test_spec_and_deregister_of_a_non_string_name_its_type(given):
    reg = EnvRegistry()
    reg.register("A-v0", Dummy)
    expected = rf"^An env ID must be a str, got {type(given).__name__}\.$"
    with pytest.raises(TypeError, match=expected):
        reg.spec(given)
    with pytest.raises(TypeError, match=expected):
        reg.deregister(given)
    if not isinstance(given, EnvSpec):  # make() builds from a spec
        with pytest.raises(TypeError, match=expected):
            sekai.make(given)


@pytest.mark.parametrize("flag", [np.bool_(True), np.bool_(False)])
def test_register_takes_a_numpy_bool_for_nondeterministic_and_stores_a_bool(flag):
    spec = EnvRegistry().register("A-v0", "a.b:C", nondeterministic=flag)
    assert spec.nondeterministic is bool(flag)
    assert json.loads(spec.to_json())["nondeterministic"] is bool(flag)


def test_register_names_the_full_type_of_a_refused_nondeterministic_flag():
    with pytest.raises(TypeError, match=r"^nondeterministic must be a bool, got numpy\.int64\.$"):
        EnvRegistry().register("A-v0", "a.b:C", nondeterministic=np.int64(1))


def test_register_checks_the_types_of_the_threshold_the_flag_and_the_wrappers():
    reg = EnvRegistry()
    with pytest.raises(TypeError, match=r"^reward_threshold must be a number or None, got str\.$"):
        reg.register("A-v0", Dummy, reward_threshold="high")
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^reward_threshold must be finite or None, got"):
            reg.register("A-v0", Dummy, reward_threshold=bad)
    with pytest.raises(TypeError, match=r"^nondeterministic must be a bool, got str\.$"):
        reg.register("A-v0", Dummy, nondeterministic="yes")
    with pytest.raises(
        TypeError, match=r"^additional_wrappers must be a sequence of WrapperSpec, got WrapperSpec"
    ):
        reg.register("A-v0", Dummy, additional_wrappers=WrapperSpec("W", "w:W"))
    assert reg.register("A-v0", Dummy, reward_threshold=195).reward_threshold == 195


def test_deregister_of_an_unknown_id_raises_env_not_found():
    with pytest.raises(EnvNotFound, match=re.escape("Environment 'A-v0' not found in registry.")):
        EnvRegistry().deregister("A-v0")


# 'CARTPOLE-v1' looks too unlike 'CartPole-v1' for difflib: only the case-insensitive match of
# the name finds it, so these fail when that match is removed.
@pytest.mark.parametrize(
    ("miss", "expected"),
    [
        ("Cartpole-v1", "CartPole-v1"),
        ("CARTPOLE-v1", "CartPole-v1"),
        ("cartpole-v1", "CartPole-v1"),
        ("CLASSIC/CARTPOLE-v1", "classic/CartPole-v1"),
    ],
)
def test_spec_miss_suggests_the_differently_cased_id_with_the_spec_message(miss, expected):
    reg = EnvRegistry()
    for env_id in ["CartPole-v1", "Market-v0", "classic/CartPole-v1"]:
        reg.register(env_id, Dummy)
    with pytest.raises(EnvNotFound) as info:
        reg.spec(miss)
    assert str(info.value) == (
        f"Environment '{miss}' not found in registry. Did you mean: '{expected}'? "
        "Use sekai.all_specs() or `sekai list` to see registered environments."
    )
    assert info.value.suggestions == (expected,)


def test_spec_miss_suggests_other_versions_of_the_same_name_before_look_alikes():
    reg = EnvRegistry()
    for env_id in ["CartPole-v1", "Market-v0", "CartPole-v3"]:
        reg.register(env_id, Dummy)
    with pytest.raises(EnvNotFound) as info:
        reg.spec("CartPole-v0")
    assert info.value.suggestions == ("CartPole-v3", "CartPole-v1")


def test_spec_miss_without_a_close_id_has_no_suggestion():
    reg = EnvRegistry()
    reg.register("CartPole-v1", Dummy)
    with pytest.raises(EnvNotFound) as info:
        reg.spec("Zzz-v0")
    assert info.value.suggestions == ()
    assert "Did you mean" not in str(info.value)


def test_spec_of_a_malformed_id_raises_value_error():
    with pytest.raises(ValueError, match="Invalid env ID"):
        EnvRegistry().spec("bad id!")


def test_namespace_loader_runs_on_first_miss_and_is_then_dropped():
    reg = EnvRegistry()
    calls = []

    def loader():
        calls.append(1)
        reg.register("lazy/Thing-v0", Dummy)

    reg.register_namespace("lazy", loader)
    assert calls == []
    assert reg.spec("lazy/Thing-v0").id == "lazy/Thing-v0"
    with pytest.raises(EnvNotFound):
        reg.spec("lazy/Other-v0")
    assert calls == [1]


def test_deregister_runs_the_namespace_loader_as_spec_does_then_removes_the_id():
    reg = EnvRegistry()
    calls = []

    def loader():
        calls.append(1)
        reg.register("lazy/Thing-v0", Dummy)
        reg.register("lazy/Other-v0", Dummy)

    reg.register_namespace("lazy", loader)
    reg.deregister("lazy/Thing-v0")
    assert calls == [1]
    assert [spec.id for spec in reg.all_specs()] == ["lazy/Other-v0"]
    with pytest.raises(EnvNotFound):
        reg.spec("lazy/Thing-v0")
    with pytest.raises(EnvNotFound, match=re.escape("Environment 'lazy/Missing-v0' not found")):
        reg.deregister("lazy/Missing-v0")
    assert calls == [1]


def test_namespace_loader_that_fails_is_kept_for_a_retry():
    reg = EnvRegistry()
    attempts = []

    def loader():
        attempts.append(1)
        if len(attempts) == 1:
            raise ImportError("not yet")
        reg.register("lazy/Thing-v0", Dummy)

    reg.register_namespace("lazy", loader)
    with pytest.raises(ImportError, match="not yet"):
        reg.spec("lazy/Thing-v0")
    assert reg.spec("lazy/Thing-v0").id == "lazy/Thing-v0"
    assert len(attempts) == 2


def test_a_failed_namespace_loader_leaves_nothing_registered_so_a_retry_works():
    reg = EnvRegistry()
    attempts = []

    def loader():
        attempts.append(1)
        reg.register("lazy/A-v0", Dummy)
        if len(attempts) == 1:
            raise ImportError("half loaded")

    reg.register_namespace("lazy", loader)
    with pytest.raises(ImportError, match="half loaded"):
        reg.spec("lazy/A-v0")
    assert reg.all_specs() == []
    assert reg.spec("lazy/A-v0").id == "lazy/A-v0"  # not EnvAlreadyRegistered
    assert len(attempts) == 2


def test_a_failed_namespace_loader_keeps_other_namespaces_and_ids_outside_its_own():
    reg = EnvRegistry()
    reg.register_namespace("b", lambda: reg.register("b/Base-v0", Dummy))
    attempts = []

    def load_a():
        attempts.append(1)
        reg.spec("b/Base-v0")  # a dependency: b's loader runs, nested, and succeeds
        if len(attempts) == 1:
            reg.register("Plain-v0", Dummy)
            reg.register("a/Top-v0", Dummy)
            raise ImportError("optional dependency missing")
        reg.register("a/Top-v0", Dummy)

    reg.register_namespace("a", load_a)
    with pytest.raises(ImportError, match="optional dependency missing"):
        reg.spec("a/Top-v0")
    assert [s.id for s in reg.all_specs()] == ["b/Base-v0", "Plain-v0"]
    assert reg.spec("a/Top-v0").id == "a/Top-v0"
    assert len(attempts) == 2


def test_a_namespace_loader_looking_up_its_own_ids_runs_once():
    reg = EnvRegistry()
    calls = []

    def loader():  # the idempotent "register unless there" pattern
        calls.append(1)
        try:
            reg.spec("lazy/A-v0")
        except EnvNotFound:
            reg.register("lazy/A-v0", Dummy)

    reg.register_namespace("lazy", loader)
    assert reg.spec("lazy/A-v0").id == "lazy/A-v0"
    assert calls == [1]


def test_namespace_loader_is_not_run_for_registered_ids_or_other_namespaces():
    reg = EnvRegistry()
    reg.register("lazy/Known-v0", Dummy)
    reg.register_namespace("lazy", lambda: pytest.fail("loader must not run"))
    reg.spec("lazy/Known-v0")
    with pytest.raises(EnvNotFound):
        reg.spec("other/Thing-v0")


@pytest.mark.parametrize("namespace", ["", "a/b", "bad ns", 3])
def test_register_namespace_rejects_invalid_namespaces(namespace):
    with pytest.raises(ValueError, match="Invalid namespace"):
        EnvRegistry().register_namespace(namespace, lambda: None)


def test_register_namespace_rejects_a_non_callable_loader():
    with pytest.raises(TypeError, match="loader must be a zero-argument callable"):
        EnvRegistry().register_namespace("lazy", "not callable")


def test_format_groups_by_namespace_with_no_namespace_first_and_ids_sorted():
    reg = EnvRegistry()
    for env_id in ["lazy/Thing-v0", "CartPole-v1", "Acrobot-v1", "classic/CartPole-v1", "b/X-v0"]:
        reg.register(env_id, Dummy)
    assert reg.format() == (
        "Registered environments:\n"
        "  [no namespace]\n"
        "    Acrobot-v1\n"
        "    CartPole-v1\n"
        "  [b]\n"
        "    b/X-v0\n"
        "  [classic]\n"
        "    classic/CartPole-v1\n"
        "  [lazy]\n"
        "    lazy/Thing-v0"
    )


def test_discovery_is_deferred_to_the_first_operation_and_runs_once():
    calls = []

    def factory(reg):
        calls.append(reg)
        return PluginHost(reg, entry_points=[record("acme", AcmePlugin)], disabled="")

    reg = EnvRegistry(factory)
    assert calls == [] and reg.host is None
    assert [s.id for s in reg.all_specs()] == ["acme/Foo-v0"]
    reg.spec("acme/Foo-v0")
    reg.register("other/X-v0", Dummy)
    assert calls == [reg]


@pytest.mark.parametrize(
    "operation",
    [
        lambda reg: reg.all_specs(),
        lambda reg: reg.spec("acme/Foo-v0"),
        lambda reg: reg.register("x/Y-v0", Dummy),
        lambda reg: reg.deregister("acme/Foo-v0"),
        lambda reg: reg.format(),
        lambda reg: reg.vectorization_modes(),
        lambda reg: reg.plugin_report(),
    ],
)
def test_every_registry_operation_discovers_plugins_first(operation):
    reg = make_registry(record("acme", AcmePlugin))
    operation(reg)
    assert reg.host is not None


def test_plugin_ids_are_registered_before_a_runtime_register_of_the_same_id():
    reg = make_registry(record("acme", AcmePlugin))
    with pytest.raises(EnvAlreadyRegistered) as info:
        reg.register("acme/Foo-v0", Dummy)
    assert info.value.__notes__ == ["It is provided by plugin 'acme' (acme-envs 1.2.0)."]


def test_concurrent_first_operations_discover_once():
    started = threading.Event()
    release = threading.Event()
    calls = []

    def factory(reg):
        calls.append(1)
        started.set()
        release.wait(timeout=10)
        return PluginHost(reg, entry_points=[record("acme", AcmePlugin)], disabled="")

    reg = EnvRegistry(factory)
    results = []
    first = threading.Thread(target=lambda: results.append(len(reg.all_specs())))
    first.start()
    started.wait(timeout=10)
    second = threading.Thread(target=lambda: results.append(len(reg.all_specs())))
    second.start()
    release.set()
    first.join(timeout=10)
    second.join(timeout=10)
    assert calls == [1]
    assert results == [1, 1]


class BrokenPlugin:
    @staticmethod
    @hookimpl
    def sekai_register_envs(registry):
        raise RuntimeError("boom")


def test_plugin_warnings_come_after_the_registry_is_complete_even_as_errors():
    reg = make_registry(record("broken", BrokenPlugin, "broken-envs"), record("acme", AcmePlugin))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PluginLoadWarning):
            reg.all_specs()
        # The warning raised as an error, yet every healthy plugin is registered, and the
        # warning is not repeated.
        assert [s.id for s in reg.all_specs()] == ["acme/Foo-v0"]


def test_plugin_warning_is_attributed_to_the_callers_line():
    reg = make_registry(record("broken", BrokenPlugin, "broken-envs"))
    with pytest.warns(PluginLoadWarning) as caught:
        reg.all_specs()
    assert caught[0].filename == __file__


def test_backends_list_native_then_core_modes_then_plugin_modes_sorted():
    reg = EnvRegistry()
    for mode in ["zeta", "proc", "alpha", "sync", "async"]:
        reg.add_backend(mode, "m.x:Y", None)
    assert reg.vectorization_modes() == ["native", "sync", "async", "proc", "alpha", "zeta"]


def test_add_backend_twice_names_the_owner():
    reg = EnvRegistry()
    reg.add_backend("ray", "m.x:Y", SpecSource("ray", "sekai-ray", "0.3.0"))
    with pytest.raises(
        ValueError, match=r"'ray' is already provided by plugin 'ray' \(sekai-ray 0.3.0\)"
    ):
        reg.add_backend("ray", "m.x:Z", None)


def test_unknown_backend_raises_the_spec_message():
    reg = EnvRegistry()
    for mode in ["sync", "async", "proc"]:
        reg.add_backend(mode, "m.x:Y", None)
    with pytest.raises(ValueError) as info:
        reg.backend("foo")
    assert str(info.value) == (
        "Unknown vectorization_mode 'foo'; expected one of ['native', 'sync', 'async', 'proc']."
    )


def test_remove_backend_forgets_the_mode():
    reg = EnvRegistry()
    reg.add_backend("extra", "m.x:Y", None)
    reg.remove_backend("extra")
    assert reg.vectorization_modes() == ["native"]


def test_registry_without_host_factory_reports_no_plugins():
    report = EnvRegistry().plugin_report()
    assert (report.plugins, report.failures, report.missing) == ((), (), ())
