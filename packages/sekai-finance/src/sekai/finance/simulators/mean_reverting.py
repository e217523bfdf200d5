"""Exponential Ornstein-Uhlenbeck prices, simulated exactly."""

from __future__ import annotations

import numpy as np

from sekai.finance.simulators._checks import per_asset, read_only
from sekai.finance.simulators._per_asset import PerAssetModel

__all__ = ["MeanReverting"]


class MeanReverting(PerAssetModel):
    """Exponential OU: ``x = log S`` reverts to ``m = log(mean)`` at speed ``theta``.

    Exact transition ``x' = m + (x - m) e^{-theta dt} + sigma sqrt((1 - e^{-2 theta dt}) /
    (2 theta)) z``, with ``z`` correlated across assets by ``corr``.

    Args:
        theta: reversion speed per year (> 0). mean: the price level ``x`` reverts to (> 0).
        sigma: annual volatility of ``x`` (>= 0).
        s0: initial price (> 0); None starts at ``mean``.
        corr, dt, n_assets: as for ``GBM``.
    """

    _repr_fields = ("n_assets", "theta", "mean", "sigma", "s0", "corr", "dt")

    theta: float | np.ndarray
    mean: float | np.ndarray
    sigma: float | np.ndarray
    s0: float | np.ndarray

    def __init__(
        self,
        theta: float | np.ndarray = 5.0,
        mean: float | np.ndarray = 100.0,
        sigma: float | np.ndarray = 0.2,
        *,
        s0: float | np.ndarray | None = None,
        corr: np.ndarray | None = None,
        dt: float = 1 / 252,
        n_assets: int | None = None,
    ) -> None:
        arrays = {
            "theta": per_asset("theta", theta, "gt0"),
            "mean": per_asset("mean", mean, "gt0"),
            "sigma": per_asset("sigma", sigma, "ge0"),
        }
        arrays["s0"] = arrays["mean"] if s0 is None else per_asset("s0", s0, "gt0")
        p, step = self._set_per_asset(arrays, corr, dt, n_assets)
        self._set(
            _m=read_only(np.log(p["mean"])),
            _decay=read_only(np.exp(-p["theta"] * step)),
            _scale=read_only(
                p["sigma"] * np.sqrt(-np.expm1(-2.0 * p["theta"] * step) / (2.0 * p["theta"]))
            ),
        )

    _m: np.ndarray
    _decay: np.ndarray
    _scale: np.ndarray

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {"_x": np.repeat(np.log(self._s0)[None], k, axis=0)}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        z = rng.standard_normal((k, self.n_assets))
        if self._chol is not None:
            z = z @ self._chol.T
        x = state["_x"]
        x_next = self._m + (x - self._m) * self._decay + self._scale * z
        return x_next - x, {"_x": x_next}
