"""PadSequenceObservation: turn Sequence observations into fixed-size MaskedBoxes."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai._args import IntLike, check_int
from sekai.core.env import Env
from sekai.core.wrapper import ObservationWrapper
from sekai.spaces import Box, Dict, MaskedBox, Sequence, Space, Tuple

__all__ = ["PadSequenceObservation"]

_TRUNCATE = ("tail", "head", "error")


class PadSequenceObservation(ObservationWrapper[Any, Any, Any]):
    """Replace every Sequence of Box elements by a MaskedBox whose first slots hold the elements.

    Sequences may sit at top level or inside Dict/Tuple. A sequence longer than the MaskedBox
    keeps its last elements (``truncate="tail"``), its first (``"head"``) or raises (``"error"``).

    Args:
        env: the environment to wrap.
        max_length: the number of slots; defaults to each Sequence's own ``max_length``.
        truncate: ``"tail"``, ``"head"`` or ``"error"``.
    """

    def __init__(
        self, env: Env[Any, Any], max_length: IntLike | None = None, *, truncate: str = "tail"
    ) -> None:
        super().__init__(env)
        if truncate not in _TRUNCATE:
            raise ValueError(f"truncate must be 'tail', 'head' or 'error', got {truncate!r}.")
        self.max_length = (
            None
            if max_length is None
            else check_int("PadSequenceObservation", "max_length", max_length, 1)
        )
        self.truncate = truncate
        space = env.observation_space
        self._found = False
        self._plan, self.observation_space = self._build(space)
        if not self._found:
            raise TypeError(
                f"No Sequence in the observation space {space!r}; PadSequenceObservation has "
                "nothing to pad."
            )

    def _build(self, space: Space[Any]) -> tuple[Any, Space[Any]]:
        if isinstance(space, Sequence):
            feature = space.feature_space
            if not isinstance(feature, Box):
                raise TypeError(
                    "PadSequenceObservation pads Sequences of Box elements, got a Sequence of "
                    f"{type(feature).__name__}: {space!r}."
                )
            size = self.max_length if self.max_length is not None else space.max_length
            if size is None:
                raise ValueError(
                    "PadSequenceObservation needs max_length (the Sequence has no max_length)."
                )
            self._found = True
            masked = MaskedBox(
                feature.low, feature.high, shape=feature.shape, max_size=size, dtype=feature.dtype
            )
            return ("seq", (masked, feature, space.stack)), masked
        if isinstance(space, MaskedBox):
            return None, space
        if isinstance(space, Dict):
            children = {key: self._build(sub) for key, sub in space.items()}
            if all(plan is None for plan, _ in children.values()):
                return None, space
            plan = ("dict", {key: plan for key, (plan, _) in children.items()})
            return plan, Dict({key: sub for key, (_, sub) in children.items()})
        if isinstance(space, Tuple):
            items = [self._build(sub) for sub in space.spaces]
            if all(plan is None for plan, _ in items):
                return None, space
            return ("tuple", [plan for plan, _ in items]), Tuple([sub for _, sub in items])
        return None, space

    def _rows(self, masked: MaskedBox, feature: Box, stacked: bool, x: Any) -> Any:
        if stacked:
            rows = np.asarray(x, dtype=feature.dtype).reshape(-1, *feature.shape)
        elif len(x):
            rows = np.stack([np.asarray(e, dtype=feature.dtype) for e in x])
        else:
            rows = np.empty((0, *feature.shape), dtype=feature.dtype)
        size = masked.max_size
        if len(rows) > size:
            if self.truncate == "error":
                raise ValueError(f"Sequence of length {len(rows)} exceeds max_length {size}.")
            rows = rows[-size:] if self.truncate == "tail" else rows[:size]
        return masked.pack(rows)

    def _apply(self, plan: Any, x: Any) -> Any:
        if plan is None:
            return x
        kind, payload = plan
        if kind == "seq":
            masked, feature, stacked = payload
            return self._rows(masked, feature, stacked, x)
        if kind == "dict":
            return {key: self._apply(sub, x[key]) for key, sub in payload.items()}
        return tuple(self._apply(sub, item) for sub, item in zip(payload, x))

    def observation(self, observation: Any) -> Any:
        """Return the observation with every Sequence padded into its MaskedBox."""
        return self._apply(self._plan, observation)
