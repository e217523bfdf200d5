"""Building an env from its spec: entry point, time limit and additional wrappers."""

from __future__ import annotations

import dataclasses
import numbers
from typing import TYPE_CHECKING, Any

from sekai.core._render_habit import reject_render_mode
from sekai.core.env import Env
from sekai.registry.entry_points import load_entry_point

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec

__all__ = ["build_env", "effective_steps"]


def effective_steps(spec: EnvSpec, max_episode_steps: int | None) -> int | None:
    """``make()``'s rule: None keeps the registered limit, -1 removes it, an int overrides it."""
    if max_episode_steps is None:
        return spec.max_episode_steps
    if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, numbers.Integral):
        raise TypeError(
            f"max_episode_steps must be an int or None, got {type(max_episode_steps).__name__}."
        )
    if max_episode_steps == -1:
        return None
    if max_episode_steps < 1:
        raise ValueError(
            "max_episode_steps must be >= 1, or -1 to remove the time limit, "
            f"got {max_episode_steps}."
        )
    return int(max_episode_steps)


def build_env(
    spec: EnvSpec, max_episode_steps: int | None, kwargs: dict[str, Any]
) -> Env[Any, Any]:
    """Build ``spec``'s env: ``kwargs`` over the registered ones, time limit, wrappers."""
    if spec.entry_point is None:
        raise ValueError(
            f"{spec.id} has no entry_point to build it from (EnvSpec.to_json() leaves callable "
            "entry points out); pass an EnvSpec with an entry point, or make() a registered ID."
        )
    steps = effective_steps(spec, max_episode_steps)
    merged = {**spec.kwargs, **kwargs}
    factory = load_entry_point(spec.entry_point)
    reject_render_mode(spec.id, factory, merged)
    env: Env[Any, Any] = factory(**merged)
    if not isinstance(env, Env):
        raise TypeError(
            f"{spec.id}: its entry point {spec.entry_point!r} returned "
            f"{type(env).__name__}, not a sekai.Env. To register a gymnasium env, make the "
            "entry point return sekai.compat.from_gymnasium(env)."
        )
    env.spec = dataclasses.replace(spec, kwargs=merged, max_episode_steps=steps)
    if steps is not None:
        from sekai.wrappers.time_limit import TimeLimit

        env = TimeLimit(env, steps)
    for wrapper in spec.additional_wrappers:
        wrapper_cls = load_entry_point(
            wrapper.entry_point, f"entry_point of wrapper {wrapper.name!r}"
        )
        env = wrapper_cls(env, **wrapper.kwargs)
    return env
