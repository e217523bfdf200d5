"""The finance text renderers: one line per step, a header per episode, exact rewards."""

from __future__ import annotations

from typing import Any

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
    LimitOrderBookMarketTextRenderer,
    LimitOrderBookTextRenderer,
    MarketMakingTextRenderer,
    MarketTextRenderer,
    OptimalExecutionTextRenderer,
    PortfolioTextRenderer,
    TradingTextRenderer,
)
from sekai.envs.finance.trading import TradingEnv
from sekai.finance.data import MarketData
from sekai.finance.lob import StaticFlow
from sekai.finance.rewards import SimpleReturn
from sekai.rendering import RENDER_BEFORE_RESET, Renderer

SINGLE = [
    (lambda: TradingEnv(episode_length=20, lookback=5), TradingTextRenderer, lambda e, k: 2),
    (
        lambda: PortfolioEnv(n_assets=2, episode_length=20, lookback=5),
        PortfolioTextRenderer,
        lambda e, k: np.array([0.5, 0.3, 0.2]),
    ),
    (
        lambda: MarketMakingEnv(n_steps=20),
        MarketMakingTextRenderer,
        lambda e, k: e.avellaneda_stoikov_action(),
    ),
    (
        lambda: OptimalExecutionEnv(n_steps=10),
        OptimalExecutionTextRenderer,
        lambda e, k: np.array([0.3]),
    ),
    (
        lambda: MarketEnv(episode_length=20, lookback=5),
        MarketTextRenderer,
        lambda e, k: np.full(e.action_space.shape, 0.5),
    ),
    (
        lambda: LimitOrderBookEnv(session_length=20.0),
        LimitOrderBookTextRenderer,
        lambda e, k: np.array([1, 1, 2 if k % 5 == 2 else 1]),
    ),
]
IDS = ["trading", "portfolio", "market_making", "optimal_execution", "market", "lob"]


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_a_header_at_reset_then_one_aligned_line_per_step(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    env, renderer = make(), renderer_cls()
    assert isinstance(renderer_cls(), Renderer)
    env.reset(seed=0)
    first = renderer.render(env)
    title, header, row = first.split("\n")
    assert title == renderer_cls.env_title
    assert len(header) == len(row) and row.split()[0] == "0"
    for k in range(3):
        env.step(policy(env, k))
        line = renderer.render(env)
        assert "\n" not in line and len(line) == len(header)
        assert line.split()[0] == str(k + 1)
    env.reset(seed=1)
    assert renderer.render(env).count("\n") == 2  # a new episode gets a new header


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_text_renderers_refuse_unreset_and_other_envs(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    with pytest.raises(sekai.ResetRequired) as info:
        renderer_cls().render(make())
    assert str(info.value) == RENDER_BEFORE_RESET
    other: Any = (
        TradingEnv() if renderer_cls is OptimalExecutionTextRenderer else OptimalExecutionEnv()
    )
    other.reset(seed=0)
    with pytest.raises(TypeError, match=f"^{renderer_cls.__name__} draws "):
        renderer_cls().render(other)


@pytest.mark.parametrize(
    ("make", "renderer_cls", "policy", "decimals"),
    [
        (*SINGLE[0], 5),
        (*SINGLE[1], 5),
        (*SINGLE[2], 4),
        (*SINGLE[3], 3),
        (*SINGLE[4], 5),
        (*SINGLE[5], 3),
    ],
    ids=IDS,
)
def test_the_reward_column_is_the_envs_reward(
    make: Any, renderer_cls: Any, policy: Any, decimals: int
) -> None:
    env, renderer = make(), renderer_cls()
    env.reset(seed=0)
    renderer.render(env)
    for k in range(8):
        result = env.step(policy(env, k))
        shown = float(renderer.render(env).split()[-1])
        assert shown == pytest.approx(result.reward, abs=0.6 * 10.0**-decimals)
        if result.terminated or result.truncated:
            break


def test_the_lob_reward_column_includes_the_terminal_penalty_on_the_last_step() -> None:
    env = LimitOrderBookEnv(session_length=3.0, terminal_penalty=2.0, flow=StaticFlow())
    renderer = LimitOrderBookTextRenderer()
    env.reset(seed=0)
    renderer.render(env)
    for _ in range(3):
        wealth = env.wealth
        result = env.step(np.array([0, 0, 2]))  # a market buy each step
        assert float(renderer.render(env).split()[-1]) == pytest.approx(result.reward, abs=6e-4)
    # inventory 3 at the end: the last reward carries 2.0 * 3**2 = 18 of terminal penalty
    running = 0.01 * 3**2 * 1.0
    assert result.terminated and env.inventory == 3
    assert result.reward == pytest.approx(result.info["wealth"] - wealth - running - 18.0)


def test_the_market_making_reward_column_includes_the_terminal_penalty_on_the_last_step():
    env = MarketMakingEnv(n_steps=5, terminal_penalty=0.5)
    renderer = MarketMakingTextRenderer()
    result: Any = env.reset(seed=1)
    renderer.render(env)
    while not result.done:
        wealth = env.wealth
        result = env.step(np.array([0.0, 5.0], np.float32))  # a tight bid, a far ask: inventory
        shown = renderer.render(env).splitlines()[-1].split()[-1]
        assert shown == f"{result.reward:+.4f}"
    q = env.inventory
    assert q != 0
    running = 0.5 * env.risk_aversion * env.sigma**2 * env.dt * q * q
    assert result.reward == pytest.approx(env.wealth - wealth - running - 0.5 * q * q)


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_a_step_whose_previous_step_was_not_rendered_shows_no_reward(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    # e.g. RecordFrames with enabled switched off for a while: the change since the last
    # rendered step is not the step's reward.
    env, renderer = make(), renderer_cls()
    env.reset(seed=0)
    renderer.render(env)
    for k in range(4):
        env.step(policy(env, k))
    cells = renderer.render(env).split()
    assert cells[0] == "4" and cells[-1] == "-"
    result = env.step(policy(env, 4))  # rendered after its previous step: exact again
    assert float(renderer.render(env).split()[-1]) == pytest.approx(result.reward, abs=1e-3)


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_the_first_step_is_compared_with_the_episode_start_when_only_steps_are_rendered(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    # render_mode="ansi" with env.render() after each step(): the reset is never rendered, but
    # the env's start values are known, so step 1 shows its reward in every episode.
    env, renderer = make(), renderer_cls()
    for seed in (0, 1):
        env.reset(seed=seed)
        for k in range(2):
            result = env.step(policy(env, k))
            line = renderer.render(env).split("\n")[-1]
            assert line.split()[0] == str(k + 1)
            assert float(line.split()[-1]) == pytest.approx(result.reward, abs=1e-3)
            assert renderer.render(env).split("\n")[-1] == line  # rendered twice: the same


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_a_reset_that_was_not_rendered_starts_a_new_episode_with_its_header(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    env, renderer = make(), renderer_cls()
    env.reset(seed=0)
    renderer.render(env)
    env.step(policy(env, 0))
    renderer.render(env)
    env.reset(seed=1)  # not rendered: then more steps than episode A had when last rendered
    for k in range(3):
        env.step(policy(env, k))
    title, header, row = renderer.render(env).split("\n")
    assert title == renderer_cls.env_title and header.split()[0] == "step"
    assert row.split()[0] == "3" and row.split()[-1] == "-"  # not compared with episode A


@pytest.mark.parametrize(("make", "renderer_cls", "policy"), SINGLE, ids=IDS)
def test_rendering_a_step_twice_draws_the_same_line(make: Any, renderer_cls: Any, policy: Any):
    # e.g. RecordFrames records the line and the user prints env.render() as well
    env, renderer = make(), renderer_cls()
    env.reset(seed=0)
    renderer.render(env)
    for k in range(4):
        env.step(policy(env, k))
        assert renderer.render(env) == renderer.render(env)


@pytest.mark.parametrize(
    "renderer_cls", [*(case[1] for case in SINGLE), LimitOrderBookMarketTextRenderer]
)
def test_text_renderers_take_no_arguments_and_say_so_naming_themselves(renderer_cls: Any) -> None:
    name = renderer_cls.__name__
    with pytest.raises(TypeError) as info:
        renderer_cls(theme="dark")
    assert str(info.value) == (
        f"{name}() got an unexpected keyword argument 'theme'; it takes no options."
    )
    with pytest.raises(TypeError) as info:
        renderer_cls(80)
    assert str(info.value) == f"{name}() takes no arguments, got 1 positional argument (80)."


class _DigitsText(TradingTextRenderer):
    """A user's text renderer with a positional-or-keyword parameter of its own."""

    def __init__(self, digits: int = 4) -> None:
        super().__init__()
        self.digits = digits


def test_a_text_renderer_subclass_with_its_own_init_takes_its_own_arguments() -> None:
    assert _DigitsText(2).digits == _DigitsText(digits=2).digits == 2
    with pytest.raises(TypeError, match="width"):
        _DigitsText(width=3)  # Python's own binding error
    env = TradingEnv(episode_length=10, lookback=5)
    env.reset(seed=0)
    assert _DigitsText(2).render(env) == TradingTextRenderer().render(env)


def test_the_reward_column_is_headed_log_ret_for_another_reward_function() -> None:
    env = TradingEnv(episode_length=10, lookback=5, reward=SimpleReturn())
    env.reset(seed=0)
    header = TradingTextRenderer().render(env).split("\n")[1]
    assert header.split()[-1] == "ret" and "log ret" in header
    default = TradingEnv(episode_length=10, lookback=5)
    default.reset(seed=0)
    assert TradingTextRenderer().render(default).split("\n")[1].split()[-1] == "reward"


@pytest.mark.parametrize(
    ("make", "renderer_cls", "policy"),
    [
        (
            lambda: TradingEnv(episode_length=20, lookback=5, reward=SimpleReturn()),
            TradingTextRenderer,
            lambda e, k: (2, 0, 1)[k % 3],
        ),
        (
            lambda: PortfolioEnv(n_assets=2, episode_length=20, lookback=5, reward=SimpleReturn()),
            PortfolioTextRenderer,
            lambda e, k: np.roll(np.array([0.6, 0.3, 0.1]), k),
        ),
        (
            lambda: MarketEnv(episode_length=20, lookback=5, reward=SimpleReturn()),
            MarketTextRenderer,
            lambda e, k: np.full(e.action_space.shape, 0.3 * (k % 3)),
        ),
    ],
    ids=["trading", "portfolio", "market"],
)
def test_growth_columns_show_the_simple_return_and_log_growth_with_another_reward(
    make: Any, renderer_cls: Any, policy: Any
) -> None:
    env, renderer = make(), renderer_cls()
    env.reset(seed=0)
    header = renderer.render(env).split("\n")[1]
    assert header.split()[-3:] == ["return", "log", "ret"]
    for k in range(6):
        result = env.step(policy(env, k))
        simple, log = renderer.render(env).replace("−", "-").split()[-2:]
        assert float(simple.rstrip("%")) / 100 == pytest.approx(result.reward, abs=6e-5)
        assert float(log) == pytest.approx(np.log1p(result.reward), abs=6e-6)
    env.reset(seed=1)
    assert renderer.render(env).split()[-2:] == ["-", "-"]  # a new episode starts again from 1


DAYS = np.busday_offset("2021-01-04", np.arange(80), roll="forward")


def test_lines_over_dated_data_show_the_decision_date() -> None:
    prices = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (80, 2)), axis=0))
    data = MarketData(prices, timestamps=DAYS, assets=["AAPL", "MSFT"])
    market = MarketEnv(data, lookback=5, episode_length=40, sampler=10)
    trading = TradingEnv(data=data.select(["AAPL"]), lookback=5, episode_length=10, sampler=0)
    for env, renderer, action in (
        (market, MarketTextRenderer(), np.ones(3, np.float32)),
        (trading, TradingTextRenderer(), 2),
    ):
        start = 10 if env is market else 0
        env.reset(seed=0)
        assert renderer.render(env).splitlines()[-1].split()[:2] == ["0", str(DAYS[start + 5])]
        for step in range(1, 4):
            env.step(action)
            line = renderer.render(env).splitlines()[-1]
            assert line.split()[:2] == [str(step), str(DAYS[start + 5 + step])]


def test_trading_lines_read_like_a_blotter() -> None:
    env = TradingEnv(episode_length=10, lookback=5)
    renderer = TradingTextRenderer()
    env.reset(seed=0)
    first = renderer.render(env).split("\n")
    assert first[1].split() == [
        "step", "time", "price", "position", "equity", "return", "reward",
    ]  # fmt: skip
    assert first[2].split()[3:6] == ["Flat", "1.0000", "-"]
    env.step(2)
    cells = renderer.render(env).split()
    assert cells[3:5] == ["Long", "1.00"]


def test_lob_market_lines_show_every_trader() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 2.0], session_length=10.0)
    renderer = LimitOrderBookMarketTextRenderer()
    with pytest.raises(sekai.ResetRequired):
        renderer.render(env)
    env.reset(seed=0)
    _, header, row = renderer.render(env).split("\n")
    assert "trader_0 q/wealth" in header and "trader_1 q/wealth" in header
    assert row.split()[4] == "0,1"  # both traders act at the start
    env.step({a: np.array([1, 1, 1]) for a in env.acting})
    line = renderer.render(env)
    assert "\n" not in line and line.split()[0] == "1" and line.split()[4] == "0"


@pytest.mark.parametrize("n_agents", [1, 2, 8, 12])
def test_lob_market_columns_stay_under_their_headers_for_any_number_of_traders(
    n_agents: int,
) -> None:
    # Before: from 7 traders the acting cell overflowed its column and shifted every later one
    env = LimitOrderBookMarket(n_agents, session_length=5.0)
    renderer = LimitOrderBookMarketTextRenderer()
    env.reset(seed=0)
    _, header, row = renderer.render(env).split("\n")
    lines = [row]
    for _ in range(3):  # every trader acts at every step
        env.step(dict.fromkeys(env.acting, np.array([1, 1, 1])))
        lines.append(renderer.render(env))
    names = header.split()
    ends = [header.index(n) + len(n) for n in ("acting", "rewards")]
    for line in lines:
        assert len(line) == len(header)
        for end in ends:  # right-aligned: a cell ends where its header ends
            assert line[end - 1] != " " and line[end : end + 2] in ("  ", "")
    assert names[4] == "acting" and names[-1] == "rewards"
    assert lines[1].split()[4] == ",".join(str(i) for i in range(n_agents))


def test_lob_market_rewards_column_is_every_traders_reward_of_the_step() -> None:
    # Before: the lines had no reward
    env = LimitOrderBookMarket(
        2,
        decision_intervals=[1.0, 2.0],
        session_length=3.0,
        flow=StaticFlow(),
        inventory_penalty=0.5,
        terminal_penalty=2.0,
    )
    renderer = LimitOrderBookMarketTextRenderer()
    env.reset(seed=0)
    assert renderer.render(env).split()[-1] == "-"  # nothing to compare with at the start
    buy, sell = np.array([0, 0, 2]), np.array([0, 0, 0])
    while env.agents:
        result = env.step({a: buy if a == "trader_0" else sell for a in env.acting})
        shown = [float(r) for r in renderer.render(env).split()[-1].split(",")]
        assert shown == pytest.approx([result.rewards[a] for a in env.possible_agents], abs=6e-4)
    # the last step, shown too, carries the terminal penalty of lots held by both traders
    assert all(result.terminated.values())
    assert (env.inventory("trader_0"), env.inventory("trader_1")) == (3, -2)


def test_lob_market_rewards_need_the_previous_step_rendered() -> None:
    env = LimitOrderBookMarket(2, session_length=10.0)
    renderer = LimitOrderBookMarketTextRenderer()
    env.reset(seed=0)
    renderer.render(env)
    for _ in range(2):
        env.step(dict.fromkeys(env.acting, np.array([1, 1, 1])))
    assert renderer.render(env).split()[-1] == "-"  # step 1 was not rendered
    result = env.step(dict.fromkeys(env.acting, np.array([1, 1, 1])))
    shown = [float(r) for r in renderer.render(env).split()[-1].split(",")]
    assert shown == pytest.approx(list(result.rewards.values()), abs=6e-4)


def test_text_renderers_declare_ansi_frames_to_gymnasium() -> None:
    from sekai.compat import to_gymnasium
    from sekai.envs.finance.rendering import PortfolioRenderer

    text = to_gymnasium(sekai.make("Trading-v0"), renderer=TradingTextRenderer())
    assert text.render_mode == "ansi" and text.metadata["render_modes"] == ["ansi"]
    text.reset(seed=0)
    assert text.render().startswith("Trading-v0\n")
    image = to_gymnasium(sekai.make("Portfolio-v0"), renderer=PortfolioRenderer())
    assert image.render_mode == "rgb_array"
    with pytest.raises(ValueError, match="renders 'ansi' frames"):
        to_gymnasium(
            sekai.make("Trading-v0"), renderer=TradingTextRenderer(), render_mode="rgb_array"
        )


def test_the_portfolio_line_names_the_largest_weight_short_or_long() -> None:
    env = PortfolioEnv(n_assets=2, episode_length=20, lookback=5, allow_short=True)
    renderer = PortfolioTextRenderer()
    env.reset(seed=0)
    env.step(np.array([-0.8, 0.1]))
    line = renderer.render(env).splitlines()[-1]
    assert "Asset 0 −" in line and "Asset 1" not in line


def test_signed_numbers_mark_gains_with_a_plus_and_leave_zero_bare() -> None:
    from sekai.envs.finance.rendering._base import signed

    assert signed(1.5) == "+1.500"
    assert signed(-1.5) == "−1.500"
    assert signed(0.0) == "0"
