"""ZeroIntelligenceFlow: parameters, seeding the book, and the statistics of the simulated book."""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any

import numpy as np
import pytest

from sekai.finance.lob import (
    BACKGROUND,
    OrderBook,
    OrderFlow,
    Side,
    StaticFlow,
    ZeroIntelligenceFlow,
    flow as flow_module,
)
from sekai.finance.lob.flow import MAX_EVENTS


def run(flow: ZeroIntelligenceFlow, seed: int, horizon: int) -> tuple[OrderBook, list[Any]]:
    book, rng = OrderBook(), np.random.default_rng(seed)
    flow.initialise(book, rng, mid=10_000)
    fills = []
    for t in range(1, horizon + 1):
        fills += flow.advance(book, rng, float(t))
    return book, fills


def test_defaults_and_repr() -> None:
    flow = ZeroIntelligenceFlow()
    assert (flow.limit_rate, flow.market_rate, flow.cancel_rate) == (10.0, 2.0, 0.5)
    assert (flow.max_offset, flow.offset_decay, flow.mean_size) == (10, 0.5, 3.0)
    assert repr(flow) == (
        "ZeroIntelligenceFlow(limit_rate=10.0, market_rate=2.0, cancel_rate=0.5, max_offset=10, "
        "offset_decay=0.5, mean_size=3.0)"
    )
    assert isinstance(flow, OrderFlow)


def test_flow_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ZeroIntelligenceFlow().limit_rate = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"limit_rate": 0.0}, "limit_rate"),
        ({"market_rate": -1.0}, "market_rate"),
        ({"cancel_rate": -0.1}, "cancel_rate"),
        ({"offset_decay": float("nan")}, "offset_decay"),
        ({"mean_size": 0.5}, "mean_size"),
        ({"max_offset": 0}, "max_offset"),
        ({"max_offset": 2.0}, "max_offset"),
        ({"limit_rate": True}, "limit_rate"),
    ],
)
def test_invalid_parameters_raise_value_error(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ZeroIntelligenceFlow(**kwargs)


@pytest.mark.parametrize(
    ("name", "bound"),
    [
        ("limit_rate", "> 0"),
        ("market_rate", "> 0"),
        ("cancel_rate", ">= 0"),
        ("offset_decay", ">= 0"),
        ("mean_size", ">= 1"),
    ],
)
def test_a_rate_beyond_float64_is_a_value_error_naming_it(name: str, bound: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be a finite number {bound}, got"):
        ZeroIntelligenceFlow(**{name: 10**400})


@pytest.mark.parametrize("mean", [3.0, 700.0, 709.5, 800.0, 1000.0, 20_000.0, 1e6, 1e8])
def test_order_sizes_are_one_plus_poisson_for_any_mean(mean: float) -> None:
    # exp(-mean) leaves the normal floats past a mean of about 709: the sizes must not care
    book = OrderBook()
    flow = ZeroIntelligenceFlow(mean_size=mean)
    flow.initialise(book, np.random.default_rng(0), mid=10**9, levels=1000, orders_per_level=2)
    sizes = np.array([o.quantity for o in book.orders_of(BACKGROUND) if o.side is Side.BID])
    lam = mean - 1.0
    assert sizes.size == 2000 and sizes.min() >= 1
    assert abs(sizes.mean() - mean) < 5 * np.sqrt(lam / sizes.size)
    assert sizes.std() == pytest.approx(np.sqrt(lam), rel=0.1)


def test_the_flows_orders_draw_their_sizes_from_the_same_distribution() -> None:
    mean = 1e6
    book, fills = run(ZeroIntelligenceFlow(mean_size=mean), seed=0, horizon=3)
    low, high = mean - 12 * np.sqrt(mean), mean + 12 * np.sqrt(mean)
    taken: dict[int, int] = {}
    for fill in fills:  # the market orders, each filled up to its size
        taken[fill.taker_order_id] = taken.get(fill.taker_order_id, 0) + fill.quantity
    assert len(taken) > 5 and low <= max(taken.values()) <= high
    arrived = [o.quantity for o in book.orders_of(BACKGROUND) if o.time > 0]
    assert len(arrived) > 5 and low <= max(arrived) <= high


def test_a_mean_size_beyond_the_size_table_is_refused_naming_the_limit() -> None:
    expected = r"^mean_size must be a finite number >= 1 and <= 100_000_000 .*got 100000001\.0\.$"
    with pytest.raises(ValueError, match=expected):
        ZeroIntelligenceFlow(mean_size=1e8 + 1)


def test_initialise_seeds_a_symmetric_book_around_mid() -> None:
    book = OrderBook()
    book.limit(Side.BID, 5, 1, owner=0)
    ZeroIntelligenceFlow().initialise(book, np.random.default_rng(0), mid=100, levels=4)
    bid_px, bid_sz, ask_px, ask_sz = book.depth(4)
    assert bid_px.tolist() == [99, 98, 97, 96] and ask_px.tolist() == [101, 102, 103, 104]
    assert bid_sz.tolist() == ask_sz.tolist()
    assert len(book) == 24 and book.last_price == 100 and book.n_orders_of(0) == 0


def test_initialise_refuses_a_mid_too_close_to_zero() -> None:
    with pytest.raises(ValueError, match="mid"):
        ZeroIntelligenceFlow().initialise(OrderBook(), np.random.default_rng(0), mid=5)


@pytest.mark.parametrize(("mid", "ok"), [(10, False), (11, True)])
def test_initialise_needs_every_seeded_bid_at_a_positive_price(mid: int, ok: bool) -> None:
    book = OrderBook()
    if not ok:
        with pytest.raises(ValueError, match="mid - levels >= 1, got mid=10, levels=10"):
            ZeroIntelligenceFlow().initialise(book, np.random.default_rng(0), mid=mid, levels=10)
        return
    ZeroIntelligenceFlow().initialise(book, np.random.default_rng(0), mid=mid, levels=10)
    assert book.prices(Side.BID)[-1] == 1


def test_each_resting_order_is_cancelled_at_cancel_rate() -> None:
    # Limit and market orders almost never arrive: the clock runs on the cancellations alone,
    # so after one mean lifetime (1 / cancel_rate) about exp(-1) of the 60 seeded orders remain.
    flow = ZeroIntelligenceFlow(limit_rate=1e-3, market_rate=1e-3, cancel_rate=10.0)
    left = []
    for seed in range(20):
        book, rng = OrderBook(), np.random.default_rng(seed)
        flow.initialise(book, rng, mid=10_000)
        flow.advance(book, rng, 0.1)
        left.append(len(book))
    assert 60 * np.exp(-1.0) - 3 < np.mean(left) < 60 * np.exp(-1.0) + 3


def test_bids_near_the_lowest_tick_are_placed_at_tick_one_or_above() -> None:
    # best ask at 4 and offsets up to 10 ticks: a bid k ticks below it would reach tick -6
    flow = ZeroIntelligenceFlow(max_offset=10, offset_decay=0.0, market_rate=0.1)
    book, rng = OrderBook(), np.random.default_rng(0)
    flow.initialise(book, rng, mid=3, levels=2)
    for t in range(1, 51):
        flow.advance(book, rng, t / 10)
        assert min(book.prices(Side.BID)) >= 1


def test_a_bid_side_refilled_near_the_lowest_tick_stays_at_tick_one_or_above() -> None:
    flow = ZeroIntelligenceFlow(max_offset=10, offset_decay=0.0)
    for seed in range(10):
        book, rng = OrderBook(), np.random.default_rng(seed)
        book.limit(Side.ASK, 2, 5)
        flow.advance(book, rng, 1e-9)  # the refill of the empty bid side, and no event
        assert book.prices(Side.BID) == [1]


def test_static_flow_never_moves_the_clock_back() -> None:
    book = OrderBook()
    StaticFlow().initialise(book, np.random.default_rng(0), mid=100)
    StaticFlow().advance(book, np.random.default_rng(0), 5.0)
    assert StaticFlow().advance(book, np.random.default_rng(0), 2.0) == [] and book.time == 5.0


def test_a_flow_simulates_up_to_its_max_time_inclusive() -> None:
    flow = ZeroIntelligenceFlow()
    flow.check_until(flow.max_time())  # the bound itself is reachable
    with pytest.raises(ValueError, match="until must be at most"):
        flow.check_until(np.nextafter(flow.max_time(), np.inf))


def test_same_seed_gives_the_same_flow() -> None:
    flow = ZeroIntelligenceFlow()
    (a, fills_a), (b, fills_b) = run(flow, 3, 30), run(flow, 3, 30)
    assert fills_a == fills_b
    assert [x.tolist() for x in a.depth(10)] == [x.tolist() for x in b.depth(10)]
    assert run(flow, 4, 30)[1] != fills_a


def test_advance_moves_the_clock_to_until_and_never_crosses() -> None:
    flow, book, rng = ZeroIntelligenceFlow(), OrderBook(), np.random.default_rng(1)
    flow.initialise(book, rng, mid=10_000)
    for step in range(1, 200):
        fills = flow.advance(book, rng, step * 0.5)
        assert book.time == step * 0.5
        assert all(step * 0.5 - 0.5 <= f.time <= step * 0.5 for f in fills)
        assert book.best_bid() is not None and book.best_ask() is not None
        assert book.best_bid() < book.best_ask()  # type: ignore[operator]
    assert flow.advance(book, rng, 1.0) == [] and book.time == 99.5  # no time travel


def test_default_flow_statistics_match_the_documented_book() -> None:
    flow, book, rng = ZeroIntelligenceFlow(), OrderBook(), np.random.default_rng(0)
    flow.initialise(book, rng, mid=10_000)
    flow.advance(book, rng, 20.0)
    sizes: list[int] = []
    spreads: list[Any] = []
    mids: list[Any] = []
    for t in range(21, 1021):
        flow.advance(book, rng, float(t))
        sizes.append(len(book))
        spreads.append(book.spread())
        mids.append(book.mid())
    assert 25 < np.mean(sizes) < 40  # "about 30 orders"
    assert 1.0 <= np.mean(spreads) < 1.3  # "about one tick"
    assert 0.3 < np.std(np.diff(mids)) < 0.8  # "roughly 0.5 tick per unit time"


def test_agent_orders_are_never_cancelled_by_the_flow() -> None:
    flow = ZeroIntelligenceFlow(cancel_rate=5.0)  # background orders live 0.2 time units
    for seed in range(5):
        book, rng = OrderBook(), np.random.default_rng(seed)
        flow.initialise(book, rng, mid=10_000)
        order_id = book.limit(Side.BID, 9_990, 1, owner=0)[0]
        assert order_id is not None
        fills = []
        for t in range(1, 21):
            fills += flow.advance(book, rng, float(t))
        filled = any(f.maker_order_id == order_id for f in fills)
        assert (book.get(order_id) is not None) != filled  # it rests until it is filled


def test_an_emptied_side_is_refilled_before_the_flow_continues() -> None:
    flow, book, rng = ZeroIntelligenceFlow(), OrderBook(), np.random.default_rng(0)
    flow.initialise(book, rng, mid=10_000, levels=2, orders_per_level=1)
    book.market(Side.ASK, 1_000, owner=0)  # an agent sweeps every bid
    assert book.best_bid() is None
    flow.advance(book, rng, book.time + 1e-9)
    assert book.best_bid() is not None and book.best_bid() < book.best_ask()  # type: ignore[operator]
    assert all(o.owner == BACKGROUND for o in book.orders_of(BACKGROUND))


def test_an_empty_book_is_seeded_around_its_last_price() -> None:
    flow, book = ZeroIntelligenceFlow(), OrderBook()
    book.last_price = 100
    flow.advance(book, np.random.default_rng(0), 1e-9)  # the refill only: no event this soon
    orders = [(o.side, o.price) for o in book.orders_of(BACKGROUND)]
    assert orders == [(Side.BID, 97), (Side.ASK, 98)]  # a bid below 100, an ask above that bid
    flow.advance(book, np.random.default_rng(0), 5.0)
    assert book.time == 5.0 and len(book) > 2
    assert book.best_bid() < book.best_ask()  # type: ignore[operator]


def test_an_empty_book_without_a_last_price_stays_empty() -> None:
    flow, book = ZeroIntelligenceFlow(), OrderBook()
    assert flow.advance(book, np.random.default_rng(0), 5.0) == []  # no price to quote around
    assert len(book) == 0 and book.time == 5.0 and book.last_price is None


def test_an_advance_from_an_empty_book_over_many_blocks_never_crosses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(flow_module, "_MAX_BLOCK", 1 << 10)  # a block lasts a few time units
    flow, book = ZeroIntelligenceFlow(), OrderBook()
    book.last_price = 100
    rng = _Recording(0)
    for until in (50.0, 100.0, 150.0, 200.0):
        drawn = len(rng.sizes)
        flow.advance(book, rng, until)  # type: ignore[arg-type]
        assert len(rng.sizes) - drawn > 3  # one block after another
        assert book.time == until
        assert book.best_bid() < book.best_ask()  # type: ignore[operator]
        assert len(book) < 100  # cancellations keep it about 30 orders deep from the start
    assert set(rng.sizes) == {(1 << 10) + 64}


def test_mean_size_one_gives_single_lot_orders() -> None:
    book, _ = run(ZeroIntelligenceFlow(mean_size=1.0), 0, 5)
    assert all(o.quantity == 1 for o in book.orders_of(BACKGROUND))


class CountingFlow(OrderFlow):
    """A stateful flow (state in ``book.flow_state``, as a Hawkes flow would keep it)."""

    def __init__(self) -> None:
        self.inner = ZeroIntelligenceFlow()

    def initialise(
        self,
        book: OrderBook,
        rng: np.random.Generator,
        *,
        mid: int,
        levels: int = 10,
        orders_per_level: int = 3,
    ) -> None:
        self.inner.initialise(book, rng, mid=mid, levels=levels, orders_per_level=orders_per_level)

    def advance(self, book: OrderBook, rng: np.random.Generator, until: float) -> list[Any]:
        book.flow_state["calls"] = int(book.flow_state.get("calls", 0)) + 1  # type: ignore[call-overload]
        return self.inner.advance(book, rng, until)


def test_a_custom_stateful_flow_plugs_into_the_env() -> None:
    from sekai.envs.finance.lob import LimitOrderBookEnv

    env = LimitOrderBookEnv(flow=CountingFlow())
    env.reset(seed=0)
    assert env.book.flow_state == {"calls": 1}  # the warm-up
    for _ in range(3):
        env.step(np.array([1, 1, 1]))
    assert env.book.flow_state == {"calls": 4}
    env.reset(seed=1)
    assert env.book.flow_state == {"calls": 1}  # initialise() cleared the book and its state


def test_max_time_is_the_clock_time_of_max_events_at_the_order_rates() -> None:
    flow = ZeroIntelligenceFlow()
    assert flow.max_time() == MAX_EVENTS / 24.0 == 2**32 / 24
    assert ZeroIntelligenceFlow(limit_rate=1e300).max_time() < 1e-290
    assert ZeroIntelligenceFlow(limit_rate=1e308, market_rate=1e308).max_time() == 0.0


def test_advance_refuses_a_time_past_max_time_naming_the_bound() -> None:
    flow = ZeroIntelligenceFlow()
    book, rng = OrderBook(), np.random.default_rng(0)
    flow.initialise(book, rng, mid=10_000)
    state = rng.bit_generator.state
    expected = (
        r"^until must be at most 1\.78957e\+08 for ZeroIntelligenceFlow\(limit_rate=10\.0, .*\), "
        r"got 1e\+30: its float64 clock resolves at most 2\*\*32 events \(MAX_EVENTS\), and it "
        r"simulates at least 2 \* limit_rate \+ 2 \* market_rate = 24 per unit time\. Use a "
        r"shorter time, or lower rates\.$"
    )
    for until in (1e30, 1e308):  # the block of uniforms overflowed int, or NumPy's dimensions
        with pytest.raises(ValueError, match=expected.replace("1e\\+30", re.escape(repr(until)))):
            flow.advance(book, rng, until)
    assert book.time == 0.0 and rng.bit_generator.state == state  # nothing simulated or drawn


class _Recording:
    """A generator that records how many uniforms each draw asks for."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.sizes: list[int] = []

    def random(self, size: int) -> np.ndarray:
        self.sizes.append(size)
        return self.rng.random(size)


def test_a_long_advance_draws_its_uniforms_in_bounded_blocks() -> None:
    # 2,000 time units expect about 900,000 uniforms: drawn at once, a long enough span asked
    # NumPy for more than memory holds
    flow = ZeroIntelligenceFlow()
    book = OrderBook()
    flow.initialise(book, np.random.default_rng(0), mid=10_000)
    rng = _Recording(1)
    flow.advance(book, rng, 2000.0)  # type: ignore[arg-type]
    assert book.time == 2000.0
    assert max(rng.sizes) <= 2**18 + 64


def test_the_default_flow_can_simulate_any_finite_time() -> None:
    flow = StaticFlow()
    assert flow.max_time() == sys.float_info.max
    flow.check_until(1e308)
    with pytest.raises(ValueError, match=r"^until must be at most 1\.79769e\+308 for StaticFlow"):
        flow.check_until(float("inf"))
