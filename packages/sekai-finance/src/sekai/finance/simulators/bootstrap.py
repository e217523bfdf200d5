"""Circular block bootstrap of historical log returns."""

from __future__ import annotations

import numpy as np

from sekai.finance._values import real_array
from sekai.finance.simulators._checks import (
    as_float,
    as_positive_int,
    broadcast,
    per_asset,
    public,
    read_only,
)
from sekai.finance.simulators.base import KernelModel, Simulation, check_simulate_args

__all__ = ["BlockBootstrap"]


class BlockBootstrap(KernelModel):
    """Resample blocks of ``block_size`` consecutive historical log-return rows (circularly).

    Whole rows are resampled, so the cross-asset correlation and the dependence within a block
    are kept. Each block starts at a uniformly drawn row and wraps around the end.

    Args:
        returns: ``(T,)`` or ``(T, n)`` historical log returns (finite).
        block_size: rows per block, ``1 <= block_size <= T``.
        s0: initial price(s) (> 0). dt: years per step (> 0).
    """

    _repr_fields = ("n_assets", "block_size", "s0", "dt")

    returns: np.ndarray
    block_size: int
    s0: float | np.ndarray

    def __init__(
        self,
        returns: np.ndarray | list[float],
        *,
        block_size: int = 20,
        s0: float | np.ndarray = 100.0,
        dt: float = 1 / 252,
    ) -> None:
        try:
            rows = real_array("returns", returns)
        except (TypeError, ValueError) as exc:
            raise ValueError("returns must be a (T,) or (T, n) array of log returns") from exc
        if rows.ndim == 1:
            rows = rows[:, None]
        if rows.ndim != 2 or rows.shape[0] < 1 or rows.shape[1] < 1:
            raise ValueError(f"returns must have shape (T,) or (T, n), got {np.shape(returns)}")
        if not np.all(np.isfinite(rows)):
            raise ValueError("returns must be finite (log returns without NaN or inf)")
        size = as_positive_int("block_size", block_size)
        if size > rows.shape[0]:
            raise ValueError(
                f"block_size must be <= the number of return rows ({rows.shape[0]}), got {size}"
            )
        n = rows.shape[1]
        s0_a = per_asset("s0", s0, "gt0")
        if s0_a.ndim == 1 and s0_a.shape[0] != n:
            raise ValueError(f"s0 has {s0_a.shape[0]} entries but returns have {n} columns")
        self._set(
            returns=read_only(rows),
            block_size=size,
            s0=public(s0_a),
            dt=as_float("dt", dt, "gt0"),
            n_assets=n,
            _s0=broadcast(s0_a, n),
        )

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Draw all block starts at once: ``ceil(n_steps / block_size)`` per path."""
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        k = 1 if paths is None else paths
        total = self.returns.shape[0]
        blocks = -(-steps // self.block_size)
        starts = rng.integers(0, total, size=(k, blocks))
        index = (starts[:, :, None] + np.arange(self.block_size)) % total
        index = index.reshape(k, -1)[:, :steps]
        log_prices = np.zeros((k, steps + 1, self.n_assets))
        np.cumsum(self.returns[index], axis=1, out=log_prices[:, 1:])
        prices = self._s0 * np.exp(log_prices)
        return Simulation(prices[0] if paths is None else prices)

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {"_pos": np.zeros(k, np.int64), "_left": np.zeros(k, np.int64)}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        total = self.returns.shape[0]
        left = state["_left"]
        need = left == 0
        pos = np.where(need, rng.integers(0, total, size=k), state["_pos"])
        left = np.where(need, self.block_size, left) - 1
        return self.returns[pos], {"_pos": (pos + 1) % total, "_left": left}
