"""The single-env gymnasium bridges: to_gymnasium, from_gymnasium and GymnasiumRenderer."""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai.compat._optional import require_gymnasium
from sekai.compat._spaces import convert_space, space_from_gymnasium
from sekai.core._rng import SeedLike, check_seed
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.error import ResetRequired
from sekai.rendering.recorder import image_frame
from sekai.rendering.renderer import RENDER_BEFORE_RESET, BaseRenderer, RenderFrame

if TYPE_CHECKING:
    import gymnasium

    from sekai.compat._sekai_to_gymnasium import SekaiToGymnasium
    from sekai.rendering.renderer import Renderer

__all__ = ["GymnasiumRenderer", "GymnasiumToSekai", "from_gymnasium", "to_gymnasium"]


def to_gymnasium(
    env: Env[Any, Any], renderer: Renderer | None = None, render_mode: str | None = None
) -> SekaiToGymnasium:
    """Wrap a sekai env (including a wrapper stack) as a ``gymnasium.Env``.

    Spaces are converted with ``space_to_gymnasium``, results become gymnasium's tuples and
    seeds pass through to ``env.reset(seed=...)``. When the env has ``action_mask()``, the
    gymnasium env has ``action_masks()`` returning it flattened to one bool array, for
    sb3-contrib's MaskablePPO.

    Args:
        env: the sekai env.
        renderer: a sekai renderer; ``render()`` then returns its frame of the env.
        render_mode: ``"rgb_array"`` (the default with a renderer) or ``"ansi"`` for a text
            renderer. ``metadata["render_modes"]`` lists it; without a renderer it is None.

    Example:
        >>> gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer())
        >>> gym_env.metadata
        {'render_modes': ['rgb_array'], 'render_fps': 50}

    Raises:
        sekai.MissingDependency: gymnasium (>= 1.0) is not installed.
        TypeError: ``env`` is not a sekai Env, or a space has no gymnasium equivalent.
        ValueError: another render mode (``"human"`` included: sekai renderers return frames),
            or a ``render_mode`` without a renderer.
    """
    require_gymnasium("to_gymnasium()")
    from sekai.compat._sekai_to_gymnasium import SekaiToGymnasium

    return SekaiToGymnasium(env, renderer=renderer, render_mode=render_mode)


def from_gymnasium(env: gymnasium.Env[Any, Any]) -> GymnasiumToSekai:
    """Wrap a gymnasium env as a sekai ``Env``, for sekai's wrappers, vector envs and checker.

    The gymnasium env keeps its own generator: seeds given to ``reset()`` go straight to it and
    ``rng`` is its ``np_random``. A NumPy integer seed is passed on as an int, and
    ``reset(seed=generator)`` makes that Generator the gymnasium env's ``np_random``.

    Example:
        >>> env = from_gymnasium(gym.make("Acrobot-v1"))
        >>> env.action_space
        Discrete(3)

    Raises:
        sekai.MissingDependency: gymnasium (>= 1.0) is not installed.
        TypeError: ``env`` is not a gymnasium env, or a space has no sekai equivalent (the
            message names which space).
    """
    gym = require_gymnasium("from_gymnasium()")
    if not isinstance(env, gym.Env):
        raise TypeError(
            f"from_gymnasium() expects a gymnasium.Env, got {type(env).__name__}."
            f"{_other_bridge_hint(env, gym)}"
        )
    return GymnasiumToSekai(env)


def _other_bridge_hint(env: Any, gym: Any) -> str:
    """Where an object that is no gymnasium.Env goes instead (empty when unknown)."""
    if isinstance(env, Env):
        return " It already is a sekai env."
    if isinstance(env, gym.vector.VectorEnv):
        return " For a gymnasium VectorEnv, use from_gymnasium_vector()."
    pettingzoo = sys.modules.get("pettingzoo")  # a PettingZoo env means it is imported
    if pettingzoo is not None and isinstance(env, pettingzoo.ParallelEnv):
        return " For a PettingZoo ParallelEnv, use from_pettingzoo()."
    if pettingzoo is not None and isinstance(env, pettingzoo.AECEnv):
        return (
            " For a PettingZoo AEC env, use from_pettingzoo(pettingzoo.utils.aec_to_parallel(env))."
        )
    return ""


def _gymnasium_seed(seed: Any) -> int | None:
    """A checked sekai seed as gymnasium takes it (Generators are handled by the caller)."""
    check_seed(seed)
    return None if seed is None else int(seed)


_MASK = "action_mask"


def _is_sekai_mask(value: Any) -> bool:
    """Whether a gymnasium env's ``action_mask`` fits sekai's protocol: a mask, or a method
    that can be called with no arguments (not a helper such as Taxi's ``action_mask(state)``)."""
    if not callable(value):
        return True
    try:
        inspect.signature(value).bind()
    except ValueError:  # no signature to read (some builtins): let a call tell
        return True
    except TypeError:
        return False
    return True


def check_sekai_mask(value: Any, owner: str, reach: str) -> None:
    """Refuse a gymnasium env's ``action_mask`` that is no sekai action mask (``_is_sekai_mask``).

    Raises:
        AttributeError: ``value`` is a method that needs arguments (Taxi's), so the env has no
            sekai action mask; ``owner`` names where it was found, ``reach`` where gymnasium's
            own method is.
    """
    if not _is_sekai_mask(value):
        raise AttributeError(
            f"{owner} has action_mask{_signature(value)}, which needs arguments; sekai's "
            "action_mask() takes no arguments and returns the current mask, so this env has "
            "none (gymnasium envs such as Taxi also put their mask in info['action_mask']). "
            f"Call gymnasium's own through {reach}."
        )


def _signature(method: Any) -> str:
    """``method``'s parameters as written, ``(...)`` where they cannot be read."""
    try:
        return str(inspect.signature(method))
    except (TypeError, ValueError):
        return "(...)"


def _from_gymnasium(space: Any, which: str) -> Any:
    return convert_space("from_gymnasium()", space_from_gymnasium, space, f"the {which}")


class GymnasiumToSekai(Env[Any, Any]):
    """A gymnasium env as a sekai ``Env``; build it with ``from_gymnasium()``.

    Spaces are converted with ``space_from_gymnasium``; ``reset()`` and ``step()`` return
    sekai's results; ``metadata`` is a copy of the gymnasium env's. Seeding follows the
    migration page: the gymnasium env keeps its generator (``rng`` is its ``np_random``),
    int seeds (NumPy ones too, as Python ints) go to its ``reset()``, and a Generator seed
    becomes its ``np_random``. Render it with ``GymnasiumRenderer``.

    Attributes:
        gymnasium_env: the wrapped gymnasium env.
    """

    def __init__(self, env: gymnasium.Env[Any, Any]) -> None:
        self.gymnasium_env = env
        self.observation_space = _from_gymnasium(
            env.observation_space, f"observation space of {env}"
        )
        self.action_space = _from_gymnasium(env.action_space, f"action space of {env}")
        self._metadata = dict(env.metadata)
        self._was_reset = False  # gymnasium envs render nothing (or raise) before a reset

    @property
    def metadata(self) -> dict[str, Any]:  # type: ignore[override]
        """A copy of the gymnasium env's metadata, taken when it was wrapped."""
        return self._metadata

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Any]:
        """Reset the gymnasium env; an int seed goes to it, a Generator becomes its np_random."""
        if isinstance(seed, np.random.Generator):
            self.gymnasium_env.np_random = seed
            gym_seed = None
        else:
            gym_seed = _gymnasium_seed(seed)
        observation, info = self.gymnasium_env.reset(seed=gym_seed, options=options)
        self._was_reset = True
        return ResetResult(observation, info)

    def step(self, action: Any) -> StepResult[Any]:
        """Step the gymnasium env and return its transition as a StepResult."""
        observation, reward, terminated, truncated, info = self.gymnasium_env.step(action)
        return StepResult(observation, float(reward), bool(terminated), bool(truncated), info)

    def close(self) -> None:
        """Close the gymnasium env."""
        self.gymnasium_env.close()

    # -- attributes: the adapter's own, else the gymnasium env's (through its wrappers) --------

    def has_attr(self, name: str) -> bool:
        """Whether the adapter or any layer of the gymnasium env has attribute ``name`` (an
        ``action_mask`` only if it is sekai's: see ``get_attr``)."""
        if hasattr(self, name):
            return True
        if not self.gymnasium_env.has_wrapper_attr(name):
            return False
        return name != _MASK or _is_sekai_mask(self.gymnasium_env.get_wrapper_attr(name))

    def get_attr(self, name: str) -> Any:
        """The adapter's ``name`` if it has one, else the gymnasium env's ``get_wrapper_attr``.

        An ``action_mask`` method that needs arguments (Taxi's ``action_mask(state)``) is a
        gymnasium helper, not sekai's ``action_mask()``: it is not passed on, so the converted
        env has no action mask (reach it through ``gymnasium_env``).

        Raises:
            AttributeError: neither has ``name``, or ``name`` is such an ``action_mask``.
        """
        if hasattr(self, name):
            return getattr(self, name)
        try:
            value = self.gymnasium_env.get_wrapper_attr(name)
        except AttributeError as error:
            raise AttributeError(
                f"Neither {type(self).__name__} nor its gymnasium env {self.gymnasium_env} "
                f"has the attribute {name!r}."
            ) from error
        if name == _MASK:
            check_sekai_mask(
                value, f"The gymnasium env {self.gymnasium_env}", "gymnasium_env.unwrapped"
            )
        return value

    def set_attr(self, name: str, value: Any) -> None:
        """Set the adapter's ``name`` if it has one, else the gymnasium env's
        (``set_wrapper_attr``: the outermost gymnasium layer that has it, else its outermost)."""
        if hasattr(self, name):
            setattr(self, name, value)
        else:
            self.gymnasium_env.set_wrapper_attr(name, value)

    # -- the generator is the gymnasium env's ------------------------------------------------

    @property
    def rng(self) -> np.random.Generator:
        """The gymnasium env's ``np_random``."""
        return self.gymnasium_env.np_random

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(value).__name__}.")
        self.gymnasium_env.np_random = value

    @property
    def _rng_seed(self) -> int | None:
        return getattr(self.gymnasium_env.unwrapped, "_np_random_seed", None)

    @_rng_seed.setter
    def _rng_seed(self, value: int | None) -> None:
        self.gymnasium_env.unwrapped._np_random_seed = value

    def _set_rng(self, seed: SeedLike) -> int:
        """Seed the gymnasium env's generator with sekai's rules (see ``Env._set_rng``)."""
        if isinstance(seed, np.random.Generator):
            self.gymnasium_env.np_random = seed
            return -1
        value = _gymnasium_seed(seed)
        base = self.gymnasium_env.unwrapped
        if value is None:
            return int(base.np_random_seed)  # creates the generator when never seeded
        from gymnasium.utils import seeding

        base._np_random, base._np_random_seed = seeding.np_random(value)
        return value

    def __str__(self) -> str:
        return f"<{type(self).__name__}{self.gymnasium_env}>"


class GymnasiumRenderer(BaseRenderer):
    """Render a ``from_gymnasium`` env with the gymnasium env's own ``render()``.

    Create the gymnasium env with the render mode you want (``gym.make(id,
    render_mode="rgb_array")``, or ``"ansi"`` for text).

    Example:
        >>> env = from_gymnasium(gym.make("CartPole-v1", render_mode="rgb_array"))
        >>> _ = env.reset(seed=0)
        >>> GymnasiumRenderer().render(env).shape
        (400, 600, 3)

    Raises:
        sekai.MissingDependency: gymnasium (>= 1.0) is not installed.
    """

    def __init__(self) -> None:
        require_gymnasium("GymnasiumRenderer()")

    def _render_mode_of(self, env: Any) -> str | None:
        """The kind of frames drawn of ``env`` (for ``to_gymnasium``): its gymnasium env's
        ``render_mode`` when that is ``"rgb_array"`` or ``"ansi"``, else None."""
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, GymnasiumToSekai):
            return None
        mode = base.gymnasium_env.render_mode
        return mode if mode in ("rgb_array", "ansi") else None

    def render(self, env: Any) -> RenderFrame:
        """The gymnasium env's current frame.

        Args:
            env: a ``from_gymnasium`` env, possibly inside sekai wrappers.

        Raises:
            TypeError: the base env was not made by ``from_gymnasium()``.
            ValueError: the gymnasium env has no ``"rgb_array"`` or ``"ansi"`` render mode, or
                its ``render()`` returned None or an array that is not an image (uint8 values
                in [0, 255], of shape (H, W), (H, W, 3) or (H, W, 4)).
            sekai.ResetRequired: the env was not reset through sekai yet.
        """
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, GymnasiumToSekai):
            raise TypeError(
                "GymnasiumRenderer draws envs made by sekai.compat.from_gymnasium(), got "
                f"{type(base).__name__}."
            )
        gym_env = base.gymnasium_env
        mode = gym_env.render_mode
        if mode not in ("rgb_array", "ansi"):
            raise ValueError(
                f"GymnasiumRenderer needs a gymnasium env created with render_mode='rgb_array' "
                f"(or 'ansi'), got render_mode={mode!r}: e.g. from_gymnasium(gym.make(id, "
                "render_mode='rgb_array'))."
            )
        if not base._was_reset:
            raise ResetRequired(RENDER_BEFORE_RESET)
        frame = gym_env.render()
        if frame is None:
            raise ValueError(
                f"The gymnasium env {gym_env} drew no frame: its render() returned None in "
                f"render_mode={mode!r}."
            )
        if isinstance(frame, str):
            return frame
        return image_frame(frame, f"The frame of the gymnasium env {gym_env}", "GymnasiumRenderer")
