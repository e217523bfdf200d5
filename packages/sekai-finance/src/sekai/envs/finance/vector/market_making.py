"""MarketMakingVecEnv: MarketMaking-v0 for many sub-envs at once, with array operations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance.market_making import (
    MarketMakingEnv,
    _fill_probability,
    avellaneda_stoikov_quotes,
)
from sekai.envs.finance.vector._base import SessionVecEnv, param, read_only, state
from sekai.vector.native import shared

__all__ = ["MarketMakingVecEnv"]

_BOUNDS = "it fixes the bounds of the action space; build a new env"
_DERIVED = "it is derived from the other parameters (total_time / n_steps)"


class MarketMakingVecEnv(SessionVecEnv):
    """``num_envs`` market-making sessions simulated together (see ``MarketMakingEnv``).

    Parameters are shared and live on ``self.template`` (a ``MarketMakingEnv`` built from the
    same keyword arguments); state has one entry per sub-env. Actions: ``(num_envs, 2)`` bid and
    ask distances. Every sub-env draws two uniforms and one normal per step from ``self.rng``,
    so the sessions are distributed exactly as the single env's, not draw for draw.

    Args:
        num_envs: number of sub-envs.
        autoreset: reset finished sub-envs in the same step (default); False freezes them.
        max_episode_steps: truncate every sub-env after this many steps.
        **kwargs: ``MarketMakingEnv``'s keyword arguments.
    """

    single_env = MarketMakingEnv
    state_names = (
        "mid",
        "inventory",
        "cash",
        "wealth",
        "time_remaining",
        "elapsed_steps",
        "timestamp",
        "bid",
        "ask",
        "bid_filled",
        "ask_filled",
    )

    s0 = param("Initial mid price.")
    sigma = param("Volatility of the mid.")
    total_time = param("Session length.")
    n_steps = param("Decisions per session.")
    A = param("Fill intensity at distance 0.")
    k = param("Decay of the fill intensity with distance.")
    risk_aversion = param("γ of the running inventory penalty.")
    max_inventory = param("Inventory limit.")
    order_size = param("Lot size of each fill.")
    terminal_penalty = param("α of the terminal inventory penalty.")
    max_offset = read_only(_BOUNDS, "Largest quote distance.")
    dt = read_only(_DERIVED, "Step length total_time / n_steps.")

    template: MarketMakingEnv

    _mid: np.ndarray
    _inventory: np.ndarray
    _cash: np.ndarray
    _bid: np.ndarray
    _ask: np.ndarray
    _bid_filled: np.ndarray
    _ask_filled: np.ndarray

    def _allocate_state(self) -> None:
        super()._allocate_state()
        n = self.num_envs
        self._mid = np.full(n, float(self.template.s0))
        self._inventory = np.zeros(n, np.int64)
        self._cash = np.zeros(n)
        self._bid = np.full(n, np.nan)
        self._ask = np.full(n, np.nan)
        self._bid_filled = np.zeros(n, np.bool_)
        self._ask_filled = np.zeros(n, np.bool_)
        self._obs_low = np.array([-1.0, 0.0], np.float32)  # the observation space's low

    # -- state (one value per sub-env; copies) -------------------------------------------------

    mid = state("_mid", "Mid price of every sub-env.")
    inventory = state("_inventory", "Inventory of every sub-env (int64).")
    cash = state("_cash", "Cash of every sub-env.")
    bid = state("_bid", "Last step's bid price of every sub-env (NaN before the first step).")
    ask = state("_ask", "Last step's ask price of every sub-env (NaN before the first step).")
    bid_filled = state("_bid_filled", "Whether each sub-env's bid filled in the last step.")
    ask_filled = state("_ask_filled", "Whether each sub-env's ask filled in the last step.")

    @property
    def wealth(self) -> np.ndarray:
        """``cash + inventory * mid`` of every sub-env."""
        result: np.ndarray = self._cash + self._inventory * self._mid
        return result

    # -- policy helpers ------------------------------------------------------------------------

    @shared
    def fill_probability(self, offset: Any) -> float | np.ndarray:
        """Probability that a quote ``offset`` away from the mid fills within one step (a float
        for a number); ``TypeError``/``ValueError`` as ``MarketMakingEnv.fill_probability``."""
        return self.template.fill_probability(offset)

    def avellaneda_stoikov_action(self) -> np.ndarray:
        """Avellaneda–Stoikov quotes of every sub-env: float32 ``(num_envs, 2)``."""
        tpl = self.template
        return avellaneda_stoikov_quotes(
            self._inventory,
            self.time_remaining,
            tpl.sigma,
            tpl.risk_aversion,
            tpl.k,
            tpl.max_offset,
        )

    def optimal_quotes(self) -> np.ndarray:
        """Exact optimal quotes of every sub-env (the template's DP table): ``(num_envs, 2)``."""
        quotes: np.ndarray = self.template.quote_table().lookup(self._t, self._inventory)
        return quotes

    @shared
    def quote_table(self) -> Any:
        """The exact optimal-quote table for the current parameters (cached on the template)."""
        return self.template.quote_table()

    # -- NativeVecEnv hooks --------------------------------------------------------------------

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self.restart_sessions(indices)
        # Fresh arrays: infos handed out earlier may still refer to the old ones.
        self._mid = self.replace_rows(self._mid, indices, float(self.template.s0))
        self._inventory = self.replace_rows(self._inventory, indices, 0)
        self._cash = self.replace_rows(self._cash, indices, 0.0)
        self._bid = self.replace_rows(self._bid, indices, np.nan)
        self._ask = self.replace_rows(self._ask, indices, np.nan)
        self._bid_filled = self.replace_rows(self._bid_filled, indices, False)
        self._ask_filled = self.replace_rows(self._ask_filled, indices, False)

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        # Every value is the same for the sub-envs just reset: scalars are repeated for each.
        tpl = self.template
        return {
            "mid_price": float(tpl.s0),
            "inventory": 0,
            "cash": 0.0,
            "wealth": 0.0,
            "bid": math.nan,
            "ask": math.nan,
            "bid_filled": False,
            "ask_filled": False,
            "timestamp": 0.0,
            "dt": tpl.dt,
        }

    def _fresh_observation(self) -> np.ndarray:
        return np.array([0.0, 1.0], np.float32)

    def _build_observation(self) -> np.ndarray:
        p = self.template.__dict__  # the validated parameters (plain dict reads: a hot path)
        n_steps = p["_n_steps"]
        obs = np.empty((self.num_envs, 2), np.float32)
        obs[:, 0] = self._inventory / p["_max_inventory"]
        obs[:, 1] = (n_steps - self._t) / n_steps
        # Into the space, as the single env clips: a lower n_steps or max_inventory set
        # mid-episode would put the clock past the end or the inventory past the limit.
        np.clip(obs, self._obs_low, 1.0, out=obs)
        return obs

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        p = self.template.__dict__  # the validated parameters (plain dict reads: a hot path)
        n_steps, sigma, size, limit = (
            p["_n_steps"],
            p["_sigma"],
            p["_order_size"],
            p["_max_inventory"],
        )
        dt = p["_total_time"] / n_steps
        rng = self.rng
        # Same operations in the same order as MarketMakingEnv.step (bit-identical results).
        offsets = np.clip(actions.astype(np.float64), 0.0, p["_max_offset"])
        q, mid, cash = self._inventory, self._mid, self._cash
        wealth_before = cash + q * mid
        u = rng.random((self.num_envs, 2))
        z = rng.standard_normal(self.num_envs)
        filled = u < _fill_probability(offsets, p["_A"], p["_k"], dt)  # clipped: unchecked
        bid_filled = filled[:, 0] & (q <= limit - size)  # q + size could wrap in int64
        ask_filled = filled[:, 1] & (q >= size - limit)
        bid = mid - offsets[:, 0]
        ask = mid + offsets[:, 1]
        new_q = q + size * (bid_filled.astype(np.int64) - ask_filled)
        new_cash = cash - np.where(bid_filled, size * bid, 0.0)
        new_cash += np.where(ask_filled, size * ask, 0.0)
        new_mid = mid + sigma * math.sqrt(dt) * z
        rewards = (new_cash + new_q * new_mid) - wealth_before
        rewards -= 0.5 * p["_risk_aversion"] * sigma**2 * dt * new_q * new_q
        t = self._t + 1
        terminated = t >= n_steps
        if p["_terminal_penalty"]:
            rewards -= np.where(terminated, p["_terminal_penalty"] * new_q * new_q, 0.0)
        frozen = self.frozen_mask()
        if frozen is not None:
            keep = self.keep_frozen
            new_q, new_cash, new_mid = (
                keep(frozen, new_q, q),
                keep(frozen, new_cash, cash),
                keep(frozen, new_mid, mid),
            )
            bid, ask = keep(frozen, bid, self._bid), keep(frozen, ask, self._ask)
            bid_filled = keep(frozen, bid_filled, self._bid_filled)
            ask_filled = keep(frozen, ask_filled, self._ask_filled)
            t = keep(frozen, t, self._t)
        self._inventory, self._cash, self._mid, self._t = new_q, new_cash, new_mid, t
        self._bid, self._ask = bid, ask
        self._bid_filled, self._ask_filled = bid_filled, ask_filled
        infos = {
            "mid_price": new_mid,
            "inventory": new_q,
            "cash": new_cash,
            "wealth": new_cash + new_q * new_mid,
            "bid": bid,
            "ask": ask,
            "bid_filled": bid_filled,
            "ask_filled": ask_filled,
            "timestamp": t * dt,
            "dt": dt,
        }
        self._observation_ready()
        return rewards, terminated, np.zeros(self.num_envs, np.bool_), infos
