"""GARCH(1,1) volatility clustering on per-step log returns."""

from __future__ import annotations

import numpy as np

from sekai.finance.simulators._checks import per_asset, public, read_only
from sekai.finance.simulators._per_asset import PerAssetModel

__all__ = ["GARCH"]


class GARCH(PerAssetModel):
    """GARCH(1,1): ``r = mu dt + eps``, ``eps = sqrt(h) z``, ``h' = omega + alpha eps**2 + beta h``.

    ``h`` is the per-step variance, starting at the unconditional ``omega / (1 - alpha - beta)``;
    ``z`` is correlated across assets by ``corr``. State: ``variance`` (``h`` for the next step).

    Args:
        omega: variance intercept per step (> 0). alpha: ARCH weight (>= 0). beta: GARCH weight
            (>= 0), with ``alpha + beta < 1``. mu: annual drift (finite).
        s0, corr, dt, n_assets: as for ``GBM``.
    """

    _repr_fields = ("n_assets", "omega", "alpha", "beta", "mu", "s0", "corr", "dt")

    omega: float | np.ndarray
    alpha: float | np.ndarray
    beta: float | np.ndarray
    mu: float | np.ndarray
    s0: float | np.ndarray

    def __init__(
        self,
        omega: float | np.ndarray = 1e-6,
        alpha: float | np.ndarray = 0.08,
        beta: float | np.ndarray = 0.9,
        *,
        mu: float | np.ndarray = 0.0,
        s0: float | np.ndarray = 100.0,
        corr: np.ndarray | None = None,
        dt: float = 1 / 252,
        n_assets: int | None = None,
    ) -> None:
        arrays = {
            "omega": per_asset("omega", omega, "gt0"),
            "alpha": per_asset("alpha", alpha, "ge0"),
            "beta": per_asset("beta", beta, "ge0"),
            "mu": per_asset("mu", mu),
            "s0": per_asset("s0", s0, "gt0"),
        }
        p, _ = self._set_per_asset(arrays, corr, dt, n_assets)  # the asset counts agree first
        persistence = arrays["alpha"] + arrays["beta"]  # a scalar stays a scalar in the message
        if np.any(persistence >= 1.0):
            raise ValueError(
                f"alpha + beta must be < 1 for a stationary GARCH(1,1), got {public(persistence)!r}"
            )
        self._set(_p=p, _h0=read_only(p["omega"] / (1.0 - p["alpha"] - p["beta"])))

    _p: dict[str, np.ndarray]
    _h0: np.ndarray

    @property
    def unconditional_variance(self) -> np.ndarray:
        """``omega / (1 - alpha - beta)`` per asset: the stationary per-step variance."""
        return self._h0

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """``{"variance": (n_assets,)}``: the conditional variance of the next step's return."""
        return {"variance": (self.n_assets,)}

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {"variance": np.repeat(self._h0[None], k, axis=0)}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        p = self._p
        z = rng.standard_normal((k, self.n_assets))
        if self._chol is not None:
            z = z @ self._chol.T
        h = state["variance"]
        eps = np.sqrt(h) * z
        h_next = p["omega"] + p["alpha"] * eps * eps + p["beta"] * h
        return p["mu"] * self.dt + eps, {"variance": h_next}
