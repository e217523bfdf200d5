"""SekaiToPettingZoo: a sekai MultiAgentEnv seen as a PettingZoo ParallelEnv.

This module imports pettingzoo at the top: it is imported only by ``to_pettingzoo()`` and the
lazy ``sekai.compat.SekaiToPettingZoo`` attribute, after ``require_pettingzoo()`` succeeded.
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from sekai.compat._spaces import action_converter, convert_space, space_to_gymnasium
from sekai.core.env import Env
from sekai.core.multi_agent import MultiAgentEnv
from sekai.core.result import MAResetResult, MAStepResult

__all__ = ["SekaiToPettingZoo"]


# What PettingZoo reports of live agents only, as the sekai env may give it for another: the
# result's field, what one value is called, the plural. A zero reward tells nothing, so losing it
# loses nothing; an info always counts. Flags are not checked: an env may keep reporting a
# finished agent's terminated/truncated (flags built over possible_agents), whose end PettingZoo
# already reported when the agent left, so the flags of agents that are not live are dropped.
_PER_AGENT = (
    ("rewards", "a non-zero reward", "rewards"),
    ("info", "an info", "infos"),
)


def _check_live(
    result: MAResetResult[Any] | MAStepResult[Any], agents: list[Any], possible: list[Any]
) -> None:
    """Refuse what the sekai result gives an agent in ``possible`` that is not in ``agents``.

    Raises:
        ValueError: a non-zero reward or an info for such an agent: PettingZoo reports live
            agents only, so the bridge would lose it. Its terminated/truncated flags are dropped.
    """
    live = set(agents)
    for field, what, plural in _PER_AGENT:
        given = getattr(result, field, None)  # a reset result has an info only
        if given is None or given.keys() <= live:  # the common case: live agents only
            continue
        gone = [
            agent
            for agent, value in given.items()
            if agent not in live and agent in possible and (field == "info" or value)
        ]
        if gone:
            raise ValueError(
                f"to_pettingzoo(): the sekai env gave {what} to agent(s) {gone!r}, which are "
                f"not live in this step (live: {agents!r}); PettingZoo gives {plural} to live "
                "agents only, so it would be lost. Give it in a step in which the agent is "
                "live: at the latest, the step it leaves agents in."
            )


def _agent_infos(info: dict[Any, Any], agents: list[Any]) -> dict[Any, Any]:
    """PettingZoo's infos: one dict per agent in ``agents`` (``{}`` when sekai gave none), and
    nothing else (PettingZoo's AEC conversion refuses other keys). Keys that name no agent
    (information about the whole env) go to every agent's dict, under ``"common"``; infos of
    agents that are not live were refused by ``_check_live``.

    Raises:
        ValueError: an agent's info with its own ``"common"`` key next to env-level keys.
    """
    infos: dict[Any, Any] = {agent: info.get(agent, {}) for agent in agents}
    if info.keys() <= infos.keys():  # the common case: infos of reported agents only
        return infos
    common = {key: value for key, value in info.items() if key not in infos}
    clash = [agent for agent in agents if "common" in infos[agent]]
    if clash:
        raise ValueError(
            f"to_pettingzoo(): the sekai info has keys that name no agent ({list(common)!r}), "
            f"which go to every agent's info under 'common', but the info of agent(s) "
            f"{clash!r} already has a 'common' key."
        )
    return {agent: {**infos[agent], "common": dict(common)} for agent in agents}


def _not_multi_agent_hint(env: Any) -> str:
    """What to do with an object that is no sekai MultiAgentEnv, by what it is."""
    if isinstance(env, (ParallelEnv, AECEnv)):
        return "It already is a PettingZoo env: use it as it is."
    if isinstance(env, Env):
        return "For a single-agent sekai.Env use to_gymnasium()."
    expects = (
        "to_pettingzoo() converts a sekai env of several agents (a subclass of "
        "sekai.MultiAgentEnv, with possible_agents and per-agent spaces) into a PettingZoo "
        "ParallelEnv."
    )
    gymnasium = sys.modules.get("gymnasium")  # a gymnasium env means it is imported
    if gymnasium is not None and isinstance(env, gymnasium.Env):
        return f"It is a gymnasium env, of one agent: {expects}"
    return expects


def _to_gymnasium(space: Any, which: str) -> Any:
    return convert_space("to_pettingzoo()", space_to_gymnasium, space, f"the {which}")


class SekaiToPettingZoo(ParallelEnv):  # type: ignore[misc]  # pettingzoo is untyped
    """A sekai ``MultiAgentEnv`` as a PettingZoo ``ParallelEnv``; build it with ``to_pettingzoo()``.

    Per-agent spaces are converted once with ``space_to_gymnasium`` (so ``observation_space(a)``
    returns the same object every time, as PettingZoo requires); ``agents`` is the sekai env's
    live list. ``reset()`` needs an observation of every live agent (PettingZoo's contract);
    ``step()`` reports every agent live before it or after it (one that joined), filling in
    ``terminated`` / ``truncated`` (False), ``rewards`` (0.0) and ``infos`` (``{}``) for agents
    the sekai result leaves out, and the agent's last observation for one it gives none (a
    ValueError names an agent that never had one). A non-zero reward or an info for an agent it
    does not report raises a ValueError: PettingZoo would lose it; the flags of such an agent
    (a finished agent's, repeated) are dropped. An env
    whose agents take turns (an ``acting`` attribute: the agents whose turn it is, as
    ``LimitOrderBookMarket``) gets the actions of those agents only: PettingZoo gives one for
    every live agent, and the others' are ignored. ``infos`` are keyed by the reported agents
    only: keys of the sekai info that name no agent go to every agent's info under
    ``"common"``. ``metadata`` is
    ``{"render_modes": [], "name": <class name>, **env.metadata}``; ``np_random`` is the sekai
    env's ``rng``; ``state()`` is the sekai env's, and ``state_space`` (converted) exists when
    the sekai env has one.

    Attributes:
        sekai_env: the wrapped MultiAgentEnv.
    """

    def __init__(self, env: MultiAgentEnv[Any, Any, Any]) -> None:
        if not isinstance(env, MultiAgentEnv):
            raise TypeError(
                f"to_pettingzoo() expects a sekai.MultiAgentEnv, got {type(env).__name__}. "
                f"{_not_multi_agent_hint(env)}"
            )
        self.sekai_env = env
        self.metadata = {"render_modes": [], "name": type(env).__name__, **env.metadata}
        self.render_mode = None
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces = {
            agent: _to_gymnasium(
                env.observation_space(agent), f"observation space of agent {agent!r}"
            )
            for agent in env.possible_agents
        }
        self.action_spaces = {
            agent: _to_gymnasium(env.action_space(agent), f"action space of agent {agent!r}")
            for agent in env.possible_agents
        }
        # gymnasium's MultiBinary contains 0.0/1.0 floats (SB3 sends them), its form of a
        # MaskedBox any values in empty rows; sekai's spaces do not.
        self._convert_actions = {
            agent: convert
            for agent in env.possible_agents
            if (convert := action_converter(env.action_space(agent))) is not None
        }
        # PettingZoo's optional global state space (parallel_to_aec copies it when present).
        state_space = getattr(env, "state_space", None)
        if state_space is not None:
            self.state_space = _to_gymnasium(state_space, "state space")
        # Each agent's last observation, for the steps that give it none (PettingZoo wants one
        # for every live agent).
        self._observations: dict[Any, Any] = {}

    @property
    def agents(self) -> list[Any]:
        """The live agents (the sekai env's ``agents``)."""
        return list(self.sekai_env.agents)

    @property
    def np_random(self) -> np.random.Generator:
        """The sekai env's ``rng`` (so ``from_pettingzoo`` shares it, as ``to_gymnasium`` does)."""
        return self.sekai_env.rng

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.sekai_env.rng = value

    def observation_space(self, agent: Any) -> Any:
        """The gymnasium observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: Any) -> Any:
        """The gymnasium action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset the sekai env; return ``(observations, infos)`` keyed by agent.

        Raises:
            ValueError: the sekai env gave no observation for a live agent.
        """
        result = self.sekai_env.reset(seed=seed, options=options)
        self._observations = dict(result.observations)
        agents = self.agents
        _check_live(result, agents, self.possible_agents)
        return self._last_observations(agents, "reset()"), _agent_infos(result.info, agents)

    def step(
        self, actions: dict[Any, Any]
    ) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
        """Step the sekai env; return observations, rewards, terminations, truncations, infos.

        An agent's MultiBinary action (or MultiBinary part of a Dict or Tuple action) of
        0.0/1.0 floats, which gymnasium's space contains (SB3 sends them), reaches the sekai
        env as the space's integers, and a MaskedBox one with its empty rows set to the fill
        value, as through ``to_gymnasium``."""
        live = list(self.sekai_env.agents)
        acting = getattr(self.sekai_env, "acting", None)
        if acting is not None and isinstance(actions, dict):
            turn = set(acting)
            actions = {agent: action for agent, action in actions.items() if agent in turn}
        convert = self._convert_actions
        if convert and isinstance(actions, dict):
            actions = {
                agent: convert[agent](action) if agent in convert else action
                for agent, action in actions.items()
            }
        result = self.sekai_env.step(actions)
        self._observations.update(result.observations)
        # PettingZoo's live agents of a step: those live before it and those that joined in it.
        reported = list(dict.fromkeys(itertools.chain(live, self.sekai_env.agents)))
        _check_live(result, reported, self.possible_agents)
        return (
            self._last_observations(reported, "step()"),
            {agent: float(result.rewards.get(agent, 0.0)) for agent in reported},
            {agent: bool(result.terminated.get(agent, False)) for agent in reported},
            {agent: bool(result.truncated.get(agent, False)) for agent in reported},
            _agent_infos(result.info, reported),
        )

    def _last_observations(self, agents: list[Any], method: str) -> dict[Any, Any]:
        """The last observation of each of ``agents``; a ValueError names any never observed."""
        seen = self._observations
        try:
            return {agent: seen[agent] for agent in agents}
        except KeyError:
            missing = [agent for agent in agents if agent not in seen]
        raise ValueError(
            f"to_pettingzoo(): {type(self.sekai_env).__name__}.{method} gave no observation for "
            f"the live agent(s) {missing!r}, nor did any earlier step of this episode; a "
            "PettingZoo ParallelEnv needs one for every live agent. Return an observation for "
            "every agent in agents from reset() (those waiting for their turn included), and "
            "for an agent that joins, from the step() it joins in."
        )

    def state(self) -> np.ndarray:
        """The sekai env's global ``state()``, when it defines one (see ``state_space``)."""
        state = getattr(self.sekai_env, "state", None)
        if state is None:
            raise NotImplementedError(f"{self.sekai_env} defines no state().")
        return np.asarray(state() if callable(state) else state)

    def render(self) -> None:
        """Not supported: sekai envs have no render(); use a sekai renderer on ``sekai_env``."""
        raise NotImplementedError(
            "sekai multi-agent envs have no render(); draw env.sekai_env with a sekai renderer."
        )

    def close(self) -> None:
        """Close the sekai env."""
        self.sekai_env.close()

    @property
    def unwrapped(self) -> SekaiToPettingZoo:
        """This env (PettingZoo's unwrapped)."""
        return self

    def __str__(self) -> str:
        return str(self.metadata.get("name", type(self).__name__))
