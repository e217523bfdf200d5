import numpy as np
import pytest

import sekai
from sekai.plugins import hookimpl
from sekai.testing import assert_env_conforms, registry_sandbox
from sekai.testing.envs import LineEnv, LinePlugin


class BadObservation(LineEnv):
    """Returns observations outside its space."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        return sekai.ResetResult(np.array([99.0], np.float32), {})


class Unseeded(LineEnv):
    """Ignores the seed (each reset starts one cell further): a WARNING, not an ERROR."""

    resets = 0

    def reset(self, *, seed=None, options=None):
        self.resets += 1
        self.position = self.resets % (self.size - 1)
        return sekai.ResetResult(self._observation(), {})


def test_assert_env_conforms_passes_for_a_conforming_env_instance():
    assert_env_conforms(LineEnv())


def test_assert_env_conforms_builds_an_id_and_checks_its_native_vector_env(sekai_line_registry):
    assert_env_conforms("testing/Line-v0")


def test_assert_env_conforms_lists_errors():
    with pytest.raises(
        AssertionError, match=r"does not conform:\nERROR: .*not within observation_space"
    ):
        assert_env_conforms(BadObservation())


def test_assert_env_conforms_ignores_warnings_unless_strict():
    assert_env_conforms(Unseeded(), check_determinism=False)
    with pytest.raises(
        AssertionError, match="WARNING: reset\\(seed=0\\) returned different observations"
    ):
        assert_env_conforms(Unseeded(), check_determinism=False, strict=True)


class BrokenNative(sekai.NativeVecEnv):
    def __init__(self, num_envs, *, max_episode_steps=None, autoreset=True):
        super().__init__(
            num_envs,
            LineEnv().observation_space,
            LineEnv().action_space,
            max_episode_steps=max_episode_steps,
            autoreset=autoreset,
        )

    def _reset_envs(self, indices, options):
        pass

    def _observe(self):
        return np.full((self.num_envs, 1), 99.0, np.float32)

    def _step(self, actions):
        return (
            np.zeros(self.num_envs),
            np.zeros(self.num_envs, bool),
            np.zeros(self.num_envs, bool),
            {},
        )


def test_assert_env_conforms_reports_a_native_env_outside_its_spaces(sekai_registry):
    sekai.register("bad/Line-v0", LineEnv, vector_entry_point=BrokenNative, max_episode_steps=10)
    with pytest.raises(AssertionError, match="native vector env of bad/Line-v0 does not conform"):
        assert_env_conforms("bad/Line-v0")
    assert_env_conforms("bad/Line-v0", check_vector=False)


def test_sandbox_names_plugins_in_order_and_attributes_them_to_the_distribution():
    class Second:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("sandbox2/Line-v0", "sekai.testing.envs:LineEnv")

    with registry_sandbox(LinePlugin, Second, distribution="my-pack", version="1.0") as registry:
        ids = [s.id for s in sekai.all_specs()]
        plugins = [(p.name, p.distribution, p.version) for p in sekai.plugins.report().plugins]
    assert ids == ["sandbox/Line-v0", "sandbox2/Line-v0"]
    assert plugins == [
        ("core", "sekai-core", sekai.__version__),
        ("sandbox", "my-pack", "1.0"),
        ("sandbox2", "my-pack", "1.0"),
    ]
    assert registry.spec("sandbox/Line-v0").source.distribution == "my-pack"


def test_sandbox_plugins_attributed_to_a_first_party_distribution_skip_namespace_rules():
    class Classic:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            registry.register("CartPole-v1", "sekai.testing.envs:LineEnv")

    with registry_sandbox(("classic", Classic), distribution="sekai-classic", version="0.3.0"):
        assert sekai.spec("CartPole-v1").source.plugin == "classic"


def test_sandbox_does_not_load_installed_entry_points_or_leak_registrations():
    with registry_sandbox():
        assert sekai.all_specs() == []
        sekai.register("tmp/Line-v0", LineEnv)
    with registry_sandbox():
        assert sekai.all_specs() == []


def test_fixtures_give_an_empty_and_a_line_registry(sekai_registry):
    assert sekai.all_specs() == []
    assert sekai_registry.vectorization_modes() == ["native", "sync", "async", "proc"]


def test_line_registry_fixture_provides_testing_line(sekai_line_registry):
    assert [s.id for s in sekai.all_specs()] == ["testing/Line-v0"]
