"""TradingVecEnv's built-in GBM has the model's log-return moments (finance.md §11.4, §12.1).

The native env simulates the GBM its own way (online, one step of normals per ``step()``), so only
the distribution is specified: log returns ``(μ − σ²/2)·dt + σ·sqrt(dt)·Z``, independent across
sub-envs and steps, both in the lookback window drawn at reset and in every step after it.
"""

from __future__ import annotations

import numpy as np
import pytest

from sekai.envs.finance.vector.trading import TradingVecEnv

N_ENVS, LOOKBACK, STEPS = 4096, 30, 10
MU, SIGMA, DT = 0.3, 0.5, 0.25  # non-default; a quarter-year step makes the drift term visible
MEAN, SD = (MU - 0.5 * SIGMA**2) * DT, SIGMA * np.sqrt(DT)


def mean_z(sample: np.ndarray, mean: float, sd: float) -> float:
    return float((sample.mean() - mean) / (sd / np.sqrt(sample.size)))


def sd_z(sample: np.ndarray, sd: float) -> float:
    # the sample sd of n normals has a relative standard error of about sqrt(1 / (2n))
    return float((sample.std() / sd - 1.0) / np.sqrt(0.5 / sample.size))


@pytest.fixture(scope="module")
def samples() -> dict[str, np.ndarray]:
    vec = TradingVecEnv(N_ENVS, mu=MU, sigma=SIGMA, dt=DT, lookback=LOOKBACK, episode_length=50)
    reset = vec.reset(seed=11)
    assert {info["dt"] for info in reset.infos} == {DT}
    window = reset.observations[:, :LOOKBACK].astype(np.float64)  # (N, lookback)
    action = np.ones(N_ENVS, np.int64)  # flat: the market does not depend on the action
    newest = [vec.step(action).observations[:, LOOKBACK - 1] for _ in range(STEPS)]
    return {"window": window, "steps": np.stack(newest, axis=1).astype(np.float64)}


@pytest.mark.parametrize("part", ["window", "steps"])
def test_log_returns_have_the_gbm_mean_and_sd(samples: dict[str, np.ndarray], part: str) -> None:
    """Catches a drift without the Itô term (mean μ·dt, over 25 standard errors off here), σ·dt or σ
    in place of σ·sqrt(dt), the default μ/σ used instead of the ones passed, and ``dt`` ignored;
    the tolerance is tight enough to tell σ = 0.5 from σ = 0.4 (checked below)."""
    sample = samples[part].ravel()
    assert abs(mean_z(sample, MEAN, SD)) < 4, mean_z(sample, MEAN, SD)
    assert abs(sd_z(sample, SD)) < 4, sd_z(sample, SD)
    # the same checks reject the GBM with sigma 0.4 (its mean and sd both differ)
    wrong_mean, wrong_sd = (MU - 0.5 * 0.4**2) * DT, 0.4 * np.sqrt(DT)
    assert abs(mean_z(sample, wrong_mean, wrong_sd)) > 4
    assert abs(sd_z(sample, wrong_sd)) > 4


@pytest.mark.parametrize("part", ["window", "steps"])
def test_returns_are_independent_across_sub_envs_and_steps(
    samples: dict[str, np.ndarray], part: str
) -> None:
    """Every step's cross-section over the sub-envs has the full sd, and consecutive steps are
    uncorrelated. Catches one path shared by all sub-envs (zero cross-sectional sd) and a block of
    normals reused for the next step (correlation 1), which the pooled moments above miss."""
    sample = samples[part]
    for column in sample.T:  # one step, every sub-env
        assert abs(sd_z(column, SD)) < 5
        assert abs(mean_z(column, MEAN, SD)) < 5
    lag = [np.corrcoef(sample[:, j], sample[:, j + 1])[0, 1] for j in range(sample.shape[1] - 1)]
    assert np.all(np.abs(lag) < 5 / np.sqrt(N_ENVS)), lag
