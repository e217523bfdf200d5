"""MarketMaking and OptimalExecution kernels against their native vector envs, fed the draws
the native env makes (float64, 1e-12)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels.market_making import MarketMakingKernel
from sekai.envs.finance.kernels.optimal_execution import OptimalExecutionKernel
from sekai.envs.finance.vector import MarketMakingVecEnv, OptimalExecutionVecEnv
from sekai.testing.kernels import kernel_trajectory

N_ENVS = 8


def _twin_draws(kernel_harness: Any, native: Any, step: Any) -> tuple[Any, Any]:
    """Draw functions replaying the native env's ``rng`` draws from a twin generator."""
    twins: dict[str, np.random.Generator] = {}

    def reset_draws(native: Any, mask: np.ndarray) -> dict[str, np.ndarray]:
        if not twins:  # the first reset seeded native.rng: follow it from here
            twins["rng"] = kernel_harness.twin_generator(native)
        return {}

    def step_draws(native: Any, mask: np.ndarray) -> dict[str, np.ndarray]:
        result: dict[str, np.ndarray] = step(twins["rng"], mask.shape[0])
        return result

    return reset_draws, step_draws


MARKET_MAKING: dict[str, dict[str, Any]] = {
    "defaults, short sessions": {"n_steps": 5},
    "tight inventory, terminal penalty": {
        "n_steps": 7,
        "max_inventory": 2,
        "order_size": 1,
        "terminal_penalty": 0.3,
        "fill_intensity": 400.0,
        "max_offset": 5.0,
    },
}


@pytest.mark.parametrize("case", list(MARKET_MAKING))
def test_market_making_kernel_matches_native_env_draw_for_draw_across_autoresets(
    case: str, kernel_harness: Any
) -> None:
    kwargs = MARKET_MAKING[case]
    native = MarketMakingVecEnv(N_ENVS, **kwargs)
    kernel = MarketMakingKernel(**kwargs)

    def step(rng: np.random.Generator, n_envs: int) -> dict[str, np.ndarray]:
        u = rng.random((n_envs, 2))  # the native step's draws, in its order
        return {"u": u, "z": rng.standard_normal(n_envs)}

    reset_draws, step_draws = _twin_draws(kernel_harness, native, step)
    trial = kernel_harness.Trial(native, kernel, reset_draws, step_draws)
    rng = np.random.default_rng(8)
    actions = []
    for _ in range(22):
        a = rng.uniform(-0.5, 1.5, (N_ENVS, 2))
        a[:2] = [0.0, 5.0], [5.0, 0.0]  # always buying, always selling: the limits bind
        actions.append(a.astype(np.float32))
    trial.run(seed=21, actions=actions)
    assert trial.autoresets >= 3


OPTIMAL_EXECUTION: dict[str, dict[str, Any]] = {
    "defaults, short sessions": {"n_steps": 6},
    "no volatility, no fixed cost": {"n_steps": 4, "sigma": 0.0, "fixed_cost": 0.0},
}


@pytest.mark.parametrize("case", list(OPTIMAL_EXECUTION))
def test_optimal_execution_kernel_matches_native_env_draw_for_draw_across_autoresets(
    case: str, kernel_harness: Any
) -> None:
    kwargs = OPTIMAL_EXECUTION[case]
    native = OptimalExecutionVecEnv(N_ENVS, **kwargs)
    kernel = OptimalExecutionKernel(**kwargs)

    def step(rng: np.random.Generator, n_envs: int) -> dict[str, np.ndarray]:
        return {"z": rng.standard_normal(n_envs)}

    reset_draws, step_draws = _twin_draws(kernel_harness, native, step)
    trial = kernel_harness.Trial(native, kernel, reset_draws, step_draws)
    rng = np.random.default_rng(9)
    actions = []
    for _ in range(20):
        a = rng.uniform(-0.2, 1.2, (N_ENVS, 1))
        a[0] = 1.0  # sells everything at once: a session ending early
        actions.append(a.astype(np.float32))
    trial.run(seed=22, actions=actions)
    assert trial.autoresets >= 3 and trial.terminations > 0


@pytest.mark.parametrize("backend", ["numpy", "jax", "torch"])
def test_optimal_execution_kernel_drops_dust_below_1e_9_of_x0_as_the_native_env(
    backend: str,
) -> None:
    """finance.md §12.4: ``x = 0 if x < 1e-9·X0``, which ends the session (float64 only: a
    float32 action cannot leave that little)."""
    if backend != "numpy":
        pytest.importorskip(backend)
    # Leaves 5e-4 shares of X0 = 1e6 (below 1e-3: dropped), and 2e-3 (kept).
    action = np.array([[1.0 - 5e-10], [1.0 - 2e-9]])
    native = OptimalExecutionVecEnv(2, autoreset=False, sigma=0.0)
    native.reset(seed=0)
    expected = native.step(action)
    run = kernel_trajectory(
        OptimalExecutionKernel(sigma=0.0), backend, num_envs=2, steps=1, actions=[action]
    )
    assert run["terminated"][-1].tolist() == expected.terminated.tolist() == [True, False]
    inventory = [info["inventory"] for info in expected.infos]
    assert run["info.inventory"][-1].tolist() == inventory
    assert inventory[0] == 0.0
