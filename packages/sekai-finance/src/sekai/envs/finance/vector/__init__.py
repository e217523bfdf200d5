"""Native vector versions of the finance envs (one ``NativeVecEnv`` subclass per env)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "TradingVecEnv": "sekai.envs.finance.vector.trading",
    "PortfolioVecEnv": "sekai.envs.finance.vector.portfolio",
    "MarketMakingVecEnv": "sekai.envs.finance.vector.market_making",
    "OptimalExecutionVecEnv": "sekai.envs.finance.vector.optimal_execution",
}

__all__ = [
    "MarketMakingVecEnv",
    "OptimalExecutionVecEnv",
    "PortfolioVecEnv",
    "TradingVecEnv",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
    from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
    from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
    from sekai.envs.finance.vector.trading import TradingVecEnv
