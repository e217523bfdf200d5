"""LimitOrderBook-v0 and the order book engine: env steps/s and order-book messages/s.

Run: ``python benchmarks/bench_lob.py [--steps 3000] [--repeats 3] [--cpu] [--quick]``.

``--cpu`` times with the process's CPU time instead of the wall clock: on a machine shared with
other jobs, wall time mostly measures how often the process was preempted.

Reports, best of ``repeats`` rounds after one untimed warm-up round (rounds alternate between
the runs, for noisy machines):

* ``LimitOrderBook-v0`` single env: ``env.step`` with pre-sampled random actions and with the
  inventory-skew baseline's actions, recorded in an untimed run of the policy from the same
  seed (neither row times a policy; an episode's reset is timed);
* ``LimitOrderBookMarket(3)``: steps/s of the three-trader market;
* the zero-intelligence flow: background events (limit, market, cancel messages) simulated per
  second by ``advance``, including its random draws (the initial book is not counted);
* the engine alone: a recorded stream of the flow's messages, its initial book included,
  replayed on an empty ``OrderBook`` through the public ``limit`` / ``market`` / ``cancel``
  calls (messages/s). Each replay must end with the recorded book, or the script fails.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _args import positive_int

from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.finance.baselines.lob import InventorySkew
from sekai.finance.lob import OrderBook, Side, ZeroIntelligenceFlow

CLOCK = time.perf_counter


class RecordingBook(OrderBook):
    """An OrderBook that logs every message the flow sends it (for the engine replay)."""

    def clear(self) -> None:
        super().clear()
        self.log: list[tuple[Any, ...]] = []

    def _rest(self, side: Side, price: int, quantity: int, owner: int, order_id: int = 0) -> int:
        self.log.append(("limit", side, price, quantity, owner))
        return super()._rest(side, price, quantity, owner, order_id)

    def _market(self, side: Side, quantity: int, owner: int) -> tuple[int, list[Any]]:
        self.log.append(("market", side, quantity, owner))
        return super()._market(side, quantity, owner)

    def _remove(self, order: Any) -> None:
        self.log.append(("cancel", order.order_id))
        super()._remove(order)


def env_steps(env: LimitOrderBookEnv, actions: np.ndarray) -> Callable[[], float]:
    """Steps/s of ``env`` over the given actions (resetting at the end of each session)."""

    def run() -> float:
        env.reset(seed=0)
        start = CLOCK()
        for action in actions:
            if env.step(action).terminated:
                env.reset()
        return len(actions) / (CLOCK() - start)

    return run


def skew_actions(env: LimitOrderBookEnv, steps: int) -> np.ndarray:
    """The inventory-skew baseline's actions over ``steps`` steps from ``reset(seed=0)``.

    The env is deterministic given its seed and the actions, so :func:`env_steps` replaying
    them runs the policy's own trajectory with the policy's cost outside the clock.
    """
    policy = InventorySkew()
    result: Any = env.reset(seed=0)
    actions = []
    for _ in range(steps):
        action = policy(result.observation, env)
        actions.append(action)
        result = env.step(action)
        if result.terminated:
            result = env.reset()
    return np.stack(actions)


def market_steps(steps: int) -> Callable[[], float]:
    env = LimitOrderBookMarket(3)
    action = np.array([1, 1, 1])

    def run() -> float:
        env.reset(seed=0)
        start = CLOCK()
        for _ in range(steps):
            env.step(dict.fromkeys(env.acting, action))
            if not env.agents:
                env.reset()
        return steps / (CLOCK() - start)

    return run


@dataclass(frozen=True)
class Stream:
    """The flow's messages, from ``initialise`` on, and the book they left."""

    messages: list[tuple[Any, ...]]
    initial: int
    """How many of ``messages`` ``initialise`` sent (the initial book); the rest are events."""
    events_per_second: float
    """Events simulated per second by ``advance`` (initialisation neither counted nor timed)."""
    book: OrderBook

    @property
    def events(self) -> int:
        return len(self.messages) - self.initial


def record_stream(horizon: float) -> Stream:
    """The flow's messages over ``horizon`` time units, and the events/s of simulating them."""
    flow, book, rng = ZeroIntelligenceFlow(), RecordingBook(), np.random.default_rng(0)
    flow.initialise(book, rng, mid=10_000)
    initial = len(book.log)
    plain, plain_rng = OrderBook(), np.random.default_rng(0)
    flow.initialise(plain, plain_rng, mid=10_000)
    start = CLOCK()
    for t in range(1, int(horizon) + 1):
        flow.advance(plain, plain_rng, float(t))
    elapsed = CLOCK() - start
    for t in range(1, int(horizon) + 1):
        flow.advance(book, rng, float(t))
    return Stream(book.log, initial, (len(book.log) - initial) / elapsed, book)


def book_state(book: OrderBook) -> tuple[Any, ...]:
    """What a replay must reproduce: order count, best quotes and the ten best levels."""
    return (len(book), book.best_bid(), book.best_ask(), *(a.tolist() for a in book.depth(10)))


def replay(stream: Stream) -> Callable[[], float]:
    """Messages/s of the public API replaying ``stream`` on an empty book.

    The stream starts with the orders of the initial book, so the book starts empty; the
    replayed book is checked against the recorded one after the timed loop.
    """
    expected = book_state(stream.book)

    def run() -> float:
        book = OrderBook()
        limit, market, cancel = book.limit, book.market, book.cancel
        start = CLOCK()
        for message in stream.messages:
            kind = message[0]
            if kind == "limit":
                limit(message[1], message[2], message[3], message[4])
            elif kind == "market":
                market(message[1], message[2], message[3])
            else:
                cancel(message[1])
        rate = len(stream.messages) / (CLOCK() - start)
        if book_state(book) != expected:
            raise RuntimeError(
                f"the replay did not reproduce the recorded book: {book!r} against "
                f"{stream.book!r}; the messages/s would time another workload"
            )
        return rate

    return run


def best_rates(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """The best rate of each run over ``repeats`` rounds, after one untimed warm-up round.

    Without the warm-up a run's first call (first-call costs, cold caches) would be timed,
    and with ``--quick``'s single round it would be the only figure.
    """
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, 0.0)
    for _ in range(repeats):
        for name, run in runs.items():
            best[name] = max(best[name], run())
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=3000)
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--cpu", action="store_true", help="time with process CPU time")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 300 steps, 1 repeat")
    args, _ = parser.parse_known_args(argv)  # nox -s bench passes its posargs to every script
    if args.quick:
        args.steps, args.repeats = 300, 1
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    env = LimitOrderBookEnv()
    env.action_space.seed(0)  # before sampling: the same actions in every run
    actions = np.stack([env.action_space.sample() for _ in range(args.steps)])
    stream = record_stream(args.steps)
    runs: dict[str, Callable[[], float]] = {
        "LimitOrderBook-v0 steps/s (random actions)": env_steps(LimitOrderBookEnv(), actions),
        "LimitOrderBook-v0 steps/s (inventory skew)": env_steps(
            LimitOrderBookEnv(), skew_actions(LimitOrderBookEnv(), args.steps)
        ),
        "LimitOrderBookMarket(3) steps/s": market_steps(args.steps),
        "OrderBook messages/s (public limit/market/cancel)": replay(stream),
    }
    best = best_rates(runs, args.repeats)
    width = max(map(len, best)) + 2
    for name, rate in best.items():
        print(f"{name:<{width}}{rate:>12,.0f}")
    flow_rate = stream.events_per_second
    print(f"{'ZeroIntelligenceFlow events/s (incl. draws)':<{width}}{flow_rate:>12,.0f}")
    book = stream.book
    print(
        f"(background events per env step: {stream.events / args.steps:.1f}; stream of "
        f"{len(stream.messages):,} messages, {stream.initial} of them the initial book; every "
        f"replay ended with the recorded book: {len(book)} orders, best bid {book.best_bid()}, "
        f"best ask {book.best_ask()}; best of {args.repeats} timed round(s) after one untimed "
        "warm-up round)"
    )


if __name__ == "__main__":
    main()
