"""The finance plugin, the registered IDs and the cheap sekai.envs.finance package."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sekai
import sekai.envs.finance as finance_envs

IDS = ("Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0")


@pytest.mark.parametrize("env_id", IDS)
def test_ids_are_registered_with_native_vector_versions_and_no_time_limit(env_id):
    spec = sekai.spec(env_id)
    module = {
        "Trading-v0": "trading:TradingVecEnv",
        "Portfolio-v0": "portfolio:PortfolioVecEnv",
        "MarketMaking-v0": "market_making:MarketMakingVecEnv",
        "OptimalExecution-v0": "optimal_execution:OptimalExecutionVecEnv",
    }[env_id]
    assert spec.vector_entry_point == f"sekai.envs.finance.vector.{module}"
    assert isinstance(spec.entry_point, str) and spec.entry_point.startswith("sekai.envs.finance.")
    assert spec.max_episode_steps is None and spec.kwargs == {}


def test_make_adds_no_time_limit():
    env = sekai.make("Trading-v0")
    assert repr(env) == "<Trading-v0>"
    assert "elapsed_steps" not in env.reset(seed=0).info


def test_package_exports_every_public_name():
    expected = {
        "TradingEnv",
        "PortfolioEnv",
        "MarketMakingEnv",
        "OptimalExecutionEnv",
        "MarketEnv",
        "LimitOrderBookEnv",
        "LimitOrderBookMarket",
        "TradingVecEnv",
        "PortfolioVecEnv",
        "MarketMakingVecEnv",
        "OptimalExecutionVecEnv",
        "TradingRenderer",
        "PortfolioRenderer",
        "MarketRenderer",
        "MarketMakingRenderer",
        "OptimalExecutionRenderer",
        "LimitOrderBookRenderer",
        "LimitOrderBookMarketRenderer",
        "TradingTextRenderer",
        "PortfolioTextRenderer",
        "MarketTextRenderer",
        "MarketMakingTextRenderer",
        "OptimalExecutionTextRenderer",
        "LimitOrderBookTextRenderer",
        "LimitOrderBookMarketTextRenderer",
        "default_market",
        "simulate_gbm",
        "random_correlation",
        "sample_window",
    }
    assert set(finance_envs.__all__) == expected
    assert sekai.envs.TradingEnv is finance_envs.TradingEnv
    assert finance_envs.PortfolioVecEnv.__name__ == "PortfolioVecEnv"
    with pytest.raises(AttributeError):
        finance_envs.NotAnEnv  # noqa: B018


def test_importing_the_plugin_imports_no_env_code():
    code = (
        "import sys, sekai.envs.finance._plugin, sekai.envs.finance, sekai.finance\n"
        "env_modules = [m for m in sys.modules if m.startswith(('sekai.envs.finance.',"
        " 'sekai.finance.')) and not m.endswith('_plugin')]\n"
        "print(env_modules)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert output == "[]"


def test_toolkit_names_are_lazy_and_complete():
    import sekai.finance as toolkit

    for name in (
        "MarketData",
        "SequentialStart",
        "GBM",
        "ProportionalCost",
        "AccountConfig",
        "LogReturn",
        "RecordPerformance",
        "performance_summary",
    ):
        assert name in toolkit.__all__ and getattr(toolkit, name).__name__ == name
    assert toolkit.baselines.evaluate.__name__ == "evaluate"
    with pytest.raises(AttributeError):
        toolkit.NotAName  # noqa: B018
