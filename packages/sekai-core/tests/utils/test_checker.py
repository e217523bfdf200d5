"""check_env: a catalogue of broken envs (one fault each), and correct envs giving []."""

from __future__ import annotations

import asyncio
import gc
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import sekai
from sekai import check_env


class Good(sekai.Env[np.ndarray, np.int64]):
    """A correct env: 1-D float32 Box obs, Discrete(2) actions, seeded, ends after 7 steps."""

    def __init__(self, length: int = 7) -> None:
        self.observation_space = sekai.Box(-10.0, 10.0, shape=(2,))
        self.action_space = sekai.Discrete(2)
        self.length = length

    def _obs(self) -> Any:
        return np.array([self.x, self.t / 10], dtype=np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.x, self.t = float(self.rng.uniform(-1, 1)), 0
        return sekai.ResetResult(self._obs(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        self.x = float(np.clip(self.x + self.rng.normal(0, 0.1) + (0.1 if action else -0.1), -9, 9))
        return sekai.StepResult(
            self._obs(), float(self.x), self.t >= self.length, False, {"t": self.t}
        )


# -- the catalogue: one fault per env --------------------------------------------------------


class WrongDtype(Good):
    def _obs(self) -> Any:
        return super()._obs().astype(np.float64)


class WrongShape(Good):
    def _obs(self) -> Any:
        return np.zeros(3, dtype=np.float32)


class OutsideSpace(Good):
    def _obs(self) -> Any:
        return np.array([50.0, 0.0], dtype=np.float32)


class IntFlags(Good):
    def step(self, action: Any) -> sekai.StepResult[Any]:
        r = super().step(action)
        return sekai.StepResult(r.observation, r.reward, int(r.terminated), 0, r.info)


class NotSeeding(Good):
    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(None)  # ignores the seed
        self.x, self.t = float(np.random.default_rng().uniform(-1, 1)), 0
        return sekai.ResetResult(self._obs(), {})


class Nondeterministic(Good):
    def step(self, action: Any) -> sekai.StepResult[Any]:
        r = super().step(action)
        noise = float(np.random.default_rng().normal())
        return sekai.StepResult(r.observation, r.reward + noise, r.terminated, r.truncated, r.info)


class AsyncResetTuple(Good):
    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        r = self.reset(seed=seed)
        return r.observation, r.info


class AsyncStepTuple(Good):
    async def async_step(self, action: Any) -> Any:
        r = self.step(action)
        return r.observation, r.reward, r.terminated, r.truncated, r.info


class StepInfoNotDict(Good):
    def step(self, action: Any) -> sekai.StepResult[Any]:
        r = super().step(action)
        return sekai.StepResult(r.observation, r.reward, r.terminated, r.truncated, [r.info])  # type: ignore[arg-type]


class ResetInfoNotDict(Good):
    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        r = super().reset(seed=seed)
        return sekai.ResetResult(r.observation, None)  # type: ignore[arg-type]


class ReusedBuffer(Good):
    def __init__(self) -> None:
        super().__init__()
        self.buffer = np.zeros(2, dtype=np.float32)

    def _obs(self) -> Any:
        self.buffer[:] = [self.x, self.t / 10]
        return self.buffer


def test_wrong_observation_dtype_is_a_warning_reported_once() -> None:
    assert check_env(WrongDtype()) == [
        "WARNING: Observation from reset() has dtype float64, space has float32. "
        "(seen at 15 resets; first shown)",
        "WARNING: Observation from step() at step 0 has dtype float64, space has float32. "
        "(seen at 100 steps; first shown)",
        "WARNING: Observation from async_reset() has dtype float64, space has float32.",
        "WARNING: Observation from async_step() has dtype float64, space has float32.",
    ]


def test_wrong_observation_shape_is_an_error() -> None:
    issues = check_env(WrongShape())
    assert issues[0].startswith(
        "ERROR: Observation from reset() is not within observation_space. obs=array([0., 0., 0.]"
    )
    assert issues[1].startswith(
        "ERROR: Observation from step() at step 0 is not within observation_space."
    )
    assert issues[1].endswith("(seen at 100 steps; first shown)")
    assert all(line.startswith("ERROR") for line in issues)


def test_observation_outside_bounds_is_an_error_also_in_async() -> None:
    issues = check_env(OutsideSpace())
    assert any(
        "Observation from step() at step 0 is not within observation_space" in i for i in issues
    )
    assert any(i.startswith("ERROR: Observation from async_reset() is not within") for i in issues)
    assert any(i.startswith("ERROR: Observation from async_step() is not within") for i in issues)


def test_observation_outside_the_space_names_where_and_why() -> None:
    assert check_env(OutsideSpace(), n_steps=1, check_reset_seed=False, check_async=False) == [
        "ERROR: Observation from reset() is not within observation_space. "
        "obs=array([50.,  0.], dtype=float32); Observation[0] is 50.0, outside [-10.0, 10.0].",
        "ERROR: Observation from step() at step 0 is not within observation_space. "
        "obs=array([50.,  0.], dtype=float32); Observation[0] is 50.0, outside [-10.0, 10.0].",
    ]
    issues = check_env(WrongShape(), n_steps=1, check_async=False)
    assert issues[0].endswith("; Observation has shape (3,), expected (2,).")


class Trader(Good):
    """A Dict observation whose last entry is wrong, behind a repr too long to show it."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = sekai.Dict(
            prices=sekai.Box(0.0, np.inf, shape=(5, 4)),
            position=sekai.Box(-1.0, 1.0, shape=(1,)),
            regime=sekai.Discrete(3),
        )

    def _obs(self) -> Any:
        prices = np.full((5, 4), 1.2345678, np.float32)
        return {"prices": prices, "position": np.zeros(1, np.float32), "regime": 3}


class Pixels(Good):
    def __init__(self) -> None:
        super().__init__()
        self.observation_space = sekai.Box(0.0, 1.0, shape=(84, 84, 3))

    def _obs(self) -> Any:
        frame = np.full((84, 84, 3), 0.5, np.float32)
        frame[40, 7, 1] = 1.5
        return frame


@pytest.mark.parametrize(
    ("env", "why"),
    [
        (Trader, "; Observation['regime'] is 3, outside [0, 2]."),
        (Pixels, "; Observation[40, 7, 1] is 1.5, outside [0.0, 1.0]."),
    ],
)
def test_the_reason_follows_an_abridged_observation(env: Any, why: str) -> None:
    first = check_env(env(), n_steps=1, check_async=False)[0]
    assert first.startswith("ERROR: Observation from reset() is not within observation_space.")
    assert "...; Observation" in first  # the observation is cut, the reason is not
    assert first.endswith(why)


class ArraysOnly(sekai.Space[Any]):
    """A custom space whose contains() assumes an array (and raises for a list)."""

    def __init__(self) -> None:
        super().__init__(shape=(2,), dtype=np.float32)

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> Any:
        return self.rng.uniform(1, 2, 2).astype(np.float32)

    def contains(self, x: Any) -> bool:
        return bool((x > 0).all())


def test_an_exception_from_contains_is_the_spaces_error_not_the_observations() -> None:
    class ListObs(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = ArraysOnly()

        def _obs(self) -> Any:
            return [1.0, 2.0]

    why = "TypeError: '>' not supported between instances of 'list' and 'int'."
    assert check_env(ListObs(), n_steps=3, check_reset_seed=False, check_async=False) == [
        f"ERROR: observation_space.contains() raised {why} Observation from reset(): "
        "obs=[1.0, 2.0]",
        f"ERROR: observation_space.contains() raised {why} Observation from step() at step 0: "
        "obs=[1.0, 2.0] (seen at 3 steps; first shown)",
    ]


def test_an_exception_from_contains_on_the_spaces_own_sample_is_not_blamed_on_sample() -> None:
    class RaisingContains(ArraysOnly):
        def contains(self, x: Any) -> bool:
            raise RuntimeError("contains bug")

    class Env(Good):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = RaisingContains()

    issues = check_env(Env(), n_steps=1, check_async=False)
    assert issues[0].startswith(
        "ERROR: action_space.contains() raised RuntimeError: contains bug. Its own sample(): "
        "array(["
    )
    assert not any("sample() raised" in line for line in issues)


def test_non_bool_flags_are_warnings() -> None:
    assert check_env(IntFlags()) == [
        "WARNING: terminated at step 0 is int, expected bool. (seen at 100 steps; first shown)",
        "WARNING: truncated at step 0 is int, expected bool. (seen at 100 steps; first shown)",
        "WARNING: terminated from async_step() is int, expected bool.",
        "WARNING: truncated from async_step() is int, expected bool.",
    ]


def test_a_step_in_gyms_old_order_is_an_error() -> None:
    # Before: one WARNING, while every step with an info was done (the info sat in `truncated`).
    class GymOrder(Good):
        def step(self, action: Any) -> Any:
            r = super().step(action)
            return sekai.StepResult(r.observation, r.reward, r.terminated, r.info)

    assert check_env(GymOrder()) == [
        "ERROR: step() raised TypeError at step 0: StepResult's truncated must be a bool, got "
        "dict: StepResult takes (observation, reward, terminated, truncated, info), not gym's "
        "(obs, reward, done, info).",
        "ERROR: async_step() raised TypeError: StepResult's truncated must be a bool, got dict: "
        "StepResult takes (observation, reward, terminated, truncated, info), not gym's "
        "(obs, reward, done, info).",
    ]


def test_reset_ignoring_seed_is_found() -> None:
    assert check_env(NotSeeding()) == [
        "WARNING: reset(seed=0) returned different observations on two calls. Call "
        "self._set_rng(seed) at the start of reset() and draw all randomness from self.rng; "
        "state kept across episodes (a counter, or a sequential episode sampler that moves on "
        "every reset) does the same."
    ]


def test_nondeterminism_found_only_with_check_determinism() -> None:
    assert check_env(Nondeterministic()) == []
    assert check_env(Nondeterministic(), check_determinism=True) == [
        "WARNING: Two rollouts with the same seed and actions differed. If the env is "
        "intentionally stochastic beyond its seed, register it with nondeterministic=True. "
        "First difference: reward at step 0."
    ]


def test_determinism_rollouts_stop_at_the_end_of_the_episode() -> None:
    class RefusesStepsAfterItsEnd(Good):
        def step(self, action: Any) -> sekai.StepResult[Any]:
            if self.t >= self.length:
                raise sekai.ResetRequired("the episode is over")
            return super().step(action)

    assert check_env(RefusesStepsAfterItsEnd(length=3), check_determinism=True) == []


def test_an_env_registered_as_nondeterministic_is_not_warned_about_it() -> None:
    env = Nondeterministic()
    env.spec = sekai.EnvSpec(id="Noisy-v0", nondeterministic=True)
    assert check_env(env, check_determinism=True) == []
    env.spec = sekai.EnvSpec(id="Noisy-v0")
    assert len(check_env(env, check_determinism=True)) == 1


class NoisyInfo(Good):
    """Seeded observations, but one info entry drawn from NumPy's global generator."""

    def __init__(self, noisy: str) -> None:
        super().__init__()
        self.noisy = noisy

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        result = super().reset(seed=seed, options=options)
        info = {"open": float(np.random.random())} if self.noisy == "reset" else {}
        return sekai.ResetResult(result.observation, info)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        r = super().step(action)
        info = {"fill_price": float(np.random.random())} if self.noisy == "step" else r.info
        return sekai.StepResult(r.observation, r.reward, r.terminated, r.truncated, info)


@pytest.mark.parametrize("noisy", ["reset", "step"])
def test_a_difference_only_in_the_info_is_found(noisy: str) -> None:
    where = (
        "info['open'] after reset(seed=123)" if noisy == "reset" else "info['fill_price'] at step 0"
    )
    assert check_env(NoisyInfo(noisy), check_determinism=True) == [
        "WARNING: Two rollouts with the same seed and actions differed. If the env is "
        "intentionally stochastic beyond its seed, register it with nondeterministic=True. "
        f"First difference: {where}."
    ]


class Fill:
    """A plain record: its equality is identity."""

    def __init__(self, price: float) -> None:
        self.price = price


@dataclass(eq=False)
class IdentityRecord:
    price: float


class IdentityInfo(Good):
    """Deterministic, with an info value that compares only by identity."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def step(self, action: Any) -> sekai.StepResult[Any]:
        r = super().step(action)
        value: Any = {
            "record": Fill(100.0),
            "dataclass": IdentityRecord(100.0),
            "rng": self.rng,
            "env": self,
            "function": lambda: 0,
        }[self.kind]
        return sekai.StepResult(
            r.observation, r.reward, r.terminated, r.truncated, {"fill": [value], "t": self.t}
        )


@pytest.mark.parametrize("kind", ["record", "dataclass", "rng", "env", "function"])
def test_info_values_compared_only_by_identity_are_not_nondeterminism(kind: str) -> None:
    assert check_env(IdentityInfo(kind), check_determinism=True) == []


def test_an_identity_only_info_value_of_another_type_is_a_difference() -> None:
    class Swaps(IdentityInfo):
        runs = 0

        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            self.runs += 1
            self.kind = "record" if self.runs % 2 else "function"
            return super().reset(seed=seed, options=options)

    (issue,) = check_env(Swaps("record"), check_determinism=True)
    assert issue.endswith("First difference: info['fill'] at step 0.")


def test_the_gymnasium_episode_statistics_time_is_not_compared() -> None:
    class GymStats(Good):
        def step(self, action: Any) -> sekai.StepResult[Any]:
            r = super().step(action)
            info = {"episode": {"r": 1.0, "l": self.t, "t": float(np.random.random())}}
            return sekai.StepResult(r.observation, r.reward, r.terminated, r.truncated, info)

    class GymStatsMiscounted(GymStats):
        def step(self, action: Any) -> sekai.StepResult[Any]:
            r = super().step(action)
            r.info["episode"]["r"] = float(np.random.random())
            return r

    assert check_env(GymStats(), check_determinism=True) == []
    (issue,) = check_env(GymStatsMiscounted(), check_determinism=True)
    assert issue.endswith("First difference: info['episode'] at step 0.")


@pytest.mark.parametrize("max_episode_steps", [None, 5])
def test_the_episode_statistics_times_do_not_read_as_nondeterminism(
    max_episode_steps: int | None,
) -> None:
    inner: sekai.Env[Any, Any] = Good(length=20)
    if max_episode_steps is not None:
        inner = sekai.TimeLimit(inner, max_episode_steps)
    env = sekai.RecordEpisodeStatistics(inner)
    assert check_env(env, check_determinism=True) == []
    assert env.episode_stats is not None and env.episode_stats.elapsed_time > 0
    # and within an autoreset's final_info, where the episode's end is in the next result
    env = sekai.AutoReset(sekai.RecordEpisodeStatistics(Good()))
    assert check_env(env, check_determinism=True) == []


def test_the_episode_statistics_are_compared_but_their_times() -> None:
    class MiscountedReturn(sekai.RecordEpisodeStatistics):  # type: ignore[type-arg]
        def _step_result(self, result: sekai.StepResult[Any]) -> sekai.StepResult[Any]:
            self._return += float(np.random.random())
            return super()._step_result(result)

    assert len(check_env(MiscountedReturn(Good()), check_determinism=True)) == 1


def test_async_reset_returning_tuple_is_an_error() -> None:
    assert check_env(AsyncResetTuple()) == [
        "ERROR: async_reset() must return a ResetResult with .observation and .info "
        "attributes. Got tuple."
    ]


def test_async_step_returning_tuple_is_an_error() -> None:
    assert check_env(AsyncStepTuple()) == [
        "ERROR: async_step() must return a StepResult; result has no observation, reward, "
        "terminated, truncated, info. Got tuple."
    ]


def test_step_info_not_dict_is_a_warning() -> None:
    assert check_env(StepInfoNotDict()) == [
        "WARNING: info at step 0 is list, expected dict. (seen at 100 steps; first shown)",
        "WARNING: info from async_step() is list, expected dict.",
    ]


def test_reset_info_not_dict_is_an_error() -> None:
    assert check_env(ResetInfoNotDict()) == [
        "ERROR: reset() info must be a dict, got NoneType. (seen at 15 resets; first shown)",
        "ERROR: async_reset() info must be a dict, got NoneType.",
    ]


def test_async_results_pass_the_same_checks_as_reset_and_step() -> None:
    # Before: only the async observations were checked; these went unreported.
    class BadAsync(Good):
        async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return sekai.ResetResult(self.reset(seed=seed).observation, None)

        async def async_step(self, action: Any) -> Any:
            r = self.step(action)
            return sekai.StepResult(r.observation, "0.0", 0, None, ["not a dict"])

    assert check_env(BadAsync()) == [
        "ERROR: async_reset() info must be a dict, got NoneType.",
        "WARNING: reward from async_step() is str, expected float.",
        "WARNING: terminated from async_step() is int, expected bool.",
        "WARNING: truncated from async_step() is NoneType, expected bool.",
        "WARNING: info from async_step() is list, expected dict.",
    ]


def test_an_infinite_async_reward_is_reported() -> None:
    class InfAsync(Good):
        async def async_step(self, action: Any) -> Any:
            r = self.step(action)
            return sekai.StepResult(r.observation, float("inf"), False, False, r.info)

    assert check_env(InfAsync()) == ["WARNING: reward from async_step() is infinite."]


def test_reset_ignoring_seed_is_found_when_every_reset_writes_into_one_buffer() -> None:
    # The first observation is compared as it was, not as the second reset rewrote it.
    class UnseededBuffer(NotSeeding, ReusedBuffer):
        pass

    issues = check_env(UnseededBuffer(), check_async=False)
    assert any(
        i.startswith("WARNING: reset(seed=0) returned different observations") for i in issues
    )


def test_reused_observation_buffer_is_found_once() -> None:
    issues = check_env(ReusedBuffer())
    assert len(issues) == 2
    assert issues[0].startswith(
        "WARNING: step() modified the previous observation in place (at step 0)."
    )
    assert issues[1].startswith(
        "WARNING: reset() after step 6 overwrote the terminal observation in place."
    )


# -- more faults -----------------------------------------------------------------------------


class NoSpaces(sekai.Env[Any, Any]):
    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        raise AssertionError("not reached")

    def step(self, action: Any) -> Any:
        raise AssertionError("not reached")


def test_missing_and_wrong_spaces_stop_early() -> None:
    assert check_env(NoSpaces()) == [
        "ERROR: observation_space is not defined. Set it in __init__.",
        "ERROR: action_space is not defined. Set it in __init__.",
    ]
    env = NoSpaces()
    env.observation_space = 3  # type: ignore[assignment]
    env.action_space = sekai.Discrete(2)
    assert check_env(env) == ["ERROR: observation_space must be a sekai.Space, got int."]


def test_a_gymnasium_space_is_named_by_its_module_with_how_to_convert_it() -> None:
    # Before: "got Box", the name of sekai's own class.
    gymnasium = pytest.importorskip("gymnasium")
    env = NoSpaces()
    env.observation_space = gymnasium.spaces.Box(-1.0, 1.0, shape=(1,))  # type: ignore[assignment]
    env.action_space = sekai.Discrete(2)
    assert check_env(env) == [
        "ERROR: observation_space must be a sekai.Space, got gymnasium.spaces.box.Box. "
        "Convert it with sekai.compat.space_from_gymnasium(space)."
    ]


def test_reset_raising_stops() -> None:
    class Boom(Good):
        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            raise RuntimeError("boom")

    assert check_env(Boom()) == ["ERROR: reset() raised RuntimeError: boom"]


def test_reset_returning_tuple_stops() -> None:
    class TupleReset(Good):
        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return super().reset(seed=seed).observation, {}

    assert check_env(TupleReset()) == [
        "ERROR: reset() must return a ResetResult with .observation and .info attributes. "
        "Got tuple."
    ]


def test_step_raising_stops_stepping_but_later_checks_run() -> None:
    class BadStep(Good):
        def step(self, action: Any) -> Any:
            if self.t >= 2:
                raise ValueError("bad step")
            return super().step(action)

    issues = check_env(BadStep(), check_determinism=True)
    assert issues[0] == "ERROR: step() raised ValueError at step 2: bad step"
    assert issues[1] == "ERROR: The determinism check's rollout raised ValueError: bad step"
    assert len(issues) == 2


def test_step_returning_tuple_lists_missing_fields() -> None:
    class TupleStep(Good):
        def step(self, action: Any) -> Any:
            return (1, 2)

    assert check_env(TupleStep(), check_async=False) == [
        "ERROR: step() must return a StepResult; result has no observation, reward, terminated, "
        "truncated, info. Got tuple."
    ]


def test_an_async_def_step_is_named_as_the_coroutine_it_returns() -> None:
    class AsyncDefStep(Good):
        async def step(self, action: Any) -> Any:  # meant as async_step
            return super().step(action)

    # No "coroutine was never awaited" RuntimeWarning either (warnings are errors here).
    assert check_env(AsyncDefStep(), check_async=False) == [
        "ERROR: step() must return a StepResult; result has no observation, reward, terminated, "
        "truncated, info. Got coroutine: step() must be a plain def; async code goes in "
        "async_step()."
    ]


def test_a_result_of_another_library_is_named_with_its_module() -> None:
    class ArrayReset(Good):
        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return super().reset(seed=seed).observation

    assert check_env(ArrayReset()) == [
        "ERROR: reset() must return a ResetResult with .observation and .info attributes. "
        "Got numpy.ndarray."
    ]


def test_reward_type_nan_and_infinite_rewards() -> None:
    class Rewards(Good):
        def __init__(self) -> None:
            super().__init__(length=100)

        def step(self, action: Any) -> Any:
            r = super().step(action)
            reward = ["1", float("nan"), float("inf")][(self.t - 1) % 3]
            return sekai.StepResult(r.observation, reward, r.terminated, r.truncated, r.info)

    assert check_env(Rewards(), n_steps=9, check_async=False) == [
        "WARNING: reward at step 0 is str, expected float. (seen at 3 steps; first shown)",
        "WARNING: reward at step 1 is NaN. (seen at 3 steps; first shown)",
        "WARNING: Encountered 3 infinite reward(s) during 9 steps.",
    ]


@pytest.mark.parametrize("infinite", [float("inf"), float("-inf")])
def test_a_single_infinite_reward_is_a_warning(infinite: float) -> None:
    class OneInfinite(Good):
        def step(self, action: Any) -> Any:
            r = super().step(action)
            reward = infinite if self.t == 2 else 0.0
            return sekai.StepResult(r.observation, reward, r.terminated, r.truncated, r.info)

    assert check_env(OneInfinite(), n_steps=5, check_async=False) == [
        "WARNING: Encountered 1 infinite reward(s) during 5 steps."
    ]


@pytest.mark.parametrize("reward", [np.complex128(1 + 2j), 1j])
def test_a_complex_reward_is_a_warning_not_a_leaked_complex_warning(reward: Any) -> None:
    # Before: np.complex128 passed as a np.number and float() raised ComplexWarning, which
    # under warnings-as-errors became "check_env stopped: the environment raised ...".
    class Complex(Good):
        def step(self, action: Any) -> Any:
            r = super().step(action)
            return sekai.StepResult(r.observation, reward, r.terminated, r.truncated, r.info)

    assert check_env(Complex(), n_steps=3, check_async=False) == [
        f"WARNING: reward at step 0 is {type(reward).__name__}, expected float. "
        "(seen at 3 steps; first shown)"
    ]


@pytest.mark.parametrize(
    "nan", [float("nan"), np.float64("nan"), np.float32("nan"), np.float16("nan")]
)
def test_a_nan_reward_of_any_float_type_is_deterministic(nan: Any) -> None:
    # Rollouts are compared structurally and NaN-equal, NumPy float scalars included.
    class NanReward(Good):
        def step(self, action: Any) -> Any:
            r = super().step(action)
            reward = nan if self.t == 2 else r.reward
            return sekai.StepResult(r.observation, reward, r.terminated, r.truncated, r.info)

    assert check_env(NanReward(), n_steps=5, check_determinism=True, check_async=False) == [
        "WARNING: reward at step 1 is NaN."
    ]


def test_warn_on_anomaly_false_keeps_only_errors() -> None:
    assert check_env(WrongDtype(), warn_on_anomaly=False) == []
    assert check_env(WrongShape(), warn_on_anomaly=False) != []


def test_reset_after_done_raising_skips_remaining_checks() -> None:
    class OneEpisode(Good):
        resets = 0

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            self.resets += 1
            if self.resets > 1:
                raise RuntimeError("only once")
            return super().reset(seed=seed)

    assert check_env(OneEpisode(), check_determinism=True) == [
        "ERROR: reset() raised RuntimeError: only once"
    ]


def test_an_async_step_written_without_async_is_named() -> None:
    class PlainAsyncStep(Good):
        def async_step(self, action: Any) -> Any:  # type: ignore[override]
            return self.step(action)  # meant as an async def

    assert check_env(PlainAsyncStep()) == [
        "ERROR: async_step() raised TypeError: "
        "test_an_async_step_written_without_async_is_named.<locals>.PlainAsyncStep.async_step() "
        "returned a sekai.StepResult, not an awaitable: it must be an async def (sync code goes "
        "in step())."
    ]


def test_async_methods_raising_are_errors() -> None:
    class AsyncBoom(Good):
        async def async_step(self, action: Any) -> Any:
            raise OSError("gateway down")

    assert check_env(AsyncBoom()) == ["ERROR: async_step() raised OSError: gateway down"]


def test_a_failing_action_sample_is_not_blamed_on_async_step() -> None:
    class SampleBug(ArraysOnly):
        def sample(self, mask: Any = None) -> Any:
            raise RuntimeError("sample bug")

    class Env(Good):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = SampleBug()

    assert check_env(Env(), check_reset_seed=False) == [
        "ERROR: action_space.sample() raised RuntimeError: sample bug",
        "ERROR: Sampling an action raised RuntimeError: sample bug at step 0.",
        "ERROR: Sampling an action for async_step() raised RuntimeError: sample bug.",
    ]


def test_async_check_skipped_inside_running_loop() -> None:
    async def inside() -> list[str]:
        return check_env(AsyncStepTuple())

    assert asyncio.run(inside()) == []


def test_nested_box_leaf_dtype_names_key_path() -> None:
    class DictObs(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Dict(
                pos=sekai.Box(-10.0, 10.0, shape=(2,)), k=sekai.Discrete(2)
            )

        def _obs(self) -> Any:
            return {"pos": np.zeros(2, dtype=np.float64), "k": 0}

    assert check_env(DictObs(), n_steps=3, check_reset_seed=False, check_async=False)[1] == (
        "WARNING: Observation['pos'] from step() at step 0 has dtype float64, space has float32. "
        "(seen at 3 steps; first shown)"
    )


def test_numpy_scalar_observation_of_a_scalar_box_is_dtype_checked() -> None:
    class Scalar(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Box(-10.0, 10.0, shape=())

        def _obs(self) -> Any:
            return np.float64(self.x)

    assert check_env(Scalar(), n_steps=3, check_async=False) == [
        "WARNING: Observation from reset() has dtype float64, space has float32.",
        "WARNING: Observation from step() at step 0 has dtype float64, space has float32. "
        "(seen at 3 steps; first shown)",
    ]


@pytest.mark.parametrize(
    ("stack", "path", "value"),
    [(False, "[0]", lambda: (np.zeros(2), np.zeros(2))), (True, "[:]", lambda: np.zeros((2, 2)))],
)
def test_box_leaves_inside_a_sequence_are_dtype_checked(stack: bool, path: str, value: Any) -> None:
    # Before: a Sequence was not descended into; a wrong dtype in every element is one issue.
    class SequenceObs(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), stack=stack)

        def _obs(self) -> Any:
            return value()

    assert check_env(SequenceObs(), n_steps=3, check_async=False) == [
        f"WARNING: Observation{path} from reset() has dtype float64, space has float32.",
        f"WARNING: Observation{path} from step() at step 0 has dtype float64, space has float32. "
        "(seen at 3 steps; first shown)",
    ]


def test_a_stacked_sequence_of_the_wrong_dtype_is_explained_by_its_element() -> None:
    # The stack is refused by its dtype; the message names the part and its element, as the
    # stack's structure and shapes are right.
    class SequenceObs(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Sequence(sekai.Dict(a=sekai.Discrete(3)), stack=True)

        def _obs(self) -> Any:
            return {"a": np.array([0.0, 1.0])}  # floats, not ints

    issues = check_env(SequenceObs(), n_steps=1, check_async=False)
    assert issues[0] == (
        "ERROR: Observation from reset() is not within observation_space. "
        "obs={'a': array([0., 1.])}; Observation['a'] is np.float64(0.0) (a numpy.float64), "
        "expected an int (in element 0 of the sequence)."
    )


def test_bad_action_mask_is_reported_and_stops() -> None:
    class AllMasked(Good):
        def action_mask(self) -> np.ndarray:
            return np.zeros(2, dtype=np.int8)

    issues = check_env(AllMasked())
    assert len(issues) == 1
    assert issues[0].startswith(
        "ERROR: action_space.sample(mask=env.action_mask()) raised ValueError: "
    )
    assert issues[0].endswith(
        "action_mask() must return a mask in the format action_space.sample() accepts."
    )


def test_random_actions_respect_the_mask() -> None:
    class OnlyOne(Good):
        def action_mask(self) -> np.ndarray:
            return np.array([0, 1], dtype=np.int8)

        def step(self, action: Any) -> Any:
            if action != 1:
                raise sekai.InvalidAction(action, self.action_space)
            return super().step(action)

    assert check_env(OnlyOne(), check_determinism=True) == []


def test_an_action_mask_that_raises_is_an_error_and_stops() -> None:
    class MaskRaises(Good):
        def action_mask(self) -> np.ndarray:
            raise RuntimeError("mask boom")

    assert check_env(MaskRaises()) == ["ERROR: action_mask() raised RuntimeError: mask boom"]


def test_a_mask_sample_takes_but_flatten_action_mask_refuses_is_an_error() -> None:
    class MultiBinaryMask(Good):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = sekai.MultiBinary(3)

        def action_mask(self) -> np.ndarray:
            return np.array([1, 0, -1], dtype=np.int8)  # sample() takes it, flattening does not

        def step(self, action: Any) -> sekai.StepResult[Any]:
            return super().step(int(action[0]))

    assert check_env(MultiBinaryMask()) == [
        "ERROR: flatten_action_mask() rejected the action_mask(): TypeError: Action masks are "
        "not supported for MultiBinary action spaces."
    ]


class SamplesOutside(sekai.Discrete):
    """A custom space whose sample() returns what it does not contain."""

    def sample(self, mask: Any = None) -> Any:
        return 99


@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
def test_a_space_whose_sample_is_not_in_it_is_an_error(masked: bool) -> None:
    class Env(Good):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = SamplesOutside(2)

    class MaskedEnv(Env):
        def action_mask(self) -> np.ndarray:
            return np.ones(2, dtype=np.int8)

    issues = check_env(MaskedEnv() if masked else Env(), n_steps=3)
    expected = ["ERROR: action_space.sample() returned 99, which is not in action_space."]
    if masked:
        expected.append(
            "ERROR: action_space.sample(mask=env.action_mask()) returned 99, which is not in "
            "action_space. action_mask() must return a mask in the format action_space.sample() "
            "accepts."
        )
    assert issues == expected


class ObsSamplesOutside(sekai.Box):
    """A Box of Good's observations whose sample() returns what it does not contain."""

    def sample(self, mask: Any = None) -> Any:
        return np.full(self.shape, 50.0, dtype=self.dtype)


class ObsSampleRaises(sekai.Box):
    def sample(self, mask: Any = None) -> Any:
        raise RuntimeError("sample bug")


@pytest.mark.parametrize(
    ("space_type", "error"),
    [
        (
            ObsSamplesOutside,
            "ERROR: observation_space.sample() returned array([50., 50.], dtype=float32), "
            "which is not in observation_space.",
        ),
        (ObsSampleRaises, "ERROR: observation_space.sample() raised RuntimeError: sample bug"),
    ],
    ids=["outside", "raises"],
)
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_an_observation_space_whose_sample_fails_is_an_error_when_checked(
    space_type: type[sekai.Box], error: str, checked: bool
) -> None:
    class Env(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = space_type(-10.0, 10.0, shape=(2,))

    issues = check_env(Env(), n_steps=3, check_obs_space=checked)
    assert issues == ([error] if checked else [])


def test_flags_that_are_not_truth_values_are_an_error_and_stop_the_steps() -> None:
    # StepResult refuses such flags itself: only a result of another type gets here.
    class Result:
        def __init__(self, observation: Any) -> None:
            self.observation, self.reward, self.info = observation, 0.0, {}
            self.terminated, self.truncated = np.array([1, 2]), False

    class ArrayFlags(Good):
        steps = 0

        def step(self, action: Any) -> Any:
            self.steps += 1
            return Result(super().step(action).observation)

    env = ArrayFlags()
    issues = check_env(env, n_steps=5, check_reset_seed=False, check_async=False)
    assert issues[0].startswith("ERROR: step() returned ") and "not a sekai.StepResult" in issues[0]
    assert issues[1] == "WARNING: terminated at step 0 is ndarray, expected bool."
    assert issues[2].startswith(
        "ERROR: terminated/truncated at step 0 are not truth values: ValueError: "
    )
    assert len(issues) == 3 and env.steps == 1


def test_a_step_result_of_another_type_is_an_error_as_every_vec_env_refuses_it() -> None:
    class Fields:  # every field of a StepResult, but not one
        def __init__(self, result: sekai.StepResult[Any]) -> None:
            self.observation, self.reward, self.info = result.observation, result.reward, {}
            self.terminated, self.truncated = result.terminated, result.truncated

    class OwnResult(Good):
        def step(self, action: Any) -> Any:
            return Fields(super().step(action))

    issues = check_env(OwnResult())
    refused = (
        "not a sekai.StepResult: every VecEnv refuses it. Return sekai.StepResult(...) instead."
    )
    assert len(issues) == 2
    assert issues[0].startswith("ERROR: step() returned ") and refused in issues[0]
    assert issues[0].endswith("steps; first shown)")  # once, not once per step
    assert issues[1].startswith("ERROR: async_step() returned ") and issues[1].endswith(refused)
    with pytest.raises(TypeError, match=r"not a sekai\.StepResult"):  # what check_env foretold
        vec = sekai.SyncVecEnv([OwnResult])
        vec.reset(seed=0)
        vec.step([0])


def test_a_step_result_returned_by_reset_is_an_error_as_every_vec_env_refuses_it() -> None:
    class ResetGivesStep(Good):
        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            first = super().reset(seed=seed, options=options)
            return sekai.StepResult(first.observation, 0.0, False, False, first.info)

    issues = check_env(ResetGivesStep(), check_async=False)
    assert len(issues) == 1
    assert issues[0].startswith(
        "ERROR: reset() returned sekai.core.result.StepResult, not a sekai.ResetResult: every "
        "VecEnv refuses it. Return sekai.ResetResult(...) instead. (seen at "
    )
    with pytest.raises(TypeError, match=r"not a sekai\.ResetResult"):
        sekai.SyncVecEnv([ResetGivesStep]).reset(seed=0)


def test_reset_with_seed_0_raising_is_an_error() -> None:
    class Seed0Raises(Good):
        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            if seed == 0:
                raise ValueError("no seed 0")
            return super().reset(seed=seed)

    assert check_env(Seed0Raises()) == ["ERROR: reset(seed=0) raised ValueError: no seed 0"]


def test_async_reset_raising_is_an_error() -> None:
    class AsyncResetRaises(Good):
        async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
            raise KeyError("ar")

    assert check_env(AsyncResetRaises()) == ["ERROR: async_reset() raised KeyError: 'ar'"]


def test_an_async_reset_returning_a_coroutine_is_named() -> None:
    class AsyncResetCoroutine(Good):
        async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
            async def inner() -> None:
                pass

            return inner()

    # The coroutine is closed: no "never awaited" RuntimeWarning (warnings are errors here).
    assert check_env(AsyncResetCoroutine()) == [
        "ERROR: async_reset() must return a ResetResult with .observation and .info attributes. "
        "Got coroutine."
    ]


def test_tuple_box_leaf_dtype_names_its_index() -> None:
    class TupleObs(Good):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Tuple(
                (sekai.Box(-10.0, 10.0, shape=(2,)), sekai.Discrete(2))
            )

        def _obs(self) -> Any:
            return (np.zeros(2, dtype=np.float64), 0)

    assert check_env(TupleObs(), n_steps=3, check_async=False) == [
        "WARNING: Observation[0] from reset() has dtype float64, space has float32.",
        "WARNING: Observation[0] from step() at step 0 has dtype float64, space has float32. "
        "(seen at 3 steps; first shown)",
    ]


# -- correct envs ----------------------------------------------------------------------------


class MeanReversionEnv(sekai.Env[np.ndarray, np.intp]):
    """The quickstart's env."""

    def __init__(self, theta: float = 0.1, sigma: float = 0.2, horizon: int = 100):
        self.theta, self.sigma, self.horizon = theta, sigma, horizon
        self.observation_space = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = sekai.Discrete(3, start=-1)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.spread, self.position, self.t = 0.0, 0, 0
        return sekai.ResetResult(self._obs(), info={})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.position = int(action)
        change = -self.theta * self.spread + self.sigma * self.rng.standard_normal()
        self.spread += change
        self.t += 1
        return sekai.StepResult(
            observation=self._obs(),
            reward=float(self.position * change),
            terminated=False,
            truncated=self.t >= self.horizon,
            info={"spread": self.spread},
        )

    def _obs(self) -> np.ndarray:
        return np.array([self.spread, self.position], dtype=np.float32)


class Drift(sekai.Env[np.ndarray, np.intp]):
    """The migration page's env."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-10.0, 10.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.x = self.rng.normal()
        return sekai.ResetResult(np.array([self.x], np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.x += (1 if action else -1) * 0.5 + self.rng.normal(0.0, 0.1)
        done = abs(self.x) > 5
        obs = np.array([np.clip(self.x, -10, 10)], np.float32)
        return sekai.StepResult(obs, -abs(self.x), done, False, {})


class AsyncNative(Good):
    """Awaits in its async methods; its sync ones use asyncio.run() (the async page's pattern)."""

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        await asyncio.sleep(0)
        return Good.reset(self, seed=seed)

    async def async_step(self, action: Any) -> Any:
        await asyncio.sleep(0)
        return Good.step(self, action)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return asyncio.run(self.async_reset(seed=seed, options=options))

    def step(self, action: Any) -> Any:
        return asyncio.run(self.async_step(action))


class AsyncNativeStep(Good):
    """Its sync step() runs its async_step() with asyncio.run(); its reset() is plain."""

    async def async_step(self, action: Any) -> Any:
        await asyncio.sleep(0)
        return Good.step(self, action)

    def step(self, action: Any) -> Any:
        return asyncio.run(self.async_step(action))


@pytest.mark.parametrize(("make", "method"), [(AsyncNative, "reset"), (AsyncNativeStep, "step")])
def test_inside_a_running_loop_an_env_that_needs_asyncio_run_is_not_blamed(
    make: type[sekai.Env[Any, Any]], method: str
) -> None:
    async def inside() -> list[str]:
        return check_env(make())

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as info:
            asyncio.run(inside())
        gc.collect()
    assert str(info.value) == (
        "check_env() was called inside a running event loop (async code, a Jupyter notebook), "
        f"where {make.__name__}'s {method}() cannot run: it runs its coroutine with "
        "asyncio.run(), which refuses to start inside a running loop. Call check_env() from "
        "sync code, or, in async code, in a worker thread: `await asyncio.to_thread("
        "sekai.check_env, env)` with a fresh env (that runs every check, the async ones too)."
    )
    assert not [w for w in caught if "never awaited" in str(w.message)]  # the coroutine closed


def test_in_a_worker_thread_of_async_code_an_env_that_needs_asyncio_run_is_checked() -> None:
    async def inside() -> list[str]:
        return await asyncio.to_thread(check_env, AsyncNative())

    assert asyncio.run(inside()) == []


def test_inside_a_running_loop_a_runtime_error_of_the_env_is_still_its_error() -> None:
    class Fails(Good):
        def step(self, action: Any) -> Any:
            raise RuntimeError("venue down")

    async def inside() -> list[str]:
        return check_env(Fails(), check_reset_seed=False)

    assert asyncio.run(inside()) == ["ERROR: step() raised RuntimeError at step 0: venue down"]


@pytest.mark.parametrize(
    "make",
    [
        Good,
        MeanReversionEnv,
        Drift,
        AsyncNative,
        lambda: sekai.RecordEpisodeStatistics(sekai.TimeLimit(Good(100), 10)),
        lambda: sekai.AutoReset(sekai.TimeLimit(Good(), 5)),
        lambda: sekai.FlattenObservation(sekai.TimeAwareObservation(sekai.TimeLimit(Good(), 50))),
        lambda: sekai.FrameStackObservation(sekai.DelayObservation(Good(), 2), 3),
        lambda: sekai.RescaleObservation(sekai.DtypeObservation(Good(), np.float64), -1.0, 1.0),
        lambda: sekai.ActionRepeat(
            sekai.StickyAction(sekai.DelayAction(Good(), 1, noop=0), 0.3), 2
        ),
        lambda: sekai.ClipReward(sekai.TransformReward(Good(), lambda r: 3 * r), -1.0, 1.0),
    ],
)
def test_correct_envs_give_no_issues(make: Any) -> None:
    assert check_env(make(), check_determinism=True) == []


@pytest.mark.parametrize("wrapper", [sekai.NormalizeObservation, sekai.NormalizeReward])
def test_running_statistics_are_frozen_for_the_seed_and_determinism_checks(wrapper: Any) -> None:
    # Before: their updates between the runs read as a reset ignoring its seed and as an env
    # to register with nondeterministic=True.
    env = wrapper(Good())
    assert check_env(env, check_determinism=True) == []
    assert env.update_running_mean is True  # switched back
    frozen = wrapper(Good())
    frozen.update_running_mean = False
    assert check_env(sekai.TimeLimit(frozen, 50), check_determinism=True) == []
    assert frozen.update_running_mean is False


@pytest.mark.parametrize(
    ("n_steps", "error", "text"),
    [
        (0, ValueError, "check_env: n_steps must be >= 1, got 0."),
        (-5, ValueError, "check_env: n_steps must be >= 1, got -5."),
        (2.9, TypeError, "check_env: n_steps must be an int, got float."),
        ("3", TypeError, "check_env: n_steps must be an int, got str."),
        (True, TypeError, "check_env: n_steps must be an int, got bool."),
    ],
)
def test_check_env_refuses_a_bad_n_steps(n_steps: Any, error: type[Exception], text: str) -> None:
    # Before: 0 and -5 took no step and reported every check passed; 2.9 and "3" were cast.
    with pytest.raises(error, match=f"^{re.escape(text)}$"):
        check_env(Good(), n_steps=n_steps)


@pytest.mark.parametrize(
    "option",
    [
        "warn_on_anomaly",
        "check_obs_space",
        "check_action_space",
        "check_reset_seed",
        "check_determinism",
        "check_async",
    ],
)
@pytest.mark.parametrize(("value", "got"), [("false", "str"), (None, "NoneType"), (1, "int")])
def test_check_env_refuses_an_option_that_is_not_a_bool(option: str, value: Any, got: str) -> None:
    # Before: "false" switched a check on, and warn_on_anomaly=None dropped every WARNING.
    text = f"check_env: {option} must be a bool, got {got}."
    with pytest.raises(TypeError, match=f"^{re.escape(text)}$"):
        check_env(Good(), **{option: value})


def test_check_env_takes_numpy_bools() -> None:
    assert check_env(Good(), check_determinism=np.bool_(True), warn_on_anomaly=np.True_) == []


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("Line-v0", r"got str 'Line-v0': pass sekai\.make\('Line-v0'\)\.$"),
        (None, r"got NoneType\.$"),
        (object(), r"got object\.$"),
        (Good, r"got the class Good\. Pass an instance: Good\(\)\.$"),
    ],
)
def test_what_is_not_an_env_is_a_type_error_not_a_list_of_made_up_issues(
    given: Any, says: str
) -> None:
    with pytest.raises(TypeError, match=r"^check_env expected a sekai\.Env, " + says):
        check_env(given)


def test_a_vec_env_is_told_to_check_one_sub_env() -> None:
    from sekai.testing.envs import LineEnv

    vec = sekai.SyncVecEnv([LineEnv, LineEnv])
    with pytest.raises(TypeError, match=r"got SyncVecEnv: check one sub-env"):
        check_env(vec)
    vec.close()


def test_the_async_check_cancels_the_tasks_the_env_started_before_closing_its_loop() -> None:
    import asyncio

    from sekai.testing.envs import LineEnv

    finalised = []

    class Feed(LineEnv):
        async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
            async def reader() -> None:
                try:
                    await asyncio.Event().wait()
                finally:
                    finalised.append(True)

            self.reader = asyncio.ensure_future(reader())  # a venue feed's reader
            return self.reset(seed=seed, options=options)

    assert check_env(Feed(), check_reset_seed=False) == []
    assert finalised  # cancelled and finalised, not "destroyed but pending"


def test_a_multi_agent_env_is_pointed_to_pettingzoos_test() -> None:
    class Duo(sekai.MultiAgentEnv):  # type: ignore[type-arg]
        def __init__(self) -> None:
            self.possible_agents = ["a", "b"]

        def reset(self, *, seed: Any = None, options: Any = None) -> Any: ...

        def step(self, actions: Any) -> Any: ...

    with pytest.raises(TypeError, match=r"it checks single-agent envs; .*parallel_api_test"):
        check_env(Duo())
