"""Bad arguments to the baselines: TypeError for a wrong type, ValueError for a bad value, each
naming the argument; a policy given another env's env says which env it is for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
import sekai.finance.baselines as B
from sekai.envs.finance import MarketEnv
from sekai.finance.baselines.market_making import (
    evaluate_quotes,
    expected_random_return,
    solve_optimal_quotes,
)
from sekai.finance.baselines.optimal_execution import schedule_trades, twap_actions
from sekai.vector import VecRecordEpisodeStatistics, VecWrapper
from sekai.wrappers import RecordEpisodeStatistics

NAN = float("nan")
MU, SIGMA, EYE = [0.1, 0.2], [0.2, 0.3], np.eye(2)

# -- kelly_weights -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"corr": None}, TypeError, r"corr must be an \(n, n\) correlation matrix, got None"),
        ({"corr": [["a", "b"], ["c", "d"]]}, TypeError, "corr"),
        ({"corr": [[True, False], [False, True]]}, TypeError, "corr"),
        ({"corr": 1.0}, ValueError, "corr must be a square"),
        ({"corr": np.eye(3)}, ValueError, r"corr is 3x3 but mu and sigma give 2 assets"),
        ({"corr": np.eye(3), "mu": 0.1}, ValueError, "sigma must be a number or 3 numbers"),
        ({"corr": [[1.0, 0.5], [0.4, 1.0]]}, ValueError, "corr must be symmetric"),
        ({"corr": [[1.0, 2.0], [2.0, 1.0]]}, ValueError, "corr must be positive definite"),
        ({"corr": [[2.0, 0.0], [0.0, 2.0]]}, ValueError, "corr must have a unit diagonal"),
        ({"mu": [NAN, 0.1]}, ValueError, "mu must be finite"),
        ({"mu": NAN}, ValueError, "mu must be a finite number"),
        ({"mu": [0.1, 0.1, 0.1]}, ValueError, "mu must be a number or 2 numbers"),
        ({"mu": [True, 0.1]}, TypeError, "mu must be real numbers, not bools"),
        ({"mu": True}, TypeError, "mu"),
        ({"mu": "0.1"}, TypeError, "mu"),
        ({"mu": None}, TypeError, "mu"),
        ({"sigma": [-0.2, 0.2]}, ValueError, "sigma must be finite numbers >= 0"),
        ({"sigma": [0.2]}, ValueError, "sigma must be a number or 2 numbers"),
        ({"max_leverage": "1"}, TypeError, "max_leverage must be a finite number > 0"),
        ({"max_leverage": True}, TypeError, "max_leverage"),
        ({"max_leverage": 0.0}, ValueError, "max_leverage must be a finite number > 0"),
        ({"max_leverage": float("inf")}, ValueError, "max_leverage"),
        ({"allow_short": "x"}, TypeError, "allow_short must be True or False"),
        ({"allow_short": 1}, TypeError, "allow_short"),
    ],
)
def test_kelly_weights_refuses_bad_arguments(kwargs: dict[str, Any], error: type, match: str):
    args = {"mu": MU, "sigma": SIGMA, "corr": EYE, **kwargs}
    with pytest.raises(error, match=match):
        B.kelly_weights(args.pop("mu"), args.pop("sigma"), args.pop("corr"), **args)


def test_kelly_weights_accepts_numbers_and_lists():
    w = B.kelly_weights(np.float32(0.01), 0.2, [[1.0, 0.0], [0.0, 1.0]], allow_short=np.True_)
    assert w == pytest.approx([0.25, 0.25])


def test_kelly_weights_without_risk_shorts_the_best_loser_when_allowed():
    assert B.kelly_weights([0.1, -0.3], 0.0, EYE, allow_short=True).tolist() == [0.0, -1.0]
    assert B.kelly_weights([0.1, -0.3], 0.0, EYE).tolist() == [1.0, 0.0]
    assert B.kelly_weights([-0.1, -0.3], 0.0, EYE).tolist() == [0.0, 0.0]


# -- evaluate and the env a policy is for -------------------------------------------------------

POLICIES = [
    (B.BuyAndHold(), "Trading-v0", "Portfolio-v0"),
    (B.ConstantPosition(1), "Trading-v0", "MarketMaking-v0"),
    (B.KellyBuyAndHold(), "Portfolio-v0", "Trading-v0"),
    (B.ConstantMix([0.5]), "Portfolio-v0", "Trading-v0"),
    (B.EqualWeight(), "Portfolio-v0", "OptimalExecution-v0"),
    (B.AvellanedaStoikov(), "MarketMaking-v0", "Trading-v0"),
    (B.OptimalQuotes(), "MarketMaking-v0", "OptimalExecution-v0"),
    (B.ConstantQuotes(1.0), "MarketMaking-v0", "Portfolio-v0"),
    (B.AlmgrenChriss(), "OptimalExecution-v0", "MarketMaking-v0"),
    (B.TWAP(), "OptimalExecution-v0", "Trading-v0"),
    (B.VolatilityFilter(), "Market-v0", "Portfolio-v0"),
    (B.RegimeOracle(), "Market-v0", "Trading-v0"),
    (B.InventorySkew(), "LimitOrderBook-v0", "MarketMaking-v0"),
    (B.FixedQuotes(), "LimitOrderBook-v0", "Trading-v0"),
]


@pytest.mark.parametrize(("policy", "needs", "other"), POLICIES, ids=repr)
def test_a_policy_on_another_env_says_which_env_it_is_for(policy: Any, needs: str, other: str):
    name = type(policy).__name__
    with pytest.raises(TypeError, match=f"^{name} is a policy for {needs} .*a {other} env: use"):
        B.evaluate(policy, other, 2)
    env = RecordEpisodeStatistics(sekai.make(other))
    observation = env.reset(seed=0).observation
    with pytest.raises(TypeError, match=f"^{name} is a policy for {needs} "):
        policy(observation, env)
    with pytest.raises(TypeError, match="not for NoneType"):
        policy(observation, None)


def test_policies_drive_wrapped_and_hand_built_vector_envs():
    env = RecordEpisodeStatistics(sekai.make("Trading-v0"))
    assert B.BuyAndHold()(env.reset(seed=0).observation, env) == 2
    vec = sekai.SyncVecEnv([lambda: MarketEnv(episode_length=5) for _ in range(2)])
    actions = B.VolatilityFilter()(vec.reset(seed=0).observations, vec)
    assert actions.shape[0] == 2
    with pytest.raises(TypeError, match="not for SyncVecEnv of MarketEnv, a Market-v0 env"):
        B.TWAP()(None, vec)
    mean, error = B.evaluate(B.VolatilityFilter(), "Market-v0", 2, episode_length=5)
    assert np.isfinite(mean) and error >= 0


def test_a_policy_refuses_an_env_whose_action_wrapper_changed_the_action_space():
    # The policy's actions are in the env's own space: through RescaleAction they would be
    # read as other weights, silently.
    wrapped = sekai.RescaleAction(sekai.make("Portfolio-v0"), -1.0, 1.0)
    observation = wrapped.reset(seed=0).observation
    match = r"KellyBuyAndHold gives actions in Portfolio-v0's own action space Box\(0.0, 1.0"
    with pytest.raises(TypeError, match=match):
        B.KellyBuyAndHold()(observation, wrapped)
    vec = sekai.SyncVecEnv(
        [lambda: sekai.RescaleAction(sekai.make("Portfolio-v0"), -1.0, 1.0) for _ in range(2)]
    )
    with pytest.raises(TypeError, match="an action wrapper changed it"):
        B.EqualWeight()(vec.reset(seed=0).observations, vec)
    plain = sekai.SyncVecEnv([lambda: sekai.make("Portfolio-v0") for _ in range(2)])
    assert B.EqualWeight()(plain.reset(seed=0).observations, plain).shape == (2, 6)

    class Rescaled(VecWrapper):  # a user's vector action wrapper around the native env
        def __init__(self, env: Any) -> None:
            super().__init__(env)
            self.action_space = sekai.Box(-1.0, 1.0, (6,), np.float32)

    native = Rescaled(sekai.make_vec("Portfolio-v0", 2))
    with pytest.raises(TypeError, match="an action wrapper changed it"):
        B.EqualWeight()(native.reset(seed=0).observations, native)
    recorded = VecRecordEpisodeStatistics(sekai.make_vec("Portfolio-v0", 2))
    assert B.EqualWeight()(recorded.reset(seed=0).observations, recorded).shape == (2, 6)


@pytest.mark.parametrize("policy", [None, "BuyAndHold", 3])
def test_evaluate_refuses_a_non_policy(policy: Any):
    with pytest.raises(TypeError, match="policy must be a callable policy"):
        B.evaluate(policy, "Trading-v0", 2)


def test_evaluate_refuses_a_policy_of_one_argument():
    with pytest.raises(TypeError, match=r"callable as policy\(observations, vec_env\)"):
        B.evaluate(lambda observations: 0, "Trading-v0", 2)
    # extra defaulted or variadic parameters are fine
    assert B.evaluate(lambda o, env, extra=1: np.ones(2, int), "Trading-v0", 2) == (0.0, 0.0)
    assert B.evaluate(lambda *args: np.ones(2, int), "Trading-v0", 2) == (0.0, 0.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"vector_kwargs": {"autoreset": True}},
        {"vectorization_mode": "sync"},
        {"wrappers": [RecordEpisodeStatistics]},
    ],
)
def test_evaluate_refuses_vector_options_in_env_kwargs(kwargs: dict[str, Any]):
    (name,) = kwargs
    with pytest.raises(TypeError, match=f"evaluate\\(\\) got {name}=: it builds the vector env"):
        B.evaluate(B.BuyAndHold(), "Trading-v0", 2, **kwargs)


def test_every_baseline_is_a_baseline_policy():
    # Their common base: a list of different baselines joins to it for type checkers, and
    # evaluate() takes it, as the docs' loops over (name, policy) pairs do.
    classes = [getattr(B, name) for name in B.__all__ if isinstance(getattr(B, name), type)]
    assert {B.BuyAndHold, B.RandomPolicy, B.TWAP, B.InventorySkew} <= set(classes)
    assert all(issubclass(cls, B.BaselinePolicy) for cls in classes)
    with pytest.raises(TypeError, match="abstract"):
        B.BaselinePolicy()  # type: ignore[abstract]


def test_evaluate_refuses_a_policy_class():
    with pytest.raises(TypeError, match=r"pass an instance, e.g. BuyAndHold\(\)"):
        B.evaluate(B.BuyAndHold, "Trading-v0", 2)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_envs": [2]}, TypeError, "num_envs must be an int >= 1, got list"),
        ({"num_envs": 2.9}, TypeError, "num_envs must be an int >= 1, got float"),
        ({"num_envs": "2"}, TypeError, "num_envs"),
        ({"num_envs": True}, TypeError, "num_envs"),
        ({"num_envs": 0}, ValueError, "num_envs must be an int >= 1, got 0"),
        ({"seed": 1.5}, TypeError, "seed must be an int >= 0, got float"),
        ({"seed": "0"}, TypeError, "seed"),
        ({"seed": np.random.default_rng(0)}, TypeError, "seed must be an int >= 0, got Generator"),
        ({"seed": None}, TypeError, "seed"),
        ({"seed": True}, TypeError, "seed"),
        ({"seed": -1}, ValueError, "seed must be an int >= 0, got -1"),
        ({"episodes": 1.5}, TypeError, "episodes must be an int >= 1"),
        ({"episodes": True}, TypeError, "episodes"),
        ({"episodes": 0}, ValueError, "episodes must be an int >= 1, got 0"),
    ],
)
def test_evaluate_checks_its_counts_and_seed(kwargs: dict[str, Any], error: type, match: str):
    args = {"episodes": 2, **kwargs}
    with pytest.raises(error, match=match):
        B.evaluate(B.BuyAndHold(), "Trading-v0", **args)


def test_evaluate_accepts_numpy_ints():
    first = B.evaluate(B.BuyAndHold(), "Trading-v0", np.int64(3), np.int32(1), num_envs=np.int8(2))
    assert first == B.evaluate(B.BuyAndHold(), "Trading-v0", 3, 1, num_envs=2)


# -- constructors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "error"),
    [
        (1.5, TypeError),
        ("1", TypeError),
        (True, TypeError),
        (np.random.default_rng(0), TypeError),
        (-1, ValueError),
    ],
)
def test_random_policy_checks_its_seed(seed: Any, error: type):
    with pytest.raises(error, match="seed must be an int >= 0"):
        B.RandomPolicy(seed)


def test_random_policy_accepts_numpy_ints_and_none():
    assert B.RandomPolicy(np.int64(3)).seed == 3 and B.RandomPolicy().seed is None


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: B.ConstantQuotes(NAN), ValueError, "bid must be a finite number >= 0, got nan"),
        (lambda: B.ConstantQuotes(-1), ValueError, "bid must be a finite number >= 0"),
        (lambda: B.ConstantQuotes(True), TypeError, "bid must be a finite number >= 0"),
        (lambda: B.ConstantQuotes("1"), TypeError, "bid"),
        (lambda: B.ConstantQuotes(1.0, float("inf")), ValueError, "ask"),
        (lambda: B.ConstantMix([]), ValueError, "weights must be a non-empty 1-D array"),
        (lambda: B.ConstantMix([[0.1]]), ValueError, "weights must be a non-empty 1-D array"),
        (lambda: B.ConstantMix([True, False]), TypeError, "weights must be real numbers"),
        (lambda: B.ConstantMix(["a"]), TypeError, "weights"),
        (lambda: B.ConstantMix(None), TypeError, "weights"),
        (lambda: B.ConstantMix([NAN, 0.1]), ValueError, "weights must be finite"),
        (lambda: B.ConstantMix([0.8, 0.8]), ValueError, r"gross sum\(\|w\|\) <= 1"),
        (lambda: B.ConstantMix([0.8, -0.8]), ValueError, "gross"),
        (lambda: B.ConstantMix([0.5], rebalance="no"), TypeError, "rebalance must be True or"),
        (lambda: B.ConstantMix([0.5], rebalance=0), TypeError, "rebalance"),
        (lambda: B.EqualWeight("yes"), TypeError, "include_cash must be True or False"),
        (lambda: B.EqualWeight(1), TypeError, "include_cash"),
        (lambda: B.VolatilityFilter("x"), TypeError, "threshold must be a finite number >= 0"),
        (lambda: B.VolatilityFilter(True), TypeError, "threshold"),
        (lambda: B.VolatilityFilter(NAN), ValueError, "threshold"),
        (lambda: B.ConstantPosition(True), TypeError, "index must be an int >= 0"),
        (lambda: B.ConstantPosition(1.0), TypeError, "index"),
        (lambda: B.InventorySkew(2.0), TypeError, "lots_per_level must be an int >= 1"),
        (lambda: B.FixedQuotes(1.5), TypeError, "bid_level must be an int >= 0"),
        (lambda: B.FixedQuotes("1"), TypeError, "bid_level"),
        (lambda: B.FixedQuotes(1, True), TypeError, "ask_level"),
        (lambda: B.FixedQuotes(-1), ValueError, "bid_level must be an int >= 0"),
        (lambda: B.FixedQuotes(1, 1, 3), ValueError, r"market must be 0 \(sell\)"),
        (lambda: B.FixedQuotes(1, 1, 2.0), TypeError, "market"),
        (lambda: twap_actions(2.5), TypeError, "n_steps must be an int >= 1"),
    ],
)
def test_constructors_refuse_bad_arguments(make: Any, error: type, match: str):
    with pytest.raises(error, match=match):
        make()


def test_constant_mix_must_fit_the_env():
    env = sekai.make("Portfolio-v0", n_assets=2)
    observation = env.reset(seed=0).observation
    with pytest.raises(ValueError, match=r"has short \(negative\) weights.*allow_short=True"):
        B.ConstantMix([0.5, -0.5])(observation, env)
    with pytest.raises(ValueError, match="holds 3 asset weights; the env has 2 assets"):
        B.ConstantMix([0.5, 0.2, 0.1], rebalance=False)(observation, env)
    short = sekai.make("Portfolio-v0", n_assets=2, allow_short=True)
    assert B.ConstantMix([0.5, -0.5])(short.reset(seed=0).observation, short).tolist() == [
        0.5,
        -0.5,
    ]


def test_market_making_helpers_check_their_options():
    env = sekai.make("MarketMaking-v0")
    with pytest.raises(ValueError, match="grid_step must be a finite number > 0"):
        solve_optimal_quotes(env, grid_step=0.0)
    with pytest.raises(TypeError, match="grid_step"):
        solve_optimal_quotes(env, grid_step="0.01")
    with pytest.raises(ValueError, match="points must be odd"):
        expected_random_return(env, points=4)
    with pytest.raises(ValueError, match="points must be an int >= 3"):
        expected_random_return(env, points=1)


def test_zero_dimensional_arrays_count_as_numbers() -> None:
    weights = B.kelly_weights(np.array(0.1), np.array(0.2), np.eye(3), max_leverage=np.array(1.0))
    assert np.allclose(weights, 1 / 3)
    B.VolatilityFilter(np.array(0.012))
    B.ConstantQuotes(np.array(1.0))


def test_a_constant_mix_that_has_run_still_pickles() -> None:
    import pickle

    env = sekai.make("Portfolio-v0")
    observation = env.reset(seed=0).observation
    policy = B.ConstantMix([0.2] * 5)
    first = policy(observation, env)
    assert pickle.loads(pickle.dumps(policy))(observation, env).tolist() == first.tolist()


def test_schedule_trades_checks_its_schedule() -> None:
    assert schedule_trades([0.5], 10.0, 2).tolist() == [5.0, 5.0]  # the last step sells the rest
    with pytest.raises(ValueError, match=r"at least 24 finite fractions .* got 3"):
        schedule_trades([0.1] * 3, 1e6, 25)
    with pytest.raises(ValueError, match="with NaN or inf"):
        schedule_trades([np.nan] * 25, 1e6, 25)
    with pytest.raises(TypeError, match="actions must be real numbers"):
        schedule_trades(["0.1"], 1e6, 2)
    with pytest.raises(ValueError, match="initial_inventory must be a finite number > 0"):
        schedule_trades([0.1], -1.0, 2)


def test_evaluate_quotes_checks_the_quote_function() -> None:
    env = sekai.make("MarketMaking-v0")
    with pytest.raises(TypeError, match="quotes must be a QuoteTable or a function"):
        evaluate_quotes(env, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"quotes\(199, q\) must return .* shape \(101, 2\)"):
        evaluate_quotes(env, lambda t, q: np.ones(3))


@pytest.mark.parametrize(
    ("env_id", "policy", "key"),
    [
        ("LimitOrderBook-v0", B.InventorySkew(), "agent"),
        ("Market-v0", B.VolatilityFilter(), "assets"),
        ("Market-v0", B.RegimeOracle(), "assets"),
    ],
)
def test_policies_reading_the_observation_refuse_a_flattened_one(
    env_id: str, policy: Any, key: str
) -> None:
    from sekai.wrappers import FlattenObservation

    env = FlattenObservation(sekai.make(env_id))
    observation = env.reset(seed=0).observation
    with pytest.raises(TypeError, match=rf"reads observation\['{key}'\].*got ndarray of shape"):
        policy(observation, env)
    with pytest.raises(TypeError, match=r"with keys \['x'\]"):
        policy({"x": 0}, env)
