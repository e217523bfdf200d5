"""Market-making quotes solved exactly: the dynamic programme of ``MarketMaking-v0`` over
``(t, inventory)``, used by the env's ``optimal_quotes()`` and by the baselines."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from sekai.finance._values import check_number

__all__ = ["MarketMakingParams", "QuoteTable", "market_making_params", "solve_optimal_quotes"]


class MarketMakingParams(NamedTuple):
    """The parameters of ``MarketMaking-v0`` that its expected return depends on."""

    sigma: float
    total_time: float
    n_steps: int
    A: float
    k: float
    risk_aversion: float
    max_inventory: int
    order_size: int
    max_offset: float
    terminal_penalty: float

    @property
    def dt(self) -> float:
        """Step length."""
        return self.total_time / self.n_steps


def market_making_params(env: Any) -> MarketMakingParams:
    """Read the parameters from a ``MarketMakingEnv`` (or anything with the same attributes).

    A native vector env's parameters live on ``env.template``, which is used when present.
    """
    source = getattr(env, "template", env)
    return MarketMakingParams(
        float(source.sigma),
        float(source.total_time),
        int(source.n_steps),
        float(source.A),
        float(source.k),
        float(source.risk_aversion),
        int(source.max_inventory),
        int(source.order_size),
        float(source.max_offset),
        float(getattr(source, "terminal_penalty", 0.0)),
    )


@dataclass(frozen=True, eq=False)
class QuoteTable:
    """Optimal quotes per step and inventory, and the value function they achieve.

    Attributes:
        quotes: float32 ``(n_steps, 2 Q + 1, 2)``: bid and ask distance at step ``t`` with
            inventory ``q`` (row ``q + Q``). A side that cannot be quoted holds ``max_offset``.
        values: float64 ``(n_steps + 1, 2 Q + 1)``: expected return-to-go ``V_t(q)``.
        max_inventory: ``Q``.
    """

    quotes: np.ndarray
    values: np.ndarray
    max_inventory: int

    @property
    def value(self) -> float:
        """Expected episode return from the start (``V_0(0)``)."""
        return float(self.values[0, self.max_inventory])

    def lookup(self, t: Any, inventory: Any) -> np.ndarray:
        """Quotes for step(s) ``t`` and inventory(ies) ``q``: float32 ``(..., 2)``."""
        steps = np.minimum(np.asarray(t), self.quotes.shape[0] - 1)
        rows = np.clip(np.asarray(inventory) + self.max_inventory, 0, self.quotes.shape[1] - 1)
        quotes: np.ndarray = self.quotes[steps, rows].copy()
        return quotes


class _Grid:
    """Fill probabilities on the search grid of quote distances."""

    def __init__(self, p: MarketMakingParams, step: float) -> None:
        count = math.floor(p.max_offset / step + 1e-9) + 1
        offsets = np.minimum(np.arange(count) * step, p.max_offset)
        if offsets[-1] < p.max_offset:  # off the step: the limit is a quote too
            offsets = np.append(offsets, p.max_offset)
            count += 1
        self.offsets = offsets
        self.prob = _fill(p, self.offsets)
        stride = max(1, round(0.01 / step)) if count > 200 else 1
        self.coarse = np.arange(0, count, stride)
        self.window = np.arange(-stride, stride + 1)

    def best(self, constant: np.ndarray, size: int) -> np.ndarray:
        """Index maximising ``p(δ) (size δ + K)`` for each ``K`` in ``constant``."""
        coarse = self.coarse
        score = self.prob[coarse] * (size * self.offsets[coarse] + constant[:, None])
        centre = coarse[np.argmax(score, axis=1)]
        fine = np.clip(centre[:, None] + self.window, 0, self.offsets.size - 1)
        score = self.prob[fine] * (size * self.offsets[fine] + constant[:, None])
        best: np.ndarray = fine[np.arange(fine.shape[0]), np.argmax(score, axis=1)]
        return best


def _fill(p: MarketMakingParams, offsets: np.ndarray) -> np.ndarray:
    result: np.ndarray = -np.expm1(-p.A * np.exp(-p.k * offsets) * p.dt)
    return result


class _Lattice:
    """Inventory lattice ``-Q..Q`` with the neighbours a fill leads to."""

    def __init__(self, p: MarketMakingParams) -> None:
        self.q = np.arange(-p.max_inventory, p.max_inventory + 1)
        size = p.order_size
        self.can_buy = self.q + size <= p.max_inventory
        self.can_sell = self.q - size >= -p.max_inventory
        rows = np.arange(self.q.size)
        self.up = np.where(self.can_buy, rows + size, rows)
        self.down = np.where(self.can_sell, rows - size, rows)
        self.penalty = 0.5 * p.risk_aversion * p.sigma**2 * p.dt * self.q.astype(np.float64) ** 2

    def continuation(self, v_next: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``W(q)``, ``W(q + size) - W(q)`` and ``W(q - size) - W(q)`` (0 where not allowed)."""
        w = v_next - self.penalty
        return w, w[self.up] - w, w[self.down] - w


def _step_value(
    w: np.ndarray,
    gain_up: np.ndarray,
    gain_down: np.ndarray,
    pb: np.ndarray,
    pa: np.ndarray,
    edge_b: np.ndarray,
    edge_a: np.ndarray,
) -> np.ndarray:
    """``E[size δb Bb + size δa Ba + W(q')]`` given fill probabilities and expected edges."""
    value: np.ndarray = (
        edge_b + edge_a + w + pb * (1.0 - pa) * gain_up + pa * (1.0 - pb) * gain_down
    )
    return value


@functools.lru_cache(maxsize=16)
def _solve(p: MarketMakingParams, grid_step: float) -> QuoteTable:
    lattice = _Lattice(p)
    grid = _Grid(p, grid_step)
    size = p.order_size
    n_q = lattice.q.size
    quotes = np.empty((p.n_steps, n_q, 2), np.float32)
    values = np.empty((p.n_steps + 1, n_q))
    values[-1] = -p.terminal_penalty * lattice.q.astype(np.float64) ** 2
    start = int(np.argmin(np.abs(grid.offsets - 1.0 / p.k)))
    ib = np.full(n_q, start)
    ia = np.full(n_q, start)
    for t in range(p.n_steps - 1, -1, -1):
        w, up, down = lattice.continuation(values[t + 1])
        for _ in range(50):
            pa = np.where(lattice.can_sell, grid.prob[ia], 0.0)
            new_b = grid.best((1.0 - pa) * up - pa * down, size)
            pb = np.where(lattice.can_buy, grid.prob[new_b], 0.0)
            new_a = grid.best((1.0 - pb) * down - pb * up, size)
            converged = np.array_equal(new_b, ib) and np.array_equal(new_a, ia)
            ib, ia = new_b, new_a
            if converged:
                break
        db = np.where(lattice.can_buy, grid.offsets[ib], p.max_offset)
        da = np.where(lattice.can_sell, grid.offsets[ia], p.max_offset)
        quotes[t, :, 0] = db
        quotes[t, :, 1] = da
        values[t] = _fixed_step(p, lattice, w, up, down, quotes[t].astype(np.float64))
    quotes.flags.writeable = False
    values.flags.writeable = False
    return QuoteTable(quotes, values, p.max_inventory)


def _fixed_step(
    p: MarketMakingParams,
    lattice: _Lattice,
    w: np.ndarray,
    up: np.ndarray,
    down: np.ndarray,
    quotes: np.ndarray,
) -> np.ndarray:
    offsets = np.clip(quotes, 0.0, p.max_offset)
    pb = np.where(lattice.can_buy, _fill(p, offsets[:, 0]), 0.0)
    pa = np.where(lattice.can_sell, _fill(p, offsets[:, 1]), 0.0)
    size = p.order_size
    return _step_value(w, up, down, pb, pa, size * pb * offsets[:, 0], size * pa * offsets[:, 1])


def solve_optimal_quotes(env: Any, *, grid_step: float = 0.001) -> QuoteTable:
    """Solve ``MarketMaking-v0`` exactly by backward induction over ``(t, inventory)``.

    The mid is a martingale independent of the fills, so a step's expected reward depends only
    on the inventory, the time and the quotes; each side's quote maximises
    ``p(δ) (size δ + K)`` on a grid of ``grid_step`` (coordinate ascent between the sides).
    Cached per parameter set.

    Args:
        env: a ``MarketMakingEnv`` or its native vector env (or anything with its parameters).
        grid_step: resolution of the quote search.
    """
    return _solve(market_making_params(env), check_number("grid_step", grid_step, "gt0"))
