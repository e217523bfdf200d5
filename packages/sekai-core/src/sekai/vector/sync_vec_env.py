"""SyncVecEnv: steps the sub-envs one after another in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sekai.core.env import Env
from sekai.vector._in_process import InProcessVecEnv
from sekai.vector.result import VecResetResult, VecStepResult

__all__ = ["SyncVecEnv"]


class SyncVecEnv(InProcessVecEnv):
    """Runs ``num_envs`` sub-envs one after another in this process.

    Use it for fast envs without a native version, and for debugging.

    Args:
        env_fns: zero-argument callables, one per sub-env, that build the sub-envs.
        autoreset: reset a finished sub-env within the same ``step()`` (default); with False a
            finished sub-env is frozen until the next ``reset()``.

    Example:
        >>> vec = sekai.SyncVecEnv([lambda: sekai.make("CartPole-v1") for _ in range(4)])
        >>> vec, len(vec)
        (SyncVecEnv(num_envs=4), 4)
    """

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: bool = True
    ) -> None:
        super().__init__(env_fns, autoreset=autoreset)

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        seeds, per_env_options = self._reset_plan(seed, options)
        results: list[Any] = []
        for sub, sub_seed, sub_options in zip(self._subenvs, seeds, per_env_options):
            try:
                results.append(sub.reset(sub_seed, sub_options))
            except Exception as exc:  # raised after the others ran (rule 9)
                results.append(exc)
        return self._reset_from(results, options)

    def step(self, actions: Any) -> VecStepResult[Any]:
        per_env = self._per_env_actions(actions)
        results: list[Any] = []
        append = results.append
        failed = False
        try:
            for sub, action in zip(self._subenvs, per_env):
                try:
                    append(sub.step(action))
                except Exception as exc:  # raised after the others ran (rule 9)
                    append(exc)
                    failed = True
        except BaseException as interrupt:  # Ctrl-C: record the sub-envs that stepped
            stepped = [
                (index, r.reward, r.terminated, r.truncated)
                for index, r in enumerate(results)
                if not isinstance(r, BaseException)
            ]
            raise self._failed_step(interrupt, stepped, lambda i: results[i].info) from None
        return self._step_from(results, failed)
