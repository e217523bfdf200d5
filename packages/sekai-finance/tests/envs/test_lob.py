"""LimitOrderBook-v0: spaces, masks, decision rules, rewards, episode bookkeeping."""

from __future__ import annotations

import pickle
import re
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.error import InvalidAction, ResetRequired
from sekai.finance.lob import BACKGROUND, OrderBook, Side, StaticFlow, ZeroIntelligenceFlow
from sekai.spaces import flatdim
from sekai.utils._equal import structurally_equal
from sekai.utils.action_mask import flatten_action_mask

INFO_KEYS = ["timestamp", "mid_price", "spread", "inventory", "cash", "wealth", "fills", "dt"]
IDLE = np.array([0, 0, 1])
JOIN = np.array([1, 1, 1])


def static_env(**kwargs: Any) -> LimitOrderBookEnv:
    """A book that only the agent changes: bids 9999/9998/9997, asks 10001/10002/10003, 3 lots."""
    kwargs.setdefault("flow", StaticFlow())
    env = LimitOrderBookEnv(**kwargs)
    env.reset(seed=0)
    return env


def own(book: OrderBook, side: Side) -> list[tuple[int, int]]:
    return [(o.price, o.quantity) for o in book.orders_of(0) if o.side is side]


# -- spaces and the migration page ---------------------------------------------------------


def test_default_spaces() -> None:
    env = LimitOrderBookEnv()
    assert repr(env.action_space) == "MultiDiscrete([6, 6, 3])"
    assert repr(env.observation_space) == (
        "Dict({book: Box(-inf, inf, (5, 4), float32), trades: MaskedBox(-inf, inf, (3,), "
        "max_size=16, float32), agent: Box(-inf, inf, (6,), float32)})"
    )
    assert flatdim(env.observation_space) == 90


def test_registered_env_flattens_to_a_box_and_its_mask_to_15_booleans() -> None:
    env = sekai.FlattenObservation(sekai.make("LimitOrderBook-v0"))
    result = env.reset(seed=0)
    assert type(env.observation_space).__name__ == "Box"
    assert env.observation_space.shape == (90,) and result.observation.shape == (90,)
    mask = sekai.get_action_mask(env)  # forwarded through the wrapper
    assert flatten_action_mask(env.action_space, mask).shape == (15,)


def test_registered_env_has_no_time_limit() -> None:
    env = sekai.make("LimitOrderBook-v0")
    assert env.spec is not None and env.spec.max_episode_steps is None
    assert env.spec.vector_entry_point is None


def test_check_env_passes() -> None:
    assert sekai.check_env(LimitOrderBookEnv(), check_determinism=True) == []


def test_check_env_passes_with_small_limits() -> None:
    env = LimitOrderBookEnv(max_inventory=2, order_size=2, levels=2, max_quote_offset=2)
    assert sekai.check_env(env, n_steps=300, check_determinism=True) == []


# -- action mask -----------------------------------------------------------------------------


def test_mask_allows_everything_when_flat() -> None:
    env = LimitOrderBookEnv()
    env.reset(seed=0)
    bid, ask, market = env.action_mask()
    assert bid.tolist() == [1] * 6 and ask.tolist() == [1] * 6 and market.tolist() == [1, 1, 1]
    assert bid.dtype == np.int8


def test_mask_blocks_buying_at_the_long_limit() -> None:
    env = static_env(max_inventory=1)
    env.step(np.array([0, 0, 2]))  # buy one lot at the ask
    bid, ask, market = env.action_mask()
    assert env.inventory == 1
    assert bid.tolist() == [1, 0, 0, 0, 0, 0] and ask.tolist() == [1] * 6
    assert market.tolist() == [1, 1, 0]
    env.step(np.array([3, 0, 2]))  # masked orders are harmless no-ops
    assert env.inventory == 1 and own(env.book, Side.BID) == []


def test_mask_blocks_selling_at_the_short_limit() -> None:
    env = static_env(max_inventory=2, order_size=2)
    env.step(np.array([0, 0, 0]))
    bid, ask, market = env.action_mask()
    assert env.inventory == -2
    assert ask.tolist() == [1, 0, 0, 0, 0, 0] and market.tolist() == [0, 1, 1]
    assert bid.tolist() == [1] * 6


# -- decision rules --------------------------------------------------------------------------


def test_level_one_joins_the_best_and_level_k_steps_back() -> None:
    env = static_env()
    env.step(np.array([1, 3, 1]))
    assert own(env.book, Side.BID) == [(9999, 1)] and own(env.book, Side.ASK) == [(10003, 1)]
    assert env.book.queue_ahead(env.trader.bid_id) == 3


def test_unchanged_action_keeps_the_queue_position() -> None:
    env = static_env()
    env.step(JOIN)
    bid_id, ask_id = env.trader.bid_id, env.trader.ask_id
    result = env.step(JOIN)
    assert (env.trader.bid_id, env.trader.ask_id) == (bid_id, ask_id)
    assert result.observation["agent"][4] == 3.0  # three lots ahead of the bid


def test_moving_a_quote_reposts_it_at_the_back() -> None:
    env = static_env()
    env.step(JOIN)
    first = env.trader.bid_id
    env.step(np.array([2, 1, 1]))
    assert env.trader.bid_id != first and own(env.book, Side.BID) == [(9998, 1)]
    assert env.book.queue_ahead(env.trader.bid_id) == 3


def test_level_one_quote_stays_while_it_is_itself_the_best_price() -> None:
    env = static_env()
    env.step(JOIN)
    mine = env.trader.bid_id
    for order in env.book.queue(Side.BID, 9999):
        if order.owner == BACKGROUND:
            env.book.cancel(order.order_id)
    env.step(JOIN)  # the others' best is now 9998, but the agent's bid is the best price
    assert env.trader.bid_id == mine and own(env.book, Side.BID) == [(9999, 1)]


def test_level_zero_cancels_the_quote() -> None:
    env = static_env()
    env.step(JOIN)
    env.step(IDLE)
    assert env.book.n_orders_of(0) == 0


def test_quote_goes_one_tick_inside_the_opposite_best_when_its_side_is_empty() -> None:
    env = static_env(flow=StaticFlow(bids=()))
    env.step(np.array([1, 0, 1]))
    assert own(env.book, Side.BID) == [(10_000, 1)]
    env.step(np.array([2, 0, 1]))
    assert own(env.book, Side.BID) == [(9_999, 1)]


class _AskAt3(StaticFlow):
    """A book whose only order is an ask at 3 ticks, far below the mid price (a flow may
    place its orders anywhere)."""

    def initialise(self, book: OrderBook, rng: np.random.Generator, **kwargs: Any) -> None:
        book.clear()
        book.limit(Side.ASK, 3, 5)


def test_a_bid_behind_the_first_tick_rests_at_1() -> None:
    # No bids: the inside bid is one tick below the ask, 2, and level k is k - 1 ticks behind.
    env = static_env(flow=_AskAt3(), warmup=0.0)
    env.step(np.array([2, 0, 1]))
    assert own(env.book, Side.BID) == [(1, 1)]
    env.step(np.array([5, 0, 1]))  # 4 ticks behind 2: the lowest price, 1
    assert own(env.book, Side.BID) == [(1, 1)] and env.book.best_bid() == 1


def test_quotes_on_an_empty_book_start_from_the_mid_price() -> None:
    env = static_env(flow=StaticFlow(bids=(), asks=()), mid_price=100, warmup=0.0)
    assert len(env.book) == 0
    env.step(JOIN)
    # The bid at the mid price rounded down, the ask one tick above that bid.
    assert (own(env.book, Side.BID), own(env.book, Side.ASK)) == ([(100, 1)], [(101, 1)])


def test_market_order_cancels_own_opposite_quote_first() -> None:
    env = static_env()
    env.step(JOIN)  # own ask rests at 10001 behind 3 background lots
    env.book.cancel(next(o.order_id for o in env.book.queue(Side.ASK, 10_001) if o.owner != 0))
    ask = env.trader.ask_id
    assert env.book.queue_ahead(ask) == 0  # the agent's ask is now first in line
    result = env.step(np.array([1, 0, 2]))
    assert env.book.get(ask) is None and env.trader.ask_id == 0
    assert env.inventory == 1 and result.info["fills"] == 1
    assert env.cash == -10_002.0  # bought from the background at the next ask level


def test_market_buy_pays_the_ask_and_reward_is_the_wealth_change() -> None:
    env = static_env(inventory_penalty=0.5)
    result = env.step(np.array([0, 0, 2]))
    # bought at 10001; the mid is then (9999 + 10001) / 2 = 10000 (two lots left at 10001)
    assert (env.inventory, env.cash) == (1, -10_001.0)
    assert result.info["wealth"] == -1.0
    assert result.reward == pytest.approx(-1.0 - 0.5 * 1 * 1.0)


@pytest.mark.parametrize(("terminal_penalty", "last"), [(0.25, -4.0), (0.0, -3.0)])
def test_terminal_penalty_is_subtracted_on_the_last_step_only(
    terminal_penalty: float, last: float
) -> None:
    kwargs: dict[str, Any] = {"session_length": 2.0, "inventory_penalty": 0.5}
    if terminal_penalty:
        kwargs["terminal_penalty"] = terminal_penalty
    env = static_env(**kwargs)
    assert env.terminal_penalty == terminal_penalty  # 0.0 by default
    first = env.step(np.array([0, 0, 2]))  # buys 1 at 10001, mid 10000: wealth -1
    assert not first.terminated and first.reward == -1.0 - 0.5 * 1 * 1.0
    second = env.step(np.array([0, 0, 2]))  # buys 1 more at 10001, mid 10000: wealth -2
    assert second.terminated and (env.inventory, second.info["wealth"]) == (2, -2.0)
    # -1 (wealth) - 0.5 * 2**2 * 1.0 (running penalty) - terminal_penalty * 2**2
    assert second.reward == -1.0 - 0.5 * 4 * 1.0 - terminal_penalty * 4 == last


# -- episode ---------------------------------------------------------------------------------


def test_reset_info_and_observation() -> None:
    env = LimitOrderBookEnv()
    result = env.reset(seed=0)
    assert list(result.info) == INFO_KEYS
    assert result.info["timestamp"] == 0.0 and result.info["dt"] == 1.0
    assert result.info["inventory"] == 0 and result.info["wealth"] == 0.0
    assert env.observation_space.contains(result.observation)
    assert result.observation["agent"].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    book = result.observation["book"]
    assert book[0, 0] < 0 < book[0, 2] and (book[:, 1] > 0).all()


def test_info_values_are_python_scalars() -> None:
    env = LimitOrderBookEnv()
    env.reset(seed=0)
    info = env.step(JOIN).info
    assert list(info) == INFO_KEYS
    assert [type(info[k]) for k in INFO_KEYS] == [float, float, int, int, float, float, int, float]


def test_idle_agent_earns_exactly_zero() -> None:
    env = LimitOrderBookEnv()
    result: Any = env.reset(seed=1)
    total = 0.0
    while not result.done:
        result = env.step(IDLE)
        total += result.reward
    assert total == 0.0 and env.inventory == 0 and env.elapsed_steps == 300


def test_reward_is_wealth_change_minus_inventory_penalty() -> None:
    env = LimitOrderBookEnv()
    result: Any = env.reset(seed=2)
    wealth = result.info["wealth"]
    for _ in range(60):
        result = env.step(np.array([1, 2, 1]))
        info = result.info
        expected = info["wealth"] - wealth - 0.01 * info["inventory"] ** 2 * info["dt"]
        assert result.reward == pytest.approx(expected, abs=1e-9)
        wealth = info["wealth"]


def test_trades_observation_lists_recent_trades_oldest_first() -> None:
    env = LimitOrderBookEnv()
    env.reset(seed=3)
    for _ in range(5):
        result = env.step(IDLE)
    trades = result.observation["trades"]
    n = int(trades["mask"].sum())
    assert n > 0 and trades["mask"][:n].all() and not trades["mask"][n:].any()
    assert set(trades["values"][:n, 2].tolist()) <= {1.0, -1.0}
    assert (trades["values"][:n, 1] >= 1).all() and (trades["values"][n:] == 0).all()


def test_session_ends_after_n_steps_and_last_step_may_be_shorter() -> None:
    env = LimitOrderBookEnv(session_length=3.0, decision_interval=0.7)
    assert env.n_steps == 5
    env.reset(seed=0)
    results = [env.step(IDLE) for _ in range(5)]
    assert [r.terminated for r in results] == [False] * 4 + [True]
    assert results[-1].info["dt"] == pytest.approx(0.2)
    assert results[-1].info["timestamp"] == 3.0
    assert results[-1].observation["agent"][1] == 0.0
    with pytest.raises(ResetRequired, match="reset"):
        env.step(IDLE)


def test_the_clock_reports_the_decision_times_not_the_books_float_clock() -> None:
    # a warm-up of 20.3 makes book time - warm-up inexact (0.1 read back as 0.1000000000000014)
    env = LimitOrderBookEnv(session_length=30.0, decision_interval=0.1, warmup=20.3)
    env.reset(seed=1)
    results = [env.step(IDLE) for _ in range(300)]
    assert [r.info["timestamp"] for r in results] == [min((k + 1) * 0.1, 30.0) for k in range(300)]
    assert results[-1].terminated and env.timestamp == 30.0 and env.time_remaining == 0.0
    assert results[-1].observation["agent"][1] == 0.0


@pytest.mark.parametrize(("interval", "length"), [(0.7, 2.1), (0.1, 1.1), (0.3, 0.9)])
def test_a_session_of_whole_intervals_ends_exactly_at_its_length(
    interval: float, length: float
) -> None:
    # 3 x 0.7 is 2.0999999999999996 and 11 x 0.1 is 1.1000000000000001: the last step still ends
    # at the session length, and no time is left there
    env = static_env(decision_interval=interval, session_length=length)
    results = [env.step(IDLE) for _ in range(env.n_steps)]
    assert results[-1].terminated and not any(r.terminated for r in results[:-1])
    assert results[-1].info["timestamp"] == env.timestamp == length
    assert env.time_remaining == 0.0 and results[-1].observation["agent"][1] == 0.0
    before = results[-2].info["timestamp"]
    assert before == (env.n_steps - 1) * interval
    # the time left, computed exactly from the floats given (not rounded as length - before)
    exact = Fraction(length) - (env.n_steps - 1) * Fraction(interval)
    assert results[-1].info["dt"] == float(exact) == pytest.approx(interval, rel=1e-12)


def test_dt_is_the_time_the_last_step_covered_as_in_info() -> None:
    env = LimitOrderBookEnv(session_length=10.0, decision_interval=3.0)
    assert env.dt == 3.0
    assert env.dt == env.reset(seed=0).info["dt"] == 3.0
    dts = []
    for _ in range(env.n_steps):
        result = env.step(IDLE)
        assert env.dt == result.info["dt"]
        dts.append(env.dt)
    assert dts == [3.0, 3.0, 3.0, 1.0] and result.terminated
    env.reset(seed=1)
    assert env.dt == 3.0


@pytest.mark.parametrize(
    ("interval", "length", "last"),
    [
        # 3.0 less 29 times the double nearest 0.1 (a hair above 0.1), computed exactly
        (0.1, 3.0, 0.09999999999999984),
        # 3.0 less 4 x 0.7: a shorter last step
        (0.7, 3.0, 0.20000000000000018),
    ],
)
def test_dt_is_exactly_the_decision_interval_on_every_step_but_the_last(
    interval: float, length: float, last: float
) -> None:
    env = LimitOrderBookEnv(decision_interval=interval, session_length=length)
    env.reset(seed=0)
    dts = []
    for _ in range(env.n_steps):
        result = env.step(JOIN)
        assert env.dt == result.info["dt"]
        dts.append(result.info["dt"])
    assert result.terminated and dts[:-1] == [interval] * (env.n_steps - 1)
    assert dts[-1] == last == float(Fraction(length) - (env.n_steps - 1) * Fraction(interval))


def test_steps_keep_the_exact_decision_times_without_fraction_arithmetic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the exact last step is worked out once, when the env is built: stepping (the hot path)
    # does no Fraction arithmetic, yet every dt is still the exact one
    env = LimitOrderBookEnv(decision_interval=0.7, session_length=3.0)
    env.reset(seed=0)

    def refuse(*args: Any) -> Any:
        raise AssertionError("Fraction arithmetic while stepping")

    for name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__"):
        monkeypatch.setattr(Fraction, name, refuse)
    results = [env.step(JOIN) for _ in range(env.n_steps)]
    monkeypatch.undo()
    assert [r.info["dt"] for r in results] == [0.7] * 4 + [0.20000000000000018]
    assert [r.info["timestamp"] for r in results] == [0.7, 1.4, 0.7 * 3, 2.8, 3.0]
    assert results[-1].terminated and env.time_remaining == 0.0


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(ResetRequired):
        LimitOrderBookEnv().step(IDLE)


@pytest.mark.parametrize(
    "action", [np.array([6, 0, 1]), np.array([0, 0, 3]), np.array([1.0, 1.0, 1.0]), [1, 1], "x"]
)
def test_actions_outside_the_space_raise_invalid_action(action: Any) -> None:
    env = LimitOrderBookEnv()
    env.reset(seed=0)
    with pytest.raises(InvalidAction):
        env.step(action)


def test_actions_may_be_lists_of_ints() -> None:
    env = static_env()
    env.step([1, 1, 1])  # type: ignore[arg-type]
    assert env.book.n_orders_of(0) == 2


@pytest.mark.parametrize("options", [{"strat": 1}, {"start": 3}])
def test_reset_rejects_options(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LimitOrderBookEnv().reset(options=options)


def test_same_seed_same_episode_and_different_seeds_differ() -> None:
    def rollout(seed: int) -> list[float]:
        env = LimitOrderBookEnv()
        env.reset(seed=seed)
        return [env.step(JOIN).reward for _ in range(40)]

    assert rollout(5) == rollout(5)
    assert rollout(5) != rollout(6)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_session_pickled_mid_episode_with_every_protocol_goes_on_like_the_original(
    protocol: int,
) -> None:
    env = LimitOrderBookEnv()
    env.reset(seed=3)
    actions = [np.array([1 + t % 3, 1 + (t + 1) % 3, t % 3]) for t in range(30)]
    for action in actions[:10]:  # quotes of the agent and of the flow rest in the book
        env.step(action)
    assert env.book.orders_of(0)
    copy = pickle.loads(pickle.dumps(env, protocol=protocol))
    for action in actions[10:]:
        ours, theirs = env.step(action), copy.step(action)
        assert structurally_equal(ours, theirs)


def test_state_attributes() -> None:
    env = LimitOrderBookEnv()
    with pytest.raises(ResetRequired):
        env.timestamp  # noqa: B018
    assert env.time_remaining == 300.0  # all of the session before the first reset
    env.reset(seed=0)
    env.step(JOIN)
    assert env.timestamp == 1.0 and env.time_remaining == 299.0 and env.elapsed_steps == 1
    assert env.wealth == env.cash + env.inventory * env.mid
    assert env.book.time == pytest.approx(21.0)  # after the 20-unit warm-up
    assert env.metadata == {"render_fps": 10}


@pytest.mark.parametrize("name", ["levels", "max_quote_offset", "max_trades", "session_length"])
def test_space_defining_parameters_are_read_only(name: str) -> None:
    env = LimitOrderBookEnv()
    with pytest.raises(AttributeError, match="fixed at construction"):
        setattr(env, name, 3)


def test_settable_parameters_are_validated() -> None:
    env = LimitOrderBookEnv()
    env.inventory_penalty = 0.5
    assert env.inventory_penalty == 0.5
    with pytest.raises(ValueError, match="inventory_penalty"):
        env.inventory_penalty = -1.0
    env.terminal_penalty = 0.25
    assert env.terminal_penalty == 0.25
    with pytest.raises(ValueError, match="terminal_penalty"):
        env.terminal_penalty = -1.0
    assert env.terminal_penalty == 0.25
    with pytest.raises(TypeError, match="OrderFlow"):
        env.flow = "zi"
    env.flow = ZeroIntelligenceFlow(market_rate=1.0)
    assert env.flow.market_rate == 1.0


OVERFLOW = "overflow float64: {formula} reaches inf, above float64's largest value 1.798e+308."


@pytest.mark.parametrize(
    ("kwargs", "given", "what", "formula", "lower"),
    [
        (
            {"terminal_penalty": 1e308},
            "terminal_penalty=1e+308, max_inventory=20",
            "the terminal inventory penalty",
            "terminal_penalty * max_inventory**2",
            "terminal_penalty or max_inventory",
        ),
        (
            {"inventory_penalty": 1e308, "decision_interval": 0.5},
            "inventory_penalty=1e+308, max_inventory=20, dt=0.5",
            "the running inventory penalty",
            "inventory_penalty * max_inventory**2 * dt",
            "inventory_penalty or max_inventory",
        ),
        (
            # each term fits, their sum does not
            {"inventory_penalty": 3e305, "terminal_penalty": 3e305},
            "inventory_penalty=3e+305, terminal_penalty=3e+305, max_inventory=20, dt=1.0",
            "the inventory penalties",
            "inventory_penalty * max_inventory**2 * dt + terminal_penalty * max_inventory**2",
            "inventory_penalty, terminal_penalty or max_inventory",
        ),
    ],
    ids=["terminal", "running", "sum"],
)
def test_penalties_whose_reward_overflows_are_refused_as_market_making_refuses_them(
    kwargs: dict[str, Any], given: str, what: str, formula: str, lower: str
) -> None:
    with pytest.raises(ValueError) as info:
        LimitOrderBookEnv(**kwargs)
    assert str(info.value) == (
        f"LimitOrderBook-v0: {given} make {what} {OVERFLOW.format(formula=formula)} Lower {lower}."
    )
    intervals = kwargs.get("decision_interval", 1.0)
    shared = {k: v for k, v in kwargs.items() if k != "decision_interval"}
    with pytest.raises(ValueError) as info:
        LimitOrderBookMarket(2, decision_intervals=intervals, **shared)
    assert str(info.value).startswith(f"LimitOrderBookMarket: {given} make {what} overflow")


def test_the_penalty_check_takes_no_step_longer_than_the_session() -> None:
    # session_length < decision_interval: the one step lasts 1.0, so 4e305 * 20**2 * dt fits
    # float64, as it does for LimitOrderBookMarket with one trader
    env = LimitOrderBookEnv(decision_interval=10.0, session_length=1.0, inventory_penalty=4e305)
    env.reset(seed=0)
    result = env.step(JOIN)
    assert result.terminated and result.info["dt"] == 1.0
    with pytest.raises(ValueError, match=r"inventory_penalty=4e\+305, max_inventory=20, dt=2\.0 "):
        LimitOrderBookEnv(decision_interval=2.0, session_length=3.0, inventory_penalty=4e305)


def test_setting_a_penalty_that_overflows_the_reward_is_refused_and_changes_nothing() -> None:
    env = LimitOrderBookEnv(terminal_penalty=0.5)
    with pytest.raises(ValueError) as info:
        env.terminal_penalty = 1e308
    assert str(info.value) == (
        "LimitOrderBook-v0: setting terminal_penalty makes the terminal inventory penalty "
        "overflow float64: terminal_penalty * max_inventory**2 reaches inf with "
        "terminal_penalty=1e+308, max_inventory=20, above float64's largest value 1.798e+308. "
        "Lower terminal_penalty or max_inventory."
    )
    assert env.terminal_penalty == 0.5
    env.inventory_penalty = 1e305
    with pytest.raises(ValueError, match="setting max_inventory makes the running inventory"):
        env.max_inventory = 10**6
    assert env.max_inventory == 20 and env.inventory_penalty == 1e305
    vec = sekai.make_vec("LimitOrderBook-v0", 2)
    with pytest.raises(ValueError, match="setting inventory_penalty makes the running"):
        vec.set_attr("inventory_penalty", 1e308)
    assert vec.get_attr("inventory_penalty") == [0.01, 0.01]
    vec.close()


def test_the_largest_penalties_accepted_keep_every_reward_finite() -> None:
    # the worst case: the whole inventory limit held to the end of the session
    big = sys.float_info.max / 400 / 2.01
    env = LimitOrderBookEnv(
        inventory_penalty=big, terminal_penalty=big, max_inventory=20, order_size=20
    )
    env.reset(seed=0)
    rewards = [env.step(np.array([0, 0, 2])).reward for _ in range(env.n_steps)]
    assert abs(env.inventory) == 20 and np.isfinite(rewards).all()


def test_terminal_penalty_is_set_and_read_through_a_vector_env() -> None:
    vec = sekai.make_vec("LimitOrderBook-v0", 2, terminal_penalty=0.5)
    assert vec.get_attr("terminal_penalty") == [0.5, 0.5]
    vec.set_attr("terminal_penalty", 0.25)
    assert vec.get_attr("terminal_penalty") == [0.25, 0.25]
    with pytest.raises(ValueError, match="terminal_penalty"):
        vec.set_attr("terminal_penalty", -1.0)
    vec.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mid_price": 19}, "mid_price"),
        ({"mid_price": 100.0}, "mid_price"),
        ({"levels": 0}, "levels"),
        ({"max_quote_offset": 0}, "max_quote_offset"),
        ({"decision_interval": 0.0}, "decision_interval"),
        ({"session_length": -1.0}, "session_length"),
        ({"inventory_penalty": float("nan")}, "inventory_penalty"),
        ({"terminal_penalty": -0.1}, "terminal_penalty"),
        ({"terminal_penalty": float("inf")}, "terminal_penalty"),
        ({"warmup": -1.0}, "warmup"),
        ({"max_inventory": True}, "max_inventory"),
    ],
)
def test_invalid_parameters_raise_value_error(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LimitOrderBookEnv(**kwargs)


LONGEST = r"must be at most 1\.78957e\+08 for ZeroIntelligenceFlow\(limit_rate=10\.0, "


@pytest.mark.parametrize(
    ("kwargs", "given"),
    [
        ({"warmup": 1e30}, r"1e\+30 \+ 300\.0\)"),  # NumPy: "Maximum allowed dimension exceeded"
        ({"warmup": 1e308}, r"1e\+308 \+ 300\.0\)"),  # OverflowError: inf to integer
        ({"session_length": 1e308}, r"20\.0 \+ 1e\+308\)"),
        ({"warmup": 1.8e8}, r"180000000\.0 \+ 300\.0\)"),
    ],
    ids=["warmup-1e30", "warmup-1e308", "session_length", "just-past"],
)
def test_a_session_longer_than_the_flow_simulates_is_refused_when_built(kwargs, given) -> None:
    message = rf"^warmup \+ session_length \({given} {LONGEST}.*Use a shorter time, or lower rates"
    with pytest.raises(ValueError, match=message):
        LimitOrderBookEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        LimitOrderBookMarket(**kwargs)
    LimitOrderBookEnv(warmup=1.78e8, session_length=1.0)  # inside: accepted


def test_a_flow_too_fast_for_the_session_is_refused_when_set_and_the_old_one_kept() -> None:
    env = LimitOrderBookEnv()
    flow = env.flow
    fast = ZeroIntelligenceFlow(limit_rate=1e9)  # 320 time units hold 6.4e11 events
    message = r"^warmup \+ session_length \(20\.0 \+ 300\.0\) must be at most 2\.14748 for"
    with pytest.raises(ValueError, match=message):
        env.flow = fast
    assert env.flow is flow
    with pytest.raises(ValueError, match=message):
        LimitOrderBookEnv(flow=fast)
    env.reset(seed=0)  # unchanged: the default flow runs the session
    env.step(np.array([1, 1, 1]))


def test_flow_of_the_wrong_type_raises_type_error() -> None:
    with pytest.raises(TypeError, match="OrderFlow"):
        LimitOrderBookEnv(flow=object())  # type: ignore[arg-type]


def test_agent_never_trades_with_itself() -> None:
    env = LimitOrderBookEnv()
    result: Any = env.reset(seed=4)
    book = env.book
    original = book._market
    seen: list[Any] = []

    def spy(side: Side, quantity: int, owner: int) -> Any:
        out = original(side, quantity, owner)
        seen.extend(out[1])
        return out

    book._market = spy  # type: ignore[method-assign]
    rng = np.random.default_rng(0)
    for _ in range(200):
        bid, ask, market = env.action_mask()
        action = np.array([rng.choice(np.flatnonzero(m)) for m in (bid, ask, market)])
        result = env.step(action)
        if result.done:
            break
    assert seen and all(f.maker_owner != f.taker_owner for f in seen if f.taker_owner == 0)


def test_a_mid_price_too_low_for_the_seeded_book_is_refused_at_construction():
    for low in (4, np.array(4)):  # a 0-d array is the int it holds, explanation included
        with pytest.raises(ValueError, match=r"mid_price must be an int >= max\(.*\) = 11 \(the"):
            sekai.make("LimitOrderBook-v0", mid_price=low, max_quote_offset=1, levels=1)
    sekai.make("LimitOrderBook-v0", mid_price=11, max_quote_offset=1, levels=1).reset(seed=0)


def test_an_order_larger_than_the_inventory_limit_is_refused():
    with pytest.raises(ValueError, match="order_size=25 exceeds max_inventory=20"):
        sekai.make("LimitOrderBook-v0", order_size=25)
    env = sekai.make("LimitOrderBook-v0", order_size=5).unwrapped
    with pytest.raises(ValueError, match="order_size=5 exceeds max_inventory=4"):
        env.max_inventory = 4
    with pytest.raises(ValueError, match="order_size=21 exceeds max_inventory=20"):
        env.order_size = 21


def test_a_new_order_size_is_read_back_and_sizes_the_next_quotes():
    env = static_env()
    env.order_size = 2
    assert env.order_size == 2
    env.step(JOIN)
    assert (own(env.book, Side.BID), own(env.book, Side.ASK)) == ([(9_999, 2)], [(10_001, 2)])


@pytest.mark.parametrize(
    ("value", "given"), [(2.0, "float 2.0"), (True, "bool True"), ("2", "str '2'")]
)
def test_an_order_size_that_is_not_an_int_is_refused_and_changes_nothing(value, given):
    env = static_env()
    message = f"order_size must be an int >= 1, got {given}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        env.order_size = value
    assert env.order_size == 1
