"""The window envs' rewards and costs as array operations (finance.md §6 and §7).

``KernelReward`` runs a ``RewardFunction`` of ``sekai.finance.rewards`` (one of the built-in
kinds, or a linear combination of them) over ``xp`` arrays, with the stateful ones'
(``DrawdownPenalty``, ``DifferentialSharpe``) state kept in the kernel's state. ``KernelCost``
runs a ``ProportionalCost``. Anything else runs Python code a kernel cannot trace and is
refused when the kernel is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sekai.envs.finance.kernels._support import at_least, untraceable
from sekai.finance.costs import NoCost, ProportionalCost
from sekai.finance.rewards import (
    DifferentialSharpe,
    DrawdownPenalty,
    LogReturn,
    MeanVariance,
    ProfitAndLoss,
    RewardFunction,
    SimpleReturn,
    TurnoverPenalty,
)

__all__ = ["KernelCost", "KernelReward"]

Array = Any

_FLOOR = 1e-12  # as StepOutcome.from_growth: a wipe-out gives log(1e-12)
_STATELESS = (LogReturn, SimpleReturn, ProfitAndLoss, MeanVariance, TurnoverPenalty)
_INITIAL: dict[type, dict[str, float]] = {
    DrawdownPenalty: {"peak": 1.0, "drawdown": 0.0},
    DifferentialSharpe: {"a": 0.0, "b": 0.0},
}
_SUPPORTED = "LogReturn, SimpleReturn, ProfitAndLoss, MeanVariance, TurnoverPenalty, " + (
    "DrawdownPenalty, DifferentialSharpe and sums or multiples of them"
)


class KernelReward:
    """A finance ``RewardFunction`` computed from ``xp`` arrays.

    Args:
        reward_fn: the env's reward function.
        env_id: the env, for the error message.

    Raises:
        ValueError: a reward of another type (its ``__call__`` is Python code).
    """

    def __init__(self, reward_fn: RewardFunction, env_id: str) -> None:
        parts: dict[int, RewardFunction] = {}
        self.terms: list[tuple[float, int | None]] = []
        for coef, part in reward_fn._terms():
            if part is None:
                self.terms.append((float(coef), None))
                continue
            if type(part) not in _STATELESS and type(part) not in _INITIAL:
                raise untraceable(
                    env_id,
                    "reward",
                    reward_fn,
                    f"{type(part).__name__} is Python code; the kernel runs {_SUPPORTED}",
                )
            # One object used in several terms is one function of the step (its state
            # advances once), as in the env's own combination.
            index = list(parts).index(id(part)) if id(part) in parts else len(parts)
            parts.setdefault(id(part), part)
            self.terms.append((float(coef), index))
        self.parts = list(parts.values())

    def initial_state(self, xp: Any, like: Array) -> dict[str, Array]:
        """The stateful parts' fresh state, shaped and typed like ``like`` ``(num_envs,)``."""
        state: dict[str, Array] = {}
        for i, part in enumerate(self.parts):
            for key, value in _INITIAL.get(type(part), {}).items():
                state[f"reward{i}_{key}"] = xp.full_like(like, value)
        return state

    def __call__(
        self,
        xp: Any,
        state: Mapping[str, Array],
        growth: Array,
        *,
        equity: Array,
        previous_equity: Array,
        turnover: Array,
        cost: Array,
    ) -> tuple[Array, dict[str, Array]]:
        """``(rewards, new reward state)`` of one step."""
        g = at_least(xp, growth, _FLOOR)
        log_return = xp.log(g)
        values: list[Array] = []
        new_state: dict[str, Array] = {}
        for i, part in enumerate(self.parts):
            kind = type(part)
            if kind is LogReturn:
                value = log_return
            elif kind is SimpleReturn:
                value = g - 1.0
            elif kind is ProfitAndLoss:
                value = equity - previous_equity
            elif kind is MeanVariance:
                value = log_return - 0.5 * part.risk_aversion * log_return * log_return  # type: ignore[attr-defined]
            elif kind is TurnoverPenalty:
                value = turnover
            elif kind is DrawdownPenalty:
                value = _drawdown(xp, state, new_state, f"reward{i}_", equity)
            else:
                eta = part.eta  # type: ignore[attr-defined]
                value = _differential_sharpe(xp, state, new_state, f"reward{i}_", g - 1.0, eta)
            values.append(value)
        total: Array = 0.0
        for coef, index in self.terms:
            total = total + (coef if index is None else coef * values[index])
        return total + xp.zeros_like(growth), new_state  # a constant reward still has a batch


def _drawdown(
    xp: Any, state: Mapping[str, Array], out: dict[str, Array], prefix: str, equity: Array
) -> Array:
    """``DrawdownPenalty``: how much the drawdown deepened this step."""
    peak = xp.maximum(state[prefix + "peak"], equity)
    positive = peak > 0
    drawdown = xp.where(positive, 1.0 - equity / xp.where(positive, peak, 1.0), 1.0)
    out[prefix + "peak"] = peak
    out[prefix + "drawdown"] = drawdown
    return at_least(xp, drawdown - state[prefix + "drawdown"], 0.0)


def _differential_sharpe(
    xp: Any, state: Mapping[str, Array], out: dict[str, Array], prefix: str, r: Array, eta: float
) -> Array:
    """``DifferentialSharpe``: Moody & Saffell's differential Sharpe ratio of ``r``."""
    a, b = state[prefix + "a"], state[prefix + "b"]
    delta_a, delta_b = r - a, r * r - b
    variance = b - a * a
    spread = variance > 1e-12
    d = (b * delta_a - 0.5 * a * delta_b) / xp.where(spread, variance, 1.0) ** 1.5
    out[prefix + "a"] = a + eta * delta_a
    out[prefix + "b"] = b + eta * delta_b
    return xp.where(spread, d, 0.0)


class KernelCost:
    """A ``ProportionalCost`` (or ``NoCost``, a rate of 0) computed from ``xp`` arrays.

    ``rate`` is the model's rate, for the kernel's params: a float, or a float64 ``(n,)``
    array of per-asset rates.

    Raises:
        ValueError: another cost model (its ``__call__`` is Python code).
    """

    def __init__(self, cost_model: Any, env_id: str) -> None:
        if type(cost_model) is NoCost:
            cost_model = ProportionalCost(0.0)
        if type(cost_model) is not ProportionalCost:
            raise untraceable(
                env_id,
                "transaction_cost",
                cost_model,
                f"{type(cost_model).__name__} is Python code; the kernel runs a proportional "
                "rate (a number, or a ProportionalCost of one rate or per-asset rates) or NoCost",
            )
        rate = cost_model.rate
        self.per_asset = isinstance(rate, np.ndarray)
        self.rate: float | np.ndarray = (
            np.array(rate, np.float64) if self.per_asset else float(rate)
        )

    def __call__(self, xp: Any, rate: Array, trades: Array, turnover: Array) -> Array:
        """The cost of ``trades`` ``(num_envs, n)``, whose turnover is ``turnover``."""
        if self.per_asset:
            return xp.sum(xp.abs(trades) * rate, axis=-1)
        return rate * turnover
