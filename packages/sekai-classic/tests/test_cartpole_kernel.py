"""The CartPole-v1 kernel on the numpy driver matches the native CartPoleVecEnv bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control.kernels.cartpole import CartPoleKernel
from sekai.vector.kernel_vec_env import KernelVecEnv


@pytest.mark.parametrize("integrator", ["euler", "semi-implicit euler"])
@pytest.mark.parametrize(
    ("autoreset", "sutton_barto_reward"), [(True, False), (False, False), (True, True)]
)
def test_the_numpy_kernel_driver_matches_the_native_env_across_autoresets(
    autoreset: bool, sutton_barto_reward: bool, integrator: str
) -> None:
    n, steps = 8, 300
    kwargs = {"sutton_barto_reward": sutton_barto_reward}
    native = sekai.make_vec(
        "classic/CartPole-v1",
        n,
        max_episode_steps=60,
        vector_kwargs={"autoreset": autoreset},
        **kwargs,
    )
    kernel = KernelVecEnv(CartPoleKernel(**kwargs), n, max_episode_steps=60, autoreset=autoreset)
    for envs in (native, kernel):
        envs.set_attr("kinematics_integrator", integrator)
    first, second = native.reset(seed=3), kernel.reset(seed=3)
    np.testing.assert_array_equal(first.observations, second.observations)
    actions = np.random.default_rng(0).integers(0, 2, (steps, n))
    episodes = 0
    for t, action in enumerate(actions):
        if not autoreset and t % 100 == 99:
            first, second = native.reset(), kernel.reset()
            np.testing.assert_array_equal(first.observations, second.observations)
        a, b = native.step(action), kernel.step(action)
        for field in ("observations", "rewards", "terminated", "truncated"):
            want, got = getattr(a, field), getattr(b, field)
            assert got.dtype == want.dtype, (t, field)
            np.testing.assert_array_equal(got, want, err_msg=f"step {t}: {field}")
        _assert_same(b.infos, a.infos, f"step {t}: infos")
        episodes += int(a.dones.sum())
    assert episodes > 2 * n  # the comparison went through many autoresets (or freezes)


def _assert_same(got: object, want: object, where: str) -> None:
    """Equal nested infos: same keys, same values, arrays of the same dtype."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype, where
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        assert type(got) is type(want) and got == want, where


def test_cartpole_registers_its_kernel_for_both_ids() -> None:
    for env_id in ("CartPole-v1", "classic/CartPole-v1"):
        assert sekai.spec(env_id).kernel_entry_point == (
            "sekai.envs.classic_control.kernels.cartpole:CartPoleKernel"
        )
    assert sekai.spec("Pendulum-v1").kernel_entry_point is None


def test_the_kernel_driver_reports_the_env_metadata() -> None:
    envs = KernelVecEnv(CartPoleKernel(), 2)
    assert envs.metadata == {"render_fps": 50} == sekai.make_vec("CartPole-v1", 2).metadata


def test_the_kernels_reset_bounds_draw_as_the_native_envs_reset_options_do() -> None:
    # A kernel takes no reset options: its reset_low / reset_high params set the bounds.
    n, low, high = 64, 0.2, 0.3
    kernel = KernelVecEnv(CartPoleKernel(), n)
    kernel.set_attr("reset_low", low)
    kernel.set_attr("reset_high", high)
    native = sekai.make_vec("classic/CartPole-v1", n)
    drawn = kernel.reset(seed=5).observations
    expected = native.reset(seed=5, options={"low": low, "high": high}).observations
    np.testing.assert_array_equal(drawn, expected)
    assert drawn.min() >= low and drawn.max() <= high
