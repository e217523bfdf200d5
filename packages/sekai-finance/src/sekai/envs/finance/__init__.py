"""Finance environments: Trading, Portfolio, MarketMaking, OptimalExecution, Market, LOB.

Importing this package is cheap: each name below is imported from its module on first use (the
``finance`` plugin imports this package and must not import any env code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

_PKG = "sekai.envs.finance"

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "TradingEnv": f"{_PKG}.trading",
    "PortfolioEnv": f"{_PKG}.portfolio",
    "MarketMakingEnv": f"{_PKG}.market_making",
    "OptimalExecutionEnv": f"{_PKG}.optimal_execution",
    "MarketEnv": f"{_PKG}.market",
    "LimitOrderBookEnv": f"{_PKG}.lob",
    "LimitOrderBookMarket": f"{_PKG}.lob_market",
    "TradingVecEnv": f"{_PKG}.vector.trading",
    "PortfolioVecEnv": f"{_PKG}.vector.portfolio",
    "MarketMakingVecEnv": f"{_PKG}.vector.market_making",
    "OptimalExecutionVecEnv": f"{_PKG}.vector.optimal_execution",
    "TradingRenderer": f"{_PKG}.rendering",
    "PortfolioRenderer": f"{_PKG}.rendering",
    "MarketRenderer": f"{_PKG}.rendering",
    "MarketMakingRenderer": f"{_PKG}.rendering",
    "OptimalExecutionRenderer": f"{_PKG}.rendering",
    "LimitOrderBookRenderer": f"{_PKG}.rendering",
    "LimitOrderBookMarketRenderer": f"{_PKG}.rendering",
    "TradingTextRenderer": f"{_PKG}.rendering",
    "PortfolioTextRenderer": f"{_PKG}.rendering",
    "MarketTextRenderer": f"{_PKG}.rendering",
    "MarketMakingTextRenderer": f"{_PKG}.rendering",
    "OptimalExecutionTextRenderer": f"{_PKG}.rendering",
    "LimitOrderBookTextRenderer": f"{_PKG}.rendering",
    "LimitOrderBookMarketTextRenderer": f"{_PKG}.rendering",
    "default_market": "sekai.finance.simulators",
    "simulate_gbm": f"{_PKG}._helpers",
    "random_correlation": f"{_PKG}._helpers",
    "sample_window": f"{_PKG}._helpers",
}

__all__ = [
    "LimitOrderBookEnv",
    "LimitOrderBookMarket",
    "LimitOrderBookMarketRenderer",
    "LimitOrderBookMarketTextRenderer",
    "LimitOrderBookRenderer",
    "LimitOrderBookTextRenderer",
    "MarketEnv",
    "MarketMakingEnv",
    "MarketMakingRenderer",
    "MarketMakingTextRenderer",
    "MarketMakingVecEnv",
    "MarketRenderer",
    "MarketTextRenderer",
    "OptimalExecutionEnv",
    "OptimalExecutionRenderer",
    "OptimalExecutionTextRenderer",
    "OptimalExecutionVecEnv",
    "PortfolioEnv",
    "PortfolioRenderer",
    "PortfolioTextRenderer",
    "PortfolioVecEnv",
    "TradingEnv",
    "TradingRenderer",
    "TradingTextRenderer",
    "TradingVecEnv",
    "default_market",
    "random_correlation",
    "sample_window",
    "simulate_gbm",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.finance._helpers import random_correlation, sample_window, simulate_gbm
    from sekai.envs.finance.lob import LimitOrderBookEnv
    from sekai.envs.finance.lob_market import LimitOrderBookMarket
    from sekai.envs.finance.market import MarketEnv
    from sekai.envs.finance.market_making import MarketMakingEnv
    from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
    from sekai.envs.finance.portfolio import PortfolioEnv
    from sekai.envs.finance.rendering import (
        LimitOrderBookMarketRenderer,
        LimitOrderBookMarketTextRenderer,
        LimitOrderBookRenderer,
        LimitOrderBookTextRenderer,
        MarketMakingRenderer,
        MarketMakingTextRenderer,
        MarketRenderer,
        MarketTextRenderer,
        OptimalExecutionRenderer,
        OptimalExecutionTextRenderer,
        PortfolioRenderer,
        PortfolioTextRenderer,
        TradingRenderer,
        TradingTextRenderer,
    )
    from sekai.envs.finance.trading import TradingEnv
    from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
    from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
    from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
    from sekai.envs.finance.vector.trading import TradingVecEnv
    from sekai.finance.simulators import default_market
