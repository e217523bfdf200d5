"""What the jax and torch modes' step does with a finance kernel: the reset noise drawn only in
steps that reset keeps every transition, actions that require grad are detached, and without
value checks float positions still index the Trading kernel. (Here, not in the sekai-jax and
sekai-torch suites: those sessions do not install sekai-finance; the accel session runs this.
What every mode, the numpy driver included, does alike is in test_kernel_mode_actions.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")

import jax.numpy as jnp  # noqa: E402

from sekai.jax import make_functional  # noqa: E402
from sekai.jax.functional import cond, draw  # noqa: E402
from sekai.vector.kernel_step import transition  # noqa: E402


def test_drawing_portfolio_reset_noise_in_the_branch_keeps_every_transition() -> None:
    env = make_functional("Portfolio-v0", 3, episode_length=3, lookback=4)
    kernel, n = env.kernel, env.num_envs

    def drawn_every_step(key: Any, state: Any, action: Any) -> Any:
        p = env._params(None)
        step_key, reset_key = jax.random.split(key)
        return transition(
            kernel, jnp, p, state, action,
            draw(step_key, kernel.step_draws(p), n, env.dtype),
            draw(reset_key, kernel.reset_draws(p), n, env.dtype),
            max_episode_steps=env.max_episode_steps,
            observation_dtype=env.observation_dtype,
            when=cond,
        )  # fmt: skip

    action = jnp.asarray(np.stack([env.action_space.sample() for _ in range(n)]))
    lazy_step, eager_step = jax.jit(env.step), jax.jit(drawn_every_step)
    lazy = before = env.reset(jax.random.PRNGKey(0)).state
    resets = 0
    for key in jax.random.split(jax.random.PRNGKey(1), 8):  # through autoresets
        new, old = lazy_step(key, lazy, action), eager_step(key, before, action)
        for got, want in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(old)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        lazy, before = new.state, old.state
        resets += int(new.done.any())
    assert resets >= 2


def test_torch_actions_that_require_grad_are_detached() -> None:
    envs = sekai.make_vec("Portfolio-v0", 2, vectorization_mode="torch", episode_length=3)
    envs.reset(seed=0)
    bias = torch.zeros(6, requires_grad=True)  # a policy's parameters
    for _ in range(5):  # through an autoreset
        out = envs.step(torch.softmax(envs.state["weights"] + bias, dim=-1))
    leaves = [*envs.state.values(), out.rewards, *out.observations.values()]
    assert not any(leaf.requires_grad for leaf in leaves)


@pytest.mark.parametrize("check_actions", [True, False])
def test_torch_float_positions_index_the_trading_kernel_with_or_without_checks(
    check_actions: bool,
) -> None:
    kwargs = {"vector_kwargs": {"check_actions": check_actions}}
    trading = sekai.make_vec("Trading-v0", 2, vectorization_mode="torch", **kwargs)
    trading.reset(seed=0)
    for batch in (np.array([0.0, 2.0]), torch.tensor([0.0, 2.0])):
        positions = [info["position"] for info in trading.step(batch).infos]
        assert positions[1] == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("check_actions", [True, False])
def test_trading_positions_of_any_integer_dtype_index_the_kernel(check_actions: bool) -> None:
    kwargs = {"vector_kwargs": {"check_actions": check_actions}}
    trading = sekai.make_vec("Trading-v0", 2, vectorization_mode="torch", **kwargs)
    trading.reset(seed=0)
    batches = [torch.tensor([0, 2], dtype=dtype) for dtype in (torch.uint8, torch.int8)]
    for batch in (*batches, np.array([0, 2], dtype=np.uint8)):
        positions = [info["position"] for info in trading.step(batch).infos]
        assert positions[1] == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("mode", ["torch", "jax"])
def test_the_ignored_device_actions_of_frozen_sub_envs_never_index_the_kernel(mode: str) -> None:
    # A policy may emit a sentinel for finished sub-envs: ignored, as from the host.
    to_device = torch.tensor if mode == "torch" else jnp.asarray
    for batch in ([7, -1], [float("nan"), 1.5]):
        envs = sekai.make_vec(
            "Trading-v0", 2, vectorization_mode=mode, max_episode_steps=1,
            vector_kwargs={"autoreset": False},
        )  # fmt: skip
        envs.reset(seed=0)
        envs.step(np.array([1, 1]))  # the time limit freezes both
        assert np.asarray(envs.step(to_device(batch)).rewards).tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    ("env_id", "changed"),
    [
        ("Trading-v0", {"sigma": 0.9, "mu": 0.5, "s0": 250.0}),
        ("Portfolio-v0", {"sigma": np.full(5, 0.6), "dt": 1 / 52}),  # correlated: a Cholesky
        ("MarketMaking-v0", {"total_time": 4.0, "sigma": 3.0}),
        ("OptimalExecution-v0", {"total_time": 2.0, "sigma": 0.5}),
    ],
)
def test_functional_params_changed_in_reset_and_step_move_what_they_derive(
    env_id: str, changed: dict[str, Any]
) -> None:
    # The kernels read derived terms (the GBM's drift, vol and Cholesky factor, log s0, the
    # step length): a changed parameter must change them as building the env with it does.
    default, built = make_functional(env_id, 3), make_functional(env_id, 3, **changed)
    params = {**default.default_params, **{k: jnp.asarray(v) for k, v in changed.items()}}
    assert set(default.default_params) == set(built.default_params)  # derived ones not there
    reset_key, step_key = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
    got, want = jax.jit(default.reset)(reset_key, params), built.reset(reset_key)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    action = jnp.asarray(np.stack([default.action_space.sample() for _ in range(3)]))
    moved = jax.jit(default.step)(step_key, got.state, action, params)
    same = built.step(step_key, want.state, action)
    for a, b in zip(jax.tree_util.tree_leaves(moved), jax.tree_util.tree_leaves(same)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
    unchanged = default.step(step_key, default.reset(reset_key).state, action)
    pairs = zip(jax.tree_util.tree_leaves(moved), jax.tree_util.tree_leaves(unchanged))
    assert not all(np.allclose(np.asarray(a), np.asarray(b)) for a, b in pairs)


@pytest.mark.parametrize(
    "env_id", sorted(spec.id for spec in sekai.all_specs() if spec.kernel_entry_point is not None)
)
def test_a_jitted_step_may_donate_the_state_reset_returns(env_id: str) -> None:
    # The PureJaxRL way: an eager reset, then a jitted step that donates its carry. Eager
    # kernels return one array for two state fields, or a state array as an info.
    env = make_functional(env_id, 3)
    first = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step, donate_argnums=(1,))
    action = jnp.asarray(np.stack([env.action_space.sample() for _ in range(3)]))
    t = step(jax.random.PRNGKey(1), first.state, action)
    step(jax.random.PRNGKey(2), t.state, action)
    for leaf in jax.tree_util.tree_leaves((first.observation, first.info)):
        assert not leaf.is_deleted()
        np.asarray(leaf)  # readable


def test_functional_params_leave_out_what_the_stateful_env_refuses_as_read_only() -> None:
    prices = np.linspace(100.0, 120.0, 40)
    trading = make_functional("Trading-v0", 2, prices=prices, lookback=4, episode_length=5)
    # The built-in GBM's mu, s0 and sigma are unused on a history (the stateful env refuses them).
    assert sorted(trading.default_params) == ["cost_rate", "dt"]
    key = jax.random.PRNGKey(0)
    with pytest.raises(
        ValueError, match=r"^params of TradingKernel: 'prices' is read-only: it is loaded when "
        r"the env is built\. reset and step take \['cost_rate', 'dt'\]"
    ):  # fmt: skip
        trading.reset(key, {"prices": jnp.asarray(prices[::-1])})
    with pytest.raises(ValueError, match=r"^params \['log_returns'\] of TradingKernel are fixed"):
        trading.reset(key, {"log_returns": jnp.zeros(39)})
    market = make_functional("MarketMaking-v0", 2)
    assert "max_offset" not in market.default_params
    with pytest.raises(ValueError, match=r"'max_offset' is read-only: it fixes the bounds of the"):
        market.reset(key, {**market.default_params, "max_offset": 2.0})


def test_functional_trading_takes_integral_float_positions() -> None:
    env = make_functional("Trading-v0", 2)
    state = env.reset(jax.random.PRNGKey(0)).state
    key = jax.random.PRNGKey(1)
    as_floats = env.step(key, state, jnp.array([0.0, 2.0]))
    as_ints = env.step(key, state, jnp.array([0, 2], jnp.int32))
    np.testing.assert_array_equal(np.asarray(as_floats.reward), np.asarray(as_ints.reward))


@pytest.mark.parametrize(
    ("env_id", "name"),
    [
        ("Portfolio-v0", "sigma"),
        ("Trading-v0", "mu"),
        ("MarketMaking-v0", "sigma"),
        ("OptimalExecution-v0", "sigma"),
    ],
)
def test_torch_set_attr_takes_a_parameter_tensor_that_requires_grad_as_its_value(
    env_id: str, name: str
) -> None:
    # The params' own checks read the value: torch refused to convert it (or a check called
    # it no finite number) before it was detached.
    envs = sekai.make_vec(env_id, 2, vectorization_mode="torch")
    value = torch.tensor(0.125, requires_grad=True)  # a domain-randomised, learned parameter
    envs.set_attr(name, value)
    assert envs.get_attr(name) == [0.125, 0.125]
    assert value.requires_grad  # the caller's tensor is left as it is
    envs.reset(seed=0)
