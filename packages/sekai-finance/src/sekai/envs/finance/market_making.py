"""MarketMaking-v0: quote a bid and an ask around a random mid (Avellaneda–Stoikov 2008)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import FinanceEnv, check_order_size, check_real, fixed
from sekai.envs.finance._session import (
    RewardTerm,
    box_action,
    check_reward_terms,
    param,
    session_options,
)
from sekai.finance._values import real_array
from sekai.finance.quotes import solve_optimal_quotes
from sekai.spaces import Box

__all__ = ["MarketMakingEnv", "avellaneda_stoikov_quotes", "fill_probability"]


def _fill_probability(offset: Any, A: float, k: float, dt: float) -> Any:
    """``1 - exp(-A e^{-k offset} dt)``, unchecked: the steps clip their offsets into
    ``[0, max_offset]`` first and must not pay for a check."""
    return -np.expm1(-A * np.exp(-k * np.asarray(offset, dtype=np.float64)) * dt)


def fill_probability(offset: Any, A: float, k: float, dt: float) -> float | np.ndarray:
    """Probability ``1 - exp(-A e^{-k offset} dt)`` that a quote ``offset`` away fills in a step.

    Returns:
        a float for a number (or a 0-d array), a float64 array of the same shape otherwise.

    Raises:
        TypeError: ``offset`` is not real numbers (bools, strings, objects).
        ValueError: ``offset`` is NaN or negative (offsets are distances from the mid).
    """
    distance = real_array("offset", offset)
    if np.isnan(distance).any():
        raise ValueError("offset must not be NaN (a distance from the mid, >= 0), got nan.")
    negative = distance < 0
    if negative.any():
        raise ValueError(
            f"offset must be >= 0 (a distance from the mid), got {float(distance[negative][0])!r}."
        )
    result = _fill_probability(distance, A, k, dt)
    return float(result) if distance.ndim == 0 else np.asarray(result)


def avellaneda_stoikov_quotes(
    inventory: Any, tau: Any, sigma: float, gamma: float, k: float, max_offset: float
) -> np.ndarray:
    """Avellaneda–Stoikov bid/ask distances for inventory ``q`` and time left ``tau``.

    ``s = q γ σ² τ``, ``Δ = γ σ² τ + (2/γ) ln(1 + γ/k)`` (``2/k`` when ``γ = 0``); the bid is
    ``Δ/2 + s`` and the ask ``Δ/2 - s`` below/above the mid, clipped to ``[0, max_offset]``.

    Returns:
        float32 array of shape ``(..., 2)`` (bid distance, ask distance).
    """
    q = np.asarray(inventory, dtype=np.float64)
    remaining = np.asarray(tau, dtype=np.float64)
    risk = gamma * sigma * sigma * remaining
    if gamma > 0:
        half = 0.5 * (risk + (2.0 / gamma) * math.log1p(gamma / k))
    else:
        half = np.full_like(risk, 1.0 / k)
    skew = q * risk
    quotes = np.stack([half + skew, half - skew], axis=-1)
    return np.clip(quotes, 0.0, max_offset).astype(np.float32)


def reward_values(p: Any) -> dict[str, Any]:
    """The parameters ``reward_terms`` reads, by name (``p``: the env, or its kernel's params)."""
    names = ("s0", "sigma", "total_time", "risk_aversion", "terminal_penalty", "max_offset")
    values = {name: float(getattr(p, name)) for name in names}
    return {**values, "dt": float(p.dt), "max_inventory": int(p.max_inventory)}


def reward_terms(p: Any) -> list[RewardTerm]:
    """MarketMaking-v0's reward at its worst case, term by term as the step computes them
    (``p``: the env, or its kernel's params): the inventory penalties at the inventory limit,
    and the inventory's value there at a mid 5 standard deviations of the session's noise away
    from ``s0`` (as OptimalExecution-v0's ``price_floor``) quoted ``max_offset`` further, which
    bounds ``cash + inventory * mid`` (a fill's ``order_size * price`` is no larger)."""
    v = reward_values(p)
    sigma, gamma, alpha, dt = v["sigma"], v["risk_aversion"], v["terminal_penalty"], v["dt"]
    q = float(v["max_inventory"])
    running = 0.5 * gamma * (sigma * sigma) * dt * q * q  # sigma**2 would raise OverflowError
    price = abs(v["s0"]) + 5.0 * sigma * math.sqrt(v["total_time"]) + v["max_offset"]
    penalty = "0.5 * risk_aversion * sigma**2 * dt * max_inventory**2"
    final = "terminal_penalty * max_inventory**2"
    return [
        RewardTerm("sigma**2", "sigma**2", (sigma, sigma), "sigma"),
        RewardTerm(
            "the running inventory penalty",
            penalty,
            (0.5, gamma, sigma * sigma, dt, q, q),
            "risk_aversion, sigma or max_inventory",
        ),
        RewardTerm(
            "the terminal inventory penalty",
            final,
            (alpha, q, q),
            "terminal_penalty or max_inventory",
        ),
        RewardTerm(
            "the inventory penalties",
            f"{penalty} + {final}",
            (running + alpha * q * q,),
            "risk_aversion, sigma, terminal_penalty or max_inventory",
        ),
        RewardTerm(
            "the inventory's value",
            "max_inventory * (|s0| + 5 * sigma * sqrt(total_time) + max_offset)",
            (q, price),
            "max_inventory, |s0| or sigma",
        ),
    ]


class MarketMakingEnv(FinanceEnv[np.ndarray, np.ndarray]):
    """Quote a bid and an ask around an arithmetic-Brownian mid and manage inventory risk.

    Each step the agent chooses the bid and ask distances from the mid. Each quote fills
    (one ``order_size`` lot) with probability ``1 - exp(-A e^{-k δ} dt)``; a side whose fill would
    take the inventory beyond ``±max_inventory`` is not quoted. The mid then moves by
    ``sigma sqrt(dt) Z``. Reward: the change of ``cash + inventory * mid`` minus
    ``risk_aversion * sigma**2 * dt * inventory**2 / 2``. The session ends after ``n_steps``.

    Args:
        s0: initial mid price (finite). sigma: mid volatility in price units per sqrt(time)
            (>= 0). total_time: session length (> 0). n_steps: decisions per session (int >= 1).
        fill_intensity: ``A``, fills per unit time at distance 0 (> 0).
        fill_decay: ``k``, decay of the fill intensity with distance (> 0).
        risk_aversion: ``γ`` of the running inventory penalty (>= 0).
        max_inventory: ``Q``, the inventory limit (int >= 1). order_size: lot size (int >= 1,
            at most ``max_inventory``: a larger lot could never fill).
        max_offset: largest quote distance; fixes the action bounds (>= 0, read-only).
        terminal_penalty: ``α``, subtracts ``α inventory**2`` at the last step (>= 0; 0 = none).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 20}

    s0 = param(None, doc="Initial mid price.")
    sigma = param("ge0", doc="Volatility of the mid (price units per sqrt(time)).")
    total_time = param("gt0", doc="Session length.")
    n_steps = param(integer=True, doc="Decisions per session.")
    A = param("gt0", doc="Fill intensity at distance 0 (fill_intensity).")
    k = param("gt0", doc="Decay of the fill intensity with distance (fill_decay).")
    risk_aversion = param("ge0", doc="γ of the running inventory penalty.")
    max_inventory = param(integer=True, doc="Inventory limit Q.")
    order_size = param(integer=True, doc="Lot size of each fill.")
    terminal_penalty = param("ge0", doc="α of the terminal inventory penalty α q².")
    max_offset = fixed("Largest quote distance; fixes the action bounds.")

    def __init__(
        self,
        *,
        s0: float = 100.0,
        sigma: float = 2.0,
        total_time: float = 1.0,
        n_steps: int = 200,
        fill_intensity: float = 140.0,
        fill_decay: float = 1.5,
        risk_aversion: float = 0.1,
        max_inventory: int = 50,
        order_size: int = 1,
        max_offset: float = 5.0,
        terminal_penalty: float = 0.0,
    ) -> None:
        cls = type(self)
        self._s0 = cls.s0.check(s0)
        self._sigma = cls.sigma.check(sigma)
        self._total_time = cls.total_time.check(total_time)
        self._n_steps = cls.n_steps.check(n_steps)
        self._A = cls.A.check(fill_intensity, "fill_intensity")
        self._k = cls.k.check(fill_decay, "fill_decay")
        self._risk_aversion = cls.risk_aversion.check(risk_aversion)
        self._max_inventory = cls.max_inventory.check(max_inventory)
        self._order_size = cls.order_size.check(order_size)
        check_order_size(self._order_size, self._max_inventory)
        self._terminal_penalty = cls.terminal_penalty.check(terminal_penalty)
        self._max_offset = check_real("max_offset", max_offset, "ge0")
        self._check_penalties(None)
        self.observation_space = Box(
            np.array([-1.0, 0.0], np.float32), np.array([1.0, 1.0], np.float32), dtype=np.float32
        )
        self.action_space = Box(0.0, self._max_offset, shape=(2,), dtype=np.float32)
        self._clear()

    def _clear(self) -> None:
        self._mid = float(self._s0)
        self._inventory = 0
        self._cash = 0.0
        self._bid = math.nan
        self._ask = math.nan
        self._bid_filled = False
        self._ask_filled = False

    def _check_penalties(self, name: str | None) -> None:
        """Refuse parameters whose reward overflows float64 at the inventory limit (``name``:
        the parameter just set; None: the constructor)."""
        check_reward_terms("MarketMaking-v0", name, reward_terms(self), reward_values(self))

    def _parameters_changed(self, name: str) -> None:
        """Called after a parameter was set: re-checks ``order_size <= max_inventory`` and the
        penalties' range (``ValueError``; ``param`` then undoes the assignment) and drops the DP
        quote table, which depends on the parameters."""
        if name in ("order_size", "max_inventory"):
            check_order_size(self._order_size, self._max_inventory)
        self._check_penalties(name)
        self.__dict__.pop("_quote_table", None)

    # -- derived state -------------------------------------------------------------------------

    @property
    def dt(self) -> float:
        """Step length ``total_time / n_steps`` (derived, read-only)."""
        return float(self._total_time / self._n_steps)

    @property
    def mid(self) -> float:
        """The current mid price (read-only: state of the simulation)."""
        return self._mid

    @property
    def inventory(self) -> int:
        """Shares held, long positive (read-only)."""
        return self._inventory

    @property
    def cash(self) -> float:
        """Cash from fills so far (read-only)."""
        return self._cash

    @property
    def bid(self) -> float:
        """The last bid quoted (NaN before the first step; read-only)."""
        return self._bid

    @property
    def ask(self) -> float:
        """The last ask quoted (NaN before the first step; read-only)."""
        return self._ask

    @property
    def bid_filled(self) -> bool:
        """Whether the last bid filled (read-only)."""
        return self._bid_filled

    @property
    def ask_filled(self) -> bool:
        """Whether the last ask filled (read-only)."""
        return self._ask_filled

    @property
    def wealth(self) -> float:
        """``cash + inventory * mid``."""
        return float(self._cash + self._inventory * self._mid)

    @property
    def time_remaining(self) -> float:
        """Session time left, ``max(n_steps - t, 0) dt``."""
        return float(max(self._n_steps - self._elapsed_steps, 0) * self.dt)

    @property
    def timestamp(self) -> float:
        """Session time of the current decision, ``t dt``."""
        self._require_episode("timestamp")
        return float(self._elapsed_steps * self.dt)

    # -- policy helpers ------------------------------------------------------------------------

    def fill_probability(self, offset: Any) -> float | np.ndarray:
        """Probability that a quote ``offset`` away from the mid fills within one step: a float
        for a number, an array for an array.

        Raises:
            TypeError: ``offset`` is not real numbers (bools, strings, objects).
            ValueError: ``offset`` is NaN or negative (a distance from the mid is >= 0).
        """
        return fill_probability(offset, self._A, self._k, self.dt)

    def avellaneda_stoikov_action(self) -> np.ndarray:
        """Avellaneda–Stoikov quotes for the current inventory and time left, float32 ``(2,)``."""
        return avellaneda_stoikov_quotes(
            self._inventory,
            self.time_remaining,
            self._sigma,
            self._risk_aversion,
            self._k,
            self._max_offset,
        )

    def optimal_quotes(self) -> np.ndarray:
        """Quotes maximising this env's expected return from the current state, float32 ``(2,)``.

        Looks ``(t, inventory)`` up in the exact dynamic-programming table of
        ``sekai.finance.quotes.solve_optimal_quotes`` (cached per parameters).
        """
        quotes: np.ndarray = self.quote_table().lookup(self._elapsed_steps, self._inventory)
        return quotes

    def quote_table(self) -> Any:
        """The exact optimal-quote table for the current parameters (cached)."""
        table = self.__dict__.get("_quote_table")
        if table is None:
            table = solve_optimal_quotes(self)
            self.__dict__["_quote_table"] = table
        return table

    # -- episode -------------------------------------------------------------------------------

    def _observation(self) -> np.ndarray:
        # Clipped into the space: n_steps or max_inventory set lower mid-episode would put the
        # clock past the end or the inventory past the limit.
        n = self._n_steps
        fill = min(max(self._inventory / self._max_inventory, -1.0), 1.0)
        remaining = max((n - self._elapsed_steps) / n, 0.0)
        return np.array([fill, remaining], np.float32)

    def _info(self) -> dict[str, Any]:
        return {
            "mid_price": float(self._mid),
            "inventory": int(self._inventory),
            "cash": float(self._cash),
            "wealth": self.wealth,
            "bid": float(self._bid),
            "ask": float(self._ask),
            "bid_filled": bool(self._bid_filled),
            "ask_filled": bool(self._ask_filled),
            "timestamp": float(self._elapsed_steps * self.dt),
            "dt": self.dt,
        }

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[np.ndarray]:
        """Start a session: mid ``s0``, no cash, no inventory."""
        session_options(options, type(self).__name__)
        self._set_rng(seed)
        self._begin_episode()
        self._clear()
        return ResetResult(self._observation(), self._info())

    def step(self, action: np.ndarray) -> StepResult[np.ndarray]:
        """Quote, fill, move the mid; reward the change of wealth minus the inventory penalty."""
        self._check_can_step()
        quotes = box_action(action, (2,), self.action_space)
        delta_bid = min(max(float(quotes[0]), 0.0), self._max_offset)
        delta_ask = min(max(float(quotes[1]), 0.0), self._max_offset)
        dt = self.dt
        size, limit, q = self._order_size, self._max_inventory, self._inventory
        mid = self._mid
        wealth_before = self._cash + q * mid
        self._bid, self._ask = mid - delta_bid, mid + delta_ask
        u = self.rng.random(2)
        # The offsets are clipped into [0, max_offset] above: the unchecked formula will do.
        fill, A, k = _fill_probability, self._A, self._k
        # q <= limit - size, as the vector envs test it: their int64 q + size would wrap past
        # 2**63 - 1 (size <= limit keeps limit - size in range).
        self._bid_filled = bool(q <= limit - size and u[0] < fill(delta_bid, A, k, dt))
        self._ask_filled = bool(q >= size - limit and u[1] < fill(delta_ask, A, k, dt))
        if self._bid_filled:
            q += size
            self._cash -= size * self._bid
        if self._ask_filled:
            q -= size
            self._cash += size * self._ask
        self._inventory = q
        self._mid = mid + self._sigma * math.sqrt(dt) * float(self.rng.standard_normal())
        reward = (self._cash + q * self._mid) - wealth_before
        reward -= 0.5 * self._risk_aversion * self._sigma**2 * dt * q * q
        terminated = self._elapsed_steps + 1 >= self._n_steps
        if terminated:
            reward -= self._terminal_penalty * q * q
        self._end_step(terminated, False)
        return StepResult(self._observation(), float(reward), terminated, False, self._info())
