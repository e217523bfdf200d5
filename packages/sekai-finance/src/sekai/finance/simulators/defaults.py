"""default_market: Market-v0's default model, a regime-switching universe with listings."""

from __future__ import annotations

import numpy as np

from sekai.finance.simulators._checks import as_positive_int
from sekai.finance.simulators.gbm import GBM
from sekai.finance.simulators.listing import ListingProcess
from sekai.finance.simulators.regime_switching import RegimeSwitching

__all__ = ["default_market"]


def _equicorrelation(n: int, rho: float) -> np.ndarray:
    corr = np.full((n, n), rho)
    np.fill_diagonal(corr, 1.0)
    return corr


def default_market(n_assets: int = 10) -> ListingProcess:
    """A calm/stress regime-switching GBM universe whose assets list and delist.

    Calm: ``GBM(mu=0.08, sigma=0.15)`` with 0.2 pairwise correlation; stress:
    ``GBM(mu=-0.2, sigma=0.4)`` with 0.7. Calm spells last about two years, stress spells about
    six months (stationary P(calm) = 0.8). Listings: 70 % listed at the start, listing rate 1,
    delisting rate 0.3 per year, at least two listed (one when there is a single asset).
    """
    n = as_positive_int("n_assets", n_assets)
    calm = GBM(mu=0.08, sigma=0.15, corr=_equicorrelation(n, 0.2))
    stress = GBM(mu=-0.2, sigma=0.4, corr=_equicorrelation(n, 0.7))
    transition = np.array([[1 - 1 / 504, 1 / 504], [1 / 126, 1 - 1 / 126]])
    return ListingProcess(
        RegimeSwitching([calm, stress], transition),
        initial_listed=0.7,
        listing_rate=1.0,
        delisting_rate=0.3,
        min_listed=min(2, n),
    )
