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
        if value is None:  # would remove the limit, which set_attr cannot do on other backends
            raise TypeError(
                "max_episode_steps must be an int >= 1, got None: a time limit can be changed "
                "but not removed (build the env without one instead)."
            )
        self._max_episode_steps = check_max_episode_steps(value)
        self._time_limit_changed()

    def _time_limit_changed(self) -> None:
        """Called after the limit changed (a compiled step reads it once, when built)."""
