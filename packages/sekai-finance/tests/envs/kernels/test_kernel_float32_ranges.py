"""A session or window kernel run in float32 refuses, when the vector env is built, parameters
that only float64 holds: integers beyond int32, rewards beyond float32, a GBM whose prices can
leave float32's range (the equity's bound: test_kernel_equity.py). Each refusal names the
dtype and the float64 way out."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels import MarketMakingKernel, TradingKernel
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_vec_env import KernelVecEnv

INT32_MAX = 2**31 - 1
FLOAT32_PRICES = (
    "TradingEnv's built-in GBM can reach a price (5 standard deviations from its mean) of 0 or "
    "infinity within 282 steps (mu=0.05, sigma=10.0, s0=100.0, dt=0.003968253968253968): these "
    "parameters are too extreme for float32 prices. Use a smaller sigma or mu, or pass prices=, "
    "or run the kernel in float64 (JAX: jax_enable_x64)."
)
INT32_COUNTS = (
    "MarketMaking-v0's array kernel counts in int32 when it runs in float32 or float16 (JAX: "
    f"without jax_enable_x64): n_steps={INT32_MAX + 1} exceeds 2**31 - 1 = {INT32_MAX}. Run it "
    f"in float64, use vectorization_mode='native', or keep n_steps <= {INT32_MAX}."
)
FLOAT32_REWARD = (
    "MarketMaking-v0 (array kernel in float32): sigma=1e+20 makes sigma**2 overflow float32: "
    "sigma**2 reaches 1e+40, above float32's largest value 3.403e+38. Lower sigma, or run the "
    "kernel in float64 (JAX: jax_enable_x64) or with vectorization_mode='native'."
)


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        pytest.param(lambda: TradingKernel(sigma=10.0), FLOAT32_PRICES, id="gbm-prices"),
        pytest.param(lambda: MarketMakingKernel(n_steps=INT32_MAX + 1), INT32_COUNTS, id="int32"),
        pytest.param(lambda: MarketMakingKernel(sigma=1e20), FLOAT32_REWARD, id="reward"),
    ],
)
def test_a_float32_kernel_refuses_what_only_float64_holds(
    kernel: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        KernelVecEnv(kernel(), 2, backend=NumpyBackend(np.float32))
    KernelVecEnv(kernel(), 2).close()  # float64 holds them


@pytest.mark.parametrize(
    "kernel",
    [
        pytest.param(lambda: TradingKernel(sigma=1.0), id="gbm-prices"),
        pytest.param(lambda: MarketMakingKernel(n_steps=INT32_MAX), id="int32"),
        pytest.param(lambda: MarketMakingKernel(sigma=1e19), id="reward"),
    ],
)
def test_a_float32_kernel_takes_the_same_kinds_of_parameters_within_its_range(
    kernel: Callable[[], Any],
) -> None:
    KernelVecEnv(kernel(), 2, backend=NumpyBackend(np.float32)).close()


def test_a_float32_kernel_refuses_a_reward_term_whose_partial_product_overflows() -> None:
    # 0.5 * risk_aversion * sigma**2 = 5e39 passes float32's range before dt * max_inventory**2
    # (0.005) brings the product back to 2.5e37: the step computes the partial product first
    params: dict[str, Any] = {"risk_aversion": 1e30, "sigma": 1e5, "max_inventory": 1}
    message = (
        "0.5 * risk_aversion * sigma**2 * dt * max_inventory**2 reaches 5e+39, above float32's "
        "largest value"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        KernelVecEnv(MarketMakingKernel(**params), 2, backend=NumpyBackend(np.float32))
    KernelVecEnv(MarketMakingKernel(**params), 2).close()  # float64 holds it
