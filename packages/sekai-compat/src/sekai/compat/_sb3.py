"""The Stable-Baselines3 bridge: to_sb3 turns any sekai VecEnv into an SB3 VecEnv."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.compat._optional import require_sb3

if TYPE_CHECKING:
    from sekai.compat._sekai_to_sb3 import SekaiToSB3
    from sekai.vector.vec_env import VecEnv

__all__ = ["to_sb3"]


def to_sb3(vec: VecEnv) -> SekaiToSB3:
    """Wrap a sekai ``VecEnv`` (native, sync, async, proc, wrapped or not) as an SB3 ``VecEnv``.

    SB3 then trains on it directly, at the backend's speed: a native finance env steps all its
    sub-envs with array operations instead of SB3's ``DummyVecEnv`` looping over single envs.
    Infos follow SB3's conventions (``terminal_observation``, ``TimeLimit.truncated``), and
    ``action_masks()`` feeds sb3-contrib's MaskablePPO from ``vec.call("action_mask")``.

    Example:
        >>> from stable_baselines3 import PPO
        >>> venv = to_sb3(sekai.make_vec("Portfolio-v0", 64))
        >>> model = PPO("MultiInputPolicy", venv, n_steps=64, batch_size=256).learn(8192)

    Raises:
        sekai.MissingDependency: stable-baselines3 is not installed
            (``pip install stable-baselines3``).
        TypeError: ``vec`` is not a sekai VecEnv, or a space has no gymnasium equivalent.
        ValueError: ``vec`` was built with ``autoreset=False``, or a space is one SB3's
            policies would misread: an action space that is a Discrete or MultiDiscrete with a
            non-zero ``start`` (SB3 picks indices from 0), a MultiDiscrete with a
            multi-dimensional ``nvec`` or a multi-dimensional MultiBinary; an observation space
            (or a Dict entry of one) that is a Discrete or MultiDiscrete with a non-zero
            ``start`` (SB3 one-hot encodes indices from 0) or a MultiDiscrete with a
            multi-dimensional ``nvec`` (SB3's preprocessing fails on it); a Dict observation
            space with a key torch's ModuleDict refuses (``"values"``, as a MaskedBox has).
    """
    require_sb3("to_sb3()")
    from sekai.compat._sekai_to_sb3 import SekaiToSB3

    return SekaiToSB3(vec)
