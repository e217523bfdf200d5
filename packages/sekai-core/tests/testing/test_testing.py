from typing import ClassVar

import numpy as np
import pytest

import sekai
from sekai.plugins import hookimpl
from sekai.testing import assert_env_conforms, registry_sandbox
from sekai.testing.envs import LineEnv, LinePlugin, LineVecEnv
from sekai.vector.result import VecStepResult


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


class Noisy(LineEnv):
    """Seeded, but its reward comes from NumPy's global generator: not deterministic."""

    def step(self, action):
        result = super().step(action)
        return sekai.StepResult(result.observation, float(np.random.uniform()), False, False, {})


NONDETERMINISTIC = "WARNING: Two rollouts with the same seed and actions differed"


def test_assert_env_conforms_fails_on_a_determinism_failure_without_strict(sekai_registry):
    with pytest.raises(AssertionError, match=f"does not conform:\n{NONDETERMINISTIC}"):
        assert_env_conforms(Noisy())
    sekai.register("noisy/Line-v0", Noisy)
    with pytest.raises(
        AssertionError, match=f"noisy/Line-v0 does not conform:\n{NONDETERMINISTIC}"
    ):
        assert_env_conforms("noisy/Line-v0")


def test_assert_env_conforms_accepts_a_nondeterministic_registration_or_no_comparison(
    sekai_registry,
):
    sekai.register("noisy/Line-v0", Noisy, nondeterministic=True)
    assert_env_conforms("noisy/Line-v0")
    assert_env_conforms(Noisy(), check_determinism=False)


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


ORDER_ENFORCING = sekai.WrapperSpec(
    "OrderEnforcing", "sekai.wrappers.order_enforcing:OrderEnforcing"
)


def test_assert_env_conforms_checks_the_native_env_without_registered_wrappers(sekai_registry):
    # Before: make_vec refused native mode for the registered wrappers, a ValueError.
    for name, native in (("good", LineVecEnv), ("bad", BrokenNative)):
        sekai.register(
            f"{name}/Line-v0",
            LineEnv,
            vector_entry_point=native,
            additional_wrappers=(ORDER_ENFORCING,),
            max_episode_steps=10,
        )
    assert_env_conforms("good/Line-v0")
    with pytest.raises(AssertionError, match="native vector env of bad/Line-v0 does not conform"):
        assert_env_conforms("bad/Line-v0")


class NextStepNative(LineVecEnv):
    """Gymnasium's next-step style: the ending step returns the terminal observation and no
    final_observation/final_info/reset_info."""

    def step(self, actions):
        out = super().step(actions)
        final = ("final_observation", "final_info", "reset_info")
        observations = out.observations.copy()
        for i, info in enumerate(out.infos):
            if "final_observation" in info:
                observations[i] = info["final_observation"]
        infos = [{k: v for k, v in info.items() if k not in final} for info in out.infos]
        return VecStepResult(observations, out.rewards, out.terminated, out.truncated, infos)


def test_assert_env_conforms_checks_the_native_envs_same_step_autoreset(sekai_registry):
    # Before: only the batched spaces were checked, so this passed.
    sekai.register("bad/Line-v0", LineEnv, vector_entry_point=NextStepNative, max_episode_steps=20)
    with pytest.raises(
        AssertionError, match=r"ended its episode but its info lacks \['final_info'"
    ):
        assert_env_conforms("bad/Line-v0")


class MaskedLine(LineEnv):
    """Refuses "left" (0) at the left wall and says so in action_mask()."""

    def action_mask(self):
        return np.array([self.position > 0, 1], np.int8)

    def step(self, action):
        if self.position is not None and not self.action_mask()[int(action)]:
            raise sekai.InvalidAction(action, self.action_space)
        return super().step(action)


class MaskedLineVec(LineVecEnv):
    """The native twin of MaskedLine: action_mask() gives one row per sub-env."""

    def action_mask(self):
        allowed = np.stack([self.position > 0, np.ones(self.num_envs, bool)], axis=1)
        return allowed.astype(np.int8)

    def _step(self, actions):
        refused = (np.asarray(actions) == 0) & (self.position == 0) & ~self.frozen
        if refused.any():
            index = int(np.argmax(refused))
            raise sekai.InvalidAction(actions[index], self.action_space, index=index)
        return super()._step(actions)


def test_assert_env_conforms_steps_the_native_env_with_masked_actions(sekai_registry):
    # Before: the native env got unmasked random actions and its InvalidAction failed the check.
    sekai.register(
        "masked/Line-v0", MaskedLine, vector_entry_point=MaskedLineVec, max_episode_steps=20
    )
    assert_env_conforms("masked/Line-v0", strict=True)


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


class EndlessNative(LineVecEnv):
    """Ignores the time limit it is given and never ends an episode: a WARNING of the vector
    checks (autoreset was not checked), not an ERROR."""

    def __init__(self, num_envs, *, max_episode_steps=None, autoreset=True):
        super().__init__(num_envs, size=50, autoreset=autoreset)

    def _step(self, actions):
        rewards, _, truncated, infos = super()._step(np.zeros(self.num_envs, np.int64))
        return rewards, np.zeros(self.num_envs, bool), truncated, infos


def test_assert_env_conforms_fails_on_a_native_env_warning_only_when_strict(sekai_registry):
    sekai.register("endless/Line-v0", LineEnv, vector_entry_point=EndlessNative)
    assert_env_conforms("endless/Line-v0")
    with pytest.raises(
        AssertionError,
        match=r"native vector env of endless/Line-v0 does not conform:\nWARNING: no episode ended",
    ):
        assert_env_conforms("endless/Line-v0", strict=True)


class CountingNative(sekai.NativeVecEnv):
    """Observes the steps taken in the episode, in [0, 3]: outside its space after a 4th step."""

    def __init__(self, num_envs, *, max_episode_steps=None, autoreset=True):
        space = sekai.spaces.Box(0.0, 3.0, shape=(1,), dtype=np.float32)
        super().__init__(
            num_envs,
            space,
            LineEnv().action_space,
            max_episode_steps=max_episode_steps,
            autoreset=autoreset,
        )
        self.t = np.zeros(num_envs, np.int64)

    def _reset_envs(self, indices, options):
        self.t[indices] = 0

    def _observe(self):
        return self.t[:, None].astype(np.float32)

    def _step(self, actions):
        self.t += ~self.frozen
        flags = np.zeros(self.num_envs, bool)
        return np.zeros(self.num_envs), flags, flags, {}


def test_assert_env_conforms_keeps_the_native_env_within_the_registered_time_limit(
    sekai_registry,
):
    # n_steps // 3 would be 33 steps: the registered limit of 3 is the shorter one.
    sekai.register("short/Line-v0", LineEnv, vector_entry_point=CountingNative, max_episode_steps=3)
    assert_env_conforms("short/Line-v0", n_steps=100)


class ClosingLine(LineEnv):
    closed: ClassVar[list[str]] = []

    def close(self):
        ClosingLine.closed.append("closed")
        super().close()


class ClosingBadObservation(ClosingLine, BadObservation):
    pass


@pytest.mark.parametrize("env", [ClosingLine, ClosingBadObservation])
def test_assert_env_conforms_closes_the_env_it_made(sekai_registry, env):
    sekai.register("closing/Line-v0", env)
    ClosingLine.closed.clear()
    try:
        assert_env_conforms("closing/Line-v0")
    except AssertionError:
        assert env is ClosingBadObservation
    assert ClosingLine.closed == ["closed"]
