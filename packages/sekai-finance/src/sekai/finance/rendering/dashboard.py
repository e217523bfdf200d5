"""Dashboard: a renderer made of a header (title, subtitle, headline statistics) and charts."""

from __future__ import annotations

import copy
import functools
import inspect
import numbers
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai._args import check_int
from sekai.finance.rendering._format import plain
from sekai.finance.rendering._paint import fit_text, text
from sekai.finance.rendering.chart import (
    Box,
    Chart,
    Column,
    DrawContext,
    Row,
    check_title,
    layout,
)
from sekai.rendering import BaseRenderer, Canvas, Theme, resolve_theme

__all__ = ["Dashboard", "Stat", "check_window"]

Image = npt.NDArray[np.uint8]

_MIN_FRAME = 64  # the smallest width or height in pixels that holds a readable dashboard
Layout = Chart | Row | Column


@dataclass(frozen=True)
class Stat:
    """A headline statistic of a dashboard's header.

    Attributes:
        label: what it is (``"Equity"``), drawn small above the value.
        value: the value as text (``"1.0432"``).
        detail: a short addition drawn after the value (``"+4.32%"``).
        tone: colour of the detail: ``"up"``, ``"down"`` or None (muted).
    """

    label: str
    value: str
    detail: str = ""
    tone: str | None = None

    def __post_init__(self) -> None:
        for field in ("label", "value", "detail"):
            given = getattr(self, field)
            if not isinstance(given, str):
                # The example passes the field by keyword, so it lands where it belongs.
                before = f"{self.label!r}, " + (f"{self.value!r}, " if field == "detail" else "")
                hint = (
                    f'; format the number, e.g. Stat({before}{field}=f"{{{field}:.4f}}")'
                    if isinstance(given, numbers.Number) and field != "label"
                    else ""
                )
                raise TypeError(
                    f"Stat {field} must be a str (the text to show), got "
                    f"{type(given).__name__} {given!r}{hint}."
                )
        if self.tone not in (None, "up", "down"):
            raise ValueError(f"Stat tone must be 'up', 'down' or None, got {self.tone!r}.")


def _identity(value: Any) -> Any:
    return value


def _reference(env: Any) -> Callable[[], Any]:
    """A weak reference to ``env`` (a renderer must not keep it alive), or a strong one for an
    object without weak references."""
    try:
        return weakref.ref(env)
    except TypeError:
        return functools.partial(_identity, env)


def check_window(window: object) -> int | None:
    """``window``: None (the whole episode) or an int >= 1 (that many latest steps)."""
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, numbers.Integral) or int(window) < 1:
        raise ValueError(f"window must be None or an int >= 1, got {window!r}.")
    return int(window)


def _checked_stats(stats: Any) -> list[Stat]:
    """The header's statistics as given by ``stats(env)``: a list of ``Stat`` (``TypeError``)."""
    if isinstance(stats, (str, Stat)) or not isinstance(stats, Sequence):
        raise TypeError(
            f"The dashboard's stats callable must return a list of Stat, got "
            f"{type(stats).__name__} {stats!r}."
        )
    for i, stat in enumerate(stats):
        if not isinstance(stat, Stat):
            raise TypeError(
                f"The dashboard's stats callable must return a list of Stat, got "
                f"{type(stat).__name__} {stat!r} at position {i}; e.g. Stat('Equity', '1.04')."
            )
    return list(stats)


def _by_name(owner: object, fn: Callable[[Any], Layout]) -> Callable[[Any], Layout] | str:
    """``fn``, or its name when it is a method of ``owner`` (a renderer's own chart factory):
    a renderer holding its own bound method is a reference cycle, and its charts (about a
    megabyte) would wait for the cycle collector after ``del``."""
    if inspect.ismethod(fn) and fn.__self__ is owner and getattr(owner, fn.__name__, None) == fn:
        return fn.__name__  # found again by name (a mangled __name is not)
    return fn


class Dashboard(BaseRenderer):
    """A renderer drawing a header and a layout of charts, fed with the env after each call.

    Call ``render(env)`` after every reset and step (``RecordFrames`` does): each call records
    the env's state in the charts, so the dashboard shows the episode so far. A new episode is
    recognised when the env's ``elapsed_steps`` is 0 or goes back, or ``episode_of(env)``
    changes.

    Args:
        charts: a chart, a ``Row``/``Column`` of charts, or a callable of the env returning one
            (called for each new env, for layouts that depend on it, e.g. one line per asset).
        title: the header's title.
        subtitle: a line under the title: text, or a callable of the env returning it.
        stats: a callable of the env returning the header's ``Stat`` list.
        horizon: steps per episode (an int or a callable of the env), to fix the time axis;
            None: the axis grows with the episode.
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole episode).
        progress: show the step count in the header and a progress rule under it.
    """

    render_mode: ClassVar[str] = "rgb_array"  # image frames (read by to_gymnasium)

    def __init__(
        self,
        charts: Layout | Callable[[Any], Layout],
        *,
        title: str = "",
        subtitle: str | Callable[[Any], str] = "",
        stats: Callable[[Any], Sequence[Stat]] | None = None,
        horizon: int | Callable[[Any], int | None] | None = None,
        width: int = 720,
        height: int = 450,
        theme: str | Theme = "light",
        window: int | None = None,
        progress: bool = True,
    ) -> None:
        if not isinstance(charts, (Chart, Row, Column)) and not callable(charts):
            raise TypeError(
                f"charts must be a Chart, Row or Column (or a callable of the env returning one), "
                f"got {type(charts).__name__}."
            )
        owner = type(self).__name__
        self.width = check_int(owner, "width", width, _MIN_FRAME)
        self.height = check_int(owner, "height", height, _MIN_FRAME)
        self.theme = resolve_theme(theme)
        self.window = check_window(window)
        self._factory = None if isinstance(charts, (Chart, Row, Column)) else _by_name(self, charts)
        self.layout: Layout | None = None
        self.charts: list[Chart] = []
        if self._factory is None:
            self._set_layout(charts)  # type: ignore[arg-type]
        self.title = check_title(title)
        if not callable(subtitle):
            check_title(subtitle, "subtitle")
        if stats is not None and not callable(stats):
            raise TypeError(
                f"stats must be a callable of the env returning a list of Stat, got "
                f"{type(stats).__name__}."
            )
        self._subtitle = subtitle
        self._stats = stats
        self._horizon = horizon
        self.progress = bool(progress)
        self._blank: Image | None = None
        self._env: Callable[[], Any] | None = None
        self._step = -1
        self._episode: object = None

    def _set_layout(self, charts: Layout) -> None:
        if not isinstance(charts, (Chart, Row, Column)):
            raise TypeError(f"the chart factory returned {type(charts).__name__}, not a Chart.")
        self.layout = charts
        self.charts = [charts] if isinstance(charts, Chart) else charts.charts()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(width={self.width}, height={self.height}, window={self.window})"
        )

    # -- copy and pickle ----------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # The env itself, not a weak reference: a pickle of the env and the renderer together
        # (RecordFrames(env, renderer)) brings back a renderer drawing the unpickled env. A pickle
        # cannot tell whether the env comes along; unpickled alone, the renderer holds the env's
        # copy weakly, nothing else holds it, and the next render starts a new picture.
        state["_env"] = self._env() if self._env is not None else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        env = state.pop("_env")
        self.__dict__.update(state)
        self._env = None if env is None else _reference(env)

    def __deepcopy__(self, memo: dict[int, Any]) -> Dashboard:
        # A renderer does not own its env: it draws the env's copy when the same deepcopy copied
        # the env first (RecordFrames(env, renderer), an env holding its renderer), else the
        # original env, which a copy made here would not outlive (the episode would be lost).
        env = self._env() if self._env is not None else None
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for name, value in self.__dict__.items():
            if name != "_env":
                clone.__dict__[name] = copy.deepcopy(value, memo)
        clone._env = None if env is None else _reference(memo.get(id(env), env))
        return clone

    # -- what subclasses adapt ----------------------------------------------------------------

    def target(self, env: Any) -> Any:
        """The env to read (the base env by default); raises if it cannot be drawn."""
        return getattr(env, "unwrapped", env)

    def step_of(self, env: Any) -> int:
        """The current step of ``env`` (its ``elapsed_steps``)."""
        return int(env.elapsed_steps)

    def episode_of(self, env: Any) -> object:
        """Which episode ``env`` is in, if it tells (None: unknown). A change starts a new
        picture even when the steps do not show the reset (calls skipped over it)."""
        return None

    def horizon(self, env: Any) -> int | None:
        """Steps per episode, if known."""
        value = self._horizon(env) if callable(self._horizon) else self._horizon
        return None if value is None else int(value)

    def subtitle(self, env: Any) -> str:
        """The line under the title."""
        return self._subtitle(env) if callable(self._subtitle) else self._subtitle

    def stats(self, env: Any) -> Sequence[Stat]:
        """The header's statistics."""
        return [] if self._stats is None else self._stats(env)

    # -- rendering ------------------------------------------------------------------------------

    def render(self, env: Any) -> Image:
        """Record the env's state and draw the dashboard: a ``(height, width, 3)`` uint8 frame."""
        base = self.target(env)
        step = self.step_of(base)
        self.observe(base, step)
        return self.draw(base, step)

    def observe(self, base: Any, step: int) -> None:
        """Record ``base`` at ``step`` in every chart (starting over for a new episode)."""
        previous = self._env() if self._env is not None else None
        if previous is not base and self._factory is not None:
            factory = self._factory
            if isinstance(factory, str):
                factory = getattr(self, factory)
            self._set_layout(factory(base))
        episode = self.episode_of(base)
        if previous is not base or step == 0 or step < self._step or episode != self._episode:
            for chart in self.charts:
                chart.clear()
            self._env = _reference(base)
        self._step, self._episode = step, episode
        for chart in self.charts:
            chart.observe(base, step)
        if self.window is not None:
            for chart in self.charts:
                chart.trim(step - self.window - 1)

    def draw(self, base: Any, step: int) -> Image:
        """Draw the header and the charts from what was recorded."""
        theme = self.theme
        unit = min(self.width / 720.0, self.height / 450.0)
        size = max(1, round(unit))
        if self._blank is None:
            self._blank = Canvas(self.width, self.height, theme.background).pixels
        canvas = Canvas.from_array(self._blank)
        margin = 12.0 * unit
        horizon = self.horizon(base)
        top = self._header(canvas, base, unit, size, margin, step, horizon)
        lo, hi = self._x_range(step, horizon)
        ctx = DrawContext(theme=theme, unit=unit, text=size, x_lo=lo, x_hi=hi, step=step)
        box: Box = (margin, top + 10.0 * unit, self.width - margin, self.height - margin)
        assert self.layout is not None
        for chart, where in layout(self.layout, box, gap=16.0 * unit):
            chart.draw(canvas, where, ctx)
        return canvas.pixels

    def _x_range(self, step: int, horizon: int | None) -> tuple[float, float]:
        first = min((chart.first_step() for chart in self.charts), default=0)
        if self.window is None:
            return float(first), float(max(horizon or 0, step, 1))
        lo = max(first, step - self.window)
        hi = max(lo + self.window, step)
        if horizon is not None and horizon >= step:
            hi = min(hi, horizon)
        return float(lo), float(max(hi, lo + 1))

    def _header(
        self,
        canvas: Canvas,
        base: Any,
        unit: float,
        size: int,
        margin: float,
        step: int,
        horizon: int | None,
    ) -> float:
        """Draw the header; return its bottom edge."""
        theme = self.theme
        big = max(1, round(2 * unit))
        title_box = text(canvas, margin, margin, self.title, theme.foreground, size=big)
        stats = _checked_stats(self.stats(base))
        if self.progress:
            stats.append(Stat("Step", f"{step}" if horizon is None else f"{step}/{horizon}"))
        # Values at the title's size if they fit next to the title, else at label size.
        value_size = big
        widths = self._stat_widths(stats, size, value_size, unit)
        room = self.width - 2 * margin - title_box[2] + margin - 24 * unit
        if sum(widths) > room:
            value_size = size
            widths = self._stat_widths(stats, size, value_size, unit)
        x = self.width - margin
        stats_left = x
        for stat, w in zip(reversed(stats), reversed(widths)):
            if x - w < title_box[2] + 16 * unit:
                break
            self._stat(canvas, stat, x - w + 16 * unit, margin, size, value_size, unit)
            x -= w
            stats_left = x
        subtitle = self.subtitle(base)
        if not isinstance(subtitle, str):
            raise TypeError(
                f"The dashboard's subtitle must be a str, got {type(subtitle).__name__} "
                f"{subtitle!r} from the subtitle callable."
            )
        subtitle = plain(subtitle)
        subtitle_y = title_box[3] + 5 * unit
        if margin + Canvas.text_size(subtitle, size)[0] > stats_left - 4 * unit:
            # Too long for the room beside the statistics: a full-width line below them.
            stats_bottom = margin + 10 * size + 3 * unit + 9 * value_size
            subtitle_y = max(subtitle_y, stats_bottom + 5 * unit)
        subtitle = fit_text(subtitle, self.width - 2 * margin, size)
        text(canvas, margin, subtitle_y, subtitle, theme.muted, size=size)
        bottom = subtitle_y + 10 * size + 6 * unit
        # A thin rule under the header that fills up as the episode progresses.
        canvas.rect(margin, bottom, self.width - margin, bottom + 2 * unit, theme.grid)
        if horizon and self.progress:
            done = min(max(step / horizon, 0.0), 1.0)
            end = margin + (self.width - 2 * margin) * done
            if done > 0:
                canvas.rect(margin, bottom, end, bottom + 2 * unit, theme.accent)
        return bottom + 2 * unit

    @staticmethod
    def _stat_widths(stats: Sequence[Stat], size: int, value_size: int, unit: float) -> list[float]:
        widths = []
        for stat in stats:
            value_w: float = Canvas.text_size(stat.value, value_size)[0]
            if stat.detail:
                value_w += 7 * unit + Canvas.text_size(stat.detail, size)[0]
            widths.append(max(value_w, Canvas.text_size(stat.label, size)[0]) + 16 * unit)
        return widths

    def _stat(
        self,
        canvas: Canvas,
        stat: Stat,
        x: float,
        y: float,
        size: int,
        value_size: int,
        unit: float,
    ) -> None:
        theme = self.theme
        text(canvas, x, y, stat.label.upper(), theme.muted, size=size)
        value_y = y + 10 * size + 3 * unit
        right = text(canvas, x, value_y, stat.value, theme.foreground, size=value_size)[2]
        if stat.detail:
            tone = {"up": theme.up, "down": theme.down}.get(stat.tone or "", theme.muted)
            bottom = value_y + 9 * value_size
            text(canvas, right + 7 * unit, bottom, stat.detail, tone, size=size, anchor="lb")
