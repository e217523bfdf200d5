"""Native vector versions of the finance envs (one ``NativeVecEnv`` subclass per env)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
    from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
    from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
    from sekai.envs.finance.vector.trading import TradingVecEnv
