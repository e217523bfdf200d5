"""StickyAction: repetition, private generator rules, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.core._rng import make_seed_sequence
from sekai.error import InvalidAction
from sekai.spaces import Box, Dict, Discrete, MultiDiscrete, Tuple
from sekai.wrappers import DelayAction, StickyAction


def _run(env: Any, actions: list[int], seed: Any = 0) -> list[Any]:
    env.reset(seed=seed)
    for a in actions:
        env.step(a)
    return list(env.unwrapped.actions)


def test_sticky_action_repeats_previous_action_with_probability(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=10_000), 0.25)
    actions = [i % 3 for i in range(4000)]
    executed = _run(env, actions)
    repeated = sum(e != a for e, a in zip(executed, actions))
    # A repeat changes the executed action whenever the previous executed one differs.
    assert 0.15 * len(actions) < repeated < 0.30 * len(actions)
    assert executed[0] == actions[0]


def test_sticky_action_never_repeats_first_step_after_reset(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100), 0.99)
    for seed in range(20):
        env.reset(seed=seed)
        env.step(seed % 3)
        assert env.unwrapped.actions[-1] == seed % 3


def test_sticky_action_private_generator_follows_seed_rule(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100), 0.5)
    actions = [0, 1, 2] * 10
    executed = _run(env, actions, seed=5)
    rng = np.random.default_rng(make_seed_sequence(5, 2)[1])
    expected, last = [actions[0]], actions[0]
    for a in actions[1:]:
        last = last if rng.random() < 0.5 else a
        expected.append(last)
    assert executed == expected


def test_sticky_action_never_draws_from_env_stream(toy_env: Any) -> None:
    plain, sticky = toy_env(length=100), StickyAction(toy_env(length=100), 0.5)
    plain.reset(seed=3)
    sticky.reset(seed=3)
    for _ in range(10):
        plain.step(1)
        sticky.step(1)
    assert plain.rng.random() == sticky.rng.random()


def test_sticky_action_generator_seed_spawns_independent_child(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100), 0.5)
    g = np.random.default_rng(1)
    before = np.random.default_rng(1).random()
    env.reset(seed=g)
    child = env._sticky_rng
    assert child is not g
    assert g.random() == before  # spawning drew nothing from g


def test_sticky_action_unseeded_reset_keeps_generator(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100), 0.5)
    env.reset(seed=1)
    rng = env._sticky_rng
    env.reset()
    assert env._sticky_rng is rng


def test_setting_rng_seeds_only_the_env_and_a_reset_seed_seeds_both(toy_env: Any) -> None:
    # As seeding.md says: env.rng = g (or set_attr("rng", ...)) leaves the private generator
    # as it was built; reset(seed=Generator) seeds it too, so the run replays.
    env = StickyAction(toy_env(length=100), 0.5)
    private = env._sticky_rng
    env.rng = np.random.default_rng(0)
    assert env._sticky_rng is private and env.unwrapped.rng is env.rng
    actions = [0, 1, 2] * 10
    runs = [
        _run(StickyAction(toy_env(length=100), 0.5), actions, seed=np.random.default_rng(0))
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_sticky_action_stores_copy_of_action(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100, action_space=MultiDiscrete([3])), 0.0)
    action = [1]
    env.reset(seed=0)
    env.step(action)
    action[0] = 2
    assert env._last_action == [1]


@pytest.mark.parametrize("p", [1.0, -0.1, 1.5])
def test_sticky_action_rejects_probability_outside_unit_interval(p: float, toy_env: Any) -> None:
    with pytest.raises(
        ValueError, match=rf"repeat_action_probability must be in \[0, 1\), got {p}\."
    ):
        StickyAction(toy_env(), p)


def test_an_action_the_inner_env_refused_is_never_repeated() -> None:
    from sekai.error import InvalidAction
    from sekai.testing.envs import LineEnv

    env = StickyAction(LineEnv(size=50), 0.5)
    refused = 0
    for seed in range(40):
        env.reset(seed=seed)
        env.step(1)
        try:
            env.step(7)  # refused by the inner env, unless the 1 is repeated instead
        except InvalidAction:
            refused += 1
            env.step(0)  # 1 or 0 is executed, never the refused 7
    assert refused > 5


def test_an_action_outside_the_space_is_refused_whatever_the_draw(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100), 0.9)
    for seed in range(30):
        env.reset(seed=seed)
        env.step(1)
        for bad in (5, -1, None, "a"):
            with pytest.raises(InvalidAction, match="is not valid for space Discrete"):
                env.step(bad)
    assert all(a in (0, 1, 2) for a in env.unwrapped.actions)


def test_a_box_action_is_refused_as_its_envs_refuse_it(toy_env: Any) -> None:
    env = StickyAction(toy_env(length=100, action_space=Box(-1.0, 1.0, shape=(1,))), 0.5)
    env.reset(seed=0)
    env.step(np.array([0.5], np.float32))
    env.step(np.array([3.0], np.float32))  # beyond the bounds: envs clip it
    for bad in (np.array([np.nan], np.float32), np.zeros(2), "a"):
        with pytest.raises(InvalidAction):
            env.step(bad)


def _sticky_trajectory(toy_env: Any, refused: Any, seed: int) -> list[Any]:
    """The executed actions of 12 steps, with a refused call after the third if ``refused``."""
    fail = {"on": False}

    def reward(action: Any, t: int) -> float:
        if fail["on"]:
            raise RuntimeError("refused by the env")
        return 1.0

    env = StickyAction(toy_env(length=100, reward_fn=reward), 0.5)
    env.reset(seed=seed)
    actions = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    for i, a in enumerate(actions):
        if i == 3 and refused is not None:
            fail["on"] = refused == "env"
            with pytest.raises((InvalidAction, RuntimeError)):
                env.step(7 if refused == "wrapper" else 1)
            fail["on"] = False
            if refused == "env":
                env.unwrapped.actions.pop()  # the inner env recorded the call it refused
        env.step(a)
    return list(env.unwrapped.actions)


@pytest.mark.parametrize("refused", ["wrapper", "env"])
def test_a_refused_step_uses_no_draw(toy_env: Any, refused: str) -> None:
    for seed in range(10):
        assert _sticky_trajectory(toy_env, refused, seed) == _sticky_trajectory(toy_env, None, seed)


def test_a_draw_left_by_a_refused_step_outlives_an_unseeded_reset(toy_env: Any) -> None:
    def run(refused: bool) -> list[Any]:
        env = StickyAction(toy_env(length=100), 0.5)
        env.reset(seed=4)
        env.step(0)
        if refused:
            with pytest.raises(InvalidAction):
                env.step(9)
        env.reset()
        for a in [1, 2, 0, 1, 2, 0, 1, 2]:
            env.step(a)
        return list(env.unwrapped.actions)

    assert run(True) == run(False)


@pytest.mark.parametrize("wrapper", ["sticky", "delay"])
def test_a_box_part_of_a_dict_or_tuple_action_beyond_its_bounds_passes_as_envs_clip_it(
    toy_env: Any, wrapper: str
) -> None:
    box = Box(0.0, 1.0, shape=(1,))
    cases = [
        (Dict(side=Discrete(2), size=box), {"side": 1, "size": np.array([1.5])}),
        (Tuple((Discrete(2), box)), (1, np.array([-3.0], np.float32))),
    ]
    for space, beyond in cases:
        inner = toy_env(length=100, action_space=space)
        noop = space.sample()
        env = StickyAction(inner, 0.5) if wrapper == "sticky" else DelayAction(inner, 1, noop=noop)
        env.reset(seed=0)
        for _ in range(8):  # repeated or not
            env.step(beyond)
        bad = (
            {"side": 1, "size": np.array([np.nan])}
            if isinstance(space, Dict)
            else (2, np.array([0.5], np.float32))
        )
        with pytest.raises(InvalidAction):
            env.step(bad)


def test_a_dict_action_with_other_keys_is_refused_though_its_box_is_beyond_its_bounds() -> None:
    from sekai._box_actions import checked_action

    space = Dict(side=Discrete(2), size=Box(0.0, 1.0, shape=(1,)))
    checked_action({"side": 1, "size": np.array([1.5])}, space)  # beyond the bounds: taken
    for keys in ({"side": 1, "sizes": np.array([1.5])}, {"size": np.array([1.5]), "x": 1}):
        with pytest.raises(InvalidAction):
            checked_action(keys, space)


_PAIR = Tuple((Box(-1.0, 1.0, shape=(1,)), Discrete(2)))
_OF_ANOTHER_LENGTH = [
    (np.array([5.0]),),
    [np.array([5.0])],
    (np.array([5.0]), 1, 7),
    [np.array([5.0]), 1, 7],
]


@pytest.mark.parametrize(
    "action", _OF_ANOTHER_LENGTH, ids=["short", "short-list", "long", "long-list"]
)
def test_a_tuple_action_with_another_number_of_parts_is_refused_though_its_box_is_beyond(
    action: Any,
) -> None:
    from sekai._box_actions import checked_action

    checked_action((np.array([5.0]), 1), _PAIR)  # beyond the bounds: taken
    checked_action([np.array([5.0]), 1], _PAIR)
    with pytest.raises(InvalidAction) as info:
        checked_action(action, _PAIR)
    assert info.value.action is action
    assert str(info.value) == f"Action {action!r} is not valid for space {_PAIR!r}."


@pytest.mark.parametrize("wrapper", ["sticky", "delay"])
def test_a_tuple_action_with_a_part_missing_is_refused_at_the_step_that_gives_it(
    toy_env: Any, wrapper: str
) -> None:
    inner = toy_env(length=100, action_space=_PAIR)
    noop = (np.array([0.0], np.float32), 0)
    env = StickyAction(inner, 0.5) if wrapper == "sticky" else DelayAction(inner, 2, noop=noop)
    env.reset(seed=0)
    short = (np.array([0.5], np.float32),)
    with pytest.raises(InvalidAction, match=r"^Action \(array\(\[0\.5\], dtype=float32\),\) "):
        env.step(short)
    assert inner.actions == []
    if wrapper == "delay":
        assert env.pending_actions == []
