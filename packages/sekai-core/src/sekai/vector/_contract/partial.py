"""What a vector step that raised still did (rule 9): the sub-envs that stepped, and how."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["PartialStep", "Stepped"]

# (sub-env index, reward, terminated, truncated) of a sub-env whose step succeeded.
Stepped = tuple[int, Any, bool, bool]


@dataclasses.dataclass(frozen=True)
class PartialStep:
    """The sub-envs that stepped in a vector step that failed elsewhere, and their results.

    The call raised, so its observations and infos are lost; what the bookkeeping of the
    vector wrappers needs (returns, lengths, episode ends) is kept here.

    Attributes:
        stepped: the sub-envs that really stepped (frozen sub-envs did not).
        rewards: their rewards (0 elsewhere; NaN where a reward was not a number).
        terminated: their terminated flags (False elsewhere).
        truncated: their truncated flags (False elsewhere).
    """

    stepped: NDArray[np.bool_]
    rewards: NDArray[np.float64]
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]

    @property
    def ended(self) -> NDArray[np.bool_]:
        """The sub-envs whose episode ended in the step."""
        return self.stepped & (self.terminated | self.truncated)

    @classmethod
    def of(
        cls, num_envs: int, stepped: Iterable[Stepped], frozen: NDArray[np.bool_] | None
    ) -> PartialStep:
        """Collect ``stepped``, leaving out the sub-envs ``frozen`` before the step (their
        frozen results repeat an episode end already recorded)."""
        mask = np.zeros(num_envs, dtype=bool)
        rewards = np.zeros(num_envs, dtype=np.float64)
        terminated = np.zeros(num_envs, dtype=bool)
        truncated = np.zeros(num_envs, dtype=bool)
        for index, reward, term, trunc in stepped:
            mask[index], terminated[index], truncated[index] = True, bool(term), bool(trunc)
            try:
                rewards[index] = reward
            except (TypeError, ValueError):  # the step's own error is the one raised
                rewards[index] = np.nan
        if frozen is not None:
            mask &= ~frozen
        return cls(mask, rewards, terminated & mask, truncated & mask)
