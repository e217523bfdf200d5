"""Market simulators: stochastic price models simulated as whole paths or online."""

from __future__ import annotations

from sekai.finance.simulators.base import MarketModel, ModelStepper, PathStepper, Simulation
from sekai.finance.simulators.bootstrap import BlockBootstrap
from sekai.finance.simulators.cointegrated import CointegratedPair
from sekai.finance.simulators.defaults import default_market
from sekai.finance.simulators.garch import GARCH
from sekai.finance.simulators.gbm import GBM
from sekai.finance.simulators.heston import Heston
from sekai.finance.simulators.listing import ListingProcess
from sekai.finance.simulators.mean_reverting import MeanReverting
from sekai.finance.simulators.merton import MertonJumpDiffusion
from sekai.finance.simulators.randomized import Randomized
from sekai.finance.simulators.regime_switching import RegimeSwitching

__all__ = [
    "GARCH",
    "GBM",
    "BlockBootstrap",
    "CointegratedPair",
    "Heston",
    "ListingProcess",
    "MarketModel",
    "MeanReverting",
    "MertonJumpDiffusion",
    "ModelStepper",
    "PathStepper",
    "Randomized",
    "RegimeSwitching",
    "Simulation",
    "default_market",
]
