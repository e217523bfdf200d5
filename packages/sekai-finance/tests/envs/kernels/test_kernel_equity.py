"""The window kernels' equity (through the numpy driver): an underflow to 0 is a wipe-out, as
on the native envs, and a built-in GBM under which the equity may pass the dtype's largest
number within an episode is refused when the env is built and when a parameter is set."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance._helpers import peak_log_equity
from sekai.envs.finance.kernels import PortfolioKernel, TradingKernel
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_vec_env import KernelVecEnv

FLAT = np.full(410, 100.0)  # a price that never moves: only the costs change the equity
# Turnover 2 at a rate of 0.45: every step costs 90 % of the equity, which underflows to 0
# after some 324 steps in float64 (46 in float32), each step's growth still 0.1.
COSTLY = {"prices": FLAT, "transaction_cost": 0.45, "lookback": 2, "episode_length": 400}
SHORT, LONG = 0, 2


def _steps_to_wipe_out(vec: Any) -> tuple[int, Any]:
    vec.reset(seed=0)
    for k in range(1, 401):
        result = vec.step(np.full(vec.num_envs, SHORT if k % 2 else LONG))
        if result.terminated.any():
            return k, result
    raise AssertionError("no wipe-out")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_equity_underflow_is_a_wipe_out_as_on_the_native_env(dtype: Any) -> None:
    kernel = KernelVecEnv(TradingKernel(**COSTLY), 2, backend=NumpyBackend(dtype))
    steps, result = _steps_to_wipe_out(kernel)
    equity = dtype(1.0)
    for k in range(1, steps):  # the equity of the step before, in the kernel's dtype
        equity = equity * dtype(0.1 if k > 1 else 0.55)  # the first trade turns over 1
    assert equity > 0.0 and equity * dtype(0.1) == 0.0  # the step that underflowed it
    assert result.terminated.all() and not result.truncated.any()
    wipe_out = math.log(1e-12)  # as a growth <= 0 gives, in the kernel's dtype
    assert result.rewards.tolist() == pytest.approx([wipe_out] * 2, rel=1e-6)
    final = [info["final_info"] for info in result.infos]
    assert [(info["equity"], info["position"]) for info in final] == [(0.0, 0.0)] * 2
    if dtype is np.float64:
        native_steps, native = _steps_to_wipe_out(sekai.make_vec("Trading-v0", 2, **COSTLY))
        assert native_steps == steps
        assert native.rewards.tolist() == result.rewards.tolist()


# Positions up to 3x on a drift of 0.5 a year: held at 3x, the log equity drifts
# 3 * 0.5 - (3 * 0.2)**2 / 2 = 1.32 a year, which with 5 standard deviations (3 * 0.2 *
# sqrt(years)) passes log(float64 max) ~ 709.8 within 1000 one-year steps (the native env's
# equity reaches infinity near step 700), while the price stays inside float64.
LEVERED = {"mu": 0.5, "dt": 1.0, "positions": (0.0, 1.0, 3.0), "episode_length": 1000}
REFUSED = (
    r"TradingEnv's equity may reach infinity within 1000 steps, its log 5 standard deviations "
    r"above its mean under the holdings that raise it most \(positions=\(0\.0, 1\.0, 3\.0\), "
    r"mu=0\.5, sigma=0\.2, dt=1\.0\): these parameters compound it beyond float64's range\. "
    # as native
    r"Use smaller positions, a mu nearer 0 or a smaller dt, or a shorter episode_length\.$"
)


def test_a_gbm_that_compounds_equity_beyond_float64_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match=REFUSED):
        KernelVecEnv(TradingKernel(**LEVERED), 2, backend=NumpyBackend(np.float64))
    KernelVecEnv(TradingKernel(**{**LEVERED, "mu": 0.05}), 2, backend=NumpyBackend(np.float64))


def test_setting_a_parameter_that_compounds_equity_beyond_float64_is_refused() -> None:
    vec = KernelVecEnv(
        TradingKernel(**{**LEVERED, "mu": 0.05}), 2, backend=NumpyBackend(np.float64)
    )
    with pytest.raises(ValueError, match=r"set_attr\(.*\) refused: .*" + REFUSED):
        vec.set_attr("mu", 0.5)
    assert vec.get_attr("mu") == [0.05, 0.05]


def test_the_equity_bound_is_the_dtypes() -> None:
    # 80 years of daily steps at 3x: the log equity bound is 1.32 * 80 + 5 * 0.6 * sqrt(80)
    # ~ 132, inside float64's ~709.8 but beyond float32's ~88.7; the price (log 100 + 0.48 *
    # 80 + 5 * 0.2 * sqrt(80) ~ 52) fits both.
    kwargs = {"mu": 0.5, "positions": (0.0, 1.0, 3.0), "episode_length": 20_160}
    KernelVecEnv(TradingKernel(**kwargs), 1, backend=NumpyBackend(np.float64))
    with pytest.raises(ValueError, match=r"beyond float32's range.*in float64 \(JAX"):
        KernelVecEnv(TradingKernel(**kwargs), 1, backend=NumpyBackend(np.float32))


def test_portfolio_equity_is_bounded_by_its_best_asset_held_or_shorted() -> None:
    # Weights of at most 1 in all: the log equity drifts at most as fast as the best asset
    # held alone, or shorted alone (-mu). Shorting the asset that falls 0.1 a year, that is
    # 711 over 7110 one-year steps, beyond log(float64 max) ~ 709.78, while its price (log 100
    # - 711.1) stays above float64's smallest normal (log ~ -708.4); long only, the best asset
    # drifts 0.05 a year.
    kwargs = {"n_assets": 2, "mu": [0.05, -0.1], "sigma": 0.0, "dt": 1.0}
    kwargs.update(lookback=1, episode_length=7110)
    KernelVecEnv(PortfolioKernel(**kwargs), 1, backend=NumpyBackend(np.float64))
    with pytest.raises(ValueError, match=r"^PortfolioEnv's equity may reach infinity .*mu="):
        short = PortfolioKernel(**kwargs, allow_short=True)
        KernelVecEnv(short, 1, backend=NumpyBackend(np.float64))


def test_high_leverage_is_bounded_position_by_position() -> None:
    # +-20x on a volatile asset, daily for 500 steps in float32: at 20x the log equity drifts
    # 20 * 0.05 - (20 * 0.8)**2 / 2 = -127 a year, with a volatility of 16; flat, it stays.
    # Held at the worst mix (20x for about 0.1 of a year, then flat) it peaks near 12.6, far
    # below log(float32 max) ~ 88.7 (the best drift, 0, with the largest volatility would
    # pass it after 449 steps).
    kwargs = {"positions": (-20.0, 0.0, 20.0), "mu": 0.05, "sigma": 0.8, "dt": 1 / 365}
    with pytest.warns(sekai.WipeOutWarning):  # 20x equity
        KernelVecEnv(
            TradingKernel(**kwargs, episode_length=500), 2, backend=NumpyBackend(np.float32)
        )
    # At a volatility of 0.01 the drift at 20x is 20 * 0.5 - 0.2**2 / 2 ~ 9.98 a year: over
    # 5000 days (13.7 years) that is some 137, beyond float32.
    calm = {**kwargs, "mu": 0.5, "sigma": 0.01, "episode_length": 5000}
    with pytest.warns(sekai.WipeOutWarning):
        KernelVecEnv(TradingKernel(**calm), 2, backend=NumpyBackend(np.float64))
    refused = r"^TradingEnv's equity may reach infinity within 5000"
    with pytest.raises(ValueError, match=refused), pytest.warns(sekai.WipeOutWarning):
        KernelVecEnv(TradingKernel(**calm), 2, backend=NumpyBackend(np.float32))


def test_portfolio_equity_bound_counts_the_variance_drag() -> None:
    # One asset with mu = sigma**2 / 2 (its price does not drift) over 157 one-year steps in
    # float32: its volatility adds at most 5 * 0.8 * sqrt(157) ~ 50 to the log equity, and
    # holding it at that volatility costs a drift of 0.32 a year, so the equity stays below
    # e**63, inside float32's ~e**88.7 (without the drag the bound would pass it, ~100).
    kwargs = {"n_assets": 1, "mu": 0.32, "sigma": 0.8, "dt": 1.0, "episode_length": 157}
    KernelVecEnv(PortfolioKernel(**kwargs), 1, backend=NumpyBackend(np.float32))
    # Short an asset that falls 0.5 a year: 89 over 178 years, beyond float32's range,
    # while its price (log 100 - 0.5 * 179 ~ -85) stays above its smallest normal (~ -87.3).
    falling = {"n_assets": 1, "mu": -0.5, "sigma": 0.0, "dt": 1.0}
    falling.update(lookback=1, episode_length=178)
    KernelVecEnv(PortfolioKernel(**falling), 1, backend=NumpyBackend(np.float32))  # long only
    with pytest.raises(ValueError, match=r"^PortfolioEnv's equity may reach infinity within") as e:
        short = PortfolioKernel(**falling, allow_short=True)
        KernelVecEnv(short, 1, backend=NumpyBackend(np.float32))
    assert str(e.value).endswith(  # no parameter sets its leverage
        "range. Use a mu nearer 0 or a smaller dt, or a shorter episode_length, or run the "
        "kernel in float64 (JAX: jax_enable_x64)."
    )


def test_the_bound_peaks_at_a_mix_of_holdings() -> None:
    # A drift of 1 a year without risk, or a variance of 1 a year without drift: over 100
    # years the bound peaks holding the second for 6.25 years (5 * sqrt(6.25) = 12.5), the
    # first the rest (93.75): 106.25, above either held alone (100, and 50).
    assert peak_log_equity(([1.0, 0.0], [0.0, 1.0]), 100.0) == pytest.approx(106.25)
    # With a negative drift alone, it peaks before the end, where its slope is 0: at
    # 6.25 years, -6.25 + 12.5.
    assert peak_log_equity(([-1.0], [1.0]), 100.0) == pytest.approx(6.25)
    # late in the time: a drift of -3 over one year peaks at 25 / 36 years, -25 / 12 + 25 / 6
    assert peak_log_equity(([-3.0], [1.0]), 1.0) == pytest.approx(25.0 / 12.0)
    assert peak_log_equity(([math.nan], [1.0]), 1.0) == math.inf  # refused


def test_a_bound_lost_to_overflow_is_refused_not_passed() -> None:
    # At 1e154x the log equity's yearly drift (about -2e306) and variance (4e306) are finite,
    # but over the episode's ~397 years both overflow: -inf + inf, a NaN bound, is refused.
    drift, variance = 0.05e154 - 0.02e308, 0.04e308
    assert math.isnan(peak_log_equity(([0.0, drift], [0.0, variance]), 100_000 / 252))
    refused = r"^TradingEnv's equity may reach infinity within 100000 steps"
    with pytest.raises(ValueError, match=refused), pytest.warns(sekai.WipeOutWarning):
        kernel = TradingKernel(positions=(0.0, 1e154), episode_length=100_000)
        KernelVecEnv(kernel, 1, backend=NumpyBackend(np.float64))


def test_a_replayed_history_is_not_checked_as_the_built_in_gbm() -> None:
    # The built-in GBM (mu 0.05, sigma 0.2) over 2905 one-year steps would leave float32's
    # range; a replay has no GBM, and its prices (100 to about 2000) fit float32.
    prices = 100 * np.exp(np.cumsum(np.full(3000, 0.001)))
    kernel = TradingKernel(prices=prices, dt=1.0, lookback=5, episode_length=2900)
    vec = KernelVecEnv(kernel, 2, backend=NumpyBackend(np.float32))
    vec.reset(seed=0)
    assert vec.get_attr("dt") == [1.0, 1.0]
    assert np.isfinite(vec.step(np.full(2, LONG)).rewards).all()
