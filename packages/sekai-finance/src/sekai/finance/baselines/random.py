"""RandomPolicy: uniform actions from the action space (from the mask when there is one)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._checks import check_seed
from sekai.finance.baselines._evaluate import BaselinePolicy, is_batch
from sekai.spaces import Box, Discrete, MultiDiscrete

__all__ = ["RandomPolicy"]


class RandomPolicy(BaselinePolicy):
    """Uniform random actions drawn from its own generator.

    Box: uniform between the bounds, an infinite one standing in as a unit step beyond the
    other (``[low, max(low + 1, 1)]`` with no upper bound, ``[-1, 1]`` with neither);
    Discrete / MultiDiscrete: uniform integers, among the allowed ones when the env defines
    ``action_mask()``.

    Args:
        seed: seed of the policy's generator, an int >= 0 (None: fresh OS entropy at every
            ``reset()``).
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = None if seed is None else check_seed("seed", seed, none_ok=True)
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Restart the generator from ``seed`` (``evaluate`` calls it first, so the same
        arguments give the same numbers)."""
        self.rng = np.random.default_rng(self.seed)

    def _sample(self, space: Any, count: int, mask: Any) -> np.ndarray:
        rng = self.rng
        if isinstance(space, Box):
            # an infinite bound stands in as -1 / 1, or one unit beyond a finite bound past that
            finite_low, finite_high = np.isfinite(space.low), np.isfinite(space.high)
            low = np.where(finite_low, space.low, np.minimum(space.high - 1.0, -1.0))
            high = np.where(finite_high, space.high, np.maximum(space.low + 1.0, 1.0))
            return rng.uniform(low, high, (count, *space.shape)).astype(space.dtype)
        if isinstance(space, Discrete):
            if mask is None:
                return space.start + rng.integers(0, space.n, count)
            allowed = np.asarray(mask, dtype=bool).reshape(count, space.n)
            return space.start + _choose(rng, allowed)
        if isinstance(space, MultiDiscrete):
            nvec = np.asarray(space.nvec).reshape(-1)
            if mask is None:
                draws = rng.integers(0, nvec, (count, nvec.size))
            else:
                rows = np.asarray(mask, dtype=bool).reshape(count, nvec.size, -1)
                draws = np.stack([_choose(rng, rows[:, i]) for i in range(nvec.size)], axis=1)
            shaped = draws.reshape(count, *space.nvec.shape)
            return (np.asarray(space.start) + shaped).astype(space.dtype)
        raise TypeError(f"RandomPolicy cannot sample {space!r}.")

    def __call__(self, observation: Any, env: Any) -> Any:
        """A random action for one env, or a batch for a vector env."""
        space = env.action_space
        if is_batch(env):
            mask = None
            if _has_mask(env):
                mask = np.stack([_as_array(space, m) for m in env.call("action_mask")])
            return self._sample(space, env.num_envs, mask)
        mask = env.get_attr("action_mask")() if env.has_attr("action_mask") else None
        action = self._sample(space, 1, None if mask is None else _as_array(space, mask))[0]
        return int(action) if isinstance(space, Discrete) else action

    def __repr__(self) -> str:
        return f"RandomPolicy({self.seed!r})"


def _as_array(space: Any, mask: Any) -> np.ndarray:
    """A mask as one array: MultiDiscrete's tuple form padded to ``(len(nvec), max(nvec))``."""
    if isinstance(space, MultiDiscrete) and isinstance(mask, tuple):
        nvec = np.asarray(space.nvec).reshape(-1)
        padded = np.zeros((nvec.size, int(nvec.max())), dtype=bool)
        for i, entry in enumerate(mask):
            row = np.asarray(entry, dtype=bool).reshape(-1)
            padded[i, : row.size] = row
        return padded
    return np.asarray(mask)


def _has_mask(env: Any) -> bool:
    try:
        return callable(getattr(env.unwrapped, "action_mask", None)) or bool(
            env.get_attr("action_mask")
        )
    except AttributeError:
        return False


def _choose(rng: np.random.Generator, allowed: np.ndarray) -> np.ndarray:
    """One allowed index per row, uniformly."""
    weights = allowed.astype(np.float64)
    cumulative = np.cumsum(weights, axis=1)
    draws = rng.random(allowed.shape[0]) * cumulative[:, -1]
    return (cumulative <= draws[:, None]).sum(axis=1)  # type: ignore[no-any-return]
