"""Rules of the kernel driver that every kernel mode shares (shown on the numpy backend):
read-only parameters, the shape check without value checks, infos finished on the host,
close(), and what ``check_kernel_vec_env`` (``sekai check --mode``) reports."""

from __future__ import annotations

import gc
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from sekai.error import InvalidAction
from sekai.spaces import Box, Dict, Discrete
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_backend import NumpyBackend, StepFn
from sekai.vector.kernel_check import check_kernel_vec_env
from sekai.vector.kernel_step import KernelTransition, draw_all, transition
from sekai.vector.kernel_vec_env import KernelVecEnv

TABLE = np.array(["a", "b", "c", "d"])  # what the device cannot hold: looked up on the host


@dataclass(frozen=True)
class WalkParams:
    steps: np.ndarray = field(default_factory=lambda: np.array([1.0, -1.0]))
    start: float = 0.0


class Walk(ArrayKernel[WalkParams]):
    """Moves by ``steps[action]`` from ``start`` (plus a uniform); ends past 3; reports row
    ``t % 4`` of TABLE as ``info["label"]``."""

    def __init__(self, start: float = 0.0) -> None:
        self.observation_space = Box(-10.0, 10.0, (1,))
        self.action_space = Discrete(2)
        self.params = WalkParams(start=start)

    def reset_draws(self, params: WalkParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"),)

    def reset(
        self, xp: Any, params: WalkParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = params.start + draws["u"]
        t = xp.zeros(mask.shape, dtype=xp.int64)
        if state is not None:
            x, t = xp.where(mask, x, state["x"]), xp.where(mask, t, state["t"])
        return {"x": x, "t": t}, x[:, None], {"row": t % 4}

    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"] + xp.take(params.steps, action, axis=0)
        t = state["t"] + 1
        done = xp.abs(x) > 3.0
        return {"x": x, "t": t}, x[:, None], x, done, xp.zeros_like(done), {"row": t % 4}

    def host_info(self, params: WalkParams, info: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"label": TABLE[info["row"]]}


def test_parameter_arrays_read_back_are_read_only_and_not_the_callers() -> None:
    envs = KernelVecEnv(Walk(), 2)
    steps = envs.get_attr("steps")
    assert steps[0] is steps[1]
    with pytest.raises(ValueError, match="read-only"):
        steps[0][0] = 5.0
    mine = np.array([2.0, -2.0])
    envs.set_attr("steps", mine)
    mine[0] = 100.0
    envs.set_attr("start", 1.0)  # every parameter is converted again
    np.testing.assert_array_equal(envs.get_attr("steps")[0], [2.0, -2.0])
    np.testing.assert_array_equal(envs._params.steps, [2.0, -2.0])


def test_one_number_for_an_array_parameter_is_broadcast() -> None:
    envs = KernelVecEnv(Walk(), 2)
    envs.set_attr("steps", 2)
    # one number stays the number given (an int here), as a native env keeps it
    assert envs.get_attr("steps") == [2, 2]
    assert all(type(value) is int for value in envs.get_attr("steps"))
    np.testing.assert_array_equal(envs.params.steps, [2.0, 2.0])  # broadcast for the kernel
    with pytest.raises(TypeError, match="same kind and shape"):
        envs.set_attr("steps", np.ones(3))


def test_infos_are_finished_on_the_host_through_autoresets() -> None:
    envs = KernelVecEnv(Walk(), 2)
    assert [info["label"] for info in envs.reset(seed=0).infos] == ["a", "a"]
    labels, reset_labels = [], []
    for _ in range(5):
        for info in envs.step(np.array([0, 0])).infos:
            labels.append(str(info.get("final_info", info)["label"]))
            if "reset_info" in info:
                reset_labels.append(str(info["reset_info"]["label"]))
    assert labels[:6] == ["b", "b", "c", "c", "d", "d"] and reset_labels == ["a", "a"]
    assert "row" in envs.last_transition.info  # the device arrays, as the kernel gave them


@pytest.mark.parametrize("check_actions", [True, False])
def test_the_shape_is_checked_and_float_indices_cast_without_value_checks(
    check_actions: bool,
) -> None:
    envs = KernelVecEnv(Walk(), 4, check_actions=check_actions)
    envs.reset(seed=0)
    for batch in (np.array([1]), np.ones((4, 1), dtype=np.int64)):
        with pytest.raises(ValueError, match=r"^actions must have shape \(4,\) \(4 sub-envs"):
            envs.step(batch)
    by_float = envs.step(np.array([0.0, 1.0, 0.0, 1.0])).observations
    envs.reset(seed=0)
    np.testing.assert_array_equal(envs.step(np.array([0, 1, 0, 1])).observations, by_float)


def test_close_drops_the_device_params_and_the_step_functions() -> None:
    envs = KernelVecEnv(Walk(), 2)
    envs.reset(seed=0)
    copies, step = weakref.ref(envs._params), weakref.ref(envs._step_fn)
    envs.close()
    gc.collect()
    assert copies() is None and step() is None


class _FarReset(Walk):
    """Starts at 5, outside Box(-1, 1); steps stay inside."""

    def __init__(self) -> None:
        super().__init__(start=5.0)
        self.observation_space = Box(-1.0, 1.0, (1,))

    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        new, _, reward, done, truncated, info = super().step(xp, params, state, action, draws)
        zero = xp.zeros_like(new["x"])
        return {**new, "x": zero}, zero[:, None], reward * 0.0, done & False, truncated, info


def test_the_checks_report_a_reset_observation_outside_the_space() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_FarReset(), 2), n_steps=5)
    assert issues == ["ERROR: reset(): sub-env 0's observation is outside the observation space."]


def test_the_checks_report_a_mode_that_takes_invalid_actions() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(Walk(), 3, check_actions=False), n_steps=20)
    # Unchecked, Walk's index 2 fails in the kernel: from the host and as the mode's array.
    assert [issue.split(" raised ")[0] for issue in issues] == [
        "ERROR: step() with an invalid action of the last sub-env",
        "ERROR: step() with an invalid action of the last sub-env on the device",
    ]
    assert all(issue.endswith("(expected InvalidAction).") for issue in issues)


class _NeverFreezes(NumpyBackend):
    """A broken driver: it resets finished sub-envs even with autoreset=False."""

    def build_step(self, env: KernelVecEnv) -> StepFn:
        kernel, n = env.kernel, env.num_envs

        def step(params: Any, carry: Any, action: Any) -> KernelTransition:
            out = transition(
                kernel,
                np,
                params,
                {"state": carry["state"], "elapsed": carry["elapsed"]},
                action,
                {},
                draw_all(kernel.reset_draws(params), n, self._sample),
                max_episode_steps=env._max_episode_steps,
                observation_dtype=env.observation_dtype,
            )
            return out._replace(state={**carry, **out.state})

        return step


def test_the_checks_report_finished_sub_envs_that_do_not_freeze() -> None:
    assert check_kernel_vec_env(lambda: KernelVecEnv(Walk(), 3), n_steps=20) == []
    issues = check_kernel_vec_env(
        lambda: KernelVecEnv(Walk(), 3, backend=_NeverFreezes()), n_steps=20
    )
    assert len(issues) == 1 and issues[0].startswith("ERROR: autoreset=False: step ")
    assert issues[0].endswith(
        "ended its episode but did not freeze (same observation, reward 0, still done, info {})."
    )


class _NoFreezeMode(KernelVecEnv):
    """A broken mode (its own class, as make_vec builds it): with autoreset=False it keeps
    paying finished sub-envs."""

    def step(self, actions: Any) -> Any:
        out = super().step(actions)
        if self.autoreset:
            return out
        return out._replace(rewards=np.ones(self.num_envs))


def test_the_freezing_check_runs_the_modes_own_class() -> None:
    # Before: it rebuilt a plain KernelVecEnv, so a mode's own step() was never run frozen.
    issues = check_kernel_vec_env(lambda: _NoFreezeMode(Walk(), 3), n_steps=20)
    assert len(issues) == 1 and issues[0].startswith("ERROR: autoreset=False: step ")


class _StaleAutoresetMode(KernelVecEnv):
    """A broken mode: the step that ends an episode returns the terminal observation, not the
    reset one (the final_* infos are still there)."""

    def step(self, actions: Any) -> Any:
        out = super().step(actions)
        t = self.last_transition
        assert t is not None
        done = np.asarray(t.done)[:, None]
        return out._replace(
            observations=np.where(done, np.asarray(t.final_observation), out.observations)
        )


def test_the_checks_report_a_mode_that_gets_same_step_autoreset_wrong() -> None:
    # Before: only the info keys were looked for, so the terminal observation passed.
    issues = check_kernel_vec_env(lambda: _StaleAutoresetMode(Walk(), 3), n_steps=20)
    assert issues == [
        "ERROR: autoreset of KStepKernel([1, 2, 3, 5]) in this mode: step 0, sub-env 0 (k=1, "
        "episode 0): observation [0.0, 1.0], expected [1, 0]."
    ]


class _MaskIgnored(Walk):
    """A broken kernel: its reset restarts every sub-env, whatever the mask."""

    def reset(
        self, xp: Any, params: WalkParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        return super().reset(xp, params, draws, xp.ones_like(mask), state)


def test_the_checks_report_a_kernel_whose_reset_ignores_the_mask() -> None:
    # Before: only KStepKernel met a partial mask, so the env's own kernel passed.
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_MaskIgnored(), 3), n_steps=20)
    assert issues == [
        "ERROR: reset(mask=...) of the kernel: called with mask [True, False, True], it changed "
        "state['x'] of sub-env 1, where mask is false (reset only the masked sub-envs and keep "
        "the others: xp.where(mask, new, state[...]))."
    ]


def test_the_mask_check_runs_a_single_sub_env_kernel_on_two() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_MaskIgnored(), 1), n_steps=20)
    assert [issue.split(", it changed")[0] for issue in issues] == [
        "ERROR: reset(mask=...) of the kernel: called with mask [True, False]"
    ]


class _UncastMode(KernelVecEnv):
    """A broken mode: its observations stay in the kernel's float64, not the space's dtype."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.observation_dtype = None
        self._rebuild()


class _FirstIndexMode(KernelVecEnv):
    """A broken mode: its InvalidAction names sub-env 0, whichever sub-env's action is bad."""

    def step(self, actions: Any) -> Any:
        try:
            return super().step(actions)
        except InvalidAction as exc:
            raise InvalidAction(exc.action, self.action_space, index=0) from None


class _StaleResetInfoMode(KernelVecEnv):
    """A broken mode: the reset_info of a same-step reset holds zeros, not the reset's values."""

    def _infos(self, t: Any, frozen: Any, params: Any) -> Any:
        zeros = {key: value * 0 for key, value in t.reset_info.items()}
        return super()._infos(t._replace(reset_info=zeros), frozen, params)


class _IntFlagsMode(KernelVecEnv):
    """A broken mode: ``terminated`` comes as int8 0/1, not bools."""

    def step(self, actions: Any) -> Any:
        out = super().step(actions)
        return out._replace(terminated=np.asarray(out.terminated).astype(np.int8))


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        (
            _UncastMode,
            [
                "ERROR: reset() obs has dtype float64, the space's is float32.",
                "ERROR: step 0 obs has dtype float64, the space's is float32.",
            ],
        ),
        (
            _FirstIndexMode,
            [
                "ERROR: step() with an invalid action of the last sub-env named sub-env 0, not 2.",
                "ERROR: step() with an invalid action of the last sub-env on the device named "
                "sub-env 0, not 2.",
            ],
        ),
        (
            _StaleResetInfoMode,
            [
                "ERROR: autoreset of KStepKernel([1, 2, 3, 5]) in this mode: step 0, sub-env 0 "
                "(k=1, episode 0): info {'t': 1.0, 'final_observation': array([0., 1.], "
                "dtype=float32), 'final_info': {'t': 1.0}, 'reset_info': {'episode': 0.0}}, "
                "expected reset_info {'episode': 1}."
            ],
        ),
        (_IntFlagsMode, ["ERROR: step() terminated has dtype int8, expected bool."]),
    ],
)
def test_the_checks_report_a_mode_with_wide_observations_a_wrong_index_or_stale_infos_or_flags(
    mode: type[KernelVecEnv], want: list[str]
) -> None:
    assert check_kernel_vec_env(lambda: mode(Walk(), 3), n_steps=20) == want


class _FarFinal(Walk):
    """Its terminal observation is 100 times its position: outside Box(-10, 10)."""

    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        new, obs, reward, done, truncated, info = super().step(xp, params, state, action, draws)
        return new, xp.where(done[:, None], obs * 100.0, obs), reward, done, truncated, info


def test_the_checks_report_a_final_observation_outside_the_space_as_an_error() -> None:
    # As any observation outside the space: the value bootstrapping reads at an episode's end.
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_FarFinal(), 2), n_steps=40)
    assert len(issues) == 1
    assert issues[0].startswith("ERROR: step ")
    assert issues[0].endswith("'s final_observation is outside the observation space.")


class _Settable(Walk):
    settable = ("start",)  # a tuple, as a list of names is naturally written


def test_a_kernel_may_list_its_settable_fields_in_any_collection() -> None:
    assert _Settable.settable == frozenset({"start"})
    generated = type("_Generated", (Walk,), {"settable": (n for n in ["start"])})
    assert generated.settable == frozenset({"start"})  # read once, not used up by the check
    envs = KernelVecEnv(_Settable(), 2)
    envs.set_attr("start", 2.0)
    assert envs.get_attr("start") == [2.0, 2.0]
    with pytest.raises(AttributeError, match=r"^KernelVecEnv\.steps is not a parameter"):
        envs.set_attr("steps", np.array([2.0, -2.0]))


@pytest.mark.parametrize("settable", ["start", ("start", 3)])
def test_a_kernel_whose_settable_is_no_collection_of_names_is_refused_when_defined(
    settable: Any,
) -> None:
    message = (
        "_Bad.settable must be None or a collection of the names of params fields (str), "
        f"got {settable!r}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        type("_Bad", (Walk,), {"settable": settable})


class _DictActions(Walk):
    def __init__(self) -> None:
        super().__init__()
        self.action_space = Dict(a=Discrete(2))


def test_a_kernel_with_a_dict_action_space_is_refused_when_the_env_is_built() -> None:
    message = (
        "a kernel's action_space must be a space of arrays (Box, Discrete, MultiDiscrete or "
        "MultiBinary), got Dict."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        KernelVecEnv(_DictActions(), 2)


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble, np.int32])
def test_the_numpy_backend_takes_the_float_dtypes_numpy_draws_in(dtype: Any) -> None:
    message = (
        "dtype must be float32 or float64 (the float dtypes NumPy's random generator draws "
        f"in), got {np.dtype(dtype)}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        NumpyBackend(dtype)
    assert NumpyBackend(np.float32).float_dtype == np.float32
