"""Order book records: the side of an order, a resting order and a fill."""

from __future__ import annotations

import enum
from typing import NamedTuple

from sekai._slots import Slotted

__all__ = ["BACKGROUND", "Fill", "Order", "Side"]

BACKGROUND = -1
"""Owner id of the background order flow (agents use ids 0, 1, ...)."""


class Side(enum.IntEnum):
    """The side of an order: ``BID`` (buy, +1) or ``ASK`` (sell, -1)."""

    BID = 1
    ASK = -1

    @property
    def opposite(self) -> Side:
        """The other side."""
        return Side.ASK if self is Side.BID else Side.BID


class Order(Slotted):
    """A live order record: while the order rests in the book its ``quantity`` is the open size.

    The book updates the record in place as the order fills; a record whose order left the
    book (filled or cancelled) has ``quantity == 0``.

    Attributes:
        order_id: id given by the book (1, 2, ... in arrival order).
        side: ``Side.BID`` or ``Side.ASK``.
        price: limit price in ticks.
        quantity: open quantity in lots.
        owner: ``BACKGROUND`` or an agent id.
        time: book time at which the order arrived (its time priority).
    """

    __slots__ = ("_index", "order_id", "owner", "price", "quantity", "side", "time")

    def __init__(
        self, order_id: int, side: Side, price: int, quantity: int, owner: int, time: float
    ) -> None:
        self.order_id = order_id
        self.side = side
        self.price = price
        self.quantity = quantity
        self.owner = owner
        self.time = time
        self._index = -1  # position in the book's per-owner list (swap-remove bookkeeping)

    def __repr__(self) -> str:
        return (
            f"Order(order_id={self.order_id}, side={self.side.name}, price={self.price}, "
            f"quantity={self.quantity}, owner={self.owner}, time={self.time!r})"
        )


class Fill(NamedTuple):
    """One execution between a resting (maker) order and an incoming (taker) order.

    Trades happen at the maker's price. Immutable.
    """

    price: int
    quantity: int
    maker_order_id: int
    taker_order_id: int
    maker_owner: int
    taker_owner: int
    taker_side: Side
    time: float
