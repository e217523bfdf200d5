"""Cost models: the price of a rebalance as a fraction of equity."""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from sekai._args import holds_bool
from sekai.finance._numeric import seq_sum
from sekai.finance._values import is_real, real_array, real_float, scalar, too_large
from sekai.stats.running import all_finite

__all__ = [
    "CompositeCost",
    "CostModel",
    "FixedCost",
    "NoCost",
    "ProportionalCost",
    "SpreadCost",
    "SquareRootImpact",
    "as_cost_model",
]

CONTEXT_INPUTS = ("equity", "volatility", "volume", "spread")
_NO_VALID_ENTRY = (
    ": no valid {name} in a row with traded assets (every entry is missing or negative), and "
    "{consequence}. Pass {fallback}= to set a fallback."
)
_FREE = "the trade would be free"
_FLOAT64 = np.dtype(np.float64)


def _scalar(name: str, value: object) -> float:
    if not is_real(value):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    result = real_float(value)
    if result is None or not np.isfinite(result) or result < 0:
        shown = too_large(value) if result is None else repr(value)
        raise ValueError(f"{name} must be finite and >= 0, got {shown}.")
    return result


_WHOLE_TRADE = (
    "{name} must be < 1 (a fraction of the traded value), got {value}: a rate of 1 or more "
    "charges at least the whole traded value, so a full rebalance wipes out the account."
)


def _rates(name: str, value: object) -> float | np.ndarray:
    """A rate per traded value (scalar or per asset): finite, >= 0 and < 1."""
    if is_real(value):
        rate = _scalar(name, value)
        if rate >= 1.0:
            raise ValueError(_WHOLE_TRADE.format(name=name, value=repr(value)))
        return rate
    if holds_bool(value) or value is None:
        raise TypeError(
            f"{name} must be a number or a per-asset sequence of numbers (not bools), "
            f"got {value!r}."
        )
    arr = real_array(name, value)
    if arr.ndim == 0:  # one number of a kind that is no numbers.Real (it has __float__)
        return _rates(name, arr[()])
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a scalar or a 1-D per-asset array, got {arr.shape}.")
    if not np.all(np.isfinite(arr)) or (arr < 0).any():
        raise ValueError(f"{name} must be finite and >= 0, got {arr.tolist()}.")
    if (arr >= 1.0).any():
        raise ValueError(_WHOLE_TRADE.format(name=name, value=arr.tolist()))
    arr.flags.writeable = False
    return arr


def _fmt(value: float | np.ndarray) -> str:
    if isinstance(value, np.ndarray):
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    return repr(float(value))


def _out(cost: np.ndarray) -> Any:
    return cost[()] if cost.ndim == 0 else cost


def _checked(
    model: CostModel, returned: Any, trades: tuple[int, ...], part: tuple[CompositeCost, int] | None
) -> np.ndarray:
    """What ``model`` ``returned`` as the cost of trades of shape ``trades``, as float64 and
    checked: real numbers, finite, one per row (shape ``trades[:-1]``), so that a wrong cost
    is refused naming the ``_cost`` that returned it (and the ``part`` of a composite: the
    composite and the model's index) instead of being charged."""
    cost: np.ndarray = returned
    if type(returned) is not np.ndarray or returned.dtype is not _FLOAT64:
        cost = np.asarray(returned)
        if cost.dtype.kind not in "iuf":
            raise ValueError(
                f"{_culprit(model, part)} returned a cost of dtype {cost.dtype} "
                f"({type(returned).__name__}); a cost model must return real numbers, the cost "
                "as a fraction of equity."
            )
        cost = cost.astype(np.float64)
    shape = trades[:-1]
    if cost.shape != shape:
        one = "one number, shape ()" if not shape else f"one per row, shape {shape}"
        raise ValueError(
            f"{_culprit(model, part)} returned a cost of shape {cost.shape} for trades of shape "
            f"{trades}; expected {one}: the cost sums over the last axis of trades (the assets)."
        )
    if not all_finite(cost):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(cost))[0])
        at = f" at index {where}" if where else ""
        raise ValueError(
            f"{_culprit(model, part)} returned the cost {float(cost[where])!r}{at}; a cost must "
            "be a finite fraction of equity."
        )
    return cost


def _culprit(model: CostModel, part: tuple[CompositeCost, int] | None) -> str:
    """``Writer._cost``, naming the class that wrote the ``_cost`` that ran (a subclass of a
    built-in model is not reported under the built-in's name), and for a ``part`` of a
    composite which part it is."""
    writer = next(c for c in type(model).__mro__ if "_cost" in vars(c)).__name__
    if part is None:
        return f"{writer}._cost"
    composite, index = part
    return (
        f"{writer}._cost, part {index + 1} of {len(composite.models)} of the CompositeCost "
        f"{composite!r},"
    )


def _context(model: str, name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Context input ``name`` as float64 broadcast to ``shape`` (``equity``: the trades'
    leading axes; per-asset inputs: the trades' shape). A missing (NaN or infinite) ``equity``
    is refused: no model has a fallback for it (finance.md §6 rule 2)."""
    array = real_array(name, value)
    if name == "equity" and not np.isfinite(array).all():
        missing = float(array[~np.isfinite(array)][0])
        raise ValueError(
            f"{model} cannot price a trade: equity must be finite (the account value in "
            f"currency), got {missing!r}; there is no fallback for a missing equity."
        )
    try:
        return np.broadcast_to(array, shape)
    except ValueError:
        what = "one value per row" if len(shape) == 0 or name == "equity" else "one per asset"
        raise ValueError(
            f"{model}: {name} must broadcast to shape {shape} ({what} of trades), got shape "
            f"{array.shape}."
        ) from None


class UnpricedTrade(ValueError):
    """A cost model cannot price a traded row: an input it needs is missing and it has no
    fallback (finance.md §6 rule 2).

    ``row`` is the row's index among the rows of the trades (their leading axes flattened; 0
    for one row). The env that called the model knows which decision that row was, and says
    so with ``at``: the message reads ``"<head> <where><reason>"``.
    """

    def __init__(self, head: str, reason: str, row: int) -> None:
        super().__init__(head + reason)
        self.head, self.reason, self.row = head, reason, row

    def at(self, where: str) -> UnpricedTrade:
        """This error, its message saying ``where`` the trade was (``"of sub-env 1 at the
        decision of row 41 (timestamp 2021-03-01)"``)."""
        self.head = f"{self.head} {where}"
        self.args = (self.head + self.reason,)
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (a worker process sends it back)
        return type(self), (self.head, self.reason, self.row), self.__dict__


def _fill_missing(
    values: Any,
    trades: np.ndarray,
    *,
    model: str,
    name: str,
    fallback: float | None,
    hint: str,
    consequence: str = _FREE,
) -> np.ndarray:
    """Replace missing/negative entries by the row's median of valid entries (else fallback);
    a traded row with neither raises, saying the ``consequence`` of pricing it anyway."""
    arr = _context(model, name, values, trades.shape)
    valid = np.isfinite(arr) & (arr >= 0)
    if valid.all():
        return arr
    rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim else arr.reshape(1, 1)
    ok = valid.reshape(rows.shape)
    traded = (trades != 0).reshape(rows.shape)
    out = rows.copy()
    for i in np.flatnonzero(~ok.all(axis=1)):
        if ok[i].any():
            out[i, ~ok[i]] = np.median(rows[i, ok[i]])
        elif fallback is not None:
            out[i, :] = fallback
        elif traded[i].any():
            reason = _NO_VALID_ENTRY.format(name=name, fallback=hint, consequence=consequence)
            raise UnpricedTrade(f"{model} cannot price a trade", reason, int(i))
        else:
            out[i, :] = 0.0
    result: np.ndarray = out.reshape(arr.shape)
    return result


class CostModel(abc.ABC):
    """Prices a rebalance: signed weight changes ``(..., n)`` -> cost fraction ``(...)``.

    Context inputs arrive as keyword arguments (``equity``, ``volatility``, ``volume``,
    ``spread``); ``requires`` names those a model reads, ``fallbacks`` those it can do without.
    """

    requires: frozenset[str] = frozenset()
    fallbacks: frozenset[str] = frozenset()
    _checks_cost: ClassVar[bool] = True
    """Whether ``_priced`` checks what ``_cost`` returns: for every ``_cost`` but this module's,
    whose costs are float64 and of the right shape by construction, and finite for finite
    inputs that do not overflow (they price every env step: a check would only slow it)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_cost" in vars(cls):  # a subclass that keeps a built-in _cost keeps its flag
            cls._checks_cost = cls.__module__ != __name__

    def __call__(self, trades: Any, **context: Any) -> Any:
        """Cost of ``trades`` as a fraction of equity, one value per leading batch index."""
        missing = [name for name in sorted(self.requires) if context.get(name) is None]
        if missing:
            raise ValueError(
                f"{self!r} needs {', '.join(missing)}, which the caller did not pass "
                f"(pass {', '.join(f'{m}=...' for m in missing)})."
            )
        fast = type(trades) is np.ndarray and trades.dtype == np.float64  # the envs' batches
        array = trades if fast else real_array("trades", trades)
        if array.ndim == 0:
            raise ValueError(
                f"{self!r}: trades must have shape (..., n), one weight change per asset (the "
                f"last axis), got the scalar {float(array)!r}; pass [{float(array)!r}] for one "
                "asset."
            )
        finite = np.isfinite(array)
        if not finite.all():
            where = tuple(int(i) for i in np.argwhere(~finite)[0])
            raise ValueError(
                f"{self!r}: trades must be finite, got {float(array[where])!r} at index {where}."
            )
        for name, size in self._asset_counts():
            if array.shape[-1] != size:
                raise ValueError(
                    f"{self!r}: {name} has {size} per-asset values but trades has shape "
                    f"{array.shape} (the last axis is the assets)."
                )
        return _out(self._priced(array, context))

    def _priced(
        self,
        trades: np.ndarray,
        context: dict[str, Any],
        part: tuple[CompositeCost, int] | None = None,
    ) -> np.ndarray:
        """``_cost``, checked (``_checked``) unless it is a built-in one: one cost per row of
        ``trades``, real and finite (``part``: the composite this model is a part of, and its
        index)."""
        cost = self._cost(trades, context)
        return _checked(self, cost, trades.shape, part) if self._checks_cost else cost

    def _asset_counts(self) -> tuple[tuple[str, int], ...]:
        """``(name, size)`` of every per-asset parameter; worked out once (a call is on every
        env step, and the parameters are fixed when the model is built)."""
        counts: tuple[tuple[str, int], ...] | None = self.__dict__.get("_counts")
        if counts is None:
            counts = tuple((name, v.size) for name, v in self.per_asset().items())
            self.__dict__["_counts"] = counts
        return counts

    @abc.abstractmethod
    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        """The cost array of shape ``trades.shape[:-1]``."""

    def per_asset(self) -> dict[str, np.ndarray]:
        """The model's per-asset parameters (1-D arrays, one entry per asset), by name."""
        return {
            name: value
            for name, value in vars(self).items()
            if isinstance(value, np.ndarray) and value.ndim == 1
        }

    def __add__(self, other: object) -> CompositeCost:
        if not isinstance(other, CostModel):
            return NotImplemented
        return CompositeCost([self, other])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and repr(other) == repr(self)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NoCost(CostModel):
    """Trading is free."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        return np.zeros(trades.shape[:-1])


class ProportionalCost(CostModel):
    """``Σ rate_i·|trade_i|``: a commission proportional to the traded value.

    Args:
        rate: one rate for every asset, or one per asset (each in [0, 1)).
    """

    def __init__(self, rate: float | Iterable[float] = 1e-3) -> None:
        self.rate = _rates("rate", rate)

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        if isinstance(self.rate, np.ndarray):
            return seq_sum(np.abs(trades) * self.rate)  # type: ignore[no-any-return]
        return self.rate * seq_sum(np.abs(trades))  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"ProportionalCost({_fmt(self.rate)})"


class SpreadCost(CostModel):
    """``Σ h_i·|trade_i|``: crossing half the bid-ask spread.

    Args:
        half_spread: a fixed half spread in [0, 1) (scalar or per asset); None reads half the quoted
            ``spread`` from the data at the decision row.
        fallback_spread: the full spread to use for a row with no valid quote.
    """

    def __init__(
        self,
        half_spread: float | Iterable[float] | None = None,
        *,
        fallback_spread: float | None = None,
    ) -> None:
        if half_spread is not None and fallback_spread is not None:
            raise ValueError(
                "fallback_spread only applies when the spread comes from the data; "
                "drop it or drop half_spread."
            )
        self.half_spread = None if half_spread is None else _rates("half_spread", half_spread)
        self.fallback_spread = (
            None if fallback_spread is None else _scalar("fallback_spread", fallback_spread)
        )
        self.requires = frozenset({"spread"}) if half_spread is None else frozenset()
        self.fallbacks = frozenset({"spread"}) if fallback_spread is not None else frozenset()

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        if self.half_spread is not None:
            h: Any = self.half_spread
        else:
            spread = _fill_missing(
                context["spread"],
                trades,
                model=repr(self),
                name="spread",
                fallback=self.fallback_spread,
                hint="fallback_spread",
            )
            h = 0.5 * spread
        return seq_sum(np.abs(trades) * h)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        if self.half_spread is None:
            extra = ""
            if self.fallback_spread is not None:
                extra = f", fallback_spread={self.fallback_spread!r}"
            return f"SpreadCost(half_spread=from data{extra})"
        return f"SpreadCost(half_spread={_fmt(self.half_spread)})"


class FixedCost(CostModel):
    """A ticket fee of ``amount`` (in the currency of ``capital``) per traded asset.

    Args:
        amount: fee per asset traded.
        threshold: a weight change at or below this is not a trade.
    """

    requires = frozenset({"equity"})

    def __init__(self, amount: float, *, threshold: float = 1e-6) -> None:
        self.amount = _scalar("amount", amount)
        self.threshold = _scalar("threshold", threshold)

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        equity = _context(repr(self), "equity", context["equity"], trades.shape[:-1])
        count = (np.abs(trades) > self.threshold).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = np.where(equity > 0, self.amount * count / equity, 0.0)
        result: np.ndarray = np.broadcast_to(cost, trades.shape[:-1]).copy()
        return result

    def __repr__(self) -> str:
        return f"FixedCost({self.amount!r})"


class SquareRootImpact(CostModel):
    """Square-root market impact: ``min(c·σ_i·sqrt(q_i / V_i), 1)·|trade_i|`` per asset.

    ``q_i = |trade_i|·equity`` is the traded notional and ``V_i`` the traded value per step; a
    zero volume (no liquidity) costs the whole traded value. A missing (NaN/inf) or negative
    volume is not a zero: like a missing volatility it takes the median of the row's valid
    volumes, else ``fallback_volume``, else a ``ValueError``.

    Args:
        coefficient: the impact coefficient ``c``.
        fallback_volatility: per-step volatility for a row with no valid estimate.
        fallback_volume: traded value per step (currency) for a row with no valid volume.
    """

    requires = frozenset({"equity", "volatility", "volume"})

    def __init__(
        self,
        coefficient: float = 0.5,
        *,
        fallback_volatility: float | None = None,
        fallback_volume: float | None = None,
    ) -> None:
        self.coefficient = _scalar("coefficient", coefficient)
        self.fallback_volatility = (
            None
            if fallback_volatility is None
            else _scalar("fallback_volatility", fallback_volatility)
        )
        self.fallback_volume = (
            None if fallback_volume is None else _scalar("fallback_volume", fallback_volume)
        )
        self.fallbacks = frozenset(
            name
            for name, value in (
                ("volatility", fallback_volatility),
                ("volume", fallback_volume),
            )
            if value is not None
        )

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        size = np.abs(trades)
        sigma = _fill_missing(
            context["volatility"],
            trades,
            model=repr(self),
            name="volatility",
            fallback=self.fallback_volatility,
            hint="fallback_volatility",
        )
        equity = _context(repr(self), "equity", context["equity"], trades.shape[:-1])[..., None]
        volume = _fill_missing(
            context["volume"],
            trades,
            model=repr(self),
            name="volume",
            fallback=self.fallback_volume,
            hint="fallback_volume",
            consequence="a missing volume is not a zero volume (which costs the whole trade)",
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            impact = self.coefficient * sigma * np.sqrt(size * equity / volume)
        impact = np.where(np.isfinite(volume) & (volume > 0), impact, 1.0)
        impact = np.minimum(np.nan_to_num(impact, nan=1.0), 1.0)
        return seq_sum(impact * size)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={value!r}"
            for name, value in (
                ("fallback_volatility", self.fallback_volatility),
                ("fallback_volume", self.fallback_volume),
            )
            if value is not None
        )
        return f"SquareRootImpact({self.coefficient!r}{extra})"


class CompositeCost(CostModel):
    """The sum of several cost models (``a + b``); nested composites flatten."""

    def __init__(self, models: Iterable[CostModel]) -> None:
        if isinstance(models, CostModel) or not isinstance(models, Iterable):
            raise TypeError(
                "CompositeCost takes a list of CostModels (or add them: a + b), got "
                f"{type(models).__name__}."
            )
        flat: list[CostModel] = []
        for model in models:
            if not isinstance(model, CostModel):
                raise TypeError(f"CompositeCost takes CostModels, got {type(model).__name__}.")
            flat.extend(model.models if isinstance(model, CompositeCost) else [model])
        if not flat:
            raise ValueError("CompositeCost needs at least one model.")
        self.models: tuple[CostModel, ...] = tuple(flat)
        self.requires = frozenset().union(*(m.requires for m in flat))
        self.fallbacks = frozenset(
            name
            for name in self.requires
            if all(name in m.fallbacks for m in flat if name in m.requires)
        )

    def per_asset(self) -> dict[str, np.ndarray]:
        return {
            f"{model!r}.{name}": value
            for model in self.models
            for name, value in model.per_asset().items()
        }

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        total = self.models[0]._priced(trades, context, (self, 0))  # each checked, to name
        for i in range(1, len(self.models)):  # the part that returns a wrong cost
            total = total + self.models[i]._priced(trades, context, (self, i))
        return total

    def __repr__(self) -> str:
        return " + ".join(repr(m) for m in self.models)


def as_cost_model(value: object, name: str = "transaction_cost") -> CostModel:
    """A CostModel as is; a number in [0, 1) -> ``ProportionalCost``; else an error naming
    the argument ``name``."""
    if isinstance(value, CostModel):
        return value
    value = scalar(value)
    if is_real(value):
        rate = real_float(value)
        if rate is None or not np.isfinite(rate) or rate < 0:
            shown = too_large(value) if rate is None else repr(value)
            raise ValueError(f"{name} must be finite and non-negative, got {shown}.")
        if rate >= 1.0:
            raise ValueError(_WHOLE_TRADE.format(name=name, value=repr(value)))
        return ProportionalCost(rate)
    raise TypeError(
        f"{name} must be a non-negative number (a proportional rate) or a "
        f"sekai.finance.CostModel, got {type(value).__name__}."
    )
