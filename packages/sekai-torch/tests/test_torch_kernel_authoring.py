"""What the "torch" mode and ``sekai check --mode torch`` tell the author of a kernel that breaks
its rules (in-place updates, a hard-coded float dtype, outputs of other shapes), and how
``set_attr`` takes a tensor that requires grad."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest
import torch

from sekai.testing.kernels import WalkKernel, WalkParams, assert_kernel_equivalent
from sekai.torch import TorchVecEnv
from sekai.vector.kernel import KernelReset, KernelStep
from sekai.vector.kernel_check import check_kernel_vec_env


class _InPlaceStep(WalkKernel):
    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"]
        x += xp.where(action == 1, params.step_size, -params.step_size)
        terminated = xp.abs(x) >= 3.0
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


@pytest.mark.parametrize(("kernel", "call"), [(_InPlaceStep, "step"), (_InPlaceReset, "reset")])
def test_the_torch_mode_check_reports_an_in_place_update(
    kernel: type[WalkKernel], call: str
) -> None:
    # Before, `sekai check --mode torch` and assert_kernel_equivalent passed both kernels.
    issues = check_kernel_vec_env(lambda: TorchVecEnv(kernel(), 4), n_steps=30)
    assert len(issues) == 1
    assert issues[0].startswith(
        f"ERROR: the numpy reference driver (KernelVecEnv, float32): ValueError: "
        f"{kernel.__name__}.{call} wrote into an array it was given"
    )
    with pytest.raises(ValueError, match=rf"^{kernel.__name__}\.{call} wrote into an array"):
        assert_kernel_equivalent(kernel, backends=("torch",), steps=30, max_episode_steps=8)


def test_observations_handed_out_keep_their_values_whatever_the_kernel_does_later() -> None:
    # Before: the step-1 observations held by the user changed at step 2, and every
    # final_observation was the new episode's first observation.
    envs = TorchVecEnv(_InPlaceStep(), 3)
    envs.reset(seed=0)
    held = envs.step(torch.ones(3, dtype=torch.int64)).observations
    before = held.clone()
    envs.step(torch.ones(3, dtype=torch.int64))
    assert torch.equal(held, before)
    envs = TorchVecEnv(_InPlaceReset(), 4)
    envs.reset(seed=0)
    finals = []
    for _ in range(6):
        out = envs.step(torch.ones(4, dtype=torch.int64))
        finals += [info["final_observation"] for info in out.infos if "final_observation" in info]
    assert finals and all(abs(float(final[0])) >= 3.0 for final in finals)


def _altered(name: str, change: Callable[[Any, KernelStep], KernelStep]) -> type[WalkKernel]:
    """A WalkKernel whose step outputs pass through ``change(xp, outputs)``: a kernel that
    breaks one rule, named ``name`` as the driver's messages name it."""

    def step(
        self: WalkKernel,
        xp: Any,
        params: WalkParams,
        state: Any,
        action: Any,
        draws: Mapping[str, Any],
    ) -> KernelStep:
        return change(xp, WalkKernel.step(self, xp, params, state, action, draws))

    return type(name, (WalkKernel,), {"step": step})


_HardFloat64 = _altered(
    "_HardFloat64", lambda xp, out: ({"x": xp.astype(out[0]["x"], xp.float64)}, *out[1:])
)


def test_the_torch_mode_check_reports_a_hard_coded_float64_state() -> None:
    issues = check_kernel_vec_env(lambda: TorchVecEnv(_HardFloat64(), 4), n_steps=20)
    assert issues == [
        "ERROR: step 0 state['x'] has dtype float64, expected float32 (the mode's float dtype: "
        "a kernel follows the dtype of its params' and draws' arrays)."
    ]


_FlatObs = _altered("_FlatObs", lambda xp, out: (out[0], out[1][:, 0], *out[2:]))


def test_the_torch_mode_refuses_observations_of_another_shape_than_the_space_s() -> None:
    # Before: broadcast with the reset's (4, 1) into (4, 4) observations from the first reset.
    envs = TorchVecEnv(_FlatObs(), 4)
    envs.reset(seed=0)
    with pytest.raises(
        ValueError,
        match=r"^_FlatObs\.step returned what no driver can run: the observation has shape "
        r"\(4,\), the space's is \(4, 1\) \(",
    ):
        envs.step(torch.ones(4, dtype=torch.int64))


_FloatTerminated = _altered(
    "_FloatTerminated", lambda xp, out: (*out[:3], xp.astype(out[3], out[2].dtype), *out[4:])
)


def test_the_torch_mode_names_a_flag_of_another_dtype_as_numpy_names_it() -> None:
    envs = TorchVecEnv(_FloatTerminated(), 4)
    envs.reset(seed=0)
    with pytest.raises(
        ValueError,
        match=r"^_FloatTerminated\.step returned what no driver can run: terminated has dtype "
        r"float32, expected bool \(",  # not torch.float32
    ):
        envs.step(torch.ones(4, dtype=torch.int64))


def test_set_attr_takes_a_tensor_that_requires_grad_as_its_value() -> None:
    # Before: "kernel parameter 'noise' is array(0.3, dtype=float32); a new value must be of
    # the same kind and shape" for a 0-d tensor of the same kind and shape.
    envs = TorchVecEnv(WalkKernel(), 2)
    noise = torch.tensor(0.25, requires_grad=True)
    envs.set_attr("noise", noise)
    assert envs.get_attr("noise") == [0.25, 0.25]
    assert noise.requires_grad  # the caller's tensor is left as it is
    envs.reset(seed=0)
    out = envs.step(torch.ones(2, dtype=torch.int64))
    assert not out.observations.requires_grad
    with pytest.raises(TypeError, match=r"^kernel parameter 'noise' is 0\.25; a new value"):
        envs.set_attr("noise", torch.ones(3, requires_grad=True))
    assert np.isclose(envs.get_attr("noise")[0], 0.25)
