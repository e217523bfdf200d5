"""One episode's performance read off infos: the mechanism behind both record wrappers."""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from sekai.finance._values import check_number
from sekai.finance.metrics.summary import (
    PerformanceSummary,
    PnLSummary,
    performance_summary,
    pnl_summary,
)

__all__ = ["EpisodeRecorder", "FinishedEpisode", "RecordSettings", "Summary", "mean_fields"]

Summary = PerformanceSummary | PnLSummary


def _key(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        allowed = "a str or None" if optional else "a str"
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__}.")


def _missing(info: dict[str, Any], key: str, hint: str = "") -> KeyError:
    return KeyError(f"info has no {key!r}; available keys: {sorted(map(str, info))}{hint}")


def _equity_hint(info: dict[str, Any]) -> str:
    """What to pass instead when a step's info has no equity (a market-making session's has a
    cumulative wealth that starts from 0, which has no returns to compound)."""
    if "wealth" in info:
        return (
            ". It has 'wealth', a cumulative P&L: pass pnl_key='wealth' to summarise its "
            "increments (P&L mode) instead of equity returns."
        )
    return (
        ". Pass equity_key= the info key of the account's value, or pnl_key= that of a "
        "cumulative P&L (P&L mode)."
    )


def _read(info: dict[str, Any], key: str) -> float:
    if key not in info:
        raise _missing(info, key)
    value = info[key]
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        value = value.reshape(())[()]  # one number in an array
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        detail = ""
        if isinstance(value, np.ndarray):  # one entry of another kind, or several entries
            detail = f" of dtype {value.dtype}" if value.size == 1 else f" of shape {value.shape}"
        raise TypeError(
            f"info[{key!r}] must be a number (one per step), got {type(value).__name__}{detail}."
        )
    number = float(value)
    if not np.isfinite(number):
        raise ValueError(f"info[{key!r}] must be finite, got {number}.")
    return number


@dataclass(frozen=True)
class RecordSettings:
    """The validated arguments of ``RecordPerformance`` / ``VecRecordPerformance``."""

    periods_per_year: float | None
    equity_key: str
    pnl_key: str | None
    turnover_key: str | None
    cost_key: str | None
    risk_free: float
    deque_size: int

    def __post_init__(self) -> None:
        _key("equity_key", self.equity_key, optional=False)
        _key("pnl_key", self.pnl_key, optional=True)
        _key("turnover_key", self.turnover_key, optional=True)
        _key("cost_key", self.cost_key, optional=True)
        size = self.deque_size
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral):
            raise TypeError(
                f"deque_size must be a positive int, got {type(size).__name__} {size!r}."
            )
        if size < 1:
            raise ValueError(f"deque_size must be a positive int, got {size!r}.")
        ppy = self.periods_per_year
        ppy = None if ppy is None else check_number("periods_per_year", ppy, "gt0")
        object.__setattr__(self, "periods_per_year", ppy)
        object.__setattr__(self, "risk_free", check_number("risk_free", self.risk_free))
        if self.pnl_key is not None and self.risk_free != 0.0:
            # A P&L in money has no capital to earn a rate on: pnl_summary takes no rate.
            raise ValueError(
                f"risk_free={self.risk_free!r} applies to returns, but pnl_key={self.pnl_key!r} "
                "summarises P&L increments, whose Sharpe ratio has no risk-free rate; leave "
                "risk_free at 0.0, or record equity returns (equity_key=) to use one."
            )
        object.__setattr__(self, "deque_size", int(size))

    def summaries(self) -> deque[Summary]:
        """An empty deque holding the last ``deque_size`` summaries."""
        return deque(maxlen=self.deque_size)


@dataclass(frozen=True)
class FinishedEpisode:
    """What a finished episode's summary is computed from, at any annualisation: the
    recorder's own summary and ``episode_report(periods_per_year=...)``'s both come from
    ``summary()``, so they follow one rule.

    Attributes:
        returns: the per-step returns, or P&L increments, as a float64 array.
        pnl_scale: P&L mode: the largest |value| of the wealth read, the reset value included
            (the magnitude the increments were differenced from, for the rounding rule); None
            in equity mode.
        turnover: the per-step turnover, or None when the infos had none.
        costs: the per-step costs, or None when the infos had none.
        risk_free: the annual risk-free rate of the Sharpe ratio.
    """

    returns: np.ndarray
    pnl_scale: float | None
    turnover: list[float] | None
    costs: list[float] | None
    risk_free: float

    def summary(self, periods_per_year: float) -> Summary:
        """The episode's summary annualised with ``periods_per_year``."""
        if self.pnl_scale is not None:
            return pnl_summary(self.returns, periods_per_year, scale=self.pnl_scale)
        return performance_summary(
            self.returns,
            periods_per_year,
            risk_free=self.risk_free,
            turnover=self.turnover,
            costs=self.costs,
        )


class EpisodeRecorder:
    """The episode in progress of one env: per-step returns (or P&L increments), turnover and
    costs read off its infos; ``finish()`` summarises it.

    Equity mode reads ``info[equity_key]`` (a step that takes equity to <= 0 records -1, then
    zeros); P&L mode (``pnl_key``) reads a cumulative wealth and records its increments.
    ``periods_per_year`` None takes ``1 / info["dt"]`` from the first reset info that has one
    (252 when none does); a ``dt`` that is not a positive number is refused.
    """

    def __init__(self, settings: RecordSettings) -> None:
        self.settings = settings
        self._ppy = settings.periods_per_year
        self.begin({})

    def begin(self, info: dict[str, Any]) -> None:
        """Start an episode from its reset info (``{}`` when there is none)."""
        settings = self.settings
        self._returns: list[float] = []
        self._turnover: list[float] = []
        self._costs: list[float] = []
        self._scale = 0.0
        self._dead = False
        if self._ppy is None and "dt" in info:
            dt = _read(info, "dt")
            if dt <= 0:  # no annualisation follows from it: 252 in its place would mislead
                raise ValueError(
                    f"info['dt'] must be > 0 (years per step) to annualise, got {dt}; pass "
                    "periods_per_year= to annualise otherwise."
                )
            self._ppy = 1.0 / dt
        if settings.pnl_key is not None:
            self._last = _read(info, settings.pnl_key) if settings.pnl_key in info else 0.0
            self._scale = abs(self._last)
        else:
            key = settings.equity_key
            self._last = _read(info, key) if key in info else 1.0

    def record(self, info: dict[str, Any]) -> None:
        """Record one step from its info."""
        settings = self.settings
        if settings.pnl_key is not None:
            value = _read(info, settings.pnl_key)
            self._returns.append(value - self._last)
            self._scale = max(self._scale, abs(value))
            self._last = value
            return
        if settings.equity_key not in info:
            raise _missing(info, settings.equity_key, _equity_hint(info))
        equity = _read(info, settings.equity_key)
        if self._dead:
            self._returns.append(0.0)
        elif equity <= 0 or self._last <= 0:
            self._returns.append(-1.0)
            self._dead = True
        else:
            self._returns.append(equity / self._last - 1.0)
        self._last = equity
        self._collect(info, settings.turnover_key, self._turnover, "turnover_key")
        self._collect(info, settings.cost_key, self._costs, "cost_key")

    def _collect(
        self, info: dict[str, Any], key: str | None, values: list[float], setting: str
    ) -> None:
        """Append ``info[key]`` when present; an env reports it at every step of an episode or
        at none, so that the series covers the returns' periods (a summary of part of them
        would be silently wrong)."""
        if key is None:
            return
        step = len(self._returns)  # this step's number, 1 for the first
        if key in info:
            if len(values) != step - 1:
                earlier = "step 1" if step == 2 else f"steps 1 to {step - 1}"
                raise ValueError(
                    f"info[{key!r}] appeared at step {step} of the episode but {earlier} had "
                    f"none: it must be in every step's info or in none (pass {setting}=None to "
                    "leave it out)."
                )
            values.append(_read(info, key))
        elif values:
            raise KeyError(
                f"info has no {key!r} at step {step} of the episode, though the steps before had "
                f"it: it must be in every step's info or in none (pass {setting}=None to leave "
                f"it out); available keys: {sorted(map(str, info))}"
            )

    @property
    def periods_per_year(self) -> float:
        """The annualisation in use: the setting, else ``1 / dt`` of the infos, else 252."""
        return self._ppy if self._ppy is not None else 252.0

    def finish(self) -> tuple[Summary, FinishedEpisode]:
        """The finished episode's summary and its record (``FinishedEpisode``)."""
        settings = self.settings
        episode = FinishedEpisode(
            returns=np.asarray(self._returns, dtype=np.float64),
            pnl_scale=None if settings.pnl_key is None else self._scale,
            turnover=self._turnover or None,
            costs=self._costs or None,
            risk_free=settings.risk_free,
        )
        return episode.summary(self.periods_per_year), episode


def mean_fields(summaries: Iterable[Summary]) -> dict[str, float]:
    """Mean of every numeric field over ``summaries`` (fields that are always None left out)."""
    stored = list(summaries)
    if not stored:
        return {}
    result: dict[str, float] = {}
    for field in fields(stored[0]):
        values = [getattr(s, field.name) for s in stored]
        numbers_only = [v for v in values if v is not None]
        if numbers_only:
            result[field.name] = float(np.mean(numbers_only))
    return result
