"""Shared pieces of the session envs (MarketMaking, OptimalExecution): parameters and actions."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai._box_actions import box_action as checked_box_action
from sekai.envs.finance._common import check_int, check_real, parse_options

__all__ = ["RewardTerm", "box_action", "check_reward_terms", "param", "session_options"]

_NO_HISTORY = (
    "{cls} simulates a trading session and has no price history: options['start'] is not "
    "available (it accepts no reset options)."
)


class param:
    """A settable, validated parameter stored as ``obj._<name>``.

    Setting it validates the value like the constructor does (``ValueError`` naming the
    attribute), stores it and calls ``obj._parameters_changed(name)`` so the env can re-check
    cross-parameter conditions and drop caches. Whatever that hook raises, the old value is
    put back before the error propagates: a refused set changes nothing.

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
            except BaseException:  # a refusal, or any failure of a check: the old value stays
                setattr(obj, self.slot, old)
                raise


@dataclass(frozen=True)
class RewardTerm:
    """One worst-case term of a reward: ``what`` it is, its ``formula`` in the parameters'
    names, its ``factors`` in the order the step multiplies them (the term's size is the largest
    partial product: an intermediate that overflows is what fails), and the parameters to
    ``lower``."""

    what: str
    formula: str
    factors: tuple[float, ...]
    lower: str

    def size(self) -> float:
        """The largest ``|partial product|`` (inf or NaN where float64 overflows)."""
        peak = product = 1.0
        for factor in self.factors:
            product *= factor
            peak = max(peak, abs(product)) if not math.isnan(product) else product
        return peak


def check_reward_terms(
    env_id: str,
    changed: str | None,
    terms: Iterable[RewardTerm],
    values: Mapping[str, Any],
    dtype: str = "float64",
    bound: float = sys.float_info.max,
) -> None:
    """Refuse parameters under which a reward term, at its worst case, leaves the range of
    ``dtype`` (``bound``: its largest value): a ``ValueError`` naming the first term that does,
    its parameters (``values``), the bound and what to lower (finance.md). Run when the
    parameters are built or set (the array kernels: for their float dtype), so the step pays
    nothing. ``changed``: the parameter just set (None: the constructor)."""
    for term in terms:
        size = term.size()
        if size <= bound:  # NaN fails too
            continue
        given = [
            f"{name}={value!r}"
            for name, value in values.items()
            if re.search(rf"\b{name}\b", term.formula)
        ]
        named = ", ".join(given)
        if changed is None:  # the values themselves are what is refused
            head, reached = f"{named} {'make' if len(given) > 1 else 'makes'}", ""
        else:
            head, reached = f"setting {changed} makes", f" with {named}"
        where, remedy = env_id, term.lower
        if dtype != "float64":
            where = f"{env_id} (array kernel in {dtype})"
            remedy += (
                ", or run the kernel in float64 (JAX: jax_enable_x64) or with "
                "vectorization_mode='native'"
            )
        raise ValueError(
            f"{where}: {head} {term.what} overflow {dtype}: {term.formula} reaches "
            f"{size:.4g}{reached}, above {dtype}'s largest value {bound:.4g}. "
            f"Lower {remedy}."
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
