"""Renderers of the finance envs: dashboards (RGB frames) and text renderers (one line a step).

Import them from ``sekai.envs.finance``; each module imports only the env it draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

_PKG = "sekai.envs.finance.rendering"

# name -> module defining it (a renderer imports its env, so load each one only when asked).
_LAZY: dict[str, str] = {
    "TradingRenderer": f"{_PKG}.trading",
    "TradingTextRenderer": f"{_PKG}.trading",
    "PortfolioRenderer": f"{_PKG}.portfolio",
    "PortfolioTextRenderer": f"{_PKG}.portfolio",
    "MarketRenderer": f"{_PKG}.market",
    "MarketTextRenderer": f"{_PKG}.market",
    "MarketMakingRenderer": f"{_PKG}.market_making",
    "MarketMakingTextRenderer": f"{_PKG}.market_making",
    "OptimalExecutionRenderer": f"{_PKG}.optimal_execution",
    "OptimalExecutionTextRenderer": f"{_PKG}.optimal_execution",
    "LimitOrderBookRenderer": f"{_PKG}.lob",
    "LimitOrderBookTextRenderer": f"{_PKG}.lob",
    "LimitOrderBookMarketRenderer": f"{_PKG}.lob_market",
    "LimitOrderBookMarketTextRenderer": f"{_PKG}.lob_market",
}

__all__ = sorted(_LAZY)


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.finance.rendering.lob import (
        LimitOrderBookRenderer as LimitOrderBookRenderer,
        LimitOrderBookTextRenderer as LimitOrderBookTextRenderer,
    )
    from sekai.envs.finance.rendering.lob_market import (
        LimitOrderBookMarketRenderer as LimitOrderBookMarketRenderer,
        LimitOrderBookMarketTextRenderer as LimitOrderBookMarketTextRenderer,
    )
    from sekai.envs.finance.rendering.market import (
        MarketRenderer as MarketRenderer,
        MarketTextRenderer as MarketTextRenderer,
    )
    from sekai.envs.finance.rendering.market_making import (
        MarketMakingRenderer as MarketMakingRenderer,
        MarketMakingTextRenderer as MarketMakingTextRenderer,
    )
    from sekai.envs.finance.rendering.optimal_execution import (
        OptimalExecutionRenderer as OptimalExecutionRenderer,
        OptimalExecutionTextRenderer as OptimalExecutionTextRenderer,
    )
    from sekai.envs.finance.rendering.portfolio import (
        PortfolioRenderer as PortfolioRenderer,
        PortfolioTextRenderer as PortfolioTextRenderer,
    )
    from sekai.envs.finance.rendering.trading import (
        TradingRenderer as TradingRenderer,
        TradingTextRenderer as TradingTextRenderer,
    )
