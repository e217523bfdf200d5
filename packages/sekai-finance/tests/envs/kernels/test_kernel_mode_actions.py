"""Actions and frozen sub-envs alike in every kernel mode: bools in a Box act as 1.0 and 0.0
and are refused as Discrete positions, and a frozen sub-env stays inside a replayed window that
ends on the history's last row. The numpy driver's and native cases run everywhere; the jax and
torch cases where that library is installed (the accel session)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.kernels import PortfolioKernel, TradingKernel
from sekai.error import InvalidAction
from sekai.registry.kernels import load_kernel
from sekai.vector.kernel_vec_env import KernelVecEnv


@pytest.mark.parametrize("mode", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_a_frozen_sub_env_stays_inside_a_window_that_ends_on_the_last_row(
    env_id: str, mode: str
) -> None:
    if mode in ("jax", "torch"):
        pytest.importorskip(mode)
    # One window exactly: lookback + episode_length + 1 rows, so the next row does not exist.
    rows = 100.0 * np.exp(np.cumsum(np.full((10, 2), 0.01), axis=0))
    trading = env_id == "Trading-v0"
    kwargs: dict[str, Any] = {"prices": rows[:, 0] if trading else rows}
    kwargs.update(episode_length=5, lookback=4)
    if mode == "numpy":
        kernel = (TradingKernel if trading else PortfolioKernel)(**kwargs)
        envs: Any = KernelVecEnv(kernel, 2, autoreset=False)
    else:
        vector = {"autoreset": False}
        envs = sekai.make_vec(env_id, 2, vectorization_mode=mode, vector_kwargs=vector, **kwargs)
    envs.reset(seed=0)
    action = np.array([2, 2]) if trading else np.full((2, 3), 1 / 3)
    for _ in range(5):
        out = envs.step(action)
    assert np.asarray(out.dones).tolist() == [True, True]
    assert np.asarray(envs.step(action).rewards).tolist() == [0.0, 0.0]


BOX_ENVS = ["Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]


def _mode_envs(env_id: str, mode: str, check_actions: bool = True) -> Any:
    """``env_id``'s 3 sub-envs in ``mode``: ``"numpy"`` is the numpy kernel driver."""
    if mode == "numpy":
        kernel = load_kernel(sekai.spec(env_id), {})
        return KernelVecEnv(kernel, 3, check_actions=check_actions)
    vector: dict[str, Any] = {} if mode == "native" else {"check_actions": check_actions}
    return sekai.make_vec(env_id, 3, vectorization_mode=mode, vector_kwargs=vector)


def _bools(shape: tuple[int, ...] | None, step: int) -> np.ndarray:
    """A batch of 3 bool actions of ``shape`` that changes with ``step``."""
    shape = shape or ()
    bools: np.ndarray = np.arange(3 * int(np.prod(shape))) % (step + 2) == 0
    return bools.reshape((3, *shape))


def _by_name(observations: Any) -> dict[str, Any]:
    """A batch of observations as a dict (a Box's batch under the name ``""``)."""
    return dict(observations) if isinstance(observations, dict) else {"": observations}


@pytest.mark.parametrize(
    ("mode", "check_actions"),
    [
        ("native", True),
        *((mode, check) for mode in ("numpy", "jax", "torch") for check in (True, False)),
    ],
)
@pytest.mark.parametrize("env_id", BOX_ENVS)
def test_bool_box_actions_step_as_the_numbers_1_and_0_in_every_mode(
    env_id: str, mode: str, check_actions: bool
) -> None:
    if mode in ("jax", "torch"):
        pytest.importorskip(mode)
    # True acts as 1.0 and False as 0.0, from the host and on the device, as in a native env.
    by_bools, by_floats = _mode_envs(env_id, mode, check_actions), _mode_envs(env_id, mode)
    by_bools.reset(seed=0)
    by_floats.reset(seed=0)
    shape = by_bools.action_space.shape
    for step in range(4):
        bools = _bools(shape, step)
        on_device = mode in ("jax", "torch") and step % 2 == 1
        put = by_bools.backend.convert if on_device else np.asarray
        # Host floats in float64 (what the host check makes of bools), the device's its own.
        got, want = by_bools.step(put(bools)), by_floats.step(put(bools.astype(np.float64)))
        np.testing.assert_array_equal(np.asarray(got.rewards), np.asarray(want.rewards))
        wanted = _by_name(want.observations)
        for name, value in _by_name(got.observations).items():
            np.testing.assert_array_equal(np.asarray(value), np.asarray(wanted[name]))


@pytest.mark.parametrize("mode", ["native", "numpy", "jax", "torch"])
def test_bool_positions_are_refused_by_trading_in_every_mode(mode: str) -> None:
    if mode in ("jax", "torch"):
        pytest.importorskip(mode)
    # Discrete: a bool is no index, from the host or on the device.
    envs = _mode_envs("Trading-v0", mode)
    envs.reset(seed=0)
    puts = [np.asarray] + ([envs.backend.convert] if mode in ("jax", "torch") else [])
    for put in puts:
        with pytest.raises(InvalidAction, match=r"\(sub-env 0\)"):
            envs.step(put(np.array([True, False, True])))


@pytest.mark.parametrize("env_id", BOX_ENVS)
def test_functional_box_actions_take_bools_as_the_numbers_1_and_0(env_id: str) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    make_functional = pytest.importorskip("sekai.jax").make_functional
    env = make_functional(env_id, 3)
    state = env.reset(jax.random.PRNGKey(0)).state
    key = jax.random.PRNGKey(1)
    bools = _bools(env.action_space.shape, 0)
    got = jax.jit(env.step)(key, state, jnp.asarray(bools))
    want = jax.jit(env.step)(key, state, jnp.asarray(bools, env.dtype))
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    trading = make_functional("Trading-v0", 3)
    with pytest.raises(TypeError, match=r"^actions of Discrete\(3\) cannot be of dtype bool"):
        trading.step(key, trading.reset(key).state, jnp.ones(3, bool))
