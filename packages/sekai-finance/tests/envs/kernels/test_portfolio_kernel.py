"""PortfolioKernel against the native PortfolioVecEnv, fed the same draws (float64, 1e-12)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels._window import position_uniforms
from sekai.envs.finance.kernels.portfolio import PortfolioKernel
from sekai.envs.finance.vector import PortfolioVecEnv
from sekai.finance import DifferentialSharpe, DrawdownPenalty, MeanVariance, ProportionalCost
from sekai.finance.rewards import LogReturn, TurnoverPenalty


def _history(n_rows: int, n_assets: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, (n_rows, n_assets)), axis=0))


def _actions(n_envs: int, width: int, n_steps: int, seed: int = 3) -> list[np.ndarray]:
    """Scores with all-zero rows, out-of-range entries and one-asset bets among them."""
    rng = np.random.default_rng(seed)
    actions = []
    for _ in range(n_steps):
        a = rng.uniform(-0.5, 1.5, (n_envs, width))
        a[0] = 0.0  # all cash
        a[1] = np.eye(width)[rng.integers(width)]  # everything on one asset
        actions.append(a.astype(np.float32))
    return actions


CASES: dict[str, dict[str, Any]] = {
    "simulated": {"n_assets": 3, "episode_length": 6, "lookback": 4},
    "simulated, shorts, stateful reward": {
        "n_assets": 4,
        "episode_length": 5,
        "lookback": 3,
        "allow_short": True,
        "reward": LogReturn() - 0.5 * DrawdownPenalty() + DifferentialSharpe(0.1),
        "transaction_cost": ProportionalCost([1e-3, 2e-3, 0.0, 5e-3]),
    },
    "simulated, wipe-outs": {
        "n_assets": 2,
        "episode_length": 8,
        "lookback": 2,
        "transaction_cost": ProportionalCost(0.6),
        "reward": MeanVariance(2.0) - 1e-3 * TurnoverPenalty() + 0.25,
    },
    "replayed": {"prices": _history(40, 3), "episode_length": 7, "lookback": 5},
    "replayed, shorts": {
        "prices": _history(30, 2),
        "episode_length": 4,
        "lookback": 3,
        "allow_short": True,
        "dt": 1 / 52,
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_portfolio_kernel_matches_native_env_draw_for_draw_across_autoresets(
    case: str, kernel_harness: Any
) -> None:
    kwargs = CASES[case]
    n_envs = 6
    native = PortfolioVecEnv(n_envs, **kwargs)
    kernel = PortfolioKernel(**kwargs)
    reset_draws, step_draws = kernel_harness.window_draws(native, kernel)
    trial = kernel_harness.Trial(native, kernel, reset_draws, step_draws)
    width = kernel.action_space.shape[0]
    trial.run(seed=11, actions=_actions(n_envs, width, 3 * kwargs["episode_length"] + 2))
    assert trial.autoresets >= 3  # the episodes ended, and the kernel reset them
    if "wipe-outs" in case:
        assert trial.terminations > 0


def test_portfolio_kernel_observation_window_is_the_last_lookback_log_returns() -> None:
    import array_api_compat.numpy as xp

    prices = _history(20, 2)
    kernel = PortfolioKernel(prices=prices, episode_length=5, lookback=3)
    params = kernel.params
    every = np.ones(1, dtype=bool)
    u = position_uniforms([4 - params.first])  # window start row 4
    state, obs, _ = kernel.reset(xp, params, {"u": u}, every, None)
    log_returns = np.log(prices[1:] / prices[:-1])
    np.testing.assert_allclose(obs["returns"][0], log_returns[4:7], rtol=1e-12)
    state, obs, *_ = kernel.step(xp, params, state, np.ones((1, 3)), {})
    np.testing.assert_allclose(obs["returns"][0], log_returns[5:8], rtol=1e-12)


def test_kernel_params_refuse_a_per_asset_s0_of_zero() -> None:
    params = PortfolioKernel(n_assets=2).params
    with pytest.raises(
        ValueError, match=r"^s0 must be finite numbers > 0, got \[100\.0, 0\.0\]\.$"
    ):
        dataclasses.replace(params, s0=np.array([100.0, 0.0]))
