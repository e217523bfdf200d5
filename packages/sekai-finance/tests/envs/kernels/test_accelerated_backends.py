"""The finance kernels on JAX (jitted) and torch give the numpy driver's trajectories under the
same injected draws: float64 within 1e-12, float32 within 1e-5 (``sekai.testing.kernels``),
across autoresets, for simulated and replayed prices. Each case needing jax or torch skips where
that library is not installed; the numpy driver's cases run everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.kernels import (
    MarketMakingKernel,
    OptimalExecutionKernel,
    PortfolioKernel,
    TradingKernel,
)
from sekai.finance import DifferentialSharpe, DrawdownPenalty, LogReturn, ProportionalCost
from sekai.testing.kernels import assert_kernel_equivalent


def _history(n_rows: int, n_assets: int) -> np.ndarray:
    rng = np.random.default_rng(4)
    return 30.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, (n_rows, n_assets)), axis=0))


CASES: dict[str, Callable[[], Any]] = {
    "Portfolio simulated": lambda: PortfolioKernel(episode_length=12, lookback=6),
    "Portfolio simulated, shorts, stateful rewards": lambda: PortfolioKernel(
        episode_length=10,
        lookback=4,
        n_assets=3,
        allow_short=True,
        transaction_cost=ProportionalCost([1e-3, 0.0, 2e-3]),
        reward=LogReturn() - DrawdownPenalty() + 0.1 * DifferentialSharpe(0.05),
    ),
    "Portfolio simulated, drawdown penalty": lambda: PortfolioKernel(
        episode_length=10, lookback=4, n_assets=2, reward=LogReturn() - DrawdownPenalty()
    ),
    "Portfolio replayed": lambda: PortfolioKernel(
        prices=_history(60, 4), episode_length=10, lookback=5
    ),
    "Trading simulated": lambda: TradingKernel(episode_length=12, lookback=5),
    "Trading replayed": lambda: TradingKernel(
        prices=_history(50, 1)[:, 0], episode_length=9, lookback=4
    ),
    "MarketMaking": lambda: MarketMakingKernel(n_steps=12, max_inventory=4),
    "OptimalExecution": lambda: OptimalExecutionKernel(n_steps=8),
}


# The differential Sharpe ratio divides by its EMA variance to the power 1.5, just above 1e-12
# in the first steps: float32 cannot compute it to 1e-5 on any backend (only float64 is compared).
FLOAT64_ONLY = {"Portfolio simulated, shorts, stateful rewards"}


@pytest.mark.parametrize("case", list(CASES))
def test_finance_kernel_runs_the_same_on_jax_and_torch_as_on_numpy(case: str) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("torch")
    dtypes = ("float64",) if case in FLOAT64_ONLY else ("float64", "float32")
    assert_kernel_equivalent(
        CASES[case], dtypes=dtypes, num_envs=6, steps=30, seed=5, max_episode_steps=20
    )


def _torch_inputs(case: str, n_envs: int = 4, device: str = "cpu") -> tuple[Any, ...]:
    """``(kernel, params, reset draws, mask, action, step draws)`` as torch tensors."""
    import torch

    from sekai.vector.kernel_step import convert_params

    kernel = CASES[case]()
    params = convert_params(kernel.params, lambda v: torch.as_tensor(np.array(v), device=device))
    rng = np.random.default_rng(0)

    def noise(draws: Any) -> dict[str, Any]:
        return {
            d.name: torch.as_tensor(
                rng.random((n_envs, *d.shape))
                if d.distribution == "uniform"
                else rng.standard_normal((n_envs, *d.shape)),
                device=device,
            )
            for d in draws
        }

    mask = torch.ones(n_envs, dtype=torch.bool, device=device)
    actions = np.stack([kernel.action_space.sample() for _ in range(n_envs)])
    action = torch.as_tensor(actions, device=device)
    reset_draws, step_draws = noise(kernel.reset_draws(params)), noise(kernel.step_draws(params))
    return kernel, params, reset_draws, mask, action, step_draws


@pytest.mark.parametrize("case", list(CASES))
def test_finance_kernel_copies_no_python_number_to_the_torch_device(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as xp

    kernel, params, reset_draws, mask, action, step_draws = _torch_inputs(case)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a host value copied into a tensor: {args!r}")

    # A synchronising copy on a GPU per call, and refused inside a CUDA graph.
    for name in ("asarray", "as_tensor", "tensor"):
        monkeypatch.setattr(torch, name, refuse)
    state, _, _ = kernel.reset(xp, params, reset_draws, mask, None)
    state, *_ = kernel.step(xp, params, state, action, step_draws)
    kernel.reset(xp, params, reset_draws, ~mask, state)


@pytest.mark.parametrize("case", list(CASES))
def test_finance_kernel_makes_its_new_arrays_on_the_drivers_device(case: str) -> None:
    pytest.importorskip("torch")
    import array_api_compat.torch as xp

    # torch's "meta" device stands in for a GPU: an array made on the CPU (no device given)
    # cannot meet the driver's arrays in one operation.
    kernel, params, reset_draws, mask, action, step_draws = _torch_inputs(case, device="meta")
    state, obs, info = kernel.reset(xp, params, reset_draws, mask, None)
    state, obs, reward, terminated, truncated, info = kernel.step(
        xp, params, state, action, step_draws
    )
    state, obs, info = kernel.reset(xp, params, reset_draws, terminated | truncated, state)
    leaves = [*state.values(), *info.values(), reward, terminated, truncated]
    leaves += list(obs.values()) if isinstance(obs, dict) else [obs]
    assert {leaf.device.type for leaf in leaves} == {"meta"}


@pytest.mark.parametrize("case", list(CASES))
def test_finance_kernel_compiles_with_torch_compile_without_graph_breaks(case: str) -> None:
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as xp

    kernel, params, reset_draws, mask, action, draws = _torch_inputs(case)
    state, _, _ = kernel.reset(xp, params, reset_draws, mask, None)

    def step(state: Any, action: Any, draws: Any) -> Any:
        return kernel.step(xp, params, state, action, draws)

    # fullgraph: any Python branching on a tensor's value would break the graph and raise.
    compiled = torch.compile(step, backend="eager", fullgraph=True)
    expected = step(state, action, draws)
    got = compiled(state, action, draws)
    torch.testing.assert_close(got[2], expected[2])


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("Trading-v0", {"episode_length": 5, "lookback": 3}),
        ("Portfolio-v0", {"episode_length": 5, "lookback": 3, "n_assets": 2}),
        ("Portfolio-v0", {"prices": _history(30, 2), "episode_length": 5, "lookback": 3}),
        ("MarketMaking-v0", {"n_steps": 5}),
        ("OptimalExecution-v0", {"n_steps": 5}),
    ],
)
def test_finance_kernel_runs_inside_jit_and_scan_through_autoresets(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from sekai.jax import make_functional

    env = make_functional(env_id, 4, **kwargs)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    shape = (4, *(env.action_space.shape or ()))
    action = jnp.ones(shape, jnp.int32) if env_id == "Trading-v0" else jnp.full(shape, 0.5)

    def body(carry: Any, key: Any) -> Any:
        t = env.step(key, carry, action)
        return t.state, (t.reward, t.done)

    run = jax.jit(lambda s, k: jax.lax.scan(body, s, jax.random.split(k, 12)))
    _, (rewards, done) = run(state, jax.random.PRNGKey(1))
    assert bool(jnp.all(jnp.isfinite(rewards)))
    assert int(done.sum()) >= 8  # every sub-env's episode ended at least twice


# Fills certain at distance 0, impossible at 5 (A e^{-k 5} dt is about 1e-103); a still mid.
_CERTAIN_FILLS = {"fill_intensity": 1e9, "fill_decay": 50.0, "sigma": 0.0, "n_steps": 50}
# The largest limits each integer width holds, with a lot of half the limit.
_LIMITS = {"float64": (2**63 - 1, 2**62), "float32": (2**31 - 1, 2**30)}


@pytest.mark.parametrize("backend", ["numpy", "jax", "torch"])
@pytest.mark.parametrize("dtype", list(_LIMITS))
def test_market_making_kernel_stops_at_the_limit_where_q_plus_size_would_wrap(
    backend: str, dtype: str
) -> None:
    """``q + size <= Q`` wrapped past the integers' end to a negative number: a bid still filled
    and the inventory went round to the most negative integer (the single env stops at Q)."""
    from sekai.testing.kernels import kernel_trajectory

    if backend != "numpy":
        pytest.importorskip(backend)
    limit, size = _LIMITS[dtype]
    kernel = MarketMakingKernel(max_inventory=limit, order_size=size, **_CERTAIN_FILLS)
    actions = [np.array([[0.0, 5.0], [5.0, 0.0]], np.float32)] * 4  # always buy; always sell
    run = kernel_trajectory(kernel, backend, num_envs=2, steps=4, dtype=dtype, actions=actions)
    inventory = [row.tolist() for row in run["state.inventory"]]
    assert inventory == [[0, 0]] + [[size, -size]] * 4


@pytest.mark.parametrize("backend", ["numpy", "jax", "torch"])
@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: MarketMakingKernel(max_inventory=2**31), "max_inventory"),
        (lambda: MarketMakingKernel(n_steps=2**31), "n_steps"),
        (
            lambda: OptimalExecutionKernel(
                n_steps=2**31, temporary_impact=1e-16, permanent_impact=0.0
            ),
            "n_steps",
        ),
    ],
    ids=["MarketMaking max_inventory", "MarketMaking n_steps", "OptimalExecution n_steps"],
)
def test_session_kernels_refuse_integers_their_int32_counters_cannot_hold(
    backend: str, make: Callable[[], Any], name: str
) -> None:
    """In float32 the kernels count in int32: torch compared an int32 tensor with a larger
    Python int wrongly (a bid never filled, a session ended after n_steps mod 2**32 steps)
    and JAX raised an unexplained OverflowError."""
    from sekai.testing.kernels import kernel_trajectory

    if backend != "numpy":
        pytest.importorskip(backend)
    message = rf"counts in int32 .*: {name}=2147483648 exceeds 2\*\*31 - 1 = 2147483647"
    with pytest.raises(ValueError, match=message):
        kernel_trajectory(make(), backend, num_envs=2, steps=1, dtype="float32")
    run = kernel_trajectory(make(), backend, num_envs=2, steps=1, dtype="float64")
    assert np.isfinite(run["reward"][0]).all()


@pytest.mark.parametrize("mode", ["jax", "torch"])
@pytest.mark.parametrize(
    ("env_id", "name", "value"),
    [
        ("MarketMaking-v0", "max_inventory", 2**40),  # limit - size beyond int32 too
        ("MarketMaking-v0", "n_steps", 2**31),
        ("OptimalExecution-v0", "n_steps", 2**31),
    ],
)
def test_an_integer_beyond_int32_set_on_a_float32_env_is_refused_and_undone(
    mode: str, env_id: str, name: str, value: int
) -> None:
    """JAX compared its int32 state with the Python int in step() before the check ran, and
    raised its own OverflowError: set_attr refuses the value, before any step."""
    import sekai

    pytest.importorskip(mode)
    kwargs = {"temporary_impact": 1e-16, "permanent_impact": 0.0} if "Optimal" in env_id else {}
    vec = sekai.make_vec(env_id, 2, vectorization_mode=mode, **kwargs)
    before = vec.get_attr(name)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=f"{name}={value} exceeds 2\\*\\*31 - 1"):
        vec.set_attr(name, value)
    assert vec.get_attr(name) == before
    action = np.zeros((2, 2 if "Market" in env_id else 1), np.float32)
    assert np.isfinite(np.asarray(vec.step(action).rewards)).all()
    vec.close()


@pytest.mark.parametrize("backend", ["numpy", "jax", "torch"])
@pytest.mark.parametrize(
    ("make", "term"),
    [
        (lambda: MarketMakingKernel(sigma=1e20), r"sigma=1e\+20 makes sigma\*\*2 overflow float32"),
        (
            lambda: MarketMakingKernel(s0=1e38),
            r"s0=1e\+38, .* make the inventory's value overflow float32",
        ),
        (
            lambda: OptimalExecutionKernel(risk_aversion=1e30),
            r"risk_aversion=1e\+30 make the risk penalty overflow float32",
        ),
    ],
    ids=["MarketMaking sigma", "MarketMaking s0", "OptimalExecution risk_aversion"],
)
def test_session_kernels_refuse_rewards_their_float32_cannot_hold(
    backend: str, make: Callable[[], Any], term: str
) -> None:
    """Accepted in float64, these gave NaN or -inf rewards in float32, silently."""
    from sekai.testing.kernels import kernel_trajectory

    if backend != "numpy":
        pytest.importorskip(backend)
    message = (
        rf"\(array kernel in float32\): .*{term}: .* above float32's "
        r"largest value 3\.403e\+38\. Lower .*, or run the kernel in float64"
    )
    with pytest.raises(ValueError, match=message):
        kernel_trajectory(make(), backend, num_envs=2, steps=1, dtype="float32")
    run = kernel_trajectory(make(), backend, num_envs=2, steps=3, dtype="float64")
    assert np.isfinite(np.array(run["reward"][1:])).all()


def test_a_parameter_set_beyond_float32_on_a_torch_env_is_refused_and_undone() -> None:
    import sekai

    pytest.importorskip("torch")
    vec = sekai.make_vec("OptimalExecution-v0", 2, vectorization_mode="torch")
    with pytest.raises(
        ValueError, match=r"^TorchVecEnv\.set_attr\('risk_aversion', 1e\+30\) refused: "
        r"OptimalExecution-v0 \(array kernel in float32\): initial_inventory=1000000\.0, "
        r"sigma=0\.95, tau=0\.2, risk_aversion=1e\+30 make the risk penalty overflow float32: "
    ):  # fmt: skip
        vec.set_attr("risk_aversion", 1e30)
    assert vec.get_attr("risk_aversion") == [1e-6, 1e-6]
    vec.close()
