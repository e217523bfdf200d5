"""LimitOrderBook-v0 baselines: inventory-skewed quoting and fixed quote levels."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._checks import check_count, observation_entry, require_env
from sekai.finance.baselines._evaluate import BaselinePolicy, env_attr, is_batch

__all__ = ["FixedQuotes", "InventorySkew", "lob_limits"]


def lob_limits(env: Any) -> tuple[int, int]:
    """``(max_inventory, max_quote_offset)`` of a LOB env, its vector env or the market env."""
    params = getattr(env, "params", None)
    if params is not None and hasattr(params, "max_quote_offset"):  # LimitOrderBookMarket
        return int(params.max_inventory), int(params.max_quote_offset)
    return int(env_attr(env, "max_inventory")), int(env_attr(env, "max_quote_offset"))


def _inventory(agent: Any, max_inventory: int) -> np.ndarray:
    """Inventory from the observation's ``agent`` entry (batched like the observation)."""
    scaled = np.asarray(agent, dtype=np.float64)[..., 0]
    inventory: np.ndarray = np.rint(scaled * max_inventory).astype(np.int64)
    return inventory


class InventorySkew(BaselinePolicy):
    """Quote the inventory-reducing side at the touch and step the other side back.

    With inventory ``q``: ``bid_level = min(1 + max(q, 0) // lots_per_level, K)`` and
    ``ask_level = min(1 + max(-q, 0) // lots_per_level, K)``; no market orders. A discrete
    version of Avellaneda–Stoikov's reservation price: a long book makes buying less attractive.

    Args:
        lots_per_level: inventory (lots) per tick the opposite quote steps back.
    """

    def __init__(self, lots_per_level: int = 3) -> None:
        self.lots_per_level: int = check_count("lots_per_level", lots_per_level)

    def action_for(self, inventory: Any, max_quote_offset: int) -> np.ndarray:
        """The action(s) for inventory ``q`` (any shape): int64 ``(..., 3)``."""
        q = np.asarray(inventory, dtype=np.int64)
        lots = self.lots_per_level
        bid = np.minimum(1 + np.maximum(q, 0) // lots, max_quote_offset)
        ask = np.minimum(1 + np.maximum(-q, 0) // lots, max_quote_offset)
        return np.stack([bid, ask, np.ones_like(q)], axis=-1)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env (or one trader), or a batch for a vector env."""
        require_env(self, env, "LimitOrderBook-v0")
        max_inventory, k = lob_limits(env)
        agent = observation_entry(self, observation, "agent")
        if np.ndim(agent) == 1:  # one observation: plain ints are faster than array arithmetic
            q = round(float(agent[0]) * max_inventory)
            lots = self.lots_per_level
            return np.array([min(1 + max(q, 0) // lots, k), min(1 + max(-q, 0) // lots, k), 1])
        return self.action_for(_inventory(agent, max_inventory), k)

    def __repr__(self) -> str:
        return f"InventorySkew(lots_per_level={self.lots_per_level})"


class FixedQuotes(BaselinePolicy):
    """The same action every step, e.g. ``[1, 1, 1]`` (join both sides) or ``[0, 0, 1]`` (idle).

    Args:
        bid_level, ask_level: quote levels (0 = no quote).
        market: 0 sell, 1 none, 2 buy.
    """

    def __init__(self, bid_level: int = 1, ask_level: int = 1, market: int = 1) -> None:
        bid, ask = check_count("bid_level", bid_level, 0), check_count("ask_level", ask_level, 0)
        if check_count("market", market, 0) > 2:
            raise ValueError(f"market must be 0 (sell), 1 (none) or 2 (buy), got {market}.")
        self.action = np.array([bid, ask, market], np.int64)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action, or a ``(num_envs, 3)`` batch for a vector env."""
        require_env(self, env, "LimitOrderBook-v0")
        if is_batch(env):
            batch: np.ndarray = np.tile(self.action, (env.num_envs, 1))
            return batch
        action: np.ndarray = self.action.copy()
        return action

    def __repr__(self) -> str:
        b, a, m = self.action.tolist()
        return f"FixedQuotes({b}, {a}, {m})"
