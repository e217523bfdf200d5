"""What the numpy driver and the checks tell the author of a kernel that breaks its rules: in-place
updates, outputs of other shapes, structures or dtypes than its spaces and state, params that are
no dataclass or name no field, and a hard-coded float dtype."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pytest

from sekai.spaces import Box, Dict, Tuple
from sekai.testing.kernels import WalkKernel, WalkParams, kernel_trajectory
from sekai.vector.kernel import KernelReset, KernelStep
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_check import check_kernel_vec_env
from sekai.vector.kernel_vec_env import KernelVecEnv

# -- in-place updates --------------------------------------------------------------------------


class _InPlaceStep(WalkKernel):
    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"]
        x += xp.where(action == 1, params.step_size, -params.step_size)
        terminated = xp.abs(x) >= params.goal
        reward = xp.where(terminated, xp.ones_like(x), xp.zeros_like(x))
        return {"x": x}, x[:, None], reward, terminated, xp.zeros_like(terminated), {}


class _InPlaceReset(WalkKernel):
    def reset(
        self, xp: Any, params: WalkParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = 2.0 * draws["start"] - 1.0
        if state is not None:
            old = state["x"]
            old[mask] = x[mask]
            x = old
        return {"x": x}, x[:, None], {}


class _InPlaceDraws(WalkKernel):
    def reset(
        self, xp: Any, params: WalkParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        start = draws["start"]
        start *= 2.0
        return super().reset(xp, params, draws, mask, state)


_IN_PLACE = r"wrote into an array it was given .*: kernels make no in-place updates"


@pytest.mark.parametrize(
    ("kernel", "call"),
    [(_InPlaceStep, "step"), (_InPlaceReset, "reset"), (_InPlaceDraws, "reset")],
)
def test_the_numpy_driver_refuses_an_in_place_update_naming_the_rule(
    kernel: type[WalkKernel], call: str
) -> None:
    # Before, the kernel ran: its observations, held by the user, changed at the next step.
    envs = KernelVecEnv(kernel(), 4, max_episode_steps=50)
    with pytest.raises(ValueError, match=rf"^{kernel.__name__}\.{call} {_IN_PLACE}") as error:
        envs.reset(seed=0)
        for _ in range(20):
            envs.step(np.ones(4, np.int64))
    # NumPy's own error, raised at the kernel's line, is the cause
    assert "read-only" in str(error.value.__cause__)


def test_the_checks_and_the_reference_trajectory_report_an_in_place_update() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_InPlaceReset(), 4), n_steps=30)
    assert len(issues) == 1
    assert issues[0].startswith("ERROR: step ")
    assert "_InPlaceReset.reset wrote into an array it was given" in issues[0]
    with pytest.raises(ValueError, match=rf"^_InPlaceStep\.step {_IN_PLACE}"):
        kernel_trajectory(_InPlaceStep(), "numpy", steps=3)


def test_the_caller_s_actions_stay_writable_and_the_kernel_gets_them_read_only() -> None:
    seen: list[bool] = []

    class Spy(WalkKernel):
        def step(
            self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any
        ) -> KernelStep:
            seen.append(action.flags.writeable)
            return super().step(xp, params, state, action, draws)

    envs = KernelVecEnv(Spy(), 2)
    envs.reset(seed=0)
    actions = np.ones(2, np.int64)
    envs.step(actions)
    assert seen == [False]
    assert actions.flags.writeable


class _Float64WalkKernel(WalkKernel):
    """Observes ``x[:, None]`` in the state's float64: no cast copies it."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = Box(-10.0, 10.0, (1,), np.float64)


def test_observations_handed_out_share_no_memory_with_the_state() -> None:
    # Before, an observation needing no cast was the kernel's view of its state.
    envs = KernelVecEnv(_Float64WalkKernel(), 3)
    first = envs.reset(seed=0).observations
    assert not np.shares_memory(first, envs.state["x"])
    out = envs.step(np.ones(3, np.int64))
    assert not np.shares_memory(out.observations, envs.state["x"])
    held = out.observations.copy()
    out.observations[:] = 9.0  # the user's own array: the env's state is not changed
    np.testing.assert_array_equal(envs.state["x"][:, None], held)


# -- outputs of other shapes, structures or dtypes ------------------------------------------------


class _FlatObs(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs[:, 0], reward, terminated, truncated, info


class _FlatResetObs(WalkKernel):
    def reset(self, xp: Any, params: WalkParams, draws: Any, mask: Any, state: Any) -> KernelReset:
        new, obs, info = super().reset(xp, params, draws, mask, state)
        return new, obs[:, 0], info


class _ExtraKey(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, *rest = super().step(xp, params, state, action, draws)
        return ({**new, "n": new["x"] * 0.0}, *rest)


class _WideState(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, *rest = super().step(xp, params, state, action, draws)
        return ({"x": new["x"][:, None]}, *rest)


class _FloatTerminated(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, reward, xp.astype(terminated, reward.dtype), truncated, info


class _ScalarTruncated(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, reward, terminated, xp.any(truncated), info


class _RewardColumn(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, reward[:, None], terminated, truncated, info


class _DictObs(WalkKernel):
    """Its space has keys 'x' and 'v'; its step forgets 'v'."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = Dict({"x": Box(-10.0, 10.0, (1,)), "v": Box(-1.0, 1.0, (1,))})

    def reset(self, xp: Any, params: WalkParams, draws: Any, mask: Any, state: Any) -> KernelReset:
        new, obs, info = super().reset(xp, params, draws, mask, state)
        return new, {"x": obs, "v": obs * 0.0}, info

    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, {"x": obs}, reward, terminated, truncated, info


class _FloatTruncated(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, reward, terminated, xp.astype(truncated, reward.dtype), info


class _DictObsExtraKey(_DictObs):
    """Its step adds a key its space does not have."""

    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = WalkKernel.step(
            self, xp, params, state, action, draws
        )
        return new, {"x": obs, "v": obs * 0.0, "w": obs}, reward, terminated, truncated, info


class _TupleObs(WalkKernel):
    """Its space is a tuple of two; its step returns one part."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = Tuple((Box(-10.0, 10.0, (1,)), Box(-1.0, 1.0, (1,))))

    def reset(self, xp: Any, params: WalkParams, draws: Any, mask: Any, state: Any) -> KernelReset:
        new, obs, info = super().reset(xp, params, draws, mask, state)
        return new, (obs, obs * 0.0), info

    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, (obs,), reward, terminated, truncated, info


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        (_FlatObs, "step returned what no driver can run: the observation has shape (4,), the "
         "space's is (4, 1)"),
        (_FlatResetObs, "reset returned what no driver can run: the observation has shape (4,), "
         "the space's is (4, 1)"),
        (_ExtraKey, "step returned what no driver can run: the state step returned has keys "
         "['n', 'x'], the state it was given has ['x']"),
        (_WideState, "step returned what no driver can run: state['x'] from step has shape "
         "(4, 1), the state it was given has (4,)"),
        (_FloatTerminated, "step returned what no driver can run: terminated has dtype float64, "
         "expected bool"),
        (_ScalarTruncated, "step returned what no driver can run: truncated has shape (), "
         "expected (4,)"),
        (_RewardColumn, "step returned what no driver can run: rewards has shape (4, 1), "
         "expected (4,)"),
        (_DictObs, "step returned what no driver can run: the observation has keys ['x'], the "
         "space's has ['v', 'x']"),
        (_DictObsExtraKey, "step returned what no driver can run: the observation has keys "
         "['v', 'w', 'x'], the space's has ['v', 'x']"),
        (_TupleObs, "step returned what no driver can run: the observation is a tuple of 1, the "
         "space's is a tuple of 2"),
        (_FloatTruncated, "step returned what no driver can run: truncated has dtype float64, "
         "expected bool"),
    ],
)  # fmt: skip
def test_the_driver_refuses_outputs_not_shaped_as_the_spaces_and_state_say(
    kernel: type[WalkKernel], message: str
) -> None:
    # Before, numpy and torch broadcast a (4,) step observation with the reset's (4, 1) into
    # (4, 4) observations, and JAX failed inside sekai's own lax.cond.
    envs = KernelVecEnv(kernel(), 4, max_episode_steps=5)
    with pytest.raises(ValueError) as error:
        envs.reset(seed=0)
        for _ in range(10):
            envs.step(np.ones(4, np.int64))
    assert str(error.value).startswith(f"{kernel.__name__}.{message} (a kernel's arrays have")


def test_a_refused_output_is_refused_again_at_the_next_call() -> None:
    envs = KernelVecEnv(_FlatObs(), 2)
    envs.reset(seed=0)
    for _ in range(2):  # checked until it passes once
        with pytest.raises(ValueError, match="the observation has shape"):
            envs.step(np.ones(2, np.int64))


class _HardFloat64(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, xp.astype(reward, xp.float64), terminated, truncated, info


class _HardFloat64State(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, *rest = super().step(xp, params, state, action, draws)
        return ({"x": xp.astype(new["x"], xp.float64)}, *rest)


@pytest.mark.parametrize(
    ("kernel", "issue"),
    [
        (_HardFloat64, "ERROR: step() rewards has dtype float64, expected float32 (the mode's "
         "float dtype)."),
        (_HardFloat64State, "ERROR: step 0 state['x'] has dtype float64, expected float32 (the "
         "mode's float dtype: a kernel follows the dtype of its params' and draws' arrays)."),
    ],
)  # fmt: skip
def test_the_checks_report_a_hard_coded_float64_in_a_float32_mode(
    kernel: type[WalkKernel], issue: str
) -> None:
    # Before, only the rewards' kind was compared: float64 rewards passed in a float32 mode.
    issues = check_kernel_vec_env(
        lambda: KernelVecEnv(kernel(), 4, backend=NumpyBackend(np.float32)), n_steps=20
    )
    assert issues == [issue]
    assert check_kernel_vec_env(
        lambda: KernelVecEnv(WalkKernel(), 4, backend=NumpyBackend(np.float32)), n_steps=20
    ) in ([], ["WARNING: no episode ended in 20 steps: autoreset was not checked (pass more "
               "steps)."])  # fmt: skip


# -- params ----------------------------------------------------------------------------------


class _Typo(WalkKernel):
    settable = frozenset({"step_sz"})


class _ReadOnlyAttribute(WalkKernel):
    read_only: ClassVar[Mapping[str, str]] = {"mass": "it is derived; set step_size"}


def test_settable_naming_no_field_is_refused_when_the_kernel_is_driven() -> None:
    # Before, the typo left step_size unsettable, with no hint.
    with pytest.raises(
        ValueError,
        match=r"^_Typo\.settable names \['step_sz'\], which are no fields of WalkParams; its "
        r"fields are \['goal', 'noise', 'step_size'\]\.$",
    ):
        KernelVecEnv(_Typo(), 2)
    with pytest.raises(ValueError, match=r"^_Typo\.settable names"):
        kernel_trajectory(_Typo(), "numpy", steps=1)
    # read_only may name any attribute of the env, one the kernel derives its params from too
    envs = KernelVecEnv(_ReadOnlyAttribute(), 2)
    with pytest.raises(AttributeError, match=r"\.mass is read-only: it is derived; set step_size"):
        envs.set_attr("mass", 5.0)


class _DictParams(WalkKernel):
    def __init__(self) -> None:
        super().__init__()
        self.params = {"step_size": 1.0, "goal": 3.0}  # type: ignore[assignment]


def test_params_that_are_no_dataclass_are_refused_naming_the_kernel() -> None:
    # Before: the standard library's "must be called with a dataclass type or instance".
    with pytest.raises(
        TypeError, match=r"^_DictParams\.params must be a dataclass instance \(.*\), got dict\.$"
    ):
        KernelVecEnv(_DictParams(), 2)


class _ClassParams(WalkKernel):
    def __init__(self) -> None:
        super().__init__()
        self.params = WalkParams  # type: ignore[assignment]  # the class, not an instance


def test_params_that_are_the_dataclass_itself_not_an_instance_are_refused() -> None:
    with pytest.raises(
        TypeError, match=r"^_ClassParams\.params must be a dataclass instance \(.*\), got type\.$"
    ):
        KernelVecEnv(_ClassParams(), 2)


@dataclasses.dataclass(frozen=True)
class _SpanParams(WalkParams):
    span: float = dataclasses.field(init=False)  # derived from goal

    def __post_init__(self) -> None:
        object.__setattr__(self, "span", 2 * self.goal)


class _Derived(WalkKernel):
    def __init__(self) -> None:
        super().__init__()
        self.params = _SpanParams()


def test_a_field_the_params_derive_is_no_parameter_set_attr_sets() -> None:
    envs = KernelVecEnv(_Derived(), 2)
    with pytest.raises(
        AttributeError,
        match=r"^KernelVecEnv\.span is not a parameter: _Derived sets it when it is built; its "
        r"parameters are \['goal', 'noise', 'step_size'\]\.$",
    ):
        envs.set_attr("span", 1.0)
    envs.set_attr("goal", 4.0)
    assert envs.get_attr("span") == [8.0, 8.0]


def test_a_record_array_for_a_number_parameter_is_refused_by_kind() -> None:
    envs = KernelVecEnv(WalkKernel(), 2)
    record = np.zeros((), dtype=[("a", "f8"), ("b", "f8")])
    with pytest.raises(TypeError, match=r"^kernel parameter 'step_size' is 1\.0; a new value must"):
        envs.set_attr("step_size", record)
    assert envs.get_attr("step_size") == [1.0, 1.0]


def test_a_refused_set_attr_shows_the_parameter_as_get_attr_reports_it() -> None:
    envs = KernelVecEnv(WalkKernel(), 2)
    envs.set_attr("step_size", np.array(0.5, dtype=np.float32))
    assert envs.get_attr("step_size") == [0.5, 0.5]
    # Before: "kernel parameter 'step_size' is array(0.5, dtype=float32)".
    with pytest.raises(TypeError, match=r"^kernel parameter 'step_size' is 0\.5; a new value"):
        envs.set_attr("step_size", [1.0, 2.0, 3.0])


def test_an_attribute_that_is_no_parameter_says_what_the_parameters_are() -> None:
    envs = KernelVecEnv(WalkKernel(), 2)
    with pytest.raises(
        AttributeError,
        match=r"^'KernelVecEnv' object has no attribute or kernel parameter 'mass'; WalkKernel's "
        r"parameters are \['goal', 'noise', 'step_size'\], the values its dynamics read: an "
        r"attribute of the env that is none of them \(one the kernel derives them from when it "
        r"is built\) cannot be set here; set the parameters derived from it\.$",
    ):
        envs.set_attr("mass", 2.0)


def test_the_arrays_handed_out_stay_writable_through_the_checked_calls() -> None:
    # The kernel gets read-only views: the driver's arrays, which users hold (envs.state,
    # the arrays a kernel puts in infos), keep their flags.
    envs = KernelVecEnv(WalkKernel(), 3)
    envs.reset(seed=0)
    held = envs.state
    for _ in range(8):  # episodes end (|x| >= 3): the autoreset's first call is checked too
        result = envs.step(np.ones(3, np.int64))
    assert held["x"].flags.writeable and envs.state["x"].flags.writeable
    assert result.observations.flags.writeable
    trajectory = kernel_trajectory(WalkKernel(), "numpy", num_envs=2, steps=4)
    assert all(array.flags.writeable for arrays in trajectory.values() for array in arrays)


class _OwnReadOnlyError(WalkKernel):
    def step(self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Any) -> KernelStep:
        raise ValueError("the goal is read-only in this walk")


def test_a_kernels_own_error_mentioning_read_only_is_raised_as_it_is() -> None:
    envs = KernelVecEnv(_OwnReadOnlyError(), 2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"^the goal is read-only in this walk$"):
        envs.step(np.ones(2, np.int64))
