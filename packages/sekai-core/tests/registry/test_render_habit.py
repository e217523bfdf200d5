"""gymnasium's render_mode= and env.render() on an env without a known renderer."""

import re
import sys
import types

import numpy as np
import pytest

import sekai
from sekai.core._render_habit import renderer_of
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


class TakesAnyKeyword(LineEnv):
    """An env of one's own whose constructor takes any keyword (``**kwargs``), none named."""

    def __init__(self, **kwargs):
        super().__init__()
        self.given = kwargs


def test_render_mode_reaches_an_env_that_takes_any_keyword(sekai_line_registry):
    sekai.register("testing/AnyKeyword-v0", TakesAnyKeyword)
    env = sekai.make("testing/AnyKeyword-v0", render_mode="rgb_array")
    assert env.unwrapped.given == {"render_mode": "rgb_array"}
    vec = sekai.make_vec(
        "testing/AnyKeyword-v0", 2, vectorization_mode="sync", render_mode="rgb_array"
    )
    assert vec.get_attr("given") == [{"render_mode": "rgb_array"}] * 2
    vec.close()


def test_render_of_an_env_without_a_renderer_names_the_renderer_protocol(sekai_line_registry):
    with pytest.raises(AttributeError, match="sekai envs have no render"):
        sekai.make("testing/Line-v0").render()


SEE = (
    "See docs/pages/rendering.md and the section 'Renderers instead of render_mode' of "
    "docs/pages/gymnasium-migration.md."
)


class WalkEnv(LineEnv):
    """An env of a package (``acme_walk``) that exports its renderer, ``WalkRenderer``."""


WalkEnv.__module__ = "acme_walk.envs"


class Patrol(WalkEnv):
    """A subclass whose name ends in no "Env": drawn by its base class's renderer."""


@pytest.fixture
def acme_walk(monkeypatch):
    """The package ``acme_walk``, exporting ``WalkRenderer`` and ``WalkTextRenderer``."""
    package = types.ModuleType("acme_walk")
    package.WalkRenderer = package.WalkTextRenderer = object
    monkeypatch.setitem(sys.modules, "acme_walk", package)
    return package


def test_render_of_a_wrapped_env_names_the_renderer_its_package_exports(acme_walk):
    env = sekai.OrderEnforcing(sekai.TimeLimit(Patrol(), 5))
    text = (
        "'OrderEnforcing' object has no attribute 'render': sekai envs have no render() "
        "(gymnasium's env.render()). Draw it with its renderer: from acme_walk import "
        f"WalkRenderer; frame = WalkRenderer().render(env). {SEE}"
    )
    with pytest.raises(AttributeError, match=f"^{re.escape(text)}$"):
        env.render  # noqa: B018


def test_the_text_renderer_is_the_one_the_package_exports_or_none(acme_walk, monkeypatch):
    assert renderer_of(Patrol) == "from acme_walk import WalkRenderer"
    assert renderer_of(Patrol, text=True) == "from acme_walk import WalkTextRenderer"
    monkeypatch.delattr(acme_walk, "WalkTextRenderer")
    assert renderer_of(Patrol, text=True) is None


def test_render_of_a_vector_env_names_vec_record_frames():
    vec = sekai.SyncVecEnv([LineEnv])
    text = (
        "'SyncVecEnv' object has no attribute 'render': sekai vector envs have no render() "
        "(gymnasium's VectorEnv.render()). Record one sub-env's frames with "
        "sekai.rendering.VecRecordFrames(vec, renderer, index=0) (sync or async sub-envs), or "
        f"draw a sub-env with its renderer. {SEE}"
    )
    with pytest.raises(AttributeError, match=f"^{re.escape(text)}$"):
        vec.render  # noqa: B018
    assert not hasattr(vec, "render")
    vec.close()


def test_render_mode_for_an_entry_point_without_a_signature_is_left_to_the_call(
    sekai_line_registry,
):
    # No signature to read (a builtin): the call decides, here the check of what it built.
    sekai.register("testing/Dict-v0", dict)
    with pytest.raises(TypeError, match=r"^testing/Dict-v0: its entry point <class 'dict'> "):
        sekai.make("testing/Dict-v0", render_mode="human")
