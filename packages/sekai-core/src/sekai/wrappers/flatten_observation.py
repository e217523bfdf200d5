"""FlattenObservation: turn any flattenable observation into a 1-D float32 vector."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from numpy.typing import NDArray

from sekai.core._async import awaitable
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ObservationWrapper
from sekai.spaces import Sequence, Space, flatten, flatten_space
from sekai.spaces._kinds import fold_leaves

__all__ = ["FlattenObservation"]


def _holds_sequence(space: Space[Any]) -> bool:
    """Whether ``space`` is a Sequence or holds one in a Dict or Tuple."""
    return fold_leaves(space, lambda leaf: isinstance(leaf, Sequence), any)


class FlattenObservation(ObservationWrapper[NDArray[Any], Any, Any]):
    """Observe ``flatten(inner_space, obs)`` in the space ``flatten_space(inner_space)``.

    Raises:
        TypeError: the observation space is not flattenable (e.g. contains a Sequence).
    """

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not space.is_flattenable:
            advice = (
                " Pad Sequence observations into fixed-size MaskedBoxes first with "
                "PadSequenceObservation."
                if _holds_sequence(space)
                else ""
            )
            raise TypeError(
                f"FlattenObservation cannot flatten observations of {space!r}: the space is not "
                f"flattenable.{advice}"
            )
        self._inner_space = space
        # Resolve the singledispatch implementation once: this runs on every step.
        self._flatten = flatten.dispatch(type(space))
        # step() calls flatten directly unless a subclass overrides observation() (decided
        # once, here: an override must run on every path).
        self._step_observation: Callable[[Any], NDArray[Any]] = (
            partial(self._flatten, space)
            if type(self).observation is FlattenObservation.observation
            else self.observation
        )
        self.observation_space = flatten_space(space)

    def observation(self, observation: Any) -> NDArray[Any]:
        """Return the flattened observation."""
        return self._flatten(self._inner_space, observation)

    # step() runs on every transition: it skips the observation() call where it can.
    def step(self, action: Any) -> StepResult[NDArray[Any]]:
        r = self.env.step(action)
        obs = self._step_observation(r.observation)
        return StepResult(obs, r.reward, r.terminated, r.truncated, r.info)

    async def async_step(self, action: Any) -> StepResult[NDArray[Any]]:
        r = await awaitable(self.env.async_step(action), self.env, "async_step")
        obs = self._step_observation(r.observation)
        return StepResult(obs, r.reward, r.terminated, r.truncated, r.info)
