"""``set_attr`` on the finance kernels (the driver's code, shared by every kernel mode) checks
values as the envs do, refuses what the native envs refuse in their words, and broadcasts one
number to a per-asset parameter."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance import ProportionalCost
from sekai.finance.rewards import SimpleReturn
from sekai.utils._equal import structurally_equal
from sekai.vector.kernel_vec_env import KernelVecEnv

pytest.importorskip("torch")

PRICES = 100.0 * np.exp(np.cumsum(np.random.default_rng(1).normal(0.0, 0.01, 60)))


def _torch(env_id: str, **kwargs: Any) -> KernelVecEnv:
    envs = sekai.make_vec(env_id, 2, vectorization_mode="torch", **kwargs)
    assert isinstance(envs, KernelVecEnv)
    return envs


@pytest.mark.parametrize("value", [-0.5, float("nan")])
def test_a_cost_rate_the_env_refuses_is_refused(value: float) -> None:
    envs = _torch("Trading-v0")
    with pytest.raises(ValueError, match=r"^cost_rate must be a finite number >= 0, got"):
        envs.set_attr("cost_rate", value)
    assert envs.get_attr("cost_rate") == [0.001, 0.001]


@pytest.mark.parametrize(
    ("env_id", "name", "value"),
    [
        ("Trading-v0", "positions", (-3.0, 0.0, 3.0)),
        ("Trading-v0", "lookback", 3),
        ("MarketMaking-v0", "max_offset", 0.5),
        ("MarketMaking-v0", "dt", 0.1),
        ("OptimalExecution-v0", "tau", 0.1),
        ("Portfolio-v0", "n_assets", 3),
    ],
)
def test_read_only_names_are_refused_in_the_native_envs_words(
    env_id: str, name: str, value: Any
) -> None:
    native = sekai.make_vec(env_id, 2)
    with pytest.raises(AttributeError) as refused:
        native.set_attr(name, value)
    expected = str(refused.value).replace(type(native).__name__, "TorchVecEnv")
    with pytest.raises(AttributeError, match=f"^{re.escape(expected)}$"):
        _torch(env_id).set_attr(name, value)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
@pytest.mark.parametrize(
    ("name", "value", "what_to_do"),
    [
        ("reward_fn", SimpleReturn(), r"build a new env with the new one as its `reward` argument"),
        ("cost_model", ProportionalCost(0.01), r"set `cost_rate` to change a proportional cost's "
         r"rate, or build a new env with the new cost model as its `transaction_cost` argument"),
        ("capital", 5e5, r"build a new env with the new `capital` argument"),
    ],
)  # fmt: skip
def test_settings_the_kernel_traced_are_read_only_and_reported(
    env_id: str, name: str, value: Any, what_to_do: str
) -> None:
    # The native env changes them; a kernel fixed them when built: said so, not "no attribute".
    native, envs = sekai.make_vec(env_id, 2), _torch(env_id)
    with pytest.raises(
        AttributeError, match=rf"^TorchVecEnv\.{name} is read-only: the array kernel traced it "
        rf"when the env was built, so it cannot change; {what_to_do}\.$"
    ):  # fmt: skip
        envs.set_attr(name, value)
    assert repr(envs.get_attr(name)) == repr(native.get_attr(name))


def test_replayed_prices_are_read_only_as_in_the_native_env() -> None:
    envs = _torch("Trading-v0", prices=PRICES, episode_length=10, lookback=5)
    with pytest.raises(AttributeError, match=r"^TorchVecEnv\.prices is read-only: it is loaded"):
        envs.set_attr("prices", -PRICES[:, None])


@pytest.mark.parametrize(
    ("env_id", "name", "value"),
    [
        ("Trading-v0", "n_positions", 10**6),
        ("Trading-v0", "first", 0),
        ("Trading-v0", "log_returns", np.zeros((59, 1))),
        ("Trading-v0", "drift", 0.0),
        ("Portfolio-v0", "cash", np.zeros(6)),
        ("Portfolio-v0", "chol_t", None),
    ],
)
def test_fields_the_kernel_derives_are_not_parameters(env_id: str, name: str, value: Any) -> None:
    kwargs = (
        {"prices": PRICES, "episode_length": 10, "lookback": 5} if env_id == "Trading-v0" else {}
    )
    envs = _torch(env_id, **kwargs)
    before = envs.get_attr(name)[0]
    with pytest.raises(
        AttributeError, match=rf"^TorchVecEnv\.{name} is not a parameter: .*its parameters are \["
    ):
        envs.set_attr(name, value)
    assert structurally_equal(envs.get_attr(name)[0], before)
    envs.reset(seed=0)
    assert np.isfinite(envs.step(envs.batch_action_space.sample()).rewards.numpy()).all()


def test_one_number_is_broadcast_to_a_per_asset_parameter() -> None:
    envs = _torch("Portfolio-v0", n_assets=3, transaction_cost=ProportionalCost([1e-3] * 3))
    envs.set_attr("mu", 0.1)
    assert envs.get_attr("mu") == [0.1, 0.1]  # as given, as the native env reports it
    np.testing.assert_array_equal(envs.params.mu, np.full(3, 0.1))
    np.testing.assert_allclose(
        envs.params.drift, (0.1 - 0.5 * envs.params.sigma**2) * envs.params.dt
    )
    envs.set_attr("cost_rate", 0.002)
    assert envs.get_attr("cost_rate") == [0.002, 0.002]
    np.testing.assert_array_equal(envs.params.cost_rate, np.full(3, 0.002))
    with pytest.raises(ValueError, match=r"^sigma must be a number or 3 numbers"):
        envs.set_attr("sigma", np.ones(2))


def test_a_0d_tensor_is_the_number_it_holds_as_a_0d_numpy_array_is() -> None:
    import torch

    for envs in (_torch("Portfolio-v0", n_assets=3), sekai.make_vec("Portfolio-v0", 2)):
        envs.set_attr("mu", torch.tensor(0.1, dtype=torch.float64))  # broadcast on the kernel
        assert envs.get_attr("mu") == [0.1, 0.1]
        with pytest.raises(ValueError, match=r"^sigma must be a finite number >= 0, got -1\.0"):
            envs.set_attr("sigma", torch.tensor(-1.0))


@pytest.mark.parametrize(
    ("env_id", "names"),
    [
        ("Trading-v0", ["mu", "sigma", "dt"]),
        ("Portfolio-v0", ["mu", "sigma", "dt", "corr"]),
        ("MarketMaking-v0", ["sigma", "s0", "max_inventory"]),
        ("OptimalExecution-v0", ["eta", "X0", "n_steps"]),
    ],
)
def test_parameters_read_back_as_the_native_env_reports_them(env_id: str, names: list[str]) -> None:
    native, envs = sekai.make_vec(env_id, 2), _torch(env_id)

    def same(name: str) -> None:
        want, got = native.get_attr(name)[0], envs.get_attr(name)[0]
        assert type(got) is type(want), (name, got, want)
        np.testing.assert_array_equal(got, want)

    for name in names:
        same(name)
    changes: list[tuple[str, Any]] = [("sigma", 3)]
    if env_id == "Portfolio-v0":  # a number for every asset stays a number; an array an array
        changes += [("mu", 0.1), ("mu", np.full(5, 0.1)), ("sigma", [0.1, 0.2, 0.3, 0.4, 0.5])]
    for name, value in changes:
        native.set_attr(name, value)
        envs.set_attr(name, value)
        same(name)


def test_a_correlation_matrix_is_checked_as_the_env_checks_it() -> None:
    native, envs = sekai.make_vec("Portfolio-v0", 2, n_assets=2), _torch("Portfolio-v0", n_assets=2)
    with pytest.raises(ValueError) as refused:
        native.set_attr("corr", None)
    with pytest.raises(ValueError, match=f"^{re.escape(str(refused.value))}$"):
        envs.set_attr("corr", None)
    envs.reset(seed=0)
    envs.set_attr("corr", np.array([[1.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(envs.params.chol_t[0, 1] / envs.params.vol[1], 0.5)
    out = envs.step(np.full((2, 3), 1.0 / 3.0, dtype=np.float32))
    assert np.isfinite(out.rewards.numpy()).all()


def test_parameter_arrays_read_back_cannot_be_written() -> None:
    envs = _torch("Portfolio-v0")
    sigma = envs.get_attr("sigma")
    assert sigma[0] is sigma[1]  # one shared value, as in the native env
    with pytest.raises(ValueError, match="read-only"):
        sigma[0][:] = 9.0
    mine = np.full(5, 0.3)
    envs.set_attr("sigma", mine)
    mine[:] = 9.0  # the caller's array stays the caller's
    envs.set_attr("cost_rate", 0.002)  # converts every parameter again
    np.testing.assert_array_equal(envs.get_attr("sigma")[0], np.full(5, 0.3))
    with pytest.raises(ValueError, match="read-only"):
        envs.get_attr("sigma")[0][:] = 9.0  # after set_attr too
    np.testing.assert_allclose(envs._params.vol.numpy(), 0.3 * np.sqrt(envs.params.dt), 1e-6)


@pytest.mark.parametrize("name", ["mu", "sigma", "s0"])
@pytest.mark.parametrize("value", [[0.2], np.array([0.2])], ids=repr)
def test_trading_takes_one_number_for_its_gbm_as_the_env_does(name: str, value: Any) -> None:
    envs = _torch("Trading-v0")  # a shape-(1,) parameter took a list of one, as no env does
    with pytest.raises(ValueError) as caught:
        envs.set_attr(name, value)
    sync = sekai.make_vec("Trading-v0", 2, vectorization_mode="sync")
    with pytest.raises(ValueError) as native:
        sync.set_attr(name, value)
    assert str(caught.value) == str(native.value)
    assert np.ndim(envs.get_attr(name)[0]) == 0


@pytest.mark.parametrize(
    ("env_id", "name"), [("Trading-v0", "mu"), ("Portfolio-v0", "sigma"), ("MarketMaking-v0", "s0")]
)
def test_a_number_set_on_a_float_parameter_reads_back_as_the_native_env_reports_it(
    env_id: str, name: str
) -> None:
    from decimal import Decimal

    sync = sekai.make_vec(env_id, 2, vectorization_mode="sync")
    envs = _torch(env_id)
    for value in (2, Decimal("0.5"), np.float32(0.25)):
        sync.set_attr(name, value)
        envs.set_attr(name, value)
        reported, expected = envs.get_attr(name), sync.get_attr(name)
        assert reported == expected and type(reported[0]) is type(expected[0]) is float


@pytest.mark.parametrize(
    ("env_id", "name"), [("MarketMaking-v0", "n_steps"), ("OptimalExecution-v0", "n_steps")]
)
def test_a_numpy_integer_set_on_an_integer_parameter_reads_back_as_an_int(
    env_id: str, name: str
) -> None:
    sync = sekai.make_vec(env_id, 2, vectorization_mode="sync")
    envs = _torch(env_id)
    sync.set_attr(name, np.int64(30))
    envs.set_attr(name, np.int64(30))
    reported, expected = envs.get_attr(name), sync.get_attr(name)
    assert reported == expected == [30, 30]
    assert type(reported[0]) is type(expected[0]) is int


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
@pytest.mark.parametrize("kwargs", [{"sigma": 1000.0}, {"mu": 1e6}, {"sigma": 1e20}])
def test_a_gbm_whose_price_leaves_the_dtype_is_refused_on_every_kernel_api(
    env_id: str, kwargs: dict[str, float]
) -> None:
    # It gave prices of 0 and rewards at the log clamp; the native envs refuse it at reset.
    extreme = (
        r"built-in GBM can reach a price \(5 standard deviations from its mean\) of 0 or "
        r"infinity within 282 steps \(mu=.*\): these parameters are too extreme for float32"
    )
    with pytest.raises(ValueError, match=extreme):
        _torch(env_id, **kwargs)
    envs = _torch(env_id)
    name, value = next(iter(kwargs.items()))
    with pytest.raises(ValueError, match=r"set_attr\(.*\) refused: .*" + extreme):
        envs.set_attr(name, value)
    assert structurally_equal(envs.get_attr(name), sekai.make_vec(env_id, 2).get_attr(name))


def test_a_gbm_float32_cannot_run_is_refused_in_float32_and_run_in_float64() -> None:
    with pytest.raises(ValueError, match=r"too extreme for float32 prices.*in float64"):
        _torch("Trading-v0", sigma=10.0)  # 5 sd down reaches below float32's smallest normal
    envs = sekai.make_vec(
        "Trading-v0", 2, vectorization_mode="torch", sigma=10.0, vector_kwargs={"dtype": "float64"}
    )
    envs.reset(seed=0)
    prices = [envs.step(np.array([1, 1])).infos[0]["price"] for _ in range(20)]
    assert np.all(np.isfinite(prices)) and np.all(np.asarray(prices) > 0)


def test_a_replayed_history_leaves_the_gbm_unchecked() -> None:
    _torch("Trading-v0", prices=PRICES, lookback=5, episode_length=10)  # mu, sigma unused
