"""The built-in vector wrappers: episode statistics, normalisation and transforms."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import Any, Generic

import numpy as np
from numpy.typing import NDArray

from sekai._args import IntLike, resolve_callable, reward_scaling_args
from sekai.spaces import Box, Space
from sekai.spaces.space import check_space
from sekai.stats.episode import EpisodeStats
from sekai.stats.normalizer import NormalizerAttributes, ObservationNormalizer
from sekai.stats.running import RunningMeanStd
from sekai.stats.trackers import (
    InMemoryTracker,
    VecTrackerT,
    takes_env_index,
    tracker_or_default,
)
from sekai.vector._contract.partial import PartialStep
from sekai.vector.kernel_step import tree_map
from sekai.vector.kernel_vec_env import _device_backend
from sekai.vector.result import VecStepResult, info_at, info_set
from sekai.vector.vec_env import VecEnv
from sekai.vector.vec_wrapper import (
    VecObservationWrapper,
    VecResultWrapper,
    VecRewardWrapper,
)
from sekai.wrappers.normalize_reward import load_return_stats, return_scale, update_return_stats

__all__ = [
    "VecNormalizeObservation",
    "VecNormalizeReward",
    "VecRecordEpisodeStatistics",
    "VecTransformObservation",
    "VecTransformReward",
]


def _on_host(venv: VecEnv, *arrays: Any) -> list[NDArray[Any]]:
    """Rewards or flags as NumPy arrays: a kernel env (JAX, torch) hands out device arrays."""
    backend = _device_backend(venv)
    to_numpy = np.asarray if backend is None else backend.to_numpy
    return [np.asarray(to_numpy(array)) for array in arrays]


class VecRecordEpisodeStatistics(VecResultWrapper, Generic[VecTrackerT]):
    """Put an ``EpisodeStats`` in ``infos[i]["episode"]`` when sub-env ``i`` ends an episode.

    The stats carry ``extra={"env_index": i}`` and go to ``tracker.on_episode_end``. Without
    autoreset each episode is recorded once, however long a frozen sub-env keeps being
    stepped. Every real sub-env step calls ``tracker.on_step`` (skipped for the default
    ``InMemoryTracker``, which ignores it), and every reset of a sub-env
    ``tracker.on_reset(env_id, seed)``, as ``AutoReset(RecordEpisodeStatistics(env))`` would:
    once per sub-env for ``reset()``, and once more for each autoreset, after its
    ``on_episode_end``. The seed is the sub-env's recorded seed, the one the backend last
    reseeded it with (``reset(seed=s)`` with an int gives sub-env i the child seed i; a list
    gives each sub-env its entry on every backend), kept, as an env keeps its own, by
    autoresets and by resets that do not reseed it (their streams continue); None while the
    VecEnv has never reseeded it. A native env's sub-envs share one generator: for an int each
    reports that int (``reset(seed=s)`` replays them all).

    The sub-envs' events interleave; a tracker whose ``on_reset`` or ``on_step`` takes an
    ``env_index`` keyword is told which sub-env each call is about (for type checkers, an
    ``IndexedStatsTracker``). A step that raises in one
    sub-env (rule 9) is still counted for the others, and episodes that ended in it are
    recorded (their infos are lost with the call, so ``on_step`` gets an empty dict).

    Args:
        venv: the VecEnv to wrap.
        tracker: a ``StatsTracker`` or ``IndexedStatsTracker``; None means
            ``InMemoryTracker(max_episodes=deque_size)``.
            ``tracker`` has its type for type checkers (``InMemoryTracker`` by default).
        deque_size: the window of the default tracker.
    """

    def __init__(
        self, venv: VecEnv, tracker: VecTrackerT | None = None, deque_size: IntLike = 100
    ) -> None:
        super().__init__(venv)
        self._set_tracker(tracker, deque_size)
        n = self.num_envs
        self.episode_returns = np.zeros(n, dtype=np.float64)
        self.episode_lengths = np.zeros(n, dtype=np.int64)
        self._starts = np.full(n, time.monotonic())

    @property
    def tracker(self) -> VecTrackerT:
        """The tracker every sub-env feeds (assignable; for type checkers, one of the wrapper's
        tracker type: declare ``VecRecordEpisodeStatistics[StatsTracker | IndexedStatsTracker]``
        to swap kinds)."""
        return self._tracker

    @tracker.setter
    def tracker(self, tracker: VecTrackerT) -> None:
        self._set_tracker(tracker, None)

    def _set_tracker(self, tracker: VecTrackerT | None, deque_size: IntLike | None) -> None:
        self._tracker = tracker_or_default("VecRecordEpisodeStatistics", tracker, deque_size)
        hooks = type(self._tracker)
        self._on_step = getattr(hooks, "on_step", None) is not InMemoryTracker.on_step
        self._indexed_reset = takes_env_index(self._tracker.on_reset)
        self._indexed_step = takes_env_index(self._tracker.on_step)

    _step_reads_live = True

    def _on_reset(self, seed: Any) -> None:
        self.episode_returns[:] = 0.0
        self.episode_lengths[:] = 0
        self._starts[:] = time.monotonic()
        env_id = self._env_id()
        for i in range(self.num_envs):
            self._reset_event(env_id, i)

    def _reset_event(self, env_id: str | None, index: int) -> None:
        """``on_reset`` for sub-env ``index``, with its recorded seed: the seeds the backend
        derived (one rule for every backend, in vector._contract.seeding; a Generator in a
        seed list was drawn from once), as the VecEnv records them."""
        recorded = self.venv.unwrapped._recorded_seeds
        seed = None if recorded is None else recorded[index]
        tracker: Any = self._tracker  # either kind: _set_tracker read which from its hooks
        if self._indexed_reset:
            tracker.on_reset(env_id=env_id, seed=seed, env_index=index)
        else:
            tracker.on_reset(env_id=env_id, seed=seed)

    def _env_id(self) -> str | None:
        spec = self.spec
        return spec.id if spec is not None else None

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        rewards, terminated, truncated = _on_host(
            self.venv, result.rewards, result.terminated, result.truncated
        )
        self._record(live, rewards, terminated, truncated, result)
        return result

    def _on_failed_step(self, partial: PartialStep) -> None:
        self._record(partial.stepped, partial.rewards, partial.terminated, partial.truncated, None)

    def _record(
        self,
        stepped: NDArray[np.bool_] | None,
        rewards: NDArray[Any],
        terminated: NDArray[np.bool_],
        truncated: NDArray[np.bool_],
        result: VecStepResult[Any] | None,
    ) -> None:
        """Count one step of the ``stepped`` sub-envs (None: all) and record the episodes that
        ended (``result``: the step's, whose infos get the episodes; None when the step raised
        and its infos are lost)."""
        if stepped is None:  # the usual step: no mask to build
            self.episode_returns += rewards
            self.episode_lengths += 1
            finished = terminated | truncated
        else:
            self.episode_returns += np.where(stepped, rewards, 0.0)
            self.episode_lengths += stepped
            finished = (terminated | truncated) & stepped
        if self._on_step:
            tracker: Any = self._tracker  # either kind: _set_tracker read which from its hooks
            indices = range(self.num_envs) if stepped is None else np.flatnonzero(stepped).tolist()
            for i in indices:
                info = {} if result is None else info_at(result, i)
                args = (float(rewards[i]), bool(terminated[i]), bool(truncated[i]), info)
                if self._indexed_step:
                    tracker.on_step(*args, env_index=i)
                else:
                    tracker.on_step(*args)
        if not finished.any():
            return
        end = time.monotonic()
        reset = self._resets(finished)
        env_id = self._env_id()
        for i in np.flatnonzero(finished).tolist():
            start = float(self._starts[i])
            stats = EpisodeStats(
                episode_return=float(self.episode_returns[i]),
                episode_length=int(self.episode_lengths[i]),
                elapsed_time=end - start,
                start_time=start,
                end_time=end,
                terminated=bool(terminated[i]),
                truncated=bool(truncated[i]),
                extra={"env_index": i},
            )
            if result is not None:  # a dict not built yet gets it when (if) it is built
                info_set(result, i, "episode", stats)
            self._tracker.on_episode_end(stats)
            if reset[i]:
                self._reset_event(env_id, i)
        self._start_over(finished, end)

    def _resets(self, finished: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """The sub-envs of ``finished`` reset within the step: all, with autoreset; else those
        that did not freeze, whose own AutoReset reset them (``VecEnv._froze``)."""
        return finished if self.venv.autoreset else finished & ~self.venv.frozen

    def _start_over(self, finished: NDArray[np.bool_], now: float) -> None:
        """The episodes of ``finished`` start again at ``now``, from zero."""
        self.episode_returns[finished] = 0.0
        self.episode_lengths[finished] = 0
        self._starts[finished] = now


class VecNormalizeObservation(NormalizerAttributes, VecObservationWrapper):
    """Normalise observations with statistics shared by all sub-envs (NormalizeObservation's
    options: every Box leaf, MaskedBox over occupied slots, ``"ewm"`` statistics, clipping).

    With ``"ewm"``, ``halflife`` counts vector steps: one step updates the statistics once.
    Over a JAX or torch env the statistics are kept on the host and the normalised batch is
    handed back on the env's device, in its float dtype. ``infos[i]["final_observation"]`` is
    normalised with the current statistics, without
    updating them; so are, without autoreset, the final observations that frozen sub-envs
    repeat until their next reset. A NaN or infinite value that would update the statistics,
    or one that would take them past float64's range, raises ValueError naming the sub-env
    and the part of the observation, before any change.

    Args:
        venv: the VecEnv to wrap.
        epsilon: added to the variance before dividing.
        stats: ``"running"`` or ``"ewm"``.
        halflife: the EWM halflife in vector steps.
        clip: clip normalised values to ``[-clip, clip]`` (None: no clipping).

    Attributes:
        obs_rms: the statistics, nested like the space (None for pass-through leaves);
            assignable, like ``epsilon`` (``eval_vec.obs_rms = train_vec.obs_rms``).
        update_running_mean: set it to False to freeze the statistics (evaluation).
    """

    def __init__(
        self,
        venv: VecEnv,
        epsilon: float = 1e-8,
        *,
        stats: str = "running",
        halflife: float = 1000.0,
        clip: float | None = None,
    ) -> None:
        super().__init__(venv)
        self._normalizer = ObservationNormalizer(
            venv.observation_space,
            stats=stats,
            halflife=halflife,
            epsilon=epsilon,
            clip=clip,
            owner="VecNormalizeObservation",
        )
        self.update_running_mean = True
        self.observation_space = self._normalizer.observation_space
        self._backend = _device_backend(venv)

    _step_reads_live = True

    def observation(self, observations: Any) -> Any:
        """Update the statistics with the batch (unless frozen) and return it normalised."""
        return self._normalize(observations, None)

    def _step_observations(self, observations: Any, live: NDArray[np.bool_] | None) -> Any:
        # Frozen sub-envs (no autoreset) repeat their final observation: not counted again.
        return self._normalize(observations, live)

    def _normalize(self, observations: Any, rows: NDArray[np.bool_] | None) -> Any:
        backend = self._backend
        if backend is not None:  # the statistics are NumPy's: through the host and back
            observations = tree_map(backend.to_numpy, observations)
        out = self._normalizer.normalize(
            observations, update=self.update_running_mean, batched=True, rows=rows
        )
        return out if backend is None else tree_map(backend.convert, out)

    def final_observation(self, observation: Any) -> Any:
        """Normalise a terminal observation with the current statistics (no update)."""
        return self._normalizer.normalize(observation, update=False)

    def _final_observations(self, observations: list[Any]) -> list[Any]:
        # A Box space's terminal observations in one batch: frozen statistics normalise each
        # entry alone, so every row is the one final_observation() gives. The rows go straight
        # to float64, as final_observation()'s np.asarray(row, float64) takes them (not through
        # the space's dtype: a float64 row of a float32 space keeps its value).
        overridden = type(self).final_observation is not VecNormalizeObservation.final_observation
        if overridden or type(self.venv.observation_space) is not Box:
            return super()._final_observations(observations)
        batch = np.array(observations, dtype=np.float64)
        return list(self._normalizer.normalize(batch, update=False, batched=True))

    def state_dict(self) -> dict[str, Any]:
        """The observation statistics, for checkpointing."""
        return {"obs_rms": self._normalizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()``, all or nothing: every part is checked
        before any is loaded, and an error names the part."""
        self._normalizer.load_wrapper_state(state)


class VecNormalizeReward(VecResultWrapper):
    """Divide rewards by the running std of each sub-env's discounted return (``return_rms``).

    Keeps ``R = gamma * R + r`` per sub-env (reset on done and on reset), updates the shared
    ``return_rms`` with the returns of the sub-envs really stepped (not frozen ones) unless
    ``update_running_mean`` is False, and returns ``r / sqrt(return_rms.var + epsilon)`` (``r``
    itself while the returns seen have no spread, e.g. on the first step: ``return_scale``).
    A NaN or infinite return that would update the statistics, or one that would take them
    past float64's range, raises ValueError naming the sub-env, before anything changes.

    Args:
        venv: the VecEnv to wrap.
        gamma: the discount factor, in ``[0, 1]``.
        epsilon: added to the variance (> 0).
    """

    def __init__(self, venv: VecEnv, gamma: float = 0.99, epsilon: float = 1e-8) -> None:
        super().__init__(venv)
        self.gamma, self.epsilon = reward_scaling_args("VecNormalizeReward", gamma, epsilon)
        self.return_rms = RunningMeanStd(shape=())
        self.update_running_mean = True
        self._returns = np.zeros(self.num_envs, dtype=np.float64)

    _step_reads_live = True

    def _on_reset(self, seed: Any) -> None:
        self._returns[:] = 0.0

    def _rewrite_partial(self, partial: PartialStep) -> PartialStep:
        scale = return_scale(self.return_rms, self.epsilon)
        return dataclasses.replace(partial, rewards=partial.rewards / scale)

    def _on_failed_step(self, partial: PartialStep) -> None:
        # The sub-envs that stepped count their step; the failed one is not stepped. The step's
        # own error is the one that propagates: a non-finite return is left out of the
        # statistics here, and refused by the next step that updates them (its sub-env's
        # return stays non-finite until its episode ends).
        stepped = partial.stepped
        rewards = np.where(stepped, partial.rewards, 0.0)
        returns = np.where(stepped, self._returns * self.gamma, self._returns) + rewards
        with contextlib.suppress(ValueError):
            self._update(returns, rewards, stepped)
        self._restart(returns, partial.ended)

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        rewards, terminated, truncated = _on_host(
            self.venv, result.rewards, result.terminated, result.truncated
        )
        returns = self._returns * self.gamma + rewards
        self._update(returns, rewards, live)
        self._restart(returns, terminated | truncated)
        # A float scale keeps the rewards where the env put them (a device array stays one).
        scale = return_scale(self.return_rms, self.epsilon)
        return result._replace(rewards=result.rewards / scale)

    def _update(
        self, returns: NDArray[np.float64], rewards: NDArray[Any], live: NDArray[np.bool_] | None
    ) -> None:
        """Update the statistics (unless frozen) with the returns of the ``live`` sub-envs
        (None: all); a non-finite one, or one that would take the statistics past float64's
        range, raises ValueError and changes nothing."""
        if self.update_running_mean:
            update_return_stats(
                "VecNormalizeReward", self.return_rms, returns, rewards, live, vector=True
            )

    def _restart(self, returns: NDArray[np.float64], dones: NDArray[np.bool_]) -> None:
        """Keep this step's discounted returns; the finished episodes' next ones start at 0."""
        self._returns = np.where(dones, 0.0, returns)

    def state_dict(self) -> dict[str, Any]:
        """The return statistics, for checkpointing."""
        return {"return_rms": self.return_rms.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()``; an error names the wrapper and the part."""
        load_return_stats("VecNormalizeReward", self.return_rms, state)


class VecTransformObservation(VecObservationWrapper):
    """Apply ``func`` to every batch of observations (and to terminal observations).

    Args:
        venv: the VecEnv to wrap.
        func: the batch transform (also accepted as ``fn=``).
        new_observation_space: the single-env space of the transformed observations
            (None: unchanged); the batched space follows with ``batch_space``.
    """

    def __init__(
        self,
        venv: VecEnv,
        func: Callable[[Any], Any] | None = None,
        new_observation_space: Space[Any] | None = None,
        *,
        fn: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(venv)
        self.func = resolve_callable("VecTransformObservation", "func", func, "fn", fn)
        if new_observation_space is not None:
            self.observation_space = check_space(
                "VecTransformObservation", "new_observation_space", new_observation_space
            )

    def observation(self, observations: Any) -> Any:
        """Return ``func(observations)``."""
        return self.func(observations)


class VecTransformReward(VecRewardWrapper):
    """Apply ``func`` to every ``(num_envs,)`` reward array.

    Args:
        venv: the VecEnv to wrap.
        func: the reward transform (also accepted as ``fn=``).
    """

    def __init__(
        self,
        venv: VecEnv,
        func: Callable[[NDArray[np.float64]], Any] | None = None,
        *,
        fn: Callable[[NDArray[np.float64]], Any] | None = None,
    ) -> None:
        super().__init__(venv)
        self.func = resolve_callable("VecTransformReward", "func", func, "fn", fn)

    def reward(self, rewards: NDArray[np.float64]) -> Any:
        """Return ``func(rewards)``."""
        return self.func(rewards)
