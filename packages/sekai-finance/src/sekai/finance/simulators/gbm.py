"""Geometric Brownian motion, correlated across assets, with the exact log-normal transition."""

from __future__ import annotations

import math

import numpy as np

from sekai.finance.simulators._checks import per_asset, read_only
from sekai.finance.simulators._per_asset import PerAssetModel
from sekai.finance.simulators.base import Simulation, check_simulate_args

__all__ = ["GBM"]


class GBM(PerAssetModel):
    """Geometric Brownian motion: ``log S += (mu - sigma**2 / 2) dt + sigma sqrt(dt) z``.

    ``z`` is standard normal, correlated across assets by ``corr`` (through its Cholesky factor).

    Args:
        mu: annual drift, a scalar or a per-asset array (finite).
        sigma: annual volatility, scalar or per-asset (>= 0).
        s0: initial price, scalar or per-asset (> 0).
        corr: an ``(n, n)`` correlation matrix, or None for independent assets.
        dt: years per step (> 0).
        n_assets: number of assets; inferred from array parameters or ``corr`` when None.
    """

    _repr_fields = ("n_assets", "mu", "sigma", "s0", "corr", "dt")

    mu: float | np.ndarray
    sigma: float | np.ndarray
    s0: float | np.ndarray

    def __init__(
        self,
        mu: float | np.ndarray = 0.0,
        sigma: float | np.ndarray = 0.2,
        *,
        s0: float | np.ndarray = 100.0,
        corr: np.ndarray | None = None,
        dt: float = 1 / 252,
        n_assets: int | None = None,
    ) -> None:
        arrays = {
            "mu": per_asset("mu", mu),
            "sigma": per_asset("sigma", sigma, "ge0"),
            "s0": per_asset("s0", s0, "gt0"),
        }
        p, step = self._set_per_asset(arrays, corr, dt, n_assets)
        self._set(
            _drift=read_only((p["mu"] - 0.5 * p["sigma"] ** 2) * step),
            _vol=read_only(p["sigma"] * math.sqrt(step)),
        )

    _drift: np.ndarray
    _vol: np.ndarray

    def log_increments(self, z: np.ndarray) -> np.ndarray:
        """Turn standard normals ``(..., n_assets)`` into log-price increments (a new array)."""
        if self._chol is not None:
            z = z @ self._chol.T
        increments: np.ndarray = z * self._vol + self._drift
        return increments

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate with one ``rng.standard_normal((n_steps, n))`` block per path batch.

        The block is ``(n_steps, n)`` for one path and ``(n_paths, n_steps, n)`` for a batch;
        prices are ``s0 * exp(cumsum(increments))`` from row 0 = ``s0``.
        """
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        shape = (steps, self.n_assets) if paths is None else (paths, steps, self.n_assets)
        increments = self.log_increments(rng.standard_normal(shape))
        log_prices = np.zeros((*shape[:-2], steps + 1, self.n_assets))
        np.cumsum(increments, axis=-2, out=log_prices[..., 1:, :])
        return Simulation(self._s0 * np.exp(log_prices))

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return self.log_increments(rng.standard_normal((k, self.n_assets))), state
