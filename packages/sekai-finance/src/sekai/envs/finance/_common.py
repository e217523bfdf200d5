"""Shared building blocks of the finance envs: validation, episode state, fixed parameters.

Every finance env (single and native) uses these so errors read the same everywhere:

* ``check_real`` / ``check_int`` / ``check_per_asset`` validate numeric parameters with the
  finance.md §3.5 wording ("sigma must be a finite number >= 0, got -1.0");
* ``EpisodeTracking`` counts steps and raises ``ResetRequired`` before the first reset and
  after the end (the single envs get it through ``FinanceEnv``; LimitOrderBookMarket uses it
  directly); ``parse_options`` refuses unknown reset options and ``python_scalar`` makes info
  values Python scalars;
* ``fixed`` declares a read-only parameter ("X is fixed at construction; make a new env").
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from sekai._args import holds_bool
from sekai._box_actions import bools_as_floats
from sekai.core.env import Env
from sekai.error import InvalidAction, ResetRequired
from sekai.finance._values import (
    check_int,
    is_real,
    real_array,
    real_float,
    scalar,
    too_large,
)
from sekai.spaces import Discrete

__all__ = [
    "EPISODE_OVER",
    "EpisodeTracking",
    "FinanceEnv",
    "check_int",
    "check_order_size",
    "check_per_asset",
    "check_real",
    "discrete_action",
    "fixed",
    "numeric_action",
    "parse_options",
    "python_scalar",
]

EPISODE_OVER = (
    "The episode is over (terminated or truncated): call reset() to start a new one before "
    "calling step() again."
)
_BOUNDS = {None: "", "ge0": " >= 0", "gt0": " > 0"}

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")


def check_real(name: str, value: object, bound: str | None = None) -> float:
    """``value`` as a float: finite, and ``>= 0`` (``"ge0"``) or ``> 0`` (``"gt0"``) if asked.

    Raises:
        ValueError: naming the parameter, the bound and the value (bools are refused too).
    """
    value = scalar(value)
    result = real_float(value)
    if result is None:
        shown = too_large(value) if is_real(value) else f"{type(value).__name__} {value!r}"
        raise ValueError(f"{name} must be a finite number{_BOUNDS[bound]}, got {shown}.")
    ok = np.isfinite(result) and (bound is None or (result >= 0 if bound == "ge0" else result > 0))
    if not ok:  # a Decimal as given, as too_large shows it: its float reads as another value
        given = value if isinstance(value, Decimal) else result
        raise ValueError(f"{name} must be a finite number{_BOUNDS[bound]}, got {given!r}.")
    return result + 0.0  # -0.0 becomes 0.0: Box(0.0, -0.0) would have high < low in sign


def check_order_size(order_size: int, max_inventory: int) -> None:
    """``ValueError`` unless one order fits in the inventory limit (else no order could fill)."""
    if order_size > max_inventory:
        raise ValueError(
            f"order_size={order_size} exceeds max_inventory={max_inventory}: no order could "
            "ever be filled; use order_size <= max_inventory."
        )


def check_per_asset(
    name: str, value: object, n: int, bound: str | None = None
) -> float | np.ndarray:
    """A scalar (float) or a length-``n`` read-only float64 array, every entry checked."""
    value = scalar(value)
    if is_real(value):
        return check_real(name, value, bound)
    if holds_bool(value):
        raise ValueError(
            f"{name} must be a number or {n} numbers (one per asset), not bools; got {value!r}."
        )
    try:
        array = real_array(name, value)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a number or {n} numbers (one per asset), got {value!r} ({exc})"
        ) from None
    if array.ndim == 0:  # one number of a kind that is no numbers.Real (it has __float__)
        return check_real(name, array[()], bound)
    if array.shape != (n,):
        raise ValueError(
            f"{name} must be a number or {n} numbers (one per asset), got shape {array.shape}."
        )
    ok = np.all(np.isfinite(array)) and (
        bound is None or bool(np.all(array >= 0 if bound == "ge0" else array > 0))
    )
    if not ok:
        raise ValueError(f"{name} must be finite numbers{_BOUNDS[bound]}, got {array.tolist()}.")
    array.flags.writeable = False
    return array


def python_scalar(value: Any) -> Any:
    """numpy scalars -> Python ``int``/``float``/``bool``; datetime64 and arrays unchanged."""
    if isinstance(value, np.generic) and not isinstance(value, np.datetime64):
        return value.item()
    return value


def parse_options(options: Mapping[str, Any] | None, allowed: Iterable[str]) -> dict[str, Any]:
    """Validate reset options: None/``{}`` mean none; unknown keys -> ``ValueError``."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")
    accepted = tuple(allowed)
    unknown = [key for key in options if key not in accepted]
    if unknown:
        names = ", ".join(repr(k) for k in accepted) if accepted else "none"
        raise ValueError(
            f"unknown reset option(s) {', '.join(repr(k) for k in unknown)}; this env accepts: "
            f"{names}."
        )
    return {key: value for key, value in options.items() if value is not None}


def numeric_action(action: Any, space: Any) -> np.ndarray:
    """A continuous action as a numeric array (bools as the floats 0 and 1, as every Box env
    takes them: ``bools_as_floats``); ``InvalidAction`` for a ragged batch, strings or objects
    such as ints too large for a float (NumPy would parse strings into numbers)."""
    if type(action) is np.ndarray and action.dtype.kind in "iuf":
        return action
    try:
        array = np.asarray(action)
    except (TypeError, ValueError):
        raise InvalidAction(action, space) from None
    if array.dtype.kind not in "biuf":
        raise InvalidAction(action, space)
    return bools_as_floats(array)


def discrete_action(action: Any, n: int) -> int:
    """An index in ``[0, n)`` from an int, a numpy integer or a 0-d integer array (a shape
    ``(1,)`` array is not in a ``Discrete`` space, as ``Discrete.contains`` says).

    Raises:
        InvalidAction: naming ``Discrete(n)``, the space checked (the env's ``action_space``
            as built, whatever ``set_attr`` replaced it with).
    """
    value = action
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InvalidAction(action, Discrete(n))
    index = int(value)
    if not 0 <= index < n:
        raise InvalidAction(action, Discrete(n))
    return index


class fixed:
    """A read-only parameter: reading returns ``obj._<name>``, writing raises AttributeError."""

    def __init__(self, doc: str = "") -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.slot = f"_{name}"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj, self.slot)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.name} is fixed at construction; make a new env.")


def _explain_read_only(cls: type) -> None:
    """Give each public read-only property of ``cls`` a setter that says what it is: Python's
    "property 'dt' of 'MarketMakingEnv' object has no setter" says neither why nor what to do."""
    for name, value in list(vars(cls).items()):
        if isinstance(value, property) and value.fset is None and not name.startswith("_"):
            setattr(cls, name, value.setter(_read_only_setter(name, value)))


def _read_only_setter(name: str, prop: property) -> Any:
    """The setter of a read-only property: an AttributeError quoting its docstring."""
    doc = (prop.__doc__ or "").strip().split("\n\n")[0]
    what = " ".join(doc.replace("``", "").split()).rstrip(".")
    what = re.sub(r"\s*\([^()]*read-only[^()]*\)$", "", what)  # said by the message

    def refuse(self: Any, value: Any) -> None:
        described = f" ({what})" if what else ""
        raise AttributeError(
            f"{type(self).__name__}.{name} is read-only{described}: it follows from the env's "
            "parameters or the simulation; set a parameter or reset() instead."
        )

    return refuse


class EpisodeTracking:
    """Episode bookkeeping shared by every finance env, multi-agent ones included.

    Subclasses call ``self._begin_episode()`` in ``reset()``, ``self._check_can_step()`` first in
    ``step()``, ``self._end_step(terminated, truncated)`` at its end, and
    ``self._require_episode()`` in properties that describe the current episode.
    """

    _started: bool = False
    _done: bool = False
    _elapsed_steps: int = 0
    _resets: int = 0  # episodes begun: how a renderer tells a reset it did not see

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in the current episode."""
        return self._elapsed_steps

    def _begin_episode(self) -> None:
        self._resets += 1
        self._started = True
        self._done = False
        self._elapsed_steps = 0

    def _check_can_step(self) -> None:
        if not self._started:
            raise ResetRequired()
        if self._done:
            raise ResetRequired(EPISODE_OVER)

    def _require_episode(self, what: str) -> None:
        if not self._started:
            raise ResetRequired(
                f"{type(self).__name__}.{what} describes the current episode: call reset() first."
            )

    def _end_step(self, terminated: bool, truncated: bool) -> None:
        self._elapsed_steps += 1
        self._done = terminated or truncated


_explain_read_only(EpisodeTracking)  # elapsed_steps: subclasses get theirs in __init_subclass__


class FinanceEnv(EpisodeTracking, Env[ObsT, ActT], Generic[ObsT, ActT]):
    """Base of the single-agent finance envs: an ``Env`` with ``EpisodeTracking``, whose
    read-only properties say so when set (``_explain_read_only``)."""

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _explain_read_only(cls)
