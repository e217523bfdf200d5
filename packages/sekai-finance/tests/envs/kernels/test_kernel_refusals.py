"""The kernels refuse, when built, what they cannot trace (Python code of a model, a cost model,
a reward or a sampler), naming the argument; they check every argument as the env does."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels import (
    MarketMakingKernel,
    OptimalExecutionKernel,
    PortfolioKernel,
    TradingKernel,
)
from sekai.finance import GBM, FixedCost, ProportionalCost, RewardFunction, StepOutcome


class UserReward(RewardFunction):
    def __call__(self, outcome: StepOutcome) -> Any:
        return outcome.log_return * 2.0


PRICES = 100.0 * np.exp(np.cumsum(np.full(40, 0.001)))


@pytest.mark.parametrize(
    ("kwargs", "argument", "names"),
    [
        ({"reward": UserReward()}, "reward", "UserReward"),
        ({"reward": UserReward() + 0.5}, "reward", "UserReward"),
        ({"transaction_cost": FixedCost(1.0)}, "transaction_cost", "FixedCost"),
        ({"model": GBM(mu=0.05, sigma=0.2)}, "model", "MarketModel"),
        ({"prices": PRICES, "sampler": "sequential"}, "sampler", "sampler='random'"),
    ],
)
@pytest.mark.parametrize("kernel", [TradingKernel, PortfolioKernel])
def test_window_kernels_refuse_untraceable_arguments_naming_them(
    kernel: type, kwargs: dict[str, Any], argument: str, names: str
) -> None:
    if kernel is PortfolioKernel and "prices" in kwargs:
        kwargs = {**kwargs, "prices": np.stack([PRICES, PRICES], axis=1)}
    if kernel is PortfolioKernel and "model" in kwargs:
        kwargs = {"model": GBM(np.zeros(2), np.full(2, 0.2))}
    with pytest.raises(ValueError, match="array kernel cannot trace") as info:
        kernel(episode_length=5, lookback=3, **kwargs)
    message = str(info.value)
    assert f"{argument}=" in message and names in message
    assert "vectorization_mode='native'" in message


@pytest.mark.parametrize(
    ("kernel", "kwargs"),
    [
        (TradingKernel, {"positions": (1.0,)}),
        (PortfolioKernel, {"n_assets": 0}),
        (MarketMakingKernel, {"order_size": 60}),
        (OptimalExecutionKernel, {"n_steps": 0}),
    ],
)
def test_kernels_check_their_arguments_as_the_envs_do(kernel: type, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        kernel(**kwargs)


def test_a_history_kernel_holds_the_history_in_its_params() -> None:
    kernel = TradingKernel(prices=PRICES, episode_length=5, lookback=3)
    assert kernel.replay
    np.testing.assert_array_equal(kernel.params.prices[:, 0], PRICES)
    assert not kernel.params.prices.flags.writeable  # the history's own array, not a copy
    assert kernel.reset_draws(kernel.params)[0].name == "u"
    assert kernel.step_draws(kernel.params) == ()


@pytest.mark.parametrize(
    "make",
    [
        lambda: PortfolioKernel(transaction_cost=ProportionalCost([1e-3] * 5)),
        lambda: PortfolioKernel(prices=np.stack([PRICES, PRICES], axis=1), episode_length=5),
        lambda: TradingKernel(prices=PRICES, episode_length=5),
        MarketMakingKernel,
        OptimalExecutionKernel,
    ],
)
def test_kernel_params_convert_to_torch_without_warnings(make: Any) -> None:
    pytest.importorskip("torch")
    from sekai.torch import TorchBackend
    from sekai.vector.kernel_step import convert_params, read_only_arrays

    params = read_only_arrays(make().params)  # as a KernelVecEnv holds them
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns when it wraps a read-only array
        convert_params(params, TorchBackend(dtype="float64").convert)
