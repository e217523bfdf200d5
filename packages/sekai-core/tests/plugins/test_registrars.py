import re

import pytest

from sekai.plugins._registrars import BackendRegistrar, EnvRegistrar, PluginRecord
from sekai.registry import EnvRegistry, SpecSource, WrapperSpec
from sekai.testing.envs import LineEnv


def third_party():
    return PluginRecord("acme", "acme-envs", "1.2.0", first_party=False)


def test_env_registrar_outside_discovery_points_to_sekai_register():
    with pytest.raises(RuntimeError, match=re.escape("at runtime use sekai.register")):
        EnvRegistrar(EnvRegistry()).register("acme/A-v0", "a.b:C")


def test_backend_registrar_outside_discovery_refuses():
    with pytest.raises(RuntimeError, match="sekai_register_vector_backends hook"):
        BackendRegistrar(EnvRegistry()).register("fast", "a.b:C")


def test_env_registrar_registers_with_every_option_and_the_plugin_source():
    registry = EnvRegistry()
    registrar = EnvRegistrar(registry)
    registrar.current = record = third_party()
    spec = registrar.register(
        "acme/A-v0",
        "acme.envs:A",
        vector_entry_point="acme.envs:AVec",
        max_episode_steps=9,
        reward_threshold=1.0,
        nondeterministic=True,
        kwargs={"k": 1},
        additional_wrappers=(WrapperSpec("OE", "sekai.wrappers.order_enforcing:OrderEnforcing"),),
    )
    assert registry.spec("acme/A-v0") is spec
    assert spec.source == SpecSource("acme", "acme-envs", "1.2.0")
    assert (spec.vector_entry_point, spec.max_episode_steps, spec.kwargs) == (
        "acme.envs:AVec",
        9,
        {"k": 1},
    )
    assert record.envs == ["acme/A-v0"]


@pytest.mark.parametrize(
    ("kwargs", "what"),
    [
        ({"entry_point": LineEnv}, "entry_point"),
        ({"entry_point": "a.b:C", "vector_entry_point": LineEnv}, "vector_entry_point"),
        ({"entry_point": "a.b:C", "kernel_entry_point": LineEnv}, "kernel_entry_point"),
        (
            {"entry_point": "a.b:C", "additional_wrappers": (WrapperSpec("L", LineEnv),)},
            "entry_point of wrapper 'L'",
        ),
    ],
)
def test_env_registrar_requires_string_entry_points(kwargs, what):
    registry = EnvRegistry()
    registrar = EnvRegistrar(registry)
    registrar.current = third_party()
    text = (
        f"Plugins must register {what} as a 'module.path:ClassName' string (so nothing is "
        f"imported before it is used), got {type(LineEnv).__name__}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(text)}$"):
        registrar.register("acme/A-v0", **kwargs)
    assert registry.all_specs() == []


def test_env_registrar_checks_string_form():
    registrar = EnvRegistrar(EnvRegistry())
    registrar.current = third_party()
    with pytest.raises(ValueError, match="Invalid entry_point 'nocolon'"):
        registrar.register("acme/A-v0", "nocolon")


def test_first_party_registrar_may_register_any_id():
    registrar = EnvRegistrar(EnvRegistry())
    registrar.current = PluginRecord("classic", "sekai-classic", "0.3.0", first_party=True)
    assert registrar.register("CartPole-v1", "a.b:C").source.plugin == "classic"


def test_backend_registrar_records_modes_for_the_current_plugin():
    registry = EnvRegistry()
    registrar = BackendRegistrar(registry)
    registrar.current = record = third_party()
    registrar.register("fast", "acme.vec:Fast")
    assert registry.backend("fast") == "acme.vec:Fast"
    assert record.backends == ["fast"]


def test_backend_registrar_requires_string_mode_and_entry_point():
    registrar = BackendRegistrar(EnvRegistry())
    registrar.current = third_party()
    with pytest.raises(TypeError, match="vectorization mode must be a str"):
        registrar.register(3, "a.b:C")
    with pytest.raises(TypeError, match="Plugins must register entry_point"):
        registrar.register("fast", LineEnv)


def test_a_first_party_distribution_may_register_its_own_reserved_mode():
    registry = EnvRegistry()
    registrar = BackendRegistrar(registry)
    registrar.current = PluginRecord("ray", "sekai_ray", "0.3.0", first_party=True)
    registrar.register("ray", "sekai.ray:RayVecEnv")
    assert registry.backend("ray") == "sekai.ray:RayVecEnv"
