"""Stateless observation wrappers: Transform-, Rescale-, Dtype- and FilterObservation."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from sekai._args import check_ordered, resolve_callable, type_name
from sekai.core.env import Env
from sekai.core.wrapper import ObservationWrapper
from sekai.spaces import Box, Dict, Space
from sekai.spaces.space import check_space
from sekai.stats.running import all_finite
from sekai.wrappers.transform_action import (
    AffineMap,
    IntegerClip,
    check_bound_fits,
    require_box,
    rescale_bounds,
)

__all__ = ["DtypeObservation", "FilterObservation", "RescaleObservation", "TransformObservation"]


class TransformObservation(ObservationWrapper[Any, Any, Any]):
    """Apply a callable to every observation; the space changes only if a new one is given.

    Args:
        env: the environment to wrap.
        fn: the observation transform (also accepted as ``func=``, gymnasium's name).
        new_observation_space: the space of transformed observations (default: unchanged).
    """

    def __init__(
        self,
        env: Env[Any, Any],
        fn: Callable[[Any], Any] | None = None,
        new_observation_space: Space[Any] | None = None,
        *,
        func: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(env)
        self.func = resolve_callable("TransformObservation", "fn", fn, "func", func)
        if new_observation_space is not None:
            self.observation_space = check_space(
                "TransformObservation", "new_observation_space", new_observation_space
            )

    def observation(self, observation: Any) -> Any:
        """Return ``fn(observation)``."""
        return self.func(observation)


class RescaleObservation(ObservationWrapper[NDArray[Any], NDArray[Any], Any]):
    """Map a bounded Box observation affinely onto ``[min_obs, max_obs]``.

    The map is computed in float64 and clipped; the output dtype is the input's if floating,
    else float32. Dimensions with ``low == high`` map to ``min_obs``.

    Args:
        env: an env with a Box observation space with finite bounds.
        min_obs: the new lower bound (scalar or broadcastable to the shape).
        max_obs: the new upper bound; strictly greater than ``min_obs`` everywhere.

    Raises:
        TypeError: a bound that is not a number or an array of numbers (a bool, a string, None).
        ValueError: a bound that overflows the output dtype (1e6 for float16).
    """

    def __init__(self, env: Env[Any, Any], min_obs: ArrayLike, max_obs: ArrayLike) -> None:
        super().__init__(env)
        space = require_box("RescaleObservation", env.observation_space, "observation")
        if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise ValueError("RescaleObservation requires an observation space with finite bounds.")
        shape = space.shape
        self._dtype = (
            space.dtype if np.issubdtype(space.dtype, np.floating) else np.dtype(np.float32)
        )
        new_low, new_high = rescale_bounds(
            "RescaleObservation", ("min_obs", "max_obs"), min_obs, max_obs, shape, self._dtype
        )
        self.min_obs, self.max_obs = new_low, new_high
        self._map = AffineMap(space.low, space.high, new_low, new_high)
        self.observation_space = Box(new_low, new_high, shape=shape, dtype=self._dtype)

    def observation(self, observation: ArrayLike) -> NDArray[Any]:
        """Return the rescaled observation."""
        return self._map(observation).astype(self._dtype, copy=False)  # the map's own array


class DtypeObservation(ObservationWrapper[NDArray[Any], NDArray[Any], Any]):
    """Cast Box observations (and the space's bounds) to ``dtype``.

    For an integer ``dtype`` the bounds are truncated towards zero, as the cast truncates the
    observations, and observations are clipped into the new space first: a narrower dtype would
    wrap them around (300 to 44 for uint8).

    Args:
        env: an env with a Box observation space.
        dtype: the new dtype (integer or floating).

    Raises:
        TypeError: a ``dtype`` that is no NumPy dtype.
        ValueError: a finite bound of the space that ``dtype`` cannot hold (out of an integer
            dtype's range, overflowing a float dtype to inf); and, at reset and step, an
            observation with a NaN or an infinity cast to an integer ``dtype``.
    """

    def __init__(self, env: Env[Any, Any], dtype: DTypeLike) -> None:
        super().__init__(env)
        space = require_box("DtypeObservation", env.observation_space, "observation")
        if dtype is None:  # np.dtype(None) is float64: a missing argument, not a choice
            raise TypeError("DtypeObservation: dtype must be a NumPy dtype or its name, got None.")
        try:
            self.dtype = np.dtype(dtype)
        except TypeError as exc:
            raise TypeError(
                f"DtypeObservation: dtype must be a NumPy dtype or its name, got {dtype!r}."
            ) from exc
        low, high = space.low, space.high
        self._to_integer = self.dtype.kind in "iu"
        if self._to_integer and space.dtype.kind == "f":
            # astype() truncates towards zero, so the cast observations lie in trunc(bounds).
            low = np.where(np.isfinite(low), np.trunc(low), low)
            high = np.where(np.isfinite(high), np.trunc(high), high)
        # Other kinds (bool, complex) are for Box below to refuse, naming what it holds.
        if self.dtype.kind in "iuf" and not np.can_cast(space.dtype, self.dtype, "safe"):
            given = (("low", low, space.low), ("high", high, space.high))
            for name, bound, original in given:
                finite = np.isfinite(bound)
                where = f"observation space {name}"  # quoted as the space has it, not truncated
                check_bound_fits(
                    "DtypeObservation", where, bound[finite], self.dtype, original[finite]
                )
        if not self._to_integer:
            low, high = low.astype(self.dtype), high.astype(self.dtype)
        box = Box(low, high, shape=space.shape, dtype=self.dtype)
        self.observation_space = box
        # Only a cast that can change values (from floats, or to a narrower integer) is clipped.
        narrows = self._to_integer and not np.can_cast(space.dtype, box.dtype, "safe")
        self._integer = IntegerClip(box.low, box.high) if narrows else None

    def observation(self, observation: ArrayLike) -> NDArray[Any]:
        """Return the observation cast to ``dtype`` (clipped into the space where the cast
        could take it out: from floats, or to a narrower integer).

        Raises:
            ValueError: a NaN or an infinity cast to an integer dtype (no integer stands for it).
        """
        x = np.asarray(observation)
        if self._to_integer and x.dtype.kind == "f" and not all_finite(x):
            bad = x[~np.isfinite(x)]
            raise ValueError(
                f"DtypeObservation: cannot cast an observation holding {float(bad[0])!r} to "
                f"{self.dtype}; no integer stands for it."
            )
        if self._integer is not None:
            return self._integer(x)
        return x.astype(self.dtype)


class FilterObservation(ObservationWrapper[dict[str, Any], dict[str, Any], Any]):
    """Keep only some keys of a Dict observation, in the order given.

    Args:
        env: an env with a Dict observation space.
        keys: the keys to keep (at least one), in the order wanted: a list, tuple or other
            ordered iterable of keys, or one string key (a set has no order: ``TypeError``).
    """

    def __init__(self, env: Env[Any, Any], keys: Iterable[Any]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, Dict):
            raise TypeError(
                f"FilterObservation requires a Dict observation space, got {type(space).__name__}."
            )
        if isinstance(keys, str):
            keys = [keys]
        check_ordered("FilterObservation", "keys", keys)
        try:
            given = iter(keys)
        except TypeError:
            raise TypeError(
                "FilterObservation: keys must be an iterable of keys (or one string key), "
                f"got {type_name(keys)}."
            ) from None
        self.keys = list(given)
        if not self.keys:
            raise ValueError("FilterObservation needs at least one key.")
        missing = [k for k in self.keys if k not in space.spaces]
        if missing:
            raise KeyError(f"Keys {missing} are not in the observation space {list(space.spaces)}.")
        self.observation_space = Dict({k: space[k] for k in self.keys})

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        """Return a dict with only the kept keys."""
        return {k: observation[k] for k in self.keys}
