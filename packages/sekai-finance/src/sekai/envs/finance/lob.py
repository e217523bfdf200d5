"""LimitOrderBook-v0: make markets in an event-driven limit order book against background flow."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import FinanceEnv, check_int, check_order_size, check_real, fixed
from sekai.envs.finance._lob_session import (
    LobParams,
    LobPenalties,
    LobSession,
    Trader,
    check_flow,
    check_flow_time,
    check_penalties,
    check_price_scale,
    lob_action_space,
    lob_observation_space,
    parse_lob_action,
    session_steps,
)
from sekai.envs.finance._session import session_options
from sekai.finance.lob import OrderBook, OrderFlow

__all__ = ["LimitOrderBookEnv"]

Observation = dict[str, Any]
_ID = "LimitOrderBook-v0"


class LimitOrderBookEnv(LobPenalties, FinanceEnv[Observation, np.ndarray]):
    """Quote in a simulated limit order book with queue priority and tick prices.

    The background flow (zero-intelligence Poisson order flow by default) runs between decisions.
    Each decision sets a bid and an ask level and may send a market order of ``order_size``
    lots: level 0 = no quote, 1 = join the best price of the other traders' orders, ``k`` =
    ``k - 1`` ticks behind it (one tick inside the opposite best when that side has no other
    orders). A quote already at its level keeps its queue position, a level-1 quote that is
    itself the best price stays put, a market order first cancels the agent's own opposite quote
    (self-trade prevention), and orders that would breach ``max_inventory`` are ignored
    (``action_mask()`` marks them). Reward: the change of ``cash + inventory * mid`` (ticks)
    minus ``inventory_penalty * inventory**2 * dt``, and on the session's last step minus
    ``terminal_penalty * inventory**2`` too. The session ends after ``n_steps``. Penalties
    under which the reward overflows float64 at its worst case are refused (``ValueError``),
    as MarketMaking-v0 refuses its own.

    Args:
        flow: the background ``OrderFlow`` (default ``ZeroIntelligenceFlow()``).
        mid_price: initial mid in ticks (int >= ``2 * (max_quote_offset + levels)``, and
            <= ``2**53 // (4 * max_inventory)``, so that prices and P&L are exact in float64).
        session_length: session duration in the flow's time units (> 0).
        decision_interval: time between decisions (> 0).
        levels: book levels observed per side (read-only).
        max_quote_offset: ``K``, the farthest quote level (read-only).
        order_size: lots per quote or market order.
        max_inventory: absolute inventory limit.
        inventory_penalty: penalty per squared lot per unit time (>= 0).
        terminal_penalty: penalty per squared lot held at the session end, subtracted from the
            last step's reward (>= 0; 0 = none).
        max_trades: how many of the trades since the previous observation are observed (the
            most recent; read-only).
        warmup: time the book evolves before the session starts (>= 0).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}
    _penalty_id: ClassVar[str] = _ID

    levels = fixed("Book levels observed per side (fixed: it sizes the observation).")
    max_quote_offset = fixed("Farthest quote level K (fixed: it sizes the action space).")
    max_trades = fixed("Recent trades observed (fixed: it sizes the observation).")
    mid_price = fixed("Initial mid price in ticks.")
    session_length = fixed("Session length (with decision_interval it fixes n_steps).")
    decision_interval = fixed("Time between decisions.")
    warmup = fixed("Time the book evolves before the session starts.")

    def __init__(
        self,
        *,
        flow: OrderFlow | None = None,
        mid_price: int = 10_000,
        session_length: float = 300.0,
        decision_interval: float = 1.0,
        levels: int = 5,
        max_quote_offset: int = 5,
        order_size: int = 1,
        max_inventory: int = 20,
        inventory_penalty: float = 0.01,
        terminal_penalty: float = 0.0,
        max_trades: int = 16,
        warmup: float = 20.0,
    ) -> None:
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
        self._decision_interval = check_real("decision_interval", decision_interval, "gt0")
        self._params = params
        self._levels = params.levels
        self._max_quote_offset = params.max_quote_offset
        self._max_trades = params.max_trades
        self._mid_price = params.mid_price
        self._session_length = params.session_length
        self._warmup = params.warmup
        self._n_steps = session_steps(params.session_length, self._decision_interval)
        # The decision times as LimitOrderBookMarket's exact clock has them: the k-th is
        # k * decision_interval (one correctly rounded float product equals the exact product
        # rounded), so every step but the last covers exactly decision_interval; the last ends
        # at session_length and covers what is left, computed exactly once here.
        self._last_dt = float(
            Fraction(params.session_length)
            - (self._n_steps - 1) * Fraction(self._decision_interval)
        )
        # a session shorter than one interval has one step, of session_length
        self._longest_dt = (
            max(self._decision_interval, self._last_dt) if self._n_steps > 1 else self._last_dt
        )
        check_penalties(_ID, None, params, self._longest_dt)
        self._dt = self._decision_interval
        self.core = LobSession(params, 1)
        self.trader: Trader = self.core.traders[0]
        self.observation_space = lob_observation_space(params.levels, params.max_trades)
        self.action_space = lob_action_space(params.max_quote_offset)
        self._n_choices = params.max_quote_offset + 1

    # -- parameters ------------------------------------------------------------------------------

    @property
    def flow(self) -> OrderFlow:
        """The background order flow (it seeds the book at each reset and drives it at every
        step, so a new flow takes over from the next step)."""
        return self._params.flow

    @flow.setter
    def flow(self, value: Any) -> None:
        flow = check_flow(value)
        check_flow_time(flow, self._params.warmup, self._params.session_length)
        self._params.flow = flow

    @property
    def order_size(self) -> int:
        """Lots per quote or market order."""
        return self._params.order_size

    @order_size.setter
    def order_size(self, value: Any) -> None:
        size = check_int("order_size", value)
        check_order_size(size, self._params.max_inventory)
        self._params.order_size = size

    @property
    def max_inventory(self) -> int:
        """Absolute inventory limit."""
        return self._params.max_inventory

    @max_inventory.setter
    def max_inventory(self, value: Any) -> None:
        limit = check_int("max_inventory", value)
        check_order_size(self._params.order_size, limit)
        check_price_scale(self._params.mid_price, limit, changed=True)
        self._set_penalised("max_inventory", limit)

    @property
    def n_steps(self) -> int:
        """Decisions per session, ``ceil(session_length / decision_interval - 1e-9)``: the last
        step ends at ``session_length`` (it is shorter when the interval does not divide it)."""
        return self._n_steps

    # -- state -----------------------------------------------------------------------------------

    @property
    def book(self) -> OrderBook:
        """The live order book (read it, do not send it orders)."""
        return self.core.book

    @property
    def inventory(self) -> int:
        """Lots held (negative = short)."""
        return self.trader.inventory

    @property
    def cash(self) -> float:
        """Cash in ticks x lots (starts at 0)."""
        return float(self.trader.cash)

    @property
    def mid(self) -> float:
        """Current mid price in ticks."""
        self._require_episode("mid")
        return self.core.mid()

    @property
    def wealth(self) -> float:
        """``cash + inventory * mid`` in ticks."""
        return float(self.trader.cash + self.trader.inventory * self.core.mid())

    @property
    def timestamp(self) -> float:
        """Session time of the current decision."""
        self._require_episode("timestamp")
        return float(self.core.time)

    @property
    def time_remaining(self) -> float:
        """Session time left."""
        return (
            float(max(self._session_length - self.core.time, 0.0))
            if self._started
            else float(self._session_length)
        )

    @property
    def dt(self) -> float:
        """As in the latest info: the time the last step covered (``decision_interval``, or
        less on a shorter last step); ``decision_interval`` after ``reset()``."""
        return self._dt

    def action_mask(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bid (K+1,), ask (K+1,), market (3,))`` int8: orders the inventory limit allows.

        At the long limit bid levels >= 1 and market buys are 0; at the short limit ask levels
        >= 1 and market sells are 0; level 0 and "no market order" are always 1.
        """
        return self.core.action_mask(self.trader)

    # -- episode ---------------------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Observation]:
        """Seed the book, run the warm-up, and start the session flat with no cash."""
        session_options(options, type(self).__name__)
        self._set_rng(seed)
        self._begin_episode()
        core = self.core
        core.reset(self.rng)
        observation = core.observe(self.trader)
        self._dt = self._decision_interval
        return ResetResult(observation, core.info(self.trader, self._dt))

    def step(self, action: np.ndarray) -> StepResult[Observation]:
        """Decide (market order, quotes), run the flow to the next decision, book the fills."""
        if self._done or not self._started:
            self._check_can_step()
        bid, ask, market = parse_lob_action(action, self._n_choices, self.action_space)
        core, trader = self.core, self.trader
        k = self._elapsed_steps
        terminated = k + 1 >= self._n_steps
        if terminated:
            end, dt = self._session_length, self._last_dt
        else:
            end, dt = (k + 1) * self._decision_interval, self._decision_interval
        core.decide(trader, bid, ask, market)
        core.advance(self.rng, end)
        self._dt = dt
        reward = core.settle(trader, dt, terminated)
        self._elapsed_steps = k + 1
        self._done = terminated
        observation = core.observe(trader)
        return StepResult(observation, reward, terminated, False, core.info(trader, dt))
