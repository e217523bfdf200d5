"""TradingKernel against the native TradingVecEnv, fed the same draws (float64, 1e-12)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels.trading import TradingKernel
from sekai.envs.finance.vector import TradingVecEnv
from sekai.finance import MarketData, NoCost, ProfitAndLoss, SimpleReturn


def _history(n_rows: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    return 50.0 * np.exp(np.cumsum(rng.normal(0.0, 0.03, n_rows)))


CASES: dict[str, dict[str, Any]] = {
    "simulated": {"episode_length": 6, "lookback": 4},
    "simulated, leverage wipe-outs": {
        "episode_length": 9,
        "lookback": 3,
        "positions": (-40.0, 0.0, 0.5, 40.0),
        "sigma": 0.9,
        "transaction_cost": 0.02,
        "reward": SimpleReturn() + ProfitAndLoss(),
    },
    "replayed, no cost": {
        "prices": _history(50),
        "episode_length": 8,
        "lookback": 6,
        "transaction_cost": NoCost(),
    },
    "replayed, dated data with warm-up": {
        "data": MarketData(
            _history(45)[:, None],
            timestamps=np.arange("2024-01-01", 45, dtype="datetime64[D]"),
            warmup=9,
        ),
        "episode_length": 5,
        "lookback": 3,
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_trading_kernel_matches_native_env_draw_for_draw_across_autoresets(
    case: str, kernel_harness: Any
) -> None:
    kwargs = CASES[case]
    n_envs = 7
    native = TradingVecEnv(n_envs, **kwargs)
    kernel = TradingKernel(**kwargs)
    reset_draws, step_draws = kernel_harness.window_draws(native, kernel)
    trial = kernel_harness.Trial(native, kernel, reset_draws, step_draws)
    rng = np.random.default_rng(2)
    n_positions = kernel.action_space.n
    actions = [rng.integers(0, n_positions, n_envs) for _ in range(3 * kwargs["episode_length"])]
    trial.run(seed=4, actions=actions)
    assert trial.autoresets >= 3
    if "wipe-outs" in case:
        assert trial.terminations > 0
