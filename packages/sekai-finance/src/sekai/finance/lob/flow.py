"""Background order flow: the OrderFlow interface and zero-intelligence Poisson order flow."""

from __future__ import annotations

import abc
import itertools
import math
import numbers
import sys
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from sekai.finance._values import is_real, real_float, too_large
from sekai.finance.lob.book import OrderBook
from sekai.finance.lob.orders import BACKGROUND, Fill, Side

__all__ = ["OrderFlow", "StaticFlow", "ZeroIntelligenceFlow"]

_BID = Side.BID
_ASK = Side.ASK
_PER_EVENT = 8  # uniforms one event may use: clock, type, offset, size, and two refills
_MAX_BLOCK = 1 << 18  # uniforms drawn at once (2 MiB): a longer span draws block after block
MAX_EVENTS = 2**32  # events a ZeroIntelligenceFlow's clock resolves (see max_time)


class OrderFlow(abc.ABC):
    """Background order flow: seeds a book and simulates the other traders' messages.

    A flow is a description (its parameters); state that must persist between ``advance`` calls
    (e.g. the self-excitation of a Hawkes flow) belongs in ``book.flow_state``, which
    ``book.clear()`` empties, so one flow object can drive any number of books.
    """

    @abc.abstractmethod
    def initialise(
        self,
        book: OrderBook,
        rng: np.random.Generator,
        *,
        mid: int,
        levels: int = 10,
        orders_per_level: int = 3,
    ) -> None:
        """Clear ``book`` and seed it with background orders around ``mid`` (last price = mid)."""

    @abc.abstractmethod
    def advance(self, book: OrderBook, rng: np.random.Generator, until: float) -> list[Fill]:
        """Simulate the flow from ``book.time`` to ``until``; return every fill, oldest first.

        On return ``book.time == until`` (when ``until`` is later than the book's time).
        """

    def max_time(self) -> float:
        """The latest clock time ``advance`` can simulate to: the largest float by default
        (any finite time); a flow whose simulation cannot reach every time says so."""
        return sys.float_info.max

    def check_until(self, until: float, name: str = "until") -> None:
        """Raise ``ValueError`` unless the flow can simulate to clock time ``until``
        (``<= max_time()``); ``name`` says what ``until`` is, for the message. The envs check
        their warm-up plus session length so when they are built and when a flow is set."""
        limit = self.max_time()
        if until <= limit:
            return
        raise ValueError(
            f"{name} must be at most {limit:.6g} for {self!r}, got {until!r}: "
            f"{self._max_time_reason()}"
        )

    def _max_time_reason(self) -> str:
        """Why the flow stops at ``max_time()`` (the end of ``check_until``'s message)."""
        return "the flow cannot simulate past it. Use a shorter time."


def _check(name: str, value: object, bound: str) -> float:
    x = real_float(value)
    if x is None:
        shown = too_large(value) if is_real(value) else repr(value)
        raise ValueError(f"{name} must be a finite number {bound}, got {shown}.")
    ok = math.isfinite(x) and (x > 0 if bound == "> 0" else x >= 0 if bound == ">= 0" else x >= 1.0)
    if not ok:
        raise ValueError(f"{name} must be a finite number {bound}, got {x!r}.")
    return x


MAX_MEAN_SIZE = 1e8  # the size table holds about 18 sqrt(mean_size) entries (182,091 at 1e8)
_TAIL = 1e-18  # probabilities below this share of the mode's are left out (far below float64's
# resolution of the cumulative table near 1, 1.1e-16)


def _poisson_cdf(lam: float) -> tuple[int, list[float]]:
    """``(first, cdf)``: ``cdf[j]`` is ``P(K <= first + j)`` for ``K ~ Poisson(lam)``, up to a
    negligible tail on either side (the last entry is 1.0). Draw ``K`` as ``first +
    bisect_right(cdf, u)``."""
    if lam <= 0.0:
        return 0, [1.0]
    p = math.exp(-lam)
    if p < sys.float_info.min:  # past lam ~ 708 exp(-lam) loses its digits, then underflows
        return _poisson_cdf_from_mode(lam)
    cdf: list[float] = []
    total, k = 0.0, 0
    while True:
        total += p
        cdf.append(total)
        k += 1
        p *= lam / k
        # k > 10,000 stops a sum that rounding leaves just short of 1 - 1e-15 (lam < 709 here)
        if (1.0 - total < 1e-15 and k > lam) or k > 10_000:
            break
    cdf[-1] = 1.0
    return 0, cdf


def _poisson_cdf_from_mode(lam: float) -> tuple[int, list[float]]:
    """``_poisson_cdf`` for a large ``lam``: the probabilities from the mode's (in log space)
    outwards by the ratio of neighbours, normalised by their sum."""
    mode = math.floor(lam)
    peak = math.exp(mode * math.log(lam) - lam - math.lgamma(mode + 1.0))
    cut = peak * _TAIL
    below: list[float] = []
    p, k = peak, mode
    while k > 0:
        p *= k / lam  # P(k - 1)
        if p < cut:
            break
        below.append(p)
        k -= 1
    first = k
    probabilities = [*reversed(below), peak]
    p, k = peak, mode
    while True:
        k += 1
        p *= lam / k
        if p < cut:
            break
        probabilities.append(p)
    scale = 1.0 / math.fsum(probabilities)
    cdf = [c * scale for c in itertools.accumulate(probabilities)]
    cdf[-1] = 1.0
    return first, cdf


@dataclass(frozen=True)
class ZeroIntelligenceFlow(OrderFlow):
    """Zero-intelligence Poisson order flow (Smith, Farmer, Gillemot & Krishnamurthy 2003).

    Independent Poisson clocks: limit orders arrive on each side at ``limit_rate``, placed ``k``
    ticks from the *opposite* best quote (``k = 1..max_offset``, ``P(k) ∝ exp(-offset_decay
    (k - 1))``, so they never cross); market orders arrive on each side at ``market_rate``
    (skipped when the other side is empty); each resting background order is cancelled at
    ``cancel_rate``. Sizes are ``1 + Poisson(mean_size - 1)`` lots. Agents' orders are never
    cancelled, and a side left empty is refilled at once with one limit order, so the book stays
    two-sided. With the defaults the book holds about 30 orders and the spread is about a tick.

    It simulates up to clock time ``max_time()`` = ``MAX_EVENTS / (2 * limit_rate + 2 *
    market_rate)`` (about 1.8e8 at the defaults): at most 2**32 events at the rate of limit
    and market orders alone, so that the float64 clock keeps every gap between events at
    least about 2**19 of its last-place units apart (its times keep about six significant
    digits); ``advance`` refuses a later ``until`` with ``ValueError``.

    Args:
        limit_rate: limit orders per unit time per side (> 0).
        market_rate: market orders per unit time per side (> 0).
        cancel_rate: cancellations per unit time per resting background order (>= 0).
        max_offset: farthest placement from the opposite best, in ticks (int >= 1).
        offset_decay: decay of the placement probability per tick (>= 0).
        mean_size: mean order size in lots (>= 1, at most ``MAX_MEAN_SIZE`` = 1e8).
    """

    limit_rate: float = 10.0
    market_rate: float = 2.0
    cancel_rate: float = 0.5
    max_offset: int = 10
    offset_decay: float = 0.5
    mean_size: float = 3.0
    _offset_cdf: list[float] = field(init=False, repr=False, compare=False)
    _size_base: int = field(init=False, repr=False, compare=False)  # size = base + table index
    _size_cdf: list[float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "limit_rate", _check("limit_rate", self.limit_rate, "> 0"))
        set_(self, "market_rate", _check("market_rate", self.market_rate, "> 0"))
        set_(self, "cancel_rate", _check("cancel_rate", self.cancel_rate, ">= 0"))
        set_(self, "offset_decay", _check("offset_decay", self.offset_decay, ">= 0"))
        set_(self, "mean_size", _check("mean_size", self.mean_size, ">= 1"))
        if self.mean_size > MAX_MEAN_SIZE:
            raise ValueError(
                f"mean_size must be a finite number >= 1 and <= {MAX_MEAN_SIZE:_.0f} (the "
                f"table of order sizes grows with the mean), got {self.mean_size!r}."
            )
        k = self.max_offset
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"max_offset must be an int >= 1, got {k!r}.")
        set_(self, "max_offset", int(k))
        weights = np.exp(-self.offset_decay * np.arange(int(k)))
        cdf = (np.cumsum(weights) / weights.sum()).tolist()
        cdf[-1] = 1.0
        set_(self, "_offset_cdf", cdf)
        first, size_cdf = _poisson_cdf(self.mean_size - 1.0)
        set_(self, "_size_base", 1 + first)
        set_(self, "_size_cdf", size_cdf)

    def max_time(self) -> float:
        """``MAX_EVENTS / (2 * limit_rate + 2 * market_rate)``: the latest clock time the flow
        simulates (0 where the rates overflow float64)."""
        return MAX_EVENTS / (2.0 * self.limit_rate + 2.0 * self.market_rate)

    def _max_time_reason(self) -> str:
        rate = 2.0 * self.limit_rate + 2.0 * self.market_rate
        return (
            f"its float64 clock resolves at most 2**32 events (MAX_EVENTS), and it simulates "
            f"at least 2 * limit_rate + 2 * market_rate = {rate:.6g} per unit time. Use a "
            "shorter time, or lower rates."
        )

    # -- OrderFlow ------------------------------------------------------------------------------

    def initialise(
        self,
        book: OrderBook,
        rng: np.random.Generator,
        *,
        mid: int,
        levels: int = 10,
        orders_per_level: int = 3,
    ) -> None:
        """Clear ``book`` and seed a symmetric book: ``orders_per_level`` orders at ``mid ± k``.

        Levels ``k = 1..levels`` on each side; each (level, position) gets one drawn size used on
        both sides. The last price is ``mid``.
        """
        for name, value in (
            ("mid", mid),
            ("levels", levels),
            ("orders_per_level", orders_per_level),
        ):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise ValueError(f"{name} must be an int, got {value!r}.")
        centre, n_levels, per_level = int(mid), int(levels), int(orders_per_level)
        if n_levels < 1 or per_level < 1 or centre - n_levels < 1:
            raise ValueError(
                "initialise() needs levels >= 1, orders_per_level >= 1 and mid - levels >= 1, "
                f"got mid={centre}, levels={n_levels}, orders_per_level={per_level}."
            )
        book.clear()
        sizes = rng.random(n_levels * per_level).tolist()
        size_base, size_cdf = self._size_base, self._size_cdf
        i = 0
        for k in range(1, n_levels + 1):
            for _ in range(per_level):
                size = size_base + bisect_right(size_cdf, sizes[i])
                i += 1
                book._rest(_BID, centre - k, size, BACKGROUND)
                book._rest(_ASK, centre + k, size, BACKGROUND)
        book.last_price = centre

    def advance(self, book: OrderBook, rng: np.random.Generator, until: float) -> list[Fill]:
        """Simulate competing Poisson clocks from ``book.time`` up to ``until``
        (``ValueError`` past ``max_time()``)."""
        fills: list[Fill] = []
        t = book.time
        if not until > t:
            return fills
        self.check_until(until)
        limit_rate, market_rate, cancel_rate = self.limit_rate, self.market_rate, self.cancel_rate
        two_limit = 2.0 * limit_rate
        base = two_limit + 2.0 * market_rate
        buy_cut = two_limit + market_rate
        offset_cdf, size_base, size_cdf = self._offset_cdf, self._size_base, self._size_cdf
        background = book._by_owner.get(BACKGROUND)
        if background is None:
            background = book._by_owner[BACKGROUND] = []
        bids, ask_keys = book._bid_prices, book._ask_keys
        rest, remove, market = book._rest, book._remove, book._market
        log = math.log
        # Uniforms come in blocks sized to the expected number of events (leftovers discarded),
        # at most _MAX_BLOCK at a time.
        expected = (base + cancel_rate * (len(background) + 8)) * (until - t) * _PER_EVENT
        block = int(min(expected, _MAX_BLOCK)) + 64
        us: list[float] = rng.random(block).tolist()
        last = block - _PER_EVENT  # an event may start at most here in the block
        j = 0
        if not bids or not ask_keys:  # an agent emptied a side since the last call
            j = self._refill(book, us, j)
        while True:
            if j > last:
                us = rng.random(block).tolist()
                j = 0
            n_background = len(background)
            total = base + cancel_rate * n_background
            t -= log(1.0 - us[j]) / total
            if t >= until:
                break
            book.time = t
            x = us[j + 1] * total
            if x < two_limit:
                k = 1 + bisect_right(offset_cdf, us[j + 2])
                size = size_base + bisect_right(size_cdf, us[j + 3])
                j += 4
                if x < limit_rate:
                    if ask_keys:
                        price = -ask_keys[-1] - k
                    elif book.last_price is not None:
                        price = book.last_price - k
                    else:
                        continue
                    rest(_BID, price if price > 1 else 1, size, BACKGROUND)
                else:
                    if bids:
                        rest(_ASK, bids[-1] + k, size, BACKGROUND)
                    elif book.last_price is not None:
                        rest(_ASK, book.last_price + k, size, BACKGROUND)
                    else:
                        continue
            elif x < base:
                size = size_base + bisect_right(size_cdf, us[j + 2])
                j += 3
                if x < buy_cut:
                    if ask_keys:
                        fills += market(_BID, size, BACKGROUND)[1]
                elif bids:
                    fills += market(_ASK, size, BACKGROUND)[1]
            else:
                j += 2
                if n_background:
                    index = int((x - base) / cancel_rate)
                    remove(background[index if index < n_background else n_background - 1])
            if not bids or not ask_keys:  # refill an emptied side at once
                j = self._refill(book, us, j)
        book.time = until
        return fills

    def _refill(self, book: OrderBook, us: list[float], j: int) -> int:
        """Place one background order on each empty side; return the next unused uniform."""
        offset_cdf, size_base, size_cdf = self._offset_cdf, self._size_base, self._size_cdf
        if not book._bid_prices:
            best_ask = book.best_ask()
            reference = best_ask if best_ask is not None else book.last_price
            if reference is not None:
                k = 1 + bisect_right(offset_cdf, us[j])
                size = size_base + bisect_right(size_cdf, us[j + 1])
                book._rest(_BID, max(reference - k, 1), size, BACKGROUND)
            j += 2
        if not book._ask_keys:
            best_bid = book.best_bid()
            reference = best_bid if best_bid is not None else book.last_price
            if reference is not None:
                k = 1 + bisect_right(offset_cdf, us[j])
                size = size_base + bisect_right(size_cdf, us[j + 1])
                book._rest(_ASK, reference + k, size, BACKGROUND)
            j += 2
        return j


@dataclass(frozen=True)
class StaticFlow(OrderFlow):
    """A flow that sends no messages: the seeded book changes only through the agents' orders.

    For unit tests and for replaying a strategy against a fixed book.

    Args:
        bids: ``(ticks below mid, quantity)`` of each background bid, in arrival order.
        asks: ``(ticks above mid, quantity)`` of each background ask, in arrival order.
    """

    bids: tuple[tuple[int, int], ...] = ((1, 3), (2, 3), (3, 3))
    asks: tuple[tuple[int, int], ...] = ((1, 3), (2, 3), (3, 3))

    def initialise(
        self,
        book: OrderBook,
        rng: np.random.Generator,
        *,
        mid: int,
        levels: int = 10,
        orders_per_level: int = 3,
    ) -> None:
        """Clear ``book`` and place ``bids`` and ``asks`` around ``mid`` (last price = mid)."""
        book.clear()
        for offset, quantity in self.bids:
            book.limit(_BID, mid - offset, quantity)
        for offset, quantity in self.asks:
            book.limit(_ASK, mid + offset, quantity)
        book.last_price = mid

    def advance(self, book: OrderBook, rng: np.random.Generator, until: float) -> list[Fill]:
        """Move the clock to ``until``; nothing else happens."""
        if until > book.time:
            book.time = until
        return []
