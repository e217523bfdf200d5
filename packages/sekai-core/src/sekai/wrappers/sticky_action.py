"""StickyAction: with some probability, repeat the previous action instead of the new one."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sekai._box_actions import checked_action
from sekai.core._rng import SeedLike, make_seed_sequence, np_random
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.wrappers.autoreset import warn_if_around_autoreset

__all__ = ["StickyAction"]


def _spawn_child(rng: np.random.Generator) -> np.random.Generator:
    """An independent child of ``rng`` from its SeedSequence (draws nothing from ``rng``)."""
    if hasattr(rng, "spawn"):  # numpy >= 1.25
        return rng.spawn(1)[0]
    bit_generator = rng.bit_generator
    seed_seq: Any = getattr(bit_generator, "seed_seq", None) or getattr(
        bit_generator, "_seed_seq", None
    )
    return np.random.Generator(type(bit_generator)(seed_seq.spawn(1)[0]))


class StickyAction(ResultWrapper[Any, Any, Any, Any]):
    """Repeat the previously executed action with probability ``repeat_action_probability``.

    Never repeats on the first step after a reset. The wrapper draws from a private generator,
    never from the env's stream: ``reset(seed=s)`` reseeds it with
    ``make_seed_sequence(s, 2)[1]``, a Generator seed gives it an independent child of that
    Generator, and ``seed=None`` leaves it unchanged.

    An action the env would refuse raises ``InvalidAction`` before any draw, whether or not the
    previous action would have been repeated. A step that raises (refused here or by the env)
    uses no draw: the next step uses the draw it would have used, so the trajectory is the one
    without the refused call.

    Args:
        env: the environment to wrap.
        repeat_action_probability: the probability of repeating, in ``[0, 1)``.
    """

    def __init__(self, env: Env[Any, Any], repeat_action_probability: float) -> None:
        super().__init__(env)
        if isinstance(repeat_action_probability, bool) or not isinstance(
            repeat_action_probability, (int, float, np.integer, np.floating)
        ):
            raise TypeError(
                "repeat_action_probability must be a number, "
                f"got {type(repeat_action_probability).__name__}."
            )
        if not 0.0 <= repeat_action_probability < 1.0:
            raise ValueError(
                "repeat_action_probability must be in [0, 1), "
                f"got {float(repeat_action_probability)}."
            )
        self.repeat_action_probability: float = float(repeat_action_probability)
        self._sticky_rng: np.random.Generator = np_random(None)[0]
        self._last_action: Any = None
        self._chosen: Any = None
        self._has_last: bool = False
        # The draw of a step that has not succeeded yet, used again by the next step.
        self._draw: float | None = None
        warn_if_around_autoreset(self)

    def _on_reset(self, seed: SeedLike) -> None:
        self._last_action, self._has_last = None, False
        if seed is None:
            return
        self._draw = None
        if isinstance(seed, np.random.Generator):
            self._sticky_rng = _spawn_child(seed)
        else:
            self._sticky_rng = np_random(make_seed_sequence(seed, 2)[1])[0]

    def _step_action(self, action: Any) -> Any:
        checked_action(action, self.action_space)
        if self._has_last:
            draw = self._draw
            if draw is None:
                draw = self._draw = self._sticky_rng.random()
            if draw < self.repeat_action_probability:
                self._chosen = self._last_action
                return self._last_action
        self._chosen = copy.deepcopy(action)
        return action

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        # Kept only once the inner env took it: an action it refused is never repeated, and
        # the draw is used up only by a step that succeeded.
        self._last_action, self._has_last, self._draw = self._chosen, True, None
        return result
