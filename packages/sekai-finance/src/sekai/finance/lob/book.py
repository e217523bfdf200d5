"""OrderBook: a single-instrument continuous double auction with price-time priority."""

from __future__ import annotations

import numbers
from bisect import bisect_left, insort
from collections import deque

import numpy as np

from sekai._slots import Slotted
from sekai.finance._values import check_int
from sekai.finance.lob.orders import BACKGROUND, Fill, Order, Side

__all__ = ["OrderBook"]

_BID = Side.BID
_ASK = Side.ASK


class _Level(Slotted):
    """The orders resting at one price, oldest first, and their exact total open quantity.

    Cancelled orders stay in ``orders`` with quantity 0 until they reach the front (lazy
    deletion); ``volume`` never counts them.
    """

    __slots__ = ("orders", "volume")

    def __init__(self) -> None:
        self.orders: deque[Order] = deque()
        self.volume = 0


def _as_side(side: object) -> Side:
    if isinstance(side, Side):
        return side
    if not isinstance(side, bool) and isinstance(side, numbers.Integral) and int(side) in (1, -1):
        return Side(int(side))
    raise ValueError(f"side must be Side.BID (1) or Side.ASK (-1), got {side!r}.")


def _owner(value: object) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"owner must be an int (BACKGROUND = -1 or an agent id), got {value!r}.")
    return int(value)


class OrderBook:
    """A limit order book in integer ticks: limit, market and cancel orders, price-time priority.

    Incoming orders execute against the best opposite prices first and, within a price, against
    the oldest resting order first; trades happen at the resting (maker) order's price. Orders of
    the same owner may trade with each other (the envs prevent self-trades themselves).

    Costs: inserting a new price level is O(log L) search plus a short list shift; a cancel is
    O(1) on the queue (lazy deletion with exact per-level volumes); each fill is O(1).

    Attributes:
        time: the book's clock, stamped on new orders and fills (the order flow advances it).
        last_price: price of the latest trade, None before any (``clear()`` forgets it).
        flow_state: scratch space an order flow may keep per book between ``advance`` calls
            (e.g. a Hawkes flow's intensities); ``clear()`` empties it.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Remove every order; time 0, no last price, order ids restart at 1."""
        self.time = 0.0
        self.last_price: int | None = None
        self._next_id = 1
        self._orders: dict[int, Order] = {}
        self._bids: dict[int, _Level] = {}
        self._asks: dict[int, _Level] = {}
        self._bid_prices: list[int] = []  # ascending: the best bid is the last entry
        self._ask_keys: list[int] = []  # minus the ask prices, ascending: best ask last
        self._by_owner: dict[int, list[Order]] = {}
        self.flow_state: dict[str, object] = {}

    # -- queries -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._orders)

    def __repr__(self) -> str:
        return (
            f"OrderBook(orders={len(self._orders)}, best_bid={self.best_bid()}, "
            f"best_ask={self.best_ask()}, time={self.time!r})"
        )

    def best_bid(self) -> int | None:
        """Highest bid price, or None when no bid rests."""
        prices = self._bid_prices
        return prices[-1] if prices else None

    def best_ask(self) -> int | None:
        """Lowest ask price, or None when no ask rests."""
        keys = self._ask_keys
        return -keys[-1] if keys else None

    def mid(self) -> float | None:
        """``(best_bid + best_ask) / 2``, or None unless both sides are quoted."""
        if self._bid_prices and self._ask_keys:
            return (self._bid_prices[-1] - self._ask_keys[-1]) / 2
        return None

    def spread(self) -> int | None:
        """``best_ask - best_bid`` in ticks, or None unless both sides are quoted."""
        if self._bid_prices and self._ask_keys:
            return -self._ask_keys[-1] - self._bid_prices[-1]
        return None

    def get(self, order_id: int) -> Order | None:
        """The resting order with this id, or None if it is not in the book."""
        return self._orders.get(order_id)

    def volume_at(self, side: Side | int, price: int) -> int:
        """Total open quantity resting at ``price`` on ``side``."""
        level = (self._bids if _as_side(side) is _BID else self._asks).get(price)
        return 0 if level is None else level.volume

    def n_levels(self, side: Side | int) -> int:
        """Number of price levels on ``side``."""
        return len(self._bid_prices if _as_side(side) is _BID else self._ask_keys)

    def prices(self, side: Side | int) -> list[int]:
        """The prices with resting orders on ``side``, best first."""
        if _as_side(side) is _BID:
            return self._bid_prices[::-1]
        return [-k for k in reversed(self._ask_keys)]

    def queue(self, side: Side | int, price: int) -> list[Order]:
        """The orders resting at ``price`` on ``side`` in priority order (oldest first)."""
        level = (self._bids if _as_side(side) is _BID else self._asks).get(price)
        return [] if level is None else [o for o in level.orders if o.quantity]

    def depth(self, levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The best ``levels`` price levels per side, best first, zeros where missing.

        Returns:
            four int64 arrays of shape ``(levels,)``: bid prices, bid sizes, ask prices, ask sizes.
        """
        n = check_int("levels", levels)
        out = np.zeros((4, n), np.int64)
        bids, asks = self._bid_prices, self._ask_keys
        k = min(n, len(bids))
        if k:
            top = bids[: -k - 1 : -1]
            out[0, :k] = top
            out[1, :k] = [self._bids[p].volume for p in top]
        k = min(n, len(asks))
        if k:
            top = [-key for key in asks[: -k - 1 : -1]]
            out[2, :k] = top
            out[3, :k] = [self._asks[p].volume for p in top]
        return out[0], out[1], out[2], out[3]

    def orders_of(self, owner: int) -> list[Order]:
        """The resting orders of ``owner``, oldest first."""
        return sorted(self._by_owner.get(owner, ()), key=lambda o: o.order_id)

    def n_orders_of(self, owner: int) -> int:
        """Number of resting orders of ``owner``."""
        orders = self._by_owner.get(owner)
        return 0 if orders is None else len(orders)

    def queue_ahead(self, order_id: int) -> int:
        """Open quantity resting ahead of this order at its price (time priority).

        Raises:
            KeyError: the order is not resting in the book.
        """
        order = self._orders.get(order_id)
        if order is None:
            raise KeyError(f"order {order_id!r} is not resting in the book.")
        level = (self._bids if order.side is _BID else self._asks)[order.price]
        ahead = 0
        for other in level.orders:
            if other is order:
                return ahead
            ahead += other.quantity
        raise AssertionError("a resting order is missing from its level")  # pragma: no cover

    # -- messages ------------------------------------------------------------------------------

    def limit(
        self, side: Side | int, price: int, quantity: int, owner: int = BACKGROUND
    ) -> tuple[int | None, list[Fill]]:
        """Submit a limit order: it trades against crossing prices, the rest rests at ``price``.

        Returns:
            ``(order_id, fills)``; ``order_id`` is None when the order filled on arrival.

        Raises:
            ValueError: side not ±1, price or quantity not an int >= 1 that fits in 64 bits
                (``depth()`` reports them as int64), owner not an int.
        """
        return self._limit(
            _as_side(side),
            check_int("price", price),
            check_int("quantity", quantity),
            _owner(owner),
        )

    def market(
        self, side: Side | int, quantity: int, owner: int = BACKGROUND
    ) -> tuple[int, list[Fill]]:
        """Submit a market order; any quantity the opposite side cannot fill is dropped.

        Returns:
            ``(order_id, fills)``.

        Raises:
            ValueError: side not ±1, quantity not an int >= 1 that fits in 64 bits, owner not
                an int.
        """
        return self._market(_as_side(side), check_int("quantity", quantity), _owner(owner))

    def cancel(self, order_id: int) -> bool:
        """Cancel a resting order; False if it is not in the book."""
        order = self._orders.get(order_id)
        if order is None:
            return False
        self._remove(order)
        return True

    def reduce(self, order_id: int, quantity: int) -> bool:
        """Reduce a resting order to ``quantity`` lots, keeping its priority (0 cancels it).

        Returns:
            False if the order is not in the book.

        Raises:
            ValueError: ``quantity`` is not an int in ``[0, current quantity)``.
        """
        if isinstance(quantity, (bool, np.bool_)) or not isinstance(quantity, numbers.Integral):
            raise ValueError(f"quantity must be an int >= 0, got {quantity!r}.")
        order = self._orders.get(order_id)
        if order is None:
            return False
        new = int(quantity)
        if not 0 <= new < order.quantity:
            raise ValueError(
                f"reduce() needs a quantity in [0, {order.quantity}) for order {order_id} "
                f"(it must be smaller than the open quantity), got {new}."
            )
        if new == 0:
            self._remove(order)
        else:
            level = (self._bids if order.side is _BID else self._asks)[order.price]
            level.volume -= order.quantity - new
            order.quantity = new
        return True

    # -- engine (no argument checks: the order flow calls these directly) ----------------------

    def _limit(
        self, side: Side, price: int, quantity: int, owner: int
    ) -> tuple[int | None, list[Fill]]:
        order_id = self._next_id
        self._next_id = order_id + 1
        fills: list[Fill] = []
        if side is _BID:
            keys = self._ask_keys
            if keys and -keys[-1] <= price:
                quantity = self._take(_BID, quantity, price, order_id, owner, fills)
        else:
            prices = self._bid_prices
            if prices and prices[-1] >= price:
                quantity = self._take(_ASK, quantity, price, order_id, owner, fills)
        if not quantity:
            return None, fills
        return self._rest(side, price, quantity, owner, order_id), fills

    def _rest(self, side: Side, price: int, quantity: int, owner: int, order_id: int = 0) -> int:
        """Add an order that does not cross (the caller makes sure); return its id."""
        if not order_id:
            order_id = self._next_id
            self._next_id = order_id + 1
        order = Order(order_id, side, price, quantity, owner, self.time)
        if side is _BID:
            level = self._bids.get(price)
            if level is None:
                level = self._bids[price] = _Level()
                insort(self._bid_prices, price)
        else:
            level = self._asks.get(price)
            if level is None:
                level = self._asks[price] = _Level()
                insort(self._ask_keys, -price)
        level.orders.append(order)
        level.volume += quantity
        self._orders[order_id] = order
        mine = self._by_owner.get(owner)
        if mine is None:
            mine = self._by_owner[owner] = []
        order._index = len(mine)
        mine.append(order)
        return order_id

    def _market(self, side: Side, quantity: int, owner: int) -> tuple[int, list[Fill]]:
        order_id = self._next_id
        self._next_id = order_id + 1
        fills: list[Fill] = []
        self._take(side, quantity, None, order_id, owner, fills)
        return order_id, fills

    def _take(
        self,
        side: Side,
        quantity: int,
        limit: int | None,
        taker_id: int,
        taker: int,
        fills: list[Fill],
    ) -> int:
        """Execute an incoming ``side`` order against the opposite side; return what is left."""
        if side is _BID:
            levels, keys, sign = self._asks, self._ask_keys, -1
        else:
            levels, keys, sign = self._bids, self._bid_prices, 1
        orders, by_owner, now = self._orders, self._by_owner, self.time
        price = 0
        while quantity and keys:
            price = sign * keys[-1]
            if limit is not None and (price > limit if sign < 0 else price < limit):
                break
            level = levels[price]
            queue = level.orders
            while quantity:
                maker = queue[0]
                size = maker.quantity
                if not size:  # cancelled earlier (lazy deletion)
                    queue.popleft()
                    continue
                if size <= quantity:
                    queue.popleft()
                    quantity -= size
                    level.volume -= size
                    maker.quantity = 0
                    maker_id = maker.order_id
                    del orders[maker_id]
                    mine = by_owner[maker.owner]  # swap-remove from the owner's list
                    last = mine.pop()
                    if last is not maker:
                        mine[maker._index] = last
                        last._index = maker._index
                    fills.append(
                        Fill(price, size, maker_id, taker_id, maker.owner, taker, side, now)
                    )
                    if not level.volume:
                        break
                else:
                    maker.quantity = size - quantity
                    level.volume -= quantity
                    fills.append(
                        Fill(
                            price, quantity, maker.order_id, taker_id, maker.owner, taker, side, now
                        )
                    )
                    quantity = 0
            if not level.volume:
                del levels[price]
                keys.pop()
        if fills:
            self.last_price = fills[-1].price
        return quantity

    def _remove(self, order: Order) -> None:
        """Take a resting order out of the book (cancel)."""
        del self._orders[order.order_id]
        price = order.price
        if order.side is _BID:
            levels, keys, key = self._bids, self._bid_prices, price
        else:
            levels, keys, key = self._asks, self._ask_keys, -price
        level = levels[price]
        level.volume -= order.quantity
        order.quantity = 0
        if not level.volume:
            del levels[price]
            if keys[-1] == key:
                keys.pop()
            else:
                del keys[bisect_left(keys, key)]
        mine = self._by_owner[order.owner]
        last = mine.pop()
        if last is not order:
            mine[order._index] = last
            last._index = order._index
