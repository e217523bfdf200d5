"""Tests for MarketMakingEnv: spaces, one step by hand, validation, episode rules, helpers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market_making import (
    MarketMakingEnv,
    avellaneda_stoikov_quotes,
    fill_probability,
)

INFO_KEYS = [
    "mid_price",
    "inventory",
    "cash",
    "wealth",
    "bid",
    "ask",
    "bid_filled",
    "ask_filled",
    "timestamp",
    "dt",
]


def test_spaces_follow_the_parameters() -> None:
    env = MarketMakingEnv()
    assert repr(env.observation_space) == "Box([-1.0, 0.0], 1.0, (2,), float32)"
    assert repr(env.action_space) == "Box(0.0, 5.0, (2,), float32)"
    assert MarketMakingEnv(max_offset=2.0).action_space.high.tolist() == [2.0, 2.0]


def test_reset_starts_a_flat_session() -> None:
    env = MarketMakingEnv()
    result = env.reset(seed=0)
    assert result.observation.dtype == np.float32
    assert result.observation.tolist() == [0.0, 1.0]
    assert list(result.info) == INFO_KEYS
    info = result.info
    assert (info["mid_price"], info["inventory"], info["cash"], info["wealth"]) == (
        100.0,
        0,
        0.0,
        0.0,
    )
    assert math.isnan(info["bid"]) and math.isnan(info["ask"])
    assert info["bid_filled"] is False and info["ask_filled"] is False
    assert (info["timestamp"], info["dt"]) == (0.0, 0.005)


def test_one_step_matches_a_hand_computation() -> None:
    env = MarketMakingEnv(
        s0=50.0,
        sigma=3.0,
        n_steps=10,
        fill_intensity=60.0,
        fill_decay=1.0,
        risk_aversion=0.5,
        order_size=2,
        max_inventory=5,
    )
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    u = rng.random(2)
    z = rng.standard_normal()
    dt = 0.1
    p_bid = 1 - math.exp(-60.0 * math.exp(-1.0 * 0.3) * dt)
    p_ask = 1 - math.exp(-60.0 * math.exp(-1.0 * 0.7) * dt)
    bid_filled, ask_filled = bool(u[0] < p_bid), bool(u[1] < p_ask)
    q = 2 * bid_filled - 2 * ask_filled
    cash = -2 * 49.7 * bid_filled + 2 * 50.7 * ask_filled
    mid = 50.0 + 3.0 * math.sqrt(dt) * z
    reward = cash + q * mid - 0.5 * 0.5 * 9.0 * dt * q * q
    result = env.step(np.array([0.3, 0.7], np.float32))
    assert result.reward == pytest.approx(reward, rel=1e-6, abs=1e-9)
    info = result.info
    assert (info["bid_filled"], info["ask_filled"], info["inventory"]) == (
        bid_filled,
        ask_filled,
        q,
    )
    assert info["mid_price"] == pytest.approx(mid)
    assert info["cash"] == pytest.approx(cash, abs=1e-4)
    assert info["bid"] == pytest.approx(49.7, abs=1e-6) and info["ask"] == pytest.approx(50.7)
    assert info["timestamp"] == pytest.approx(0.1)
    assert result.observation.tolist() == pytest.approx([q / 5, 0.9])


def test_bid_and_ask_fill_on_their_own_uniforms_as_a_replay_of_the_draws_shows() -> None:
    # Symmetric quotes: the sides fill with the same probability, so only the draw order
    # (one rng.random(2) for bid then ask, then one normal) tells them apart.
    env = MarketMakingEnv(n_steps=40, max_inventory=3)
    env.reset(seed=5)
    replay = np.random.default_rng(5)
    p = env.fill_probability(0.5)
    mid, q, one_sided = env.s0, 0, 0
    size, limit = env.order_size, env.max_inventory
    for _ in range(40):
        u = replay.random(2)
        z = float(replay.standard_normal())
        bid_filled = bool(u[0] < p) and q + size <= limit
        ask_filled = bool(u[1] < p) and q - size >= -limit
        q += size * (int(bid_filled) - int(ask_filled))
        mid += env.sigma * math.sqrt(env.dt) * z
        info = env.step(np.array([0.5, 0.5], np.float32)).info
        assert (info["bid_filled"], info["ask_filled"]) == (bid_filled, ask_filled)
        assert info["inventory"] == q and info["mid_price"] == mid
        one_sided += bid_filled != ask_filled
    assert one_sided >= 10  # independent sides: one fills alone in many steps


def test_rewards_sum_to_final_wealth_minus_the_running_penalty() -> None:
    env = MarketMakingEnv(n_steps=50)
    env.reset(seed=3)
    total = penalties = 0.0
    for _ in range(50):
        result = env.step(np.array([0.2, 1.5]))
        total += result.reward
        info = result.info
        penalties += 0.5 * 0.1 * 2.0**2 * 0.02 * info["inventory"] ** 2  # dt = 1 / 50
        assert info["wealth"] == pytest.approx(info["cash"] + info["inventory"] * info["mid_price"])
    assert result.terminated and not result.truncated
    assert total == pytest.approx(env.wealth - penalties, abs=1e-8)
    assert env.inventory > 0  # a tight bid and a wide ask accumulate inventory


def test_the_inventory_limit_stops_quoting_a_side() -> None:
    env = MarketMakingEnv(max_inventory=2, fill_intensity=1e6, n_steps=20, max_offset=30.0)
    env.reset(seed=0)
    for _ in range(10):
        result = env.step(np.array([0.0, 30.0]))
        assert abs(result.info["inventory"]) <= 2
    assert env.inventory == 2
    assert result.info["bid_filled"] is False  # at the limit the bid is not quoted


def test_actions_are_clipped_and_checked() -> None:
    env = MarketMakingEnv()
    env.reset(seed=0)
    result = env.step([-1.0, 99.0])  # a list works, out-of-bounds values are clipped
    assert result.info["bid"] == pytest.approx(100.0) and result.info["ask"] == pytest.approx(105.0)
    for bad in (np.array([np.nan, 1.0]), np.array([1.0]), np.zeros((2, 2)), "ab"):
        with pytest.raises(sekai.InvalidAction):
            env.step(bad)


def test_session_ends_with_a_terminal_state_then_requires_a_reset() -> None:
    env = MarketMakingEnv(n_steps=3)
    with pytest.raises(sekai.ResetRequired):
        env.step(np.ones(2))
    env.reset(seed=0)
    flags = [env.step(np.ones(2)).terminated for _ in range(3)]
    assert flags == [False, False, True]
    with pytest.raises(sekai.ResetRequired, match="call reset"):
        env.step(np.ones(2))
    env.reset()
    assert env.elapsed_steps == 0


def test_unknown_reset_options_are_refused() -> None:
    env = MarketMakingEnv()
    env.reset(options={})
    env.reset(options={"start": None})
    with pytest.raises(ValueError, match="accepts"):
        env.reset(options={"strat": 10})
    with pytest.raises(ValueError, match="no price history"):
        env.reset(options={"start": 3})


def test_seeded_sessions_are_reproducible() -> None:
    def run(seed: int) -> list[float]:
        env = MarketMakingEnv(n_steps=20)
        env.reset(seed=seed)
        return [env.step(np.array([0.5, 0.5])).reward for _ in range(20)]

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_infos_hold_python_scalars() -> None:
    env = MarketMakingEnv()
    env.reset(seed=0)
    info = env.step(np.array([0.1, 0.1])).info
    assert list(info) == INFO_KEYS
    for key, value in info.items():
        assert type(value) in (float, int, bool), key
    assert type(info["inventory"]) is int


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": -1.0}, "sigma must be a finite number >= 0, got -1.0"),
        ({"s0": float("inf")}, "s0 must be a finite number, got inf"),
        ({"total_time": 0.0}, "total_time must be a finite number > 0, got 0.0"),
        ({"n_steps": 0}, "n_steps must be an int >= 1, got 0"),
        ({"n_steps": 2.5}, "n_steps must be an int >= 1, got float"),
        ({"fill_intensity": 0.0}, "fill_intensity must be a finite number > 0"),
        ({"fill_decay": -1.0}, "fill_decay must be a finite number > 0"),
        ({"risk_aversion": -0.1}, "risk_aversion must be a finite number >= 0"),
        ({"max_inventory": True}, "max_inventory must be an int >= 1, got bool"),
        ({"order_size": 0}, "order_size must be an int >= 1"),
        ({"max_offset": -1.0}, "max_offset must be a finite number >= 0"),
    ],
)
def test_invalid_parameters_name_the_parameter_and_range(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        MarketMakingEnv(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "refusal", "lower"),
    [
        (
            {"sigma": 1e160},
            "sigma=1e+160 makes sigma**2 overflow float64: sigma**2 reaches inf",
            "sigma",
        ),
        # risk_aversion=0 switches the penalty off: the overflow is sigma**2's alone
        (
            {"risk_aversion": 0.0, "sigma": 1e160},
            "sigma=1e+160 makes sigma**2 overflow float64",
            "sigma",
        ),
        (
            {"risk_aversion": 1e308},  # 0.5 * γ * σ² was inf, times q = 0: a NaN reward
            "sigma=2.0, risk_aversion=1e+308, dt=0.005, max_inventory=50 make the running "
            "inventory penalty overflow float64: 0.5 * risk_aversion * sigma**2 * dt * "
            "max_inventory**2 reaches inf",
            "risk_aversion, sigma or max_inventory",
        ),
        (
            {"terminal_penalty": 1e300, "max_inventory": 2**40},
            "terminal_penalty=1e+300, max_inventory=1099511627776 make the terminal inventory "
            "penalty overflow float64",
            "terminal_penalty or max_inventory",
        ),
        (
            {"s0": 1e307},  # q * mid was inf at 18 lots: a NaN reward
            "s0=1e+307, sigma=2.0, total_time=1.0, max_offset=5.0, max_inventory=50 make the "
            "inventory's value overflow float64: max_inventory * (|s0| + 5 * sigma * "
            "sqrt(total_time) + max_offset) reaches inf",
            "max_inventory, |s0| or sigma",
        ),
    ],
    ids=["sigma", "sigma, no risk aversion", "risk_aversion", "terminal_penalty", "s0"],
)
def test_parameters_whose_reward_overflows_are_refused_naming_the_term(
    kwargs: dict[str, float], refusal: str, lower: str
) -> None:
    message = rf"^MarketMaking-v0: {re.escape(refusal)}"
    message += rf".*, above float64's largest value 1\.798e\+308\. Lower {re.escape(lower)}\.$"
    with pytest.raises(ValueError, match=message):
        MarketMakingEnv(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        sekai.make_vec("MarketMaking-v0", 2, **kwargs)


def test_a_parameter_set_so_the_reward_overflows_is_refused_and_undone() -> None:
    env = MarketMakingEnv()
    with pytest.raises(ValueError, match=r"setting sigma makes sigma\*\*2 overflow"):
        env.sigma = 1e160
    assert env.sigma == 2.0
    with pytest.raises(ValueError, match="setting s0 makes the inventory's value overflow"):
        env.s0 = -1e307
    assert env.s0 == 100.0
    vec = sekai.make_vec("MarketMaking-v0", 2)
    vec.set_attr("risk_aversion", 1e300)  # 0.5 * 1e300 * 4 * 0.005 * 50**2: finite
    with pytest.raises(ValueError, match="setting max_inventory makes the running inventory"):
        vec.set_attr("max_inventory", 2**63 - 1)
    assert vec.get_attr("max_inventory") == [50, 50]


def test_an_inventory_value_just_inside_float64_gives_finite_rewards_at_the_limit() -> None:
    # max_inventory * (s0 + 5 sigma sqrt(T) + max_offset) = 1.7e308: every bid fills
    env = MarketMakingEnv(s0=1.7e308 / 50, fill_intensity=1e9, fill_decay=50.0)
    env.reset(seed=0)
    for _ in range(50):
        result = env.step(np.array([0.0, 5.0], np.float32))
        assert math.isfinite(result.reward) and math.isfinite(result.info["wealth"])
    assert env.inventory == 50


def test_penalties_just_inside_float64_give_finite_rewards_at_the_inventory_limit() -> None:
    # 0.5 γ σ² dt Q² = 1e307 with Q = 2**63 - 1: the largest inventory this env can reach.
    q = 2**63 - 1
    gamma = 1e307 / (0.5 * 4.0 * 0.005 * float(q) * float(q))
    env = MarketMakingEnv(
        risk_aversion=gamma, max_inventory=q, order_size=q, fill_intensity=1e9, fill_decay=50.0
    )
    env.reset(seed=0)
    result = env.step(np.array([0.0, 5.0], np.float32))
    assert result.info["inventory"] == q
    assert math.isfinite(result.reward) and result.reward < -9e306


def test_parameters_are_settable_and_validated() -> None:
    env = MarketMakingEnv()
    env.sigma = 0.0
    env.reset(seed=0)
    assert env.step(np.ones(2)).info["mid_price"] == 100.0
    with pytest.raises(ValueError, match="A must be a finite number > 0"):
        env.A = -1.0
    env.n_steps = 10
    assert env.dt == pytest.approx(0.1)


def test_dt_and_max_offset_are_read_only() -> None:
    env = MarketMakingEnv()
    with pytest.raises(AttributeError):
        env.dt = 0.1  # type: ignore[misc]
    with pytest.raises(AttributeError, match="fixed at construction"):
        env.max_offset = 1.0
    env.total_time = 2.0
    assert env.dt == pytest.approx(0.01)


def test_state_attributes_describe_the_session() -> None:
    env = MarketMakingEnv()
    with pytest.raises(sekai.ResetRequired):
        _ = env.timestamp
    env.reset(seed=0)
    assert (env.time_remaining, env.timestamp, env.wealth) == (1.0, 0.0, 0.0)
    env.step(np.array([0.0, 0.0]))
    assert env.time_remaining == pytest.approx(0.995)
    assert env.timestamp == pytest.approx(0.005)
    assert env.elapsed_steps == 1


def test_avellaneda_stoikov_action_at_reset_matches_the_formula() -> None:
    env = MarketMakingEnv()
    env.reset(seed=0)
    action = env.avellaneda_stoikov_action()
    assert action.dtype == np.float32 and action.tolist() == pytest.approx([0.8453852] * 2)
    expected = 0.5 * (0.1 * 4.0 + 20.0 * math.log(1 + 0.1 / 1.5))
    assert float(action[0]) == pytest.approx(expected, rel=1e-6)


def test_avellaneda_stoikov_skews_against_inventory_and_handles_zero_risk_aversion() -> None:
    skewed = avellaneda_stoikov_quotes(3, 0.5, 2.0, 0.1, 1.5, 5.0)
    assert skewed[0] > skewed[1]  # long: a wider bid and a tighter ask
    assert float(skewed[0] - skewed[1]) == pytest.approx(2 * 3 * 0.1 * 4.0 * 0.5, rel=1e-5)
    neutral = avellaneda_stoikov_quotes(3, 0.5, 2.0, 0.0, 1.5, 5.0)
    assert neutral.tolist() == pytest.approx([1 / 1.5] * 2)
    assert avellaneda_stoikov_quotes(50, 1.0, 2.0, 0.1, 1.5, 5.0).tolist() == [5.0, 0.0]


def test_fill_probability_formula() -> None:
    env = MarketMakingEnv()
    assert env.fill_probability(0.0) == pytest.approx(1 - math.exp(-0.7))
    np.testing.assert_allclose(
        env.fill_probability(np.array([1.0, 2.0])),
        1 - np.exp(-140.0 * np.exp(-1.5 * np.array([1.0, 2.0])) * 0.005),
    )


def test_optimal_quotes_look_up_the_state() -> None:
    env = MarketMakingEnv(n_steps=20, max_inventory=5)
    env.reset(seed=0)
    quotes = env.optimal_quotes()
    assert quotes.dtype == np.float32 and quotes.shape == (2,)
    assert quotes[0] == quotes[1]  # symmetric when flat
    table = env.quote_table()
    np.testing.assert_array_equal(quotes, table.quotes[0, 5])
    env.risk_aversion = 0.5  # a parameter change drops the cached table
    assert env.quote_table() is not table


def test_optimal_quotes_shed_inventory_before_a_terminal_penalty() -> None:
    free = MarketMakingEnv(n_steps=20, max_inventory=5).quote_table()
    table = MarketMakingEnv(n_steps=20, max_inventory=5, terminal_penalty=2.0).quote_table()
    q = np.arange(-5, 6)
    # V_N(q) = -alpha q^2: the penalty is a cost, so no state is worth more than without it
    np.testing.assert_array_equal(table.values[-1], -2.0 * q.astype(np.float64) ** 2)
    assert (table.values <= free.values).all()
    assert table.value < free.value
    # at the last step a long book quotes the ask tighter, a short book the bid
    bid, ask = table.lookup(19, 3)
    assert ask < bid
    bid, ask = table.lookup(19, -3)
    assert bid < ask


def test_terminal_penalty_charges_the_final_inventory() -> None:
    env = MarketMakingEnv(
        n_steps=2, sigma=0.0, fill_intensity=1e9, terminal_penalty=0.25, max_offset=40.0
    )
    env.reset(seed=0)
    env.step(np.array([0.0, 40.0]))
    result = env.step(np.array([0.0, 40.0]))
    assert result.info["inventory"] == 2
    # both bids fill at the mid (no edge), the mid does not move: only the penalties remain
    assert result.reward == pytest.approx(-0.5 * 0.1 * 0.0 * 4 - 0.25 * 4)


def test_env_passes_check_env() -> None:
    from sekai.testing import assert_env_conforms

    assert sekai.check_env(MarketMakingEnv()) == []
    assert_env_conforms("MarketMaking-v0")


def test_an_order_size_above_the_inventory_limit_is_refused_at_construction() -> None:
    # can_buy = q + size <= Q is never true: no quote could ever fill.
    with pytest.raises(ValueError, match="order_size=5 exceeds max_inventory=4"):
        MarketMakingEnv(order_size=5, max_inventory=4)
    with pytest.raises(ValueError, match="order_size=51 exceeds max_inventory=50"):
        sekai.make("MarketMaking-v0", order_size=51)
    assert MarketMakingEnv(order_size=4, max_inventory=4).order_size == 4


def test_an_order_size_above_the_inventory_limit_is_refused_when_set() -> None:
    env = MarketMakingEnv(order_size=3, max_inventory=5)
    table = env.quote_table()
    with pytest.raises(ValueError, match="order_size=6 exceeds max_inventory=5"):
        env.order_size = 6
    with pytest.raises(ValueError, match="order_size=3 exceeds max_inventory=2"):
        env.max_inventory = 2
    assert (env.order_size, env.max_inventory) == (3, 5)  # the failed assignments are undone
    assert env.quote_table() is table  # the parameters did not change: the table still holds
    env.max_inventory = 3
    env.order_size = 1
    assert (env.order_size, env.max_inventory) == (1, 3)


@pytest.mark.parametrize(
    "offset",
    ["0.5", object(), None, True, np.bool_(False), np.array([0.5, True], object), [0.1, "x"]],
)
def test_fill_probability_refuses_what_is_not_a_number(offset: object) -> None:
    env = MarketMakingEnv()
    with pytest.raises(TypeError, match="offset"):
        env.fill_probability(offset)
    with pytest.raises(TypeError, match="offset"):
        fill_probability(offset, 140.0, 1.5, 0.005)


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (float("nan"), "offset must not be NaN"),
        (np.array([0.1, np.nan]), "offset must not be NaN"),
        (-0.5, r"offset must be >= 0 \(a distance from the mid\), got -0.5"),
        ([0.0, -1.0], r"offset must be >= 0 \(a distance from the mid\), got -1.0"),
        (-math.inf, "offset must be >= 0"),
    ],
)
def test_fill_probability_refuses_nan_and_negative_offsets(offset: object, message: str) -> None:
    env = MarketMakingEnv()
    with pytest.raises(ValueError, match=message):
        env.fill_probability(offset)
    with pytest.raises(ValueError, match=message):
        fill_probability(offset, 140.0, 1.5, 0.005)


def test_fill_probability_gives_a_float_for_a_number_and_an_array_for_an_array() -> None:
    env = MarketMakingEnv()
    for number in (0.5, 1, np.float32(0.5), np.int64(2), np.array(0.5)):
        assert type(env.fill_probability(number)) is float
    assert env.fill_probability(math.inf) == 0.0  # infinitely far: never fills
    assert env.fill_probability(0.5) == pytest.approx(1 - math.exp(-0.7 * math.exp(-0.75)))
    for array in ([0.5, 1.0], np.array([0.5, 1.0], np.float32), np.zeros((2, 3))):
        result = env.fill_probability(array)
        assert type(result) is np.ndarray and result.dtype == np.float64
        assert result.shape == np.shape(array)
    assert type(fill_probability(0.5, 140.0, 1.5, 0.005)) is float


def test_the_step_does_not_pay_for_the_offset_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The step clips the quotes into [0, max_offset] itself: it calls the unchecked formula.
    def refuse(self: object, offset: object) -> float:
        raise AssertionError("the step called the checked fill_probability")

    monkeypatch.setattr(MarketMakingEnv, "fill_probability", refuse)
    env = MarketMakingEnv()
    env.reset(seed=0)
    env.step(np.array([-1.0, 9.0], np.float32))  # clipped, not refused
