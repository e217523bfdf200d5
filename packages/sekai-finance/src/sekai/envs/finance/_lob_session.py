"""The order-book session of LimitOrderBook-v0 and LimitOrderBookMarket: book, flow, traders."""

from __future__ import annotations

import math
import numbers
from collections import deque
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from sekai._slots import Slotted
from sekai.envs.finance._common import check_int, check_order_size, check_real
from sekai.envs.finance._session import RewardTerm, check_reward_terms
from sekai.error import InvalidAction
from sekai.finance._values import is_real, scalar
from sekai.finance.lob import (
    BACKGROUND,
    Fill,
    Order,
    OrderBook,
    OrderFlow,
    Side,
    ZeroIntelligenceFlow,
)
from sekai.spaces import Box, Dict, MaskedBox, MultiDiscrete

__all__ = [
    "LobParams",
    "LobPenalties",
    "LobSession",
    "Trader",
    "check_penalties",
    "check_price_scale",
    "decision_time",
    "lob_action_space",
    "lob_observation_space",
    "session_steps",
]

_BID = Side.BID
_ASK = Side.ASK
_SELL, _NONE, _BUY = 0, 1, 2


SEED_LEVELS = 10  # price levels per side of background orders a session starts with
_END_TOLERANCE = 10**9  # a decision due at most wait / 10**9 before the session end is the end
# Prices and cash are integer ticks, but the mid, (bid + ask) / 2, is a float64, and so is what
# it enters: inventory * mid in the wealth, the reward (its change), and the book's and the
# trades' offsets from it. These are multiples of 1/2 of magnitude at most max_inventory *
# (bid + ask) / 2, exact while max_inventory * (bid + ask) <= 2**53. With room for every price
# a session reaches to go up to twice mid_price (the flow's drift, the seeded levels and the
# agents' quotes up to max_quote_offset ticks behind the best are a few ticks beside it, and
# mid_price >= 2 * (max_quote_offset + levels)), that is 4 * max_inventory * mid_price <= 2**53.
_EXACT = 2**53


def decision_time(due: Fraction, wait: Fraction, length: Fraction) -> Fraction:
    """When a decision due at session time ``due``, ``wait`` after the trader's previous one,
    happens: at ``due``, or at the session end ``length`` when ``due`` reaches it or falls short
    of it by at most 1e-9 of the wait.

    A session of whole decision intervals thus ends at its length even when rounding puts the
    last multiple just before it (3 x 0.7 is 2.0999999999999996, short of 2.1), instead of
    adding a decision a sliver of time before the end. Both LimitOrderBook-v0 (through
    ``session_steps``) and LimitOrderBookMarket keep their clocks by this rule.
    """
    if due + wait < length:  # a whole wait before the end (most decisions): cheap to tell
        return due
    return length if (length - due) * _END_TOLERANCE <= wait else due


def session_steps(length: float, interval: float) -> int:
    """Decisions in a session of ``length`` with one every ``interval``: the first ``k >= 1``
    whose due time ``k * interval`` ``decision_time`` takes for the session end (this is
    ``ceil(length / interval - 1e-9)`` in exact arithmetic)."""
    end, wait = Fraction(length), Fraction(interval)
    steps = max(1, math.ceil(end / wait))  # the first due time at or past the end
    if steps > 1 and decision_time((steps - 1) * wait, wait, end) == end:
        steps -= 1
    return steps


def lob_observation_space(levels: int, max_trades: int) -> Dict:
    """``Dict{book: (levels, 4), trades: MaskedBox((3,), max_trades), agent: (6,)}``, float32."""
    return Dict(
        {
            "book": Box(-np.inf, np.inf, (levels, 4), np.float32),
            "trades": MaskedBox(-np.inf, np.inf, shape=(3,), max_size=max_trades, dtype=np.float32),
            "agent": Box(-np.inf, np.inf, (6,), np.float32),
        }
    )


def lob_action_space(max_quote_offset: int) -> MultiDiscrete:
    """``MultiDiscrete([K + 1, K + 1, 3])``: bid level, ask level, market order."""
    k = max_quote_offset + 1
    return MultiDiscrete([k, k, 3])


class LobParams:
    """Validated parameters of an order-book session (shared by the single and multi-agent env)."""

    def __init__(
        self,
        *,
        flow: Any,
        mid_price: Any,
        session_length: Any,
        levels: Any,
        max_quote_offset: Any,
        order_size: Any,
        max_inventory: Any,
        inventory_penalty: Any,
        terminal_penalty: Any,
        max_trades: Any,
        warmup: Any,
    ) -> None:
        self.flow = check_flow(flow)
        self.session_length = check_real("session_length", session_length, "gt0")
        self.levels = check_int("levels", levels)
        self.max_quote_offset = check_int("max_quote_offset", max_quote_offset)
        self.order_size = check_int("order_size", order_size)
        self.max_inventory = check_int("max_inventory", max_inventory)
        self.inventory_penalty = check_real("inventory_penalty", inventory_penalty, "ge0")
        self.terminal_penalty = check_real("terminal_penalty", terminal_penalty, "ge0")
        self.max_trades = check_int("max_trades", max_trades)
        self.warmup = check_real("warmup", warmup, "ge0")
        check_flow_time(self.flow, self.warmup, self.session_length)
        smallest = max(2 * (self.max_quote_offset + self.levels), SEED_LEVELS + 1)
        mid_price = scalar(mid_price)  # a 0-d array of any library, as check_int takes it
        if is_real(mid_price) and isinstance(mid_price, numbers.Integral) and mid_price < smallest:
            raise ValueError(
                f"mid_price must be an int >= max(2 * (max_quote_offset + levels), "
                f"{SEED_LEVELS + 1}) = {smallest} (the book is seeded {SEED_LEVELS} ticks deep "
                f"below the mid), got {int(mid_price)}."
            )
        self.mid_price = check_int("mid_price", mid_price, smallest)  # in ticks, and 64 bits
        check_order_size(self.order_size, self.max_inventory)
        check_price_scale(self.mid_price, self.max_inventory)


def check_price_scale(mid_price: int, max_inventory: int, changed: bool = False) -> None:
    """Refuse a ``mid_price`` above ``2**53 // (4 * max_inventory)``, beyond which prices and
    P&L are no longer exact in float64 (see ``_EXACT``); ``changed``: ``max_inventory`` was
    just set (the constructor otherwise)."""
    if 4 * max_inventory * mid_price <= _EXACT:  # Python ints: exact
        return
    largest = _EXACT // (4 * max_inventory)
    head = f"setting max_inventory={max_inventory} puts mid_price={mid_price}"
    if not changed:
        head = f"mid_price={mid_price} is"
    raise ValueError(
        f"{head} above 2**53 // (4 * max_inventory) = {largest} (with "
        f"max_inventory={max_inventory}), beyond which the env's prices and P&L are not exact "
        "in float64: the mid, (bid + ask) / 2, and inventory * mid are float64 multiples of 1/2 "
        "up to max_inventory * (bid + ask) / 2, exact while max_inventory * (bid + ask) <= "
        "2**53, with room for prices to double. Use a smaller mid_price or max_inventory."
    )


def check_penalties(env_id: str, changed: str | None, params: LobParams, longest_dt: float) -> None:
    """Refuse penalties under which a step's reward overflows float64 at its worst case, as
    MarketMaking-v0 refuses its own: ``inventory_penalty * max_inventory**2 * dt`` over the
    longest step (``longest_dt``), ``terminal_penalty * max_inventory**2``, and their sum.
    ``changed``: the parameter just set (None: the constructor)."""
    q = float(params.max_inventory)
    running, terminal = params.inventory_penalty, params.terminal_penalty
    penalty = "inventory_penalty * max_inventory**2 * dt"
    final = "terminal_penalty * max_inventory**2"
    terms = [
        RewardTerm(
            "the running inventory penalty",
            penalty,
            (running, q, q, longest_dt),  # in the order settle() multiplies them
            "inventory_penalty or max_inventory",
        ),
        RewardTerm(
            "the terminal inventory penalty",
            final,
            (terminal, q, q),
            "terminal_penalty or max_inventory",
        ),
        RewardTerm(
            "the inventory penalties",
            f"{penalty} + {final}",
            (running * q * q * longest_dt + terminal * q * q,),
            "inventory_penalty, terminal_penalty or max_inventory",
        ),
    ]
    values = {
        "inventory_penalty": running,
        "terminal_penalty": terminal,
        "max_inventory": params.max_inventory,
        "dt": longest_dt,
    }
    check_reward_terms(env_id, changed, terms, values)


class LobPenalties:
    """The inventory penalties of an order-book env as settable attributes, checked when set.

    The next step uses a new value. One under which the reward overflows float64 at its worst
    case is refused with the constructor's ``ValueError`` and the old value kept. Subclasses set
    ``_params``, ``_longest_dt`` (the longest step's ``dt``) and ``_penalty_id`` (the env
    named by such a refusal).
    """

    _params: LobParams
    _longest_dt: float
    _penalty_id: ClassVar[str]

    @property
    def inventory_penalty(self) -> float:
        """Penalty per squared lot per unit time."""
        return self._params.inventory_penalty

    @inventory_penalty.setter
    def inventory_penalty(self, value: Any) -> None:
        self._set_penalised("inventory_penalty", check_real("inventory_penalty", value, "ge0"))

    @property
    def terminal_penalty(self) -> float:
        """Penalty per squared lot held at the session end (subtracted on the last step)."""
        return self._params.terminal_penalty

    @terminal_penalty.setter
    def terminal_penalty(self, value: Any) -> None:
        self._set_penalised("terminal_penalty", check_real("terminal_penalty", value, "ge0"))

    def _set_penalised(self, name: str, value: float) -> None:
        """Set a parameter of the inventory penalties, refused (and left as it was) when the
        reward would overflow float64 at its worst case, as the constructor refuses it."""
        old = getattr(self._params, name)
        setattr(self._params, name, value)
        try:
            check_penalties(self._penalty_id, name, self._params, self._longest_dt)
        except ValueError:
            setattr(self._params, name, old)
            raise


def check_flow_time(flow: OrderFlow, warmup: float, session_length: float) -> None:
    """``ValueError`` unless ``flow`` can simulate a session: its clock runs to ``warmup +
    session_length`` (``OrderFlow.check_until``; ZeroIntelligenceFlow's ``max_time`` bounds
    it by its rates)."""
    flow.check_until(
        warmup + session_length,
        f"warmup + session_length ({warmup!r} + {session_length!r})",
    )


def check_flow(flow: Any) -> OrderFlow:
    """``None`` -> ``ZeroIntelligenceFlow()``; an ``OrderFlow`` as is; else ``TypeError``."""
    if flow is None:
        return ZeroIntelligenceFlow()
    if not isinstance(flow, OrderFlow):
        raise TypeError(
            f"flow must be a sekai.finance.lob.OrderFlow (e.g. ZeroIntelligenceFlow()), got "
            f"{type(flow).__name__}."
        )
    return flow


class Trader(Slotted):
    """One agent's account and resting quotes in the session."""

    __slots__ = ("ask_id", "bid_id", "cash", "fills", "inventory", "owner", "seen", "wealth")

    def __init__(self, owner: int) -> None:
        self.owner = owner
        self.reset()

    def reset(self) -> None:
        """Flat, no cash, no quotes."""
        self.inventory = 0
        self.cash = 0  # ticks x lots: integer arithmetic is exact
        self.bid_id = 0  # 0 = no resting bid
        self.ask_id = 0
        self.fills = 0  # fills since the last info
        self.seen = 0  # sequence number of the last trade observed
        self.wealth = 0.0  # cash + inventory * mid at the last observation


def parse_lob_action(action: Any, n_levels: int, space: Any) -> tuple[int, int, int]:
    """``(bid_level, ask_level, market)`` from any integer array-like of 3 entries in range."""
    if type(action) is np.ndarray and action.shape == (3,) and action.dtype.kind in "iu":
        bid, ask, market = action.tolist()
    else:
        try:
            array = np.asarray(action)
        except (TypeError, ValueError):
            raise InvalidAction(action, space) from None
        if array.shape != (3,) or array.dtype.kind not in "iu":
            raise InvalidAction(action, space)
        bid, ask, market = array.tolist()
    if not (0 <= bid < n_levels and 0 <= ask < n_levels and 0 <= market < 3):
        raise InvalidAction(action, space)
    return bid, ask, market


class LobSession:
    """A trading session in one order book: background flow plus one or more traders.

    Times handed to this class are session times (0 at the session start); the book's clock is
    ``t0 + session time``, ``t0`` being the warm-up.
    """

    def __init__(self, params: LobParams, n_traders: int) -> None:
        self.params = params
        self.book = OrderBook()
        self.traders = [Trader(i) for i in range(n_traders)]
        self.t0 = 0.0
        self._time = 0.0
        self._trades: deque[tuple[int, int, int, int]] = deque(maxlen=params.max_trades)
        self._seq = 0

    # -- clock and prices ------------------------------------------------------------------------

    @property
    def time(self) -> float:
        """Session time elapsed since the session start.

        Kept as given to ``advance`` rather than read back from the book's clock, whose
        ``t0 + until`` loses the decision times' exact values (0.1 came back as 0.1000000000000014).
        """
        return self._time

    def mid(self) -> float:
        """The book's mid (last price when one side is empty)."""
        book = self.book
        bids, asks = book._bid_prices, book._ask_keys
        if bids and asks:
            return (bids[-1] - asks[-1]) / 2
        last = book.last_price
        return float(self.params.mid_price if last is None else last)

    def spread(self) -> int:
        """Best ask minus best bid in ticks (0 when one side is empty)."""
        spread = self.book.spread()
        return 0 if spread is None else spread

    def wealth(self, trader: Trader) -> float:
        """``cash + inventory * mid`` in ticks."""
        return trader.cash + trader.inventory * self.mid()

    # -- episode ---------------------------------------------------------------------------------

    def reset(self, rng: np.random.Generator) -> None:
        """Seed the book, let it evolve for the warm-up, and reset every trader."""
        params = self.params
        params.flow.initialise(self.book, rng, mid=params.mid_price, levels=SEED_LEVELS)
        self._trades.clear()
        self._seq = 0
        for trader in self.traders:
            trader.reset()
        self._record(params.flow.advance(self.book, rng, params.warmup))
        self.t0 = self.book.time
        self._time = 0.0
        mid = self.mid()
        for trader in self.traders:
            trader.wealth = trader.cash + trader.inventory * mid

    def advance(self, rng: np.random.Generator, until: float) -> None:
        """Run the background flow to session time ``until``, booking the traders' fills."""
        self._record(self.params.flow.advance(self.book, rng, self.t0 + until))
        self._time = float(until)

    def _record(self, fills: list[Fill]) -> None:
        """Book the traders' sides of ``fills`` and remember them as recent trades."""
        if not fills:
            return
        traders, seq, trades = self.traders, self._seq, self._trades
        for fill in fills:
            price, quantity, taker_side = fill.price, fill.quantity, fill.taker_side
            seq += 1
            trades.append((seq, price, quantity, int(taker_side)))
            owner = fill.maker_owner
            if owner != BACKGROUND:
                trader = traders[owner]
                signed = -quantity if taker_side is _BID else quantity  # the maker's side
                trader.inventory += signed
                trader.cash -= signed * price
                trader.fills += 1
            owner = fill.taker_owner
            if owner != BACKGROUND:
                trader = traders[owner]
                signed = quantity if taker_side is _BID else -quantity
                trader.inventory += signed
                trader.cash -= signed * price
                trader.fills += 1
        self._seq = seq

    # -- decisions -------------------------------------------------------------------------------

    def can_buy(self, trader: Trader) -> bool:
        """Whether buying ``order_size`` lots keeps the inventory within the limit."""
        return trader.inventory + self.params.order_size <= self.params.max_inventory

    def can_sell(self, trader: Trader) -> bool:
        """Whether selling ``order_size`` lots keeps the inventory within the limit."""
        return trader.inventory - self.params.order_size >= -self.params.max_inventory

    def action_mask(self, trader: Trader) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bid (K+1,), ask (K+1,), market (3,))`` int8 masks for the trader's inventory."""
        n = self.params.max_quote_offset + 1
        buy, sell = self.can_buy(trader), self.can_sell(trader)
        bid = np.ones(n, np.int8) if buy else np.eye(1, n, dtype=np.int8)[0]
        ask = np.ones(n, np.int8) if sell else np.eye(1, n, dtype=np.int8)[0]
        market = np.array([sell, True, buy], np.int8)
        return bid, ask, market

    def decide(self, trader: Trader, bid_level: int, ask_level: int, market: int) -> None:
        """Apply one decision: market order first (self-trade prevention), then both quotes."""
        book, size = self.book, self.params.order_size
        if market == _BUY and self.can_buy(trader):
            if trader.ask_id:  # cancel-resting self-trade prevention
                book.cancel(trader.ask_id)
                trader.ask_id = 0
            self._record(book._market(_BID, size, trader.owner)[1])
        elif market == _SELL and self.can_sell(trader):
            if trader.bid_id:
                book.cancel(trader.bid_id)
                trader.bid_id = 0
            self._record(book._market(_ASK, size, trader.owner)[1])
        trader.bid_id = self._quote(trader, _BID, bid_level if self.can_buy(trader) else 0)
        trader.ask_id = self._quote(trader, _ASK, ask_level if self.can_sell(trader) else 0)

    def _quote(self, trader: Trader, side: Side, level: int) -> int:
        """Keep, move, place or cancel the trader's quote on ``side``; return its id (0: none)."""
        book = self.book
        order_id = trader.bid_id if side is _BID else trader.ask_id
        current = book._orders.get(order_id) if order_id else None
        if not level:
            if current is not None:
                book._remove(current)
            return 0
        target = self._quote_price(side, level, current)
        if current is not None:
            if current.price == target:
                return order_id
            if level == 1 and self._is_best(current):
                return order_id  # never pull a quote off the best
            book._remove(current)
        new_id, fills = book._limit(side, target, self.params.order_size, trader.owner)
        self._record(fills)
        return new_id or 0

    def _is_best(self, order: Order) -> bool:
        if order.side is _BID:
            return order.price >= self.book._bid_prices[-1]
        return order.price <= -self.book._ask_keys[-1]

    def _quote_price(self, side: Side, level: int, own: Order | None) -> int:
        """Price of a level-``level`` quote: ``level - 1`` ticks behind the others' best."""
        book = self.book
        best = _others_best(book, side, own)
        if best is not None:
            price = best - (level - 1) if side is _BID else best + (level - 1)
        else:
            opposite = book.best_ask() if side is _BID else book.best_bid()
            if opposite is not None:
                inside = opposite - 1 if side is _BID else opposite + 1
            else:
                last = float(self.params.mid_price if book.last_price is None else book.last_price)
                inside = math.floor(last) if side is _BID else math.ceil(last)
            price = inside - (level - 1) if side is _BID else inside + (level - 1)
        opposite = book.best_ask() if side is _BID else book.best_bid()
        if side is _BID:
            if opposite is not None and price >= opposite:
                price = opposite - 1
            return max(price, 1)
        if opposite is not None and price <= opposite:
            price = opposite + 1
        return price

    # -- observations ----------------------------------------------------------------------------

    def observe(self, trader: Trader) -> dict[str, Any]:
        """The trader's observation; the trades in it count as seen from now on."""
        params, book = self.params, self.book
        mid = self.mid()
        levels = params.levels
        table = np.zeros((levels, 4), np.float32)
        bids, asks = book._bid_prices, book._ask_keys
        k = min(levels, len(bids))
        if k:
            top = bids[: -k - 1 : -1]
            table[:k, 0] = [p - mid for p in top]
            table[:k, 1] = [book._bids[p].volume for p in top]
        k = min(levels, len(asks))
        if k:
            top = [-key for key in asks[: -k - 1 : -1]]
            table[:k, 2] = [p - mid for p in top]
            table[:k, 3] = [book._asks[p].volume for p in top]
        values = np.zeros((params.max_trades, 3), np.float32)
        mask = np.zeros(params.max_trades, np.int8)
        recent = [t for t in self._trades if t[0] > trader.seen]
        if recent:
            rows = np.array(recent, np.float64)[:, 1:]
            rows[:, 0] -= mid
            values[: len(recent)] = rows
            mask[: len(recent)] = 1
        trader.seen = self._seq
        bid = book._orders.get(trader.bid_id) if trader.bid_id else None
        ask = book._orders.get(trader.ask_id) if trader.ask_id else None
        left = max(params.session_length - self.time, 0.0) / params.session_length
        agent = np.array(
            [
                trader.inventory / params.max_inventory,
                left,
                bid is not None,
                ask is not None,
                0 if bid is None else book.queue_ahead(bid.order_id),
                0 if ask is None else book.queue_ahead(ask.order_id),
            ],
            np.float32,
        )
        return {"book": table, "trades": {"values": values, "mask": mask}, "agent": agent}

    def settle(self, trader: Trader, dt: float, last: bool) -> float:
        """The trader's reward since the last settlement: Δwealth − inventory_penalty ·
        inventory² · dt, less terminal_penalty · inventory² when the session ends (``last``)."""
        wealth = trader.cash + trader.inventory * self.mid()
        reward = wealth - trader.wealth
        trader.wealth = wealth
        q = trader.inventory
        reward -= self.params.inventory_penalty * q * q * dt
        if last:
            reward -= self.params.terminal_penalty * q * q
        return float(reward)

    def info(self, trader: Trader, dt: float) -> dict[str, Any]:
        """The trader's info; ``fills`` counts its fills since the previous info (then restarts)."""
        fills, trader.fills = trader.fills, 0
        return {
            "timestamp": float(self.time),
            "mid_price": float(self.mid()),
            "spread": int(self.spread()),
            "inventory": int(trader.inventory),
            "cash": float(trader.cash),
            "wealth": float(trader.cash + trader.inventory * self.mid()),
            "fills": int(fills),
            "dt": float(dt),
        }


def _others_best(book: OrderBook, side: Side, own: Order | None) -> int | None:
    """Best price on ``side`` among orders other than ``own``."""
    if side is _BID:
        prices = book._bid_prices
        if not prices:
            return None
        best = prices[-1]
        if own is None or own.price != best or book._bids[best].volume != own.quantity:
            return best
        return prices[-2] if len(prices) > 1 else None
    keys = book._ask_keys
    if not keys:
        return None
    best = -keys[-1]
    if own is None or own.price != best or book._asks[best].volume != own.quantity:
        return best
    return -keys[-2] if len(keys) > 1 else None
