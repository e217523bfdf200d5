"""Performance metrics of a series of simple per-period returns."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance._values import check_number, is_real, real_array, real_float, too_large

__all__ = [
    "annualized_return",
    "annualized_volatility",
    "calmar_ratio",
    "conditional_value_at_risk",
    "drawdown_series",
    "equity_curve",
    "hit_rate",
    "max_drawdown",
    "returns_from_equity",
    "sharpe_ratio",
    "sortino_ratio",
    "total_return",
    "value_at_risk",
]

_EPS = float(np.finfo(np.float64).eps)


def series(values: Any, name: str = "returns") -> np.ndarray:
    """Validate a non-empty, finite 1-D series and return it as float64 (``TypeError`` for
    what is not real numbers: bools, strings, None)."""
    r = values if type(values) is np.ndarray and values.dtype == np.float64 else None
    if r is None:
        r = real_array(name, values)
    if r.ndim != 1:
        raise ValueError(f"{name} must be a 1-D series, got shape {r.shape}.")
    if r.size == 0:
        raise ValueError(f"{name} must not be empty.")
    if not np.all(np.isfinite(r)):
        raise ValueError(f"{name} must be finite (no NaN or inf).")
    return r


def periods(value: object) -> float:
    """Validate ``periods_per_year`` (a finite number > 0)."""
    return check_number("periods_per_year", value, "gt0")


def rounding_std(x: np.ndarray, *, scale: float = 0.0) -> float:
    """``std(x, ddof=1)``, or 0 for fewer than 2 values or a std within rounding of 0."""
    if x.size < 2:
        return 0.0
    std = float(np.std(x, ddof=1))
    tolerance = 16 * _EPS * (1.0 + max(float(np.max(np.abs(x))), scale))
    return 0.0 if std <= tolerance else std


def _excess(r: np.ndarray, per_period: float) -> np.ndarray:
    e = r - per_period
    tolerance = 16 * _EPS * (1.0 + np.abs(r) + abs(per_period))
    e[np.abs(e) <= tolerance] = 0.0
    return e


def equity_curve(returns: Any, initial: float = 1.0) -> np.ndarray:
    """``(n+1,)`` equity: ``initial·[1, cumprod(1 + r)]``, 0 from the first wipe-out on."""
    r = series(returns)
    start = check_number("initial", initial, "gt0")
    growth = np.maximum(1.0 + r, 0.0)
    curve = np.empty(r.size + 1)
    curve[0] = 1.0
    np.cumprod(growth, out=curve[1:])
    return start * curve


def returns_from_equity(equity: Any) -> np.ndarray:
    """Inverse of ``equity_curve``: a wipe-out gives exactly −1, then zeros."""
    e = series(equity, "equity")
    if e.size < 2:
        raise ValueError("equity needs at least 2 values.")
    if e[0] <= 0:
        raise ValueError(f"equity must start > 0, got {e[0]}.")
    if (e < 0).any():
        raise ValueError("equity must not be negative (limited liability floors it at 0).")
    dead = np.flatnonzero(e == 0)
    if dead.size and (e[dead[0] :] != 0).any():
        raise ValueError("equity must stay 0 after a wipe-out.")
    previous = e[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(previous > 0, e[1:] / np.where(previous > 0, previous, 1.0) - 1.0, 0.0)
    return out


def total_return(returns: Any) -> float:
    """``prod(1 + r) − 1`` (at least −1)."""
    return float(equity_curve(returns)[-1] - 1.0)


def annualized_return(returns: Any, periods_per_year: float = 252) -> float:
    """``exp(Σ log1p(r)·ppy/n) − 1``; −1 after a wipe-out; may be inf."""
    r = series(returns)
    ppy = periods(periods_per_year)
    if (r <= -1.0).any():
        return -1.0
    with np.errstate(over="ignore"):
        return float(np.expm1(np.sum(np.log1p(r)) * ppy / r.size))


def annualized_volatility(returns: Any, periods_per_year: float = 252) -> float:
    """``std(r, ddof=1)·sqrt(ppy)``; 0 for fewer than 2 periods or a constant series."""
    r = series(returns)
    return rounding_std(r) * float(np.sqrt(periods(periods_per_year)))


def sharpe_ratio(returns: Any, periods_per_year: float = 252, risk_free: float = 0.0) -> float:
    """``mean(e)/std(e, ddof=1)·sqrt(ppy)`` with ``e = r − risk_free/ppy``; 0 when std is 0."""
    r = series(returns)
    ppy = periods(periods_per_year)
    e = _excess(r, check_number("risk_free", risk_free) / ppy)
    std = rounding_std(e)
    return 0.0 if std == 0.0 else float(np.mean(e) / std * np.sqrt(ppy))


def sortino_ratio(returns: Any, periods_per_year: float = 252, target: float = 0.0) -> float:
    """``mean(e)/sqrt(mean(min(e, 0)²))·sqrt(ppy)``; no downside: inf if mean > 0 else 0."""
    r = series(returns)
    ppy = periods(periods_per_year)
    e = _excess(r, check_number("target", target))
    mean = float(np.mean(e))
    downside = float(np.sqrt(np.mean(np.minimum(e, 0.0) ** 2)))
    if downside == 0.0:
        return float("inf") if mean > 0 else 0.0
    return float(mean / downside * np.sqrt(ppy))


def drawdown_series(returns: Any) -> np.ndarray:
    """``(n+1,)``: ``1 − equity/running_peak`` in [0, 1], first value 0."""
    curve = equity_curve(returns)
    peak = np.maximum.accumulate(curve)
    return np.clip(1.0 - curve / peak, 0.0, 1.0)


def max_drawdown(returns: Any) -> float:
    """The largest drawdown."""
    return float(np.max(drawdown_series(returns)))


def calmar_ratio(returns: Any, periods_per_year: float = 252) -> float:
    """Annualised return over max drawdown; no drawdown: inf if the return > 0 else 0."""
    annual = annualized_return(returns, periods_per_year)
    drawdown = max_drawdown(returns)
    if drawdown == 0.0:
        return float("inf") if annual > 0 else 0.0
    return float(annual / drawdown)


def _level(level: object) -> float:
    if not is_real(level):
        raise TypeError(f"level must be a number in (0, 1), got {type(level).__name__} {level!r}.")
    number = real_float(level)  # a Decimal's NaN refuses to be compared
    if number is None or not 0 < number < 1:
        shown = too_large(level) if number is None else repr(level)  # not its 401 digits
        raise ValueError(f"level must be a number in (0, 1), got {shown}.")
    return number


def _tail_probability(level: float) -> float:
    """``1 − level``, rounded to 12 decimals: ``1 − 0.8`` is 0.19999999999999996 in binary, which
    would put the 20 % quantile a hair below a return it should equal and drop it from the tail."""
    return round(1.0 - _level(level), 12)


def value_at_risk(returns: Any, level: float = 0.95) -> float:
    """``−quantile(r, 1 − level)`` (linear interpolation): a positive number is a loss."""
    r = series(returns)
    return float(-np.quantile(r, _tail_probability(level)))


def conditional_value_at_risk(returns: Any, level: float = 0.95) -> float:
    """Minus the mean of the returns at or below the ``1 − level`` quantile (>= VaR)."""
    r = series(returns)
    q = np.quantile(r, _tail_probability(level))
    tail = r[r <= q]
    return float(-np.mean(tail)) if tail.size else float(-q)


def hit_rate(returns: Any) -> float:
    """Positive periods over non-zero periods (0 when every period is 0)."""
    r = series(returns)
    nonzero = int(np.count_nonzero(r))
    return 0.0 if nonzero == 0 else float(np.count_nonzero(r > 0) / nonzero)
