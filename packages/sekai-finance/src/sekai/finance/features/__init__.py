"""Causal features: transforms whose row t depends on rows <= t only."""

from __future__ import annotations

from sekai.finance.features.causal import asof_join, check_causal
from sekai.finance.features.rolling import (
    ewm_mean,
    ewm_std,
    realized_volatility,
    rolling_mean,
    rolling_std,
    rolling_zscore,
)
from sekai.finance.features.transforms import (
    cross_sectional_rank,
    cross_sectional_zscore,
    forward_fill,
    lag,
    log_returns,
    momentum,
    simple_returns,
)

__all__ = [
    "asof_join",
    "check_causal",
    "cross_sectional_rank",
    "cross_sectional_zscore",
    "ewm_mean",
    "ewm_std",
    "forward_fill",
    "lag",
    "log_returns",
    "momentum",
    "realized_volatility",
    "rolling_mean",
    "rolling_std",
    "rolling_zscore",
    "simple_returns",
]
