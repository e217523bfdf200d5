"""The check of what one sub-env returns, run where every backend first receives it.

``SubEnv`` (in the parent for SyncVecEnv/AsyncVecEnv, in the worker for ProcVecEnv, in the actor
for RayVecEnv) passes each ``step()`` / ``reset()`` result through a ``ResultCheck`` before the
result is batched, so a wrong value is an error naming the sub-env instead of a batch of the
wrong shape or a NaN reward. The common case (an ndarray of the space's shape, a float reward,
bool flags) is decided by a few type and shape comparisons; anything else takes the slow path,
which either normalises the value or raises.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sekai.core.result import StepResult
from sekai.error import InvalidObservation
from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple

__all__ = ["ResultCheck", "observation_checker", "snapshot"]

# Which array dtype kinds may hold an observation of a space of each dtype kind: integers and
# booleans fit a float space; a float in an integer space would be truncated silently.
_KINDS = {"f": "fiub", "i": "iub", "u": "iub", "b": "biu"}
# The Python scalars that fit a shape-() space of each dtype kind.
_SCALARS: dict[str, tuple[type, ...]] = {
    "f": (float, int, bool),
    "i": (int, bool),
    "u": (int, bool),
    "b": (bool, int),
}

# A reason why an observation does not fit, or None when it fits.
ObservationCheck = Callable[[Any], "str | None"]


def observation_checker(space: Space[Any]) -> ObservationCheck:
    """A function giving why an observation does not fit ``space`` (None when it fits).

    Array spaces check shape and dtype kind; ``Dict`` / ``Tuple`` check their keys / length
    and every part; other spaces (``Text``, ``Graph``, custom ones) are not checked.
    """
    if isinstance(space, (Box, Discrete, MultiDiscrete, MultiBinary)):
        return _array_checker(tuple(space.shape), np.dtype(space.dtype).kind)
    if isinstance(space, Dict):
        parts = {key: observation_checker(sub) for key, sub in space.spaces.items()}
        return lambda obs: _check_dict(parts, obs)
    if isinstance(space, Tuple):
        items = [observation_checker(sub) for sub in space.spaces]
        return lambda obs: _check_tuple(items, obs)
    return lambda obs: None


def _array_checker(shape: tuple[int, ...], kind: str) -> ObservationCheck:
    allowed = _KINDS.get(kind, kind)

    scalars = _SCALARS.get(kind, ()) if shape == () else ()

    def check(obs: Any) -> str | None:
        if type(obs) is np.ndarray and obs.shape == shape and obs.dtype.kind in allowed:
            return None  # the common case: one type, one shape and one string comparison
        if type(obs) in scalars:
            return None  # a Python int for Discrete, a float for Box(())
        if isinstance(obs, (str, bytes)) or obs is None:
            return f"a {type(obs).__name__}, not an array of shape {shape}"
        try:
            array = np.asarray(obs)
        except Exception:  # ragged lists and other objects NumPy cannot read as an array
            return f"a {type(obs).__name__} that is not an array of shape {shape}"
        if array.shape != shape:
            return f"shape {array.shape}, the space's shape is {shape}"
        if array.dtype.kind not in allowed:
            found = f"dtype {array.dtype} (kind {array.dtype.kind!r})"
            return f"{found}, the space's dtype kind is {kind!r}"
        return None

    return check


def _check_dict(parts: dict[Any, ObservationCheck], obs: Any) -> str | None:
    if not isinstance(obs, Mapping):
        return f"a {type(obs).__name__}, not a dict"
    if obs.keys() != parts.keys():
        return f"keys {sorted(map(str, obs))}, the space's keys are {sorted(map(str, parts))}"
    for key, check in parts.items():
        reason = check(obs[key])
        if reason is not None:
            return f"[{key!r}]: {reason}"
    return None


def _check_tuple(items: list[ObservationCheck], obs: Any) -> str | None:
    if not isinstance(obs, (tuple, list)) or len(obs) != len(items):
        return f"a {type(obs).__name__} that is not a tuple of {len(items)} parts"
    for position, (check, part) in enumerate(zip(items, obs)):
        reason = check(part)
        if reason is not None:
            return f"[{position}]: {reason}"
    return None


def snapshot(obs: Any) -> Any:
    """``obs`` with every ndarray in it copied: a terminal observation kept across the reset
    that follows it, in case the env writes the reset observation into the same buffer."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if isinstance(obs, dict):
        return {key: snapshot(value) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(snapshot(value) for value in obs)
    return obs


class ResultCheck:
    """Checks one sub-env's results against its observation space before they are batched.

    Args:
        space: the observation space.
        index: the sub-env's index in the whole VecEnv (for messages).
    """

    __slots__ = ("_check", "array_dtype", "array_shape", "index", "space")

    def __init__(self, space: Space[Any], index: int) -> None:
        self.space = space
        self.index = index
        self._check = observation_checker(space)
        self.array_shape: tuple[int, ...] | None = None
        """For an array space: the shape of an observation that needs no further check."""
        self.array_dtype: np.dtype[Any] | None = None
        """For an array space: the dtype of an observation that needs no further check."""
        if isinstance(space, (Box, Discrete, MultiDiscrete, MultiBinary)):
            self.array_shape, self.array_dtype = tuple(space.shape), np.dtype(space.dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ResultCheck, (self.space, self.index))  # the checker is a closure: rebuild it

    def observation(self, obs: Any, method: str) -> None:
        """Raise ``InvalidObservation`` naming the sub-env when ``obs`` does not fit the space."""
        reason = self._check(obs)
        if reason is not None:
            raise InvalidObservation(
                obs, self.space, index=self.index, reason=reason, method=method
            )

    def step(self, result: StepResult[Any]) -> StepResult[Any]:
        """``result`` checked; a 1-element array reward or flag becomes a Python scalar.

        Raises:
            InvalidObservation: the observation does not fit the space.
            TypeError: the reward is not a real number, or a flag is not a bool.
        """
        obs = result.observation
        if not (
            type(obs) is np.ndarray
            and obs.shape == self.array_shape
            and obs.dtype is self.array_dtype
        ):
            self.observation(obs, "step")
        if (
            type(result.reward) is float
            and type(result.terminated) is bool
            and type(result.truncated) is bool
        ):
            return result
        reward = self._reward(result.reward)
        terminated = self._flag("terminated", result.terminated)
        truncated = self._flag("truncated", result.truncated)
        if (
            reward is result.reward
            and terminated is result.terminated
            and truncated is result.truncated
        ):
            return result  # NumPy scalars, ints: the batch takes them as they are
        return StepResult(result.observation, reward, terminated, truncated, result.info)

    def _reward(self, reward: Any) -> Any:
        """``reward`` when it is a real number (bools count, as 0 and 1), the element of a
        1-element array, else TypeError."""
        if isinstance(reward, (numbers.Real, np.bool_)):
            return reward
        value = _one_element(reward)
        if value is not reward and isinstance(value, numbers.Real):
            return float(value)
        raise TypeError(
            f"Sub-env {self.index} returned reward {reward!r} ({type(reward).__name__}) from "
            "step(); a reward must be a real number (a float, an int or a 1-element array of "
            "one)."
        )

    def _flag(self, name: str, flag: Any) -> Any:
        """``flag`` when it is a bool (or an int 0/1), the element of a 1-element array, else
        TypeError."""
        if isinstance(flag, (bool, np.bool_)) or (
            isinstance(flag, numbers.Integral) and flag in (0, 1)
        ):
            return flag
        value = _one_element(flag)
        if value is not flag and (isinstance(value, bool) or value in (0, 1)):
            return bool(value)
        raise TypeError(
            f"Sub-env {self.index} returned {name}={flag!r} ({type(flag).__name__}) from step(); "
            f"{name} must be a bool (or a 1-element bool array)."
        )


def _one_element(value: Any) -> Any:
    """The element of a 1-element array (gymnasium#1445: such rewards batched as ``(N, 1)``)."""
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.reshape(()).item() if value.dtype.kind in "biuf" else value
    return value
