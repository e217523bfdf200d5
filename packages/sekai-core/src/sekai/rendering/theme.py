"""Colour themes shared by every renderer: a light one and a dark one."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Color", "Theme", "resolve_theme"]

Color = tuple[int, int, int]
"""An RGB colour, each channel in ``[0, 255]``."""


@dataclass(frozen=True)
class Theme:
    """Named colours for renderers: use ``Theme.light()``, ``Theme.dark()`` or your own.

    Attributes:
        background: the canvas.
        foreground: text, axes and the main objects.
        muted: secondary text and annotations.
        grid: grid lines and subtle guides.
        accent: the highlighted series or object.
        up: gains, buys, positive values.
        down: losses, sells, negative values.
        palette: colours for successive series.
    """

    background: Color
    foreground: Color
    muted: Color
    grid: Color
    accent: Color
    up: Color
    down: Color
    palette: tuple[Color, ...]

    def __post_init__(self) -> None:
        for name in ("background", "foreground", "muted", "grid", "accent", "up", "down"):
            _check_color(name, getattr(self, name))
        if not self.palette:
            raise ValueError("Theme.palette needs at least one colour.")
        for i, color in enumerate(self.palette):
            _check_color(f"palette[{i}]", color)

    @classmethod
    def light(cls) -> Theme:
        """Dark ink on white: the default."""
        return cls(
            background=(255, 255, 255),
            foreground=(33, 37, 41),
            muted=(108, 117, 125),
            grid=(226, 230, 234),
            accent=(13, 110, 253),
            up=(25, 135, 84),
            down=(214, 51, 65),
            palette=(
                (31, 119, 180),
                (255, 127, 14),
                (44, 160, 44),
                (214, 39, 40),
                (148, 103, 189),
                (140, 86, 75),
                (227, 119, 194),
                (127, 127, 127),
                (188, 189, 34),
                (23, 190, 207),
            ),
        )

    @classmethod
    def dark(cls) -> Theme:
        """Light ink on a near-black background."""
        return cls(
            background=(22, 24, 29),
            foreground=(230, 232, 235),
            muted=(148, 155, 164),
            grid=(52, 56, 64),
            accent=(77, 171, 247),
            up=(64, 192, 110),
            down=(250, 90, 90),
            palette=(
                (77, 171, 247),
                (255, 169, 77),
                (105, 219, 124),
                (255, 107, 107),
                (177, 151, 252),
                (196, 154, 132),
                (247, 131, 172),
                (173, 181, 189),
                (216, 217, 90),
                (59, 201, 219),
            ),
        )


def _check_color(name: str, color: object) -> None:
    if (
        not isinstance(color, tuple)
        or len(color) != 3
        or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in color)
    ):
        raise ValueError(
            f"Theme.{name} must be an (r, g, b) tuple of ints in [0, 255], got {color!r}."
        )


def resolve_theme(theme: str | Theme) -> Theme:
    """Turn ``"light"``, ``"dark"`` or a ``Theme`` into a ``Theme``.

    Raises:
        ValueError: any other name.
        TypeError: neither a string nor a Theme.
    """
    if isinstance(theme, Theme):
        return theme
    if isinstance(theme, str):
        if theme == "light":
            return Theme.light()
        if theme == "dark":
            return Theme.dark()
        raise ValueError(
            f"Unknown theme {theme!r}; expected 'light', 'dark' or a sekai.rendering.Theme."
        )
    raise TypeError(f"theme must be 'light', 'dark' or a Theme, got {type(theme).__name__}.")
