"""Rendering: the Renderer protocol, a numpy drawing canvas, themes and frame recording.

Environments have no ``render()``; a renderer object draws an env's current state::

    from sekai.envs.classic_control import CartPoleRenderer
    frame = CartPoleRenderer().render(env)  # (400, 600, 3) uint8
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sekai.rendering.canvas import Canvas
from sekai.rendering.recorder import RecordFrames, save_gif, save_text, save_video
from sekai.rendering.renderer import (
    RENDER_BEFORE_RESET,
    ANSIString,
    BaseRenderer,
    Renderer,
    RenderFrame,
    RGBArray,
    require_reset,
    target_env,
)
from sekai.rendering.theme import Color, Theme, resolve_theme

__all__ = [
    "RENDER_BEFORE_RESET",
    "ANSIString",
    "BaseRenderer",
    "Canvas",
    "Color",
    "RGBArray",
    "RecordFrames",
    "RenderFrame",
    "Renderer",
    "Theme",
    "VecRecordFrames",
    "require_reset",
    "resolve_theme",
    "save_gif",
    "save_text",
    "save_video",
    "target_env",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # VecRecordFrames needs sekai.vector; import it only when asked for.
        if name == "VecRecordFrames":
            from sekai.rendering.vec_recorder import VecRecordFrames

            return VecRecordFrames
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover
    from sekai.rendering.vec_recorder import VecRecordFrames
