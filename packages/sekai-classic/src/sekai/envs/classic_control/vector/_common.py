"""Helpers and the base class shared by the native classic-control vector envs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.core.env import Env
from sekai.envs.classic_control._common import reset_bounds
from sekai.envs.classic_control.vector._pow import pow2
from sekai.vector import NativeVecEnv

__all__ = ["ClassicVecEnv", "keep_frozen", "pow2", "uniform_rows"]


class ClassicVecEnv(NativeVecEnv):
    """A native vector env with the spaces of one single env, observing ``state`` as float32.

    Subclasses pass a single env built with their keyword arguments, copy the constants they
    need from it, and override ``_observe`` when the observation is not the state itself.
    """

    state: npt.NDArray[np.float64]

    def __init__(
        self,
        num_envs: int,
        single: Env[Any, Any],
        *,
        autoreset: bool,
        max_episode_steps: int | None,
    ) -> None:
        super().__init__(
            num_envs,
            single.observation_space,
            single.action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )

    def _observe(self) -> npt.NDArray[np.float32]:
        return self.state.astype(np.float32)


def uniform_rows(
    rng: np.random.Generator,
    options: Sequence[dict[str, Any] | None],
    default_low: float,
    default_high: float,
    width: int,
) -> npt.NDArray[np.float64]:
    """``len(options)`` rows of ``width`` uniform draws within each row's ``low``/``high`` options.

    Row ``i`` takes the next ``width`` draws of ``rng``, so resetting sub-envs one row at a time
    draws exactly what the single env's ``uniform(low, high, size=(width,))`` would.
    """
    k = len(options)
    if not any(options):  # no options (None or {}): the defaults for every row
        return rng.uniform(low=default_low, high=default_high, size=(k, width))
    bounds = np.array([reset_bounds(option, default_low, default_high) for option in options])
    return rng.uniform(low=bounds[:, :1], high=bounds[:, 1:], size=(k, width))


def keep_frozen(
    frozen: npt.NDArray[np.bool_], new: npt.NDArray[Any], old: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """``new`` with the rows of frozen sub-envs put back to ``old`` (they are not advanced)."""
    if frozen.any():
        new[frozen] = old[frozen]
    return new
