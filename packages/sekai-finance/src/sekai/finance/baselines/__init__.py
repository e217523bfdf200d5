"""Baseline policies of the finance envs and ``evaluate()``: the bars a learned policy must clear.

Every baseline is a ``BaselinePolicy``, a callable ``policy(observation, env) -> action``; given
a vector env and a batch of observations it returns a batch of actions.
``evaluate(policy, env_id, episodes, seed)`` scores one on the env's native vector version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

_PKG = "sekai.finance.baselines"

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "evaluate": f"{_PKG}._evaluate",
    "BaselinePolicy": f"{_PKG}._evaluate",
    "RandomPolicy": f"{_PKG}.random",
    "ConstantPosition": f"{_PKG}.trading",
    "BuyAndHold": f"{_PKG}.trading",
    "kelly_weights": f"{_PKG}.portfolio",
    "ConstantMix": f"{_PKG}.portfolio",
    "KellyBuyAndHold": f"{_PKG}.portfolio",
    "EqualWeight": f"{_PKG}.portfolio",
    "AvellanedaStoikov": f"{_PKG}.market_making",
    "OptimalQuotes": f"{_PKG}.market_making",
    "AlmgrenChriss": f"{_PKG}.optimal_execution",
    "TWAP": f"{_PKG}.optimal_execution",
    "VolatilityFilter": f"{_PKG}.market",
    "RegimeOracle": f"{_PKG}.market",
    "InventorySkew": f"{_PKG}.lob",
    "FixedQuotes": f"{_PKG}.lob",
    "ConstantQuotes": f"{_PKG}.market_making",
}

__all__ = [
    "TWAP",
    "AlmgrenChriss",
    "AvellanedaStoikov",
    "BaselinePolicy",
    "BuyAndHold",
    "ConstantMix",
    "ConstantPosition",
    "ConstantQuotes",
    "EqualWeight",
    "FixedQuotes",
    "InventorySkew",
    "KellyBuyAndHold",
    "OptimalQuotes",
    "RandomPolicy",
    "RegimeOracle",
    "VolatilityFilter",
    "evaluate",
    "kelly_weights",
]


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.finance.baselines._evaluate import BaselinePolicy, evaluate
    from sekai.finance.baselines.lob import FixedQuotes, InventorySkew
    from sekai.finance.baselines.market import RegimeOracle, VolatilityFilter
    from sekai.finance.baselines.market_making import (
        AvellanedaStoikov,
        ConstantQuotes,
        OptimalQuotes,
    )
    from sekai.finance.baselines.optimal_execution import TWAP, AlmgrenChriss
    from sekai.finance.baselines.portfolio import (
        ConstantMix,
        EqualWeight,
        KellyBuyAndHold,
        kelly_weights,
    )
    from sekai.finance.baselines.random import RandomPolicy
    from sekai.finance.baselines.trading import BuyAndHold, ConstantPosition
