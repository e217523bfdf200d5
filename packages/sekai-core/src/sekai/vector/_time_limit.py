"""The time limit of the array-based vector envs (native and kernel): one attribute that is
missing without a limit, as it is on the sub-envs of a SyncVecEnv, which then have no
TimeLimit."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TimeLimitAttribute", "check_max_episode_steps"]


def check_max_episode_steps(value: Any) -> int | None:
    """``value`` as a time limit: None (no limit) or an int >= 1."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"max_episode_steps must be an int or None, got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"max_episode_steps must be >= 1, got {value}.")
    return int(value)


def _one_limit(env: Any, value: Any) -> Any:
    """A list or 1-D array of one limit per sub-env (what ``set_attr`` may pass) as that one
    limit: every sub-env shares it. One of another length is refused as a native env's
    ``set_attr`` refuses it; anything else is returned as it is, for the checks that follow to
    name its type."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return value
        items = value.tolist()
    elif isinstance(value, list):
        items = value
    else:
        return value
    if len(items) != env.num_envs:
        kind = "a list" if isinstance(value, list) else "a 1-D array"
        raise ValueError(
            f"{type(env).__name__}.max_episode_steps: {kind} must hold one value per sub-env "
            f"({env.num_envs}), got {len(items)}. Pass one int (not a list) to set it for "
            "every sub-env."
        )
    first = items[0]
    try:
        same = all(type(item) is type(first) and bool(item == first) for item in items)
    except (TypeError, ValueError):  # items NumPy cannot compare as one truth value
        return value
    if not same:
        raise ValueError(
            f"max_episode_steps is one limit for every sub-env of a {type(env).__name__}, got "
            f"{items}; pass one int."
        )
    return first


class TimeLimitAttribute:
    """``max_episode_steps``, stored in ``_max_episode_steps`` (None: no limit), which the
    step code reads directly."""

    _max_episode_steps: int | None

    @property
    def max_episode_steps(self) -> int:
        """The time limit of every sub-env (set it to change the limit of later steps).

        Raises:
            AttributeError: no limit was configured, as for the sub-envs of a SyncVecEnv,
                which have no TimeLimit then (so ``set_attr`` cannot add one either).
        """
        if self._max_episode_steps is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'max_episode_steps': it was "
                "built without a time limit (pass max_episode_steps=n to make_vec() or to the "
                "constructor)."
            )
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: int) -> None:
        value = _one_limit(self, value)
        if self._max_episode_steps is None:
            if value is None:  # still none (a subclass's constructor may assign None)
                return
            raise AttributeError(
                f"{type(self).__name__} was built without a time limit, and set_attr cannot add "
                "one (as on every backend: the sub-envs of a SyncVecEnv have no TimeLimit "
                "then); pass max_episode_steps=n to make_vec() or to the constructor instead."
            )
        if value is None:
            raise TypeError(
                "max_episode_steps must be an int >= 1, got None: a time limit can be changed "
                "but not removed (build the env without one instead)."
            )
        self._max_episode_steps = check_max_episode_steps(value)
        self._time_limit_changed()

    def _time_limit_changed(self) -> None:
        """Called after the limit changed (a compiled step reads it once, when built)."""
