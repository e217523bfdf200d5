"""ActionMaskObservation: put the env's current action mask into the observation."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.core.wrapper import ObservationWrapper
from sekai.spaces import Dict, MaskedBox
from sekai.utils.action_mask import (
    action_mask_space,
    flatten_action_mask,
    get_action_mask,
    supports_action_mask,
)

__all__ = ["ActionMaskObservation"]


class ActionMaskObservation(ObservationWrapper[dict[str, Any], Any, Any]):
    """Add the flattened action mask (int8 ``MultiBinary``) to every observation.

    A Dict observation gains the key ``key`` (a key it already has raises ``KeyError``); any
    other observation becomes ``{"observation": obs, key: mask}`` (so ``key="observation"``
    raises ``KeyError``). The mask is read with ``action_mask()`` after each
    reset and step, flattened with ``flatten_action_mask``.

    Args:
        env: an env (or wrapper stack) with an ``action_mask()`` method.
        key: the observation key of the mask.
    """

    def __init__(self, env: Env[Any, Any], *, key: str = "action_mask") -> None:
        super().__init__(env)
        if not supports_action_mask(env):
            raise TypeError(f"{env} has no action_mask() method to read the mask from.")
        self.key = key
        mask_space = action_mask_space(env.action_space)
        space = env.observation_space
        self._is_dict = isinstance(space, Dict) and not isinstance(space, MaskedBox)
        if self._is_dict:
            assert isinstance(space, Dict)
            if key in space.spaces:
                raise KeyError(
                    f"ActionMaskObservation cannot add key {key!r}: the observation space "
                    "already has it. Pass another key."
                )
            self.observation_space = Dict({**space.spaces, key: mask_space})
        else:
            if key == "observation":
                raise KeyError(
                    f"ActionMaskObservation cannot add key {key!r}: the observation is "
                    "wrapped under 'observation'. Pass another key."
                )
            self.observation_space = Dict({"observation": space, key: mask_space})

    def _mask(self) -> np.ndarray[Any, np.dtype[np.int8]]:
        mask = get_action_mask(self.env)
        return flatten_action_mask(self.env.action_space, mask).astype(np.int8)

    def observation(self, observation: Any) -> dict[str, Any]:
        """Return the observation with the current mask added."""
        if self._is_dict:
            return {**observation, self.key: self._mask()}
        return {"observation": observation, self.key: self._mask()}
