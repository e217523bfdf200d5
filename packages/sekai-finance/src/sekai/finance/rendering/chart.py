"""The chart protocol, data sources, per-step tracks, axes and the row/column layout."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from sekai.finance._values import real_float, scalar
from sekai.finance.rendering._format import format_ticks, nice_ticks
from sekai.finance.rendering._paint import dashed, hline, text, triangle, vline
from sekai.rendering import Canvas, Theme

__all__ = [
    "Box",
    "Chart",
    "Column",
    "DrawContext",
    "Row",
    "Source",
    "Track",
    "describe_source",
    "layout",
    "read",
    "read_labels",
    "value_range",
]

Source = str | Callable[[Any], Any]
"""Where a chart reads a value: the name of an env attribute, or a callable of the env."""

Box = tuple[float, float, float, float]
"""A pixel rectangle ``(left, top, right, bottom)``."""

T = TypeVar("T")


def read(source: Source, env: Any) -> Any:
    """The current value of ``source`` for ``env`` (an attribute name or a callable of the env).

    Raises:
        AttributeError: ``env`` has no attribute named ``source`` (the message names the
            attributes it has).
    """
    if callable(source):
        return source(env)
    try:
        return getattr(env, source)
    except AttributeError as exc:
        if hasattr(type(env), source):
            raise  # the attribute exists: the error came from inside it
        kind = type(env)
        names = [
            n
            for n in dir(env)
            if not n.startswith("_")
            and not callable(inspect.getattr_static(env, n))
            and _readable(env, n)
        ]
        raise AttributeError(
            f"chart source {source!r}: {kind.__name__} has no attribute {source!r}. A str source "
            f"names an env attribute ({', '.join(names)}); for anything else pass a callable "
            "of the env."
        ) from exc


def _readable(env: Any, name: str) -> bool:
    """Whether ``env.name`` can be read: not a name whose lookup always raises
    ``AttributeError`` (sekai envs' ``render``, which points to renderers)."""
    try:
        getattr(env, name)
    except AttributeError:
        return False
    except Exception:  # it exists, but cannot be read now (e.g. before reset)
        return True
    return True


def describe_source(source: Source) -> str:
    """``source`` as the user wrote it, for messages: ``'equity'`` or the callable's name."""
    if isinstance(source, str):
        return repr(source)
    return str(getattr(source, "__name__", None) or repr(source))


def read_labels(chart: str, field: str, source: Source, env: Any) -> list[str | None]:
    """The labels ``source`` gives for ``env`` (one per item; None for an empty one).

    Raises:
        TypeError: the value is not a sequence of labels; the message names the chart, the
            field and the source.
    """
    value = read(source, env)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{chart} {field} source {describe_source(source)} must give a sequence of labels "
            f"(a str or None each), got {type(value).__name__} {value!r}."
        )
    return [None if x is None else str(x) for x in value]


def check_source(name: str, source: object, *, optional: bool = False) -> None:
    """Raise ``TypeError`` unless ``source`` is a str or a callable (or None when optional)."""
    if source is None and optional:
        return
    if not (isinstance(source, str) or callable(source)):
        raise TypeError(
            f"{name} must be an env attribute name (str) or a callable of the env, got "
            f"{type(source).__name__}."
        )


def check_title(value: object, name: str = "title") -> str:
    """A chart title: a str (``TypeError`` otherwise)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}.")
    return value


def check_weight(name: str, value: object) -> float:
    """A layout weight: a finite number > 0."""
    number = real_float(scalar(value))  # any real number (np.float32, a Decimal); no bool
    if number is None or not 0 < number < math.inf:
        raise ValueError(f"{name} must be a number > 0, got {value!r}.")
    return number


@dataclass(frozen=True)
class DrawContext:
    """What a chart needs to draw: the theme, the sizes and the visible steps.

    Attributes:
        theme: the colours.
        unit: pixels per pixel of the 720x450 design (text and marks scale with it).
        text: the integer size of label text (1 = 10-pixel lines).
        x_lo: first visible step (negative for history before the episode).
        x_hi: last visible step.
        step: the current step (``elapsed_steps``).
    """

    theme: Theme
    unit: float
    text: int
    x_lo: float
    x_hi: float
    step: int

    @property
    def line(self) -> float:
        """Height in pixels of one line of label text."""
        return 10.0 * self.text


class Track(Generic[T]):
    """Values recorded per step (a later value for the same step replaces the earlier one)."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.values: list[T] = []

    def put(self, step: int, value: T) -> None:
        """Record ``value`` at ``step``."""
        if self.steps and self.steps[-1] == step:
            self.values[-1] = value
            return
        if self.steps and step < self.steps[-1]:
            self.clear()
        self.steps.append(step)
        self.values.append(value)

    def clear(self) -> None:
        """Forget everything."""
        self.steps.clear()
        self.values.clear()

    def trim(self, first: int) -> None:
        """Forget the values recorded before step ``first``."""
        cut = 0
        while cut < len(self.steps) and self.steps[cut] < first:
            cut += 1
        if cut:
            del self.steps[:cut]
            del self.values[:cut]

    def visible(self, lo: float) -> tuple[list[int], list[T]]:
        """Steps and values from step ``lo`` on."""
        start = 0
        while start < len(self.steps) and self.steps[start] < lo:
            start += 1
        return self.steps[start:], self.values[start:]

    def __len__(self) -> int:
        return len(self.steps)


class Chart:
    """Base class of the charts: they record what they read from the env and draw it in a box.

    A chart is given the env after every reset and step (``observe``), forgets an episode on
    ``clear`` and draws itself with ``draw``. ``width`` and ``height`` are layout weights:
    the share of a row's width, or of a column's height, the chart takes.
    """

    title: str = ""
    width: float = 1.0
    height: float = 1.0

    def clear(self) -> None:
        """Forget the episode (a new one starts)."""

    def observe(self, env: Any, step: int) -> None:
        """Record the env's state at ``step``."""

    def trim(self, first: int) -> None:
        """Forget what was recorded before step ``first`` (the dashboard's window)."""

    def first_step(self) -> int:
        """The earliest step this chart has something to show at (negative for history)."""
        return 0

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        """Draw the chart inside ``box``."""
        raise NotImplementedError


class _Group:
    def __init__(self, items: Sequence[Chart | _Group], width: float, height: float) -> None:
        if not items:
            raise ValueError(f"{type(self).__name__} needs at least one chart.")
        for item in items:
            if not isinstance(item, (Chart, _Group)):
                raise TypeError(f"{type(self).__name__} holds charts, got {type(item).__name__}.")
        self.items = tuple(items)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)

    def charts(self) -> list[Chart]:
        found: list[Chart] = []
        for item in self.items:
            found += item.charts() if isinstance(item, _Group) else [item]
        return found


class Row(_Group):
    """Charts side by side, each as wide as its ``width`` weight allows."""

    def __init__(self, *items: Chart | Row | Column, width: float = 1.0, height: float = 1.0):
        super().__init__(items, width, height)


class Column(_Group):
    """Charts stacked top to bottom, each as tall as its ``height`` weight allows."""

    def __init__(self, *items: Chart | Row | Column, width: float = 1.0, height: float = 1.0):
        super().__init__(items, width, height)


def layout(node: Chart | _Group, box: Box, gap: float) -> list[tuple[Chart, Box]]:
    """Place every chart of ``node`` in ``box``, ``gap`` pixels apart."""
    if isinstance(node, Chart):
        return [(node, box)]
    x0, y0, x1, y1 = box
    horizontal = isinstance(node, Row)
    weights = [item.width if horizontal else item.height for item in node.items]
    span = (x1 - x0 if horizontal else y1 - y0) - gap * (len(weights) - 1)
    placed: list[tuple[Chart, Box]] = []
    at = x0 if horizontal else y0
    for item, weight in zip(node.items, weights):
        size = span * weight / sum(weights)
        child = (at, y0, at + size, y1) if horizontal else (x0, at, x1, at + size)
        placed += layout(item, child, gap)
        at += size + gap
    return placed


def value_range(
    values: Any, *, include: Sequence[float] = (), pad: float = 0.08
) -> tuple[float, float]:
    """A padded ``(low, high)`` covering the finite ``values`` and ``include``."""
    data = np.asarray(values, dtype=np.float64).ravel()
    data = np.concatenate([data[np.isfinite(data)], np.asarray(include, dtype=np.float64)])
    if data.size == 0:
        return 0.0, 1.0
    low, high = float(data.min()), float(data.max())
    if high - low <= 1e-12 * max(abs(low), abs(high), 1e-300):
        half = max(abs(low) * 0.01, 1e-9) if low != 0 else 1.0
        return low - half, high + half
    margin = (high - low) * pad
    return low - margin, high + margin


Legend = Sequence[tuple[str, Sequence[int], str]]
"""Legend entries ``(label, colour, style)``; styles: line, dashed, box, up, down."""


class Axes:
    """A chart's frame: title, legend, horizontal grid with y labels, x labels, and the scales.

    Args:
        canvas: where to draw.
        box: the chart's box; the plot area is what is left inside it.
        ctx: the draw context (the x range comes from it unless given).
        title: drawn at the top left.
        y_range: ``(low, high)`` of the values.
        kind: y label format, ``"number"`` or ``"pct"``.
        legend: entries drawn at the top right.
        right: pixels kept free at the right of the plot (for value tags).
        x_range: override of the visible steps.
        x_labels: whether to label the x axis with steps.
        y_labels: whether to draw the horizontal grid and its labels.
        title_left: x of the title (default: the box's left edge).
    """

    def __init__(
        self,
        canvas: Canvas,
        box: Box,
        ctx: DrawContext,
        *,
        title: str,
        y_range: tuple[float, float],
        kind: str = "number",
        legend: Legend = (),
        right: float = 0.0,
        x_range: tuple[float, float] | None = None,
        x_labels: bool = True,
        y_labels: bool = True,
        title_left: float | None = None,
    ) -> None:
        theme, u, size = ctx.theme, ctx.unit, ctx.text
        self.canvas, self.ctx = canvas, ctx
        x0, y0, x1, y1 = box
        self.y_lo, self.y_hi = y_range
        self.x_lo, self.x_hi = x_range or (ctx.x_lo, ctx.x_hi)
        if self.x_hi <= self.x_lo:
            self.x_hi = self.x_lo + 1.0
        title_w = Canvas.text_size(title, size)[0] if title else 0
        legend_w = sum(Canvas.text_size(label, size)[0] + 25 * u for label, _, _ in legend)
        legend_y = y0
        title_h = ctx.line + 5.0 * u if title or legend else 0.0
        if legend and x0 + title_w + 12 * u + legend_w > x1:
            # No room beside the title: the legend gets a line of its own under it.
            legend_y = y0 + ctx.line + 3.0 * u
            title_h += ctx.line + 3.0 * u
        ticks = nice_ticks(self.y_lo, self.y_hi, 4 if y1 - y0 > 120 * u else 3) if y_labels else []
        labels = format_ticks(ticks, kind=kind)
        # At least five characters wide, so that charts stacked in a column share a time axis.
        label_w = max(
            [Canvas.text_size(s, size)[0] for s in labels] + [29 * size] * bool(labels), default=0
        )
        self.left = x0 + label_w + (5.0 * u if labels else 0.0)
        self.top = y0 + title_h
        self.right = x1 - right
        self.bottom = y1 - (ctx.line + 4.0 * u if x_labels else 1.0 * u)
        title_end = x0
        if title:
            title_x = x0 if title_left is None else title_left
            title_end = text(canvas, title_x, y0, title, theme.foreground, size=size)[2]
        left_limit = title_end + 12 * u if legend_y == y0 else x0
        self._legend(legend, left_limit, legend_y, x1)
        for tick, label in zip(ticks, labels):
            y = self.y(tick)
            hline(canvas, self.left, self.right, y, theme.grid, width=max(u, 1.0))
            text(canvas, self.left - 4 * u, y, label, theme.muted, size=size, anchor="rm")
        if x_labels:
            self._x_labels()

    def x(self, step: Any) -> Any:
        """Pixel x of ``step`` (scalar or array)."""
        scale = (self.right - self.left) / (self.x_hi - self.x_lo)
        return self.left + (np.asarray(step, dtype=np.float64) - self.x_lo) * scale

    def y(self, value: Any) -> Any:
        """Pixel y of ``value`` (scalar or array)."""
        span = self.y_hi - self.y_lo
        return self.bottom - (np.asarray(value, dtype=np.float64) - self.y_lo) / span * (
            self.bottom - self.top
        )

    @property
    def clip(self) -> Box:
        """The plot area."""
        return (self.left, self.top, self.right, self.bottom)

    def _x_labels(self) -> None:
        ctx, u = self.ctx, self.ctx.unit
        count = max(2, int((self.right - self.left) / (70 * u)))
        ticks = [t for t in nice_ticks(self.x_lo, self.x_hi, count) if float(t).is_integer()]
        for tick in ticks:
            x = float(self.x(tick))
            vline(self.canvas, x, self.bottom, self.bottom + 3 * u, ctx.theme.grid, width=u)
            text(
                self.canvas, x, self.bottom + 4 * u, str(int(tick)), ctx.theme.muted,
                size=ctx.text, anchor="mt",
            )  # fmt: skip

    def _legend(self, legend: Legend, left: float, top: float, right: float) -> None:
        """Draw the legend right-aligned in ``[left, right]``: its first entries that fit,
        then ``+n more`` for the rest, so that no entry is dropped without a word."""
        ctx, u, canvas = self.ctx, self.ctx.unit, self.canvas
        entries = list(legend)
        shown, more = len(entries), ""
        while shown and not self._legend_fits(entries[:shown], more, left, right):
            shown -= 1
            more = f"+{len(entries) - shown} more"
        if more and not self._legend_fits([], more, left, right):
            return  # not even room to say that entries are missing
        x = right
        y = top + ctx.line * 0.4
        if more:
            x = text(canvas, x, top, more, ctx.theme.muted, size=ctx.text, anchor="rt")[0]
            x -= 10 * u
        swatch = 12 * u
        for label, color, style in reversed(entries[:shown]):
            width = Canvas.text_size(label, ctx.text)[0]
            text(canvas, x, top, label, ctx.theme.muted, size=ctx.text, anchor="rt")
            x -= width + 3 * u
            if style == "box":
                canvas.rect(x - swatch + 2 * u, y - 3 * u, x, y + 3 * u, color, alpha=0.8)
            elif style in ("up", "down"):
                triangle(canvas, x - swatch / 2, y, 7 * u, color, up=style == "up")
            elif style == "dashed":
                dashed(canvas, [(x - swatch, y), (x, y)], color, width=1.5 * u, dash=4 * u,
                       gap=2 * u)  # fmt: skip
            else:
                hline(canvas, x - swatch, x, y, color, width=2 * u)
            x -= swatch + 10 * u

    def _legend_fits(self, entries: Legend, more: str, left: float, right: float) -> bool:
        """Whether ``entries`` and the ``more`` note fit between ``left`` and ``right``."""
        u, size = self.ctx.unit, self.ctx.text
        x = right
        if more:
            x -= Canvas.text_size(more, size)[0]
            if x < left:
                return False
            x -= 10 * u
        for label, _, _ in reversed(list(entries)):  # in drawing order, from the right
            width = Canvas.text_size(label, size)[0]
            if x - width - 12 * u - 4 * u < left:
                return False
            x -= width + 3 * u + 12 * u + 10 * u
        return True
