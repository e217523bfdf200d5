"""Merton (1976) jump diffusion: GBM plus compound-Poisson log-normal jumps."""

from __future__ import annotations

import math

import numpy as np

from sekai.finance.simulators._checks import per_asset, read_only
from sekai.finance.simulators._per_asset import PerAssetModel
from sekai.finance.simulators.base import Simulation, check_simulate_args

__all__ = ["MertonJumpDiffusion"]


class MertonJumpDiffusion(PerAssetModel):
    """GBM with ``N ~ Poisson(lambda dt)`` log-jumps ``~ N(jump_mean, jump_std**2)`` per step.

    The drift is compensated, ``mu - sigma**2/2 - lambda k`` with
    ``k = exp(jump_mean + jump_std**2 / 2) - 1``, so ``E[S_t] = s0 exp(mu t)``. Jumps are
    independent across assets; the diffusion is correlated by ``corr``. State: ``jumps``, the
    number of jumps in the step that ended at each row.

    Args:
        mu: annual drift (finite). sigma: diffusion volatility (>= 0).
        jump_intensity: jumps per year (>= 0). jump_mean: mean log-jump (finite).
        jump_std: log-jump standard deviation (>= 0).
        s0, corr, dt, n_assets: as for ``GBM``.
    """

    _repr_fields = (
        "n_assets",
        "mu",
        "sigma",
        "jump_intensity",
        "jump_mean",
        "jump_std",
        "s0",
        "corr",
        "dt",
    )

    mu: float | np.ndarray
    sigma: float | np.ndarray
    jump_intensity: float | np.ndarray
    jump_mean: float | np.ndarray
    jump_std: float | np.ndarray
    s0: float | np.ndarray

    def __init__(
        self,
        mu: float | np.ndarray = 0.05,
        sigma: float | np.ndarray = 0.2,
        jump_intensity: float | np.ndarray = 1.0,
        jump_mean: float | np.ndarray = -0.05,
        jump_std: float | np.ndarray = 0.1,
        *,
        s0: float | np.ndarray = 100.0,
        corr: np.ndarray | None = None,
        dt: float = 1 / 252,
        n_assets: int | None = None,
    ) -> None:
        arrays = {
            "mu": per_asset("mu", mu),
            "sigma": per_asset("sigma", sigma, "ge0"),
            "jump_intensity": per_asset("jump_intensity", jump_intensity, "ge0"),
            "jump_mean": per_asset("jump_mean", jump_mean),
            "jump_std": per_asset("jump_std", jump_std, "ge0"),
            "s0": per_asset("s0", s0, "gt0"),
        }
        p, step = self._set_per_asset(arrays, corr, dt, n_assets)
        k = np.expm1(p["jump_mean"] + 0.5 * p["jump_std"] ** 2)
        drift = (p["mu"] - 0.5 * p["sigma"] ** 2 - p["jump_intensity"] * k) * step
        self._set(
            _p=p,
            _drift=read_only(drift),
            _vol=read_only(p["sigma"] * math.sqrt(step)),
            _lam_dt=read_only(p["jump_intensity"] * step),
        )

    _p: dict[str, np.ndarray]
    _drift: np.ndarray
    _vol: np.ndarray
    _lam_dt: np.ndarray

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """``{"jumps": (n_assets,)}``: jumps in the step that ended at the row (0 at row 0)."""
        return {"jumps": (self.n_assets,)}

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {"jumps": np.zeros((k, self.n_assets))}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        shape = (k, self.n_assets)
        z = rng.standard_normal(shape)
        if self._chol is not None:
            z = z @ self._chol.T
        jumps = rng.poisson(np.broadcast_to(self._lam_dt, shape)).astype(np.float64)
        w = rng.standard_normal(shape)
        log_returns = (
            self._drift
            + self._vol * z
            + jumps * self._p["jump_mean"]
            + self._p["jump_std"] * np.sqrt(jumps) * w
        )
        return log_returns, {"jumps": jumps}

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate all steps at once (the increments are independent across steps)."""
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        k = 1 if paths is None else paths
        log_returns, state = self._advance(rng, {}, k * steps)
        log_prices = np.zeros((k, steps + 1, self.n_assets))
        np.cumsum(log_returns.reshape(k, steps, -1), axis=1, out=log_prices[:, 1:])
        jumps = np.zeros((k, steps + 1, self.n_assets))
        jumps[:, 1:] = state["jumps"].reshape(k, steps, -1)
        prices = self._s0 * np.exp(log_prices)
        if paths is None:
            return Simulation(prices[0], None, {"jumps": jumps[0]})
        return Simulation(prices, None, {"jumps": jumps})
