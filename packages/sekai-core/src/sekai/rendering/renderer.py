"""The Renderer protocol, its base class and the frame types renderers return."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

import numpy as np
import numpy.typing as npt

from sekai.error import ResetRequired

if TYPE_CHECKING:
    from sekai.core.env import Env

__all__ = [
    "RENDER_BEFORE_RESET",
    "ANSIString",
    "BaseRenderer",
    "RGBArray",
    "RenderFrame",
    "Renderer",
    "require_reset",
    "target_env",
]

RGBArray = npt.NDArray[np.uint8]
"""An RGB image: a uint8 array of shape ``(height, width, 3)``."""

ANSIString = str
"""A text frame, as a terminal would show it (``render_mode="ansi"`` in gymnasium)."""

RenderFrame = RGBArray | ANSIString
"""What ``Renderer.render()`` returns: an RGB image or a text frame."""

RENDER_BEFORE_RESET = (
    "reset() must be called before the env can be rendered. See Env.reset() for usage."
)

EnvT = TypeVar("EnvT")
EnvT2 = TypeVar("EnvT2")


# __enter__ returns the subclass (typing.Self is 3.11+, and hints must resolve at runtime).
_RendererT = TypeVar("_RendererT", bound="BaseRenderer")


@runtime_checkable
class Renderer(Protocol):
    """Anything that turns an environment's current state into a frame.

    Renderers are separate objects: environments have no ``render()`` method and no render
    mode. ``isinstance(obj, Renderer)`` is True for any object with ``render`` and ``close``.
    """

    def render(self, env: Any) -> RenderFrame:
        """Draw ``env`` (a wrapped env is accepted) as it is now."""
        ...

    def close(self) -> None:
        """Release whatever the renderer holds."""
        ...


class BaseRenderer:
    """Convenience base class for renderers: a no-op ``close()`` and context-manager support."""

    def render(self, env: Any) -> RenderFrame:
        """Draw ``env``; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement render().")

    def close(self) -> None:
        """Release resources (the base class holds none)."""

    def __enter__(self: _RendererT) -> _RendererT:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@overload
def target_env(env: Env[Any, Any], env_type: type[EnvT], /) -> EnvT: ...


@overload
def target_env(
    env: Env[Any, Any], env_type: type[EnvT], other_type: type[EnvT2], /
) -> EnvT | EnvT2: ...


@overload
def target_env(env: Env[Any, Any], /, *env_types: type[Any]) -> Any: ...


def target_env(env: Env[Any, Any], /, *env_types: type[Any]) -> Any:
    """Return the base env of ``env`` (wrappers are looked through), checked against ``env_types``.

    Args:
        env: the env to render, possibly wrapped.
        *env_types: the env classes the renderer can draw.

    Raises:
        TypeError: the base env is none of ``env_types``, e.g.
            ``This renderer draws CartPoleEnv, got PendulumEnv.``
    """
    base = getattr(env, "unwrapped", env)
    if isinstance(base, env_types):
        return base
    names = " or ".join(t.__name__ for t in env_types)
    raise TypeError(f"This renderer draws {names}, got {type(base).__name__}.")


def require_reset(ready: bool) -> None:
    """Raise ``ResetRequired`` (with the rendering wording) unless ``ready`` is true."""
    if not ready:
        raise ResetRequired(RENDER_BEFORE_RESET)
