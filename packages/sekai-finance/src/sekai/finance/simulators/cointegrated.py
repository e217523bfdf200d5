"""Two cointegrated prices: a common GBM trend plus a mean-reverting spread."""

from __future__ import annotations

import math

import numpy as np

from sekai.finance.simulators._checks import as_float, per_asset, read_only
from sekai.finance.simulators.base import KernelModel

__all__ = ["CointegratedPair"]


class CointegratedPair(KernelModel):
    """``log P1 = log s0_1 + x + s/2`` and ``log P2 = log s0_2 + x - s/2``.

    ``x`` is a GBM log-trend from 0 (drift ``mu - sigma**2/2``, volatility ``sigma``) and ``s``
    an OU spread from 0 with speed ``theta`` and volatility ``spread_sigma`` (stationary
    standard deviation ``spread_sigma / sqrt(2 theta)``), simulated exactly. State: ``spread``
    (``s``, a scalar per row).

    Args:
        mu: annual drift of the trend (finite). sigma: trend volatility (>= 0).
        theta: spread reversion speed per year (> 0). spread_sigma: spread volatility (>= 0).
        s0: the two initial prices (> 0). dt: years per step (> 0).
    """

    _repr_fields = ("mu", "sigma", "theta", "spread_sigma", "s0", "dt")

    mu: float
    sigma: float
    theta: float
    spread_sigma: float
    s0: tuple[float, float]

    def __init__(
        self,
        mu: float = 0.05,
        sigma: float = 0.2,
        theta: float = 5.0,
        spread_sigma: float = 0.1,
        *,
        s0: tuple[float, float] | np.ndarray = (100.0, 100.0),
        dt: float = 1 / 252,
    ) -> None:
        mu_f = as_float("mu", mu)
        sigma_f = as_float("sigma", sigma, "ge0")
        theta_f = as_float("theta", theta, "gt0")
        spread_f = as_float("spread_sigma", spread_sigma, "ge0")
        s0_a = per_asset("s0", s0, "gt0")
        if s0_a.shape != (2,):
            raise ValueError(f"s0 must hold the two initial prices, got shape {s0_a.shape}")
        step = as_float("dt", dt, "gt0")
        self._set(
            mu=mu_f,
            sigma=sigma_f,
            theta=theta_f,
            spread_sigma=spread_f,
            s0=(float(s0_a[0]), float(s0_a[1])),
            dt=step,
            n_assets=2,
            _trend=(mu_f - 0.5 * sigma_f**2) * step,
            _vol=sigma_f * math.sqrt(step),
            _decay=math.exp(-theta_f * step),
            _scale=spread_f * math.sqrt(-math.expm1(-2.0 * theta_f * step) / (2.0 * theta_f)),
            _s0=read_only(s0_a.copy()),
        )

    _trend: float
    _vol: float
    _decay: float
    _scale: float

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """``{"spread": ()}``: the log-price spread ``s`` around ``log(s0_1 / s0_2)``."""
        return {"spread": ()}

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        return {"spread": np.zeros(k)}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        z = rng.standard_normal((k, 2))
        dx = self._trend + self._vol * z[:, 0]
        s = state["spread"]
        s_next = s * self._decay + self._scale * z[:, 1]
        half = 0.5 * (s_next - s)
        return np.stack([dx + half, dx - half], axis=1), {"spread": s_next}
