"""gymnasium's render_mode= and env.render() on an env without a known renderer."""

import numpy as np
import pytest

import sekai
from sekai.testing.envs import LineEnv


class Rendered(LineEnv):
    """An env of one's own that takes gymnasium's render_mode."""

    def __init__(self, render_mode=None, **kwargs):
        super().__init__(**kwargs)
        self.render_mode = render_mode


def test_render_mode_for_an_env_without_it_points_to_renderers(sekai_line_registry):
    with pytest.raises(TypeError) as info:
        sekai.make("testing/Line-v0", render_mode="human")
    message = str(info.value)
    assert message.startswith("testing/Line-v0 takes no render_mode='human'")
    assert "Draw it with its renderer" not in message  # LineEnv has no LineRenderer
    assert "Draw it with a renderer (a sekai.rendering.Renderer)" in message
    assert "docs/pages/gymnasium-migration.md" in message


def test_render_mode_reaches_an_env_that_takes_it(sekai_line_registry):
    sekai.register("testing/Rendered-v0", Rendered)
    env = sekai.make("testing/Rendered-v0", render_mode="rgb_array")
    assert env.unwrapped.render_mode == "rgb_array"
    assert isinstance(env.reset(seed=0).observation, np.ndarray)


def test_render_of_an_env_without_a_renderer_names_the_renderer_protocol(sekai_line_registry):
    with pytest.raises(AttributeError, match="sekai envs have no render"):
        sekai.make("testing/Line-v0").render()
