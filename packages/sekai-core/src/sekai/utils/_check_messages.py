"""The longer messages of check_env: about its argument, about its calling context, and where
two rollouts first differ."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sekai.core._not_an_env import env_class_name, given, not_an_env_hint
from sekai.core.env import Env
from sekai.utils._equal import structurally_equal

__all__ = ["NONDETERMINISTIC", "STEP_FIELDS", "first_difference", "in_running_loop", "not_an_env"]

STEP_FIELDS = ("observation", "reward", "terminated", "truncated", "info")
# The WARNING of a failed determinism check; ``assert_env_conforms`` fails on it.
NONDETERMINISTIC = (
    "Two rollouts with the same seed and actions differed. If the env is intentionally "
    "stochastic beyond its seed, register it with nondeterministic=True."
)


def in_running_loop(env: Env[Any, Any], method: str) -> str:
    """Why check_env cannot go on: it was called inside a running event loop, where the env's
    sync ``method()`` cannot start its own with ``asyncio.run()``."""
    name = type(env.unwrapped).__qualname__
    return (
        "check_env() was called inside a running event loop (async code, a Jupyter notebook), "
        f"where {name}'s {method}() cannot run: it runs its coroutine with asyncio.run(), which "
        "refuses to start inside a running loop. Call check_env() from sync code, or, in async "
        "code, in a worker thread: `await asyncio.to_thread(sekai.check_env, env)` with a fresh "
        "env (that runs every check, the async ones too)."
    )


def first_difference(first: list[Any], second: list[Any]) -> str:
    """Where two determinism traces (``_rollout()``) first differ: ``"info['fill'] at step 0"``."""
    for i, (a, b) in enumerate(zip(first, second)):
        names = ("observation", "info") if i == 0 else STEP_FIELDS
        at = "after reset(seed=123)" if i == 0 else f"at step {i - 1}"
        for name, x, y in zip(names, a, b):
            if structurally_equal(x, y):
                continue
            if isinstance(x, Mapping) and isinstance(y, Mapping):
                keys = [*x, *(key for key in y if key not in x)]
                key = next(
                    k
                    for k in keys
                    if k not in x or k not in y or not structurally_equal(x[k], y[k])
                )
                return f"{name}[{key!r}] {at}"
            return f"{name} {at}"
    return (
        f"the episode ended after {len(first) - 1} steps in one and {len(second) - 1} in the other"
    )


def not_an_env(env: object) -> str:
    if env_class_name(env) is not None:  # the () forgotten
        return f"check_env expected a sekai.Env, got {given(env)}. {not_an_env_hint(env, '')}"
    got = type(env).__name__
    if isinstance(env, str):
        return f"check_env expected a sekai.Env, got str {env!r}: pass sekai.make({env!r})."
    if hasattr(env, "num_envs"):  # a VecEnv: the contract is the single env's
        return (
            f"check_env expected a sekai.Env, got {got}: check one sub-env, e.g. "
            "check_env(sekai.make(env_id)) (sekai.testing.assert_env_conforms also steps an "
            "env's native vector version)."
        )
    if hasattr(env, "possible_agents"):  # a MultiAgentEnv (or a PettingZoo env)
        return (
            f"check_env expected a sekai.Env, got {got}: it checks single-agent envs; for a "
            "multi-agent one, run PettingZoo's parallel_api_test on "
            "sekai.compat.to_pettingzoo(env)."
        )
    if type(env).__module__.partition(".")[0] == "gymnasium":
        return (
            f"check_env expected a sekai.Env, got {got}. To check a gymnasium env, convert it "
            "first with sekai.compat.from_gymnasium(env)."
        )
    return f"check_env expected a sekai.Env, got {got}."
