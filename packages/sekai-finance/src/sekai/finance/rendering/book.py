"""OrderBookChart: a depth ladder with traders' resting orders at their place in the queue."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.finance._values import is_int, scalar
from sekai.finance.rendering._format import format_price
from sekai.finance.rendering._paint import mix, palette_color, text
from sekai.finance.rendering.chart import (
    Box,
    Chart,
    DrawContext,
    Source,
    check_source,
    check_title,
    check_weight,
    describe_source,
    read,
)
from sekai.rendering import Canvas

__all__ = ["OrderBookChart"]


@dataclass(frozen=True)
class _Resting:
    """One highlighted order: its level, the volume queued ahead of it, its size and owner."""

    side: int  # +1 bid, -1 ask
    price: int
    ahead: int
    quantity: int
    owner: Any


class OrderBookChart(Chart):
    """The order book now: ``levels`` price levels per side, asks above bids, as bars of size.

    Orders of the traders named by ``owners`` are highlighted in their colour at their place in
    the queue (the volume ahead of them at that price comes first) and labelled.

    Args:
        book: the ``sekai.finance.lob.OrderBook`` (an env attribute name or a callable).
        owners: a mapping ``{owner id: label}`` of the traders to highlight (e.g.
            ``{trader_id: "You"}``), or a source giving it; a label is shown as ``str(label)``.
            One trader is drawn in the theme's accent colour; several take the palette's
            colours in order.
        levels: price levels shown per side (int >= 1).
        title: drawn at the top left.
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        book: Source,
        *,
        owners: Mapping[Any, str] | Source | None = None,
        levels: int = 8,
        title: str = "Order book",
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        check_source("book", book)
        if owners is not None and not isinstance(owners, Mapping):
            check_source("owners", owners)
        count = scalar(levels)  # a 0-d array, as the book renderers' check_int takes it
        if not is_int(count) or int(count) < 1:
            raise ValueError(f"levels must be an int >= 1, got {levels!r}.")
        self.book: Source = book
        self.owners: Mapping[Any, str] | Source | None = owners
        self.levels: int = int(count)
        self.title = check_title(title)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self._depth: tuple[np.ndarray, ...] | None = None
        self._resting: list[_Resting] = []
        self._names: dict[Any, str] = {}

    def clear(self) -> None:
        self._depth = None
        self._resting = []

    def observe(self, env: Any, step: int) -> None:
        book = read(self.book, env)
        if not all(callable(getattr(book, m, None)) for m in ("depth", "orders_of", "queue_ahead")):
            raise TypeError(
                f"OrderBookChart's book source {describe_source(self.book)} must give an order "
                f"book (sekai.finance.lob.OrderBook), got {type(book).__name__}."
            )
        self._depth = tuple(np.asarray(a, dtype=np.int64) for a in book.depth(self.levels))
        source = self.owners
        owners: Any = source
        if source is not None and not isinstance(source, Mapping):
            owners = read(source, env)
            if owners is not None and not isinstance(owners, Mapping):
                raise TypeError(
                    f"OrderBookChart owners source {describe_source(source)} must give a "
                    f"mapping {{owner id: label}}, got {type(owners).__name__} {owners!r}."
                )
        self._names = {owner: str(label) for owner, label in (owners or {}).items()}
        resting = []
        for owner in self._names:
            for order in book.orders_of(owner):
                resting.append(
                    _Resting(
                        side=int(order.side),
                        price=int(order.price),
                        ahead=int(book.queue_ahead(order.order_id)),
                        quantity=int(order.quantity),
                        owner=owner,
                    )
                )
        self._resting = resting

    def owner_color(self, ctx: DrawContext, owner: Any) -> Any:
        """The highlight colour of ``owner``."""
        if len(self._names) <= 1:
            return ctx.theme.accent
        return palette_color(ctx.theme, list(self._names).index(owner))

    def _tags(
        self, owners: list[Any], room: float, ctx: DrawContext
    ) -> tuple[list[tuple[str, Any]], float]:
        """The labels of the traders resting at one price, with their colours, and their
        width: as many as fit in ``room`` in order, then ``+n`` for the others."""
        size, gap = ctx.text, Canvas.text_size(" ", ctx.text)[0]
        tags = [(self._names.get(o, ""), self.owner_color(ctx, o)) for o in owners]

        def width(items: list[tuple[str, Any]]) -> float:
            return float(sum(Canvas.text_size(name, size)[0] + gap for name, _ in items))

        if width(tags) <= room:
            return tags, width(tags)
        for shown in range(len(tags) - 1, -1, -1):
            items = [*tags[:shown], (f"+{len(tags) - shown}", ctx.theme.muted)]
            if width(items) <= room:
                return items, width(items)
        return [], 0.0  # not even room for the count: the bars' colours still tell

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u, size = ctx.theme, ctx.unit, ctx.text
        x0, y0, x1, y1 = box
        text(canvas, x0, y0, self.title, theme.foreground, size=size)
        if self._depth is None:
            return
        bid_p, bid_q, ask_p, ask_q = self._depth
        asks = [(int(p), int(q)) for p, q in zip(ask_p, ask_q) if q > 0][::-1]  # far ask on top
        bids = [(int(p), int(q)) for p, q in zip(bid_p, bid_q) if q > 0]
        rows = [(p, q, -1) for p, q in asks] + [(p, q, 1) for p, q in bids]
        top = y0 + ctx.line + 8 * u
        n_rows = 2 * self.levels
        middle = ctx.line + 6 * u  # the gap between asks and bids, where the spread is written
        row_h = max((y1 - top - middle) / n_rows, 1.0)
        price_w = max((Canvas.text_size(str(p), size)[0] for p, _, _ in rows), default=0)
        left = x0 + price_w + 6 * u
        size_w = Canvas.text_size("9999", size)[0] + 6 * u
        row_names: dict[tuple[int, int], list[Any]] = {}
        for order in self._resting:
            owners = row_names.setdefault((order.side, order.price), [])
            if order.owner not in owners:
                owners.append(order.owner)
        # The labels take at most two thirds of the ladder's width (two names at the default
        # size); the bars keep the rest.
        room = max((x1 - size_w - left) * 2 / 3, 0.0)
        row_tags = {key: self._tags(owners, room, ctx) for key, owners in row_names.items()}
        tag_w = max((w for _, w in row_tags.values()), default=0.0)
        right = x1 - size_w - (tag_w + 6 * u if tag_w else 0)
        biggest = max((q for _, q, _ in rows), default=1)
        for p, _q, _ in rows:
            for order in self._resting:
                if order.price == p:
                    biggest = max(biggest, order.ahead + order.quantity)
        scale = (right - left) / max(biggest, 1)
        ask_bottom = top + row_h * self.levels
        centers: dict[tuple[int, int], float] = {}
        for i, (p, _) in enumerate(reversed(asks)):
            centers[(-1, p)] = ask_bottom - row_h * (i + 0.5)
        for i, (p, _) in enumerate(bids):
            centers[(1, p)] = ask_bottom + middle + row_h * (i + 0.5)
        bar_h = max(min(row_h * 0.72, 2.2 * ctx.line), 1.0)
        for p, q, side in rows:
            cy = centers[(side, p)]
            color = theme.up if side > 0 else theme.down
            canvas.rect(left, cy - bar_h / 2, left + q * scale, cy + bar_h / 2,
                        mix(theme.background, color, 0.35))  # fmt: skip
            if row_h >= ctx.line:
                text(canvas, left - 4 * u, cy, str(p), theme.foreground, size=size, anchor="rm")
                text(canvas, left + q * scale + 4 * u, cy, str(q), theme.muted, size=size,
                     anchor="lm")  # fmt: skip
        for order in self._resting:
            center = centers.get((order.side, order.price))
            if center is None:
                continue  # resting beyond the levels shown
            cy = center
            color = self.owner_color(ctx, order.owner)
            a = left + order.ahead * scale
            b = left + (order.ahead + order.quantity) * scale
            canvas.rect(a, cy - bar_h / 2, b, cy + bar_h / 2, color)
            canvas.rect(a, cy - bar_h / 2, a + max(u, 1.0), cy + bar_h / 2, theme.background)
        if row_h >= ctx.line:
            gap = Canvas.text_size(" ", size)[0]
            for (side, price), (tags, _) in row_tags.items():
                if (side, price) not in centers:
                    continue
                center, x = centers[(side, price)], x1
                for name, color in reversed(tags):
                    x = text(canvas, x, center, name, color, size=size, anchor="rm")[0] - gap
        self._spread_label(canvas, asks, bids, left, ask_bottom + middle / 2, ctx)

    def _spread_label(
        self,
        canvas: Canvas,
        asks: list[tuple[int, int]],
        bids: list[tuple[int, int]],
        left: float,
        y: float,
        ctx: DrawContext,
    ) -> None:
        if asks and bids:
            best_ask, best_bid = asks[-1][0], bids[0][0]
            mid = (best_ask + best_bid) / 2
            label = f"spread {best_ask - best_bid}   mid {format_price(mid)}"
        else:
            label = "one-sided book"
        text(canvas, left, y, label, ctx.theme.muted, size=ctx.text, anchor="lm")
