"""TradingKernel against the native TradingVecEnv, fed the same draws (float64, 1e-12)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels._window import START_BITS, position_uniforms, window_position
from sekai.envs.finance.kernels.trading import TradingKernel
from sekai.envs.finance.vector import TradingVecEnv
from sekai.finance import (
    DrawdownPenalty,
    LogReturn,
    MarketData,
    NoCost,
    ProfitAndLoss,
    SimpleReturn,
)


def _history(n_rows: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    return 50.0 * np.exp(np.cumsum(rng.normal(0.0, 0.03, n_rows)))


_DRAWDOWN = DrawdownPenalty()

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
    # One stateful reward object in two terms is one function of the step, as in the env.
    "simulated, one drawdown in two terms": {
        "episode_length": 7,
        "lookback": 3,
        "sigma": 0.6,
        "reward": LogReturn() - _DRAWDOWN - 0.5 * _DRAWDOWN,
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


# The wipe-out case holds 40x positions on purpose (sekai.WipeOutWarning says so).
@pytest.mark.filterwarnings("ignore::sekai.error.WipeOutWarning")
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


def _edges(digits: np.ndarray, bits: int, dtype: type, top: bool) -> np.ndarray:
    """The smallest (or, with ``top``, the largest) uniform of ``dtype`` whose leading ``bits``
    are ``digits``."""
    low = (digits / 2**bits).astype(dtype)
    return np.nextafter(((digits + 1) / 2**bits).astype(dtype), dtype(0)) if top else low


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_replayed_window_starts_are_uniform_to_one_draw_in_2_to_the_31(dtype: type) -> None:
    # 3 * 2**21 windows (12 years of minute bars): one float32 uniform times the count reached
    # some starts twice as often as others, and past 2**23 windows (JAX) never reached some.
    # The three draws' digits (11, 10, 10 bits, exact from any dtype's uniforms, at the edges
    # of their intervals too) make every integer below 2**31 once; modulo n each of the first
    # 2**31 % n starts gets 342 of them, the others 341.
    n = 3 * 2**21
    assert START_BITS == (11, 10, 10) and 2**31 // n == 341
    b, c = np.divmod(np.arange(2**20), 2**10)
    middle = _edges(b, 10, dtype, top=False)
    last = _edges(c, 10, dtype, top=True)
    for a in [0, 1, 2, 3, 4, 5, 2046, 2047]:  # a whole period of n, and the two past 341 ones
        for top in (False, True):
            first = np.full(2**20, _edges(np.array(a), 11, dtype, top), dtype)
            u = np.stack([first, middle, last], axis=1)
            positions = window_position(np, u, n, np.int32)
            assert positions.dtype == np.int32
            want = (a * 2**20 + np.arange(2**20)) % n  # a block of the 31-bit integers
            np.testing.assert_array_equal(positions, want, err_msg=f"digit {a}, {dtype}")
    rows = np.random.default_rng(0).integers(0, n, 1000)
    np.testing.assert_array_equal(window_position(np, position_uniforms(rows), n, np.int64), rows)
    ones = np.ones((1, 3), dtype)  # float64 uniforms rounded up in float32: the last digits
    assert window_position(np, ones, n, np.int32).tolist() == [(2**31 - 1) % n]
