"""The finance kernels through the numpy kernel driver (KernelVecEnv) against the native vector
envs: the same observations, rewards, flags and infos (final_observation, final_info,
reset_info, elapsed_steps) on every step, with autoreset, the time limit and freezing.

MarketMaking and OptimalExecution draw from the driver's generator as the native envs draw
from theirs, so the same seed gives the same sessions with nothing injected. The window envs
draw their normals through ``NormalBlocks`` and their window starts through a sampler: those
draws are read back from the native env and handed to the driver in place of its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.kernels import (
    MarketMakingKernel,
    OptimalExecutionKernel,
    PortfolioKernel,
    TradingKernel,
)
from sekai.envs.finance.kernels._window import position_uniforms
from sekai.envs.finance.vector import (
    MarketMakingVecEnv,
    OptimalExecutionVecEnv,
    PortfolioVecEnv,
    TradingVecEnv,
)
from sekai.finance import DrawdownPenalty, LogReturn
from sekai.registry.kernels import load_kernel
from sekai.vector.kernel import Draw
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_vec_env import KernelVecEnv

N_ENVS = 5


class InjectedNumpy(NumpyBackend):
    """The numpy driver taking its draws, in order, from ``queue``."""

    def __init__(self) -> None:
        super().__init__()
        self.queue: deque[np.ndarray] = deque()

    def _sample(self, draw: Draw, shape: tuple[int, ...]) -> np.ndarray:
        value = self.queue.popleft()
        assert value.shape == shape, (draw, value.shape, shape)
        return value


def _same(actual: Any, expected: Any, what: str, close: Callable[..., None]) -> None:
    if isinstance(expected, Mapping):
        assert set(actual) == set(expected), what
        for key in expected:
            _same(actual[key], expected[key], f"{what}[{key!r}]", close)
        return
    if isinstance(expected, np.ndarray) and expected.dtype == np.float32:
        actual = np.asarray(actual)
        assert actual.dtype == np.float32, what
    close(actual, expected, what)


def _history(n_rows: int, n_assets: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    return 20.0 * np.exp(np.cumsum(rng.normal(0.0, 0.04, (n_rows, n_assets)), axis=0))


WINDOW_CASES: dict[str, tuple[type, type, dict[str, Any]]] = {
    "Portfolio simulated": (PortfolioVecEnv, PortfolioKernel, {"episode_length": 5, "n_assets": 3}),
    "Portfolio replayed, drawdown": (
        PortfolioVecEnv,
        PortfolioKernel,
        {
            "prices": _history(40, 2),
            "episode_length": 6,
            "lookback": 4,
            "reward": LogReturn() - DrawdownPenalty(),
        },
    ),
    "Trading simulated": (TradingVecEnv, TradingKernel, {"episode_length": 6, "lookback": 3}),
    "Trading replayed": (
        TradingVecEnv,
        TradingKernel,
        {"prices": _history(30, 1)[:, 0], "episode_length": 5, "lookback": 2},
    ),
}
VECTOR_OPTIONS = {
    "autoreset": {},
    "time limit": {"max_episode_steps": 4},
    "frozen": {"autoreset": False},
}


def _window_actions(kernel: Any, rng: np.random.Generator) -> np.ndarray:
    space = kernel.action_space
    if isinstance(kernel, TradingKernel):
        return rng.integers(0, space.n, N_ENVS)
    return rng.uniform(-0.2, 1.2, (N_ENVS, *space.shape)).astype(np.float32)


@pytest.mark.parametrize("options", list(VECTOR_OPTIONS))
@pytest.mark.parametrize("case", list(WINDOW_CASES))
def test_window_kernels_through_the_numpy_driver_match_the_native_envs(
    case: str, options: str, kernel_harness: Any
) -> None:
    native_cls, kernel_cls, kwargs = WINDOW_CASES[case]
    vector = VECTOR_OPTIONS[options]
    native = native_cls(N_ENVS, **kwargs, **vector)
    kernel = kernel_cls(**kwargs)
    backend = InjectedNumpy()
    driven = KernelVecEnv(kernel, N_ENVS, backend=backend, **vector)
    recorder = kernel_harness.NormalsRecorder()
    native._normals = recorder
    params = kernel.params

    def feed(rows: np.ndarray) -> None:
        if kernel.replay:
            if len(rows):
                start = np.asarray(native._start)[rows]
                backend.queue.append(position_uniforms(start - params.first))
            return
        while recorder.log:
            z = recorder.log.popleft()
            backend.queue.append(z.transpose(1, 0, 2) if z.ndim == 3 else z)

    close = kernel_harness.close
    expected = native.reset(seed=3)
    feed(np.arange(N_ENVS))
    actual = driven.reset(seed=3)
    _same(actual.observations, expected.observations, "reset observations", close)
    for i in range(N_ENVS):
        _same(actual.infos[i], expected.infos[i], f"reset info {i}", close)
    rng = np.random.default_rng(0)
    for step in range(14):
        action = _window_actions(kernel, rng)
        expected = native.step(action)
        feed(np.flatnonzero(expected.dones) if driven.autoreset else np.arange(0))
        actual = driven.step(action)
        _same(actual.observations, expected.observations, f"step {step} observations", close)
        for name in ("rewards", "terminated", "truncated"):
            close(getattr(actual, name), getattr(expected, name), f"step {step} {name}")
        for i in range(N_ENVS):
            _same(actual.infos[i], expected.infos[i], f"step {step} info {i}", close)
    assert not backend.queue


def _session_actions(kernel: Any, rng: np.random.Generator) -> np.ndarray:
    width = kernel.action_space.shape[0]
    return rng.uniform(-0.1, 1.1, (N_ENVS, width)).astype(np.float32)


SESSION_CASES: dict[str, tuple[type, type, dict[str, Any]]] = {
    "MarketMaking": (MarketMakingVecEnv, MarketMakingKernel, {"n_steps": 6, "max_inventory": 3}),
    "OptimalExecution": (OptimalExecutionVecEnv, OptimalExecutionKernel, {"n_steps": 5}),
}


@pytest.mark.parametrize("options", list(VECTOR_OPTIONS))
@pytest.mark.parametrize("case", list(SESSION_CASES))
def test_session_kernels_through_the_numpy_driver_match_the_native_envs_seed_for_seed(
    case: str, options: str, kernel_harness: Any
) -> None:
    native_cls, kernel_cls, kwargs = SESSION_CASES[case]
    vector = VECTOR_OPTIONS[options]
    native = native_cls(N_ENVS, **kwargs, **vector)
    driven = KernelVecEnv(kernel_cls(**kwargs), N_ENVS, **vector)
    close = kernel_harness.close
    expected, actual = native.reset(seed=9), driven.reset(seed=9)
    _same(actual.observations, expected.observations, "reset observations", close)
    rng = np.random.default_rng(0)
    for step in range(14):
        action = _session_actions(driven.kernel, rng)
        expected, actual = native.step(action), driven.step(action)
        _same(actual.observations, expected.observations, f"step {step} observations", close)
        scale = (
            kernel_harness.wealth_scale(driven.last_transition.info)
            if "cash" in (driven.last_transition.info)
            else 0.0
        )
        close(actual.rewards, expected.rewards, f"step {step} rewards", scale=scale)
        for name in ("terminated", "truncated"):
            close(getattr(actual, name), getattr(expected, name), f"step {step} {name}")
        for i in range(N_ENVS):
            _same(actual.infos[i], expected.infos[i], f"step {step} info {i}", close)


@pytest.mark.parametrize(
    "env_id", ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]
)
def test_every_finance_spec_names_its_kernel(env_id: str) -> None:
    from sekai.registry.kernels import load_kernel

    spec = sekai.spec(env_id)
    kernel = load_kernel(spec, {})
    assert type(kernel).__name__ == env_id.split("-")[0] + "Kernel"
    envs = KernelVecEnv(kernel, 2)
    # The single env's metadata (render_fps), as every other backend reports it.
    assert envs.metadata == sekai.make(env_id).metadata != {}
    assert envs.metadata is not type(kernel).metadata  # the env's copy, not the class's


@pytest.mark.parametrize(
    ("case", "name", "value"),
    [
        ("MarketMaking", "total_time", 2.5),
        ("MarketMaking", "sigma", 0.5),
        ("OptimalExecution", "total_time", 10.0),
        ("OptimalExecution", "n_steps", 7),
    ],
)
def test_set_attr_reaches_the_kernel_with_its_derived_parameters(
    case: str, name: str, value: Any, kernel_harness: Any
) -> None:
    native_cls, kernel_cls, kwargs = SESSION_CASES[case]
    native = native_cls(N_ENVS, **kwargs)
    driven = KernelVecEnv(kernel_cls(**kwargs), N_ENVS)
    native.set_attr(name, value)
    driven.set_attr(name, value)
    expected, actual = native.reset(seed=2), driven.reset(seed=2)
    rng = np.random.default_rng(1)
    for step in range(8):
        action = _session_actions(driven.kernel, rng)
        expected, actual = native.step(action), driven.step(action)
        for i in range(N_ENVS):
            _same(actual.infos[i], expected.infos[i], f"step {step} info {i}", kernel_harness.close)


def test_set_attr_checks_the_value_as_the_env_does_and_derives_the_gbm_terms() -> None:
    driven = KernelVecEnv(PortfolioKernel(n_assets=2, episode_length=5), 2)
    with pytest.raises(ValueError, match="sigma"):
        driven.set_attr("sigma", np.array([0.2, -0.1]))
    driven.set_attr("mu", np.array([0.1, 0.3]))
    params = driven.params
    np.testing.assert_allclose(params.drift, (params.mu - 0.5 * params.sigma**2) * params.dt)


def test_set_attr_refuses_an_int_too_large_for_a_float64_in_the_native_envs_words() -> None:
    native, driven = MarketMakingVecEnv(2), KernelVecEnv(MarketMakingKernel(), 2)
    message = r"^sigma must be a finite number >= 0, got an int too large for a float64\.$"
    for envs in (native, driven):
        with pytest.raises(ValueError, match=message):
            envs.set_attr("sigma", 10**400)
    assert driven.get_attr("sigma") == native.get_attr("sigma") == [2.0, 2.0]


@pytest.mark.parametrize("s0", [[100.0, 101.0], []], ids=["two", "none"])
def test_set_attr_of_an_s0_of_another_length_names_s0(s0: list[float]) -> None:
    # the params took the asset count from s0, then blamed mu for not matching it; the env
    # takes one number for s0, in these words
    driven = KernelVecEnv(TradingKernel(episode_length=5), 3)  # 3: no list of one per sub-env
    with pytest.raises(ValueError, match=r"^s0 must be a finite number > 0, got list"):
        driven.set_attr("s0", s0)
    assert driven.get_attr("s0") == [100.0] * 3


def test_set_attr_takes_a_per_sub_env_list_of_one_array() -> None:
    envs = KernelVecEnv(load_kernel(sekai.spec("Portfolio-v0"), {}), 2)
    mu = np.asarray(envs.get_attr("mu")[0]) * 2
    envs.set_attr("mu", [mu, mu.copy()])
    np.testing.assert_array_equal(np.asarray(envs.get_attr("mu")[0]), mu)
    with pytest.raises(ValueError, match="different values per sub-env"):
        envs.set_attr("mu", [mu, mu + 1])


@pytest.mark.parametrize(
    ("kernel", "native", "name", "value"),
    [
        (TradingKernel, TradingVecEnv, "mu", 0.1),
        (TradingKernel, TradingVecEnv, "s0", 50.0),
        (PortfolioKernel, PortfolioVecEnv, "sigma", 0.3),
    ],
)
def test_set_attr_of_the_gbm_on_a_replayed_history_is_refused_as_the_native_env_refuses_it(
    kernel: Any, native: Any, name: str, value: float
) -> None:
    # The replay never reads the built-in GBM: the kernel stored the value and ignored it.
    rows = np.exp(np.cumsum(np.full((40, 2), 0.001), axis=0)) * 100
    prices = rows[:, 0] if kernel is TradingKernel else rows
    kwargs = {"prices": prices, "lookback": 3, "episode_length": 5}
    driven, native_env = KernelVecEnv(kernel(**kwargs), 2), native(2, **kwargs)
    message = rf"^{name}= is a parameter of .*built-in GBM, which the price history replaces"
    for envs in (native_env, driven):
        with pytest.raises(ValueError, match=message):
            envs.set_attr(name, value)
    np.testing.assert_array_equal(driven.get_attr(name)[0], native_env.get_attr(name)[0])
    simulated = KernelVecEnv(kernel(lookback=3, episode_length=5), 2)
    simulated.set_attr(name, value)  # the simulation reads it
    assert np.all(np.asarray(simulated.get_attr(name)[0]) == value)


def test_get_attr_reads_the_envs_settings_as_the_native_env_reports_them() -> None:
    # The kernel modes knew these names (set_attr refuses them as read-only) but get_attr
    # raised a bare AttributeError, and positions came back as an array, not the env's tuple.
    prices = 100 * np.exp(np.cumsum(np.full(40, 0.001)))
    kwargs = {"prices": prices, "lookback": 3, "episode_length": 5, "positions": (0.0, 1.0)}
    driven, native = KernelVecEnv(TradingKernel(**kwargs), 2), TradingVecEnv(2, **kwargs)
    for name in ("lookback", "episode_length", "transaction_cost", "positions"):
        assert driven.get_attr(name) == native.get_attr(name), name
    assert driven.get_attr("positions") == [(0.0, 1.0)] * 2
    np.testing.assert_array_equal(driven.get_attr("prices")[0], native.get_attr("prices")[0])
    for name in ("reward_fn", "cost_model"):
        assert repr(driven.get_attr(name)) == repr(native.get_attr(name)), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        driven.get_attr("nope")
