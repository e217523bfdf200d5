"""Episode reports: metrics from RecordPerformance or a return series, and the PNG chart."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.finance.metrics import (
    PerformanceSummary,
    PnLSummary,
    RecordPerformance,
    VecRecordPerformance,
    performance_summary,
)
from sekai.finance.report import EpisodeReport, episode_report
from sekai.rendering import Theme
from sekai.wrappers import TimeLimit


def _trading_episode(**kwargs: Any) -> RecordPerformance:
    env = RecordPerformance(TradingEnv(episode_length=30, lookback=5), **kwargs)
    env.reset(seed=0)
    k = 0
    while not env.step((2, 1, 0)[k // 10]).done:
        k += 1
    return env


def test_a_report_of_a_recorded_episode_holds_its_summary_and_returns() -> None:
    env = _trading_episode()
    report = episode_report(env)
    assert isinstance(report, EpisodeReport)
    assert report.summary == env.last_summary
    assert isinstance(report.summary, PerformanceSummary) and not report.pnl
    np.testing.assert_array_equal(report.returns, env.last_returns)
    assert report.periods_per_year == pytest.approx(252.0)  # 1 / dt
    assert str(report) == str(env.last_summary)
    assert report.summary.mean_turnover is not None  # turnover and costs were recorded


def test_an_explicit_annualisation_recomputes_the_ratios_and_keeps_turnover() -> None:
    env = _trading_episode()
    daily = episode_report(env)
    monthly = episode_report(env, periods_per_year=12)
    assert monthly.periods_per_year == 12
    assert isinstance(daily.summary, PerformanceSummary)
    assert isinstance(monthly.summary, PerformanceSummary)
    assert monthly.summary.sharpe_ratio == pytest.approx(
        daily.summary.sharpe_ratio * math.sqrt(12 / 252)
    )
    assert monthly.summary.total_return == daily.summary.total_return
    assert monthly.summary.mean_turnover == daily.summary.mean_turnover


def test_the_risk_free_rate_is_in_the_recorded_and_the_recomputed_summary() -> None:
    env = _trading_episode(risk_free=0.03, turnover_key=None, cost_key=None)
    returns, ppy = env.last_returns, env.last_periods_per_year
    assert env.last_summary == performance_summary(returns, ppy, risk_free=0.03)
    assert env.last_summary != performance_summary(returns, ppy)  # the rate shows
    monthly = episode_report(env, periods_per_year=12)
    assert monthly.summary == performance_summary(returns, 12, risk_free=0.03)


def _finish_episode(env: RecordPerformance, action: int) -> None:
    while not env.step(action).done:
        pass


def test_a_report_after_more_episodes_is_of_the_last_one() -> None:
    env = RecordPerformance(TradingEnv(episode_length=30, lookback=5))
    env.reset(seed=0)
    _finish_episode(env, 2)
    first = env.last_returns
    env.reset()
    _finish_episode(env, 0)
    last = env.last_summary
    assert isinstance(last, PerformanceSummary)
    for periods_per_year in (None, 12):  # the recorder's summary, and one recomputed
        report = episode_report(env, periods_per_year=periods_per_year)
        assert not np.array_equal(report.returns, first)
        assert report.summary.total_return == last.total_return
        assert report.returns.tolist() == env.last_returns.tolist()
        assert np.prod(1.0 + report.returns) - 1.0 == pytest.approx(last.total_return)


def test_a_vector_report_after_more_episodes_is_of_the_last_one() -> None:
    vec = VecRecordPerformance(sekai.make_vec("Trading-v0", 2, episode_length=5))
    vec.reset(seed=0)
    firsts = []
    for step in range(15):  # three episodes a sub-env, the last one ending at step 15
        vec.step(np.array([2, 0]) if step < 5 else np.array([1, 2]))
        if step == 4:
            firsts.append(vec.last_returns)
    last = vec.last_summary
    assert isinstance(last, PerformanceSummary)
    for periods_per_year in (None, 12):
        report = episode_report(vec, periods_per_year=periods_per_year)
        assert not np.array_equal(report.returns, firsts[0])
        assert report.summary.total_return == last.total_return
        assert np.prod(1.0 + report.returns) - 1.0 == pytest.approx(last.total_return)
    vec.close()


def test_the_recorder_is_found_inside_other_wrappers() -> None:
    inner = _trading_episode()
    outer = TimeLimit(inner, max_episode_steps=1000)
    assert episode_report(outer).summary == inner.last_summary


def test_a_vector_recorder_reports_the_episode_that_finished_last() -> None:
    vec = sekai.VecRecordEpisodeStatistics(
        VecRecordPerformance(sekai.make_vec("Trading-v0", 2, episode_length=5))
    )
    vec.reset(seed=0)
    for _ in range(5):
        vec.step(np.array([2, 0]))
    recorder = vec.venv
    report = episode_report(vec)
    assert report.summary == recorder.last_summary
    np.testing.assert_array_equal(report.returns, recorder.last_returns)
    assert report.periods_per_year == pytest.approx(recorder.last_periods_per_year)
    vec.close()


def test_pnl_mode_reports_a_pnl_summary() -> None:
    market_maker = MarketMakingEnv(n_steps=30)
    env = RecordPerformance(market_maker, pnl_key="wealth")
    env.reset(seed=0)
    while not env.step(market_maker.avellaneda_stoikov_action()).done:
        pass
    report = episode_report(env)
    assert report.pnl and isinstance(report.summary, PnLSummary)
    assert report.summary.total_pnl == pytest.approx(market_maker.wealth)
    assert "Total P&L" in str(report)
    assert report.to_array().shape == (500, 900, 3)


def test_an_explicit_annualisation_recomputes_a_pnl_summary() -> None:
    env = RecordPerformance(sekai.make("MarketMaking-v0"), pnl_key="wealth")
    env.reset(seed=0)
    while not env.step(np.array([1.0, 1.0], np.float32)).done:
        pass
    assert env.last_periods_per_year == 200.0
    own, other = episode_report(env), episode_report(env, periods_per_year=1000.0)
    assert isinstance(own.summary, PnLSummary) and isinstance(other.summary, PnLSummary)
    assert other.summary.sharpe_ratio == pytest.approx(
        own.summary.sharpe_ratio * math.sqrt(1000.0 / 200.0), rel=1e-12
    )
    unchanged = ("n_periods", "total_pnl", "mean_pnl", "pnl_volatility", "max_drawdown")
    assert [getattr(other.summary, name) for name in unchanged] == [
        getattr(own.summary, name) for name in unchanged
    ]
    assert repr(own) == "EpisodeReport(PnLSummary, n_periods=200, periods_per_year=200)"
    assert repr(other) == "EpisodeReport(PnLSummary, n_periods=200, periods_per_year=1000)"


class _Ledger(sekai.Env[np.ndarray, int]):
    """A cumulative wealth read off a list: ``start`` at reset, then one value per step."""

    observation_space = sekai.Box(-1.0, 1.0, (1,))
    action_space = sekai.Discrete(2)

    def __init__(self, wealth: list[float], start: float) -> None:
        self.wealth, self.start = wealth, start

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[np.ndarray]:
        self.t = 0
        return sekai.ResetResult(np.zeros(1, np.float32), {"wealth": self.start})

    def step(self, action: int) -> sekai.StepResult[np.ndarray]:
        self.t += 1
        done = self.t >= len(self.wealth)
        info = {"wealth": self.wealth[self.t - 1]}
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, done, info)


_ULP = float(np.spacing(1e12))
_STEADY_OFFSETS = [3, -4, 0, 2, -1, 4, -3, 1, -2, 0, 3, -4, 2, -1, 0, 4, -2, 1, -3, 2]
_WEALTH = {
    # at 1e12 from the reset on, moving by an ulp: the increments are rounding noise
    "reset at 1e12": ([1e12 + _ULP, 1e12, 1e12 + 2 * _ULP, 1e12 + _ULP, 1e12 + 3 * _ULP], 1e12),
    # from 0, a steady 1e11 a step, each value a few ulps of 2e12 off
    "steady from 0": (
        [k * 1e11 + d * float(np.spacing(2e12)) for k, d in enumerate(_STEADY_OFFSETS, 1)],
        0.0,
    ),
}


@pytest.mark.parametrize("case", list(_WEALTH))
def test_pnl_rounding_noise_is_no_volatility_at_any_annualisation(case: str) -> None:
    wealth, start = _WEALTH[case]
    env = RecordPerformance(_Ledger(wealth, start), pnl_key="wealth")
    env.reset()
    while not env.step(0).done:
        pass
    recorded = env.last_summary
    report = episode_report(env, periods_per_year=365.0).summary
    assert isinstance(recorded, PnLSummary) and isinstance(report, PnLSummary)
    assert (recorded.pnl_volatility, recorded.sharpe_ratio) == (0.0, 0.0)
    assert (report.pnl_volatility, report.sharpe_ratio) == (0.0, 0.0)
    assert report.total_pnl == recorded.total_pnl


def test_a_report_of_a_return_series() -> None:
    returns = np.random.default_rng(0).normal(0.0005, 0.01, 100)
    report = episode_report(returns)
    assert report.summary == performance_summary(returns, 252)
    assert episode_report(returns, periods_per_year=52).summary == performance_summary(returns, 52)


def test_report_errors_say_what_is_missing() -> None:
    fresh = RecordPerformance(TradingEnv(episode_length=5, lookback=3))
    fresh.reset(seed=0)
    with pytest.raises(ValueError, match="no finished episode"):
        episode_report(fresh)
    with pytest.raises(TypeError, match=r"wrap the env in sekai\.finance\.RecordPerformance"):
        episode_report(sekai.make("Trading-v0"))
    with pytest.raises(TypeError, match="1-D array of returns"):
        episode_report({"not": "returns"})
    with pytest.raises(ValueError):
        episode_report(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="periods_per_year"):
        episode_report(np.zeros(3), periods_per_year=0)


@pytest.mark.parametrize("source", [None, 0.1, np.float64(0.1), "returns"])
def test_report_of_what_is_not_a_series_is_a_type_error_naming_source(source: object) -> None:
    with pytest.raises(TypeError, match=r"source to be a RecordPerformance-wrapped env"):
        episode_report(source)


@pytest.mark.parametrize(
    ("periods", "error"), [("252", TypeError), (True, TypeError), (float("inf"), ValueError)]
)
def test_report_periods_per_year_is_a_finite_number(periods: object, error: type) -> None:
    with pytest.raises(error, match="periods_per_year must be a"):
        episode_report(np.zeros(3), periods_per_year=periods)


def test_save_writes_a_png_chart(tmp_path: Path) -> None:
    from PIL import Image

    report = episode_report(_trading_episode())
    path = report.save(tmp_path / "report.png")
    assert path == tmp_path / "report.png"
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (900, 500)
        np.testing.assert_array_equal(np.asarray(image.convert("RGB")), report.to_array())
    dark = report.to_array(width=600, height=400, theme="dark")
    assert dark.shape == (400, 600, 3) and tuple(dark[1, 1]) == Theme.dark().background


@pytest.mark.parametrize("name", ["report.gif", "report.jpg", "report", "report.png.txt"])
def test_save_refuses_a_path_that_is_not_png_before_writing(tmp_path: Path, name: str) -> None:
    report = episode_report(np.full(5, 0.01))
    with pytest.raises(
        ValueError,
        match=rf"^EpisodeReport\.save\(\) writes a PNG image, so the path must end in \.png, "
        rf"got '.*{re.escape(name)}'\.$",
    ):
        report.save(tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    assert report.save(tmp_path / "report.PNG").is_file()


def test_save_without_pillow_raises_missing_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = episode_report(np.full(5, 0.01))
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(sekai.MissingDependency) as info:
        report.save(tmp_path / "report.png")
    assert isinstance(info.value, ImportError)
    assert str(info.value) == ("EpisodeReport.save needs Pillow: pip install 'sekai-core[render]'")
    assert not (tmp_path / "report.png").exists()
