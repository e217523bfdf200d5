"""The classic renderers: frame shapes, that pictures follow the state, errors, recording."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs import classic_control
from sekai.envs.classic_control import (
    AcrobotEnv,
    AcrobotRenderer,
    CartPoleEnv,
    CartPoleRenderer,
    ContinuousMountainCarEnv,
    MountainCarEnv,
    MountainCarRenderer,
    PendulumEnv,
    PendulumRenderer,
)
from sekai.rendering import RecordFrames, Renderer, Theme

CASES = [
    pytest.param(CartPoleEnv, CartPoleRenderer(), (400, 600, 3), id="CartPole"),
    pytest.param(MountainCarEnv, MountainCarRenderer(), (400, 600, 3), id="MountainCar"),
    pytest.param(
        ContinuousMountainCarEnv, MountainCarRenderer(), (400, 600, 3), id="MountainCarContinuous"
    ),
    pytest.param(PendulumEnv, PendulumRenderer(), (500, 500, 3), id="Pendulum"),
    pytest.param(AcrobotEnv, AcrobotRenderer(), (500, 500, 3), id="Acrobot"),
]


@pytest.mark.parametrize(("env_cls", "renderer", "shape"), CASES)
def test_frames_are_uint8_rgb_of_the_documented_size(
    env_cls: Any, renderer: Any, shape: tuple[int, ...]
) -> None:
    env = env_cls()
    env.reset(seed=0)
    frame = renderer.render(env)
    assert frame.shape == shape and frame.dtype == np.uint8
    assert isinstance(renderer, Renderer)


@pytest.mark.parametrize(("env_cls", "renderer", "shape"), CASES)
def test_the_picture_changes_with_the_state(
    env_cls: Any, renderer: Any, shape: tuple[int, ...]
) -> None:
    env = env_cls()
    env.reset(seed=0)
    before = renderer.render(env)
    env.state = np.asarray(env.state, dtype=np.float64) + 0.5
    assert not np.array_equal(renderer.render(env), before)


@pytest.mark.parametrize(("env_cls", "renderer", "shape"), CASES)
def test_rendering_before_reset_raises_reset_required(
    env_cls: Any, renderer: Any, shape: tuple[int, ...]
) -> None:
    with pytest.raises(sekai.ResetRequired) as info:
        renderer.render(env_cls())
    assert str(info.value) == (
        "reset() must be called before the env can be rendered. See Env.reset() for usage."
    )


def _dark_columns(frame: np.ndarray, row: int) -> np.ndarray:
    return np.flatnonzero(frame[row].max(axis=1) < 80)


def test_the_cart_moves_when_its_position_changes() -> None:
    env, renderer = CartPoleEnv(), CartPoleRenderer()
    env.reset(seed=0)
    env.state = np.array([-1.0, 0.0, 0.0, 0.0])
    left = renderer.render(env)
    env.state = np.array([1.0, 0.0, 0.0, 0.0])
    right = renderer.render(env)
    row = 305  # through the cart body below the pole (the track is at y = 315)
    # scale = 600 / 4.8 = 125 pixels per unit: the cart's centre is at 300 + 125 * x.
    assert _dark_columns(left, row).mean() == pytest.approx(175, abs=1.5)
    assert _dark_columns(right, row).mean() == pytest.approx(425, abs=1.5)
    assert len(_dark_columns(left, row)) == pytest.approx(50, abs=2)  # 50 pixels wide


def test_the_pole_leans_the_way_its_angle_says() -> None:
    env, renderer = CartPoleEnv(), CartPoleRenderer()
    env.reset(seed=0)
    env.state = np.array([0.0, 0.0, 0.2, 0.0])
    frame = renderer.render(env)
    tan = np.array([202, 152, 101])
    rows, cols = np.nonzero(np.all(frame.astype(int) == tan, axis=2))
    top = rows.min()
    assert cols[rows == top].mean() > 320  # leaning right: the tip is right of the cart


_LINK = (0, 170, 170)
_FLAG = (230, 190, 0)


def _has_colour(frame: np.ndarray, xy: tuple[float, float], colour: tuple[int, ...]) -> bool:
    return tuple(frame[round(xy[1]), round(xy[0])]) == colour


@pytest.mark.parametrize(
    "angles",
    [(0.0, 0.0), (np.pi / 2, 0.0), (np.pi / 2, np.pi / 2), (-np.pi / 3, 0.8), (np.pi, 0.0)],
    ids=["hanging", "right", "right-then-up", "left-bent", "upright"],
)
def test_the_acrobot_links_are_drawn_where_its_angles_put_them(angles: tuple[float, float]) -> None:
    # Angle 0 hangs straight down from the fixed joint at the centre, a positive theta1 swings
    # the first link to the right, theta2 is measured from the first link, and the tip must
    # rise one link length above the fixed joint (the goal line) to terminate.
    env, renderer = AcrobotEnv(), AcrobotRenderer()
    env.reset(seed=0)
    theta1, theta2 = angles
    env.state = np.array([theta1, theta2, 0.0, 0.0])
    frame = renderer.render(env)
    scale = 500 / (2 * (1.0 + 1.0 + 0.2))  # both links 1 long, and a margin of 0.2
    joint = np.array([250.0, 250.0])
    elbow = joint + scale * np.array([np.sin(theta1), np.cos(theta1)])
    tip = elbow + scale * np.array([np.sin(theta1 + theta2), np.cos(theta1 + theta2)])
    for start, end in ((joint, elbow), (elbow, tip)):
        for along in (0.5, 0.85):  # clear of the joints drawn over the links
            point = start + along * (end - start)
            assert _has_colour(frame, point, _LINK), (angles, point)
    opposite = joint - 0.6 * (elbow - joint)  # where the mirrored first link would be
    assert _has_colour(frame, opposite, Theme.light().background), angles


def _flag_pixels(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.nonzero(np.all(frame.astype(int) == _FLAG, axis=2))
    return rows, cols


def test_the_mountain_car_flag_stands_at_the_envs_goal_position() -> None:
    # One renderer for all: its cached background must follow each env's goal.
    renderer = MountainCarRenderer()
    moved = MountainCarEnv()
    moved.goal_position = 0.0
    for env, goal in (
        (MountainCarEnv(), 0.5),
        (ContinuousMountainCarEnv(), 0.45),
        (moved, 0.0),
        (MountainCarEnv(), 0.5),
    ):
        env.reset(seed=0)
        rows, cols = _flag_pixels(renderer.render(env))
        scale = 600 / (0.6 - -1.2)  # the track from min_position to max_position spans 600
        pole_x = (goal - -1.2) * scale
        ground_y = 400 - (np.sin(3 * goal) * 0.45 + 0.55) * scale
        # The flag flies from the pole's top (50 pixels above the ground at the goal) to 36
        # pixels above it, and points 26 pixels to the right.
        assert cols.min() == pytest.approx(pole_x + 1, abs=1), goal
        assert pole_x < cols.min() <= cols.max() < pole_x + 27, goal
        assert ground_y - 51 < rows.min() <= rows.max() < ground_y - 35, goal


def test_renderers_accept_wrapped_envs() -> None:
    env = sekai.make("CartPole-v1")
    env.reset(seed=0)
    direct = CartPoleRenderer().render(env.unwrapped)
    np.testing.assert_array_equal(CartPoleRenderer().render(env), direct)


@pytest.mark.parametrize(
    ("renderer", "env", "message"),
    [
        (CartPoleRenderer(), PendulumEnv(), "This renderer draws CartPoleEnv, got PendulumEnv."),
        (PendulumRenderer(), CartPoleEnv(), "This renderer draws PendulumEnv, got CartPoleEnv."),
        (
            AcrobotRenderer(),
            MountainCarEnv(),
            "This renderer draws AcrobotEnv, got MountainCarEnv.",
        ),
        (
            MountainCarRenderer(),
            AcrobotEnv(),
            "This renderer draws MountainCarEnv or ContinuousMountainCarEnv, got AcrobotEnv.",
        ),
    ],
)
def test_another_env_class_raises_type_error(renderer: Any, env: Any, message: str) -> None:
    env.reset(seed=0)
    with pytest.raises(TypeError) as info:
        renderer.render(env)
    assert str(info.value) == message


def test_custom_sizes_and_themes() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    frame = CartPoleRenderer(width=300, height=200, theme="dark").render(env)
    assert frame.shape == (200, 300, 3)
    assert tuple(frame[5, 5]) == Theme.dark().background
    assert PendulumRenderer(size=128).render(_reset(PendulumEnv())).shape == (128, 128, 3)
    with pytest.raises(ValueError, match="theme"):
        CartPoleRenderer(theme="sepia")
    with pytest.raises(ValueError, match="width"):
        CartPoleRenderer(width=0)


@pytest.mark.parametrize("renderer", [PendulumRenderer, AcrobotRenderer])
def test_square_renderers_name_the_size_argument(renderer: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{renderer.__name__}: size must be >= 16, got 8\.$"):
        renderer(size=8)
    with pytest.raises(TypeError, match=rf"^{renderer.__name__}: size must be an int, got str\.$"):
        renderer(size="500")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"width": "600"}, TypeError, "width must be an int, got str."),
        ({"width": 600.0}, TypeError, "width must be an int, got float."),
        ({"height": True}, TypeError, "height must be an int, got bool."),
        ({"width": 8}, ValueError, "width must be >= 16, got 8."),
        ({"height": 0}, ValueError, "height must be >= 16, got 0."),
    ],
)
def test_sizes_of_the_wrong_type_raise_type_error_and_bad_values_value_error(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    # Named by the class: which renderer refused its width?
    for renderer in (CartPoleRenderer, MountainCarRenderer):
        with pytest.raises(error, match=f"^{re.escape(f'{renderer.__name__}: {message}')}$"):
            renderer(**kwargs)


def test_reprs_name_a_theme_other_than_the_default() -> None:
    assert repr(PendulumRenderer()) == "PendulumRenderer(size=500)"
    assert repr(PendulumRenderer(theme="dark")) == "PendulumRenderer(size=500, theme='dark')"
    assert repr(CartPoleRenderer(width=300, height=200, theme="dark")) == (
        "CartPoleRenderer(width=300, height=200, theme='dark')"
    )
    custom = dataclasses.replace(Theme.light(), accent=(1, 2, 3))
    assert repr(CartPoleRenderer(theme=custom)).endswith(f", theme={custom!r})")


def _reset(env: Any) -> Any:
    env.reset(seed=0)
    return env


def test_pendulum_draws_the_last_torque_in_its_direction() -> None:
    env, renderer = PendulumEnv(), PendulumRenderer()
    env.reset(seed=0)
    env.state = np.array([np.pi, 0.0])  # hanging down, out of the arrow's way
    without = renderer.render(env)
    env.last_u = np.float32(2.0)
    counter_clockwise = renderer.render(env)
    env.last_u = np.float32(-2.0)
    clockwise = renderer.render(env)
    assert not np.array_equal(without, counter_clockwise)
    # The arcs mirror each other left to right around the pivot (x = 250).
    np.testing.assert_allclose(counter_clockwise[:, ::-1].astype(int), clockwise, atol=2)
    assert not np.array_equal(counter_clockwise, clockwise)


def test_record_frames_writes_a_cartpole_episode_as_gif(tmp_path: Path) -> None:
    from PIL import Image, ImageSequence

    env = RecordFrames(sekai.make("CartPole-v1"), CartPoleRenderer())
    env.action_space.seed(0)
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(env.action_space.sample())
    assert len(env.frames) == 19  # the reset frame and 18 steps
    path = env.save(tmp_path / "episode.gif")
    with Image.open(path) as gif:
        frames = list(ImageSequence.Iterator(gif))
        assert len(frames) == len(env.frames)
        assert gif.size == (600, 400)
        assert gif.info["duration"] == 20  # 50 fps


def test_record_frames_writes_a_cartpole_episode_as_mp4(tmp_path: Path) -> None:
    import imageio_ffmpeg  # the render extra's ffmpeg (a test requirement)

    env = RecordFrames(sekai.make("CartPole-v1"), CartPoleRenderer())
    env.action_space.seed(0)
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(env.action_space.sample())
    path = env.save(tmp_path / "episode.mp4")
    # count_frames_and_secs runs ffmpeg itself (imageio's readers leak file handles).
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(path))
    assert frames == len(env.frames) == 19
    assert seconds == pytest.approx(19 / 50, abs=0.05)


def test_the_spec_example_records_four_frames() -> None:
    env = RecordFrames(sekai.make("CartPole-v1"), CartPoleRenderer())
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    assert (len(env.frames), env.frames[0].shape, env.frames[0].dtype) == (
        4,
        (400, 600, 3),
        np.uint8,
    )


# -- gymnasium's rendering habits -------------------------------------------------------------

_SEE = "See docs/pages/rendering.md and the section 'Renderers instead of render_mode'"
_USE = (
    "Draw it with its renderer: from sekai.envs.classic_control import CartPoleRenderer; "
    "frame = CartPoleRenderer().render(env)."
)


def test_make_with_gymnasiums_render_mode_names_the_renderer_and_the_migration_section() -> None:
    with pytest.raises(TypeError) as info:
        sekai.make("CartPole-v1", render_mode="rgb_array")
    message = str(info.value)
    assert message.startswith("CartPole-v1 takes no render_mode='rgb_array': sekai.make() passes")
    assert _USE in message and _SEE in message


def test_make_vec_native_with_render_mode_names_the_single_envs_renderer() -> None:
    with pytest.raises(TypeError) as info:
        sekai.make_vec("classic/CartPole-v1", 2, render_mode="rgb_array")
    message = str(info.value)
    assert message.startswith("classic/CartPole-v1 takes no render_mode='rgb_array': ")
    assert "sekai.make_vec() passes" in message and _USE in message and _SEE in message


@pytest.mark.parametrize("mode", ["native", "sync"])
def test_render_method_of_a_vec_env_names_vec_record_frames(mode: str) -> None:
    vec = sekai.make_vec("classic/CartPole-v1", 2, vectorization_mode=mode)
    with pytest.raises(AttributeError) as info:
        vec.render()
    assert "sekai vector envs have no render()" in str(info.value)
    assert "VecRecordFrames(vec, renderer, index=0)" in str(info.value)
    assert not hasattr(vec, "render")
    vec.close()


def test_render_method_of_a_wrapped_or_bare_env_names_the_renderer() -> None:
    env = sekai.make("classic/Acrobot-v1")
    for target, name in ((env, "TimeLimit"), (env.unwrapped, "AcrobotEnv")):
        with pytest.raises(AttributeError) as info:
            target.render()
        assert str(info.value).startswith(f"'{name}' object has no attribute 'render': sekai envs")
        assert "from sekai.envs.classic_control import AcrobotRenderer" in str(info.value)
    assert not hasattr(env, "render")  # bridges that probe for render() still see none


@pytest.mark.parametrize(
    ("env_id", "renderer"),
    [
        ("MountainCarContinuous-v0", "MountainCarRenderer"),  # drawn by its sibling's renderer
        ("CartPole-v1", "CartPoleRenderer"),
        ("Pendulum-v1", "PendulumRenderer"),
    ],
)
def test_every_classic_env_names_the_renderer_that_draws_it(env_id: str, renderer: str) -> None:
    env = sekai.make(env_id)
    with pytest.raises(AttributeError) as info:
        env.render()
    use = f"from sekai.envs.classic_control import {renderer}; frame = {renderer}().render(env)"
    assert use in str(info.value)
    with pytest.raises(TypeError, match=re.escape(use)):
        sekai.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frame = getattr(classic_control, renderer)().render(env)  # the hint is right
    assert frame.shape[2] == 3


def test_a_subclass_of_a_classic_env_is_pointed_to_its_base_classs_renderer() -> None:
    class TiltedPendulum(PendulumEnv):
        pass

    with pytest.raises(AttributeError, match="import PendulumRenderer; frame = PendulumRenderer"):
        TiltedPendulum().render()  # type: ignore[attr-defined]


def test_other_missing_attributes_keep_the_plain_message() -> None:
    with pytest.raises(AttributeError, match=r"^'CartPoleEnv' object has no attribute 'nope'$"):
        _ = sekai.make("CartPole-v1").unwrapped.nope


def test_native_mode_of_a_plain_id_names_its_classic_twin() -> None:
    with pytest.raises(ValueError, match=r"classic/MountainCar-v0 has one \(the same env"):
        sekai.make_vec("MountainCar-v0", 2, vectorization_mode="native")


_ROD = (204, 77, 77)


def test_the_cartpole_track_has_a_red_post_at_each_termination_bound() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    frame = CartPoleRenderer().render(env)
    # The track is at y = 315; the posts stand 16 pixels high, 3 wide, at both image edges.
    for x in (1, 598):
        assert tuple(frame[307, x]) == _ROD, x
    assert tuple(frame[290, 598]) == Theme.light().background


def test_the_mountain_car_body_sits_on_the_track() -> None:
    env = MountainCarEnv()
    env.reset(seed=0)
    env.state = np.array([-np.pi / 6, 0.0])  # the valley floor, where the track is level
    frame = MountainCarRenderer().render(env)
    scale = 600 / 1.8
    base_x, base_y = (-np.pi / 6 + 1.2) * scale, 400 - 0.1 * scale
    # Between the wheels, 10 pixels above the track: the body; 40 above: nothing.
    assert tuple(frame[round(base_y - 10), round(base_x)]) == Theme.light().foreground
    assert tuple(frame[round(base_y - 40), round(base_x)]) == Theme.light().background


def test_the_pendulum_rod_swings_counter_clockwise_for_a_positive_angle() -> None:
    env, renderer = PendulumEnv(), PendulumRenderer()
    env.reset(seed=0)
    env.state = np.array([np.pi / 2, 0.0])  # a quarter turn from upright: pointing left
    frame = renderer.render(env)
    scale = 500 / 4.4
    assert tuple(frame[250, round(250 - 0.7 * scale)]) == _ROD
    assert tuple(frame[250, round(250 + 0.7 * scale)]) == Theme.light().background


def test_the_pendulum_marks_the_upright_goal_above_its_circle() -> None:
    env = PendulumEnv()
    env.reset(seed=0)
    env.state = np.array([np.pi, 0.0])
    frame = PendulumRenderer().render(env)
    scale = 500 / 4.4
    assert tuple(frame[round(250 - 1.1 * scale), 249]) == Theme.light().muted
    assert tuple(frame[round(250 + 1.1 * scale), 249]) == Theme.light().background


def test_the_pendulum_torque_arrow_grows_with_the_torque() -> None:
    env, renderer = PendulumEnv(), PendulumRenderer()
    env.reset(seed=0)
    env.state = np.array([np.pi, 0.0])
    without = renderer.render(env).astype(int)

    def reach(torque: float) -> float:
        env.last_u = np.float32(torque)
        rows, cols = np.nonzero(np.any(renderer.render(env).astype(int) != without, axis=2))
        return float(np.hypot(rows - 250, cols - 250).max())

    assert reach(0.5) < reach(1.0) < reach(2.0)
    assert reach(3.0) == reach(2.0)  # the arrow stops growing at the torque limit


def test_the_acrobot_goal_line_is_one_link_above_the_fixed_joint() -> None:
    env = AcrobotEnv()
    env.reset(seed=0)
    env.state = np.array([0.0, 0.0, 0.0, 0.0])  # hanging, clear of the line
    frame = AcrobotRenderer().render(env)
    goal_y = 250 - 500 / 4.4  # scale = 500 / (2 * (1 + 1 + 0.2))
    for x in (50, 250, 450):
        assert tuple(frame[int(goal_y), x]) == Theme.light().foreground, x
    assert tuple(frame[int(goal_y) - 3, 250]) == Theme.light().background
