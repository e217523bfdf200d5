"""The finance dashboards: frame shape, that pictures follow the episode, errors, goldens.

Golden images live in ``goldens/`` as 4x-downsampled frames (``.npz``). After a deliberate
change of a picture, look at the new frames, then rewrite the goldens with
``SEKAI_UPDATE_GOLDENS=1 pytest packages/sekai-finance/tests/rendering``.
"""

from __future__ import annotations

import copy
import gc
import os
import pickle
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np
import pytest

import sekai
from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.envs.finance.market import MarketEnv
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.rendering import (
    LimitOrderBookMarketRenderer,
    LimitOrderBookRenderer,
    MarketMakingRenderer,
    MarketRenderer,
    OptimalExecutionRenderer,
    PortfolioRenderer,
    TradingRenderer,
)
from sekai.envs.finance.rendering._base import asset_names, describe_market, format_time
from sekai.envs.finance.rendering.lob import NetFills
from sekai.envs.finance.rendering.market import slot_labels
from sekai.envs.finance.rendering.optimal_execution import ExecutionTracker
from sekai.envs.finance.trading import TradingEnv
from sekai.finance import MarketData
from sekai.finance.rendering._paint import mix
from sekai.rendering import RENDER_BEFORE_RESET, Renderer, Theme
from sekai.wrappers import TimeLimit

GOLDENS = Path(__file__).parent / "goldens"


@dataclass(frozen=True)
class Case:
    """One env with its renderer and a deterministic policy."""

    name: str
    make: Callable[[], Any]
    renderer: type
    policy: Callable[[Any, int], Any]


def _trading_policy(env: Any, k: int) -> Any:
    return (2, 2, 2, 1, 0, 0, 1, 2)[k // 4 % 8]


def _portfolio_policy(env: Any, k: int) -> Any:
    n = env.unwrapped.n_assets + 1
    return np.roll(np.linspace(0.1, 1.0, n), k // 5).astype(np.float32)


def _market_policy(env: Any, k: int) -> Any:
    size = env.unwrapped.action_space.shape[0]
    return np.roll(np.linspace(0.0, 1.0, size), k // 6).astype(np.float32)


def _lob_policy(env: Any, k: int) -> Any:
    return np.array([1 + k % 2, 1 + (k // 3) % 2, 2 if k % 9 == 4 else (0 if k % 9 == 8 else 1)])


def _lob_market_policy(env: Any, k: int) -> Any:
    return {agent: np.array([1 + i, 1, 1]) for i, agent in enumerate(env.acting)}


CASES = [
    Case(
        "trading",
        lambda: TradingEnv(episode_length=40, lookback=12),
        TradingRenderer,
        _trading_policy,
    ),
    Case(
        "portfolio",
        lambda: PortfolioEnv(n_assets=3, episode_length=40, lookback=12),
        PortfolioRenderer,
        _portfolio_policy,
    ),
    Case(
        "market_making",
        lambda: MarketMakingEnv(n_steps=40),
        MarketMakingRenderer,
        lambda env, k: env.unwrapped.avellaneda_stoikov_action(),
    ),
    Case(
        "optimal_execution",
        lambda: OptimalExecutionEnv(n_steps=12),
        OptimalExecutionRenderer,
        lambda env, k: env.unwrapped.almgren_chriss_actions()[k],
    ),
    Case(
        "market",
        lambda: MarketEnv(episode_length=40, lookback=8),
        MarketRenderer,
        _market_policy,
    ),
    Case(
        "lob",
        lambda: LimitOrderBookEnv(session_length=40.0),
        LimitOrderBookRenderer,
        _lob_policy,
    ),
    Case(
        "lob_market",
        lambda: LimitOrderBookMarket(2, decision_intervals=[1.0, 1.5], session_length=30.0),
        LimitOrderBookMarketRenderer,
        _lob_market_policy,
    ),
]
IDS = [case.name for case in CASES]


def _done(result: Any) -> bool:
    terminated, truncated = result.terminated, result.truncated
    if isinstance(terminated, dict):
        return all(terminated.values()) or all(truncated.values())
    return bool(terminated or truncated)


def _run(case: Case, renderer: Any, steps: int, *, seed: int = 0) -> tuple[Any, np.ndarray]:
    """Reset, render, then step and render ``steps`` times (or to the end); the last frame."""
    env = case.make()
    env.reset(seed=seed)
    frame = renderer.render(env)
    for k in range(steps):
        result = env.step(case.policy(env, k))
        frame = renderer.render(env)
        if _done(result):
            break
    return env, frame


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_frames_are_uint8_rgb_of_the_default_size_at_reset_and_after_steps(case: Case) -> None:
    renderer = case.renderer()
    assert isinstance(renderer, Renderer)
    env = case.make()
    env.reset(seed=0)
    first = np.asarray(renderer.render(env))
    assert first.shape == (450, 720, 3) and first.dtype == np.uint8
    _, later = _run(case, case.renderer(), 6)
    assert later.shape == (450, 720, 3) and later.dtype == np.uint8


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_picture_changes_as_the_episode_goes_on(case: Case) -> None:
    renderer = case.renderer()
    env = case.make()
    env.reset(seed=0)
    frames = [renderer.render(env)]
    for k in range(3):
        env.step(case.policy(env, k))
        frames.append(renderer.render(env))
    for before, after in pairwise(frames):
        assert not np.array_equal(before, after)
    # Rendering the same state twice draws the same picture.
    np.testing.assert_array_equal(renderer.render(env), frames[-1])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_new_episode_starts_a_new_picture(case: Case) -> None:
    renderer = case.renderer()
    env, _ = _run(case, renderer, 5)
    env.reset(seed=3)  # the same env, a new episode
    np.testing.assert_array_equal(renderer.render(env), case.renderer().render(env))
    other = case.make()  # another env
    other.reset(seed=0)
    np.testing.assert_array_equal(renderer.render(other), case.renderer().render(other))


COPIES: dict[str, Callable[[Any], Any]] = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda value: pickle.loads(pickle.dumps(value)),
    "cloudpickle": lambda value: pickle.loads(cloudpickle.dumps(value)),
}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_reset_the_renderer_did_not_see_starts_a_new_picture(case: Case) -> None:
    # Recording switched off over a reset, then on again some steps into the next episode: the
    # first episode's data must not be joined to the second's.
    renderer = case.renderer()
    env, _ = _run(case, renderer, 3)
    env.reset(seed=1)
    for k in range(5):
        env.step(case.policy(env, k))
    np.testing.assert_array_equal(renderer.render(env), case.renderer().render(env))


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_copy_taken_mid_episode_draws_on_like_the_original(case: Case, how: str) -> None:
    # A deep copy used to keep a weak reference to the original env (so its next frame started
    # the episode over), and pickling failed on that reference or on the charts' closures.
    renderer = case.renderer(width=240, height=160)
    env, _ = _run(case, renderer, 5)
    twin_env, twin = COPIES[how]((env, renderer))
    for k in range(5, 7):
        env.step(case.policy(env, k))
        twin_env.step(case.policy(twin_env, k))
        frame = renderer.render(env)
        np.testing.assert_array_equal(twin.render(twin_env), frame)
    # The copy kept the episode so far: a renderer that never saw it draws another picture.
    assert not np.array_equal(frame, case.renderer(width=240, height=160).render(env))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_deep_copy_of_the_renderer_alone_or_first_draws_on_the_original_env(case: Case) -> None:
    # A renderer does not own its env: the copy keeps drawing the original env's episode, and
    # deep-copying the renderer does not deep-copy the env (that copy, held weakly, died at once
    # and the copy's next frame started the episode over).
    renderer = case.renderer(width=240, height=160)
    env, _ = _run(case, renderer, 5)
    memo: dict[int, Any] = {}
    twin = copy.deepcopy(renderer, memo)
    assert id(env.unwrapped) not in memo
    first, _ = copy.deepcopy((renderer, env))  # copied before its env: the same as alone
    for k in range(5, 7):
        env.step(case.policy(env, k))
        frame = renderer.render(env)
        np.testing.assert_array_equal(twin.render(env), frame)
        np.testing.assert_array_equal(first.render(env), frame)
    assert not np.array_equal(frame, case.renderer(width=240, height=160).render(env))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_renderer_unpickled_without_its_env_starts_a_new_picture(case: Case) -> None:
    # A pickle cannot tell whether the env comes along: alone, the renderer does not keep the
    # env's copy alive, and it will not guess that the env it is given next is the one it drew.
    # It draws that env as the original renderer draws an env it did not draw (a copy of it).
    renderer = case.renderer(width=240, height=160)
    env, _ = _run(case, renderer, 5)
    twin = pickle.loads(pickle.dumps(renderer))
    switched, other_env = copy.deepcopy(renderer), copy.deepcopy(env)
    for k in range(5, 7):
        env.step(case.policy(env, k))
        other_env.step(case.policy(other_env, k))
        frame = twin.render(env)
        np.testing.assert_array_equal(frame, switched.render(other_env))
    # The new picture lacks the steps before the pickle, which the env's own renderer draws.
    assert not np.array_equal(frame, renderer.render(env))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rendering_before_reset_raises_reset_required_with_the_rendering_wording(
    case: Case,
) -> None:
    with pytest.raises(sekai.ResetRequired) as info:
        case.renderer().render(case.make())
    assert str(info.value) == RENDER_BEFORE_RESET


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_another_env_class_raises_type_error_naming_both_classes(case: Case) -> None:
    other = OptimalExecutionEnv() if case.renderer is not OptimalExecutionRenderer else TradingEnv()
    other.reset(seed=0)
    renderer = case.renderer()
    with pytest.raises(TypeError) as info:
        renderer.render(other)
    drawn = type(case.make()).__name__
    expected = f"{type(renderer).__name__} draws {drawn}, got {type(other).__name__}."
    assert str(info.value) == expected


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "lob_market"], ids=IDS[:-1])
def test_renderers_accept_wrapped_envs(case: Case) -> None:
    env = TimeLimit(case.make(), max_episode_steps=100)
    env.reset(seed=0)
    direct = case.renderer().render(env.unwrapped)
    np.testing.assert_array_equal(case.renderer().render(env), direct)


def test_registered_envs_render_through_make() -> None:
    env = sekai.make("Trading-v0", episode_length=10, lookback=5)
    env.reset(seed=0)
    env.step(2)
    assert TradingRenderer().render(env).shape == (450, 720, 3)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_size_theme_and_window_options(case: Case) -> None:
    renderer = case.renderer(width=480, height=300, theme="dark", window=5)
    _, frame = _run(case, renderer, 8)
    assert frame.shape == (300, 480, 3)
    assert tuple(frame[1, 1]) == Theme.dark().background
    big = case.renderer(width=1440, height=900)
    _, frame = _run(case, big, 2)
    assert frame.shape == (900, 1440, 3)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_invalid_options_are_refused(case: Case) -> None:
    with pytest.raises(ValueError, match="theme"):
        case.renderer(theme="sepia")
    with pytest.raises(ValueError, match="width"):
        case.renderer(width=10)
    with pytest.raises(ValueError, match="window"):
        case.renderer(window=0)
    with pytest.raises(TypeError):
        case.renderer(720)  # every option is keyword-only


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_frame_sizes_are_checked_as_the_classic_renderers_check_theirs(case: Case) -> None:
    # a wrong type is a TypeError, a size below 64 a ValueError, both naming the renderer
    name = case.renderer.__name__
    for option, value, kind in [("width", 100.0, "float"), ("height", True, "bool")]:
        with pytest.raises(TypeError) as info:
            case.renderer(**{option: value})
        assert str(info.value) == f"{name}: {option} must be an int, got {kind}."
    with pytest.raises(ValueError) as value_info:
        case.renderer(height=63)
    assert str(value_info.value) == f"{name}: height must be >= 64, got 63."
    renderer = case.renderer(width=np.int64(64), height=np.int32(64))
    assert (renderer.width, renderer.height) == (64, 64)
    assert type(renderer.width) is int and type(renderer.height) is int


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_wrong_arguments_are_refused_naming_the_renderer_called(case: Case) -> None:
    name = case.renderer.__name__
    options = "width=, height=, theme=, window="
    if case.renderer in (LimitOrderBookRenderer, LimitOrderBookMarketRenderer):
        options += ", levels="
    with pytest.raises(TypeError) as info:
        case.renderer(640)
    assert str(info.value) == (
        f"{name}() takes its options by keyword only, got 1 positional argument (640); "
        f"its options are {options}."
    )
    with pytest.raises(TypeError) as info:
        case.renderer(lvls=3)
    assert str(info.value) == (
        f"{name}() got an unexpected keyword argument 'lvls'; its options are {options}."
    )


class _TitledTrading(TradingRenderer):
    """A user's renderer with a positional parameter of its own, forwarding the options."""

    def __init__(self, caption: str, **options: Any) -> None:
        self.caption = caption
        super().__init__(**options)


class _PlainTrading(TradingRenderer):
    """A user's renderer without an __init__ of its own: the finance check still applies."""


def test_a_subclass_with_its_own_init_is_bound_by_its_own_signature() -> None:
    renderer = _TitledTrading("my run", width=360)
    assert (renderer.caption, renderer.width) == ("my run", 360)
    assert _TitledTrading(caption="x").caption == "x"
    with pytest.raises(TypeError, match="caption"):
        _TitledTrading()  # Python's own binding error
    with pytest.raises(TypeError, match="lvls"):
        _TitledTrading("x", lvls=3)  # refused by TradingRenderer's signature
    with pytest.raises(TypeError, match=r"^_PlainTrading\(\) takes its options by keyword only"):
        _PlainTrading(640)


@pytest.mark.parametrize("renderer", [LimitOrderBookRenderer, LimitOrderBookMarketRenderer])
def test_order_book_renderers_take_levels(renderer: type) -> None:
    assert renderer(levels=3).levels == 3
    assert renderer().levels == 8
    with pytest.raises(ValueError, match="levels"):
        renderer(levels=0)


@pytest.mark.parametrize("renderer", [LimitOrderBookRenderer, LimitOrderBookMarketRenderer])
def test_order_book_renderers_show_levels_in_their_repr(renderer: type) -> None:
    expected = f"{renderer.__name__}(width=480, height=300, window=5, levels=3)"
    assert repr(renderer(width=480, height=300, window=5, levels=3)) == expected


def _downsample(frame: np.ndarray, factor: int = 4) -> np.ndarray:
    h, w = frame.shape[0] // factor * factor, frame.shape[1] // factor * factor
    blocks = frame[:h, :w].reshape(h // factor, factor, w // factor, factor, 3)
    small: np.ndarray = blocks.astype(np.float64).mean(axis=(1, 3)).round().astype(np.uint8)
    return small


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_known_episode_draws_its_golden_image(case: Case) -> None:
    _, frame = _run(case, case.renderer(), 25, seed=1)
    small = _downsample(frame)
    path = GOLDENS / f"{case.name}.npz"
    if os.environ.get("SEKAI_UPDATE_GOLDENS") == "1":
        GOLDENS.mkdir(exist_ok=True)
        np.savez_compressed(path, image=small)
    golden = np.load(path)["image"]
    assert golden.shape == small.shape
    diff = np.abs(golden.astype(np.int16) - small.astype(np.int16))
    # Tolerant of rounding (anti-aliasing may differ in the last bit across numpy versions),
    # not of content: one step more or less, a moved marker or a new label all fail.
    assert diff.mean() < 0.5, f"mean difference {diff.mean():.2f} from {path.name}"
    assert (diff.max(axis=2) > 24).mean() < 0.002, f"too many pixels differ from {path.name}"


def _near(frame: np.ndarray, color: Any, tol: int = 6) -> np.ndarray:
    close: np.ndarray = np.all(np.abs(frame.astype(np.int16) - np.asarray(color)) <= tol, axis=2)
    return close


def test_trading_shades_long_and_short_positions_in_their_colours() -> None:
    theme = Theme.light()
    env = TradingEnv(episode_length=30, lookback=5)
    renderer = TradingRenderer()
    env.reset(seed=0)
    renderer.render(env)
    long_shade = np.asarray(theme.background) + (np.asarray(theme.up) - theme.background) * 0.22
    short_shade = np.asarray(theme.background) + (np.asarray(theme.down) - theme.background) * 0.22
    price_area = slice(90, 280)  # the price plot (not its legend, not the equity chart)
    for _ in range(10):
        env.step(2)
        frame = renderer.render(env)[price_area]
    assert _near(frame, long_shade.round()).sum() > 2000
    assert _near(frame, short_shade.round()).sum() == 0
    for _ in range(10):
        env.step(0)
        frame = renderer.render(env)[price_area]
    assert _near(frame, short_shade.round()).sum() > 2000


def test_trading_marks_each_decided_trade_with_a_triangle() -> None:
    env = TradingEnv(episode_length=30, lookback=5)
    renderer = TradingRenderer()
    env.reset(seed=0)
    renderer.render(env)
    up = Theme.light().up
    env.step(1)  # stay flat: no trade, no marker
    flat = _near(renderer.render(env), up, tol=0)[60:280].sum()
    env.step(2)  # buy
    bought = _near(renderer.render(env), up, tol=0)[60:280].sum()
    assert bought > flat + 20


def test_order_book_highlights_the_agents_resting_orders() -> None:
    env = LimitOrderBookEnv(session_length=20.0)
    renderer = LimitOrderBookRenderer()
    env.reset(seed=0)
    renderer.render(env)
    accent = Theme.light().accent
    env.step(np.array([0, 0, 1]))  # no quotes
    without = _near(renderer.render(env), accent, tol=0)[:, 480:].sum()
    env.step(np.array([3, 3, 1]))  # quote both sides two ticks behind the best prices
    with_quotes = _near(renderer.render(env), accent, tol=0)[:, 480:].sum()
    assert env.book.n_orders_of(env.trader.owner) >= 1
    assert with_quotes > without + 40


def test_optimal_execution_plan_is_drawn_from_the_first_frame() -> None:
    env = OptimalExecutionEnv(n_steps=10)
    env.reset(seed=0)
    frame = OptimalExecutionRenderer().render(env)
    muted = Theme.light().muted
    # The dashed Almgren-Chriss plan spans the inventory chart before any trade.
    assert _near(frame[70:260, :360], muted, tol=10).sum() > 300


def _as_policy(env: Any, k: int) -> Any:
    return env.avellaneda_stoikov_action()


@pytest.mark.parametrize(
    ("make", "renderer", "policy", "label"),
    [
        (lambda: MarketMakingEnv(n_steps=4), MarketMakingRenderer, _as_policy, "Time left"),
        (
            lambda: LimitOrderBookEnv(session_length=4.0),
            LimitOrderBookRenderer,
            _lob_policy,
            "Session left",
        ),
    ],
    ids=["market_making", "lob"],
)
def test_the_time_left_card_counts_the_steps_still_to_come(
    make: Callable[[], Any], renderer: type, policy: Callable[[Any, int], Any], label: str
) -> None:
    # As the observation's time-left feature: (n_steps - elapsed) / n_steps.
    env, cards = make(), renderer()
    env.reset(seed=0)
    shown = []
    for k in range(4):
        shown.append({stat.label: stat.value for stat in cards.stats(env)}[label])
        env.step(policy(env, k))
    assert shown == ["100%", "75%", "50%", "25%"]


def test_the_session_left_card_is_the_share_of_the_session_length_with_a_short_last_step() -> None:
    env, cards = (
        LimitOrderBookEnv(session_length=10.0, decision_interval=3.0),
        LimitOrderBookRenderer(),
    )
    env.reset(seed=0)
    shown = [{s.label: s.value for s in cards.stats(env)}["Session left"]]
    for _ in range(env.n_steps):
        env.step(np.array([0, 0, 1]))
        shown.append({s.label: s.value for s in cards.stats(env)}["Session left"])
    assert shown == ["100%", "70%", "40%", "10%", "0%"]


@pytest.mark.parametrize("traders", [4, 12])
def test_the_market_ladder_keeps_its_depth_bars_with_many_traders(traders: int) -> None:
    theme = Theme.light()
    env, renderer = LimitOrderBookMarket(traders), LimitOrderBookMarketRenderer()
    env.reset(seed=0)
    renderer.render(env)
    for i, agent in enumerate(env.agents):
        env.action_space(agent).seed(i)
    colors = [np.asarray(mix(theme.background, side, 0.35)) for side in (theme.up, theme.down)]
    longest = []  # per frame, the longest depth bar of each side, in pixels
    for _ in range(60):
        env.step({a: env.action_space(a).sample() for a in env.agents})
        ladder = renderer.render(env)[:, 470:].astype(np.int16)  # right of the charts
        longest.append([(np.abs(ladder - c).sum(axis=2) < 6).sum(axis=1).max() for c in colors])
    bars = np.array(longest)
    # the biggest level's bar spans the room the labels leave, a third of the ladder at least
    assert (bars.max(axis=1) > 30).all()
    assert (bars > 0).any(axis=0).all()  # both sides show bars


def test_the_market_says_when_trader_colours_repeat() -> None:
    titles = []
    for traders in (30, 31):
        env, renderer = LimitOrderBookMarket(traders), LimitOrderBookMarketRenderer()
        env.reset(seed=0)
        renderer.render(env)
        titles.append([getattr(chart, "title", "") for chart in renderer.charts])
    assert "Inventory" in titles[0] and "Inventory (colours repeat)" in titles[1]


def test_the_dashboards_trackers_compare_step_1_with_the_episode_start_unrendered() -> None:
    # A dashboard drawn after each step() only: step 1's trade is known from the start state.
    lob = LimitOrderBookEnv(session_length=20.0)
    lob.reset(seed=0)
    lob.step(np.array([1, 1, 2]))  # a market buy
    assert lob.inventory == 1
    assert NetFills().bought(lob) == pytest.approx(-lob.cash)
    execution = OptimalExecutionEnv(n_steps=10)
    execution.reset(seed=0)
    execution.step(np.array([0.3]))
    tracker = ExecutionTracker()
    assert tracker.sold(execution) == pytest.approx(execution.X0 - execution.inventory)
    assert tracker.price(execution) is not None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_renderer_is_freed_when_dropped_without_the_cycle_collector(case: Case) -> None:
    renderer = case.renderer(width=240, height=160)
    _run(case, renderer, 3)
    renderer.close()
    dropped = weakref.ref(renderer)
    gc.disable()  # reference counting alone: a renderer holding its own method is a cycle
    try:
        del renderer
        assert dropped() is None
    finally:
        gc.enable()


# -- dated, named data: the subtitle, the asset names and the date ------------------------------

ROWS = 80
DAYS = np.busday_offset("2021-01-04", np.arange(ROWS), roll="forward")  # 2021-01-04 .. 2021-04-23


def _panel() -> np.ndarray:
    prices = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (ROWS, 4)), axis=0))
    prices[:30, 3] = np.nan  # NEW lists at row 30
    return prices


def dated_data() -> MarketData:
    return MarketData(_panel(), timestamps=DAYS, assets=["AAPL", "MSFT", "GOOG", "NEW"])


def test_the_market_renderer_draws_dated_named_data_with_a_late_listing() -> None:
    env = MarketEnv(dated_data(), max_assets=3, lookback=5, episode_length=40, sampler=10)
    renderer = MarketRenderer()
    env.reset(seed=0)
    first = renderer.render(env)
    for _ in range(40):
        env.step(np.ones(4, np.float32))
    frame = renderer.render(env)
    assert frame.shape == (450, 720, 3) and frame.dtype == np.uint8
    assert not np.array_equal(frame, first)
    assert [stat.value for stat in renderer.stats(env)][-1] == "2021-03-22"  # the "Date" card


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.datetime64("2021-03-22"), "2021-03-22"),
        (np.datetime64("2021-03-22T14:30:15"), "2021-03-22 14:30"),
        (2.5, "2.5"),
        (0.0, "0"),
        (7, "7"),
    ],
)
def test_format_time_writes_dates_as_days_and_numbers_plainly(value: Any, text: str) -> None:
    assert format_time(value) == text


def test_the_subtitle_and_names_come_from_the_data_or_the_model() -> None:
    named = MarketEnv(dated_data(), max_assets=5, lookback=5, episode_length=40, sampler=10)
    named.reset(seed=0)
    subtitle = "AAPL, MSFT, GOOG +1 more: history 2021-01-04 to 2021-04-23 (80 rows)"
    assert describe_market(named, builtin="GBM") == subtitle
    assert asset_names(named, 2) == ["AAPL", "MSFT"]
    assert slot_labels(named) == ["AAPL", "MSFT", "GOOG", "NEW", None]  # the fifth slot empty
    one = TradingEnv(data=dated_data().select(["AAPL"]), lookback=5, episode_length=10)
    assert describe_market(one, builtin="GBM") == "AAPL: history 2021-01-04 to 2021-04-23 (80 rows)"
    plain = MarketEnv(MarketData(_panel()[:, :3]), lookback=5, episode_length=10)
    assert describe_market(plain, builtin="GBM") == "3 assets: history 0 to 79 (80 rows)"
    assert asset_names(plain, 3) == ["Asset 0", "Asset 1", "Asset 2"]
    simulated = MarketEnv(model=sekai.finance.GBM(n_assets=3), lookback=5, episode_length=10)
    simulated.reset(seed=0)
    assert describe_market(simulated, builtin="GBM") == "Simulated market: GBM"
    assert asset_names(simulated, 2) == ["Asset 0", "Asset 1"]
    assert slot_labels(simulated) == ["Asset 0", "Asset 1", "Asset 2"]
    assert describe_market(TradingEnv(), builtin="built-in GBM") == "built-in GBM"


def _cards(renderer: Any, env: Any) -> dict[str, Any]:
    return {stat.label: stat for stat in renderer.stats(env)}


def test_the_market_making_pnl_card_is_toned_by_the_sign_of_the_wealth() -> None:
    env, renderer = MarketMakingEnv(n_steps=50), MarketMakingRenderer()
    env.reset(seed=0)
    env.action_space.seed(0)  # random quotes: this session's wealth goes both ways
    assert _cards(renderer, env)["P&L"].tone is None  # nothing made or lost yet
    tones = set()
    for _ in range(50):
        env.step(env.action_space.sample())
        wealth = float(env.wealth)
        if wealth:
            tones.add((wealth > 0, _cards(renderer, env)["P&L"].tone))
    assert {gain for gain, _ in tones} == {True, False}
    assert all(tone == ("up" if gain else "down") for gain, tone in tones)


def test_the_execution_cards_give_the_share_sold_and_the_shortfall_in_basis_points() -> None:
    env, renderer = OptimalExecutionEnv(n_steps=10), OptimalExecutionRenderer()
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.array([0.3]))
    cards = _cards(renderer, env)
    sold = 1.0 - float(env.inventory) / float(env.X0)
    assert 0.0 < sold < 1.0
    assert cards["Sold"].value == f"{sold * 100:.1f}%"
    bps = 1e4 * float(env.shortfall) / (float(env.X0) * float(env.s0))
    assert cards["Shortfall"].value == f"{bps:.1f} bp"


def test_the_order_book_cards_show_the_books_spread_and_the_number_of_traders() -> None:
    env, renderer = LimitOrderBookEnv(session_length=20.0), LimitOrderBookRenderer()
    env.reset(seed=0)
    spread = env.book.spread()
    assert spread is not None
    assert _cards(renderer, env)["Spread"].value == str(int(spread))
    market = LimitOrderBookMarket()
    market.reset(seed=0)
    traders = _cards(LimitOrderBookMarketRenderer(), market)["Traders"].value
    assert traders == str(len(market.possible_agents))


def test_the_market_cards_count_gross_exposure_both_ways_and_tradable_assets() -> None:
    renderer = MarketRenderer()
    env = MarketEnv(episode_length=20, lookback=5, allow_short=True)
    env.reset(seed=0)
    slots = np.flatnonzero(env.action_mask()[: env.max_assets])
    action = np.zeros(int(env.max_assets))
    action[slots[0]], action[slots[1]] = -0.6, 0.3
    env.step(action)
    weights = np.asarray(env.weights)
    assert weights.min() < 0 < weights.max()
    cards = _cards(renderer, env)
    assert cards["Gross"].value == f"{np.abs(weights).sum() * 100:.1f}%"
    assert cards["Tradable"].value == f"{len(slots)} assets"
    single = MarketEnv(episode_length=20, lookback=5, max_assets=1)
    single.reset(seed=0)
    assert _cards(renderer, single)["Tradable"].value == "1 asset"
