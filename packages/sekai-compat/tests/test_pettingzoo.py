"""to_pettingzoo / from_pettingzoo: PettingZoo's parallel API test, round trips, seeding."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
from pettingzoo.utils import BaseParallelWrapper, parallel_to_aec

import sekai
from sekai.compat import PettingZooToSekai, SekaiToPettingZoo, from_pettingzoo, to_pettingzoo

AGENTS = ["a", "b", "c"]


class Countdown(sekai.MultiAgentEnv[Any, Any, str]):
    """Three agents count down from a random start; an agent's episode ends at zero.

    ``a`` and ``b`` act with Discrete(2) (1 = count down), ``c`` with a Box (positive = count
    down); ``c`` observes a Dict. Agents leave ``agents`` as they finish, so the list shrinks;
    everyone is truncated after ``max_steps``.
    """

    metadata = {"render_fps": 4}  # noqa: RUF012

    def __init__(self, max_steps: int = 12) -> None:
        self.max_steps = max_steps
        self.possible_agents = list(AGENTS)
        self.agents = []
        box = sekai.Box(0.0, 10.0, shape=(2,))
        self.observation_spaces = {
            "a": box,
            "b": box,
            "c": sekai.Dict(
                {"count": sekai.Box(0.0, 10.0, shape=(1,)), "parity": sekai.Discrete(2)}
            ),
        }
        self.action_spaces = {
            "a": sekai.Discrete(2),
            "b": sekai.Discrete(2),
            "c": sekai.Box(-1.0, 1.0, shape=(1,)),
        }
        self.counts: dict[str, int] = {}
        self.t = 0
        self.closed = False

    def _obs(self, agent: str) -> Any:
        count = self.counts[agent]
        if agent == "c":
            return {"count": np.array([count], np.float32), "parity": np.int64(count % 2)}
        return np.array([count, self.t], np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        self._set_rng(seed)
        self.agents = list(self.possible_agents)
        self.counts = {a: int(self.rng.integers(2, 6)) for a in self.agents}
        self.t = 0
        return sekai.MAResetResult(
            {a: self._obs(a) for a in self.agents},
            {a: {"start": self.counts[a]} for a in self.agents},
        )

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        self.t += 1
        rewards, terminated = {}, {}
        for agent in self.agents:
            action = actions[agent]
            push = (
                float(np.asarray(action).reshape(-1)[0]) > 0 if agent == "c" else int(action) == 1
            )
            if push:
                self.counts[agent] -= 1
            terminated[agent] = self.counts[agent] <= 0
            rewards[agent] = 1.0 if terminated[agent] else -0.1
        truncated = dict.fromkeys(self.agents, self.t >= self.max_steps)
        observations = {agent: self._obs(agent) for agent in self.agents}
        infos = {agent: {"count": self.counts[agent]} for agent in self.agents}
        self.agents = [a for a in self.agents if not (terminated[a] or truncated[a])]
        return sekai.MAStepResult(observations, rewards, terminated, truncated, infos)

    def close(self) -> None:
        self.closed = True


class Rps(ParallelEnv):  # type: ignore[misc]
    """A tiny PettingZoo parallel env: two players guess a hidden random number, 5 rounds."""

    metadata = {"render_modes": [], "name": "rps_v0"}  # noqa: RUF012

    def __init__(self) -> None:
        self.render_mode = None
        self.possible_agents = ["p0", "p1"]
        self.agents: list[str] = []
        self.np_random, _ = seeding.np_random(None)
        self.rounds = 0
        self.hidden = 0

    @functools.cache  # noqa: B019 - PettingZoo wants the same space object every call
    def observation_space(self, agent: str) -> gym.spaces.Space[Any]:
        return gym.spaces.Box(0.0, 5.0, shape=(2,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gym.spaces.Space[Any]:
        return gym.spaces.Discrete(3)

    def _obs(self) -> dict[str, Any]:
        return {a: np.array([self.rounds, self.hidden], np.float32) for a in self.agents}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.agents = list(self.possible_agents)
        self.rounds = 0
        self.hidden = int(self.np_random.integers(3))
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> Any:
        self.rounds += 1
        rewards = {a: float(int(actions[a]) == self.hidden) for a in self.agents}
        self.hidden = int(self.np_random.integers(3))
        done = self.rounds >= 5
        obs = self._obs()
        terminated = dict.fromkeys(self.agents, False)
        truncated = dict.fromkeys(self.agents, done)
        infos: dict[str, Any] = {a: {"round": self.rounds} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terminated, truncated, infos


# -- to_pettingzoo ------------------------------------------------------------------------


def test_to_pettingzoo_passes_parallel_api_test() -> None:
    parallel_api_test(to_pettingzoo(Countdown()), num_cycles=100)


def test_to_pettingzoo_passes_parallel_seed_test() -> None:
    parallel_seed_test(lambda: to_pettingzoo(Countdown()), num_cycles=20)


def test_to_pettingzoo_converts_every_agents_spaces_once() -> None:
    env = to_pettingzoo(Countdown())
    assert isinstance(env, ParallelEnv) and isinstance(env, SekaiToPettingZoo)
    assert env.possible_agents == AGENTS
    assert env.observation_space("a") is env.observation_space("a")
    assert str(env.action_space("c")) == "Box(-1.0, 1.0, (1,), float32)"
    assert list(env.observation_space("c").spaces) == ["count", "parity"]
    assert env.max_num_agents == 3


def test_to_pettingzoo_results_are_agent_keyed_tuples() -> None:
    env = to_pettingzoo(Countdown())
    observations, infos = env.reset(seed=0)
    assert set(observations) == set(AGENTS) == set(env.agents)
    assert all(observations[a] in env.observation_space(a) for a in AGENTS)
    assert infos["a"]["start"] >= 2
    actions = {"a": 1, "b": 0, "c": np.array([0.5], np.float32)}
    observations, rewards, terminated, truncated, infos = env.step(actions)
    assert set(rewards) == set(terminated) == set(truncated) == set(infos) == set(AGENTS)
    assert all(type(r) is float for r in rewards.values())
    assert all(type(t) is bool for t in terminated.values())


def test_to_pettingzoo_fills_in_flags_rewards_and_infos_sekai_left_out() -> None:
    class Sparse(Countdown):
        def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
            result = super().step(actions)
            return sekai.MAStepResult(result.observations, {"a": 2.0}, {}, {}, {})

    env = to_pettingzoo(Sparse())
    env.reset(seed=0)
    actions = dict.fromkeys(AGENTS, 0) | {"c": np.zeros(1)}
    _, rewards, terminated, truncated, infos = env.step(actions)
    assert rewards == {"a": 2.0, "b": 0.0, "c": 0.0}
    assert terminated == truncated == dict.fromkeys(AGENTS, False)
    assert infos == {a: {} for a in AGENTS}


class SharedInfo(Countdown):
    """Countdown whose info also holds a key that names no agent (about the whole env)."""

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        result = super().reset(seed=seed, options=options)
        return sekai.MAResetResult(result.observations, {**result.info, "round": 0})

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        r = super().step(actions)
        info = {**r.info, "round": self.t}
        return sekai.MAStepResult(r.observations, r.rewards, r.terminated, r.truncated, info)


def test_to_pettingzoo_infos_are_agent_keyed_with_env_level_keys_under_common() -> None:
    env = to_pettingzoo(SharedInfo())
    _, infos = env.reset(seed=0)
    assert set(infos) == set(AGENTS)
    assert infos["a"] == {"start": infos["a"]["start"], "common": {"round": 0}}
    *_, infos = env.step({"a": 1, "b": 1, "c": np.ones(1)})
    assert set(infos) == set(AGENTS) and infos["b"]["common"] == {"round": 1}
    assert infos["b"]["common"] is not infos["c"]["common"]


def test_to_pettingzoo_with_env_level_info_keys_passes_pettingzoos_aec_api_test() -> None:
    """PettingZoo's AEC conversion refuses info keys that are not live agents."""
    parallel_api_test(to_pettingzoo(SharedInfo()), num_cycles=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # its advice on agent names and spaces
        # max_steps <= 10: the observed step count stays in its Box on every path.
        api_test(parallel_to_aec(to_pettingzoo(SharedInfo(max_steps=10))), num_cycles=50)


def test_to_pettingzoo_refuses_an_info_for_an_agent_that_is_not_live() -> None:
    class Ghost(Countdown):
        def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
            r = super().step(actions)
            info = {agent: {} for agent in self.possible_agents}  # "c" has left (below)
            return sekai.MAStepResult(r.observations, r.rewards, r.terminated, r.truncated, info)

    env = to_pettingzoo(Ghost())
    env.reset(seed=0)
    env.sekai_env.agents = ["a", "b"]
    with pytest.raises(ValueError, match=r"info to agent\(s\) \['c'\], which are not live"):
        env.step({"a": 0, "b": 0})


class TeamBonus(Countdown):
    """Countdown whose steps also give ``c``, which has left (the test drops it from agents),
    the values passed in: a reward or flags paid to a gone agent."""

    def __init__(self, **late: Any) -> None:
        super().__init__()
        self.late = late

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        r = super().step(actions)
        given = {"rewards": r.rewards, "terminated": r.terminated, "truncated": r.truncated}
        given = {field: {**values, **self.late.get(field, {})} for field, values in given.items()}
        return sekai.MAStepResult(r.observations, info=r.info, **given)


def test_to_pettingzoo_refuses_a_reward_for_an_agent_that_is_not_live() -> None:
    # Before: PettingZoo's rewards left it out, and the agent's return lost it without a word.
    env = to_pettingzoo(TeamBonus(rewards={"c": 10.0}))
    env.reset(seed=0)
    env.sekai_env.agents = ["a", "b"]
    with pytest.raises(
        ValueError,
        match=re.escape(
            "to_pettingzoo(): the sekai env gave a non-zero reward to agent(s) ['c'], which are "
            "not live in this step (live: ['a', 'b']); PettingZoo gives rewards to live agents only"
        ),
    ):
        env.step({"a": 0, "b": 0})


@pytest.mark.parametrize(
    "late",
    [
        {"rewards": {"c": 0.0}, "terminated": {"c": False}, "truncated": {"c": False}},
        {"terminated": {"c": True}, "truncated": {"c": np.bool_(True)}},
    ],
)
def test_to_pettingzoo_drops_a_zero_reward_or_any_flag_for_an_agent_that_is_not_live(
    late: dict[str, Any],
) -> None:
    # A zero reward tells nothing; the flags of a finished agent may be repeated (an env may
    # report every possible agent), and PettingZoo saw the agent end when it left.
    env = to_pettingzoo(TeamBonus(**late))
    env.reset(seed=0)
    env.sekai_env.agents = ["a", "b"]
    _, rewards, terminated, truncated, _ = env.step({"a": 0, "b": 0})
    assert set(rewards) == set(terminated) == set(truncated) == {"a", "b"}


class Duel(sekai.MultiAgentEnv[Any, Any, str]):
    """``a`` is knocked out at step 1 with a final reward; everyone is truncated at step 3. The
    flags cover every possible agent, so ``a`` stays terminated after it left."""

    def __init__(self) -> None:
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []
        self.observation_spaces = {x: sekai.Box(0.0, 1.0, shape=(1,)) for x in "ab"}
        self.action_spaces = {x: sekai.Discrete(2) for x in "ab"}
        self.t = 0
        self.dead: set[str] = set()

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        self._set_rng(seed)
        self.t, self.dead, self.agents = 0, set(), ["a", "b"]
        return sekai.MAResetResult({x: np.zeros(1, np.float32) for x in self.agents}, {})

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        self.t += 1
        if self.t == 1:
            self.dead.add("a")
        self.agents = [x for x in self.possible_agents if x not in self.dead]
        observations = {x: np.zeros(1, np.float32) for x in self.agents}
        rewards = {x: float(x == "a" and self.t == 1) for x in self.possible_agents}
        terminated = {x: x in self.dead for x in self.possible_agents}
        truncated = dict.fromkeys(self.possible_agents, self.t >= 3)
        if self.t >= 3:
            self.agents = []
        return sekai.MAStepResult(observations, rewards, terminated, truncated, {})


def test_to_pettingzoo_drops_the_repeated_flags_of_a_finished_agent() -> None:
    env = to_pettingzoo(Duel())
    env.reset(seed=0)
    steps = []
    while env.agents:
        steps.append(env.step(dict.fromkeys(env.agents, 0))[1:4])
    assert steps == [
        ({"a": 1.0, "b": 0.0}, {"a": True, "b": False}, {"a": False, "b": False}),
        ({"b": 0.0}, {"b": False}, {"b": False}),
        ({"b": 0.0}, {"b": False}, {"b": True}),
    ]
    parallel_api_test(to_pettingzoo(Duel()), num_cycles=10)


def test_to_pettingzoo_refuses_to_overwrite_an_agents_common_key() -> None:
    class Clash(SharedInfo):
        def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
            r = super().step(actions)
            info = {**r.info, "a": {"common": 1}}
            return sekai.MAStepResult(r.observations, r.rewards, r.terminated, r.truncated, info)

    env = to_pettingzoo(Clash())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"\['a'\] already has a 'common' key"):
        env.step({"a": 0, "b": 0, "c": np.zeros(1)})


def test_to_pettingzoo_agents_shrink_as_agents_finish() -> None:
    env = to_pettingzoo(Countdown())
    env.reset(seed=1)
    live = list(env.agents)
    while env.agents:
        _, _, terminated, truncated, _ = env.step(
            {a: 1 if a != "c" else np.ones(1) for a in env.agents}
        )
        finished = {a for a in live if terminated[a] or truncated[a]}
        assert set(env.agents) == set(live) - finished
        live = list(env.agents)


class Turns(sekai.MultiAgentEnv[Any, Any, str]):
    """Two agents take turns (``acting``): both are observed at reset, then only the next to act
    at each step, and after four steps both are terminated with none."""

    def __init__(self) -> None:
        self.possible_agents = ["x", "y"]
        self.agents: list[str] = []
        self.observation_spaces = {a: sekai.Box(0.0, 10.0, shape=(1,)) for a in "xy"}
        self.action_spaces = {a: sekai.Discrete(2) for a in "xy"}
        self.t = 0
        self.acting: list[str] = []
        self.received: list[dict[str, Any]] = []

    def _obs(self) -> dict[str, Any]:
        return {a: np.array([self.t], np.float32) for a in self.acting}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        self._set_rng(seed)
        self.agents, self.acting, self.t = ["x", "y"], ["x"], 0
        return sekai.MAResetResult({a: np.zeros(1, np.float32) for a in self.agents}, {})

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        if set(actions) != set(self.acting):
            raise ValueError(f"step() needs one action for each of {self.acting}")
        self.received.append(dict(actions))
        self.t += 1
        over = self.t >= 4
        self.acting = [] if over else [["x", "y"][self.t % 2]]
        flags = dict.fromkeys(self.agents, over)
        if over:
            self.agents = []
        return sekai.MAStepResult(self._obs(), dict.fromkeys(flags, 1.0), flags, {}, {})


def test_to_pettingzoo_takes_turns_for_an_env_with_acting_and_observes_every_live_agent() -> None:
    sekai_env = Turns()
    env = to_pettingzoo(sekai_env)
    observations, _ = env.reset(seed=0)
    assert list(observations) == ["x", "y"]
    seen = []
    while env.agents:
        observations, _, terminated, _, _ = env.step(dict.fromkeys(env.agents, 1))
        seen.append({a: float(o[0]) for a, o in observations.items()})
    # Every live agent has one; those the env gave none keep their last.
    assert seen == [
        {"x": 0.0, "y": 1.0},
        {"x": 2.0, "y": 1.0},
        {"x": 2.0, "y": 3.0},
        {"x": 2.0, "y": 3.0},
    ]
    assert terminated == {"x": True, "y": True}
    assert sekai_env.received == [{"x": 1}, {"y": 1}, {"x": 1}, {"y": 1}]  # the others dropped


def test_to_pettingzoo_of_an_env_taking_turns_passes_parallel_api_test() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo warns of a live agent given no observation
        parallel_api_test(to_pettingzoo(Turns()), num_cycles=10)


def test_to_pettingzoo_reset_refuses_to_leave_a_live_agent_unobserved() -> None:
    class FirstMoverOnly(Turns):
        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
            super().reset(seed=seed)
            return sekai.MAResetResult(self._obs(), {})  # x only: y waits for its turn

    # PettingZoo needs an observation for every live agent, and at reset there is no last one
    # to repeat.
    with pytest.raises(
        ValueError,
        match=r"FirstMoverOnly\.reset\(\) gave no observation for the live agent\(s\) \['y'\]",
    ):
        to_pettingzoo(FirstMoverOnly()).reset(seed=0)


class Spawner(sekai.MultiAgentEnv[Any, Any, str]):
    """``a`` plays from the start, ``b`` joins at the first step; both end at the third."""

    def __init__(self, observe_newcomer: bool = True) -> None:
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []
        self.observation_spaces = {a: sekai.Box(0.0, 10.0, shape=(1,)) for a in "ab"}
        self.action_spaces = {a: sekai.Discrete(2) for a in "ab"}
        self.observe_newcomer = observe_newcomer
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        self._set_rng(seed)
        self.t, self.agents = 0, ["a"]
        return sekai.MAResetResult({"a": np.zeros(1, np.float32)}, {"a": {}})

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        self.t += 1
        live = self.agents = ["a", "b"]
        observed = live if self.observe_newcomer or self.t > 1 else ["a"]
        done = self.t >= 3
        if done:
            self.agents = []
        return sekai.MAStepResult(
            {a: np.full(1, self.t, np.float32) for a in observed},
            {a: float(self.t) for a in live},
            dict.fromkeys(live, done),
            dict.fromkeys(live, False),
            {a: {"t": self.t} for a in live},
        )


def test_to_pettingzoo_reports_an_agent_that_joins_in_a_step() -> None:
    env = to_pettingzoo(Spawner())
    env.reset(seed=0)
    observations, rewards, terminated, truncated, infos = env.step({"a": 1})
    assert list(observations) == ["a", "b"]
    assert rewards == {"a": 1.0, "b": 1.0}
    assert terminated == truncated == {"a": False, "b": False}
    assert infos == {"a": {"t": 1}, "b": {"t": 1}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(to_pettingzoo(Spawner()), num_cycles=10)
    aec = parallel_to_aec(to_pettingzoo(Spawner()))
    aec.reset(seed=0)
    for _agent in aec.agent_iter(20):
        *_, term, trunc, _ = aec.last()
        aec.step(None if term or trunc else 1)
    assert aec.agents == []


def test_to_pettingzoo_refuses_an_agent_that_joins_without_an_observation() -> None:
    env = to_pettingzoo(Spawner(observe_newcomer=False))
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"Spawner\.step\(\) gave no observation for the live agent\(s\) \['b'\]"
    ):
        env.step({"a": 1})


class Switchboard(sekai.MultiAgentEnv[Any, Any, str]):
    """``a`` acts with a MultiBinary, ``b`` with a Dict holding one; actions are checked."""

    def __init__(self) -> None:
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []
        self.observation_spaces = {agent: sekai.Discrete(2) for agent in "ab"}
        self.action_spaces = {
            "a": sekai.MultiBinary(3),
            "b": sekai.Dict({"on": sekai.MultiBinary(2), "move": sekai.Discrete(2)}),
        }
        self.last: dict[str, Any] = {}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.MAResetResult[Any]:
        self._set_rng(seed)
        self.agents = ["a", "b"]
        return sekai.MAResetResult({"a": 0, "b": 0}, {})

    def step(self, actions: dict[str, Any]) -> sekai.MAStepResult[Any]:
        for agent, action in actions.items():
            if action not in self.action_spaces[agent]:
                raise sekai.InvalidAction(action, self.action_spaces[agent], agent=agent)
        self.last = actions
        flags = {"a": False, "b": False}
        return sekai.MAStepResult({"a": 1, "b": 1}, {"a": 0.0, "b": 0.0}, flags, flags, {})


def test_to_pettingzoo_gives_multibinary_float_actions_to_the_env_as_its_integers() -> None:
    # gymnasium's MultiBinary contains 0.0/1.0 floats (SB3 sends them), as through to_gymnasium
    env = to_pettingzoo(Switchboard())
    env.reset(seed=0)
    actions = {
        "a": np.array([1.0, 0.0, 1.0], np.float32),
        "b": {"on": np.array([0.0, 1.0]), "move": 1},
    }
    assert all(actions[agent] in env.action_space(agent) for agent in actions)
    env.step(actions)
    last = env.sekai_env.last
    assert last["a"].tolist() == [1, 0, 1] and last["a"].dtype == np.int8
    assert last["b"]["on"].dtype == np.int8 and last["b"]["move"] == 1
    assert actions["a"].dtype == np.float32  # the caller's dict and arrays are left as they were
    with pytest.raises(sekai.InvalidAction, match="agent 'a'"):
        env.step({"a": np.array([0.5, 0.0, 1.0]), "b": actions["b"]})  # not binary: the env's call


def test_to_pettingzoo_gives_masked_box_actions_sampled_from_its_spaces_to_the_env() -> None:
    # the empty slots of a sample of gymnasium's Dict of values and mask hold any values
    board = Switchboard()
    board.action_spaces["b"] = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    env = to_pettingzoo(board)
    env.reset(seed=0)
    for agent in env.possible_agents:
        env.action_space(agent).seed(0)
    for _ in range(10):
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})
    assert board.last["b"] in board.action_spaces["b"]


def test_to_pettingzoo_of_a_market_whose_traders_act_at_different_times_passes_api_test() -> None:
    from sekai.envs.finance import LimitOrderBookMarket

    market = LimitOrderBookMarket(2, decision_intervals=[1.0, 2.0], session_length=20.0, warmup=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo warns of a live agent given no observation
        parallel_api_test(to_pettingzoo(market), num_cycles=30)


def test_to_pettingzoo_seeds_pass_through() -> None:
    env, direct = to_pettingzoo(Countdown()), Countdown()
    observations, _ = env.reset(seed=4)
    expected = direct.reset(seed=4).observations
    np.testing.assert_array_equal(observations["a"], expected["a"])


def test_to_pettingzoo_metadata_and_name() -> None:
    env = to_pettingzoo(Countdown())
    assert env.metadata == {"render_modes": [], "name": "Countdown", "render_fps": 4}
    assert str(env) == "Countdown"
    assert env.unwrapped is env


def test_to_pettingzoo_state_uses_the_sekai_envs_state() -> None:
    class WithState(Countdown):
        def state(self) -> Any:
            return [self.counts[a] for a in AGENTS]

    env = to_pettingzoo(WithState())
    env.reset(seed=0)
    assert env.state().shape == (3,)
    with pytest.raises(NotImplementedError, match="defines no state"):
        to_pettingzoo(Countdown()).state()


def test_global_state_and_its_space_cross_both_bridges() -> None:
    class WithState(Countdown):
        state_space = sekai.Box(0.0, 10.0, shape=(3,))

        def state(self) -> Any:
            return np.array([self.counts[a] for a in AGENTS], np.float32)

    env = to_pettingzoo(WithState())
    assert str(env.state_space) == "Box(0.0, 10.0, (3,), float32)"
    assert parallel_to_aec(env).state_space is env.state_space  # PettingZoo copies it over
    back = from_pettingzoo(env)
    assert back.state_space == WithState.state_space
    back.reset(seed=0)
    np.testing.assert_array_equal(back.state(), env.state())
    again = to_pettingzoo(back)  # PettingZoo -> sekai -> PettingZoo keeps state() too
    np.testing.assert_array_equal(again.state(), env.state())
    assert not hasattr(to_pettingzoo(Countdown()), "state_space")
    assert not hasattr(from_pettingzoo(Rps()), "state_space")
    with pytest.raises(NotImplementedError):
        from_pettingzoo(Rps()).state()


def test_to_pettingzoo_close_closes_the_sekai_env() -> None:
    inner = Countdown()
    to_pettingzoo(inner).close()
    assert inner.closed


def test_to_pettingzoo_names_the_agent_and_space_it_cannot_convert() -> None:
    class Weird(sekai.Space[int]):
        def sample(self, mask: object = None) -> int:
            return 0

        def contains(self, x: object) -> bool:
            return x == 0

        @property
        def is_flattenable(self) -> bool:
            return False

    env = Countdown()
    env.action_spaces = {**env.action_spaces, "b": Weird()}
    with pytest.raises(
        TypeError, match=r"^to_pettingzoo\(\): cannot convert the action space of agent 'b': "
    ):
        to_pettingzoo(env)


@pytest.mark.parametrize("make", [Rps, lambda: parallel_to_aec(Rps())], ids=["parallel", "aec"])
def test_to_pettingzoo_rejects_a_pettingzoo_env_saying_it_already_is_one(make: Any) -> None:
    # Before: the advice was to use to_gymnasium() for a single-agent sekai env.
    with pytest.raises(TypeError, match=r"\. It already is a PettingZoo env: use it as it is\.$"):
        to_pettingzoo(make())


def test_to_pettingzoo_rejects_a_single_agent_env() -> None:
    with pytest.raises(
        TypeError, match=r"expects a sekai.MultiAgentEnv, got TimeLimit.*to_gymnasium"
    ):
        to_pettingzoo(sekai.make("CartPole-v1"))  # type: ignore[arg-type]


_EXPECTS = (
    "to_pettingzoo() converts a sekai env of several agents (a subclass of sekai.MultiAgentEnv, "
    "with possible_agents and per-agent spaces) into a PettingZoo ParallelEnv."
)


@pytest.mark.parametrize(
    ("make", "hint"),
    [
        (
            lambda: gym.make("CartPole-v1"),
            f"TimeLimit. It is a gymnasium env, of one agent: {_EXPECTS}",
        ),
        (lambda: 3, f"int. {_EXPECTS}"),
    ],
    ids=["gymnasium", "other"],
)
def test_to_pettingzoo_rejects_a_gymnasium_env_or_other_object_saying_what_it_expects(
    make: Any, hint: str
) -> None:
    # Before: they were told to use to_gymnasium(), which refuses them too.
    with pytest.raises(TypeError) as info:
        to_pettingzoo(make())
    assert str(info.value) == f"to_pettingzoo() expects a sekai.MultiAgentEnv, got {hint}"


# -- from_pettingzoo ----------------------------------------------------------------------


def test_pettingzoo_env_round_trips_through_from_pettingzoo() -> None:
    env, direct = from_pettingzoo(Rps()), Rps()
    assert isinstance(env, sekai.MultiAgentEnv) and isinstance(env, PettingZooToSekai)
    assert env.possible_agents == ["p0", "p1"]
    assert env.observation_space("p0") == sekai.Box(0.0, 5.0, shape=(2,))
    assert env.action_space("p1") == sekai.Discrete(3)
    first = env.reset(seed=3)
    expected_obs, expected_infos = direct.reset(seed=3)
    assert isinstance(first, sekai.MAResetResult) and first.info == expected_infos
    np.testing.assert_array_equal(first.observations["p0"], expected_obs["p0"])
    actions = np.random.default_rng(0)
    while env.agents:
        joint = {a: int(actions.integers(3)) for a in env.agents}
        result = env.step(joint)
        obs, rewards, terminated, truncated, infos = direct.step(joint)
        assert isinstance(result, sekai.MAStepResult)
        assert (result.rewards, result.terminated, result.truncated, result.info) == (
            rewards,
            terminated,
            truncated,
            infos,
        )
        np.testing.assert_array_equal(result.observations["p1"], obs["p1"])
    assert result.all_done and direct.agents == []


def test_from_pettingzoo_then_to_pettingzoo_passes_parallel_api_test() -> None:
    parallel_api_test(to_pettingzoo(from_pettingzoo(Rps())), num_cycles=20)


def test_sekai_env_round_trips_through_both_bridges() -> None:
    env, direct = from_pettingzoo(to_pettingzoo(Countdown())), Countdown()
    assert env.observation_space("c") == direct.observation_space("c")
    assert env.reset(seed=2) == direct.reset(seed=2)
    while direct.agents:
        joint = {a: 1 if a != "c" else np.ones(1, np.float32) for a in direct.agents}
        assert env.step(joint) == direct.step(joint)
    assert env.agents == []


def test_from_pettingzoo_rng_is_the_pettingzoo_envs_np_random() -> None:
    inner = Rps()
    env = from_pettingzoo(inner)
    assert env.rng is inner.np_random
    generator = np.random.default_rng(0)
    env.rng = generator
    assert inner.np_random is generator


def test_from_pettingzoo_generator_seed_becomes_the_envs_np_random() -> None:
    inner, generator = Rps(), np.random.default_rng(5)
    env = from_pettingzoo(inner)
    result = env.reset(seed=generator)
    assert env.rng is generator and inner.np_random is generator
    hidden = int(np.random.default_rng(5).integers(3))  # Rps's first draw, from the Generator
    np.testing.assert_array_equal(result.observations["p0"], [0.0, hidden])


def test_from_pettingzoo_generator_seed_is_one_int_draw_for_an_env_without_np_random() -> None:
    class Unseeded(Rps):
        """Has no generator until a seeded reset makes one."""

        def __init__(self) -> None:
            super().__init__()
            self.np_random = None

    env, direct = from_pettingzoo(Unseeded()), Unseeded()
    seed = int(np.random.default_rng(5).integers(2**31))
    result = env.reset(seed=np.random.default_rng(5))
    np.testing.assert_array_equal(result.observations["p0"], direct.reset(seed=seed)[0]["p0"])


class LazyGenerator(Rps):  # type: ignore[misc]
    """Makes its np_random in reset(), the first time or when seeded (gymnasium's idiom)."""

    def __init__(self) -> None:
        super().__init__()
        del self.np_random

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None or not hasattr(self, "np_random"):
            self.np_random, _ = seeding.np_random(seed)
        return super().reset(options=options)


@pytest.mark.parametrize("make", [LazyGenerator, Rps], ids=["made-in-reset", "made-in-init"])
def test_from_pettingzoo_the_same_generator_seed_gives_the_same_episode_on_every_reset(
    make: Any,
) -> None:
    # Before: an env whose first reset made its np_random got an int drawn from the Generator
    # at that reset, and the Generator itself at later ones: another episode
    env = from_pettingzoo(make())
    first = env.reset(seed=np.random.default_rng(7))
    hidden = [int(first.observations["p0"][1])]
    hidden += [int(env.step({"p0": 0, "p1": 0}).observations["p0"][1]) for _ in range(3)]
    for _ in range(2):
        again = env.reset(seed=np.random.default_rng(7))
        assert [int(again.observations["p0"][1])] + [
            int(env.step({"p0": 0, "p1": 0}).observations["p0"][1]) for _ in range(3)
        ] == hidden


class NoGenerator(Rps):  # type: ignore[misc]
    """As PettingZoo's rock-paper-scissors: no np_random of its own, draws nothing."""

    def __init__(self) -> None:
        super().__init__()
        del self.np_random

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self.agents = list(self.possible_agents)
        self.rounds = 0
        return self._obs(), {a: {} for a in self.agents}


def test_from_pettingzoo_seeds_its_own_rng_for_an_env_without_np_random() -> None:
    env = from_pettingzoo(NoGenerator())
    expected = np.random.default_rng(3).integers(1 << 30)
    env.reset(seed=3)
    assert env.rng.integers(1 << 30) == expected
    env.reset(seed=3)
    assert env.rng.integers(1 << 30) == expected
    assert env._set_rng(None) == 3  # an unseeded reset keeps the stream, as Env's
    generator = np.random.default_rng(0)
    env.reset(seed=generator)
    assert env.rng is generator


def test_a_generator_seed_is_shared_across_both_bridges() -> None:
    env, direct = from_pettingzoo(to_pettingzoo(Countdown())), Countdown()
    generator = np.random.default_rng(3)
    assert env.reset(seed=generator) == direct.reset(seed=np.random.default_rng(3))
    assert env.rng is generator and env.pettingzoo_env.sekai_env.rng is generator


@pytest.mark.parametrize("make", [Rps, lambda: to_pettingzoo(Countdown())])
def test_from_pettingzoo_set_rng_seeds_the_generator_the_env_draws_from(make: Any) -> None:
    env = from_pettingzoo(make())
    assert env._set_rng(5) == 5
    assert env.rng is env.pettingzoo_env.np_random
    assert env.rng.integers(1000) == np.random.default_rng(5).integers(1000)
    assert env._set_rng(None) == 5  # None keeps the stream and reports its seed


def test_from_pettingzoo_passes_numpy_int_seeds_as_ints() -> None:
    env, direct = from_pettingzoo(Rps()), Rps()
    np.testing.assert_array_equal(
        env.reset(seed=np.int32(7)).observations["p0"], direct.reset(seed=7)[0]["p0"]
    )


@pytest.mark.parametrize(("seed", "error"), [(-2, ValueError), (0.5, TypeError)])
def test_from_pettingzoo_rejects_invalid_seeds(seed: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        from_pettingzoo(Rps()).reset(seed=seed)


def test_from_pettingzoo_metadata_is_copied() -> None:
    env = from_pettingzoo(Rps())
    assert env.metadata == {"render_modes": [], "name": "rps_v0"}
    assert env.metadata is not Rps.metadata


def test_from_pettingzoo_rejects_an_aec_env_pointing_to_both_converters() -> None:
    # aec_to_parallel refuses an env that does not declare is_parallelizable: turn-based ones
    # need turn_based_aec_to_parallel.
    with pytest.raises(
        TypeError,
        match=r"turn_based_aec_to_parallel\(env\).* pettingzoo\.utils\.aec_to_parallel\(env\)",
    ):
        from_pettingzoo(parallel_to_aec(Rps()))


@pytest.mark.parametrize(
    ("make", "hint"),
    [
        (Countdown, "Countdown. It already is a sekai MultiAgentEnv: use it as it is."),
        (
            lambda: sekai.make("CartPole-v1"),
            "TimeLimit. It already is a sekai env (a single-agent one): use it as it is.",
        ),
        (
            lambda: gym.make("CartPole-v1"),
            "TimeLimit. For a single-agent gymnasium env, use from_gymnasium().",
        ),
    ],
)
def test_from_pettingzoo_rejects_a_sekai_or_gymnasium_env_saying_what_it_is(
    make: Any, hint: str
) -> None:
    # Before: a sekai MultiAgentEnv got no advice.
    with pytest.raises(
        TypeError,
        match=re.escape(f"from_pettingzoo() expects a pettingzoo.ParallelEnv, got {hint}"),
    ):
        from_pettingzoo(make())


@pytest.mark.parametrize("which", ["observation", "action"])
def test_from_pettingzoo_names_the_agent_and_space_it_cannot_convert(which: str) -> None:
    class TextSpace(Rps):
        def observation_space(self, agent: str) -> gym.spaces.Space[Any]:
            if agent == "p1" and which == "observation":
                return gym.spaces.Text(8)
            return super().observation_space(agent)

        def action_space(self, agent: str) -> gym.spaces.Space[Any]:
            if agent == "p1" and which == "action":
                return gym.spaces.Text(8)
            return super().action_space(agent)

    with pytest.raises(
        TypeError,
        match=rf"^from_pettingzoo\(\): cannot convert the {which} space of agent 'p1': "
        r"space_from_gymnasium\(\) cannot convert gymnasium's Text",
    ) as caught:
        from_pettingzoo(TextSpace())
    assert isinstance(caught.value.__cause__, TypeError)


class BoolRps(Rps):  # type: ignore[misc]
    """Rps observing a bool Box, which gymnasium allows and sekai's Box does not."""

    @functools.cache  # noqa: B019
    def observation_space(self, agent: str) -> gym.spaces.Space[Any]:
        return gym.spaces.Box(0, 1, shape=(2,), dtype=bool)

    def _obs(self) -> dict[str, Any]:
        return {a: np.array([self.rounds % 2, self.hidden % 2], bool) for a in self.agents}


class IntObservations(BaseParallelWrapper):  # type: ignore[misc]
    """What from_pettingzoo's advice for a bool Box describes: the space and observations as
    int8."""

    @functools.cache  # noqa: B019
    def observation_space(self, agent: str) -> gym.spaces.Space[Any]:
        return gym.spaces.Box(0, 1, shape=self.env.observation_space(agent).shape, dtype=np.int8)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observations, infos = self.env.reset(seed=seed, options=options)
        return {a: o.astype(np.int8) for a, o in observations.items()}, infos

    def step(self, actions: dict[str, Any]) -> Any:
        observations, *rest = self.env.step(actions)
        return ({a: o.astype(np.int8) for a, o in observations.items()}, *rest)


def test_from_pettingzoo_advises_a_pettingzoo_wrapper_for_a_bool_box_and_it_works() -> None:
    # Before: the advice was gymnasium's DtypeObservation, which cannot wrap a PettingZoo env.
    with pytest.raises(TypeError) as error:
        from_pettingzoo(BoolRps())
    message = str(error.value)
    assert message.startswith(
        "from_pettingzoo(): cannot convert the observation space of agent 'p0': "
        "space_from_gymnasium() cannot convert gymnasium's Box(False, True, (2,), bool): "
        "sekai's Box takes integer and floating dtypes only, got bool. Give the PettingZoo env "
        "an integer dtype before converting it: a subclass of "
        "pettingzoo.utils.BaseParallelWrapper whose observation_space(agent) returns"
    )
    assert "gymnasium.wrappers" not in message
    env = from_pettingzoo(IntObservations(BoolRps()))
    assert env.observation_space("p0") == sekai.Box(0, 1, (2,), np.int8)
    observation = env.reset(seed=0).observations["p0"]
    assert observation.dtype == np.int8 and observation in env.observation_space("p0")


def test_from_pettingzoo_needs_possible_agents() -> None:
    class NoPossible(Rps):
        def __init__(self) -> None:
            super().__init__()
            del self.possible_agents

    with pytest.raises(ValueError, match="possible_agents"):
        from_pettingzoo(NoPossible())
