"""Heston stochastic volatility, simulated by full-truncation Euler."""

from __future__ import annotations

import numpy as np

from sekai.finance.simulators._checks import per_asset, read_only
from sekai.finance.simulators._per_asset import PerAssetModel

__all__ = ["Heston"]


class Heston(PerAssetModel):
    """Heston (1993) model, full-truncation Euler with ``v+ = max(v, 0)``.

    ``log S += (mu - v+/2) dt + sqrt(v+ dt) z1`` and
    ``v += kappa (theta - v+) dt + xi sqrt(v+ dt) z2`` with ``corr(z1, z2) = rho``; the price
    shocks ``z1`` are correlated across assets by ``corr``. Every parameter but ``corr`` and
    ``dt`` may be per-asset. State: ``variance`` (``v+``, per asset).

    Args:
        mu: annual drift (finite). kappa: mean-reversion speed (> 0). theta: long-run variance
            (> 0). xi: volatility of variance (> 0). rho: price/variance correlation in [-1, 1].
        v0: initial variance (>= 0); None means ``theta``.
        s0, corr, dt, n_assets: as for ``GBM``.
    """

    _repr_fields = ("n_assets", "mu", "kappa", "theta", "xi", "rho", "v0", "s0", "corr", "dt")

    mu: float | np.ndarray
    kappa: float | np.ndarray
    theta: float | np.ndarray
    xi: float | np.ndarray
    rho: float | np.ndarray
    v0: float | np.ndarray
    s0: float | np.ndarray

    def __init__(
        self,
        mu: float | np.ndarray = 0.05,
        kappa: float | np.ndarray = 2.0,
        theta: float | np.ndarray = 0.04,
        xi: float | np.ndarray = 0.3,
        rho: float | np.ndarray = -0.7,
        *,
        v0: float | np.ndarray | None = None,
        s0: float | np.ndarray = 100.0,
        corr: np.ndarray | None = None,
        dt: float = 1 / 252,
        n_assets: int | None = None,
    ) -> None:
        arrays = {
            "mu": per_asset("mu", mu),
            "kappa": per_asset("kappa", kappa, "gt0"),
            "theta": per_asset("theta", theta, "gt0"),
            "xi": per_asset("xi", xi, "gt0"),
            "rho": per_asset("rho", rho, "unit"),
            "s0": per_asset("s0", s0, "gt0"),
        }
        arrays["v0"] = arrays["theta"] if v0 is None else per_asset("v0", v0, "ge0")
        full, _ = self._set_per_asset(arrays, corr, dt, n_assets)
        self._set(_p=full, _rho_c=read_only(np.sqrt(1.0 - full["rho"] ** 2)))

    _p: dict[str, np.ndarray]
    _rho_c: np.ndarray

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """``{"variance": (n_assets,)}``: the truncated variance driving the next step."""
        return {"variance": (self.n_assets,)}

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        v = np.repeat(self._p["v0"][None], k, axis=0)
        return {"variance": np.maximum(v, 0.0), "_v": v}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        p, dt = self._p, self.dt
        z = rng.standard_normal((k, 2, self.n_assets))
        z1 = z[:, 0] if self._chol is None else z[:, 0] @ self._chol.T
        z2 = p["rho"] * z1 + self._rho_c * z[:, 1]
        v = state["_v"]
        vp = np.maximum(v, 0.0)
        root = np.sqrt(vp * dt)
        log_returns = (p["mu"] - 0.5 * vp) * dt + root * z1
        v_next = v + p["kappa"] * (p["theta"] - vp) * dt + p["xi"] * root * z2
        return log_returns, {"variance": np.maximum(v_next, 0.0), "_v": v_next}
