"""Every baseline policy of the four kernel envs scores the same on the kernel modes (numpy,
JAX, torch; each with its own random numbers) as on the native env: the mean episode return
within 4 standard errors (the two runs' errors combined).

A baseline reads the env's parameters and state (``positions``, ``weights``, inventories,
the step count) from a native vector env; the kernel runs are shown one whose state is copied
from the kernel's before every decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance.baselines import (
    TWAP,
    AlmgrenChriss,
    AvellanedaStoikov,
    BuyAndHold,
    ConstantMix,
    ConstantPosition,
    ConstantQuotes,
    EqualWeight,
    KellyBuyAndHold,
    OptimalQuotes,
    RandomPolicy,
    evaluate,
)
from sekai.vector.kernel_vec_env import KernelVecEnv, load_kernel

EPISODES = 128

# Short episodes: the baselines' scores, not the horizon, are under test.
KWARGS: dict[str, dict[str, Any]] = {
    "Trading-v0": {"episode_length": 20, "lookback": 5},
    "Portfolio-v0": {"episode_length": 20, "lookback": 5, "n_assets": 3},
    "MarketMaking-v0": {"n_steps": 20, "max_inventory": 5},
    "OptimalExecution-v0": {"n_steps": 10},
}
POLICIES: dict[str, list[Callable[[], Any]]] = {
    "Trading-v0": [BuyAndHold, lambda: ConstantPosition(0), lambda: RandomPolicy(1)],
    "Portfolio-v0": [
        EqualWeight,
        lambda: EqualWeight(include_cash=True),
        lambda: ConstantMix([0.5, 0.2, 0.1]),
        KellyBuyAndHold,
        lambda: RandomPolicy(2),
    ],
    "MarketMaking-v0": [
        AvellanedaStoikov,
        OptimalQuotes,
        lambda: ConstantQuotes(0.3),
        lambda: RandomPolicy(3),
    ],
    "OptimalExecution-v0": [AlmgrenChriss, TWAP, lambda: RandomPolicy(4)],
}


def _copy_state(native: Any, state: dict[str, np.ndarray]) -> None:
    """Show ``native`` the kernel's state, under the native env's own slot names."""
    native._t = state["t"].astype(np.int64)
    for name in ("equity", "position", "inventory", "mid", "cash", "shortfall"):
        if name in state:
            dtype = np.int64 if name == "inventory" and "cash" in state else np.float64
            setattr(native, f"_{name}", state[name].astype(dtype))
    if "weights" in state:  # asset-major in the native env
        native._weights = np.ascontiguousarray(state["weights"].T, dtype=np.float64)


def _kernel_env(env_id: str, mode: str) -> Any:
    kwargs = KWARGS[env_id]
    vector = {"autoreset": False}
    if mode == "numpy":
        return KernelVecEnv(load_kernel(sekai.spec(env_id), kwargs), EPISODES, **vector)
    return sekai.make_vec(env_id, EPISODES, vectorization_mode=mode, vector_kwargs=vector, **kwargs)


@pytest.fixture(scope="module")
def kernel_envs() -> Iterator[dict[tuple[str, str], Any]]:
    """One kernel env per (env, mode), shared by the policies (JAX compiles each once)."""
    envs: dict[tuple[str, str], Any] = {}
    yield envs
    for env in envs.values():
        env.close()


def _kernel_score(env: Any, env_id: str, policy: Any, seed: int) -> tuple[float, float]:
    native = sekai.make_vec(env_id, EPISODES, vector_kwargs={"autoreset": False}, **KWARGS[env_id])
    native.reset(seed=seed)  # started: its state reads are allowed
    to_numpy = env.backend.to_numpy
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    try:
        result: Any = env.reset(seed=seed)
        returns = np.zeros(EPISODES)
        done = np.zeros(EPISODES, dtype=bool)
        while not done.all():
            _copy_state(native, {k: np.asarray(to_numpy(v)) for k, v in env.state.items()})
            observations = _host(result.observations, to_numpy)
            result = env.step(policy(observations, native))
            returns += np.where(done, 0.0, np.asarray(to_numpy(result.rewards), np.float64))
            done |= np.asarray(to_numpy(result.terminated)) | np.asarray(to_numpy(result.truncated))
    finally:
        native.close()
    return float(returns.mean()), float(returns.std(ddof=1) / np.sqrt(EPISODES))


def _host(tree: Any, to_numpy: Callable[[Any], Any]) -> Any:
    """A host copy of a batch of observations (an array or a dict of arrays)."""
    if isinstance(tree, dict):
        return {key: _host(value, to_numpy) for key, value in tree.items()}
    return np.asarray(to_numpy(tree))


CASES = [
    (env_id, mode, index)
    for env_id, makers in POLICIES.items()
    for index in range(len(makers))
    for mode in ("numpy", "jax", "torch")
]


@pytest.mark.parametrize(("env_id", "mode", "index"), CASES)
def test_baseline_scores_on_kernel_modes_agree_with_the_native_env(
    env_id: str, mode: str, index: int, kernel_envs: dict[tuple[str, str], Any]
) -> None:
    if mode != "numpy":
        pytest.importorskip(mode)
    if (env_id, mode) not in kernel_envs:
        kernel_envs[env_id, mode] = _kernel_env(env_id, mode)
    make = POLICIES[env_id][index]
    native_mean, native_error = evaluate(
        make(), env_id, episodes=EPISODES, seed=100, num_envs=EPISODES, **KWARGS[env_id]
    )
    mean, error = _kernel_score(kernel_envs[env_id, mode], env_id, make(), seed=200)
    combined = float(np.hypot(native_error, error))
    assert abs(mean - native_mean) <= 4 * combined + 1e-12, (
        f"{make()!r} on {env_id} ({mode}): {mean:.6g} ± {error:.3g} vs native "
        f"{native_mean:.6g} ± {native_error:.3g}"
    )
