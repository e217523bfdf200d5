"""KernelVecEnv on the numpy backend: the native envs' vector semantics for any ArrayKernel."""

from __future__ import annotations

import copy
import datetime as dt
import pickle
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from sekai.error import InvalidAction, ResetRequired, VecEnvClosed
from sekai.registry.kernels import load_kernel
from sekai.registry.spec import EnvSpec
from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete
from sekai.testing.envs import Drift, DriftVecEnv
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_backend import (
    DeviceActions,
    KernelBackend,
    NumpyBackend,
    bad_action_rows,
)
from sekai.vector.kernel_check import check_kernel_vec_env
from sekai.vector.kernel_step import initial, transition
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.sync_vec_env import SyncVecEnv
from sekai.wrappers.time_limit import TimeLimit


@dataclass(frozen=True)
class CountdownParams:
    step_size: float = 1.0
    longest: int = 3  # static: episodes last 2 to 2 + longest - 1 steps


class CountdownKernel(ArrayKernel[CountdownParams]):
    """Each sub-env counts down from a random 2..4; the reward is the action; ends at 0."""

    def __init__(self, step_size: float = 1.0) -> None:
        self.observation_space = Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = Discrete(2)
        self.params = CountdownParams(step_size=step_size)

    def reset_draws(self, params: CountdownParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"),)

    def reset(
        self, xp: Any, params: CountdownParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        left = 2.0 + xp.floor(draws["u"] * params.longest)
        if state is not None:
            left = xp.where(mask, left, state["left"])
        return {"left": left}, self._observe(xp, left, xp.zeros_like(left)), {"start": left}

    @staticmethod
    def _observe(xp: Any, left: Any, action: Any) -> Any:
        return xp.stack([left, action], axis=1)

    def step(
        self, xp: Any, params: CountdownParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        left = state["left"] - params.step_size
        reward = xp.astype(action, left.dtype)
        terminated = left <= 0
        obs = self._observe(xp, left, reward)
        return {"left": left}, obs, reward, terminated, xp.zeros_like(terminated), {"left": left}


def _env(n: int = 4, **kwargs: Any) -> KernelVecEnv:
    return KernelVecEnv(CountdownKernel(), n, **kwargs)


def test_the_step_that_ends_an_episode_resets_it_and_reports_final_observation_and_infos() -> None:
    env = _env()
    start = env.reset(seed=0).observations[:, 0].copy()
    ones = np.ones(4, dtype=np.int64)
    for _ in range(int(start.min()) - 1):
        env.step(ones)
    result = env.step(ones)
    ended = int(np.flatnonzero(start == start.min())[0])
    assert result.terminated[ended]
    info = result.infos[ended]
    np.testing.assert_array_equal(info["final_observation"], [0.0, 1.0])
    assert info["final_info"] == {"left": 0.0}
    assert set(info["reset_info"]) == {"start"}
    assert result.observations[ended, 0] == info["reset_info"]["start"] >= 2.0
    assert result.observations.dtype == np.float32 and result.rewards.dtype == np.float64


def test_sub_envs_that_go_on_keep_their_step_observation_when_others_reset() -> None:
    # Countdown's observation holds the last action, which its reset puts back to 0: the
    # kernel's reset observation is not a function of the state, so only the sub-envs that
    # ended may take it.
    env = _env()
    start = env.reset(seed=0).observations[:, 0].copy()
    ones = np.ones(4, dtype=np.int64)
    for _ in range(int(start.min())):
        result = env.step(ones)
    ended = result.terminated | result.truncated
    assert ended.any() and not ended.all()
    np.testing.assert_array_equal(result.observations[~ended, 1], 1.0)
    np.testing.assert_array_equal(result.observations[ended, 1], 0.0)


def test_without_autoreset_finished_sub_envs_freeze_until_reset() -> None:
    env = _env(autoreset=False)
    env.reset(seed=1)
    ones = np.ones(4, dtype=np.int64)
    for _ in range(5):  # every episode has ended by now
        last = env.step(ones)
    assert env.frozen.all()
    frozen = env.step(ones)
    np.testing.assert_array_equal(frozen.rewards, np.zeros(4))
    np.testing.assert_array_equal(frozen.terminated, last.terminated | frozen.terminated)
    assert frozen.terminated.all()
    np.testing.assert_array_equal(frozen.observations[:, 0], np.zeros(4))
    assert frozen.infos == [{}, {}, {}, {}]
    env.reset()
    assert not env.frozen.any()


def test_the_host_check_skips_the_ignored_actions_of_frozen_sub_envs() -> None:
    env = _env(autoreset=False)
    assert env.reset(seed=3).observations[:, 0].tolist() == [2.0, 2.0, 4.0, 3.0]
    ones = np.ones(4, dtype=np.int64)
    for _ in range(2):
        env.step(ones)
    assert env.frozen.tolist() == [True, True, False, False]
    bad = np.full(4, 9)
    with pytest.raises(InvalidAction, match=r"\(sub-env 2\)") as caught:
        env.step(bad)  # the first bad action of a sub-env that is not frozen
    assert caught.value.index == 2
    while not env.frozen.all():
        env.step(ones)
    np.testing.assert_array_equal(env.step(bad).rewards, np.zeros(4))  # a native env's rule


def test_the_time_limit_truncates_and_counts_elapsed_steps() -> None:
    env = _env(max_episode_steps=1)
    env.reset(seed=2)
    result = env.step(np.zeros(4, dtype=np.int64))
    assert result.truncated.all() and not result.terminated.any()
    assert [info["elapsed_steps"] for info in result.infos] == [1, 1, 1, 1]
    assert result.infos[0]["final_info"]["elapsed_steps"] == 1


def test_set_attr_of_a_space_changes_the_sub_envs_attribute_as_on_a_native_env() -> None:
    env = _env(2)
    env.reset(seed=0)
    env.set_attr("action_space", Discrete(5))
    assert env.get_attr("action_space") == env.call("action_space") == [Discrete(5)] * 2
    assert env.action_space == Discrete(2) and env.batch_action_space == MultiDiscrete([2, 2])
    message = "Action 4 is not valid for space Discrete(2) (sub-env 0)."
    with pytest.raises(InvalidAction, match=f"^{re.escape(message)}$"):
        env.step(np.array([4, 4]))
    with pytest.raises(TypeError, match=r"action_space must be a sekai\.Space, got int"):
        env.set_attr("action_space", 5)


def test_set_attr_of_one_generator_per_sub_env_says_the_env_has_one() -> None:
    env = _env(2)
    with pytest.raises(TypeError, match=r"got a list of 2: a kernel mode's env, like a native"):
        env.set_attr("rng", np.random.default_rng(0).spawn(2))
    generator = np.random.default_rng(1)
    env.set_attr("rng", generator)
    assert env.rng is generator


def test_without_a_time_limit_max_episode_steps_is_missing_as_on_the_other_backends() -> None:
    env = _env(2)
    with pytest.raises(AttributeError, match="'KernelVecEnv' object has no attribute 'max_"):
        env.get_attr("max_episode_steps")
    with pytest.raises(AttributeError, match="set_attr cannot add one"):
        env.set_attr("max_episode_steps", 1)
    env.reset(seed=0)
    assert not env.step(np.zeros(2, dtype=np.int64)).truncated.any()  # none was added
    limited = _env(2, max_episode_steps=5)
    assert limited.get_attr("max_episode_steps") == [5, 5]
    with pytest.raises(TypeError, match=r"got None: a time limit can be changed but not removed"):
        limited.set_attr("max_episode_steps", None)
    limited.set_attr("max_episode_steps", 1)  # an existing limit changes, as on native
    limited.reset(seed=0)
    assert limited.step(np.zeros(2, dtype=np.int64)).truncated.all()


@pytest.mark.parametrize("limit", [2**31, 2**40, sys.maxsize])
def test_a_time_limit_beyond_the_int32_step_counter_is_refused_when_built_and_set(
    limit: int,
) -> None:
    message = (
        rf"^max_episode_steps={limit} exceeds 2\*\*31 - 1 = 2147483647: "
        r"vectorization_mode='numpy' counts each episode's steps in int32\. Keep "
        r"max_episode_steps <= 2147483647, or use vectorization_mode='native' or 'sync'"
    )
    with pytest.raises(ValueError, match=message):
        _env(2, max_episode_steps=limit)
    env = _env(2, max_episode_steps=2**31 - 1)  # the largest the counter holds
    with pytest.raises(ValueError, match=message):
        env.set_attr("max_episode_steps", limit)
    with pytest.raises(ValueError, match=message):
        env.set_attr("max_episode_steps", [limit, limit])
    assert env.get_attr("max_episode_steps") == [2**31 - 1] * 2
    env.reset(seed=0)
    assert not env.step(np.zeros(2, dtype=np.int64)).truncated.any()


@pytest.mark.parametrize("values", [[1], [1, 1, 1]], ids=len)
def test_a_time_limit_list_of_another_length_names_both_lengths_as_native_envs_do(
    values: list[int],
) -> None:
    env = _env(2, max_episode_steps=5)
    with pytest.raises(
        ValueError, match=rf"^KernelVecEnv\.max_episode_steps: a list must hold one value per "
        rf"sub-env \(2\), got {len(values)}\. Pass one int \(not a list\) to set it for every "
        r"sub-env\.$"
    ):  # fmt: skip
        env.set_attr("max_episode_steps", values)
    assert env.get_attr("max_episode_steps") == [5, 5]


_LIMITED: dict[str, Any] = {
    "native": lambda: DriftVecEnv(2, max_episode_steps=5),
    "sync": lambda: SyncVecEnv([lambda: TimeLimit(Drift(), 5)] * 2),
    "kernel": lambda: _env(2, max_episode_steps=5),
}


@pytest.mark.parametrize("backend", list(_LIMITED))
@pytest.mark.parametrize("length", [1, 2, 3])
def test_a_time_limit_array_is_one_value_for_all_and_not_an_int_on_every_backend(
    backend: str, length: int
) -> None:
    vec = _LIMITED[backend]()  # core.md §14 rule 6: only a list is per sub-env
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int.*, got ndarray\.$"):
        vec.set_attr("max_episode_steps", np.full(length, 3))
    assert vec.get_attr("max_episode_steps") == [5, 5]


@pytest.mark.parametrize("backend", list(_LIMITED))
def test_a_time_limit_list_of_one_limit_in_two_int_types_is_that_limit_on_every_backend(
    backend: str,
) -> None:
    vec = _LIMITED[backend]()
    vec.set_attr("max_episode_steps", [np.int64(3), 3])  # one read back, one typed in
    assert vec.get_attr("max_episode_steps") == [3, 3]


def test_the_same_seed_gives_the_same_episodes_and_another_seed_others() -> None:
    def starts(seed: int) -> list[float]:
        env = _env(8)
        first = env.reset(seed=seed).observations[:, 0].tolist()
        ones = np.ones(8, dtype=np.int64)
        return first + [env.step(ones).observations[:, 0].tolist() for _ in range(6)][-1]

    assert starts(5) == starts(5)
    assert starts(5) != starts(6)


def test_trackers_are_told_each_entry_of_a_seed_list_as_on_the_other_backends() -> None:
    from sekai.vector.wrappers import VecRecordEpisodeStatistics

    class Seeds:
        def __init__(self) -> None:
            self.seeds: list[Any] = []

        def on_reset(self, env_id: Any, seed: Any) -> None:
            self.seeds.append(seed)

        def on_step(self, reward: Any, terminated: Any, truncated: Any, info: Any) -> None: ...

        def on_episode_end(self, stats: Any) -> None: ...

        def summary(self) -> dict[str, Any]:
            return {}

    tracker = Seeds()
    vec = VecRecordEpisodeStatistics(_env(2), tracker=tracker)
    vec.reset(seed=[None, 9])
    vec.reset(seed=5)
    assert tracker.seeds == [None, 9, 5, 5]


def test_reset_options_are_refused_with_the_modes_that_take_them() -> None:
    env = _env()
    env.reset(options={})  # an empty dict asks for nothing
    per_env = r"takes no reset options.*; use vectorization_mode='sync', 'async' or 'proc' for"
    with pytest.raises(ValueError, match=per_env):
        env.reset(options={"low": 0.0})
    env.spec = EnvSpec("Countdown-v0", entry_point="a.b:C", kernel_entry_point=CountdownKernel)
    with pytest.raises(ValueError, match=per_env) as caught:  # no native mode to advise
        env.reset(options={"low": 0.0})
    assert "native" not in str(caught.value)
    env.spec = EnvSpec(
        "Countdown-v0", entry_point="a.b:C", vector_entry_point="a.b:V", kernel_entry_point="a:K"
    )
    with pytest.raises(ValueError, match=r"takes no reset options.*'native' or 'sync' for"):
        env.reset(options={"low": 0.0})


def test_invalid_actions_name_the_sub_env_unless_checks_are_off() -> None:
    env = _env()
    env.reset(seed=0)
    with pytest.raises(InvalidAction) as caught:
        env.step(np.array([0, 1, 2, 0]))
    assert caught.value.index == 2
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    unchecked = _env(check_actions=False)
    unchecked.reset(seed=0)
    unchecked.step(np.array([0, 1, 2, 0]))


@pytest.mark.parametrize("dtype", [np.bool_, np.complex128])
def test_without_checks_a_dtype_holding_no_index_is_still_refused(dtype: type) -> None:
    # Only the value check (a device sync) is skipped: the dtype is known on the host.
    unchecked = _env(check_actions=False)
    unchecked.reset(seed=0)
    with pytest.raises(
        TypeError, match=rf"^actions of Discrete\(2\) cannot be of dtype {np.dtype(dtype)}; "
        r"pass integers \(or integral floats\) for indices, numbers for a Box\.$"
    ):  # fmt: skip
        unchecked.step(np.array([1, 0, 1, 0], dtype=dtype))


def test_step_before_reset_and_after_close_raise() -> None:
    env = _env()
    with pytest.raises(ResetRequired):
        env.step(np.zeros(4, dtype=np.int64))
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(VecEnvClosed):
        env.step(np.zeros(4, dtype=np.int64))


class _Waiting(NumpyBackend):
    """Records what ``synchronize`` is asked to wait for."""

    def __init__(self) -> None:
        super().__init__()
        self.waited: list[Any] = []

    def synchronize(self, values: Any) -> None:
        self.waited.append(values)


def test_synchronize_waits_for_the_state_and_the_last_step_on_the_backend() -> None:
    backend = _Waiting()
    env = KernelVecEnv(CountdownKernel(), 4, backend=backend)
    env.reset(seed=0)
    env.synchronize()
    carry, last = backend.waited[-1]
    assert carry is env._carry and last is None
    env.step(np.zeros(4, dtype=np.int64))
    env.synchronize()
    carry, last = backend.waited[-1]
    assert carry is env._carry and last is env.last_transition is not None
    NumpyBackend().synchronize(env._carry)  # numpy's arrays are there: nothing to wait for
    env.close()
    with pytest.raises(VecEnvClosed):
        env.synchronize()


def test_parameters_are_read_and_changed_for_every_sub_env() -> None:
    env = _env()
    assert env.get_attr("step_size") == [1.0] * 4
    env.call("set_attr", name="step_size", values=1.5)  # a keyword called name reaches it
    assert env.params.step_size == 1.5
    env.set_attr("step_size", 2.0)
    first = env.reset(seed=0).observations[:, 0]
    after = env.step(np.zeros(4, dtype=np.int64))
    np.testing.assert_array_equal(
        np.where(after.dones, first - 2.0, after.observations[:, 0]), first - 2.0
    )
    env.set_attr("step_size", [3.0] * 4)
    assert env.params.step_size == 3.0
    with pytest.raises(ValueError, match="shared by every sub-env"):
        env.set_attr("step_size", [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match="same kind"):
        env.set_attr("step_size", "fast")
    with pytest.raises(AttributeError, match="parameters are"):
        env.set_attr("no_such_name", 1)


def test_an_int_too_large_for_a_float64_is_refused_naming_the_parameter() -> None:
    env = _env()
    with pytest.raises(
        ValueError,
        match=r"^kernel parameter 'step_size' must be a finite number, got an int too large "
        r"for a float64\.$",
    ):
        env.set_attr("step_size", 10**400)
    assert env.params.step_size == 1.0


@pytest.mark.parametrize(
    "value",
    [
        np.complex128(2 + 1j),  # would lose its imaginary part
        np.array(True),  # would be 1.0, where a bool is refused everywhere else
        np.array("2.0"),  # would be stored, and the next step fail in NumPy
        np.datetime64("2020-01-01"),
        np.array(np.timedelta64(2, "D")),
    ],
    ids=repr,
)
def test_set_attr_refuses_an_array_of_no_real_numbers_for_a_float_parameter(value: Any) -> None:
    env = _env()  # CountdownKernel's params check nothing themselves
    with pytest.raises(
        TypeError, match=r"^kernel parameter 'step_size' is 1\.0; a new value must be of the same"
    ):
        env.set_attr("step_size", value)
    assert env.params.step_size == 1.0 and env.get_attr("step_size") == [1.0] * 4
    env.reset(seed=0)
    env.step(np.zeros(4, dtype=np.int64))  # the env still runs


@pytest.mark.parametrize(
    "value",
    [
        Decimal("2.5"),
        np.array(Decimal("2.5"), dtype=object),
        np.array(Fraction(5, 2), dtype=object),
    ],
    ids=repr,
)
def test_set_attr_takes_decimals_and_fractions_as_floats_as_converted_params_does(
    value: Any,
) -> None:
    env = _env()  # an object array was stored as is: get_attr gave Decimals, step() failed
    env.set_attr("step_size", value)
    assert type(env.params.step_size) is float and env.get_attr("step_size") == [2.5] * 4
    env.reset(seed=0)
    env.step(np.zeros(4, dtype=np.int64))


@pytest.mark.parametrize(
    "value",
    [np.array(Decimal("1e400"), dtype=object), np.array(dt.date(2020, 1, 1), dtype=object)],
    ids=repr,
)
def test_set_attr_refuses_an_object_array_no_float64_holds_and_keeps_the_value(
    value: Any,
) -> None:
    env = _env()  # it was stored, then set_attr failed with an AttributeError
    with pytest.raises((ValueError, TypeError), match=r"^kernel parameter 'step_size'"):
        env.set_attr("step_size", value)
    assert env.params.step_size == 1.0 and env.get_attr("step_size") == [1.0] * 4
    env.reset(seed=0)
    env.step(np.zeros(4, dtype=np.int64))


def test_a_number_parameter_held_as_a_0d_array_reads_back_as_a_number() -> None:
    env = KernelVecEnv(CountdownKernel(step_size=np.asarray(2.0)), 2)  # type: ignore[arg-type]
    assert env.get_attr("step_size") == [2.0, 2.0]
    assert type(env.get_attr("step_size")[0]) is float
    env.set_attr("step_size", np.asarray(3.0))  # a 0-d array: the number it holds
    assert env.get_attr("step_size") == [3.0, 3.0] and type(env.get_attr("step_size")[0]) is float


@pytest.mark.parametrize("value", [3, Decimal("2.5"), Fraction(5, 2), np.float32(1.5)], ids=repr)
def test_get_attr_reports_a_number_set_attr_was_given_as_given(value: Any) -> None:
    env = _env(2)  # as native and sync envs report it; the kernel runs its float
    env.set_attr("step_size", value)
    reported = env.get_attr("step_size")
    assert reported == [value, value] and all(type(r) is type(value) for r in reported)
    env.reset(seed=0)
    env.step(np.zeros(2, dtype=np.int64))  # the kernel runs it


def test_repr_names_the_kernel_the_size_and_the_backend() -> None:
    assert repr(_env()) == "KernelVecEnv(CountdownKernel, num_envs=4, backend=numpy, float64)"


def test_the_pure_transition_leaves_its_inputs_unchanged() -> None:
    kernel = CountdownKernel()
    first = initial(kernel, np, kernel.params, {"u": np.full(2, 0.1)}, 2)
    before = first.state["state"]["left"].copy()
    out = transition(
        kernel, np, kernel.params, first.state, np.ones(2, int), {}, {"u": np.full(2, 0.9)}
    )
    np.testing.assert_array_equal(first.state["state"]["left"], before)
    np.testing.assert_array_equal(out.observation[:, 0], [1.0, 1.0])


def test_a_spec_names_its_kernel_in_json_and_pprint() -> None:
    spec = EnvSpec("Countdown-v0", entry_point="a.b:C", kernel_entry_point="pack.kernels:X")
    assert EnvSpec.from_json(spec.to_json()).kernel_entry_point == "pack.kernels:X"
    assert "kernel_entry_point=pack.kernels:X" in spec.pprint()
    with pytest.raises(ValueError, match="kernel_entry_point"):
        EnvSpec("Countdown-v0", entry_point="a.b:C", kernel_entry_point="no colon")


def test_a_spec_without_kernel_is_refused_by_the_kernel_modes() -> None:
    spec = EnvSpec("Countdown-v0", entry_point="a.b:C")
    with pytest.raises(ValueError, match=r"no array kernel \(kernel_entry_point\)"):
        load_kernel(spec, {})
    # The modes it names are the ones this ID has: 'native' only with a native vector env.
    with pytest.raises(ValueError, match=r"need; use 'sync', 'async' or 'proc'\.$"):
        load_kernel(spec, {})
    native = EnvSpec("Countdown-v0", entry_point="a.b:C", vector_entry_point="a.b:V")
    with pytest.raises(ValueError, match=r"need; use 'native', 'sync', 'async' or 'proc'\.$"):
        load_kernel(native, {})
    made = load_kernel(EnvSpec("C-v0", entry_point="a:C", kernel_entry_point=CountdownKernel), {})
    assert isinstance(made, CountdownKernel)


def test_the_kernel_contract_checks_pass_a_conforming_kernel() -> None:
    assert check_kernel_vec_env(lambda: _env(4), n_steps=30) == []


class _Unseeded(CountdownKernel):
    """Draws its reset noise from numpy's global state, not from the driver."""

    def reset(
        self, xp: Any, params: CountdownParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        return super().reset(xp, params, {"u": np.random.random(mask.shape)}, mask, state)


class _RewrittenStep(CountdownKernel):
    """Countdown whose step results go through :meth:`rewrite` (a broken kernel to report)."""

    def rewrite(self, xp: Any, result: KernelStep) -> KernelStep:
        return result

    def step(
        self, xp: Any, params: CountdownParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        return self.rewrite(xp, super().step(xp, params, state, action, draws))


class _WideRewards(_RewrittenStep):
    def rewrite(self, xp: Any, result: KernelStep) -> KernelStep:
        new, obs, reward, terminated, truncated, info = result
        return new, obs, xp.stack([reward, reward], axis=1), terminated, truncated, info


def test_the_kernel_contract_checks_report_nondeterminism_and_bad_shapes() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_Unseeded(), 4), n_steps=30)
    # The first step where the rollouts differ is random (4 starts among 3 values can agree).
    assert len(issues) == 1
    assert re.fullmatch(
        r"ERROR: two rollouts with seed 0 and the same actions differ at step \d+: the mode is "
        r"not deterministic\.",
        issues[0],
    )
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_WideRewards(), 4), n_steps=5)
    # the driver refuses it at the first step, in the check's words
    assert issues[0].startswith(
        "ERROR: step 0 raised ValueError: _WideRewards.step returned what no driver can run: "
        "rewards has shape (4, 2), expected (4,) ("
    )


class _RaisesAtStep(CountdownKernel):
    def step(
        self, xp: Any, params: CountdownParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        raise RuntimeError("boom in step")


class _RaisesAtReset(CountdownKernel):
    def reset(
        self, xp: Any, params: CountdownParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        raise RuntimeError("boom in reset")


class _OutOfBounds(_RewrittenStep):
    def rewrite(self, xp: Any, result: KernelStep) -> KernelStep:
        new, obs, reward, terminated, truncated, info = result
        return new, obs * 100.0, reward, terminated, truncated, info


def test_the_kernel_contract_checks_report_a_step_observation_outside_the_space() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_OutOfBounds(), 4), n_steps=5)
    assert issues[0].startswith("ERROR: step 0: sub-env ")
    assert issues[0].endswith("'s observation is outside the observation space.")


def test_the_kernel_contract_checks_report_a_kernel_that_raises_as_an_error() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_RaisesAtStep(), 4), n_steps=5)
    assert issues == ["ERROR: step 0 raised RuntimeError: boom in step"]
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_RaisesAtReset(), 4), n_steps=5)
    assert issues == ["ERROR: reset(seed=0) raised RuntimeError: boom in reset"]


@pytest.mark.parametrize(
    ("space", "actions", "bad"),
    [
        (Discrete(3), [0.0, 2.0, 1.5, np.nan], [False, False, True, True]),
        (Discrete(3), [True, False], [True, True]),
        (MultiDiscrete([3, 2]), [[0.0, 1.0], [2.0, 0.5], [np.nan, 0.0]], [False, True, True]),
        (MultiDiscrete([3, 2]), [[True, False]], [True]),
        (Discrete(3), [0j, 1 + 0j], [True, True]),  # complex: as the host check rules
        (Box(0.0, 1.0, shape=(1,)), [[0.5 + 0j]], [True]),
        (MultiBinary(2), [[0j, 1 + 0j]], [True]),
    ],
)
def test_device_checks_refuse_fractional_nan_and_bool_indices(
    space: Any, actions: Any, bad: list[bool]
) -> None:
    backend = NumpyBackend()
    rows = bad_action_rows(backend.xp, space, backend.xp.asarray(np.array(actions)))
    assert rows is not None and np.asarray(rows).tolist() == bad


def test_device_batches_of_indices_become_the_spaces_integers() -> None:
    backend = NumpyBackend()
    prepare = DeviceActions(backend, Discrete(3), 2).prepare
    for batch in (np.array([0.0, 2.0]), np.array([0, 2], dtype=np.uint8)):
        cast = prepare(batch, None, True)
        assert cast.dtype == np.int64 and cast.tolist() == [0, 2]
    boxed = np.array([[0.5]])
    assert DeviceActions(backend, Box(0.0, 1.0, shape=(1,)), 1).prepare(boxed, None, True) is boxed


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_box_bools_become_the_drivers_floats_1_and_0(check: bool, dtype: type) -> None:
    # As the host check hands them to envs (bools_as_floats), in the driver's float dtype.
    backend = NumpyBackend(dtype)
    space = Box(0.0, 1.0, shape=(2,))
    bools = np.array([[True, False], [False, True]])
    assert bad_action_rows(backend.xp, space, bools) is None
    cast = DeviceActions(backend, space, 2).prepare(bools, np.array([False, True]), check)
    assert cast.dtype == dtype and cast.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    binary = DeviceActions(backend, MultiBinary(2), 2).prepare(bools, None, check)
    assert binary.dtype == np.bool_  # a MultiBinary's values, as they are


@pytest.mark.parametrize("check", [True, False])
def test_the_ignored_actions_of_frozen_sub_envs_become_valid_before_the_kernel(
    check: bool,
) -> None:
    backend = NumpyBackend()
    frozen = np.array([True, False, True])
    discrete = DeviceActions(backend, Discrete(3, start=-1), 3).prepare
    assert discrete(np.array([7.0, 1.0, np.nan]), frozen, check).tolist() == [-1, 1, -1]
    binary = DeviceActions(backend, MultiBinary(2), 3).prepare
    assert binary(np.array([[5, 5], [1, 0], [-1, 2]]), frozen, check).tolist() == [
        [0, 0],
        [1, 0],
        [0, 0],
    ]
    boxed = np.array([[np.nan], [0.5], [np.inf]])  # any float converts: left as it is
    box = DeviceActions(backend, Box(0.0, 1.0, shape=(1,)), 3).prepare
    np.testing.assert_array_equal(box(boxed, frozen, check), boxed)
    with pytest.raises(InvalidAction, match=r"\(sub-env 1\)"):
        discrete(np.array([7.0, 5.0, np.nan]), frozen, True)


def test_check_actions_is_a_bool() -> None:
    with pytest.raises(TypeError, match=r"^check_actions must be a bool, got str\.$"):
        _env(check_actions="no")


def test_a_generator_assigned_to_rng_is_the_one_the_next_reset_draws_from() -> None:
    def first_reset(generator_seed: int) -> Any:
        vec = KernelVecEnv(CountdownKernel(), 4)
        vec.rng = np.random.default_rng(generator_seed)  # before any reset
        return vec.reset().observations

    np.testing.assert_array_equal(first_reset(5), first_reset(5))
    vec = KernelVecEnv(CountdownKernel(), 4)
    vec.reset(seed=0)
    unseeded = vec.reset().observations
    vec.reset(seed=0)
    vec.rng = np.random.default_rng(5)
    assigned = vec.reset().observations
    np.testing.assert_array_equal(assigned, first_reset(5))
    assert not np.array_equal(assigned, unseeded)


def test_a_reset_refused_for_its_options_draws_nothing_from_the_generator() -> None:
    vec = KernelVecEnv(CountdownKernel(), 2)
    vec.reset(seed=0)
    before = vec.rng.bit_generator.state
    with pytest.raises(ValueError, match="takes no reset options"):
        vec.reset(seed=[None, 1], options={"start": 1})
    assert vec.rng.bit_generator.state == before


def _pickled(vec: KernelVecEnv) -> KernelVecEnv:
    return pickle.loads(pickle.dumps(vec))  # type: ignore[no-any-return]


@pytest.mark.parametrize("duplicate", [copy.deepcopy, _pickled], ids=["copy", "pickle"])
def test_a_numpy_kernel_env_is_copied_and_pickled_with_its_state_and_generator(
    duplicate: Any,
) -> None:
    vec = KernelVecEnv(CountdownKernel(step_size=0.5), 3, autoreset=False, max_episode_steps=7)
    vec.reset(seed=3)
    vec.step(np.array([1, 0, 1]))
    twin = duplicate(vec)
    assert twin.backend.xp is np and twin.backend.rng is twin.rng is not vec.rng
    assert (twin.autoreset, twin.max_episode_steps, twin.params) == (False, 7, vec.params)
    for _ in range(6):  # both step on from the same state and draw the same noise
        actions = np.array([1, 1, 0])
        mine, theirs = vec.step(actions), twin.step(actions)
        np.testing.assert_array_equal(mine.observations, theirs.observations)
        np.testing.assert_array_equal(mine.terminated, theirs.terminated)
        np.testing.assert_array_equal(vec.frozen, twin.frozen)
    np.testing.assert_array_equal(vec.reset().observations, twin.reset().observations)
    vec.close()
    assert not twin.closed and duplicate(vec).closed
    twin.step(np.array([0, 0, 0]))  # steps itself, not the closed original


def test_a_shallow_copy_of_a_numpy_kernel_env_shares_its_backend() -> None:
    vec = KernelVecEnv(CountdownKernel(), 2)
    vec.reset(seed=0)
    twin = copy.copy(vec)
    assert twin.backend is vec.backend and twin.step(np.array([1, 0])).observations.shape[0] == 2


class _DeviceBackend(NumpyBackend):
    """Stands for a device backend (JAX, torch), which does not say how to rebuild itself."""

    name = "device"
    __getstate__ = KernelBackend.__getstate__  # type: ignore[assignment]


@pytest.mark.parametrize(
    "duplicate", [copy.deepcopy, pickle.dumps, copy.copy], ids=["deepcopy", "pickle", "copy"]
)
def test_a_kernel_env_on_another_backend_says_it_cannot_be_copied(duplicate: Any) -> None:
    # copy.copy too: it kept the backend by reference, so the copy shared its generator.
    vec = KernelVecEnv(CountdownKernel(), 2, backend=_DeviceBackend())
    message = (
        "A KernelVecEnv on the device backend (_DeviceBackend) cannot be copied or pickled: "
        "the backend holds the array library and its device state. Make another env instead"
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        duplicate(vec)


@dataclass(frozen=True)
class _Fields:
    rate: float = 0.1
    per_asset: np.ndarray = field(default_factory=lambda: np.zeros(2))
    matrix: np.ndarray = field(default_factory=lambda: np.eye(2))


@dataclass(frozen=True)
class _CheckedFields:
    rate: float = 0.1
    floor: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.rate, (int, float, np.floating)) or isinstance(self.rate, bool):
            raise ValueError(f"rate must be a number, got {self.rate!r}.")
        if not isinstance(self.floor, (int, float, np.floating)):  # the env's argument's name
            raise ValueError(f"minimum_rate must be a number, got {self.floor!r}.")


def test_converted_params_refuse_what_is_no_number_with_the_dataclass_error() -> None:
    from sekai.vector.kernel_vec_env import converted_params, replaced_params

    params = _CheckedFields()
    for bad in ("0.1", None, True):
        with pytest.raises(ValueError, match=r"^rate must be a number, got") as next_to_traced:
            converted_params(params, {"rate": bad}, "here: ")
        with pytest.raises(ValueError) as eager:
            replaced_params(params, {"rate": bad}, "here: ")
        assert str(next_to_traced.value) == str(eager.value)


def test_converted_params_name_the_field_given_not_one_the_dataclass_blames() -> None:
    from sekai.vector.kernel_vec_env import converted_params

    params = _CheckedFields()
    # numbers of another shape: the field's kind and shape (the dataclass could derive
    # another field's expected shape from them, and name that field)
    with pytest.raises(TypeError, match=r"^here: kernel parameter 'rate' is 0\.1; .* got \[0\.1\]"):
        converted_params(params, {"rate": [0.1]}, "here: ")


@pytest.mark.parametrize(
    "bad", ["low", None, [0.1, True], dt.date(2020, 1, 1), [dt.date(2020, 1, 1)]], ids=repr
)
def test_converted_params_give_the_eager_error_naming_the_envs_argument(bad: Any) -> None:
    from sekai.vector.kernel_vec_env import converted_params, replaced_params

    # MarketMaking-v0's A is the env's fill_intensity: its error was the kind-and-shape one
    # (a date, no number NumPy knows, became the kind-and-shape one too, and so did a list of
    # dates, of another shape than the field's)
    with pytest.raises(ValueError, match=r"^minimum_rate must be a number, got") as eager:
        replaced_params(_CheckedFields(), {"floor": bad})
    with pytest.raises(ValueError) as next_to_traced:
        converted_params(_CheckedFields(), {"floor": bad})
    assert str(next_to_traced.value) == str(eager.value)


@pytest.mark.parametrize("flag", [True, np.False_, np.array(True)], ids=repr)
def test_converted_params_refuse_a_bool_in_a_list_as_set_attr_does(flag: Any) -> None:
    from sekai.vector.kernel_vec_env import converted_params, replaced_params

    # NumPy makes [True, 0.1] floats: it was taken as [1.0, 0.1]
    for convert in (converted_params, replaced_params):
        with pytest.raises(TypeError, match=r"^kernel parameter 'per_asset' is .* same kind"):
            convert(_Fields(), {"per_asset": [flag, 0.1]})


def test_converted_params_convert_as_set_attr_and_check_kind_and_shape_only() -> None:
    from fractions import Fraction

    from sekai.vector.kernel_vec_env import converted_params

    params = _Fields()
    out = converted_params(params, {"rate": 2, "per_asset": 0.5, "matrix": [[1, 0], [0, 1]]})
    assert out["rate"] == 2.0 and type(out["rate"]) is np.float64
    assert out["per_asset"].tolist() == [0.5, 0.5]  # one number for every asset
    assert out["matrix"].dtype == np.float64 and out["matrix"].tolist() == [[1, 0], [0, 1]]
    assert converted_params(params, {"rate": Fraction(1, 4)})["rate"] == 0.25
    assert converted_params(params, {"rate": 2**70})["rate"] == float(2**70)
    from decimal import Decimal

    mixed = [Fraction(1, 4), np.array(0.5)]
    assert converted_params(params, {"per_asset": mixed})["per_asset"].tolist() == [0.25, 0.5]
    assert converted_params(params, {"rate": Decimal("0.5")})["rate"] == 0.5
    dated = np.array(np.timedelta64(1), dtype=object)  # a cast would take it as 1.0
    with pytest.raises(TypeError, match="same kind and shape"):
        converted_params(params, {"rate": dated})
    for item in (np.array(np.timedelta64(2, "D")), np.array(np.datetime64("2020-01-01"))):
        with pytest.raises(TypeError, match="same kind and shape"):  # a 0-d array in a list
            converted_params(params, {"per_asset": [0.1, item]})  # is read by its dtype
    with pytest.raises(
        ValueError,
        match=r"^kernel parameter 'per_asset' must be a finite number, got Decimal\('1E\+400'\), "
        r"too large for a float64\.$",
    ):
        converted_params(params, {"per_asset": [0.1, Decimal("1e400")]})
    assert np.isnan(converted_params(params, {"rate": Decimal("sNaN")})["rate"])
    for bad in (
        {"matrix": 0.5},
        {"rate": None},
        {"rate": "0.1"},
        {"rate": True},
        {"per_asset": [1.0]},
    ):
        with pytest.raises(TypeError, match=r"(?s)^here: kernel parameter .* same kind and shape"):
            converted_params(params, bad, "here: ")
    with pytest.raises(
        ValueError,
        match=r"^kernel parameter 'rate' must be a finite number, got an int too large for a "
        r"float64\.$",
    ):
        converted_params(params, {"rate": 10**400})
