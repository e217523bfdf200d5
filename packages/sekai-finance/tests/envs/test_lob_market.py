"""LimitOrderBookMarket: the MultiAgentEnv contract, turn-taking, and trading between traders."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.core.result import MAResetResult, MAStepResult
from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.error import InvalidAction, ResetRequired
from sekai.finance.lob import Side, StaticFlow
from sekai.utils._equal import structurally_equal

JOIN = np.array([1, 1, 1])
IDLE = np.array([0, 0, 1])


def test_repr_through_the_joint_envs_package() -> None:
    env = sekai.envs.LimitOrderBookMarket(3)
    assert repr(env) == "<LimitOrderBookMarket agents=['trader_0', 'trader_1', 'trader_2']>"
    assert sekai.envs.finance.LimitOrderBookMarket is LimitOrderBookMarket
    assert isinstance(env, sekai.MultiAgentEnv)


def test_spaces_are_those_of_limit_order_book_v0() -> None:
    env = LimitOrderBookMarket(2)
    single = sekai.envs.finance.LimitOrderBookEnv()
    for agent in env.possible_agents:
        assert env.observation_space(agent) == single.observation_space
        assert env.action_space(agent) == single.action_space
    assert env.num_agents == env.max_num_agents == 2


def test_full_episode_follows_the_multi_agent_contract() -> None:
    env = LimitOrderBookMarket(3)
    reset = env.reset(seed=0)
    assert isinstance(reset, MAResetResult)
    assert sorted(reset.observations) == env.possible_agents == sorted(reset.info)
    for agent, obs in reset.observations.items():
        assert env.observation_space(agent).contains(obs)
    steps = 0
    result: Any = reset
    while env.agents:
        actions = {a: env.action_space(a).sample(mask=env.action_mask(a)) for a in env.acting}
        result = env.step(actions)
        steps += 1
        assert isinstance(result, MAStepResult)
        for mapping in (result.rewards, result.terminated, result.truncated, result.info):
            assert sorted(mapping) == env.possible_agents
        for agent, obs in result.observations.items():
            assert env.observation_space(agent).contains(obs)
        assert all(type(r) is float for r in result.rewards.values())
    assert steps == 300 and result.all_done and env.agents == [] and env.acting == []
    with pytest.raises(ResetRequired, match="reset"):
        env.step({})


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(ResetRequired):
        LimitOrderBookMarket(2).step({"trader_0": JOIN, "trader_1": JOIN})


def test_step_needs_exactly_the_acting_traders() -> None:
    env = LimitOrderBookMarket(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"\['trader_0', 'trader_1'\]"):
        env.step({"trader_0": JOIN})


def test_actions_keyed_by_index_get_the_acting_traders_error() -> None:
    env = LimitOrderBookMarket(2)
    env.reset(seed=0)
    expected = r"acting trader \['trader_0', 'trader_1'\], got \['trader_0', 0\]\.$"
    with pytest.raises(ValueError, match=expected):
        env.step({0: JOIN, "trader_0": JOIN})  # type: ignore[dict-item]


def test_the_acting_and_given_traders_are_listed_in_one_order() -> None:
    env = LimitOrderBookMarket(11)
    env.reset(seed=0)
    actions = dict.fromkeys(reversed(env.acting), JOIN)
    del actions["trader_3"]
    acting = [f"trader_{i}" for i in range(11)]
    given = [name for name in acting if name != "trader_3"]
    expected = f"acting trader {acting}, got {given}."
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.step(actions)


def test_every_action_is_checked_before_any_is_executed() -> None:
    env = LimitOrderBookMarket(2, flow=StaticFlow())
    env.reset(seed=0)
    with pytest.raises(InvalidAction, match=r"\(agent 'trader_1'\)\.$") as caught:
        env.step({"trader_0": np.array([0, 0, 2]), "trader_1": np.array([9, 0, 1])})
    assert caught.value.agent == "trader_1" and caught.value.space == env.action_spaces["trader_1"]
    assert env.inventory("trader_0") == 0 and len(env.book) == 6


def test_slower_trader_acts_less_often_and_keeps_earning_rewards() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 2.0])
    env.reset(seed=1)
    first = env.step({"trader_0": JOIN, "trader_1": JOIN})
    assert env.acting == ["trader_0"] and list(first.observations) == ["trader_0"]
    assert first.info["trader_1"]["acting"] is False and first.info["trader_0"]["acting"] is True
    assert env.next_decision == {"trader_0": 1.0, "trader_1": 2.0}
    second = env.step({"trader_0": JOIN})
    assert sorted(second.observations) == ["trader_0", "trader_1"]
    assert "trader_1" in second.rewards and second.info["trader_1"]["dt"] == 1.0


def test_total_reward_is_the_wealth_change_minus_penalties_for_every_trader() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 3.0], inventory_penalty=0.0)
    env.reset(seed=2)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(60):
        result = env.step(dict.fromkeys(env.acting, JOIN))
        for agent, reward in result.rewards.items():
            totals[agent] += reward
    for agent in env.possible_agents:
        assert totals[agent] == pytest.approx(env.wealth(agent), abs=1e-6)


@pytest.mark.parametrize(("terminal_penalty", "last"), [(0.25, (-4.0, -0.75)), (0.0, (-3.0, -0.5))])
def test_terminal_penalty_is_subtracted_from_every_traders_last_reward(
    terminal_penalty: float, last: tuple[float, float]
) -> None:
    kwargs: dict[str, Any] = {"session_length": 2.0, "inventory_penalty": 0.5}
    if terminal_penalty:
        kwargs["terminal_penalty"] = terminal_penalty
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 2.0], flow=StaticFlow(), **kwargs)
    env.reset(seed=0)
    # trader_0 buys 1 at 10001, trader_1 sells 1 at 9999; the mid stays 10000
    first = env.step({"trader_0": np.array([0, 0, 2]), "trader_1": np.array([0, 0, 0])})
    assert first.rewards == {"trader_0": -1.0 - 0.5, "trader_1": -1.0 - 0.5}
    assert env.acting == ["trader_0"]  # trader_1 decides next at the session end
    second = env.step({"trader_0": np.array([0, 0, 2])})  # buys 1 more at 10001
    assert all(second.terminated.values())
    assert (env.inventory("trader_0"), env.inventory("trader_1")) == (2, -1)
    # trader_0: -1 (wealth) - 0.5 * 2**2 - terminal_penalty * 2**2;
    # trader_1, who did not act: 0 (wealth) - 0.5 * 1**2 - terminal_penalty * 1**2
    expected = (-1.0 - 0.5 * 4 - terminal_penalty * 4, -0.5 * 1 - terminal_penalty * 1)
    assert expected == last
    assert (second.rewards["trader_0"], second.rewards["trader_1"]) == last


def test_one_traders_market_order_fills_anothers_quote_and_both_are_booked() -> None:
    flow = StaticFlow(bids=((1, 1),), asks=((1, 1),))
    env = LimitOrderBookMarket(2, flow=flow, order_size=2)
    env.reset(seed=0)
    env.step({"trader_0": np.array([0, 1, 1]), "trader_1": IDLE})  # trader_0 asks at 10001
    result = env.step({"trader_0": np.array([0, 1, 1]), "trader_1": np.array([0, 0, 2])})
    assert env.inventory("trader_1") == 2  # one lot from the background, one from trader_0
    assert env.inventory("trader_0") == -1
    assert result.info["trader_0"]["fills"] == 1 and result.info["trader_1"]["fills"] == 2


def test_acting_traders_execute_in_name_order_whatever_the_order_of_the_actions() -> None:
    # one lot at each ask level: the first trader to buy pays 10001, the next 10002, ...
    flow = StaticFlow(bids=((1, 3),), asks=((1, 1), (2, 1), (3, 1), (4, 1)))
    env = LimitOrderBookMarket(3, flow=flow)
    env.reset(seed=0)
    buy = np.array([0, 0, 2])
    result = env.step({"trader_2": buy, "trader_1": buy, "trader_0": buy})  # in reverse order
    paid = {agent: -info["cash"] for agent, info in result.info.items()}
    assert paid == {"trader_0": 10_001, "trader_1": 10_002, "trader_2": 10_003}
    assert all(env.inventory(agent) == 1 for agent in env.possible_agents)


def test_name_order_puts_trader_2_before_trader_10() -> None:
    # the order of the agents' numbers, not of their names as text: trader_2 buys the cheaper lot
    flow = StaticFlow(bids=((1, 3),), asks=((1, 1), (2, 1)))
    env = LimitOrderBookMarket(11, flow=flow)
    env.reset(seed=0)
    idle, buy = np.array([0, 0, 1]), np.array([0, 0, 2])
    actions = dict.fromkeys(env.acting, idle)
    actions["trader_2"] = actions["trader_10"] = buy
    result = env.step(actions)
    assert -result.info["trader_2"]["cash"] == 10_001
    assert -result.info["trader_10"]["cash"] == 10_002


def test_a_trader_never_fills_its_own_quote() -> None:
    env = LimitOrderBookMarket(1, flow=StaticFlow(bids=((1, 1),), asks=((2, 1),)))
    env.reset(seed=0)
    env.step({"trader_0": np.array([0, 1, 1])})  # own ask joins the background's at 10002
    background = [o for o in env.book.queue(Side.ASK, 10_002) if o.owner != 0]
    env.book.cancel(background[0].order_id)  # now the trader's own ask is the only one
    result = env.step({"trader_0": np.array([0, 0, 2])})
    assert env.inventory("trader_0") == 0 and result.info["trader_0"]["fills"] == 0
    assert env.book.n_orders_of(0) == 0  # the resting ask was cancelled, not traded against


def test_jitter_is_reproducible_and_bounded() -> None:
    def times(seed: int) -> list[float]:
        env = LimitOrderBookMarket(1, jitter=0.5)
        env.reset(seed=seed)
        out = [0.0]
        for _ in range(20):
            env.step(dict.fromkeys(env.acting, IDLE))
            out.append(env.timestamp)
        return out

    assert times(0) == times(0) and times(0) != times(1)
    waits = np.diff(times(0))
    assert (waits >= 0.5).all() and (waits <= 1.5).all() and waits.std() > 0
    assert (waits < 1.0).any() and (waits > 1.0).any()  # scaled both ways around the interval


def test_decision_intervals_may_be_a_numpy_array() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=np.array([1.0, 2.5]))  # type: ignore[arg-type]
    assert env.decision_intervals == (1.0, 2.5)


def test_info_timestamps_are_the_exact_decision_times() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 0.7], session_length=2.5)
    env.reset(seed=0)
    stamps = []
    while env.acting:
        result = env.step(dict.fromkeys(env.acting, np.array([1, 1, 1])))
        assert {info["timestamp"] for info in result.info.values()} == {env.timestamp}
        stamps.append(env.timestamp)
    # exact multiples of the float intervals: 3 x 0.7 is 2.0999999999999996, not 0.7 + 0.7 + 0.7
    assert stamps == [0.7, 1.0, 1.4, 2.0, 3 * 0.7, 2.5]


def test_coincident_decision_times_count_as_simultaneous() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[0.1, 0.3], session_length=1.0)
    env.reset(seed=0)
    for _ in range(2):
        env.step(dict.fromkeys(env.acting, IDLE))
    assert env.acting == ["trader_0"]
    env.step(dict.fromkeys(env.acting, IDLE))
    assert env.acting == ["trader_0", "trader_1"]  # 3 x 0.1 and 0.3 differ by rounding only


def test_dt_sums_to_the_session_length() -> None:
    env = LimitOrderBookMarket(3, decision_intervals=[0.7, 1.1, 0.3], session_length=10.0)
    env.reset(seed=0)
    total = 0.0
    while env.agents:
        result = env.step(dict.fromkeys(env.acting, IDLE))
        total += result.info["trader_0"]["dt"]
    assert total == pytest.approx(10.0, abs=1e-12)


def one_trader_decisions(interval: float, length: float) -> list[dict[str, Any]]:
    market = LimitOrderBookMarket(
        1, decision_intervals=interval, session_length=length, flow=StaticFlow(), warmup=0.0
    )
    market.reset(seed=0)
    infos = []
    while market.agents:
        infos.append(market.step({"trader_0": IDLE}).info["trader_0"])
    assert market.timestamp == length and market.time_remaining == 0.0
    return infos


@pytest.mark.parametrize(("interval", "length"), [(0.1, 1.1), (0.7, 2.1)])
def test_a_decision_that_rounding_puts_just_before_the_session_end_is_the_end(
    interval: float, length: float
) -> None:
    # 11 x 0.1 and 3 x 0.7 miss 1.1 and 2.1 by rounding only: no extra sliver of a decision
    infos = one_trader_decisions(interval, length)
    assert len(infos) == round(length / interval)
    assert infos[-1]["timestamp"] == length
    assert infos[-1]["dt"] == pytest.approx(interval, rel=1e-12)


def test_one_trader_decides_as_often_as_limit_order_book_v0_steps() -> None:
    for interval in [0.1, 0.3, 0.6, 0.7, 0.9, 1.1, 2.5, 1e-3]:
        for n in [*range(1, 13), 30, 59]:
            length = n * interval
            for session in (length, length * (1 + 1e-12), length * (1 - 1e-12)):
                single = LimitOrderBookEnv(
                    decision_interval=interval,
                    session_length=session,
                    flow=StaticFlow(),
                    warmup=0.0,
                )
                single.reset(seed=0)
                stamps = []
                while True:
                    result = single.step(IDLE)
                    stamps.append(result.info["timestamp"])
                    if result.terminated:
                        break
                market = [info["timestamp"] for info in one_trader_decisions(interval, session)]
                assert len(stamps) == single.n_steps == n, (interval, n, session)
                assert market == stamps, (interval, n, session)


@pytest.mark.parametrize(("interval", "length"), [(0.1, 3.0), (0.7, 3.0), (0.3, 2.9)])
def test_one_trader_market_and_limit_order_book_v0_give_identical_results(
    interval: float, length: float
) -> None:
    # the same session: background flow, seed, actions; the penalties make any dt difference
    # show in the rewards
    kwargs: dict[str, Any] = {
        "session_length": length,
        "inventory_penalty": 0.3,
        "terminal_penalty": 0.7,
        "order_size": 2,
    }
    single = LimitOrderBookEnv(decision_interval=interval, **kwargs)
    market = LimitOrderBookMarket(1, decision_intervals=interval, **kwargs)
    single.reset(seed=5)
    market.reset(seed=5)
    space, rng = single.action_space, np.random.default_rng(0)
    while True:
        mask = single.action_mask()
        assert all((m == n).all() for m, n in zip(mask, market.action_mask("trader_0")))
        action = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        assert space.contains(action)
        one = single.step(action)
        many = market.step({"trader_0": action})
        info = dict(many.info["trader_0"])
        assert info.pop("acting") is (not one.terminated)
        assert info == one.info and one.reward == many.rewards["trader_0"]
        assert one.terminated == many.terminated["trader_0"]
        if one.terminated:
            break
        assert structurally_equal(one.observation, many.observations["trader_0"])
    assert single.elapsed_steps == single.n_steps and market.agents == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_agents": 0}, "n_agents"),
        ({"jitter": 1.0}, "jitter"),
        ({"decision_intervals": [1.0]}, "decision_intervals"),
        ({"decision_intervals": 0.0}, "decision_intervals"),
        ({"levels": 0}, "levels"),
        ({"terminal_penalty": -1.0}, "terminal_penalty"),
    ],
)
def test_invalid_parameters_raise_value_error(kwargs: dict[str, Any], match: str) -> None:
    kwargs.setdefault("n_agents", 2)
    with pytest.raises(ValueError, match=match):
        LimitOrderBookMarket(**kwargs)


@pytest.mark.parametrize(
    ("name", "value"),
    [("decision_intervals", [-1.0, 1.0]), ("decision_intervals", 0.5), ("jitter", 3.0)],
)
def test_the_decision_timing_is_fixed_at_construction(name: str, value: Any) -> None:
    # Before: any value was taken, and the clock ran backwards (dt = -1 at every step)
    env = LimitOrderBookMarket(2, session_length=10.0)
    env.reset(seed=0)
    with pytest.raises(AttributeError) as info:
        setattr(env, name, value)
    assert str(info.value) == f"{name} is fixed at construction; make a new env."
    assert env.decision_intervals == (1.0, 1.0) and env.jitter == 0.0
    with pytest.raises(TypeError):  # a tuple: not changed in place either
        env.decision_intervals[0] = -1.0  # type: ignore[index]
    result = env.step(dict.fromkeys(env.acting, IDLE))
    assert env.timestamp == 1.0 and result.info["trader_0"]["dt"] == 1.0


def test_setting_a_penalty_changes_the_next_rewards() -> None:
    # Before: the attribute was set, and the rewards still used the constructor's penalty
    env = LimitOrderBookMarket(2, session_length=3.0, flow=StaticFlow(), inventory_penalty=0.0)
    env.reset(seed=0)
    # trader_0 buys 1 at 10001 from the static book; the mid stays 10000
    first = env.step({"trader_0": np.array([0, 0, 2]), "trader_1": IDLE})
    assert first.rewards["trader_0"] == -1.0
    env.inventory_penalty = 0.5
    env.terminal_penalty = 2.0
    assert (env.inventory_penalty, env.terminal_penalty) == (0.5, 2.0)
    second = env.step(dict.fromkeys(env.acting, IDLE))
    assert second.rewards["trader_0"] == -0.5 * 1**2 * 1.0
    last = env.step(dict.fromkeys(env.acting, IDLE))
    assert all(last.terminated.values())
    assert last.rewards["trader_0"] == -0.5 * 1**2 * 1.0 - 2.0 * 1**2


def test_the_penalty_check_allows_for_the_longest_jittered_wait() -> None:
    # 4e305 * 20**2 * dt fits float64 for dt = 1 but not for dt = 1.5, the longest step under
    # jitter = 0.5
    LimitOrderBookMarket(2, inventory_penalty=4e305)
    with pytest.raises(ValueError, match=r"inventory_penalty=4e\+305, max_inventory=20, dt=1\.5 "):
        LimitOrderBookMarket(2, jitter=0.5, inventory_penalty=4e305)


def test_the_penalty_check_takes_no_step_longer_than_the_session() -> None:
    # one decision at time 0, then the session ends at 1.0: no step lasts the wait of 10
    env = LimitOrderBookMarket(
        1, decision_intervals=10.0, session_length=1.0, inventory_penalty=4e305
    )
    env.reset(seed=0)
    result = env.step({"trader_0": IDLE})
    assert result.info["trader_0"]["dt"] == 1.0 and result.terminated["trader_0"]


def test_reset_info_dt_is_each_traders_decision_interval() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 3.0])
    info = env.reset(seed=0).info
    assert (info["trader_0"]["dt"], info["trader_1"]["dt"]) == (1.0, 3.0)


@pytest.mark.parametrize("name", ["inventory_penalty", "terminal_penalty"])
def test_setting_a_penalty_is_checked_as_on_limit_order_book_v0(name: str) -> None:
    env = LimitOrderBookMarket(2)
    with pytest.raises(ValueError) as info:
        setattr(env, name, -1.0)
    assert str(info.value) == f"{name} must be a finite number >= 0, got -1.0."
    with pytest.raises(ValueError, match=f"^LimitOrderBookMarket: setting {name} makes "):
        setattr(env, name, 1e308)  # the reward would overflow float64
    assert getattr(env, name) == getattr(LimitOrderBookMarket(2), name)  # unchanged


@pytest.mark.parametrize(
    "read",
    [
        lambda env: env.timestamp,
        lambda env: env.wealth("trader_0"),
        lambda env: env.next_decision,
    ],
    ids=["timestamp", "wealth", "next_decision"],
)
def test_properties_of_the_episode_raise_reset_required_before_the_first_reset(read: Any) -> None:
    # Before: timestamp and wealth() read 0.0, as if a session had started
    env = LimitOrderBookMarket(2)
    with pytest.raises(ResetRequired) as info:
        read(env)
    assert str(info.value).startswith("LimitOrderBookMarket.")
    assert str(info.value).endswith(" describes the current episode: call reset() first.")
    env.reset(seed=0)
    read(env)


def test_unknown_agent_raises_key_error() -> None:
    with pytest.raises(KeyError, match="trader_9"):
        LimitOrderBookMarket(2).action_mask("trader_9")


@pytest.mark.parametrize("interval", [Decimal("2"), np.array(2.0), np.float32(2.0)], ids=repr)
def test_one_decision_interval_is_any_real_number(interval: Any) -> None:
    # a Decimal was refused, a 0-d array failed with len() of unsized object
    env = LimitOrderBookMarket(2, decision_intervals=interval)
    assert env.decision_intervals == (2.0, 2.0)


@pytest.mark.parametrize(
    "bad", [np.array(True), True, "12", np.zeros((2, 1)), [1.0, [2.0, 3.0]]], ids=repr
)
def test_decision_intervals_that_are_no_numbers_are_refused_naming_them(bad: Any) -> None:
    # a list holding a list gave NumPy's "inhomogeneous shape" error, naming nothing
    with pytest.raises(ValueError, match=r"^decision_intervals"):
        LimitOrderBookMarket(2, decision_intervals=bad)


@pytest.mark.parametrize(
    ("interval", "shown"),
    [
        (Decimal("NaN"), r"decision_intervals must be a finite number > 0, got Decimal\('NaN'\)"),
        ([1.0, Decimal("-1")], r"decision_intervals\[1\] must .* > 0, got Decimal\('-1'\)"),
    ],
    ids=["one", "per-trader"],
)
def test_a_refused_decimal_interval_is_shown_as_given(interval: Any, shown: str) -> None:
    # its float was shown: "got nan"
    with pytest.raises(ValueError, match=f"^{shown}\\.$"):
        LimitOrderBookMarket(2, decision_intervals=interval)


def test_a_refused_decimal_interval_of_the_single_trader_env_is_shown_as_given() -> None:
    with pytest.raises(ValueError, match=r"^decision_interval must .*, got Decimal\('NaN'\)\.$"):
        sekai.make("LimitOrderBook-v0", decision_interval=Decimal("NaN"))


def test_next_decision_is_when_the_decision_happens_under_the_session_end_rule() -> None:
    # 3 x 0.7 is 2.0999999999999996, just short of 2.1: that decision is the session end.
    env = LimitOrderBookMarket(2, decision_intervals=[0.7, 1.0], session_length=2.1, warmup=1.0)
    env.reset(seed=0)
    seen = []
    while env.agents:
        env.step(dict.fromkeys(env.acting, JOIN))
        seen.append((env.timestamp, env.next_decision))
    assert seen[-2] == (2.0, {"trader_0": 2.1, "trader_1": 2.0})  # trader_1 acts now
    assert seen[-1] == (2.1, {"trader_0": 2.1, "trader_1": 2.1})
    assert all(now <= t <= 2.1 for now, due in seen for t in due.values())
