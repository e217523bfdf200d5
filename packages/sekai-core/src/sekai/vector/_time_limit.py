"""The time limit of the array-based vector envs (native and kernel): one attribute that is
missing without a limit, as it is on the sub-envs of a SyncVecEnv, which then have no
TimeLimit."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["INT32_STEPS", "TimeLimitAttribute", "check_max_episode_steps"]

#: The longest time limit a driver counting steps in int32 (the kernel modes) holds.
INT32_STEPS = 2**31 - 1


def check_max_episode_steps(
    value: Any, *, removable: bool = False, changing: bool = False, counter: str | None = None
) -> int | None:
    """``value`` as a time limit: None (no limit) or an int >= 1; the one check of the native
    and kernel envs, ``register()`` and ``make()``. With ``removable`` (``make()``'s override of
    the registered limit) ``-1`` also means no limit; ``changing`` (``set_attr``, which cannot
    remove a limit) words the expected type without None; ``counter`` names a driver that counts
    each episode's steps in int32 (a kernel mode), which refuses a limit beyond
    :data:`INT32_STEPS` (it would wrap, and truncate every episode at once)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        expected = "an int >= 1" if changing else "an int or None"
        raise TypeError(f"max_episode_steps must be {expected}, got {type(value).__name__}.")
    if removable and value == -1:
        return None
    if value < 1:
        removal = ", or -1 to remove the time limit" if removable else ""
        raise ValueError(f"max_episode_steps must be >= 1{removal}, got {value}.")
    if counter is not None and value > INT32_STEPS:
        raise ValueError(
            f"max_episode_steps={int(value)} exceeds 2**31 - 1 = {INT32_STEPS}: {counter} counts "
            f"each episode's steps in int32. Keep max_episode_steps <= {INT32_STEPS}, or use "
            "vectorization_mode='native' or 'sync', which take any limit."
        )
    return int(value)


def _one_limit(env: Any, value: Any) -> Any:
    """A list of one limit per sub-env (what ``set_attr`` may pass) as that one limit: every
    sub-env shares it. A list of another length is refused as a native env's ``set_attr``
    refuses it; anything else, an array included, is one value for all (core.md §14, rule 6)
    and is returned as it is, for the checks that follow to name its type."""
    if not isinstance(value, list):
        return value
    if len(value) != env.num_envs:
        raise ValueError(
            f"{type(env).__name__}.max_episode_steps: a list must hold one value per sub-env "
            f"({env.num_envs}), got {len(value)}. Pass one int (not a list) to set it for "
            "every sub-env."
        )
    # Each item checked as a SyncVecEnv's sub-env checks it, then compared as a limit: an
    # np.int64(2) and a 2 are one limit.
    limits = [check_max_episode_steps(item, changing=True) for item in value]
    if any(limit != limits[0] for limit in limits[1:]):
        raise ValueError(
            f"max_episode_steps is one limit for every sub-env of a {type(env).__name__}, got "
            f"{value}; pass one int."
        )
    return limits[0]


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
        self._max_episode_steps = check_max_episode_steps(
            value, changing=True, counter=self._step_counter()
        )
        self._time_limit_changed()

    def _step_counter(self) -> str | None:
        """What counts each episode's steps in int32, for ``check_max_episode_steps``'s
        ``counter`` (None: the steps are Python ints or int64, any limit fits)."""
        return None

    def _time_limit_changed(self) -> None:
        """Called after the limit changed (a compiled step reads it once, when built)."""
