"""SekaiToGymnasiumVector: a sekai VecEnv seen as a gymnasium VectorEnv (same-step autoreset).

This module imports gymnasium at the top: it is imported only by ``to_gymnasium_vector()`` and
the lazy ``sekai.compat.SekaiToGymnasiumVector`` attribute, after ``require_gymnasium()``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from sekai.compat._episode import with_episode_dict
from sekai.compat._spaces import action_converter, space_to_gymnasium
from sekai.vector.vec_env import VecEnv

__all__ = ["SekaiToGymnasiumVector"]

# The keys sekai's autoreset adds to a finished sub-env's info.
_FINAL_OBSERVATION = "final_observation"
_FINAL_INFO = "final_info"
_RESET_INFO = "reset_info"
_AUTORESET_KEYS = (_FINAL_OBSERVATION, _FINAL_INFO, _RESET_INFO)


class SekaiToGymnasiumVector(gymnasium.vector.VectorEnv[Any, Any, Any]):
    """A sekai ``VecEnv`` as a gymnasium ``VectorEnv``; build it with ``to_gymnasium_vector()``.

    ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``, sekai's convention. The
    single spaces are converted with ``space_to_gymnasium`` and the batched ones built from
    them with gymnasium's ``batch_space``. Infos are gymnasium's dict of arrays with ``_key``
    masks, laid out as gymnasium's own ``SyncVectorEnv`` does in same-step mode: for a sub-env
    whose episode ended, ``infos["final_obs"][i]`` and ``infos["final_info"]`` hold the
    terminal observation and info, and the top-level keys hold the reset info (plus keys that
    vector wrappers such as ``VecRecordEpisodeStatistics`` added after the step, e.g.
    ``"episode"``). An ``"episode"`` EpisodeStats becomes the ``{"r", "l", "t"}`` dict of
    gymnasium's RecordEpisodeStatistics (as ``to_sb3`` gives it), so ``infos["episode"]["r"]``
    is an array masked by ``infos["_episode"]``. Seeds go to the sekai VecEnv unchanged: an
    int seed spawns independent child seeds (sekai's rule, not gymnasium's ``seed + i``); pass
    a list to choose each one.

    Attributes:
        sekai_vec: the wrapped sekai VecEnv.
    """

    def __init__(self, vec: VecEnv) -> None:
        if not isinstance(vec, VecEnv):
            raise TypeError(
                f"to_gymnasium_vector() expects a sekai VecEnv, got {type(vec).__name__}. For "
                "a single sekai.Env, use to_gymnasium()."
            )
        if not vec.autoreset:
            raise ValueError(
                "to_gymnasium_vector() needs a VecEnv with autoreset=True (gymnasium's "
                "same-step mode); sekai's frozen sub-envs have no gymnasium equivalent."
            )
        self.sekai_vec = vec
        self.num_envs = vec.num_envs
        self.single_observation_space = space_to_gymnasium(vec.observation_space)
        self.single_action_space = space_to_gymnasium(vec.action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # gymnasium's form of a MaskedBox lets empty rows hold any values; sekai's does not.
        self._convert_actions = action_converter(vec.action_space)
        self.metadata = {**vec.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}
        self.render_mode = None

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env; return the batched observations and the infos dict."""
        result = self.sekai_vec.reset(seed=seed, options=options)
        infos: dict[str, Any] = {}
        for i, info in enumerate(result.infos):
            infos = self._add_info(infos, with_episode_dict(info), i)
        return result.observations, infos

    def step(
        self, actions: Any
    ) -> tuple[Any, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """Step every sub-env; finished ones are reset within the step (same-step autoreset).

        A MaskedBox action (or part) reaches the sub-envs with its empty rows set to the fill
        value, as through ``to_gymnasium``."""
        if self._convert_actions is not None:
            actions = self._convert_actions(actions)
        result = self.sekai_vec.step(actions)
        infos: dict[str, Any] = {}
        for i, info in enumerate(result.infos):
            if _FINAL_OBSERVATION in info:
                final_info = info.get(_FINAL_INFO, {})
                infos = self._add_info(
                    infos,
                    {
                        "final_obs": info[_FINAL_OBSERVATION],
                        "final_info": with_episode_dict(final_info),
                    },
                    i,
                )
                current = dict(info.get(_RESET_INFO, {}))
                for key, value in info.items():
                    if key not in _AUTORESET_KEYS and key not in final_info:
                        current[key] = value  # added after the step, e.g. by a vector wrapper
                info = current
            infos = self._add_info(infos, with_episode_dict(info), i)
        return result.observations, result.rewards, result.terminated, result.truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sekai VecEnv."""
        self.sekai_vec.close()

    def render(self) -> None:
        """Not supported: sekai envs have no render(); use sekai.rendering.VecRecordFrames."""
        return None

    # -- attributes of the sub-envs (the API of gymnasium's SyncVectorEnv) ------------------

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` of every sub-env (or read it if it is not callable)."""
        return tuple(self.sekai_vec.call(name, *args, **kwargs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Read attribute ``name`` of every sub-env."""
        return tuple(self.sekai_vec.get_attr(name))

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set ``name``: a list or tuple is one value per sub-env and must hold ``num_envs``
        values (gymnasium's rule), anything else is one value for all.

        Raises:
            ValueError: ``values`` is a list or tuple whose length is not ``num_envs``.
        """
        if not isinstance(values, (list, tuple)):
            self.sekai_vec.set_attr(name, values)
            return
        if len(values) != self.num_envs:
            raise ValueError(
                f"set_attr({name!r}, values) got a {type(values).__name__} of {len(values)} "
                f"values for {self.num_envs} sub-envs: a list or tuple gives one value per "
                f"sub-env (gymnasium's rule), so it needs exactly {self.num_envs}; to give "
                f"every sub-env the same list, pass [value] * {self.num_envs}."
            )
        self.sekai_vec.set_attr(name, list(values))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sekai_vec!r})"
