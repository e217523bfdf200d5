"""from_gymnasium / GymnasiumToSekai / GymnasiumRenderer: the migration page, seeding, errors."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo import AECEnv, ParallelEnv

import sekai
from sekai.compat import GymnasiumRenderer, GymnasiumToSekai, from_gymnasium, to_gymnasium


class Canvas(gym.Env[np.ndarray, int]):
    """A gymnasium env that renders without pygame: a (400, 600, 3) frame showing its state."""

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 12}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(2,))
        self.action_space = gym.spaces.Discrete(2)
        self.value = 0.0
        self.closed = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.value = float(self.np_random.random())
        return np.array([self.value, 0.0], np.float32), {"start": self.value}

    def step(self, action: int) -> Any:
        self.value = float(self.np_random.random())
        obs = np.array([self.value, float(action)], np.float32)
        return obs, np.float64(0.5), np.bool_(False), False, {}

    def render(self) -> Any:
        if self.render_mode == "ansi":
            return f"value={self.value:.2f}"
        if self.render_mode == "rgb_array":
            return np.full((400, 600, 3), int(self.value * 255), dtype=np.uint8)
        return None

    def close(self) -> None:
        self.closed = True


# -- the migration page -------------------------------------------------------------------


def test_acrobot_spaces_and_check_env_match_migration_page() -> None:
    env = from_gymnasium(gym.make("Acrobot-v1"))
    assert f"{env.observation_space} {env.action_space}" == (
        "Box([-1.0, -1.0, -1.0, -1.0, -12.566371, -28.274334], "
        "[1.0, 1.0, 1.0, 1.0, 12.566371, 28.274334], (6,), float32) Discrete(3)"
    )
    assert sekai.check_env(env) == []


def test_sync_vec_env_of_from_gymnasium_envs_matches_migration_page() -> None:
    vec = sekai.SyncVecEnv([lambda: from_gymnasium(gym.make("Acrobot-v1")) for _ in range(4)])
    assert vec.reset(seed=0).observations.shape == (4, 6)
    vec.step(np.zeros(4, dtype=np.int64))
    vec.close()


def test_gymnasium_renderer_renders_with_the_gymnasium_envs_render() -> None:
    env = from_gymnasium(Canvas(render_mode="rgb_array"))
    env.reset(seed=0)
    frame = GymnasiumRenderer().render(env)
    assert isinstance(frame, np.ndarray)
    assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8


def test_sekai_check_env_passes_for_every_classic_gymnasium_env() -> None:
    for env_id in ("CartPole-v1", "MountainCar-v0", "Pendulum-v1", "Acrobot-v1"):
        assert sekai.check_env(from_gymnasium(gym.make(env_id)), check_determinism=True) == []


# -- results ------------------------------------------------------------------------------


def test_reset_and_step_return_sekai_results_with_python_types() -> None:
    env = from_gymnasium(Canvas())
    first = env.reset(seed=0)
    assert isinstance(first, sekai.ResetResult) and "start" in first.info
    result = env.step(1)
    assert isinstance(result, sekai.StepResult)
    assert type(result.reward) is float and result.reward == 0.5
    assert type(result.terminated) is bool and type(result.truncated) is bool


def test_dynamics_match_the_gymnasium_env() -> None:
    ours = from_gymnasium(gym.make("CartPole-v1"))
    theirs = gym.make("CartPole-v1")
    np.testing.assert_array_equal(ours.reset(seed=3).observation, theirs.reset(seed=3)[0])
    for _ in range(30):
        result = ours.step(1)
        obs, reward, terminated, truncated, _ = theirs.step(1)
        np.testing.assert_array_equal(result.observation, obs)
        assert (result.reward, result.terminated, result.truncated) == (
            reward,
            terminated,
            truncated,
        )
        if result.done:
            break


def test_sekai_wrappers_work_on_a_converted_env() -> None:
    env = sekai.RecordEpisodeStatistics(sekai.TimeLimit(from_gymnasium(Canvas()), 3))
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(0)
    assert result.info["episode"].episode_length == 3


# -- attributes reach the gymnasium env (the page: get_wrapper_attr -> get_attr) -----------


def test_get_attr_and_has_attr_reach_the_gymnasium_env_through_its_wrappers() -> None:
    env = from_gymnasium(gym.make("CartPole-v1"))
    assert env.get_attr("x_threshold") == 2.4  # on CartPoleEnv, below gymnasium's TimeLimit
    assert env.has_attr("x_threshold")
    assert env.get_attr("observation_space") is env.observation_space  # the adapter's own
    assert not env.has_attr("nope")
    with pytest.raises(AttributeError, match=r"its gymnasium env <TimeLimit.*'nope'"):
        env.get_attr("nope")


def test_set_attr_changes_the_gymnasium_env_through_sekai_wrappers() -> None:
    env = from_gymnasium(gym.make("CartPole-v1"))
    env.set_attr("x_threshold", 0.1)
    assert env.gymnasium_env.unwrapped.x_threshold == 0.1
    wrapped = sekai.TimeLimit(env, 5)
    wrapped.set_attr("x_threshold", 0.2)
    assert env.gymnasium_env.unwrapped.x_threshold == 0.2
    assert not hasattr(wrapped, "x_threshold") and not hasattr(env, "x_threshold")
    wrapped.set_attr("max_episode_steps", 7)  # a sekai layer's attribute stays its own
    assert wrapped.max_episode_steps == 7


@pytest.mark.parametrize("backend", ["sync", "proc"])
def test_vec_env_attributes_reach_from_gymnasium_sub_envs(backend: str) -> None:
    fns = [lambda: from_gymnasium(gym.make("CartPole-v1"))] * 2
    vec = sekai.SyncVecEnv(fns) if backend == "sync" else sekai.ProcVecEnv(fns, num_workers=2)
    with vec:
        assert vec.get_attr("x_threshold") == [2.4, 2.4]
        vec.set_attr("x_threshold", [2.0, 3.0])
        assert vec.get_attr("x_threshold") == [2.0, 3.0]
        assert vec.call("get_wrapper_attr", "x_threshold") == [2.0, 3.0]  # gymnasium's own view


def test_metadata_is_a_copy_of_the_gymnasium_envs() -> None:
    gym_env = Canvas()
    env = from_gymnasium(gym_env)
    assert env.metadata == Canvas.metadata
    env.metadata["render_fps"] = 1
    assert Canvas.metadata["render_fps"] == 12


def test_close_closes_the_gymnasium_env() -> None:
    gym_env = Canvas()
    from_gymnasium(gym_env).close()
    assert gym_env.closed


def test_str_names_the_gymnasium_env() -> None:
    assert str(from_gymnasium(Canvas())) == "<GymnasiumToSekai<Canvas instance>>"


# -- seeding (the page's rules) -----------------------------------------------------------


def test_int_seed_goes_straight_to_the_gymnasium_env() -> None:
    gym_env = Canvas()
    env = from_gymnasium(gym_env)
    first = env.reset(seed=11).observation
    assert gym_env.np_random_seed == 11
    expected, _ = Canvas().reset(seed=11)
    np.testing.assert_array_equal(first, expected)


def test_rng_is_the_gymnasium_envs_np_random() -> None:
    gym_env = Canvas()
    env = from_gymnasium(gym_env)
    env.reset(seed=1)
    assert env.rng is gym_env.np_random
    generator = np.random.default_rng(2)
    env.rng = generator
    assert gym_env.np_random is generator


def test_numpy_integer_seed_is_passed_on_as_an_int() -> None:
    a, b = from_gymnasium(gym.make("CartPole-v1")), from_gymnasium(gym.make("CartPole-v1"))
    np.testing.assert_array_equal(
        a.reset(seed=np.int64(4)).observation, b.reset(seed=4).observation
    )
    assert a.gymnasium_env.np_random_seed == 4


def test_generator_seed_becomes_the_gymnasium_envs_np_random() -> None:
    gym_env = Canvas()
    env = from_gymnasium(gym_env)
    generator = np.random.default_rng(9)
    obs = env.reset(seed=generator).observation
    assert gym_env.np_random is generator
    assert obs[0] == np.float32(np.random.default_rng(9).random())


def test_unseeded_resets_continue_the_stream() -> None:
    seeded, replay = from_gymnasium(Canvas()), Canvas()
    seeded.reset(seed=5)
    replay.reset(seed=5)
    np.testing.assert_array_equal(seeded.reset().observation, replay.reset()[0])


@pytest.mark.parametrize(
    ("seed", "error"), [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError)]
)
def test_invalid_seeds_are_rejected_like_sekai_seeds(seed: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        from_gymnasium(Canvas()).reset(seed=seed)


def test_set_rng_follows_sekais_rules_on_the_gymnasium_generator() -> None:
    gym_env = Canvas()
    env = from_gymnasium(gym_env)
    assert env._set_rng(3) == 3
    assert gym_env.np_random_seed == 3
    state = gym_env.np_random.bit_generator.state
    assert state == np.random.default_rng(3).bit_generator.state
    assert env._set_rng(None) == 3  # kept
    generator = np.random.default_rng(0)
    assert env._set_rng(generator) == -1
    assert gym_env.np_random is generator


def test_set_rng_none_on_a_never_seeded_env_draws_entropy() -> None:
    env = from_gymnasium(Canvas())
    assert env._set_rng(None) >= 0
    assert env._rng_seed == env.gymnasium_env.np_random_seed


def test_wrapper_rng_reaches_the_gymnasium_generator() -> None:
    gym_env = Canvas()
    wrapped = sekai.TimeLimit(from_gymnasium(gym_env), 10)
    wrapped.reset(seed=8)
    assert wrapped.rng is gym_env.np_random


# -- action masks -------------------------------------------------------------------------


def taxi() -> gym.Env[Any, Any]:
    """gymnasium's Taxi (whichever version is registered): its ``action_mask(state)`` is a
    helper that needs a state, not sekai's ``action_mask()``."""
    return gym.make(max(env_id for env_id in gym.registry if env_id.startswith("Taxi-v")))


def test_a_gymnasium_action_mask_that_takes_arguments_is_not_sekais_action_mask() -> None:
    env = from_gymnasium(taxi())
    assert sekai.check_env(env) == []
    assert not env.has_attr("action_mask")
    assert not sekai.utils.supports_action_mask(env) and sekai.get_action_mask(env) is None
    with pytest.raises(
        AttributeError,
        match=r"has action_mask\(state.*needs arguments; sekai's action_mask\(\) takes no",
    ):
        env.get_attr("action_mask")
    assert not hasattr(to_gymnasium(env), "action_masks")
    assert env.gymnasium_env.unwrapped.action_mask(0).shape == (6,)  # still gymnasium's


class Gate(Canvas):
    """A gymnasium env whose ``action_mask()`` takes no arguments, as sekai's does."""

    def action_mask(self) -> np.ndarray:
        return np.array([1, 0], dtype=np.int8)


def test_a_gymnasium_action_mask_without_arguments_is_sekais_action_mask() -> None:
    env = sekai.TimeLimit(from_gymnasium(Gate()), 5)
    env.reset(seed=0)
    assert sekai.utils.supports_action_mask(env)
    np.testing.assert_array_equal(sekai.get_action_mask(env), [1, 0])
    assert to_gymnasium(env).action_masks().tolist() == [True, False]
    assert sekai.check_env(env) == []


# -- renderer -----------------------------------------------------------------------------


def test_gymnasium_renderer_returns_text_for_an_ansi_env_through_wrappers() -> None:
    env = sekai.TimeLimit(from_gymnasium(Canvas(render_mode="ansi")), 10)
    env.reset(seed=0)
    assert GymnasiumRenderer().render(env).startswith("value=")


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_to_gymnasium_reports_the_render_mode_gymnasium_renderer_draws(mode: str) -> None:
    env = from_gymnasium(Canvas(render_mode=mode))
    gym_env = to_gymnasium(env, renderer=GymnasiumRenderer())
    gym_env.reset(seed=0)
    assert gym_env.render_mode == mode
    assert isinstance(gym_env.render(), str if mode == "ansi" else np.ndarray)
    other = "rgb_array" if mode == "ansi" else "ansi"
    with pytest.raises(ValueError, match=f"GymnasiumRenderer renders {mode!r} frames"):
        to_gymnasium(env, renderer=GymnasiumRenderer(), render_mode=other)


class Painter(gym.Env):  # type: ignore[type-arg]
    """A gymnasium env whose render() returns the frame it was given."""

    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012

    def __init__(self, frame: Any) -> None:
        self.frame, self.render_mode = frame, "rgb_array"
        self.observation_space = gym.spaces.Discrete(2)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return 0, {}

    def render(self) -> Any:
        return self.frame


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        (np.full((2, 2, 3), 0.8), r"has dtype float64; GymnasiumRenderer needs integers"),
        (np.full((2, 2, 3), 300), r"has values outside \[0, 255\] \(min 300, max 300\)"),
        (np.ones((2, 2, 5), np.uint8), r"has shape \(2, 2, 5\); GymnasiumRenderer needs"),
    ],
)
def test_gymnasium_renderer_refuses_a_frame_that_is_not_an_image(frame: Any, says: str) -> None:
    env = from_gymnasium(Painter(frame))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="^The frame of the gymnasium env .*" + says):
        GymnasiumRenderer().render(env)


def test_gymnasium_renderer_passes_integer_images_on_as_uint8() -> None:
    env = from_gymnasium(Painter(np.full((2, 2, 3), 200, dtype=np.int64)))
    env.reset(seed=0)
    frame = GymnasiumRenderer().render(env)
    assert frame.dtype == np.uint8 and (frame == 200).all()


def test_gymnasium_renderer_rejects_a_sekai_env() -> None:
    with pytest.raises(TypeError, match=r"draws envs made by sekai.compat.from_gymnasium"):
        GymnasiumRenderer().render(sekai.make("CartPole-v1"))


@pytest.mark.parametrize("order_enforcing", [True, False])
def test_gymnasium_renderer_before_reset_raises_reset_required(order_enforcing: bool) -> None:
    # Behind gym.make's OrderEnforcing, gymnasium raises its own ResetNeeded; a bare env draws
    # whatever state it has (or None): either way sekai's error.
    gym_env = Canvas("rgb_array")
    env = from_gymnasium(gym.wrappers.OrderEnforcing(gym_env) if order_enforcing else gym_env)
    with pytest.raises(sekai.ResetRequired, match=r"reset\(\) must be called before"):
        GymnasiumRenderer().render(env)
    env.reset(seed=0)
    assert GymnasiumRenderer().render(env).shape == (400, 600, 3)


def test_gymnasium_renderer_names_a_render_that_drew_nothing() -> None:
    class Blank(Canvas):
        def render(self) -> Any:
            return None

    env = from_gymnasium(Blank("rgb_array"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"drew no frame: its render\(\) returned None"):
        GymnasiumRenderer().render(env)


def test_gymnasium_renderer_needs_a_render_mode() -> None:
    env = from_gymnasium(Canvas())
    env.reset(seed=0)
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        GymnasiumRenderer().render(env)


def test_gymnasium_renderer_works_with_record_frames() -> None:
    env = sekai.rendering.RecordFrames(from_gymnasium(Canvas("rgb_array")), GymnasiumRenderer())
    env.reset(seed=0)
    env.step(0)
    assert len(env.frames) == 2


# -- errors and round trips ---------------------------------------------------------------


def test_from_gymnasium_rejects_a_sekai_env() -> None:
    with pytest.raises(TypeError, match=r"expects a gymnasium.Env, got .*already is a sekai env"):
        from_gymnasium(sekai.make("CartPole-v1"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "hint"),
    [
        (
            lambda: gym.make_vec("CartPole-v1", 2, vectorization_mode="sync"),
            "from_gymnasium_vector",
        ),
        (lambda: type("Duel", (ParallelEnv,), {})(), r"ParallelEnv, use from_pettingzoo\(\)"),
        (
            lambda: type("Duel", (AECEnv,), {})(),
            r"from_pettingzoo\(pettingzoo.utils.aec_to_parallel\(env\)\)",
        ),
    ],
    ids=["vector", "parallel", "aec"],
)
def test_from_gymnasium_names_the_bridge_for_other_gymnasium_and_pettingzoo_envs(
    make: Any, hint: str
) -> None:
    env = make()
    with pytest.raises(
        TypeError, match=f"expects a gymnasium.Env, got {type(env).__name__}. .*{hint}"
    ):
        from_gymnasium(env)


def test_from_gymnasium_rejects_spaces_sekai_lacks() -> None:
    class Texty(Canvas):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = gym.spaces.Text(5)  # type: ignore[assignment]

    with pytest.raises(TypeError, match="Text"):
        from_gymnasium(Texty())


@pytest.mark.parametrize("which", ["observation", "action"])
def test_from_gymnasium_names_which_space_it_cannot_convert(which: str) -> None:
    """A bool Box is legal in gymnasium: the error says which space, and what to do."""

    class Bools(Canvas):
        def __init__(self) -> None:
            super().__init__()
            setattr(self, f"{which}_space", gym.spaces.Box(0, 1, (3,), dtype=bool))

    with pytest.raises(TypeError) as error:
        from_gymnasium(Bools())
    message = str(error.value)
    assert message.startswith(f"from_gymnasium(): cannot convert the {which} space of <Bools")
    assert "gymnasium's Box(False, True, (3,), bool)" in message
    assert "DtypeObservation(env, np.int8)" in message and "ActionWrapper" in message


def test_a_bool_box_env_converts_after_gymnasiums_dtype_wrapper() -> None:
    class Bools(Canvas):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = gym.spaces.Box(0, 1, (3,), dtype=bool)

    env = from_gymnasium(gym.wrappers.DtypeObservation(Bools(), np.int8))
    assert env.observation_space == sekai.Box(0, 1, (3,), np.int8)


def test_round_trip_through_both_bridges_keeps_the_dynamics() -> None:
    env = from_gymnasium(to_gymnasium(sekai.make("Pendulum-v1")))
    direct = sekai.make("Pendulum-v1")
    assert isinstance(env, GymnasiumToSekai)
    assert env.observation_space == direct.observation_space
    np.testing.assert_array_equal(env.reset(seed=2).observation, direct.reset(seed=2).observation)
    action = np.array([0.5], np.float32)
    np.testing.assert_array_equal(env.step(action).observation, direct.step(action).observation)
