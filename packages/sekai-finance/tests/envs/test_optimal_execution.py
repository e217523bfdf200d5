"""Tests for OptimalExecutionEnv: one step by hand, the schedule helpers, validation, episodes."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import sekai
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv, expected_shortfall

INFO_KEYS = [
    "shares_sold",
    "execution_price",
    "inventory",
    "mid_price",
    "implementation_shortfall",
    "shortfall_bps",
    "timestamp",
    "dt",
]


def test_spaces() -> None:
    env = OptimalExecutionEnv()
    assert repr(env.observation_space) == "Box([0.0, 0.0, -inf], [1.0, 1.0, inf], (3,), float32)"
    assert repr(env.action_space) == "Box(0.0, 1.0, (1,), float32)"


def test_reset_holds_the_whole_position() -> None:
    env = OptimalExecutionEnv()
    result = env.reset(seed=0)
    assert result.observation.tolist() == [1.0, 1.0, 0.0]
    assert list(result.info) == INFO_KEYS
    assert math.isnan(result.info["execution_price"])
    assert (result.info["inventory"], result.info["mid_price"], result.info["dt"]) == (
        1e6,
        50.0,
        0.2,
    )


def test_one_step_matches_a_hand_computation() -> None:
    env = OptimalExecutionEnv()
    env.reset(seed=7)
    z = np.random.default_rng(7).standard_normal()
    result = env.step(np.array([0.25], np.float32))
    n, tau = 250_000.0, 0.2
    price = 50.0 - 0.0625 - 2.5e-6 * n / tau
    x = 750_000.0
    mid = 50.0 + 0.95 * math.sqrt(tau) * z - 2.5e-7 * n
    reward = 1e4 * (n * (price - 50.0) - 1e-6 * 0.95**2 * tau * x * x) / (1e6 * 50.0)
    assert result.reward == pytest.approx(reward, rel=1e-12)
    info = result.info
    assert info["shares_sold"] == n and info["execution_price"] == pytest.approx(price)
    assert info["inventory"] == x and info["mid_price"] == pytest.approx(mid)
    assert info["implementation_shortfall"] == pytest.approx(n * (50.0 - price))
    assert info["shortfall_bps"] == pytest.approx(1e4 * n * (50.0 - price) / 5e7)
    assert info["timestamp"] == pytest.approx(0.2)
    expected_obs = [0.75, 24 / 25, (mid - 50.0) / (0.95 * math.sqrt(5.0))]
    np.testing.assert_allclose(result.observation, np.array(expected_obs, np.float32))


def test_selling_everything_at_once_terminates_with_the_known_cost() -> None:
    env = OptimalExecutionEnv()
    env.reset(seed=0)
    result = env.step(np.array([1.0], np.float32))
    assert result.terminated and not result.truncated
    assert result.reward == pytest.approx(-2512.5)
    assert result.observation[0] == 0.0
    with pytest.raises(sekai.ResetRequired, match="call reset"):
        env.step(np.array([0.5]))


def test_the_last_step_sells_whatever_is_left() -> None:
    env = OptimalExecutionEnv()
    env.reset(seed=0)
    rewards = []
    for k in range(25):
        mid = env.mid
        result = env.step(np.array([0.0]))
        rewards.append(result.reward)
        assert result.terminated == (k == 24)
    # holding everything costs the risk term only: 1e4 λ σ² τ X0² / (X0 s0) = 36.1 bps a step
    np.testing.assert_allclose(rewards[:24], -36.1, rtol=1e-12)
    assert result.info["shares_sold"] == 1e6 and result.info["inventory"] == 0.0
    price = mid - 0.0625 - 2.5e-6 * 1e6 / 0.2
    assert result.info["execution_price"] == pytest.approx(price)
    assert rewards[24] == pytest.approx(1e4 * (price - 50.0) / 50.0)


def test_zero_fraction_keeps_the_mid_without_impact() -> None:
    env = OptimalExecutionEnv(sigma=0.0)
    env.reset(seed=0)
    result = env.step(np.array([0.0]))
    assert math.isnan(result.info["execution_price"]) is False
    assert result.info["execution_price"] == 50.0 and result.info["shares_sold"] == 0.0
    assert result.observation[2] == 0.0  # sigma = 0: the price move is reported as 0


def test_actions_are_clipped_and_checked() -> None:
    env = OptimalExecutionEnv()
    env.reset(seed=0)
    assert env.step([2.0]).info["shares_sold"] == 1e6
    env.reset(seed=0)
    assert env.step(np.array([-1.0])).info["shares_sold"] == 0.0
    for bad in (np.array([np.inf]), np.array([0.1, 0.2]), None):
        with pytest.raises(sekai.InvalidAction):
            env.step(bad)


def test_step_before_reset_and_unknown_options() -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(sekai.ResetRequired):
        env.step(np.array([0.1]))
    with pytest.raises(ValueError, match="accepts"):
        env.reset(options={"horizon": 3})
    env.reset(options={"start": None})


def test_infos_hold_python_scalars() -> None:
    env = OptimalExecutionEnv()
    env.reset(seed=0)
    info = env.step(np.array([0.3], np.float32)).info
    assert list(info) == INFO_KEYS
    assert all(type(v) is float for v in info.values())


def test_almgren_chriss_schedule_matches_the_reference_numbers() -> None:
    env = OptimalExecutionEnv()
    actions = env.almgren_chriss_actions()
    assert actions.shape == (25, 1) and actions.dtype == np.float32
    np.testing.assert_allclose(actions[:3, 0], [0.1143, 0.1144, 0.1146], atol=6e-5)
    np.testing.assert_allclose(actions[-3:, 0], [0.3413, 0.5036, 1.0], atol=6e-5)
    holdings = env.almgren_chriss_trajectory()
    assert holdings[0] == 1e6 and holdings[-1] == 0.0
    assert np.all(np.diff(holdings) < 0)


def test_almgren_chriss_is_twap_without_risk_aversion() -> None:
    env = OptimalExecutionEnv(risk_aversion=0.0)
    np.testing.assert_allclose(
        env.almgren_chriss_actions()[:, 0], 1 / (25 - np.arange(25)), rtol=1e-6
    )
    np.testing.assert_allclose(env.almgren_chriss_trajectory(), 1e6 * (1 - np.arange(26) / 25))


def test_almgren_chriss_stays_finite_for_extreme_urgency() -> None:
    holdings = OptimalExecutionEnv(risk_aversion=1.0, n_steps=50).almgren_chriss_trajectory()
    assert np.all(np.isfinite(holdings)) and holdings[0] == 1e6 and holdings[-1] == 0.0


def test_expected_shortfall_gives_the_objective_in_bps() -> None:
    env = OptimalExecutionEnv()
    trades = -np.diff(env.almgren_chriss_trajectory())
    mean, variance = env.expected_shortfall(trades)
    assert 1e4 * mean / 5e7 == pytest.approx(191.74, abs=0.005)
    assert 1e4 * 1e-6 * variance / 5e7 == pytest.approx(128.60, abs=0.005)
    mean, variance = env.expected_shortfall(np.full(25, 4e4))
    assert -1e4 * (mean + 1e-6 * variance) / 5e7 == pytest.approx(-419.52, abs=0.005)


def test_tau_is_derived_and_read_only() -> None:
    env = OptimalExecutionEnv()
    env.n_steps = 10
    assert env.tau == 0.5 and env.dt == 0.5
    assert env.almgren_chriss_trajectory()[-1] == 0.0
    with pytest.raises(AttributeError):
        env.tau = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        env.dt = 1.0  # type: ignore[misc]


def test_time_remaining_and_timestamp() -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(sekai.ResetRequired):
        _ = env.timestamp
    env.reset(seed=0)
    env.step(np.array([0.1]))
    assert env.time_remaining == pytest.approx(4.8) and env.timestamp == pytest.approx(0.2)
    assert env.elapsed_steps == 1 and env.inventory == pytest.approx(9e5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"initial_inventory": 0.0}, "initial_inventory must be a finite number > 0, got 0.0"),
        ({"s0": -50.0}, "s0 must be a finite number > 0"),
        ({"sigma": -0.1}, "sigma must be a finite number >= 0"),
        ({"total_time": float("nan")}, "total_time must be a finite number > 0"),
        ({"n_steps": 0}, "n_steps must be an int >= 1"),
        ({"permanent_impact": -1.0}, "permanent_impact must be a finite number >= 0"),
        ({"temporary_impact": 0.0}, "temporary_impact must be a finite number > 0"),
        ({"fixed_cost": -0.01}, "fixed_cost must be a finite number >= 0"),
        ({"risk_aversion": "1e-6"}, "risk_aversion must be a finite number >= 0, got str"),
        ({"temporary_impact": 1e-8}, "temporary_impact must exceed permanent_impact"),
    ],
)
def test_invalid_parameters_name_the_parameter_and_range(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        OptimalExecutionEnv(**kwargs)  # type: ignore[arg-type]


def test_setting_a_parameter_rechecks_the_impact_condition() -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(ValueError, match="eta - gamma"):
        env.gamma = 1.0
    assert env.gamma == 2.5e-7  # the failed assignment is undone
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        env.sigma = -1.0


def test_env_passes_check_env() -> None:
    from sekai.testing import assert_env_conforms

    assert sekai.check_env(OptimalExecutionEnv()) == []
    assert_env_conforms("OptimalExecution-v0")


def test_make_registers_without_a_time_limit() -> None:
    env = sekai.make("OptimalExecution-v0")
    assert type(env) is OptimalExecutionEnv
    env.reset(seed=0)
    assert "elapsed_steps" not in env.step(np.array([0.1])).info


@pytest.mark.parametrize(("name", "value"), [("gamma", 1e-4), ("eta", 1e-8), ("total_time", 600.0)])
def test_a_setting_that_breaks_convexity_is_named_and_rolled_back(name: str, value: float) -> None:
    env = OptimalExecutionEnv()
    before = getattr(env, name)
    with pytest.raises(
        ValueError, match=rf"^OptimalExecution-v0: setting {name} breaks temporary_impact > perm"
    ):
        setattr(env, name, value)
    assert getattr(env, name) == before


def test_the_convexity_refusal_names_the_env_and_the_values() -> None:
    message = (
        "OptimalExecution-v0: temporary_impact must exceed permanent_impact * tau / 2 (eta - "
        "gamma * tau / 2 > 0 keeps the execution cost convex), got eta=1e-08, gamma=2.5e-07, "
        "tau=0.2."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        OptimalExecutionEnv(temporary_impact=1e-8)


def test_a_temporary_impact_just_at_permanent_impact_tau_over_2_is_refused() -> None:
    # eta - gamma * tau / 2 = 0.5 - 1.0 * 1.0 / 2 = 0 exactly: the cost is not convex
    message = (
        "OptimalExecution-v0: temporary_impact must exceed permanent_impact * tau / 2 (eta - "
        "gamma * tau / 2 > 0 keeps the execution cost convex), got eta=0.5, gamma=1.0, tau=1.0."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        OptimalExecutionEnv(
            initial_inventory=1.0,
            permanent_impact=1.0,
            temporary_impact=0.5,
            total_time=2.0,
            n_steps=2,
        )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"risk_aversion": 0.0},
        {"risk_aversion": 1.0, "n_steps": 50},
        # s0 100: at 50 a block sale in one of these short steps would execute below 0
        {"initial_inventory": 123456.789, "n_steps": 1000, "total_time": 3.7, "s0": 100.0},
        {"initial_inventory": 1e-3, "n_steps": 7},
        {"n_steps": 1},
    ],
)
def test_expected_shortfall_takes_the_almgren_chriss_and_twap_schedules(
    kwargs: dict[str, float],
) -> None:
    env = OptimalExecutionEnv(**kwargs)
    x0, n = env.X0, env.n_steps
    trades = -np.diff(env.almgren_chriss_trajectory())
    mean, variance = env.expected_shortfall(trades)
    assert env.expected_shortfall(trades[:, None]) == (mean, variance)  # (n_steps, 1) too
    assert type(mean) is float and type(variance) is float
    twap = np.full(n, x0 / n)
    assert all(math.isfinite(v) for v in env.expected_shortfall(twap))
    assert all(math.isfinite(v) for v in env.expected_shortfall(list(twap)))


def test_expected_shortfall_keeps_negative_trades() -> None:
    env = OptimalExecutionEnv(n_steps=3, fixed_cost=0.0625)
    mean, _ = env.expected_shortfall([6e5, -1e5, 5e5])
    plain, _ = env.expected_shortfall([5e5, 0.0, 5e5])
    assert mean > plain  # Σ|n| and Σn² count the round trip
    # a buy pays the fixed cost as a sale does: ε Σ|n|, not ε Σn
    free, _ = OptimalExecutionEnv(n_steps=3, fixed_cost=0.0).expected_shortfall([6e5, -1e5, 5e5])
    assert mean - free == pytest.approx(0.0625 * 1.2e6)
    eta_tilde = env.eta - 0.5 * env.gamma * env.tau
    by_hand = 0.5 * env.gamma * 1e12 + 0.0625 * 1.2e6 + eta_tilde / env.tau * 6.2e11
    assert mean == pytest.approx(by_hand)


def test_expected_shortfall_allows_what_the_step_counts_as_sold_out() -> None:
    # The step sets holdings below 1e-9 X0 to zero: such a leftover is "everything sold".
    env = OptimalExecutionEnv()
    trades = np.full(25, 4e4)
    trades[-1] -= 5e-10 * 1e6
    env.expected_shortfall(trades)
    trades[-1] -= 2e-9 * 1e6
    with pytest.raises(ValueError, match=r"trades must sum to initial_inventory X0=1000000.0"):
        env.expected_shortfall(trades)


@pytest.mark.parametrize(
    "trades", [["4e4"] * 25, object(), None, [True] * 25, np.full(25, 4e4 + 0j), [4e4] * 24 + ["x"]]
)
def test_expected_shortfall_refuses_what_is_not_numbers(trades: object) -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(TypeError, match="trades"):
        env.expected_shortfall(trades)


@pytest.mark.parametrize(
    ("trades", "message"),
    [
        (np.full(24, 1e6 / 24), r"trades must be 25 trades \(one per step\).*got shape \(24,\)"),
        (np.full(26, 1e6 / 26), r"trades must be 25 trades .*got shape \(26,\)"),
        (np.full((25, 2), 2e4), r"shape \(25,\) or \(25, 1\), got shape \(25, 2\)"),
        (np.full((1, 25), 4e4), r"got shape \(1, 25\)"),
        (1e6, r"trades must be 25 trades .*got shape \(\)"),
        ([], r"got shape \(0,\)"),
        (np.zeros(25), r"trades must sum to initial_inventory X0=1000000.0 .*got 0.0"),
        (np.full(25, 1e4), "trades must sum to initial_inventory"),
        (np.full(25, np.nan), "trades must be finite numbers, got nan at step 0"),
        ([4e4] * 24 + [np.inf], "trades must be finite numbers, got inf at step 24"),
    ],
)
def test_expected_shortfall_refuses_a_schedule_that_is_not_one(
    trades: object, message: str
) -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(ValueError, match=message):
        env.expected_shortfall(trades)


def test_the_module_expected_shortfall_checks_its_trades_too() -> None:
    args = (1e6, 0.2, 0.95, 2.5e-6, 2.5e-7, 0.0625)
    twap = np.full(25, 4e4)
    assert expected_shortfall(twap, *args) == OptimalExecutionEnv().expected_shortfall(twap)
    assert expected_shortfall(twap, *args, n_steps=25) == expected_shortfall(twap, *args)
    with pytest.raises(ValueError, match="trades must be 24 trades"):
        expected_shortfall(twap, *args, n_steps=24)
    with pytest.raises(ValueError, match="trades must sum to initial_inventory"):
        expected_shortfall(np.zeros(25), *args)
    with pytest.raises(ValueError, match="trades must be finite numbers"):
        expected_shortfall(np.full(25, np.nan), *args)
    with pytest.raises(ValueError, match=r"at least one trade.*got shape \(0,\)"):
        expected_shortfall([], *args)
    with pytest.raises(TypeError, match="trades"):
        expected_shortfall([True] * 25, *args)
