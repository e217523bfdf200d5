"""TimeAwareObservation: add the time since reset to the observation."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai._args import check_bool
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.spaces import Box, Dict, MaskedBox
from sekai.wrappers.autoreset import warn_if_around_autoreset
from sekai.wrappers.time_limit import TimeLimit, checked_steps

__all__ = ["TimeAwareObservation"]


def _inner_time_limit(env: Env[Any, Any]) -> TimeLimit | None:
    """The outermost TimeLimit of ``env``'s stack, None when it has none."""
    for layer in env:
        if isinstance(layer, TimeLimit):
            return layer
    return None


class TimeAwareObservation(ResultWrapper[Any, Any, Any, Any]):
    """Add ``t``, the number of steps since reset, to every observation.

    A 1-D Box gains one trailing element (bounds ``[0, 1]`` when normalised, else
    ``[0, inf]``; an integer Box becomes float32); a Dict gains the key ``dict_key`` with a
    ``Box(0.0, high, (1,), float32)``. The normalised value is ``min(t / max_episode_steps, 1.0)``.

    Without ``max_episode_steps`` the time is normalised by the nearest inner TimeLimit's limit
    as it is at each step: ``set_attr("max_episode_steps", n)`` (which reaches that TimeLimit:
    this wrapper has no attribute of that name) changes the episode length and the time
    feature together.

    Args:
        env: the environment to wrap.
        max_episode_steps: the episode length used to normalise, fixed; defaults to the nearest
            inner TimeLimit's (followed as it changes), else ``env.spec.max_episode_steps``.
        normalize_time: whether to divide ``t`` by ``max_episode_steps``.
        dict_key: the key added to Dict observations.
    """

    def __init__(
        self,
        env: Env[Any, Any],
        max_episode_steps: int | None = None,
        normalize_time: bool = True,
        dict_key: str = "time",
    ) -> None:
        super().__init__(env)
        normalize_time = check_bool("TimeAwareObservation", "normalize_time", normalize_time)
        # The limit to follow (none when one is given), else the fixed one (None: none known).
        self._time_limit = _inner_time_limit(env) if max_episode_steps is None else None
        if max_episode_steps is not None:
            max_episode_steps = checked_steps(max_episode_steps)
        elif self._time_limit is None and env.spec is not None:
            max_episode_steps = env.spec.max_episode_steps
        if normalize_time and max_episode_steps is None and self._time_limit is None:
            raise ValueError(
                "TimeAwareObservation(normalize_time=True) needs max_episode_steps; pass it "
                "explicitly or wrap the env in TimeLimit first."
            )
        self.normalize_time = normalize_time
        self._max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.dict_key = dict_key
        self._t = 0
        high = 1.0 if self.normalize_time else np.inf
        space = env.observation_space
        if isinstance(space, Box) and len(space.shape) == 1:
            dtype = space.dtype if np.issubdtype(space.dtype, np.floating) else np.dtype(np.float32)
            low = np.append(space.low.astype(dtype), dtype.type(0.0))
            new_high = np.append(space.high.astype(dtype), dtype.type(high))
            self._dtype = dtype
            self._is_dict = False
            self.observation_space = Box(low, new_high, shape=low.shape, dtype=dtype)
        elif isinstance(space, Dict) and not isinstance(space, MaskedBox):
            if dict_key in space.spaces:
                raise KeyError(
                    f"TimeAwareObservation cannot add key {dict_key!r}: the observation space "
                    "already has it. Pass another dict_key."
                )
            self._is_dict = True
            self.observation_space = Dict(
                {**space.spaces, dict_key: Box(0.0, high, shape=(1,), dtype=np.float32)}
            )
        else:
            raise TypeError(
                f"TimeAwareObservation supports 1-D Box and Dict observation spaces, got {space!r}."
            )
        warn_if_around_autoreset(self)

    def _time(self) -> float:
        if not self.normalize_time:
            return float(self._t)
        limit = self._time_limit
        steps = self._max_episode_steps if limit is None else limit.max_episode_steps
        return min(self._t / steps, 1.0)  # type: ignore[operator]

    def _observe(self, observation: Any) -> Any:
        if self._is_dict:
            return {**observation, self.dict_key: np.array([self._time()], dtype=np.float32)}
        obs = np.asarray(observation, dtype=self._dtype)
        return np.append(obs, self._dtype.type(self._time()))

    def _reset_result(self, result: ResetResult[Any]) -> ResetResult[Any]:
        self._t = 0
        return ResetResult(self._observe(result.observation), result.info)

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        self._t += 1
        return StepResult(
            self._observe(result.observation),
            result.reward,
            result.terminated,
            result.truncated,
            result.info,
        )
