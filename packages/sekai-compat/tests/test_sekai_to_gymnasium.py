"""to_gymnasium / SekaiToGymnasium: the migration page, results, seeding, rendering, masks."""

from __future__ import annotations

import re
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from numpy.typing import NDArray

import sekai
from sekai.compat import SekaiToGymnasium, to_gymnasium
from sekai.envs.classic_control import CartPoleRenderer
from sekai.rendering import BaseRenderer

# Advice both checkers give for sound envs (unbounded Box entries, Box action ranges, the 2-D
# "returns" entry, no gymnasium registry spec): everything else they warn about is a failure.
BENIGN_WARNINGS = re.compile(
    r"infinity|not having a spec|symmetric and normalized|unconventional shape"
)
NEEDS_FLATTENING = {"Market-v0", "LimitOrderBook-v0"}  # a MaskedBox inside a Dict (page)


def sb3_check_env() -> Any:
    """SB3's check_env. The dev venv has no SB3, so its tests skip there and the rest of this
    module still runs; the nox session installs SB3 and runs them."""
    return pytest.importorskip("stable_baselines3.common.env_checker").check_env


def run_checker(check: Any, env: Any) -> None:
    """Run gymnasium's or SB3's check_env; fail on any warning that is not benign advice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(env)
    serious = [str(w.message) for w in caught if not BENIGN_WARNINGS.search(str(w.message))]
    assert serious == []


class MaskedPick(sekai.Env[NDArray[np.float32], Any]):
    """Pick an allowed action; taking a masked one raises InvalidAction.

    The mask (what ``action_mask()`` returns) changes every step and is part of the observation,
    so a policy can learn it.
    """

    def __init__(self, multi: bool = False) -> None:
        self.multi = multi
        self.action_space = sekai.MultiDiscrete([6, 6, 3]) if multi else sekai.Discrete(4)
        self.observation_space = sekai.Box(0.0, 1.0, shape=(4,))
        self.allowed = np.ones(4, dtype=np.int8)
        self.t = 0

    def action_mask(self) -> Any:
        if self.multi:
            return (np.ones(6, np.int8), np.array([1, 0, 1, 0, 1, 0], np.int8), self.allowed[:3])
        return self.allowed.copy()

    def _draw(self) -> NDArray[np.float32]:
        self.allowed = (self.rng.random(4) < 0.5).astype(np.int8)
        self.allowed[self.rng.integers(3)] = 1  # at least one, also among the first three
        return self.allowed.astype(np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(self._draw(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        mask = self.action_mask()
        if self.multi:
            ok = all(m[int(a)] == 1 for m, a in zip(mask, np.asarray(action)))
        else:
            ok = mask[int(action)] == 1
        if not ok:
            raise sekai.InvalidAction(action, self.action_space)
        self.t += 1
        return sekai.StepResult(self._draw(), 1.0, False, self.t >= 20, {})


# -- the migration page -------------------------------------------------------------------


def test_portfolio_through_to_gymnasium_matches_migration_page() -> None:
    gym_env = to_gymnasium(sekai.make("Portfolio-v0"))
    assert type(gym_env).__name__ == "SekaiToGymnasium"
    assert str(gym_env.action_space) == "Box(0.0, 1.0, (6,), float32)"
    obs, info = gym_env.reset(seed=0)
    assert sorted(obs) == ["returns", "weights"]
    assert isinstance(info, dict)
    run_checker(gym_check_env, gym_env)


def test_rescaled_small_portfolio_passes_sb3_check_env_as_on_migration_page() -> None:
    portfolio = sekai.make("Portfolio-v0", n_assets=3, episode_length=63)
    run_checker(sb3_check_env(), to_gymnasium(sekai.RescaleAction(portfolio, -1.0, 1.0)))


def test_cartpole_renderer_gives_rgb_array_mode_and_metadata_of_migration_page() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer())
    gym_env.reset(seed=0)
    frame = gym_env.render()
    assert gym_env.render_mode == "rgb_array"
    assert isinstance(frame, np.ndarray) and frame.shape == (400, 600, 3)
    assert gym_env.metadata == {"render_modes": ["rgb_array"], "render_fps": 50}


def test_gymnasium_flatten_observation_matches_sekai_flatten_observation() -> None:
    theirs = gym.wrappers.FlattenObservation(to_gymnasium(sekai.make("Portfolio-v0")))
    ours = to_gymnasium(sekai.FlattenObservation(sekai.make("Portfolio-v0")))
    assert isinstance(ours.observation_space, gym.spaces.Box)
    np.testing.assert_array_equal(theirs.reset(seed=3)[0], ours.reset(seed=3)[0])


# -- every registered env passes both checkers --------------------------------------------


def registered_ids() -> list[str]:
    return [spec.id for spec in sekai.all_specs()]


def converted(env_id: str) -> SekaiToGymnasium:
    env = sekai.make(env_id)
    if env_id.split("/")[-1] in NEEDS_FLATTENING:
        env = sekai.FlattenObservation(env)
    return to_gymnasium(env)


@pytest.mark.parametrize("env_id", registered_ids())
def test_every_registered_env_passes_gymnasium_check_env(env_id: str) -> None:
    run_checker(gym_check_env, converted(env_id))


@pytest.mark.parametrize("env_id", registered_ids())
def test_every_registered_env_passes_sb3_check_env(env_id: str) -> None:
    run_checker(sb3_check_env(), converted(env_id))


# -- results and seeding ------------------------------------------------------------------


def test_reset_and_step_return_gymnasium_tuples_with_python_types() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    obs, info = gym_env.reset(seed=0)
    assert isinstance(obs, np.ndarray) and info == {}
    obs, reward, terminated, truncated, info = gym_env.step(0)
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert info == {"elapsed_steps": 1}


def test_seeds_pass_through_so_dynamics_match_gymnasium_cartpole() -> None:
    ours = to_gymnasium(sekai.make("CartPole-v1"))
    theirs = gym.make("CartPole-v1")
    actions = np.random.default_rng(0).integers(0, 2, size=200)
    for seed in (0, 7):
        np.testing.assert_array_equal(ours.reset(seed=seed)[0], theirs.reset(seed=seed)[0])
        for action in actions:
            a, b = ours.step(int(action)), theirs.step(int(action))
            np.testing.assert_array_equal(a[0], b[0])
            assert a[1:4] == b[1:4]
            if a[2] or a[3]:
                break


def test_reset_options_reach_the_sekai_env() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    obs, _ = gym_env.reset(seed=0, options={"low": 0.01, "high": 0.01})
    np.testing.assert_allclose(obs, 0.01)


def test_np_random_is_the_sekai_envs_rng() -> None:
    env = sekai.make("CartPole-v1")
    gym_env = to_gymnasium(env)
    gym_env.reset(seed=5)
    assert gym_env.np_random is env.rng
    assert gym_env.unwrapped._np_random is env.rng
    assert gym_env.np_random_seed == 5
    generator = np.random.default_rng(1)
    gym_env.np_random = generator
    assert env.rng is generator
    assert gym_env.np_random_seed == -1


def test_reset_with_unseeded_env_gives_an_entropy_seed() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    assert gym_env.np_random_seed >= 0


# -- attributes through the sekai stack ---------------------------------------------------


def test_get_wrapper_attr_reaches_base_env_through_sekai_wrappers() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    assert gym_env.get_wrapper_attr("x_threshold") == 2.4
    assert gym_env.has_wrapper_attr("max_episode_steps")
    assert not gym_env.has_wrapper_attr("nope")
    assert gym_env.get_wrapper_attr("render_mode") is None  # the bridge's own attribute


def test_set_wrapper_attr_changes_the_sekai_layer_that_has_it() -> None:
    env = sekai.make("CartPole-v1")
    gym_env = to_gymnasium(env)
    assert gym_env.set_wrapper_attr("x_threshold", 1.0)
    assert env.unwrapped.x_threshold == 1.0  # type: ignore[attr-defined]
    assert not gym_env.set_wrapper_attr("brand_new", 1, force=False)


def test_str_names_the_sekai_env() -> None:
    assert (
        str(to_gymnasium(sekai.make("CartPole-v1")))
        == "<SekaiToGymnasium<TimeLimit(<CartPole-v1>)>>"
    )


# -- action masks -------------------------------------------------------------------------


def test_action_masks_is_absent_without_action_mask() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    assert not hasattr(gym_env, "action_masks")
    with pytest.raises(AttributeError, match="defines no action_mask"):
        gym_env.action_masks()


def test_action_masks_flattens_a_discrete_mask_to_bool() -> None:
    env = MaskedPick()
    gym_env = to_gymnasium(env)
    gym_env.reset(seed=0)
    masks = gym_env.action_masks()
    assert masks.dtype == np.bool_
    np.testing.assert_array_equal(masks, env.allowed == 1)


def test_action_masks_flattens_a_multi_discrete_tuple_mask_through_wrappers() -> None:
    env = MaskedPick(multi=True)
    gym_env = to_gymnasium(sekai.FlattenObservation(sekai.TimeLimit(env, 5)))
    gym_env.reset(seed=0)
    masks = gym_env.action_masks()
    assert str(gym_env.action_space) == "MultiDiscrete([6 6 3])"
    assert masks.shape == (15,) and masks.dtype == np.bool_
    np.testing.assert_array_equal(masks[6:12], [True, False, True, False, True, False])
    np.testing.assert_array_equal(masks[12:], env.allowed[:3] == 1)


def test_get_wrapper_attr_finds_action_masks_for_sb3_contrib() -> None:
    gym_env = to_gymnasium(MaskedPick())
    gym_env.reset(seed=1)
    np.testing.assert_array_equal(
        gym_env.get_wrapper_attr("action_masks")(), gym_env.action_masks()
    )


# -- rendering ----------------------------------------------------------------------------


class TextRenderer(BaseRenderer):
    """A text renderer that says so (``render_mode = "ansi"``)."""

    render_mode = "ansi"

    def __init__(self) -> None:
        self.closed = False

    def render(self, env: Any) -> str:
        return f"x={env.unwrapped.state[0]:+.3f}"

    def close(self) -> None:
        self.closed = True


def test_text_renderer_defaults_to_ansi() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=TextRenderer())
    gym_env.reset(seed=0)
    assert gym_env.render_mode == "ansi"
    assert gym_env.metadata["render_modes"] == ["ansi"]
    assert gym_env.render().startswith("x=")


def test_render_mode_ansi_can_be_given_explicitly() -> None:
    class Plain(BaseRenderer):
        def render(self, env: Any) -> str:
            return "frame"

    gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=Plain(), render_mode="ansi")
    assert gym_env.render_mode == "ansi"
    assert gym_env.render() == "frame"


@pytest.mark.parametrize("mode", ["human", "rgb_array_list", "depth_array"])
def test_other_render_modes_raise_value_error(mode: str) -> None:
    with pytest.raises(ValueError, match="supports render_mode 'rgb_array'"):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer(), render_mode=mode)


def test_human_mode_error_points_to_human_rendering() -> None:
    with pytest.raises(ValueError, match="HumanRendering"):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer(), render_mode="human")


def test_render_mode_without_renderer_raises_value_error() -> None:
    with pytest.raises(ValueError, match="no renderer"):
        to_gymnasium(sekai.make("CartPole-v1"), render_mode="rgb_array")


@pytest.mark.parametrize(
    ("env_id", "mode", "hint"),
    [
        (
            "CartPole-v1",
            "rgb_array",
            "from sekai.envs.classic_control import CartPoleRenderer; "
            "to_gymnasium(env, renderer=CartPoleRenderer()).",
        ),
        (
            "MountainCarContinuous-v0",
            "rgb_array",
            "from sekai.envs.classic_control import MountainCarRenderer; "
            "to_gymnasium(env, renderer=MountainCarRenderer()).",
        ),
        (
            "Trading-v0",
            "ansi",
            "from sekai.envs.finance import TradingTextRenderer; "
            "to_gymnasium(env, renderer=TradingTextRenderer()).",
        ),
        (
            "Trading-v0",
            "rgb_array",
            "from sekai.envs.finance import TradingRenderer; "
            "to_gymnasium(env, renderer=TradingRenderer()).",
        ),
        (
            "CartPole-v1",
            "ansi",
            "Pass a text renderer (its render(env) returns str) of this env, a "
            "sekai.rendering.Renderer: to_gymnasium(env, renderer=...).",
        ),
    ],
    ids=["cartpole", "mountain-car-continuous", "trading-text", "trading", "cartpole-text"],
)
def test_render_mode_without_renderer_names_a_renderer_of_the_env(
    env_id: str, mode: str, hint: str
) -> None:
    with pytest.raises(ValueError) as info:
        to_gymnasium(sekai.make(env_id), render_mode=mode)
    assert str(info.value) == (
        f"to_gymnasium() got render_mode={mode!r} but no renderer, so nothing could render. "
        + ("" if hint.startswith("Pass") else "Pass its renderer: ")
        + hint
    )


def test_renderer_without_render_method_raises_type_error() -> None:
    with pytest.raises(
        TypeError,
        match=r"^to_gymnasium\(\): renderer must have render\(env\) and close\(\) methods "
        r"\(a sekai\.rendering\.Renderer\), got object\.$",
    ):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=object())  # type: ignore[arg-type]


def test_a_renderer_class_is_refused_at_construction() -> None:
    # A class has render and close, so it looks like a renderer until render() is called.
    with pytest.raises(
        TypeError,
        match=r"^to_gymnasium\(\): renderer must be a renderer object, got the class "
        r"CartPoleRenderer: pass "
        r"CartPoleRenderer\(\.\.\.\)\.$",
    ):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer)  # type: ignore[arg-type]


def test_no_renderer_means_no_render_mode_and_render_returns_none() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"))
    assert gym_env.render_mode is None
    assert gym_env.metadata == {"render_modes": [], "render_fps": 50}
    assert gym_env.render() is None


def test_close_closes_env_and_renderer() -> None:
    closed: list[str] = []

    class Spy(sekai.Wrapper[Any, Any, Any, Any]):
        def close(self) -> None:
            closed.append("env")
            super().close()

    renderer = TextRenderer()
    to_gymnasium(Spy(sekai.make("CartPole-v1")), renderer=renderer).close()
    assert closed == ["env"] and renderer.closed


def test_close_closes_renderer_even_if_env_close_raises() -> None:
    class Broken(sekai.Wrapper[Any, Any, Any, Any]):
        def close(self) -> None:
            raise RuntimeError("boom")

    renderer = TextRenderer()
    with pytest.raises(RuntimeError, match="boom"):
        to_gymnasium(Broken(sekai.make("CartPole-v1")), renderer=renderer).close()
    assert renderer.closed


def test_closing_again_leaves_the_renderer_alone() -> None:
    class Once(TextRenderer):
        def close(self) -> None:
            if self.closed:
                raise RuntimeError("closed twice")
            super().close()

    gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=Once())
    gym_env.close()
    gym_env.close()
    assert gym_env.renderer is not None and gym_env.renderer.closed


def test_gymnasium_render_checker_accepts_the_converted_env() -> None:
    gym_env = to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer())
    run_checker(gym_check_env, gym_env)


# -- errors -------------------------------------------------------------------------------


def test_to_gymnasium_rejects_a_gymnasium_env() -> None:
    with pytest.raises(TypeError, match=r"expects a sekai.Env, got .*already is a gymnasium env"):
        to_gymnasium(gym.make("CartPole-v1"))  # type: ignore[arg-type]


def test_to_gymnasium_rejects_a_vec_env_pointing_to_vector_bridges() -> None:
    vec = sekai.make_vec("CartPole-v1", 2)
    with pytest.raises(TypeError, match="to_sb3"):
        to_gymnasium(vec)  # type: ignore[arg-type]
    vec.close()


def test_to_gymnasium_rejects_spaces_gymnasium_lacks() -> None:
    class Odd(sekai.Space[int]):
        def sample(self, mask: object = None) -> int:
            return 0

        def contains(self, x: object) -> bool:
            return x == 0

        @property
        def is_flattenable(self) -> bool:
            return False

    class OddEnv(sekai.Env[int, Any]):
        def __init__(self) -> None:
            self.observation_space = Odd()
            self.action_space = sekai.Discrete(2)

        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[int]:
            return sekai.ResetResult(0, {})

        def step(self, action: Any) -> sekai.StepResult[int]:
            return sekai.StepResult(0, 0.0, False, False, {})

    with pytest.raises(TypeError, match="no equivalent of Odd"):
        to_gymnasium(OddEnv())


def test_maskable_ppo_trains_on_a_converted_masked_env() -> None:
    torch = pytest.importorskip("torch")
    MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny MLPs train faster on one thread; the machine is shared
    model = MaskablePPO("MlpPolicy", to_gymnasium(MaskedPick()), n_steps=64, batch_size=64, seed=0)
    try:
        model.learn(total_timesteps=128)  # MaskedPick raises InvalidAction on a masked action
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps == 128


def test_an_explicit_render_mode_must_match_the_renderers_frames() -> None:
    with pytest.raises(ValueError, match="TextRenderer renders 'ansi' frames"):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=TextRenderer(), render_mode="rgb_array")
    with pytest.raises(ValueError, match="CartPoleRenderer renders 'rgb_array' frames"):
        to_gymnasium(sekai.make("CartPole-v1"), renderer=CartPoleRenderer(), render_mode="ansi")
    explicit = to_gymnasium(sekai.make("CartPole-v1"), renderer=TextRenderer(), render_mode="ansi")
    assert explicit.render_mode == "ansi"


def test_an_episode_of_sekais_record_episode_statistics_reads_as_gymnasiums() -> None:
    # SB3's episode logging and gymnasium code read info["episode"]["r"]; an EpisodeStats made
    # PPO.learn() on a DummyVecEnv of such envs raise TypeError after its first rollout
    env = to_gymnasium(sekai.RecordEpisodeStatistics(sekai.make("CartPole-v1")))
    reference = gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"))
    env.reset(seed=0)
    reference.reset(seed=0)
    done = False
    while not done:
        *_, terminated, truncated, info = env.step(0)
        *_, gym_terminated, gym_truncated, gym_info = reference.step(0)
        done = terminated or truncated
        assert (gym_terminated or gym_truncated) == done
        assert ("episode" in info) == done
    episode, expected = info["episode"], gym_info["episode"]
    assert episode.keys() == expected.keys() == {"r", "l", "t"}
    assert (episode["r"], episode["l"]) == (expected["r"], expected["l"]) == (11.0, 11)
    assert type(episode["r"]) is float and type(episode["l"]) is int


class Switches(sekai.Env[NDArray[np.float32], NDArray[np.int8]]):
    """MultiBinary(3) actions, checked against the space as an env may check them."""

    observation_space = sekai.Box(0.0, 3.0, shape=(1,))
    action_space = sekai.MultiBinary(3)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32))

    def step(self, action: NDArray[np.int8]) -> sekai.StepResult[Any]:
        if action not in self.action_space:
            raise sekai.InvalidAction(action, self.action_space)
        self.last = action
        return sekai.StepResult(np.full(1, action.sum(), np.float32), 0.0, False, False)


def test_a_multibinary_action_of_float_zeros_and_ones_reaches_the_env_as_its_integers() -> None:
    # gymnasium's MultiBinary contains them and SB3 sends them; sekai's refused them
    env = to_gymnasium(Switches())
    env.reset(seed=0)
    action = np.array([1.0, 0.0, 1.0], dtype=np.float32)
    assert action in env.action_space
    observation, *_ = env.step(action)
    assert observation.tolist() == [2.0] and env.unwrapped.sekai_env.last.dtype == np.int8
    with pytest.raises(sekai.InvalidAction):
        env.step(np.array([0.5, 0.0, 1.0], dtype=np.float32))  # not binary: the env judges it


class Slots(sekai.Env[NDArray[np.float32], Any]):
    """A MaskedBox action (up to 3 orders of 2 numbers), checked against the space."""

    observation_space = sekai.Box(0.0, 3.0, shape=(1,))
    action_space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32))

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action not in self.action_space:
            raise sekai.InvalidAction(action, self.action_space)
        self.last = action
        occupied = float(np.sum(action["mask"]))
        return sekai.StepResult(np.full(1, occupied, np.float32), 0.0, False, False)


def test_a_masked_box_action_sampled_from_the_gymnasium_space_reaches_the_env_as_a_member() -> None:
    # gymnasium's Dict of values and mask has any values in empty rows; sekai's MaskedBox holds
    # the fill value there, so every sample with an empty slot was refused
    env = to_gymnasium(Slots())
    env.reset(seed=0)
    values = np.array([[0.5, 0.25], [0.75, 0.75], [0.125, 1.0]], np.float32)
    action = {"values": values, "mask": np.array([1, 0, 1], np.int8)}
    assert action in env.action_space
    observation, *_ = env.step(action)
    last = env.unwrapped.sekai_env.last
    assert observation.tolist() == [2.0]
    assert last["values"].tolist() == [[0.5, 0.25], [0.0, 0.0], [0.125, 1.0]]
    assert values[1].tolist() == [0.75, 0.75]  # the caller's array is left as it was
    env.action_space.seed(0)
    for _ in range(20):
        env.step(env.action_space.sample())
    run_checker(gym_check_env, to_gymnasium(Slots()))


class NestedSwitches(sekai.Env[NDArray[np.float32], Any]):
    """MultiBinary parts inside a Dict and a Tuple action, checked against the space."""

    observation_space = sekai.Box(0.0, 3.0, shape=(1,))
    action_space = sekai.Dict(
        {
            "switches": sekai.MultiBinary(3),
            "pair": sekai.Tuple((sekai.Discrete(2), sekai.MultiBinary(2))),
            "level": sekai.Box(0.0, 1.0, shape=(1,)),
        }
    )

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32))

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action not in self.action_space:
            raise sekai.InvalidAction(action, self.action_space)
        self.last = action
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False)


def test_multibinary_parts_of_a_dict_or_tuple_action_reach_the_env_as_its_integers() -> None:
    env = to_gymnasium(NestedSwitches())
    env.reset(seed=0)
    level = np.array([0.5], np.float32)
    action = {
        "switches": np.array([1.0, 0.0, 1.0], np.float32),
        "pair": (1, np.array([0.0, 1.0])),
        "level": level,
    }
    assert action in env.action_space
    env.step(action)
    last = env.unwrapped.sekai_env.last
    assert last["switches"].dtype == last["pair"][1].dtype == np.int8
    assert last["pair"][0] == 1 and last["level"] is level  # the other parts as given
