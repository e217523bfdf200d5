"""What every finance renderer shares: argument checks, env checks, market subtitles, text rows."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from sekai.envs.finance._common import check_int
from sekai.error import ResetRequired
from sekai.finance.rendering import Dashboard
from sekai.finance.rendering._format import format_number, format_pct, format_price
from sekai.finance.rendering.dashboard import Layout
from sekai.finance.rewards import LogReturn
from sekai.rendering import BaseRenderer, Theme, require_reset

__all__ = [
    "BookRenderer",
    "FinanceRenderer",
    "FinanceTextRenderer",
    "GrowthTextRenderer",
    "StepMemory",
    "check_levels",
    "describe_market",
    "episode_of",
    "episode_started",
    "format_price",
    "format_time",
    "signed",
]

T = TypeVar("T")


def episode_started(env: Any) -> bool:
    """Whether ``env`` has been reset (its ``timestamp`` raises ``ResetRequired`` before that)."""
    try:
        env.timestamp  # noqa: B018 - the property raises before the first reset
    except ResetRequired:
        return False
    return True


def checked_env(renderer: object, env: Any, env_type: type) -> Any:
    """The base env of ``env``, checked to be an ``env_type`` that has been reset.

    Raises:
        TypeError: ``<Renderer> draws <EnvClass>, got <OtherClass>.``
        ResetRequired: the env was never reset (the rendering wording).
    """
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, env_type):
        raise TypeError(
            f"{type(renderer).__name__} draws {env_type.__name__}, got {type(base).__name__}."
        )
    require_reset(episode_started(base))
    return base


def check_levels(levels: object) -> int:
    """The order-book renderers' ``levels``: an int >= 1."""
    return check_int("levels", levels)


def signed(value: float, digits: int = 4) -> str:
    """``+1.234`` / ``−1.234`` / ``0``."""
    text = format_number(value, digits)
    if value > 0:
        return f"+{text}"
    return text.replace("-", "−")


def format_time(value: Any) -> str:
    """A timestamp as text: dates as ``YYYY-MM-DD`` (with the time when not midnight)."""
    if isinstance(value, np.datetime64):
        text = str(value.astype("datetime64[s]")).replace("T", " ")
        return text[:10] if text.endswith("00:00:00") else text[:16]
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def _names(data: Any) -> list[str]:
    return [str(a) for a in data.assets]


def asset_names(env: Any, n: int) -> list[str]:
    """Asset names from the env's data, else ``Asset i`` (also for the default ``asset_i`` ids)."""
    data = getattr(env, "data", None)
    if data is None:
        return [f"Asset {i}" for i in range(n)]
    names = _names(data)
    if names == [f"asset_{i}" for i in range(len(names))]:
        return [f"Asset {i}" for i in range(n)]
    return names[:n]


def describe_market(env: Any, *, builtin: str) -> str:
    """A subtitle saying where the env's prices come from (data range, model, built-in GBM)."""
    data = getattr(env, "data", None)
    model = getattr(env, "model", None)
    if data is not None:
        names = _names(data)
        what = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
        if names == [f"asset_{i}" for i in range(len(names))]:
            what = f"{len(names)} asset{'s' if len(names) != 1 else ''}"
        stamps = data.timestamps
        span = f"{format_time(stamps[0].item() if stamps.dtype.kind != 'M' else stamps[0])}"
        end = stamps[-1].item() if stamps.dtype.kind != "M" else stamps[-1]
        return f"{what}: history {span} to {format_time(end)} ({data.n_steps} rows)"
    if model is not None:
        return f"Simulated market: {type(model).__name__}"
    return builtin


def describe_costs(env: Any) -> str:
    """``"; costs 10 bp"`` for a proportional cost, else the cost model's name."""
    model = getattr(env, "cost_model", None)
    if model is None:
        return ""
    rate = getattr(model, "rate", None)
    if isinstance(rate, float):
        return f"; costs {rate * 1e4:g} bp" if rate else "; no costs"
    return f"; costs {type(model).__name__}"


class KeywordOptions:
    """Base of the finance renderers: their options are keyword-only, and a wrong argument is
    refused naming the renderer the user called (not the base class defining ``__init__``).

    A subclass with an ``__init__`` of its own (a user's renderer built on a finance one) is not
    checked: its own signature decides, as Python binds it."""

    def __new__(cls, *args: Any, **options: Any) -> Any:
        check_options(cls, args, options)
        return super().__new__(cls)


# The modules of the finance renderers, whose __init__ check_options knows to be keyword-only.
_RENDERERS = __name__.rpartition(".")[0] + "."


def check_options(cls: type, args: tuple[Any, ...], options: dict[str, Any]) -> None:
    """Refuse positional arguments and unknown options of renderer class ``cls``.

    Only when the ``__init__`` that ``cls(...)`` calls is one of these renderers' own; another
    (a user's subclass with its own parameters) is left to Python's binding of its signature.

    Raises:
        TypeError: ``TradingRenderer() takes its options by keyword only (width=, ...)``, or an
            unknown option, naming the options ``cls`` has.
    """
    # The __init__ that cls(...) calls, looked up as Python does (cls.__init__ on a class
    # object is unsound to type: a subclass may change its signature).
    owner = next(c for c in cls.__mro__ if "__init__" in vars(c))
    if not owner.__module__.startswith(_RENDERERS):
        return
    parameters = inspect.signature(vars(owner)["__init__"]).parameters.values()
    names = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]
    takes = f"; its options are {', '.join(f'{n}=' for n in names)}" if names else ""
    if args:
        rule = "takes its options by keyword only" if names else "takes no arguments"
        plural = "s" if len(args) != 1 else ""
        listed = ", ".join(repr(a) for a in args)
        raise TypeError(
            f"{cls.__name__}() {rule}, got {len(args)} positional argument{plural} ({listed})"
            f"{takes}."
        )
    unknown = next((name for name in options if name not in names), None)
    if unknown is not None:
        raise TypeError(
            f"{cls.__name__}() got an unexpected keyword argument {unknown!r}"
            f"{takes or '; it takes no options'}."
        )


class FinanceRenderer(KeywordOptions, Dashboard):
    """A finance dashboard for one env class.

    Subclasses set ``env_type`` and ``env_title`` and build their charts in ``_build``; the
    dashboard options (``width``, ``height``, ``theme``, ``window``) are the same for all.
    """

    env_type: ClassVar[type]
    env_title: ClassVar[str]

    def __init__(
        self,
        *,
        width: int = 720,
        height: int = 450,
        theme: str | Theme = "light",
        window: int | None = None,
    ) -> None:
        super().__init__(
            self._build(),
            title=self.env_title,
            width=width,
            height=height,
            theme=theme,
            window=window,
        )

    def _build(self) -> Layout | Callable[[Any], Layout]:
        """Set up what the renderer tracks and return its charts: a layout, or a callable of
        the env returning one (for layouts that depend on the env)."""
        raise NotImplementedError

    def target(self, env: Any) -> Any:
        """The base env, checked (``TypeError`` for another class, ``ResetRequired``)."""
        return checked_env(self, env, self.env_type)

    def episode_of(self, env: Any) -> int | None:
        """The env's episode count (a reset the renderer was not called after starts over)."""
        return episode_of(env)


class BookRenderer(FinanceRenderer):
    """A finance dashboard with an order book's depth ladder of ``levels`` price levels a side."""

    def __init__(
        self,
        *,
        width: int = 720,
        height: int = 450,
        theme: str | Theme = "light",
        window: int | None = None,
        levels: int = 8,
    ) -> None:
        self.levels = check_levels(levels)
        super().__init__(width=width, height=height, theme=theme, window=window)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, levels={self.levels})"


def change(value: float) -> tuple[str, str | None]:
    """Relative change of a value that started at 1: ``("+4.32%", "up")``."""
    delta = value - 1.0
    tone = "up" if delta > 1e-12 else ("down" if delta < -1e-12 else None)
    return format_pct(delta, 2, signed=True), tone


def episode_of(env: Any) -> int | None:
    """Which episode ``env`` is in: the number of episodes it has begun (finance envs count
    their resets), so that a renderer notices a reset it was not called after."""
    return getattr(env, "_resets", None)


class StepMemory(Generic[T]):
    """What a renderer read at the latest steps of the episode it draws, to compare a step with
    the step before it. Rendering one step twice (a recording wrapper and the user both call
    ``render()``) compares with the same step again, not with itself; a step whose previous
    step was not rendered (recording paused) has nothing to compare with, except the first
    step, whose previous step is the reset: ``start(env)`` gives what the env looked like then
    (the episode's start values, fixed by the env), so the first step of a loop that renders
    after each ``step()`` only is compared too.
    """

    def __init__(self, start: Callable[[Any], T] | None = None) -> None:
        self._start = start
        self._episode: int | None = None
        self._seen: dict[int, T] = {}

    def remember(self, env: Any, step: int, value: T, *, new_episode: bool = False) -> T | None:
        """Remember ``value`` as the env's at ``step``; return the value of ``step - 1`` in the
        same episode (at step 1, the start values when the reset was not seen), or None when
        that step was not seen (``new_episode``: the caller knows a new episode started; a reset
        is also seen from ``step == 0`` and ``episode_of``)."""
        episode = episode_of(env)
        if new_episode or step == 0 or episode != self._episode:
            self._seen.clear()
            self._episode = episode
        self._seen = {k: v for k, v in self._seen.items() if k == step - 1}
        self._seen[step] = value
        previous = self._seen.get(step - 1)
        if previous is None and step == 1 and self._start is not None:
            previous = self._seen[0] = self._start(env)
        return previous


class FinanceTextRenderer(KeywordOptions, BaseRenderer):
    """A text renderer: one line per call (after every reset and step), in fixed-width columns.

    The first call of an episode also returns a title line and the column headers.
    """

    render_mode: ClassVar[str] = "ansi"  # text frames (read by to_gymnasium)
    env_type: ClassVar[type]
    env_title: ClassVar[str]

    def __init__(self) -> None:
        self._last_step = -1
        self._episode: int | None = None
        self._env: Any = None

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        """Column headers and widths."""
        raise NotImplementedError

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        """The cells of the current row."""
        raise NotImplementedError

    def _target(self, env: Any) -> Any:
        """The base env, checked (``TypeError`` for another class, ``ResetRequired``)."""
        return checked_env(self, env, self.env_type)

    def _step_of(self, base: Any) -> int:
        """The current step of the base env (its ``elapsed_steps``)."""
        return int(base.elapsed_steps)

    def render(self, env: Any) -> str:
        """One line describing the env now (with a header at the start of an episode)."""
        base = self._target(env)
        step = self._step_of(base)
        episode = episode_of(base)
        new = (
            base is not self._env or step == 0 or step < self._last_step or episode != self._episode
        )
        self._env, self._last_step, self._episode = base, step, episode
        columns = self.columns(base)
        cells = self.row(base, step, new)
        line = "  ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, columns))
        if not new:
            return line
        header = "  ".join(f"{h:>{w}}" for h, w in columns)
        return f"{self.env_title}\n{header}\n{line}"


def _unit_value(env: Any) -> float:
    """A growth env's value at the start of an episode."""
    return 1.0


class GrowthTextRenderer(FinanceTextRenderer):
    """A text renderer of an env whose value starts at 1 and whose default reward
    (``LogReturn()``) is the log growth of that value: it ends each row with the step's simple
    return and log growth."""

    def __init__(self) -> None:
        super().__init__()
        self._value: StepMemory[float] = StepMemory(_unit_value)

    def _time_column(self, env: Any) -> tuple[str, int]:
        """The time column, wide enough for dates when the env's data has them."""
        return ("time", 16 if env.data is not None and env.data.is_datetime else 6)

    def _growth_columns(self, env: Any) -> list[tuple[str, int]]:
        """The last two columns: headed ``reward`` when the log growth is the env's reward."""
        reward = "reward" if type(env.reward_fn) is LogReturn else "log ret"
        return [("return", 8), (reward, 9)]

    def _growth(self, env: Any, value: float, step: int, new_episode: bool) -> list[str]:
        """The step's simple return and log growth of ``value`` (``-`` at the episode start,
        and after step 1 when the previous step was not rendered)."""
        previous = self._value.remember(env, step, value, new_episode=new_episode)
        if previous is None:
            return ["-", "-"]
        growth = value / previous if previous > 0 else 0.0
        return [format_pct(growth - 1.0, 2, signed=True), f"{math.log(max(growth, 1e-12)):+.5f}"]
