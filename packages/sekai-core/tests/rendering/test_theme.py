"""Theme: the light and dark themes and theme names."""

from __future__ import annotations

import dataclasses

import pytest

from sekai.rendering import Theme, resolve_theme


def test_light_and_dark_themes_differ_and_are_frozen() -> None:
    light, dark = Theme.light(), Theme.dark()
    assert light != dark
    assert sum(light.background) > sum(light.foreground)
    assert sum(dark.background) < sum(dark.foreground)
    assert len(light.palette) >= 8 and len(dark.palette) >= 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        light.accent = (1, 2, 3)  # type: ignore[misc]


def test_resolve_theme_accepts_names_and_themes() -> None:
    assert resolve_theme("light") == Theme.light()
    assert resolve_theme("dark") == Theme.dark()
    custom = dataclasses.replace(Theme.light(), accent=(1, 2, 3))
    assert resolve_theme(custom) is custom


def test_unknown_theme_names_raise_value_error() -> None:
    with pytest.raises(ValueError, match="Unknown theme 'solarized'"):
        resolve_theme("solarized")
    with pytest.raises(TypeError):
        resolve_theme(3)  # type: ignore[arg-type]


def test_invalid_colours_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"Theme\.accent"):
        dataclasses.replace(Theme.light(), accent=(0, 0, 256))
    with pytest.raises(ValueError, match="palette"):
        dataclasses.replace(Theme.light(), palette=())


@pytest.mark.parametrize("theme", [Theme.light(), Theme.dark()], ids=["light", "dark"])
def test_each_theme_tells_its_roles_apart(theme: Theme) -> None:
    # Gains and losses, the accent and the text must not share a colour, nor series colours.
    assert theme.up != theme.down
    assert len({theme.background, theme.foreground, theme.muted, theme.grid, theme.accent}) == 5
    assert len(set(theme.palette)) == len(theme.palette)
