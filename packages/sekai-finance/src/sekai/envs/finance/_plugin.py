"""The ``finance`` plugin: registers the finance IDs (as strings; imports no env code)."""

from __future__ import annotations

from sekai.plugins import EnvRegistrar, hookimpl

__all__ = ["sekai_register_envs"]

_PKG = "sekai.envs.finance"

# (id, module:class, native module:class, kernel module:class). The horizon is part of each
# env, so no time limit.
_NATIVE_ENVS: tuple[tuple[str, str, str, str], ...] = (
    ("Trading-v0", "trading:TradingEnv", "trading:TradingVecEnv", "trading:TradingKernel"),
    (
        "Portfolio-v0",
        "portfolio:PortfolioEnv",
        "portfolio:PortfolioVecEnv",
        "portfolio:PortfolioKernel",
    ),
    (
        "MarketMaking-v0",
        "market_making:MarketMakingEnv",
        "market_making:MarketMakingVecEnv",
        "market_making:MarketMakingKernel",
    ),
    (
        "OptimalExecution-v0",
        "optimal_execution:OptimalExecutionEnv",
        "optimal_execution:OptimalExecutionVecEnv",
        "optimal_execution:OptimalExecutionKernel",
    ),
)


@hookimpl
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Register the six finance IDs; four of them with native vector versions (``[native vec]``)
    and array kernels (the numpy/JAX/torch kernel modes)."""
    for env_id, entry, native, kernel in _NATIVE_ENVS:
        registry.register(
            env_id,
            f"{_PKG}.{entry}",
            vector_entry_point=f"{_PKG}.vector.{native}",
            kernel_entry_point=f"{_PKG}.kernels.{kernel}",
        )
    # No native versions: the vector page names exactly the four above as built-in native envs.
    registry.register("Market-v0", f"{_PKG}.market:MarketEnv")
    registry.register("LimitOrderBook-v0", f"{_PKG}.lob:LimitOrderBookEnv")
