"""The functional API (sekai-jax) with the finance kernels: concrete params are checked and
converted as ``set_attr`` does, a 0-d array of any library is the number it holds."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

import sekai

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
make_functional = pytest.importorskip("sekai.jax").make_functional


def test_a_constant_functional_param_next_to_a_traced_one_is_converted_not_value_checked() -> None:
    env, key = make_functional("Portfolio-v0", 2), jax.random.PRNGKey(0)  # mu: one per asset
    _, expected, _ = env.reset(key, {"mu": [0.1] * 5, "sigma": 0.3})

    def observe(mu: Any, sigma: float) -> jax.Array:  # mu a constant of the trace, sigma traced
        return jax.jit(lambda sigma: env.reset(key, {"mu": mu, "sigma": sigma})[1]["returns"])(
            sigma
        )

    np.testing.assert_array_equal(observe([0.1] * 5, 0.3), expected["returns"])  # an array now
    np.testing.assert_array_equal(observe(0.1, 0.3), expected["returns"])  # one for every asset
    with pytest.raises(ValueError, match=r"^mu must be a number or 5 numbers .*got '0\.1'"):
        observe("0.1", 0.3)  # its kind and shape are still checked, in the env's words
    # Its value is not: the env's rules relate params, and a traced one's value is unknown
    # here. OptimalExecution-v0's price floor from s0 and sigma: sigma=50 is refused with the
    # default s0=50, not with the s0 values vmapped over.
    execution = make_functional("OptimalExecution-v0", 2)
    with pytest.raises(ValueError, match="execution price"):
        execution.reset(key, {"sigma": 50.0})
    batched = jax.vmap(lambda s0: execution.reset(key, {"s0": s0, "sigma": 50.0})[1])
    assert batched(jnp.array([1000.0, 2000.0])).shape[0] == 2


@pytest.mark.parametrize(
    ("env_id", "name", "traced"),
    [
        ("Trading-v0", "mu", "sigma"),
        ("MarketMaking-v0", "sigma", "s0"),
        ("MarketMaking-v0", "A", "s0"),  # errors naming the env's argument (fill_intensity)
        ("OptimalExecution-v0", "X0", "sigma"),  # were the kind-and-shape TypeError
    ],
)
@pytest.mark.parametrize("bad", ["0.1", None, True], ids=repr)
def test_a_constant_that_is_no_number_next_to_a_traced_one_is_refused_as_an_eager_call_does(
    env_id: str, name: str, traced: str, bad: Any
) -> None:
    env, key = make_functional(env_id, 2), jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match=r"^\w+ must be a") as eager:
        env.reset(key, {name: bad})
    partner = env.default_params[traced]
    with pytest.raises(ValueError) as next_to_traced:  # was the kind-and-shape TypeError
        jax.jit(lambda value: env.reset(key, {name: bad, traced: value})[1])(partner)
    assert str(next_to_traced.value) == str(eager.value)


@pytest.mark.parametrize("s0", [[100.0, 101.0], []], ids=["two", "none"])
def test_a_constant_s0_of_another_length_is_refused_naming_s0(s0: list[float]) -> None:
    # Trading-v0's params took the asset count from s0, then blamed mu for not matching it
    env, key = make_functional("Trading-v0", 2), jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match=r"^s0 must be a finite number > 0, got list"):
        env.reset(key, {"s0": s0})
    rate = env.default_params["cost_rate"]
    with pytest.raises(TypeError, match=r"kernel parameter 's0' is 100\.0; a new"):
        jax.jit(lambda rate: env.reset(key, {"s0": s0, "cost_rate": rate})[1])(rate)


@pytest.mark.parametrize(
    ("env_id", "name", "traced"),
    [("MarketMaking-v0", "sigma", "s0"), ("Trading-v0", "dt", "sigma")],
)
def test_a_decimal_constant_is_a_number_eagerly_and_next_to_a_traced_one(
    env_id: str, name: str, traced: str
) -> None:
    from decimal import Decimal

    env, key = make_functional(env_id, 2), jax.random.PRNGKey(0)
    value = Decimal(str(float(env.default_params[name])))
    _, eager, _ = env.reset(key, {name: value})  # was refused as "not a finite number"
    np.testing.assert_array_equal(eager, env.reset(key, {name: float(value)})[1])
    partner = env.default_params[traced]

    def observe(constant: Any) -> Any:
        return jax.jit(lambda v: env.reset(key, {name: constant, traced: v})[1])(partner)

    np.testing.assert_array_equal(observe(value), observe(float(value)))
    huge = Decimal("1e400")  # float() makes it infinite: a value the user never wrote
    with pytest.raises(ValueError, match=r"Decimal\('1E\+400'\), too large for a float64"):
        env.reset(key, {name: huge})
    with pytest.raises(ValueError, match=r"Decimal\('1E\+400'\), too large for a float64"):
        jax.jit(lambda v: env.reset(key, {name: huge, traced: v})[1])(partner)


def test_an_int_too_large_for_a_float64_is_refused_in_the_envs_words() -> None:
    key = jax.random.PRNGKey(0)
    market = make_functional("MarketMaking-v0", 2)  # its env's own check, as native set_attr
    with pytest.raises(
        ValueError, match=r"^sigma must be a finite number >= 0, got an int too large for a"
    ):
        market.reset(key, {"sigma": 10**400})


def test_concrete_functional_params_are_converted_as_set_attr_converts_them() -> None:
    key = jax.random.PRNGKey(0)
    trading = make_functional("Trading-v0", 2)  # mu is one number, as the env takes it
    assert trading.default_params["mu"].shape == ()
    _, expected, _ = trading.reset(key, {"mu": 0.3})
    for mu in (np.array(0.3), jnp.float32(0.3), Decimal("0.3")):
        _, observation, _ = trading.reset(key, {"mu": mu})
        np.testing.assert_array_equal(observation, expected)
    with pytest.raises(ValueError, match=r"^mu must be a finite number, got list \[0\.3\]\."):
        trading.reset(key, {"mu": [0.3]})  # as the env and set_attr refuse it
    portfolio = make_functional("Portfolio-v0", 2)  # a list becomes an array
    _, expected, _ = portfolio.reset(key, {"mu": np.full(5, 0.3)})
    for mu in ([0.3] * 5, 0.3, jnp.float32(0.3)):
        _, observation, _ = portfolio.reset(key, {"mu": mu})
        np.testing.assert_array_equal(observation["returns"], expected["returns"])


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])  # bfloat16: an ml_dtypes scalar
def test_a_0d_jax_array_is_the_number_it_holds_for_a_finance_param_on_every_api(
    dtype: Any,
) -> None:
    sigma = jnp.array(2.0, dtype=dtype)
    for mode in ("native", "jax"):
        vec = sekai.make_vec("MarketMaking-v0", 2, vectorization_mode=mode)
        vec.set_attr("sigma", sigma)
        assert vec.get_attr("sigma") == [2.0, 2.0]
    env = make_functional("MarketMaking-v0", 2)
    key = jax.random.PRNGKey(0)
    state, _, _ = env.reset(key, {"sigma": sigma})
    quotes = jnp.full((2, 2), 0.1)

    def moved(sigma: Any) -> list[Any]:
        return jax.tree_util.tree_leaves(env.step(key, state, quotes, {"sigma": sigma}).state)

    assert all(map(np.array_equal, moved(sigma), moved(2.0)))
    assert not all(map(np.array_equal, moved(sigma), moved(9.0)))  # sigma moves the mid
    with pytest.raises(ValueError, match=r"^sigma must be a finite number >= 0, got -2\.0\."):
        env.reset(key, {"sigma": -sigma})


@pytest.mark.parametrize("flag", [True, np.array(True), "jax"], ids=repr)
def test_a_bool_in_a_list_next_to_a_traced_value_is_refused_as_an_eager_call_does(
    flag: Any,
) -> None:
    flag = jnp.array(True) if flag == "jax" else flag  # NumPy makes the list floats
    env, key = make_functional("Portfolio-v0", 2), jax.random.PRNGKey(0)
    mu = [flag] + [0.05] * (env.default_params["mu"].shape[0] - 1)
    with pytest.raises(ValueError, match=r"^mu must be .*not bools") as eager:
        env.reset(key, {"mu": mu})
    with pytest.raises(ValueError) as next_to_traced:  # it was taken as 1.0
        jax.jit(lambda sigma: env.reset(key, {"mu": mu, "sigma": sigma})[1])(
            env.default_params["sigma"]
        )
    assert str(next_to_traced.value) == str(eager.value)


@pytest.mark.parametrize("library", ["jax", "torch"])
def test_a_0d_bool_array_of_any_library_in_a_list_is_refused_as_numpys_is(library: str) -> None:
    from sekai.envs.finance._common import check_per_asset
    from sekai.finance._values import real_array

    flag = jnp.array(True) if library == "jax" else pytest.importorskip("torch").tensor(True)
    with pytest.raises(TypeError, match=r"^mu must be real numbers, not bools\.$"):
        real_array("mu", [flag, 0.25])  # it was [1.0, 0.25]
    with pytest.raises(ValueError, match="not bools"):
        check_per_asset("mu", [0.5, flag], 2)


def test_a_replayed_historys_gbm_params_are_refused_and_left_out_of_the_defaults() -> None:
    # The replay never reads them: reset took mu=0.3 and ignored it, while set_attr refuses it.
    prices = 100 * np.exp(np.cumsum(np.full(60, 0.001)))
    kwargs = {"prices": prices, "lookback": 3, "episode_length": 5}
    env = make_functional("Trading-v0", 2, **kwargs)
    assert sorted(env.default_params) == ["cost_rate", "dt"]
    message = r"^mu= is a parameter of Trading-v0's built-in GBM, which the price history replaces"
    with pytest.raises(ValueError, match=message):
        env.reset(jax.random.PRNGKey(0), {"mu": 0.3})
    vec = sekai.make_vec("Trading-v0", 2, vectorization_mode="jax", **kwargs)
    with pytest.raises(ValueError, match=message):
        vec.set_attr("mu", 0.3)
    env.reset(jax.random.PRNGKey(0), env.default_params)  # the documented pattern still runs
    assert "mu" in make_functional("Trading-v0", 2).default_params  # simulated: it is used
