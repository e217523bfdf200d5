"""The finance toolkit: market data, samplers, simulators, costs, accounts, rewards, metrics.

Importing this package is cheap: the names below are imported from their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

_PKG = "sekai.finance"

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    # data
    "MarketData": f"{_PKG}.data",
    "Time": f"{_PKG}.data",
    # episode samplers
    "EpisodeSampler": f"{_PKG}.sampling",
    "RandomStart": f"{_PKG}.sampling",
    "SequentialStart": f"{_PKG}.sampling",
    "FixedStart": f"{_PKG}.sampling",
    # market models
    "MarketModel": f"{_PKG}.simulators",
    "Simulation": f"{_PKG}.simulators",
    "GBM": f"{_PKG}.simulators",
    "Heston": f"{_PKG}.simulators",
    "MertonJumpDiffusion": f"{_PKG}.simulators",
    "RegimeSwitching": f"{_PKG}.simulators",
    "GARCH": f"{_PKG}.simulators",
    "MeanReverting": f"{_PKG}.simulators",
    "CointegratedPair": f"{_PKG}.simulators",
    "BlockBootstrap": f"{_PKG}.simulators",
    "Randomized": f"{_PKG}.simulators",
    "ListingProcess": f"{_PKG}.simulators",
    # costs
    "CostModel": f"{_PKG}.costs",
    "NoCost": f"{_PKG}.costs",
    "ProportionalCost": f"{_PKG}.costs",
    "SpreadCost": f"{_PKG}.costs",
    "FixedCost": f"{_PKG}.costs",
    "SquareRootImpact": f"{_PKG}.costs",
    "CompositeCost": f"{_PKG}.costs",
    # accounts
    "AccountConfig": f"{_PKG}.account",
    "Settlement": f"{_PKG}.account",
    # rewards
    "RewardFunction": f"{_PKG}.rewards",
    "StepOutcome": f"{_PKG}.rewards",
    "LogReturn": f"{_PKG}.rewards",
    "SimpleReturn": f"{_PKG}.rewards",
    "ProfitAndLoss": f"{_PKG}.rewards",
    "MeanVariance": f"{_PKG}.rewards",
    "TurnoverPenalty": f"{_PKG}.rewards",
    "DrawdownPenalty": f"{_PKG}.rewards",
    "DifferentialSharpe": f"{_PKG}.rewards",
    # metrics
    "PerformanceSummary": f"{_PKG}.metrics",
    "PnLSummary": f"{_PKG}.metrics",
    "performance_summary": f"{_PKG}.metrics",
    "pnl_summary": f"{_PKG}.metrics",
    "RecordPerformance": f"{_PKG}.metrics",
    "VecRecordPerformance": f"{_PKG}.metrics",
    # order book
    "OrderBook": f"{_PKG}.lob",
    "Order": f"{_PKG}.lob",
    "Fill": f"{_PKG}.lob",
    "Side": f"{_PKG}.lob",
    "BACKGROUND": f"{_PKG}.lob",
    "ZeroIntelligenceFlow": f"{_PKG}.lob",
    "OrderFlow": f"{_PKG}.lob",
    "StaticFlow": f"{_PKG}.lob",
    "SlotMap": f"{_PKG}.universe",
    # charts and reports
    "PriceChart": f"{_PKG}.rendering",
    "OrderBookChart": f"{_PKG}.rendering",
    "UniverseChart": f"{_PKG}.rendering",
    "episode_report": f"{_PKG}.report",
    "EpisodeReport": f"{_PKG}.report",
}

# Submodules reachable as attributes after a plain ``import sekai.finance``.
_SUBMODULES = (
    "account",
    "baselines",
    "costs",
    "data",
    "features",
    "lob",
    "metrics",
    "rendering",
    "report",
    "rewards",
    "sampling",
    "simulators",
    "universe",
)

__all__ = [
    "BACKGROUND",
    "GARCH",
    "GBM",
    "AccountConfig",
    "BlockBootstrap",
    "CointegratedPair",
    "CompositeCost",
    "CostModel",
    "DifferentialSharpe",
    "DrawdownPenalty",
    "EpisodeReport",
    "EpisodeSampler",
    "Fill",
    "FixedCost",
    "FixedStart",
    "Heston",
    "ListingProcess",
    "LogReturn",
    "MarketData",
    "MarketModel",
    "MeanReverting",
    "MeanVariance",
    "MertonJumpDiffusion",
    "NoCost",
    "Order",
    "OrderBook",
    "OrderBookChart",
    "OrderFlow",
    "PerformanceSummary",
    "PnLSummary",
    "PriceChart",
    "ProfitAndLoss",
    "ProportionalCost",
    "RandomStart",
    "Randomized",
    "RecordPerformance",
    "RegimeSwitching",
    "RewardFunction",
    "SequentialStart",
    "Settlement",
    "Side",
    "SimpleReturn",
    "Simulation",
    "SlotMap",
    "SpreadCost",
    "SquareRootImpact",
    "StaticFlow",
    "StepOutcome",
    "Time",
    "TurnoverPenalty",
    "UniverseChart",
    "VecRecordPerformance",
    "ZeroIntelligenceFlow",
    "episode_report",
    "performance_summary",
    "pnl_summary",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        globals(), _LAZY, submodules={name: f"{_PKG}.{name}" for name in _SUBMODULES}
    )


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.finance import (
        account as account,
        baselines as baselines,
        costs as costs,
        data as data,
        features as features,
        lob as lob,
        metrics as metrics,
        rendering as rendering,
        report as report,
        rewards as rewards,
        sampling as sampling,
        simulators as simulators,
        universe as universe,
    )
    from sekai.finance.account import AccountConfig, Settlement
    from sekai.finance.costs import (
        CompositeCost,
        CostModel,
        FixedCost,
        NoCost,
        ProportionalCost,
        SpreadCost,
        SquareRootImpact,
    )
    from sekai.finance.data import MarketData, Time
    from sekai.finance.lob import (
        BACKGROUND,
        Fill,
        Order,
        OrderBook,
        OrderFlow,
        Side,
        StaticFlow,
        ZeroIntelligenceFlow,
    )
    from sekai.finance.metrics import (
        PerformanceSummary,
        PnLSummary,
        RecordPerformance,
        VecRecordPerformance,
        performance_summary,
        pnl_summary,
    )
    from sekai.finance.rendering import OrderBookChart, PriceChart, UniverseChart
    from sekai.finance.report import EpisodeReport, episode_report
    from sekai.finance.rewards import (
        DifferentialSharpe,
        DrawdownPenalty,
        LogReturn,
        MeanVariance,
        ProfitAndLoss,
        RewardFunction,
        SimpleReturn,
        StepOutcome,
        TurnoverPenalty,
    )
    from sekai.finance.sampling import EpisodeSampler, FixedStart, RandomStart, SequentialStart
    from sekai.finance.simulators import (
        GARCH,
        GBM,
        BlockBootstrap,
        CointegratedPair,
        Heston,
        ListingProcess,
        MarketModel,
        MeanReverting,
        MertonJumpDiffusion,
        Randomized,
        RegimeSwitching,
        Simulation,
    )
    from sekai.finance.universe import SlotMap
