"""SekaiToGymnasium: a sekai env (or wrapper stack) seen as a gymnasium.Env.

This module imports gymnasium at the top: it is imported only by ``to_gymnasium()`` and the
lazy ``sekai.compat.SekaiToGymnasium`` attribute, after ``require_gymnasium()`` succeeded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from numpy.typing import NDArray

from sekai.compat._episode import with_episode_dict
from sekai.compat._spaces import action_converter, space_to_gymnasium
from sekai.core._render_habit import renderer_of
from sekai.core.env import Env
from sekai.rendering.recorder import check_renderer
from sekai.rendering.renderer import Renderer, RenderFrame
from sekai.utils.action_mask import flatten_action_mask, get_action_mask, supports_action_mask

__all__ = ["RENDER_MODES", "SekaiToGymnasium"]

RENDER_MODES = ("rgb_array", "ansi")

_HUMAN = (
    "sekai renderers return frames instead of opening a window; to watch them, wrap the "
    "converted env in gymnasium.wrappers.HumanRendering (needs pygame)."
)


def _render_mode(
    env: Env[Any, Any], renderer: Renderer | None, render_mode: str | None
) -> str | None:
    """The render mode for ``renderer``: checked, or its default (core.md §15)."""
    if renderer is None:
        if render_mode is not None:
            raise ValueError(
                f"to_gymnasium() got render_mode={render_mode!r} but no renderer, so nothing "
                f"could render. {_pass_a_renderer(env, text=render_mode == 'ansi')}"
            )
        return None
    check_renderer(renderer, "to_gymnasium")
    if render_mode is not None and render_mode not in RENDER_MODES:
        hint = f" {_HUMAN}" if render_mode == "human" else ""
        raise ValueError(
            f"to_gymnasium() supports render_mode 'rgb_array' (image renderers) and 'ansi' "
            f"(text renderers), got {render_mode!r}.{hint}"
        )
    # A renderer may declare its frames with a render_mode attribute, or, as
    # GymnasiumRenderer (whose frames are those of the gymnasium env it draws), for each env
    # with _render_mode_of(env). Images are the default.
    mode_of = getattr(renderer, "_render_mode_of", None)
    declared = mode_of(env) if callable(mode_of) else getattr(renderer, "render_mode", None)
    declared = declared if declared in RENDER_MODES else None
    if render_mode is None:
        return declared or "rgb_array"
    if declared is not None and render_mode != declared:
        raise ValueError(
            f"to_gymnasium() got render_mode={render_mode!r}, but {type(renderer).__name__} "
            f"renders {declared!r} frames; leave render_mode out or pass {declared!r}."
        )
    return render_mode


def _pass_a_renderer(env: Env[Any, Any], *, text: bool) -> str:
    """How to pass a renderer of ``env`` (a text one for ``text``), named when it has one."""
    found = renderer_of(type(env.unwrapped), text=text)
    if found is None:
        kind = "a text renderer (its render(env) returns str)" if text else "a renderer"
        return (
            f"Pass {kind} of this env, a sekai.rendering.Renderer: to_gymnasium(env, renderer=...)."
        )
    name = found.rsplit(" ", 1)[1]
    return f"Pass its renderer: {found}; to_gymnasium(env, renderer={name}())."


class SekaiToGymnasium(gymnasium.Env[Any, Any]):
    """A sekai env (any wrapper stack) as a ``gymnasium.Env``; build it with ``to_gymnasium()``.

    Spaces are converted with ``space_to_gymnasium``; ``reset()`` and ``step()`` return
    gymnasium's tuples (an ``"episode"`` EpisodeStats in an info as gymnasium's ``{"r", "l",
    "t"}`` dict); seeds and options go to the sekai env's ``reset()`` unchanged, and the
    gymnasium-side generator (``np_random``) is the sekai env's ``rng``. ``action_masks()``
    exists when the sekai env has ``action_mask()`` and returns the mask flattened to one bool
    array (the layout sb3-contrib's MaskablePPO expects). ``get_wrapper_attr`` /
    ``set_wrapper_attr`` reach the sekai stack through ``get_attr`` / ``set_attr``.

    Attributes:
        sekai_env: the wrapped sekai env.
        renderer: the renderer behind ``render()``, or None.
    """

    def __init__(
        self,
        env: Env[Any, Any],
        renderer: Renderer | None = None,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(env, Env):
            hint = (
                " It already is a gymnasium env."
                if isinstance(env, gymnasium.Env)
                else " For a MultiAgentEnv use to_pettingzoo(); for a VecEnv, to_sb3() or "
                "to_gymnasium_vector()."
            )
            raise TypeError(f"to_gymnasium() expects a sekai.Env, got {type(env).__name__}.{hint}")
        self.render_mode = _render_mode(env, renderer, render_mode)
        self.sekai_env = env
        self.renderer = renderer
        self._renderer_closed = False
        self.observation_space = space_to_gymnasium(env.observation_space)
        self.action_space = space_to_gymnasium(env.action_space)
        self.metadata = {
            "render_modes": [self.render_mode] if renderer is not None else [],
            **env.metadata,
        }
        self._masked = supports_action_mask(env)
        # gymnasium's MultiBinary contains 0.0/1.0 floats (SB3 sends them), its form of a
        # MaskedBox any values in empty rows; sekai's spaces do not.
        self._convert_action = action_converter(env.action_space)

    # -- the gymnasium API ---------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sekai env with ``seed`` and ``options``; return ``(observation, info)``."""
        result = self.sekai_env.reset(seed=seed, options=options)
        return result.observation, result.info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the sekai env; return ``(observation, reward, terminated, truncated, info)``.

        A MultiBinary action (or MultiBinary part of a Dict or Tuple action) of 0.0/1.0 floats,
        which gymnasium's space contains (SB3 sends them), reaches the sekai env as the space's
        integers; a MaskedBox action (or part) with its empty rows set to the fill value, as
        gymnasium's Dict of ``values`` and ``mask`` lets them hold anything. An ``"episode"``
        EpisodeStats in the info (sekai's RecordEpisodeStatistics) becomes the ``{"r", "l",
        "t"}`` dict of gymnasium's RecordEpisodeStatistics, which gymnasium's and SB3's code
        read, as ``to_gymnasium_vector`` and ``to_sb3`` give it."""
        if self._convert_action is not None:
            action = self._convert_action(action)
        result = self.sekai_env.step(action)
        return (
            result.observation,
            float(result.reward),
            bool(result.terminated),
            bool(result.truncated),
            with_episode_dict(result.info),
        )

    def render(self) -> RenderFrame | None:
        """The renderer's frame of the current state (None without a renderer)."""
        if self.renderer is None:
            return None
        return self.renderer.render(self.sekai_env)

    def close(self) -> None:
        """Close the sekai env, then the renderer (even if closing the env raised); closing
        again leaves the renderer alone, as closing a sekai env again does nothing."""
        try:
            self.sekai_env.close()
        finally:
            if self.renderer is not None and not self._renderer_closed:
                self._renderer_closed = True
                self.renderer.close()

    # -- the generator is the sekai env's ----------------------------------------------------

    @property
    def _np_random(self) -> np.random.Generator:
        return self.sekai_env.rng

    @_np_random.setter
    def _np_random(self, value: np.random.Generator) -> None:
        self.sekai_env.rng = value

    @property
    def np_random(self) -> np.random.Generator:
        """The sekai env's ``rng``."""
        return self.sekai_env.rng

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.sekai_env.rng = value

    @property
    def np_random_seed(self) -> int:
        """The seed of the sekai env's ``rng`` (-1 when it was set from a Generator)."""
        _ = self.sekai_env.rng  # creates the generator if the env was never seeded
        seed = self.sekai_env._rng_seed
        return -1 if seed is None else int(seed)

    # -- action masks -------------------------------------------------------------------

    @property
    def action_masks(self) -> Callable[[], NDArray[np.bool_]]:
        """``action_masks()``: the sekai env's ``action_mask()`` flattened to one bool array.

        Only present when the sekai env (any layer) defines ``action_mask``; otherwise reading
        it raises AttributeError, so ``hasattr(env, "action_masks")`` is False.
        """
        if not self._masked:
            raise AttributeError(
                f"{type(self).__name__} has no action_masks(): the sekai env "
                f"{self.sekai_env} defines no action_mask()."
            )
        return self._action_masks

    def _action_masks(self) -> NDArray[np.bool_]:
        return flatten_action_mask(self.sekai_env.action_space, get_action_mask(self.sekai_env))

    # -- attributes of the sekai stack --------------------------------------------------

    def has_wrapper_attr(self, name: str) -> bool:
        """Whether this object or any layer of the sekai stack has ``name``."""
        return hasattr(self, name) or self.sekai_env.has_attr(name)

    def get_wrapper_attr(self, name: str) -> Any:
        """Read ``name`` from this object, else from the sekai stack (``get_attr``)."""
        if hasattr(self, name):
            return getattr(self, name)
        return self.sekai_env.get_attr(name)

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set ``name`` on this object if it has it, else on the sekai layer that has it.

        Returns:
            True if an existing attribute was set (or ``force`` created one on the sekai env).
        """
        if name in self.__dict__ or hasattr(type(self), name):
            setattr(self, name, value)
            return True
        if self.sekai_env.has_attr(name) or force:
            self.sekai_env.set_attr(name, value)
            return True
        return False

    def __str__(self) -> str:
        return f"<{type(self).__name__}{self.sekai_env}>"

    def __repr__(self) -> str:
        return str(self)
