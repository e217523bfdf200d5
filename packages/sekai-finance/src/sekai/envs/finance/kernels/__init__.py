"""Array kernels of the finance envs (guide §11a): one ``ArrayKernel`` per env, run by the
numpy, JAX and torch drivers (``kernel_entry_point`` of each env spec)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "TradingKernel": "sekai.envs.finance.kernels.trading",
    "PortfolioKernel": "sekai.envs.finance.kernels.portfolio",
    "MarketMakingKernel": "sekai.envs.finance.kernels.market_making",
    "OptimalExecutionKernel": "sekai.envs.finance.kernels.optimal_execution",
}

__all__ = [
    "MarketMakingKernel",
    "OptimalExecutionKernel",
    "PortfolioKernel",
    "TradingKernel",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.finance.kernels.market_making import MarketMakingKernel
    from sekai.envs.finance.kernels.optimal_execution import OptimalExecutionKernel
    from sekai.envs.finance.kernels.portfolio import PortfolioKernel
    from sekai.envs.finance.kernels.trading import TradingKernel
