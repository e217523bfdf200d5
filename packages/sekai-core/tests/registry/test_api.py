import pytest

import sekai
from sekai.plugins import hookimpl
from sekai.registry import EnvRegistry, api
from sekai.testing import registry_sandbox
from sekai.testing.envs import LineEnv


def test_top_level_names_are_the_registry_functions():
    for name in [
        "register",
        "deregister",
        "spec",
        "make",
        "make_vec",
        "all_specs",
        "pprint_registry",
        "register_namespace",
    ]:
        assert getattr(sekai, name) is getattr(api, name)
    assert sekai.EnvSpec is sekai.registry.EnvSpec
    assert sekai.WrapperSpec is sekai.registry.WrapperSpec


def test_module_functions_act_on_the_default_registry(sekai_registry):
    assert api.default_registry() is sekai_registry
    spec = sekai.register("demo/Line-v0", LineEnv, max_episode_steps=5)
    assert sekai.spec("demo/Line-v0") is spec
    assert sekai.all_specs() == [spec]
    sekai.deregister("demo/Line-v0")
    assert sekai.all_specs() == []


def test_pprint_registry_prints_the_grouped_listing(sekai_registry, capsys):
    sekai.register("lazy/Thing-v0", LineEnv)
    sekai.register("CartPole-v1", LineEnv)
    sekai.pprint_registry()
    assert capsys.readouterr().out == (
        "Registered environments:\n  [no namespace]\n    CartPole-v1\n  [lazy]\n    lazy/Thing-v0\n"
    )


def test_register_namespace_loads_on_first_make(sekai_registry):
    sekai.register_namespace("lazy", lambda: sekai.register("lazy/Line-v0", LineEnv))
    assert str(sekai.make("lazy/Line-v0")) == "<lazy/Line-v0>"


def test_registry_sandbox_restores_the_previous_default_registry():
    before = api.default_registry()
    with pytest.raises(RuntimeError), registry_sandbox():
        assert api.default_registry() is not before
        raise RuntimeError("leave the block with an error")
    assert api.default_registry() is before


def test_set_default_registry_rejects_other_objects():
    with pytest.raises(TypeError, match="Expected an EnvRegistry, got dict"):
        api.set_default_registry({})


class OwnerPlugin:
    @staticmethod
    @hookimpl
    def sekai_register_envs(registry):
        registry.register("owner/Line-v0", "sekai.testing.envs:LineEnv")


def test_runtime_register_of_a_plugin_id_names_the_plugin():
    sandbox = registry_sandbox(("owner", OwnerPlugin), distribution="owner-pack", version="2.0")
    with sandbox, pytest.raises(sekai.EnvAlreadyRegistered) as info:
        sekai.register("owner/Line-v0", LineEnv)
    assert str(info.value) == "Environment 'owner/Line-v0' is already registered."
    assert info.value.__notes__ == ["It is provided by plugin 'owner' (owner-pack 2.0)."]


@pytest.mark.parametrize("documented", [sekai.register, EnvRegistry.add])
def test_the_docstrings_say_a_note_names_the_plugin_not_the_message(documented):
    # What the API reference shows must match the test above: str(error) is the spec's text.
    raises = documented.__doc__.split("Raises:")[1]
    entry = " ".join(raises.split("EnvAlreadyRegistered:")[1].split(":")[0].split())
    assert "note names the plugin" in entry
    assert "message names" not in entry
