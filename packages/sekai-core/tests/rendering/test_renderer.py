"""The Renderer protocol, BaseRenderer and the helpers renderers share."""

from __future__ import annotations

import pytest

import sekai
from sekai.rendering import (
    RENDER_BEFORE_RESET,
    BaseRenderer,
    Renderer,
    require_reset,
    target_env,
)
from sekai.testing.envs import LineEnv


class _Plain:
    def render(self, env: object) -> str:
        return "frame"

    def close(self) -> None:
        pass


def test_any_object_with_render_and_close_is_a_renderer() -> None:
    assert isinstance(_Plain(), Renderer)
    assert isinstance(BaseRenderer(), Renderer)
    assert not isinstance(object(), Renderer)


def test_base_renderer_render_is_not_implemented_and_close_is_a_no_op() -> None:
    renderer = BaseRenderer()
    with pytest.raises(NotImplementedError):
        renderer.render(LineEnv())
    renderer.close()
    with BaseRenderer() as entered:
        assert isinstance(entered, BaseRenderer)
    assert repr(renderer) == "BaseRenderer()"


def test_target_env_unwraps_and_checks_the_class() -> None:
    env = sekai.TimeLimit(LineEnv(), 5)
    assert target_env(env, LineEnv) is env.unwrapped
    with pytest.raises(TypeError, match=r"^This renderer draws int or str, got LineEnv\.$"):
        target_env(env, int, str)


def test_require_reset_uses_the_rendering_wording() -> None:
    require_reset(True)
    with pytest.raises(sekai.ResetRequired) as info:
        require_reset(False)
    assert str(info.value) == RENDER_BEFORE_RESET
    assert RENDER_BEFORE_RESET == (
        "reset() must be called before the env can be rendered. See Env.reset() for usage."
    )


def test_leaving_a_with_block_closes_the_renderer() -> None:
    class Counting(BaseRenderer):
        closes = 0

        def close(self) -> None:
            self.closes += 1

    with Counting() as renderer:
        assert renderer.closes == 0
    assert renderer.closes == 1
