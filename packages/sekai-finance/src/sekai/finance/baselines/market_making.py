"""MarketMaking-v0 baselines: exact optimal quotes by dynamic programming, Avellaneda–Stoikov."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.finance._values import real_array
from sekai.finance.baselines._checks import check_count, check_number, require_env
from sekai.finance.baselines._env_access import call_batched, is_vector
from sekai.finance.baselines._evaluate import BaselinePolicy
from sekai.finance.quotes import (
    QuoteTable,
    _fill,
    _fixed_step,
    _Lattice,
    _step_value,
    market_making_params,
    solve_optimal_quotes,
)

__all__ = [
    "AvellanedaStoikov",
    "ConstantQuotes",
    "OptimalQuotes",
    "QuoteTable",
    "evaluate_quotes",
    "expected_random_return",
    "market_making_params",
    "solve_optimal_quotes",
]

QuoteFunction = Callable[[int, np.ndarray], np.ndarray]


def evaluate_quotes(env: Any, quotes: QuoteFunction | QuoteTable) -> float:
    """Exact expected episode return of a policy that quotes as a function of ``(t, inventory)``.

    Args:
        env: the env (its parameters are used).
        quotes: a ``QuoteTable``, or ``quotes(t, q)`` returning an ``(len(q), 2)`` array of bid
            and ask distances for step ``t`` and the inventories ``q`` (cast to float32 as the
            env's action would be).
    """
    if not (isinstance(quotes, QuoteTable) or callable(quotes)):
        raise TypeError(
            f"quotes must be a QuoteTable or a function quotes(t, q), got {type(quotes).__name__}."
        )
    p = market_making_params(env)
    lattice = _Lattice(p)
    value = -p.terminal_penalty * lattice.q.astype(np.float64) ** 2
    for t in range(p.n_steps - 1, -1, -1):
        w, up, down = lattice.continuation(value)
        if isinstance(quotes, QuoteTable):
            chosen = quotes.lookup(t, lattice.q)
        else:
            chosen = real_array(f"quotes({t}, q)", quotes(t, lattice.q)).astype(np.float32)
            if chosen.shape != (len(lattice.q), 2) or not np.all(np.isfinite(chosen)):
                raise ValueError(
                    f"quotes({t}, q) must return finite bid and ask distances of shape "
                    f"({len(lattice.q)}, 2), one row per inventory in q; got shape "
                    f"{chosen.shape}."
                )
        value = _fixed_step(p, lattice, w, up, down, chosen.astype(np.float64))
    return float(value[p.max_inventory])


def expected_random_return(env: Any, *, points: int = 200_001) -> float:
    """Exact expected return of quotes drawn uniformly from ``[0, max_offset]²`` every step.

    The step value is bilinear in the two independent fill indicators, so averaging the fill
    probability and the expected edge over the uniform distribution is exact (up to the
    quadrature, Simpson's rule on ``points`` nodes, an odd number >= 3).
    """
    if check_count("points", points, 3) % 2 == 0:
        raise ValueError(f"points must be odd (Simpson's rule), got {points}.")
    p = market_making_params(env)
    lattice = _Lattice(p)
    offsets = np.linspace(0.0, p.max_offset, points)
    prob = _fill(p, offsets)
    weights = np.ones(points)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    weights /= weights.sum()
    mean_p = float(weights @ prob) if p.max_offset > 0 else float(prob[0])
    mean_edge = float(weights @ (prob * offsets)) * p.order_size
    pb = np.where(lattice.can_buy, mean_p, 0.0)
    pa = np.where(lattice.can_sell, mean_p, 0.0)
    eb = np.where(lattice.can_buy, mean_edge, 0.0)
    ea = np.where(lattice.can_sell, mean_edge, 0.0)
    value = -p.terminal_penalty * lattice.q.astype(np.float64) ** 2
    for _ in range(p.n_steps):
        w, up, down = lattice.continuation(value)
        value = _step_value(w, up, down, pb, pa, eb, ea)
    return float(value[p.max_inventory])


class AvellanedaStoikov(BaselinePolicy):
    """The Avellaneda–Stoikov closed-form quotes (``env.avellaneda_stoikov_action()``).

    Call it as ``policy(observation, env)`` with a single env (returns ``(2,)``) or a vector env
    (returns ``(num_envs, 2)``).
    """

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """Return the quotes for the env's current state(s)."""
        require_env(self, env, "MarketMaking-v0")
        return call_batched(env, "avellaneda_stoikov_action")

    def __repr__(self) -> str:
        return "AvellanedaStoikov()"


class OptimalQuotes(BaselinePolicy):
    """The exact optimum of ``MarketMaking-v0``: the DP table of ``solve_optimal_quotes``.

    Looks up ``(t, inventory)`` through ``env.optimal_quotes()`` (the table is cached per
    parameter set).
    """

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """Return the optimal quotes for the env's current state(s)."""
        require_env(self, env, "MarketMaking-v0")
        return call_batched(env, "optimal_quotes")

    def __repr__(self) -> str:
        return "OptimalQuotes()"


class ConstantQuotes(BaselinePolicy):
    """Quote fixed distances ``(bid, ask)`` from the mid at every step.

    Args:
        bid: bid distance, a finite number >= 0.
        ask: ask distance (None: the same as ``bid``).
    """

    def __init__(self, bid: float, ask: float | None = None) -> None:
        self.bid = check_number("bid", bid, "ge0")
        self.ask = self.bid if ask is None else check_number("ask", ask, "ge0")

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """Return ``(bid, ask)`` (one row per sub-env for a vector env)."""
        require_env(self, env, "MarketMaking-v0")
        action = np.array([self.bid, self.ask], np.float32)
        if is_vector(env):
            return np.tile(action, (env.num_envs, 1))
        return action

    def __repr__(self) -> str:
        return f"ConstantQuotes({self.bid!r}, {self.ask!r})"
