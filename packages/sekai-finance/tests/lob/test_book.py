"""OrderBook: matching, priority, cancels, queries, and properties over random message streams."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sekai.finance.lob import BACKGROUND, Fill, OrderBook, Side

# -- a naive reference book: a list of orders scanned in full for every message -------------


class ReferenceBook:
    """Price-time priority the slow, obvious way (the model the real book must agree with)."""

    def __init__(self) -> None:
        self.orders: list[list[Any]] = []  # [id, side, price, quantity, owner], arrival order
        self.next_id = 1

    def _match(
        self, side: int, quantity: int, limit: int | None, taker: int, owner: int
    ) -> tuple[int, list[tuple[Any, ...]]]:
        fills = []
        while quantity:
            opposite = [o for o in self.orders if o[1] == -side]
            if side == 1:
                eligible = [o for o in opposite if limit is None or o[2] <= limit]
                eligible.sort(key=lambda o: (o[2], o[0]))
            else:
                eligible = [o for o in opposite if limit is None or o[2] >= limit]
                eligible.sort(key=lambda o: (-o[2], o[0]))
            if not eligible:
                break
            maker = eligible[0]
            size = min(quantity, maker[3])
            fills.append((maker[2], size, maker[0], taker, maker[4], owner, side))
            maker[3] -= size
            quantity -= size
            if not maker[3]:
                self.orders.remove(maker)
        return quantity, fills

    def limit(self, side: int, price: int, quantity: int, owner: int) -> tuple[Any, list[Any]]:
        order_id = self.next_id
        self.next_id += 1
        left, fills = self._match(side, quantity, price, order_id, owner)
        if left:
            self.orders.append([order_id, side, price, left, owner])
            return order_id, fills
        return None, fills

    def market(self, side: int, quantity: int, owner: int) -> tuple[int, list[Any]]:
        order_id = self.next_id
        self.next_id += 1
        return order_id, self._match(side, quantity, None, order_id, owner)[1]

    def cancel(self, order_id: int) -> bool:
        for o in self.orders:
            if o[0] == order_id:
                self.orders.remove(o)
                return True
        return False

    def reduce(self, order_id: int, quantity: int) -> bool:
        for o in self.orders:
            if o[0] == order_id:
                if quantity == 0:
                    self.orders.remove(o)
                else:
                    o[3] = quantity
                return True
        return False

    def snapshot(self) -> dict[int, list[tuple[int, int, int, int]]]:
        out: dict[int, list[tuple[int, int, int, int]]] = {1: [], -1: []}
        for side in (1, -1):
            mine = [o for o in self.orders if o[1] == side]
            mine.sort(key=lambda o: ((-o[2] if side == 1 else o[2]), o[0]))
            out[side] = [(o[2], o[0], o[3], o[4]) for o in mine]
        return out


def snapshot(book: OrderBook) -> dict[int, list[tuple[int, int, int, int]]]:
    """Every resting order per side, in priority order: (price, id, quantity, owner)."""
    return {
        int(side): [
            (o.price, o.order_id, o.quantity, o.owner)
            for price in book.prices(side)
            for o in book.queue(side, price)
        ]
        for side in (Side.BID, Side.ASK)
    }


def as_tuple(fill: Fill) -> tuple[Any, ...]:
    return (
        fill.price,
        fill.quantity,
        fill.maker_order_id,
        fill.taker_order_id,
        fill.maker_owner,
        fill.taker_owner,
        int(fill.taker_side),
    )


# -- message streams ------------------------------------------------------------------------

sides = st.sampled_from([Side.BID, Side.ASK])
owners = st.sampled_from([BACKGROUND, 0, 1])
messages = st.lists(
    st.one_of(
        st.tuples(st.just("limit"), sides, st.integers(95, 105), st.integers(1, 6), owners),
        st.tuples(st.just("market"), sides, st.integers(1, 12), owners),
        st.tuples(st.just("cancel"), st.integers(0, 200)),
        st.tuples(st.just("reduce"), st.integers(0, 200), st.integers(0, 5)),
    ),
    max_size=80,
)


def replay(book: OrderBook, stream: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Send ``stream`` to ``book`` and account for every lot of every order."""
    submitted: dict[int, int] = {}
    filled: dict[int, int] = {}
    cancelled: dict[int, int] = {}
    dropped: dict[int, int] = {}
    ids: list[int] = []
    all_fills: list[Fill] = []
    for step, message in enumerate(stream):
        book.time = float(step)
        kind = message[0]
        if kind in ("limit", "market"):
            if kind == "limit":
                _, side, price, quantity, owner = message
                _, fills = book.limit(side, price, quantity, owner)
                new_id = book._next_id - 1
            else:
                _, side, quantity, owner = message
                new_id, fills = book.market(side, quantity, owner)
            submitted[new_id] = quantity
            ids.append(new_id)
            traded = sum(f.quantity for f in fills)
            if kind == "market":
                dropped[new_id] = quantity - traded
            for f in fills:
                filled[f.maker_order_id] = filled.get(f.maker_order_id, 0) + f.quantity
                filled[f.taker_order_id] = filled.get(f.taker_order_id, 0) + f.quantity
            all_fills += fills
        elif ids:
            target = ids[message[1] % len(ids)]
            order = book.get(target)
            if kind == "cancel":
                open_quantity = 0 if order is None else order.quantity
                assert book.cancel(target) is (order is not None)
                cancelled[target] = cancelled.get(target, 0) + open_quantity
            elif order is not None and message[2] < order.quantity:
                reduction = order.quantity - message[2]
                assert book.reduce(target, message[2])
                cancelled[target] = cancelled.get(target, 0) + reduction
        best_bid, best_ask = book.best_bid(), book.best_ask()
        assert best_bid is None or best_ask is None or best_bid < best_ask, "crossed book"
    return {
        "submitted": submitted,
        "filled": filled,
        "cancelled": cancelled,
        "dropped": dropped,
        "fills": all_fills,
    }


@settings(max_examples=300, deadline=None)
@given(messages)
def test_book_is_never_crossed_and_conserves_every_lot(stream: list[tuple[Any, ...]]) -> None:
    book = OrderBook()
    log = replay(book, stream)
    resting = {o[1]: o[2] for orders in snapshot(book).values() for o in orders}
    for order_id, quantity in log["submitted"].items():
        accounted = (
            resting.get(order_id, 0)
            + log["filled"].get(order_id, 0)
            + log["cancelled"].get(order_id, 0)
            + log["dropped"].get(order_id, 0)
        )
        assert accounted == quantity, f"order {order_id}: {accounted} != {quantity}"
    assert sum(log["submitted"].values()) == (
        sum(resting.values())
        + 2 * sum(f.quantity for f in log["fills"])  # each fill closes lots of two orders
        + sum(log["cancelled"].values())
        + sum(log["dropped"].values())
    )


@settings(max_examples=300, deadline=None)
@given(messages)
def test_book_matches_a_naive_price_time_priority_model(stream: list[tuple[Any, ...]]) -> None:
    book, reference = OrderBook(), ReferenceBook()
    ids: list[int] = []
    for message in stream:
        kind = message[0]
        if kind == "limit":
            _, side, price, quantity, owner = message
            got = book.limit(side, price, quantity, owner)
            want = reference.limit(int(side), price, quantity, owner)
            ids.append(reference.next_id - 1)
        elif kind == "market":
            _, side, quantity, owner = message
            got = book.market(side, quantity, owner)
            want = reference.market(int(side), quantity, owner)
            ids.append(got[0])
        elif not ids:
            continue
        elif kind == "cancel":
            target = ids[message[1] % len(ids)]
            assert book.cancel(target) == reference.cancel(target)
            continue
        else:
            target = ids[message[1] % len(ids)]
            order = book.get(target)
            if order is not None and message[2] < order.quantity:
                assert book.reduce(target, message[2]) == reference.reduce(target, message[2])
            continue
        assert got[0] == want[0]
        assert [as_tuple(f) for f in got[1]] == want[1]
        assert snapshot(book) == reference.snapshot()


@settings(max_examples=200, deadline=None)
@given(messages)
def test_replaying_the_same_messages_gives_the_same_book(stream: list[tuple[Any, ...]]) -> None:
    first, second = OrderBook(), OrderBook()
    log_a, log_b = replay(first, stream), replay(second, stream)
    assert snapshot(first) == snapshot(second)
    assert log_a["fills"] == log_b["fills"]
    assert first.last_price == second.last_price
    assert all(np.array_equal(a, b) for a, b in zip(first.depth(5), second.depth(5)))


@settings(max_examples=200, deadline=None)
@given(messages)
def test_level_volumes_and_queue_positions_agree_with_the_queues(
    stream: list[tuple[Any, ...]],
) -> None:
    book = OrderBook()
    replay(book, stream)
    total = 0
    for side in (Side.BID, Side.ASK):
        for price in book.prices(side):
            queue = book.queue(side, price)
            assert queue, "an empty level was kept"
            assert book.volume_at(side, price) == sum(o.quantity for o in queue)
            ahead = 0
            for order in queue:
                assert book.queue_ahead(order.order_id) == ahead
                ahead += order.quantity
            total += len(queue)
    assert len(book) == total
    for owner in (BACKGROUND, 0, 1):
        mine = book.orders_of(owner)
        assert book.n_orders_of(owner) == len(mine)
        assert all(o.owner == owner for o in mine)


# -- unit behaviour -------------------------------------------------------------------------


def rest(book: OrderBook, side: Side, price: int, quantity: int) -> int:
    """Place a limit order that rests; return its id."""
    order_id, _ = book.limit(side, price, quantity)
    assert order_id is not None
    return order_id


def test_limit_order_rests_when_it_does_not_cross() -> None:
    book = OrderBook()
    order_id, fills = book.limit(Side.BID, 100, 5)
    assert order_id == 1 and fills == []
    assert book.best_bid() == 100 and book.best_ask() is None
    assert book.mid() is None and book.spread() is None
    assert len(book) == 1


def test_crossing_limit_order_trades_at_the_makers_price_and_rests_the_rest() -> None:
    book = OrderBook()
    book.limit(Side.ASK, 101, 2, owner=0)
    book.limit(Side.ASK, 102, 2)
    order_id, fills = book.limit(Side.BID, 103, 5, owner=1)
    assert [(f.price, f.quantity, f.maker_owner, f.taker_owner) for f in fills] == [
        (101, 2, 0, 1),
        (102, 2, BACKGROUND, 1),
    ]
    assert order_id == 3 and book.best_bid() == 103 and book.volume_at(Side.BID, 103) == 1
    assert book.last_price == 102


def test_fully_filled_limit_order_returns_no_id() -> None:
    book = OrderBook()
    book.limit(Side.ASK, 101, 3)
    order_id, fills = book.limit(Side.BID, 101, 3)
    assert order_id is None and sum(f.quantity for f in fills) == 3
    assert len(book) == 0


def test_market_order_takes_oldest_first_and_drops_the_unfilled_rest() -> None:
    book = OrderBook()
    first, _ = book.limit(Side.BID, 99, 1)
    second, _ = book.limit(Side.BID, 99, 1)
    order_id, fills = book.market(Side.ASK, 5, owner=0)
    assert [f.maker_order_id for f in fills] == [first, second]
    assert order_id == 3 and len(book) == 0
    assert all(f.taker_side is Side.ASK for f in fills)


def test_partial_fill_keeps_the_makers_priority() -> None:
    book = OrderBook()
    first = rest(book, Side.ASK, 101, 3)
    second = rest(book, Side.ASK, 101, 3)
    book.market(Side.BID, 2)
    assert book.get(first).quantity == 1  # type: ignore[union-attr]
    assert book.queue_ahead(second) == 1


def test_cancel_removes_the_order_and_empties_its_level() -> None:
    book = OrderBook()
    order_id = rest(book, Side.ASK, 101, 3)
    book.limit(Side.ASK, 102, 3)
    assert book.cancel(order_id) is True
    assert book.best_ask() == 102 and book.n_levels(Side.ASK) == 1
    assert book.cancel(order_id) is False


def test_cancelled_order_behind_the_front_is_skipped_when_matching() -> None:
    book = OrderBook()
    a, b, c = (rest(book, Side.BID, 99, 1) for _ in range(3))
    book.cancel(b)
    _, fills = book.market(Side.ASK, 2)
    assert [f.maker_order_id for f in fills] == [a, c]


def test_reduce_keeps_priority_and_zero_cancels() -> None:
    book = OrderBook()
    a, _ = book.limit(Side.BID, 99, 5)
    b, _ = book.limit(Side.BID, 99, 5)
    assert a is not None and b is not None
    assert book.reduce(a, 2) is True
    assert book.volume_at(Side.BID, 99) == 7 and book.queue_ahead(b) == 2
    assert book.reduce(a, 0) is True and book.get(a) is None
    assert book.reduce(a, 0) is False


def test_reduce_refuses_a_quantity_that_is_not_smaller() -> None:
    book = OrderBook()
    a, _ = book.limit(Side.BID, 99, 5)
    assert a is not None
    with pytest.raises(ValueError, match="smaller"):
        book.reduce(a, 5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda b: b.limit(Side.BID, 0, 1), "price"),
        (lambda b: b.limit(Side.BID, 100, 0), "quantity"),
        (lambda b: b.limit(Side.BID, 100.0, 1), "price"),
        (lambda b: b.limit(Side.BID, True, 1), "price"),
        (lambda b: b.limit(2, 100, 1), "side"),
        (lambda b: b.market(Side.BID, -1), "quantity"),
        (lambda b: b.limit(Side.BID, 100, 1, owner="me"), "owner"),
    ],
)
def test_invalid_messages_raise_value_error(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call(OrderBook())


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda b: b.limit(Side.ASK, 2**63, 1), "price"),
        (lambda b: b.limit(Side.BID, 10, 2**64), "quantity"),
        (lambda b: b.market(Side.BID, 2**63), "quantity"),
    ],
)
def test_a_price_or_quantity_beyond_int64_is_refused_naming_it(call: Any, name: str) -> None:
    book = OrderBook()
    with pytest.raises(ValueError, match=f"^{name} must be an int >= 1 that fits in 64 bits"):
        call(book)
    assert len(book) == 0
    book.limit(Side.ASK, 2**63 - 1, 2**63 - 1)  # the largest int64 values are orders
    assert [a.tolist() for a in book.depth(1)] == [[0], [0], [2**63 - 1], [2**63 - 1]]


def test_sides_may_be_given_as_plus_or_minus_one() -> None:
    book = OrderBook()
    book.limit(1, 99, 1)
    book.limit(-1, 101, 1)
    assert (book.best_bid(), book.best_ask(), book.mid(), book.spread()) == (99, 101, 100.0, 2)


def test_depth_lists_best_levels_first_with_zeros_for_missing_levels() -> None:
    book = OrderBook()
    for price, size in ((99, 1), (98, 2), (99, 3)):
        book.limit(Side.BID, price, size)
    book.limit(Side.ASK, 101, 4)
    bid_px, bid_sz, ask_px, ask_sz = book.depth(3)
    assert bid_px.tolist() == [99, 98, 0] and bid_sz.tolist() == [4, 2, 0]
    assert ask_px.tolist() == [101, 0, 0] and ask_sz.tolist() == [4, 0, 0]
    assert bid_px.dtype == np.int64


def test_queue_ahead_of_an_order_not_in_the_book_raises_key_error() -> None:
    with pytest.raises(KeyError):
        OrderBook().queue_ahead(7)


def test_clear_restarts_ids_time_and_last_price() -> None:
    book = OrderBook()
    book.limit(Side.ASK, 101, 1)
    book.market(Side.BID, 1)
    book.time = 5.0
    book.clear()
    assert (len(book), book.time, book.last_price) == (0, 0.0, None)
    assert book.limit(Side.BID, 99, 1)[0] == 1


def test_orders_of_lists_an_owners_resting_orders_oldest_first() -> None:
    book = OrderBook()
    book.limit(Side.BID, 99, 1, owner=0)
    book.limit(Side.BID, 98, 1, owner=1)
    book.limit(Side.ASK, 101, 1, owner=0)
    assert [o.order_id for o in book.orders_of(0)] == [1, 3]
    assert book.n_orders_of(0) == 2 and book.n_orders_of(5) == 0


def test_orders_of_stays_oldest_first_after_an_owners_order_goes() -> None:
    book = OrderBook()
    first, second, third = (rest_as(book, 7, price) for price in (100, 99, 98))
    book.cancel(first)
    assert [o.order_id for o in book.orders_of(7)] == [second, third]
    book.limit(Side.ASK, 99, 1)  # fills the best bid, 99
    assert [o.order_id for o in book.orders_of(7)] == [third]


def rest_as(book: OrderBook, owner: int, price: int) -> int:
    """Place a one-lot bid of ``owner`` that rests; return its id."""
    order_id, _ = book.limit(Side.BID, price, 1, owner=owner)
    assert order_id is not None
    return order_id


def test_orders_and_fills_carry_the_book_time() -> None:
    book = OrderBook()
    book.time = 2.5
    order_id, _ = book.limit(Side.ASK, 101, 1)
    book.time = 3.0
    _, fills = book.market(Side.BID, 1)
    assert fills[0].time == 3.0
    assert fills[0].maker_order_id == order_id


def test_side_opposite_and_fill_immutability() -> None:
    assert Side.BID.opposite is Side.ASK and Side.ASK.opposite is Side.BID
    fill = Fill(100, 1, 1, 2, -1, 0, Side.BID, 0.0)
    with pytest.raises(AttributeError):
        fill.price = 3  # type: ignore[misc]


def test_order_record_repr_shows_every_field() -> None:
    book = OrderBook()
    book.time = 2.5
    order_id, _ = book.limit(Side.ASK, 101, 4, owner=1)
    assert order_id is not None
    assert repr(book.get(order_id)) == (
        f"Order(order_id={order_id}, side=ASK, price=101, quantity=4, owner=1, time=2.5)"
    )


def test_filled_order_record_shows_zero_quantity() -> None:
    book = OrderBook()
    order_id, _ = book.limit(Side.ASK, 101, 1)
    assert order_id is not None
    record = book.get(order_id)
    book.market(Side.BID, 1)
    assert record is not None and record.quantity == 0 and book.get(order_id) is None
