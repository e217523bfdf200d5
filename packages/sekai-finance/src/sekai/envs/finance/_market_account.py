"""One account's projection and settlement in Python floats: Market-v0's fast path.

The formulas are those of ``sekai.finance.account.project_weights`` and ``settle`` (batched numpy,
written for many accounts); for one account of a few slots, Python floats are several times
faster than a dozen small numpy calls. The tests check both agree.
"""

from __future__ import annotations

import math

from sekai.finance.account import AccountConfig

__all__ = ["project_one", "settle_one"]


def project_one(
    scores: list[float], tradable: list[bool], config: AccountConfig, cash_score: float | None
) -> list[float]:
    """``project_weights`` for one account: scores -> weights obeying the account's rules."""
    isfinite = math.isfinite
    a = [x if ok and isfinite(x) else 0.0 for x, ok in zip(scores, tradable)]
    lev = config.max_leverage
    if not config.allow_short:
        a = [x if x > 0.0 else 0.0 for x in a]
        total = math.fsum(a) + (0.0 if cash_score is None else max(cash_score, 0.0))
        if total > 1e-12:
            return [lev * x / total for x in a]
        return [0.0] * len(a)
    a = [min(max(x, -lev), lev) for x in a]
    gross = math.fsum(abs(x) for x in a)
    if gross > lev:
        scale = lev / gross
        return [x * scale for x in a]
    return a


def settle_one(
    weights: list[float], returns: list[float], *, cost: float, dt: float, config: AccountConfig
) -> tuple[float, list[float], float, bool]:
    """``settle`` for one account: ``(growth, drifted weights, financing, wiped_out)``."""
    r = [0.0 if x != x else x for x in returns]  # NaN returns count as 0
    cash = 1.0 - math.fsum(weights)
    rate = config.cash_rate if cash >= 0 else config.effective_margin_rate
    financing = cash * rate * dt
    if config.borrow_rate:
        financing -= config.borrow_rate * dt * math.fsum(-w for w in weights if w < 0.0)
    gross = 1.0 + math.fsum(w * x for w, x in zip(weights, r)) + financing
    growth = 0.0 if cost >= 1.0 else (1.0 - cost) * gross
    wiped_out = growth <= 0.0
    if wiped_out:
        return growth, [0.0] * len(weights), financing, True
    scale = gross if gross != 0.0 else 1.0
    return growth, [w * (1.0 + x) / scale for w, x in zip(weights, r)], financing, False
