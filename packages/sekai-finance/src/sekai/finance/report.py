"""Episode reports: the metrics table of an episode and a PNG chart of its equity and returns."""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.error import MissingDependency
from sekai.finance._values import check_number
from sekai.finance.metrics import (
    PerformanceSummary,
    PnLSummary,
    RecordPerformance,
    VecRecordPerformance,
    equity_curve,
    performance_summary,
)
from sekai.finance.rendering import Column, Dashboard, LineChart, Row, Series, Stat
from sekai.finance.rendering._format import format_number, format_pct
from sekai.finance.rendering._paint import text
from sekai.finance.rendering.chart import Box, Chart, DrawContext
from sekai.rendering import Canvas, Theme

__all__ = ["EpisodeReport", "episode_report"]


class EpisodeReport:
    """What an episode achieved: its metrics (``summary``) and a chart (``save(path)``).

    ``str(report)`` is the summary's table. Build one with ``episode_report``.

    Attributes:
        summary: a ``PerformanceSummary`` (returns), or a ``PnLSummary`` (P&L increments).
        returns: the per-step simple returns, or P&L increments, as a float64 array.
        periods_per_year: the annualisation used.
        title: a name for the chart (the env's id when known).
    """

    def __init__(
        self,
        summary: PerformanceSummary | PnLSummary,
        returns: npt.NDArray[np.float64],
        *,
        periods_per_year: float,
        title: str = "Episode report",
    ) -> None:
        self.summary = summary
        self.returns = np.asarray(returns, dtype=np.float64)
        self.periods_per_year = float(periods_per_year)
        self.title = title

    @property
    def pnl(self) -> bool:
        """Whether the report is about P&L increments (not returns)."""
        return isinstance(self.summary, PnLSummary)

    def __str__(self) -> str:
        return str(self.summary)

    def __repr__(self) -> str:
        return (
            f"EpisodeReport({type(self.summary).__name__}, n_periods={self.summary.n_periods}, "
            f"periods_per_year={self.periods_per_year:g})"
        )

    def to_array(
        self, *, width: int = 900, height: int = 500, theme: str | Theme = "light"
    ) -> npt.NDArray[np.uint8]:
        """The chart as a ``(height, width, 3)`` uint8 image (what ``save`` writes)."""
        if self.pnl:
            level = np.concatenate([[0.0], np.cumsum(self.returns)])
            top = LineChart([Series(_const(level), label="cumulative P&L", static=True)],
                            title="Cumulative P&L", baseline=0.0, drawdown=True, tag=True,
                            height=1.6)  # fmt: skip
            per_step = "P&L per step"
        else:
            level = equity_curve(self.returns)
            top = LineChart([Series(_const(level), label="equity", static=True)],
                            title="Equity (starts at 1)", baseline=1.0, drawdown=True, tag=True,
                            height=1.6)  # fmt: skip
            per_step = "Return per step"
        bars = np.concatenate([[0.0], self.returns])
        bottom = LineChart(
            [Series(_const(bars), style="bars", static=True, color="accent")],
            title=per_step, kind="number" if self.pnl else "pct", baseline=0.0, tag=True,
        )  # fmt: skip
        dashboard = Dashboard(
            Row(Column(top, bottom, width=2.0), _MetricsTable(self.summary)),
            title=self.title, subtitle=self._subtitle(), stats=lambda _: self._stats(),
            horizon=len(self.returns), width=width, height=height, theme=theme, progress=False,
        )  # fmt: skip
        return dashboard.render(_Done(len(self.returns)))

    def save(
        self,
        path: str | os.PathLike[str],
        *,
        width: int = 900,
        height: int = 500,
        theme: str | Theme = "light",
    ) -> Path:
        """Write the chart as a PNG image and return the path (needs Pillow).

        Raises:
            ValueError: ``path`` does not end in ``.png`` (any case), before anything is written
                (as ``RecordFrames.save`` refuses a suffix it cannot write).
            MissingDependency: Pillow is not installed (``pip install 'sekai-core[render]'``).
        """
        target = Path(path)
        if target.suffix.lower() != ".png":
            raise ValueError(
                f"EpisodeReport.save() writes a PNG image, so the path must end in .png, got "
                f"{str(target)!r}."
            )
        image = self.to_array(width=width, height=height, theme=theme)
        try:
            from PIL import Image
        except ImportError as exc:
            raise MissingDependency(
                "EpisodeReport.save needs Pillow: pip install 'sekai-core[render]'",
                package="pillow",
                extra="render",
            ) from exc
        Image.fromarray(image).save(target, format="PNG")
        return target

    def _subtitle(self) -> str:
        what = "P&L increments" if self.pnl else "simple returns"
        return (
            f"{self.summary.n_periods} periods of {what}, annualised with "
            f"{self.periods_per_year:g} periods per year"
        )

    def _stats(self) -> list[Stat]:
        s = self.summary
        if isinstance(s, PnLSummary):
            tone = "up" if s.total_pnl > 0 else ("down" if s.total_pnl < 0 else None)
            return [
                Stat("Total P&L", format_number(s.total_pnl), tone=tone),
                Stat("Sharpe", f"{s.sharpe_ratio:.2f}"),
                Stat("Max drawdown", format_number(s.max_drawdown)),
            ]
        tone = "up" if s.total_return > 0 else ("down" if s.total_return < 0 else None)
        return [
            Stat("Return", format_pct(s.total_return, 2, signed=True), tone=tone),
            Stat("Sharpe", f"{s.sharpe_ratio:.2f}"),
            Stat("Max drawdown", format_pct(s.max_drawdown, 2)),
        ]


def _const(values: np.ndarray) -> Any:
    return lambda _env: values


class _Done:
    """Stands in for an env at the end of the recorded episode (all the charts are static)."""

    def __init__(self, steps: int) -> None:
        self.elapsed_steps = steps


class _MetricsTable(Chart):
    """The summary's table, one metric per row."""

    def __init__(self, summary: PerformanceSummary | PnLSummary) -> None:
        self.rows = [line.split("  ", 1) for line in str(summary).splitlines()]
        self.title = "Metrics"

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u, size = ctx.theme, ctx.unit, ctx.text
        x0, y0, x1, y1 = box
        text(canvas, x0, y0, self.title, theme.foreground, size=size)
        top = y0 + ctx.line + 8 * u
        step = min((y1 - top) / max(len(self.rows), 1), 2.2 * ctx.line)
        for i, (label, value) in enumerate(self.rows):
            y = top + step * (i + 0.5)
            if i % 2 == 0:
                canvas.rect(x0, y - step / 2, x1, y + step / 2, theme.grid, alpha=0.5)
            text(canvas, x0 + 4 * u, y, label.strip(), theme.muted, size=size, anchor="lm")
            text(canvas, x1 - 4 * u, y, value.strip(), theme.foreground, size=size, anchor="rm")


Recorder = RecordPerformance | VecRecordPerformance


def _find_recorder(env: Any) -> Recorder | None:
    """The ``RecordPerformance`` (or, in a vector env, ``VecRecordPerformance``) among the
    wrappers of ``env``, outermost first."""
    current = env
    for _ in range(1000):  # a wrapper chain is never this deep; guards against cycles
        if isinstance(current, (RecordPerformance, VecRecordPerformance)):
            return current
        inner = getattr(current, "env", None)
        if inner is None:
            inner = getattr(current, "venv", None)
        if inner is None or inner is current:
            return None
        current = inner
    return None


def _env_title(env: Any) -> str:
    spec = getattr(getattr(env, "unwrapped", env), "spec", None) or getattr(env, "spec", None)
    name = getattr(spec, "id", None)
    return f"{name} episode" if name else "Episode report"


def episode_report(source: Any, *, periods_per_year: float | None = None) -> EpisodeReport:
    """Summarise an episode: from a ``RecordPerformance``-wrapped env or a return series.

    Args:
        source: an env wrapped in ``RecordPerformance`` (possibly inside more wrappers) after
            at least one finished episode (its last one is reported; P&L mode gives a
            ``PnLSummary``), a vector env wrapped in ``VecRecordPerformance`` (the episode
            that finished last, of sub-env ``last_env_index``), or a 1-D array of simple
            per-period returns.
        periods_per_year: annualisation; None uses the recorder's (for an env) or 252.

    Raises:
        ValueError: the env has no finished episode yet, or the returns are not a valid
            1-D finite series; ``periods_per_year`` is not a finite number > 0.
        TypeError: ``source`` is neither an env with ``RecordPerformance`` nor a series
            (None, a number, a string); ``periods_per_year`` is not a number (bools included).
    """
    if periods_per_year is not None:
        check_number("periods_per_year", periods_per_year, "gt0")
    recorder = _find_recorder(source)
    if recorder is None:
        if hasattr(source, "step") and hasattr(source, "reset"):
            raise TypeError(
                f"episode_report() reads the per-step record of RecordPerformance, but "
                f"{type(source).__name__} has none: wrap the env in "
                "sekai.finance.RecordPerformance (a vector env in VecRecordPerformance) before "
                "running the episode."
            )
        needs = (
            "episode_report() needs source to be a RecordPerformance-wrapped env or a 1-D "
            f"array of returns, got {type(source).__name__}"
        )
        if source is None or isinstance(source, (str, bytes, numbers.Number, np.generic)):
            raise TypeError(f"{needs} {source!r}.")
        try:
            returns = np.asarray(source, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{needs}.") from exc
        ppy = 252.0 if periods_per_year is None else float(periods_per_year)
        return EpisodeReport(performance_summary(returns, ppy), returns, periods_per_year=ppy)
    episode = recorder._last_episode  # what the recorder's own summary was computed from
    if recorder.last_summary is None or episode is None:
        raise ValueError(
            "The env has no finished episode to report yet: run an episode to its end "
            "(terminated or truncated) through RecordPerformance first."
        )
    summary: PerformanceSummary | PnLSummary = recorder.last_summary
    ppy = _recorder_ppy(recorder)
    if periods_per_year is not None and float(periods_per_year) != ppy:
        ppy = float(periods_per_year)
        summary = episode.summary(ppy)  # the recorder's rule, at another annualisation
    return EpisodeReport(summary, episode.returns, periods_per_year=ppy, title=_env_title(source))


def _recorder_ppy(recorder: Recorder) -> float:
    return float(recorder.last_periods_per_year)
