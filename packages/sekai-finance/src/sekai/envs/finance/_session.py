"""Shared pieces of the session envs (MarketMaking, OptimalExecution): parameters and actions."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sekai._box_actions import box_action as checked_box_action
from sekai.envs.finance._common import check_int, check_real, parse_options

__all__ = ["box_action", "check_reward_term", "param", "session_options"]

_NO_HISTORY = (
    "{cls} simulates a trading session and has no price history: options['start'] is not "
    "available (it accepts no reset options)."
)


class param:
    """A settable, validated parameter stored as ``obj._<name>``.

    Setting it validates the value like the constructor does (``ValueError`` naming the
    attribute), stores it and calls ``obj._parameters_changed(name)`` so the env can re-check
    cross-parameter conditions and drop caches.

    Args:
        bound: ``None`` (finite), ``"ge0"`` or ``"gt0"``; ignored for integers.
        integer: whether the value is an int ``>= 1``.
    """

    def __init__(self, bound: str | None = None, *, integer: bool = False, doc: str = "") -> None:
        self.bound = bound
        self.integer = integer
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.slot = f"_{name}"

    def check(self, value: object, name: str | None = None) -> float | int:
        """Return ``value`` validated (``name`` is the one used in the error message)."""
        label = self.name if name is None else name
        if self.integer:
            return check_int(label, value)
        return check_real(label, value, self.bound)

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj, self.slot)

    def __set__(self, obj: Any, value: Any) -> None:
        checked = self.check(value)
        old = getattr(obj, self.slot, None)
        setattr(obj, self.slot, checked)
        hook: Callable[[str], None] | None = getattr(obj, "_parameters_changed", None)
        if hook is not None:
            try:
                hook(self.name)
            except ValueError:
                setattr(obj, self.slot, old)
                raise


def check_reward_term(
    env_id: str, changed: str | None, term: str, formula: str, value: float, remedy: str
) -> None:
    """Refuse parameters under which a reward term, at its worst case, leaves float64's range
    (finance.md §3.5: a ``ValueError`` naming the parameters and the bound): checked once, at
    construction and when a parameter is set, so the step pays nothing.

    Args:
        env_id: the env's ID. changed: the parameter just set (None: the constructor).
        term: what the term is. formula: the term in the parameters' names, with their
            values. value: the term, evaluated as the step evaluates it (inf or NaN when it
            overflows). remedy: the parameters to lower.
    """
    if math.isfinite(value):
        return
    head = "the parameters make" if changed is None else f"setting {changed} makes"
    raise ValueError(
        f"{env_id}: {head} the reward's {term} overflow float64 in the worst case: "
        f"{formula} must stay below {sys.float_info.max:.4g}, got {value!r}. {remedy}"
    )


def box_action(action: Any, shape: tuple[int, ...], space: Any) -> np.ndarray:
    """Parse a continuous action by the envs' rule (real numbers of ``shape``, finite).

    Returns a float64 array (not clipped). Raises ``InvalidAction`` for a wrong shape, a
    non-numeric value or a non-finite entry.
    """
    return checked_box_action(action, space, shape).astype(np.float64)


def session_options(options: Mapping[str, Any] | None, cls: str) -> None:
    """Validate reset options of a session env: none are accepted (``{"start": None}`` is none)."""
    if isinstance(options, Mapping) and "start" in options:
        if options["start"] is not None:
            raise ValueError(_NO_HISTORY.format(cls=cls))
        options = {key: value for key, value in options.items() if key != "start"}
    parse_options(options, ())  # any other key is unknown: "this env accepts: none"


class ObservationCache:
    """Native session envs: build each batch of observations once per change of state.

    ``NativeVecEnv`` calls ``_observe()`` after ``_step()`` and, when sub-envs were reset in the
    same step, once more. The env builds the observation at the end of ``_step`` (call
    ``_observation_ready()``); after a partial reset only the reset rows are replaced by
    ``_fresh_observation()`` (a fresh session's observation, the same for every sub-env).
    Subclasses implement ``_build_observation()``.
    """

    num_envs: int
    _obs_next: np.ndarray | None = None
    _obs_given: np.ndarray | None = None

    def _build_observation(self) -> np.ndarray:
        raise NotImplementedError

    def _fresh_observation(self) -> np.ndarray:
        raise NotImplementedError

    def _observe(self) -> np.ndarray:
        obs = self._obs_next
        if obs is None:
            obs = self._build_observation()
        self._obs_next = None  # an array is handed out once; the next call builds a new one
        self._obs_given = obs
        return obs

    def _observation_ready(self) -> None:
        self._obs_next = self._build_observation()

    def _observation_reset(self, indices: np.ndarray) -> None:
        given = self._obs_given
        if given is None or len(indices) >= self.num_envs:
            self._obs_next = None
            return
        obs = given.copy()
        obs[indices] = self._fresh_observation()
        self._obs_next = obs
