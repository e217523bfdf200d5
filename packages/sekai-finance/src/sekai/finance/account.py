"""Account accounting: target weights, one period's growth, drift and financing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.finance._values import check_number, real_array

__all__ = ["AccountConfig", "Settlement", "project_weights", "settle", "turnover"]


@dataclass(frozen=True)
class AccountConfig:
    """The account's rules.

    Args:
        allow_short: whether weights may be negative.
        max_leverage: gross exposure limit ``L`` (> 0).
        cash_rate: interest on positive cash, per year (may be negative).
        margin_rate: interest on borrowed cash, per year; None means ``cash_rate``.
        borrow_rate: fee on the short market value, per year (>= 0).
    """

    allow_short: bool = False
    max_leverage: float = 1.0
    cash_rate: float = 0.0
    margin_rate: float | None = None
    borrow_rate: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.allow_short, (bool, np.bool_)):
            raise TypeError(f"allow_short must be a bool, got {type(self.allow_short).__name__}.")
        check_number("max_leverage", self.max_leverage, "gt0")
        check_number("cash_rate", self.cash_rate)
        if self.margin_rate is not None:
            check_number("margin_rate", self.margin_rate)
        check_number("borrow_rate", self.borrow_rate, "ge0")

    @property
    def effective_margin_rate(self) -> float:
        """The rate charged on negative cash."""
        return float(self.cash_rate if self.margin_rate is None else self.margin_rate)


@dataclass(frozen=True)
class Settlement:
    """One period's result: growth factor, drifted weights, financing and wipe-out flags."""

    growth: Any
    drifted: Any
    financing: Any
    wiped_out: Any


def _check_config(config: object) -> None:
    if not isinstance(config, AccountConfig):
        raise TypeError(
            f"config must be an AccountConfig, got {type(config).__name__}; e.g. "
            "AccountConfig(allow_short=False)."
        )


def project_weights(
    scores: Any, tradable: Any, config: AccountConfig, *, cash_score: Any = None
) -> np.ndarray:
    """Turn scores ``(..., n)`` into weights obeying the account's rules.

    Long-only: scores are clipped at 0 and ``w = L·a / (Σa + max(cash_score, 0))`` (all cash
    when the total is ~0). Long/short: clipped to ``[-L, L]`` and scaled to gross ``L`` when
    above it. Untradable assets get 0.
    """
    _check_config(config)
    a = real_array("scores", scores)
    tradable_mask = np.broadcast_to(np.asarray(tradable, dtype=bool), a.shape)
    a = np.where(tradable_mask & np.isfinite(a), a, 0.0)
    lev = config.max_leverage
    if not config.allow_short:
        a = np.maximum(a, 0.0)
        cash = 0.0 if cash_score is None else np.maximum(np.asarray(cash_score, np.float64), 0.0)
        total = a.sum(axis=-1) + cash
        safe = np.where(total > 1e-12, total, 1.0)
        return np.where((total > 1e-12)[..., None], lev * a / safe[..., None], 0.0)
    a = np.clip(a, -lev, lev)
    gross = np.abs(a).sum(axis=-1)
    # lev / max(gross, lev) is 1 below the cap; never divides by a tiny gross.
    weights: np.ndarray = a * (lev / np.maximum(gross, lev))[..., None]
    return weights


def _check_shapes(w: np.ndarray, r: np.ndarray, c: np.ndarray) -> None:
    """``settle``'s arrays broadcast together: weights and returns ``(..., n)`` (one per
    asset), cost over their batch axes (one per account)."""
    try:
        batch = np.broadcast_shapes(w.shape, r.shape)[:-1]
    except ValueError:
        raise ValueError(
            "weights and returns must hold one entry per asset, with shapes (..., n) that "
            f"broadcast together, got weights of shape {w.shape} and returns of shape "
            f"{r.shape}."
        ) from None
    try:
        np.broadcast_shapes(batch, c.shape)
    except ValueError:
        raise ValueError(
            "cost must hold one entry per account, with a shape that broadcasts with the batch "
            f"shape {batch} of weights {w.shape} and returns {r.shape}, got shape {c.shape}."
        ) from None


def settle(
    weights: Any, returns: Any, *, cost: Any, dt: float, config: AccountConfig
) -> Settlement:
    """Settle one period held at ``weights`` with asset simple ``returns`` (NaN counts as 0)."""
    _check_config(config)
    step = check_number("dt", dt, "ge0")
    w = real_array("weights", weights)
    r = real_array("returns", returns)
    if np.isinf(r).any():
        raise ValueError("returns must be finite, or NaN for a missing return (counted as 0).")
    r = np.nan_to_num(r, nan=0.0)
    c = real_array("cost", cost)
    _check_shapes(w, r, c)
    if not np.isfinite(w).all() or not np.isfinite(c).all():
        raise ValueError("weights and cost must be finite.")
    dt = step
    cash = 1.0 - w.sum(axis=-1)
    rate = np.where(cash >= 0, config.cash_rate, config.effective_margin_rate)
    financing = cash * rate * dt - config.borrow_rate * dt * np.maximum(-w, 0.0).sum(axis=-1)
    gross = 1.0 + (w * r).sum(axis=-1) + financing
    growth = np.where(c >= 1.0, 0.0, (1.0 - c) * gross)
    wiped_out = growth <= 0
    safe = np.where(gross != 0, gross, 1.0)
    drifted = np.where(wiped_out[..., None], 0.0, w * (1.0 + r) / safe[..., None])
    return Settlement(growth=growth, drifted=drifted, financing=financing, wiped_out=wiped_out)


def turnover(target: Any, current: Any) -> Any:
    """``Σ|target − current|`` over the assets (cash excluded)."""
    return np.abs(np.asarray(target, np.float64) - np.asarray(current, np.float64)).sum(axis=-1)
