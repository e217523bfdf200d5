"""LimitOrderBookMarket: several traders quoting in one order book (a sekai.MultiAgentEnv)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.multi_agent import MultiAgentEnv
from sekai.core.result import MAResetResult, MAStepResult
from sekai.envs.finance._common import EpisodeTracking, check_int, check_real, fixed
from sekai.envs.finance._lob_session import (
    LobParams,
    LobPenalties,
    LobSession,
    check_penalties,
    decision_time,
    lob_action_space,
    lob_observation_space,
    parse_lob_action,
)
from sekai.error import InvalidAction
from sekai.finance._values import is_real, scalar
from sekai.finance.lob import OrderBook, OrderFlow

__all__ = ["LimitOrderBookMarket"]

Observation = dict[str, Any]
_SIMULTANEOUS = Fraction(1, 10**9)  # decision times this close count as the same time


def _intervals(value: Any, n: int) -> tuple[float, ...]:
    if is_real(scalar(value)):  # one number (a Decimal, a 0-d array) for every trader
        return (check_real("decision_intervals", value, "gt0"),) * n
    # One per trader: a list, or a 1-D array of any library (its items are 0-d arrays, which
    # check_real takes); a nested item is named by check_real, not by NumPy's shape error.
    listed = isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    arrayed = hasattr(value, "__len__") and getattr(value, "ndim", None) == 1
    if not (listed or arrayed) or len(value) != n:
        raise ValueError(
            f"decision_intervals must be a number > 0 or {n} numbers (one per trader), got "
            f"{value!r}."
        )
    return tuple(check_real(f"decision_intervals[{i}]", v, "gt0") for i, v in enumerate(value))


class LimitOrderBookMarket(
    LobPenalties, EpisodeTracking, MultiAgentEnv[Observation, np.ndarray, str]
):
    """Several traders make markets in one limit order book against background order flow.

    Traders ``"trader_0"``, ... decide every ``decision_intervals[i]`` time units (each wait
    scaled by a uniform factor in ``[1 - jitter, 1 + jitter]``); every trader decides at the
    session start. ``step(actions)`` takes actions for exactly the traders in ``acting``, checks
    them all, executes them in name order, ``trader_2`` before ``trader_10`` (each as in
    ``LimitOrderBook-v0``: market order, then quotes), then advances the book to the next
    decision time of any trader. It returns
    observations for the traders who act next, and rewards, flags and infos for every trader, so
    nothing earned between a trader's decisions is lost. A trader's quote can be filled by
    another trader's market order, never by its own. A decision due at or after the session end,
    or short of it by at most 1e-9 of the trader's wait (rounding: 3 x 0.7 < 2.1), is the session
    end, so one trader decides as often as ``LimitOrderBook-v0`` steps. At the session end every
    trader is terminated and ``agents`` becomes empty.

    ``decision_intervals`` and ``jitter`` are fixed at construction (read-only);
    ``inventory_penalty`` and ``terminal_penalty`` are settable, checked when set as on
    ``LimitOrderBook-v0``, and the next step uses the new value.

    Args:
        n_agents: number of traders (int >= 1).
        decision_intervals: time between a trader's decisions, one number or one per trader.
        jitter: relative randomness of each wait, ``0 <= jitter < 1``.
        flow, mid_price, session_length, levels, max_quote_offset, order_size, max_inventory,
        inventory_penalty, terminal_penalty, max_trades, warmup: as ``LimitOrderBook-v0``
        (``terminal_penalty`` is subtracted from every trader's reward on the step that ends the
        session).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}
    _penalty_id: ClassVar[str] = "LimitOrderBookMarket"

    decision_intervals = fixed("Each trader's time between decisions (a tuple, one per trader).")
    jitter = fixed("Relative randomness of each wait, in [0, 1).")

    def __init__(
        self,
        n_agents: int = 2,
        *,
        decision_intervals: float | Sequence[float] = 1.0,
        jitter: float = 0.0,
        flow: OrderFlow | None = None,
        mid_price: int = 10_000,
        session_length: float = 300.0,
        levels: int = 5,
        max_quote_offset: int = 5,
        order_size: int = 1,
        max_inventory: int = 20,
        inventory_penalty: float = 0.01,
        terminal_penalty: float = 0.0,
        max_trades: int = 16,
        warmup: float = 20.0,
    ) -> None:
        n = check_int("n_agents", n_agents)
        self._decision_intervals = _intervals(decision_intervals, n)
        self._jitter = check_real("jitter", jitter, "ge0")
        if self._jitter >= 1.0:
            raise ValueError(f"jitter must be a finite number in [0, 1), got {self._jitter!r}.")
        params = LobParams(
            flow=flow,
            mid_price=mid_price,
            session_length=session_length,
            levels=levels,
            max_quote_offset=max_quote_offset,
            order_size=order_size,
            max_inventory=max_inventory,
            inventory_penalty=inventory_penalty,
            terminal_penalty=terminal_penalty,
            max_trades=max_trades,
            warmup=warmup,
        )
        # a step lasts until the next decision: at most the shortest wait
        shortest = min(self._decision_intervals) * (1.0 + self._jitter)
        self._longest_dt = min(params.session_length, shortest)
        check_penalties(self._penalty_id, None, params, self._longest_dt)
        self._params = params
        self.core = LobSession(params, n)
        self.possible_agents = [f"trader_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        self._index = {name: i for i, name in enumerate(self.possible_agents)}
        observation_space = lob_observation_space(params.levels, params.max_trades)
        action_space = lob_action_space(params.max_quote_offset)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)
        self._n_choices = params.max_quote_offset + 1
        self._length = Fraction(params.session_length)
        self._now = Fraction(0)
        self._next = [Fraction(0)] * n  # each trader's next decision time by its own waits
        self._due = [Fraction(0)] * n  # when that decision happens: at most the session end
        self._acting: list[str] = []

    @property
    def params(self) -> LobParams:
        """The session's parameters (read them; set the penalties as attributes of the env)."""
        return self._params

    # -- state -----------------------------------------------------------------------------------

    @property
    def book(self) -> OrderBook:
        """The live order book (read it, do not send it orders)."""
        return self.core.book

    @property
    def acting(self) -> list[str]:
        """The traders whose actions the next ``step()`` needs."""
        return list(self._acting)

    @property
    def next_decision(self) -> dict[str, float]:
        """Each trader's next decision time (session time), when it happens: the session end for
        a decision due at or past it, or within 1e-9 of a wait short of it (so never past
        ``session_length``, nor before ``timestamp``)."""
        self._require_episode("next_decision")
        return {a: float(t) for a, t in zip(self.possible_agents, self._due)}

    @property
    def timestamp(self) -> float:
        """Current session time."""
        self._require_episode("timestamp")
        return float(self._now)

    @property
    def time_remaining(self) -> float:
        """Session time left (all of it before the first reset, as on LimitOrderBook-v0)."""
        return float(self._length - self._now)

    def inventory(self, agent: str) -> int:
        """Lots ``agent`` holds."""
        return self.core.traders[self._agent(agent)].inventory

    def wealth(self, agent: str) -> float:
        """``cash + inventory * mid`` of ``agent`` in ticks."""
        self._require_episode("wealth")
        return float(self.core.wealth(self.core.traders[self._agent(agent)]))

    def action_mask(self, agent: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``agent``'s mask ``(bid (K+1,), ask (K+1,), market (3,))``, as in LimitOrderBook-v0."""
        return self.core.action_mask(self.core.traders[self._agent(agent)])

    def _agent(self, agent: str) -> int:
        index = self._index.get(agent)
        if index is None:
            raise KeyError(f"unknown agent {agent!r}; the agents are {self.possible_agents}.")
        return index

    # -- episode ---------------------------------------------------------------------------------

    def _wait(self, i: int) -> Fraction:
        wait = Fraction(self._decision_intervals[i])
        if self._jitter > 0:
            wait *= Fraction(float(self.rng.uniform(1.0 - self._jitter, 1.0 + self._jitter)))
        return wait

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> MAResetResult[Observation]:
        """Seed the book, run the warm-up; every trader starts flat and decides at time 0.

        ``options`` is accepted and ignored, as PettingZoo environments do (its
        ``parallel_api_test`` resets with ``options={"options": 1}``): this env has no options.
        """
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")
        self._set_rng(seed)
        core = self.core
        core.reset(self.rng)
        self._now = Fraction(0)
        self._next = [Fraction(0)] * len(self.possible_agents)
        self._due = list(self._next)
        self.agents = list(self.possible_agents)
        self._acting = list(self.possible_agents)
        self._begin_episode()
        observations = {a: core.observe(t) for a, t in zip(self.possible_agents, core.traders)}
        infos = {}
        for agent, trader, interval in zip(
            self.possible_agents, core.traders, self._decision_intervals
        ):
            info = core.info(trader, interval)
            info["acting"] = True
            infos[agent] = info
        return MAResetResult(observations, infos)

    def step(self, actions: dict[str, np.ndarray]) -> MAStepResult[Observation]:
        """Execute the acting traders' decisions, then run the book to the next decision time."""
        self._check_can_step()
        acting = self._acting
        if not isinstance(actions, Mapping) or set(actions) != set(acting):
            # the traders in the order acting lists them, then other keys by their text (keys
            # of mixed types, e.g. trader indices, do not compare)
            known, last = self._index, len(self._index)
            given = (
                sorted(actions, key=lambda key: (known.get(key, last), str(key)))
                if isinstance(actions, Mapping)
                else type(actions).__name__
            )
            raise ValueError(
                f"step() needs one action for each acting trader {acting}, got {given}."
            )
        decisions = {}
        for a in acting:
            try:
                decisions[a] = parse_lob_action(actions[a], self._n_choices, self.action_spaces[a])
            except InvalidAction as error:
                raise InvalidAction(error.action, error.space, agent=a) from None
        core = self.core
        # In the order of possible_agents (acting keeps it): "trader_2" before "trader_10",
        # which a sort of the names as text would swap.
        for agent, decision in decisions.items():
            i = self._index[agent]
            core.decide(core.traders[i], *decision)
            wait = self._wait(i)
            self._next[i] = self._now + wait
            self._due[i] = decision_time(self._next[i], wait, self._length)
        before = self._now
        now = min(self._due)
        core.advance(self.rng, float(now))
        self._now = now
        dt = float(now - before)
        done = now >= self._length
        if done:
            self._acting = []
        else:
            self._acting = [
                a for a, t in zip(self.possible_agents, self._next) if t - now <= _SIMULTANEOUS
            ]
        observations = {a: core.observe(core.traders[self._index[a]]) for a in self._acting}
        rewards: dict[str, float] = {}
        infos: dict[str, dict[str, Any]] = {}
        acting_now = set(self._acting)
        for agent, trader in zip(self.possible_agents, core.traders):
            rewards[agent] = core.settle(trader, dt, done)
            info = core.info(trader, dt)
            info["acting"] = agent in acting_now
            infos[agent] = info
        terminated = dict.fromkeys(self.possible_agents, done)
        truncated = dict.fromkeys(self.possible_agents, False)
        self._end_step(done, False)
        if done:
            self.agents = []
        return MAStepResult(observations, rewards, terminated, truncated, infos)
