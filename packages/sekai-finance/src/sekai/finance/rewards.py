"""Reward functions of the window-based finance envs, composable with + - and *."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np

from sekai._args import holds_bool
from sekai.finance._values import check_number, is_real, real_float, too_large

__all__ = [
    "DifferentialSharpe",
    "DrawdownPenalty",
    "LogReturn",
    "MeanVariance",
    "ProfitAndLoss",
    "RewardFunction",
    "SimpleReturn",
    "StepOutcome",
    "TurnoverPenalty",
    "period_reward",
]

_GROWTH_FLOOR = 1e-12


def _value(x: Any) -> Any:
    """Python float for 0-d results, arrays stay arrays."""
    return float(x) if np.ndim(x) == 0 else x


@dataclass(frozen=True)
class StepOutcome:
    """What a reward function sees of one step (floats, or ``(num_envs,)`` arrays).

    Attributes:
        log_return: ``log(growth)``.
        simple_return: ``growth - 1``.
        equity: equity after the step, relative to the episode start.
        turnover: ``Σ|trade|`` of the rebalance.
        cost: the rebalance cost as a fraction of equity.
        pnl: the equity change, or None.
    """

    log_return: Any
    simple_return: Any
    equity: Any
    turnover: Any
    cost: Any
    pnl: Any = None

    @classmethod
    def from_growth(
        cls, growth: Any, *, equity: Any, turnover: Any, cost: Any, previous_equity: Any = None
    ) -> StepOutcome:
        """Build from a growth factor floored at 1e-12 (a wipe-out gives ``log(1e-12)``)."""
        g = np.maximum(np.asarray(growth, dtype=np.float64), _GROWTH_FLOOR)
        pnl = None
        if previous_equity is not None:
            pnl = _value(np.asarray(equity, np.float64) - np.asarray(previous_equity, np.float64))
        return cls(
            log_return=_value(np.log(g)),
            simple_return=_value(g - 1.0),
            equity=_value(np.asarray(equity, np.float64)),
            turnover=_value(np.asarray(turnover, np.float64)),
            cost=_value(np.asarray(cost, np.float64)),
            pnl=pnl,
        )


class RewardFunction(abc.ABC):
    """A reward computed from a ``StepOutcome``; supports ``+``, ``-``, ``*`` by a number."""

    @abc.abstractmethod
    def __call__(self, outcome: StepOutcome) -> Any:
        """The reward: a float, or an array shaped like the outcome's fields."""

    def reset(self, mask: Any = None) -> None:  # noqa: B027 - optional hook, no-op by default
        """Forget per-env state for the sub-envs in ``mask`` (all when None); stateless: no-op."""

    # -- composition --------------------------------------------------------------------------

    def _terms(self) -> list[tuple[Any, RewardFunction | None]]:
        return [(1, self)]

    def __add__(self, other: object) -> RewardFunction:
        terms = _terms_of(other)
        return NotImplemented if terms is None else _Combination(self._terms() + terms)

    def __radd__(self, other: object) -> RewardFunction:
        terms = _terms_of(other)
        return NotImplemented if terms is None else _Combination(terms + self._terms())

    def __sub__(self, other: object) -> RewardFunction:
        terms = _terms_of(other)
        if terms is None:
            return NotImplemented
        return _Combination(self._terms() + [(-c, p) for c, p in terms])

    def __rsub__(self, other: object) -> RewardFunction:
        terms = _terms_of(other)
        if terms is None:
            return NotImplemented
        return _Combination(terms + [(-c, p) for c, p in self._terms()])

    def __mul__(self, other: object) -> RewardFunction:
        if not is_real(other):
            return NotImplemented
        weight = _finite(other)
        return _Combination([(weight * c, p) for c, p in self._terms()])

    __rmul__ = __mul__

    def __neg__(self) -> RewardFunction:
        return _Combination([(-c, p) for c, p in self._terms()])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _finite(value: Any) -> Any:
    """A weight or constant of a combination, as given (a Decimal as a float: it does not mix
    with the rewards' floats): finite, else ``ValueError``."""
    number = real_float(value)
    if number is None or not np.isfinite(number):
        raise ValueError(f"reward weights and constants must be finite numbers, got {value!r}.")
    return number if isinstance(value, Decimal) else value


def _terms_of(value: object) -> list[tuple[Any, RewardFunction | None]] | None:
    if isinstance(value, RewardFunction):
        return value._terms()
    if is_real(value):
        return [(_finite(value), None)]
    return None


class _Combination(RewardFunction):
    """A linear combination of reward functions and constants."""

    def __init__(self, terms: list[tuple[Any, RewardFunction | None]]) -> None:
        self.terms = terms
        # Each distinct reward object once: one used in several terms (``x + x``) is one
        # function of the step, whose state must advance once per step.
        self._parts = list({id(part): part for _, part in terms if part is not None}.values())

    def _terms(self) -> list[tuple[Any, RewardFunction | None]]:
        return list(self.terms)

    def __call__(self, outcome: StepOutcome) -> Any:
        values = {id(part): part(outcome) for part in self._parts}
        total: Any = 0.0
        for coef, part in self.terms:
            total = total + (coef if part is None else coef * values[id(part)])
        return total

    def reset(self, mask: Any = None) -> None:
        for part in self._parts:
            part.reset(mask)

    def __repr__(self) -> str:
        pieces: list[str] = []
        for i, (coef, part) in enumerate(self.terms):
            negative = coef < 0
            size = -coef if negative else coef
            body = (
                repr(size)
                if part is None
                else (repr(part) if size == 1 else f"{size!r} * {part!r}")
            )
            if i == 0:
                pieces.append(f"-{body}" if negative else body)
            else:
                pieces.append(f" - {body}" if negative else f" + {body}")
        return "".join(pieces)


class LogReturn(RewardFunction):
    """``log(growth)``: sums to the log of final over initial equity (the Kelly objective)."""

    def __call__(self, outcome: StepOutcome) -> Any:
        return outcome.log_return


def period_reward(
    reward_fn: RewardFunction,
    growth: Any,
    *,
    equity: Any,
    turnover: Any,
    cost: Any,
    previous_equity: Any,
) -> Any:
    """``reward_fn``'s reward for one period: a float for a scalar ``growth``, else an array.

    ``LogReturn`` is computed directly (the value its ``StepOutcome`` would carry, without
    building one): it is the default reward, on every env's hot path.
    """
    scalar = isinstance(growth, float)
    if type(reward_fn) is LogReturn:
        if scalar:
            return float(np.log(max(growth, _GROWTH_FLOOR)))
        return np.log(np.maximum(growth, _GROWTH_FLOOR))
    reward = reward_fn(
        StepOutcome.from_growth(
            growth, equity=equity, turnover=turnover, cost=cost, previous_equity=previous_equity
        )
    )
    if scalar:
        return _real_reward(
            reward_fn, reward, "for one env a reward function returns one real number"
        )
    rewards = _real_rewards(reward_fn, reward)
    if rewards.shape != np.shape(growth):
        try:  # a reward function may return one number for every sub-env
            rewards = np.broadcast_to(rewards, np.shape(growth)).copy()
        except ValueError:
            raise ValueError(
                f"{reward_fn!r} returned rewards of shape {rewards.shape} for a batch of "
                f"{np.shape(growth)}: return one number, or one per sub-env."
            ) from None
    return rewards


def _real_reward(reward_fn: RewardFunction, reward: Any, rule: str) -> float:
    """``reward`` (a real number, or a 0-d array of one) as a float; ``ValueError`` saying
    ``rule`` for anything else (bools and strings included: they are no rewards)."""
    number = reward[()] if isinstance(reward, np.ndarray) and reward.ndim == 0 else reward
    value = real_float(number)
    if value is None:
        raise ValueError(f"{reward_fn!r} returned {type(reward).__name__} {reward!r}; {rule}.")
    return value


def _numeric_array(reward: Any) -> np.ndarray | None:
    """``reward`` as NumPy reads it when that is an array of numbers, else None."""
    try:
        array = np.asarray(reward)
    except (TypeError, ValueError):  # ragged lists, objects NumPy cannot read
        return None
    return array if array.dtype.kind in "fiu" else None


def _real_rewards(reward_fn: RewardFunction, reward: Any) -> np.ndarray:
    """A batch's rewards as float64, each one a real number as ``_real_reward`` requires."""
    array = _numeric_array(reward)
    # NumPy reads [True, 0.5] as floats: only a list without bools skips the per-item check.
    if array is not None and (array is reward or not holds_bool(reward)):
        return np.asarray(array, dtype=np.float64)
    rule = "for a batch a reward function returns real numbers, one or one per sub-env"
    if isinstance(reward, np.ndarray) and reward.dtype != object:  # bools, strings, complex
        raise ValueError(
            f"{reward_fn!r} returned an array of {reward.dtype} {reward.shape}; {rule}."
        )
    items = np.asarray(reward, dtype=object)  # a Python number, list, or object array
    values = [_real_reward(reward_fn, item, rule) for item in items.reshape(-1)]
    return np.array(values, dtype=np.float64).reshape(items.shape)


class SimpleReturn(RewardFunction):
    """``growth - 1``."""

    def __call__(self, outcome: StepOutcome) -> Any:
        return outcome.simple_return


class ProfitAndLoss(RewardFunction):
    """The equity change; sums to final equity − 1."""

    def __call__(self, outcome: StepOutcome) -> Any:
        if outcome.pnl is not None:
            return outcome.pnl
        r = np.asarray(outcome.simple_return, np.float64)
        equity = np.asarray(outcome.equity, np.float64)
        if np.any(equity <= 0.0):
            raise ValueError(
                "ProfitAndLoss cannot recover the P&L of a wiped-out step without "
                "StepOutcome.pnl; pass previous_equity= to StepOutcome.from_growth()."
            )
        return _value(equity * r / (1.0 + r))


class MeanVariance(RewardFunction):
    """``r − ½·λ·r²`` on the log return.

    Args:
        risk_aversion: ``λ >= 0``.
    """

    def __init__(self, risk_aversion: float = 1.0) -> None:
        self.risk_aversion = check_number("risk_aversion", risk_aversion, "ge0")

    def __call__(self, outcome: StepOutcome) -> Any:
        r = outcome.log_return
        return r - 0.5 * self.risk_aversion * r * r

    def __repr__(self) -> str:
        return f"MeanVariance(risk_aversion={self.risk_aversion!r})"


class TurnoverPenalty(RewardFunction):
    """The turnover (positive): subtract it, ``LogReturn() - 1e-3 * TurnoverPenalty()``."""

    def __call__(self, outcome: StepOutcome) -> Any:
        return outcome.turnover


class _Stateful(RewardFunction):
    """Per-env state arrays created lazily with the outcome's shape."""

    _state: dict[str, np.ndarray] | None = None
    _initial: ClassVar[dict[str, float]] = {}

    def _arrays(self, outcome: StepOutcome) -> dict[str, np.ndarray]:
        shape = np.shape(outcome.equity)
        if self._state is None or next(iter(self._state.values())).shape != shape:
            self._state = {k: np.full(shape, v) for k, v in self._initial.items()}
        return self._state

    def reset(self, mask: Any = None) -> None:
        if self._state is None:
            return
        for key, value in self._initial.items():
            array = self._state[key]
            if mask is None or array.ndim == 0:
                array[...] = value
            else:
                array[np.asarray(mask)] = value


class DrawdownPenalty(_Stateful):
    """How much the drawdown deepened this step: ``max(dd_t − dd_{t−1}, 0)``."""

    _initial: ClassVar[dict[str, float]] = {"peak": 1.0, "drawdown": 0.0}

    def __call__(self, outcome: StepOutcome) -> Any:
        state = self._arrays(outcome)
        equity = np.asarray(outcome.equity, np.float64)
        peak = np.maximum(state["peak"], equity)
        with np.errstate(divide="ignore", invalid="ignore"):
            drawdown = np.where(peak > 0, 1.0 - equity / np.where(peak > 0, peak, 1.0), 1.0)
        value = np.maximum(drawdown - state["drawdown"], 0.0)
        state["peak"][...] = peak
        state["drawdown"][...] = drawdown
        return _value(value)


class DifferentialSharpe(_Stateful):
    """Moody & Saffell's differential Sharpe ratio on the simple returns.

    Args:
        eta: the EMA rate, ``0 < eta < 1``.
    """

    _initial: ClassVar[dict[str, float]] = {"a": 0.0, "b": 0.0}

    def __init__(self, eta: float = 0.01) -> None:
        if not is_real(eta):
            raise TypeError(f"eta must be a number in (0, 1), got {type(eta).__name__} {eta!r}.")
        rate = real_float(eta)
        if rate is None or not 0.0 < rate < 1.0:
            shown = too_large(eta) if rate is None else repr(eta)
            raise ValueError(f"eta must be a number in (0, 1), got {shown}.")
        self.eta = rate

    def __call__(self, outcome: StepOutcome) -> Any:
        state = self._arrays(outcome)
        a, b = state["a"], state["b"]
        r = np.asarray(outcome.simple_return, np.float64)
        delta_a, delta_b = r - a, r * r - b
        variance = b - a * a
        with np.errstate(divide="ignore", invalid="ignore"):
            d = (b * delta_a - 0.5 * a * delta_b) / np.where(variance > 1e-12, variance, 1.0) ** 1.5
        d = np.where(variance > 1e-12, d, 0.0)
        a[...] = a + self.eta * delta_a
        b[...] = b + self.eta * delta_b
        return _value(d)

    def __repr__(self) -> str:
        return f"DifferentialSharpe(eta={self.eta!r})"
