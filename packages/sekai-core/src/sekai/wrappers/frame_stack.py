"""FrameStackObservation: observe the last num_stack observations stacked on a new axis."""

from __future__ import annotations

from collections import deque
from typing import Any

from sekai._args import IntLike, check_int
from sekai.core._snapshot import snapshot
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.spaces import batch_space, concatenate, zero_sample
from sekai.wrappers.autoreset import warn_if_around_autoreset

__all__ = ["FrameStackObservation"]


class FrameStackObservation(ResultWrapper[Any, Any, Any, Any]):
    """Stack the last ``num_stack`` observations, oldest first, in ``batch_space(inner, n)``.

    Works for any batchable space: Dict observations stack leaf by leaf, a MaskedBox keeps its
    values and mask with a leading axis, a Discrete becomes a MultiDiscrete. After a reset the
    stack is filled with the first observation (``padding="reset"``) or with
    ``zero_sample(inner)`` followed by the first observation (``padding="zeros"``).

    Args:
        env: the environment to wrap.
        num_stack: how many observations to stack (>= 1).
        padding: ``"reset"`` or ``"zeros"``.
    """

    def __init__(self, env: Env[Any, Any], num_stack: IntLike, padding: str = "reset") -> None:
        super().__init__(env)
        self.num_stack = check_int("FrameStackObservation", "num_stack", num_stack, 1)
        if not isinstance(padding, str) or padding not in ("reset", "zeros"):
            raise ValueError(f"padding must be 'reset' or 'zeros', got {padding!r}.")
        self.padding = padding
        space = env.observation_space
        try:
            self.observation_space = batch_space(space, self.num_stack)
        except (NotImplementedError, TypeError) as exc:
            raise TypeError(
                f"FrameStackObservation cannot stack observations of {space!r}: {exc}"
            ) from exc
        self._inner_space = space
        # Resolve the singledispatch implementation once: this runs on every step.
        self._concatenate = concatenate.dispatch(type(space))
        self._frames: deque[Any] = deque(maxlen=self.num_stack)
        warn_if_around_autoreset(self)

    def _stacked(self) -> Any:
        return self._concatenate(self._inner_space, list(self._frames))

    def _reset_result(self, result: ResetResult[Any]) -> ResetResult[Any]:
        self._frames.clear()
        # Frames are kept as snapshots: an env may write each observation into one buffer.
        first = snapshot(result.observation)
        if self.padding == "zeros":
            zero = zero_sample(self._inner_space)
            self._frames.extend(zero for _ in range(self.num_stack - 1))
            self._frames.append(first)
        else:
            self._frames.extend(first for _ in range(self.num_stack))
        return ResetResult(self._stacked(), result.info)

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        self._frames.append(snapshot(result.observation))
        return StepResult(
            self._stacked(), result.reward, result.terminated, result.truncated, result.info
        )
