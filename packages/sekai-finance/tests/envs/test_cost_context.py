"""The context Trading-v0, Portfolio-v0 and Market-v0 pass to a cost model (finance.md §6, §6.1).

``equity`` is ``capital × equity``, ``volatility`` the per-asset ``np.std`` (ddof 0) of the
lookback log returns observed at the decision, ``volume`` the data's ``volume`` field times the
decision-row price, ``spread`` the data's ``spread`` field at the decision row; only the inputs a
model ``requires`` are computed. A model needing an input the env can never supply is refused
when the env is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.market import MarketEnv
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.finance import (
    CostModel,
    FixedCost,
    MarketData,
    ProportionalCost,
    SpreadCost,
    SquareRootImpact,
)

ALL_INPUTS = ("equity", "volatility", "volume", "spread")

ROWS, N = 40, 3
_rng = np.random.default_rng(42)
PRICES = 100 * np.exp(np.cumsum(_rng.normal(0.0, 0.02, (ROWS, N)), axis=0))
VOLUME = _rng.uniform(1e3, 5e4, (ROWS, N)).round()  # shares per step
SPREAD = _rng.uniform(1e-4, 3e-3, (ROWS, N))  # quoted full spread, fraction of price
LOOKBACK, LENGTH, CAPITAL = 5, 6, 250_000.0


class Recorder(CostModel):
    """Charges ``rate × Σ|trade|`` and records the trades and context of every call."""

    def __init__(self, requires: tuple[str, ...] = ALL_INPUTS, rate: float = 0.0) -> None:
        self.requires = frozenset(requires)
        self.rate = rate
        self.calls: list[dict[str, np.ndarray]] = []

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        record = {name: np.array(value, dtype=np.float64) for name, value in context.items()}
        record["trades"] = trades.copy()
        self.calls.append(record)
        return self.rate * np.abs(trades).sum(axis=-1)


def trading_data() -> MarketData:
    return MarketData(PRICES[:, :1], fields={"volume": VOLUME[:, :1], "spread": SPREAD[:, :1]})


def portfolio_data() -> MarketData:
    return MarketData(PRICES, fields={"volume": VOLUME, "spread": SPREAD})


def volatility_at(row: int, columns: slice = slice(None)) -> np.ndarray:
    """Population std of the ``LOOKBACK`` log returns ending at ``row`` (hand computation)."""
    prices = PRICES[row - LOOKBACK : row + 1, columns]
    returns = np.log(prices[1:] / prices[:-1])
    assert returns.shape[0] == LOOKBACK
    return np.std(returns, axis=0, ddof=0)


# -- reference accounting (finance.md §12.1 / §12.2 step formulas) ---------------------------------


def trading_reference(start: int, actions: list[int], rate: float) -> list[tuple[float, float]]:
    """``(equity before the step, trade)`` of every step of a Trading-v0 episode."""
    positions = (-1.0, 0.0, 1.0)
    equity, position, out = 1.0, 0.0, []
    for k, action in enumerate(actions):
        i = start + k
        w = positions[action]
        trade = w - position
        out.append((equity, trade))
        cost = rate * abs(trade)
        r = PRICES[i + 1, 0] / PRICES[i, 0] - 1.0
        held = 1.0 + w * r
        growth = (1.0 - cost) * held
        position = w * (1.0 + r) / held
        equity *= growth
    return out


def portfolio_reference(
    start: int, scores: list[np.ndarray], rate: float
) -> list[tuple[float, np.ndarray]]:
    """``(equity before the step, trades)`` of every step of a Portfolio-v0 episode."""
    equity, weights, out = 1.0, np.r_[np.zeros(N), 1.0], []
    for k, score in enumerate(scores):
        i = start + k
        score = np.asarray(score, np.float64)
        target = score / score.sum()
        trades = target[:-1] - weights[:-1]
        out.append((equity, trades))
        cost = rate * np.abs(trades).sum()
        r = PRICES[i + 1] / PRICES[i] - 1.0
        growth = (1.0 - cost) * (1.0 + target[:-1] @ r)
        grown = target * np.r_[1.0 + r, 1.0]
        weights = grown / grown.sum()
        equity *= growth
    return out


TRADING_ACTIONS = [2, 2, 0, 1, 0, 2]
PORTFOLIO_SCORES = [
    np.array([0.5, 0.3, 0.2, 0.0]),
    np.array([0.5, 0.3, 0.2, 0.0]),
    np.array([0.1, 0.1, 0.6, 0.2]),
    np.array([0.0, 0.0, 0.0, 1.0]),
    np.array([1.0, 1.0, 1.0, 1.0]),
    np.array([0.0, 0.7, 0.3, 0.0]),
]


# -- Trading-v0 ------------------------------------------------------------------------------------


def test_trading_single_env_context():
    recorder = Recorder(rate=0.01)
    env = TradingEnv(
        data=trading_data(),
        lookback=LOOKBACK,
        episode_length=LENGTH,
        transaction_cost=recorder,
        capital=CAPITAL,
    )
    start = 12
    env.reset(options={"start": start})
    for action in TRADING_ACTIONS:
        env.step(action)
    calls = env.cost_model.calls
    assert len(calls) == LENGTH
    for k, (call, (equity, trade)) in enumerate(
        zip(calls, trading_reference(start, TRADING_ACTIONS, 0.01))
    ):
        row = start + k
        assert set(call) == {*ALL_INPUTS, "trades"}
        assert call["trades"] == pytest.approx([trade], abs=1e-15)
        assert call["equity"] == pytest.approx(CAPITAL * equity, rel=1e-12)
        assert call["volatility"].shape == (1,)
        assert call["volatility"] == pytest.approx(volatility_at(row, slice(0, 1)), rel=1e-12)
        assert call["volume"] == pytest.approx([VOLUME[row, 0] * PRICES[row, 0]], rel=1e-15)
        assert call["spread"] == pytest.approx([SPREAD[row, 0]], rel=1e-15)


def test_trading_native_context_per_sub_env():
    recorder = Recorder(rate=0.01)
    vec = TradingVecEnv(
        3,
        data=trading_data(),
        lookback=LOOKBACK,
        episode_length=LENGTH,
        transaction_cost=recorder,
        capital=CAPITAL,
    )
    starts = [5, 12, 20]
    per_env_actions = [TRADING_ACTIONS, [0, 0, 1, 2, 2, 1], [1, 2, 0, 0, 2, 2]]
    vec.reset(options=[{"start": s} for s in starts])
    for k in range(LENGTH):
        vec.step(np.array([actions[k] for actions in per_env_actions]))
    calls = vec.template.cost_model.calls
    assert len(calls) == LENGTH  # one batched call per step
    references = [trading_reference(s, a, 0.01) for s, a in zip(starts, per_env_actions)]
    for k, call in enumerate(calls):
        assert set(call) == {*ALL_INPUTS, "trades"}
        assert call["equity"].shape == (3,) and call["volatility"].shape == (3, 1)
        for j, start in enumerate(starts):
            row = start + k
            equity, trade = references[j][k]
            assert call["trades"][j] == pytest.approx([trade], abs=1e-15)
            assert call["equity"][j] == pytest.approx(CAPITAL * equity, rel=1e-12)
            assert call["volatility"][j] == pytest.approx(
                volatility_at(row, slice(0, 1)), rel=1e-12
            )
            assert call["volume"][j] == pytest.approx([VOLUME[row, 0] * PRICES[row, 0]], rel=1e-15)
            assert call["spread"][j] == pytest.approx([SPREAD[row, 0]], rel=1e-15)


# -- Portfolio-v0 ----------------------------------------------------------------------------------


def test_portfolio_single_env_context():
    recorder = Recorder(rate=0.002)
    env = PortfolioEnv(
        data=portfolio_data(),
        lookback=LOOKBACK,
        episode_length=LENGTH,
        transaction_cost=recorder,
        capital=CAPITAL,
    )
    start = 17
    env.reset(options={"start": start})
    for score in PORTFOLIO_SCORES:
        env.step(score.astype(np.float32))
    calls = env.cost_model.calls
    assert len(calls) == LENGTH
    reference = portfolio_reference(start, [s.astype(np.float32) for s in PORTFOLIO_SCORES], 0.002)
    for k, (call, (equity, trades)) in enumerate(zip(calls, reference)):
        row = start + k
        assert set(call) == {*ALL_INPUTS, "trades"}
        assert call["trades"] == pytest.approx(trades, abs=1e-12)
        assert call["equity"] == pytest.approx(CAPITAL * equity, rel=1e-12)
        assert call["volatility"].shape == (N,)
        assert call["volatility"] == pytest.approx(volatility_at(row), rel=1e-12)
        assert call["volume"] == pytest.approx(VOLUME[row] * PRICES[row], rel=1e-15)
        assert call["spread"] == pytest.approx(SPREAD[row], rel=1e-15)


def test_portfolio_native_context_per_sub_env():
    recorder = Recorder(rate=0.002)
    vec = PortfolioVecEnv(
        2,
        data=portfolio_data(),
        lookback=LOOKBACK,
        episode_length=LENGTH,
        transaction_cost=recorder,
        capital=CAPITAL,
    )
    starts = [9, 30]
    scores = [s.astype(np.float32) for s in PORTFOLIO_SCORES]
    other = scores[::-1]
    vec.reset(options=[{"start": s} for s in starts])
    for k in range(LENGTH):
        vec.step(np.stack([scores[k], other[k]]))
    calls = vec.template.cost_model.calls
    assert len(calls) == LENGTH
    references = [
        portfolio_reference(starts[0], scores, 0.002),
        portfolio_reference(starts[1], other, 0.002),
    ]
    for k, call in enumerate(calls):
        assert set(call) == {*ALL_INPUTS, "trades"}
        assert call["equity"].shape == (2,)
        for name in ("volatility", "volume", "spread", "trades"):
            assert call[name].shape == (2, N), name
        for j, start in enumerate(starts):
            row = start + k
            equity, trades = references[j][k]
            assert call["trades"][j] == pytest.approx(trades, abs=1e-12)
            assert call["equity"][j] == pytest.approx(CAPITAL * equity, rel=1e-12)
            assert call["volatility"][j] == pytest.approx(volatility_at(row), rel=1e-12)
            assert call["volume"][j] == pytest.approx(VOLUME[row] * PRICES[row], rel=1e-15)
            assert call["spread"][j] == pytest.approx(SPREAD[row], rel=1e-15)


# -- only what the model requires ------------------------------------------------------------------


@pytest.mark.parametrize("requires", [("equity",), ("spread",), ("volatility", "volume"), ()])
@pytest.mark.parametrize("kind", ["trading", "portfolio", "trading-native", "portfolio-native"])
def test_the_env_computes_only_what_the_model_requires(kind, requires):
    recorder = Recorder(requires)
    kwargs = {
        "lookback": LOOKBACK,
        "episode_length": LENGTH,
        "transaction_cost": recorder,
        "data": trading_data() if kind.startswith("trading") else portfolio_data(),
    }
    if kind == "trading":
        env = TradingEnv(**kwargs)
        env.reset(options={"start": 10})
        env.step(2)
    elif kind == "portfolio":
        env = PortfolioEnv(**kwargs)
        env.reset(options={"start": 10})
        env.step(np.ones(N + 1, np.float32))
    elif kind == "trading-native":
        env = TradingVecEnv(2, **kwargs)
        env.reset(options={"start": 10})
        env.step(np.array([2, 0]))
    else:
        env = PortfolioVecEnv(2, **kwargs)
        env.reset(options={"start": 10})
        env.step(np.ones((2, N + 1), np.float32))
    cost_model = env.template.cost_model if "native" in kind else env.cost_model
    assert [set(call) - {"trades"} for call in cost_model.calls] == [set(requires)]


# -- simulated prices: equity and volatility only --------------------------------------------------


@pytest.mark.parametrize("native", [False, True])
def test_simulated_trading_context_is_capital_equity_and_lookback_volatility(native):
    recorder = Recorder(("equity", "volatility"), rate=0.0)
    kwargs = {"lookback": 4, "episode_length": 3, "transaction_cost": recorder, "capital": 5e5}
    env: Any = TradingVecEnv(2, **kwargs) if native else TradingEnv(**kwargs)
    env.reset(seed=3)
    equities, histories = [], []
    for _ in range(3):
        histories.append(np.stack(env.price_history) if native else env.price_history[None])
        equities.append(np.atleast_1d(env.equity).copy())
        env.step(np.array([2, 0]) if native else 2)
    cost_model = env.template.cost_model if native else env.cost_model
    for call, equity, history in zip(cost_model.calls, equities, histories):
        assert np.atleast_1d(call["equity"]) == pytest.approx(5e5 * equity, rel=1e-12)
        # The lookback log returns ending at the decision price, population std.
        returns = np.diff(np.log(history[:, -5:]), axis=1)
        expected = np.std(returns, axis=1, ddof=0)[:, None]
        # The native env keeps the observed (float32) returns: allow their rounding.
        assert call["volatility"].reshape(expected.shape) == pytest.approx(
            expected, rel=1e-6 if native else 1e-12
        )


# -- Market-v0 -------------------------------------------------------------------------------------

LISTED_AT = 7  # the last asset of the Market-v0 panel lists at this row


def market_env(transaction_cost: CostModel) -> MarketEnv:
    """Market-v0 over the panel, its last asset unlisted before ``LISTED_AT``; the first decision
    is at row ``3 + LOOKBACK``, where that asset has a single lookback return."""
    prices = PRICES.copy()
    prices[:LISTED_AT, 2] = np.nan
    data = MarketData(prices, fields={"volume": VOLUME, "spread": SPREAD})
    return MarketEnv(
        data,
        lookback=LOOKBACK,
        episode_length=LENGTH,
        sampler=3,
        transaction_cost=transaction_cost,
        capital=CAPITAL,
    )


MARKET_ACTION = np.array([0.3, 0.3, 0.3, 0.1], np.float32)


def test_market_context_is_capital_equity_lookback_volatility_and_decision_row_fields():
    recorder = Recorder(rate=0.0)
    env = market_env(recorder)
    env.reset(seed=0)
    env.step(MARKET_ACTION)
    (call,) = recorder.calls
    decision = 3 + LOOKBACK
    assert call["trades"] == pytest.approx(np.full(N, 0.3), rel=1e-6)
    assert call["equity"] == CAPITAL
    volatility = volatility_at(decision)
    volatility[2] = np.nan  # one lookback return since the listing: no volatility
    np.testing.assert_allclose(call["volatility"], volatility, rtol=1e-12)
    np.testing.assert_allclose(call["volume"], VOLUME[decision] * PRICES[decision], rtol=1e-12)
    np.testing.assert_array_equal(call["spread"], SPREAD[decision])


def test_market_square_root_impact_plus_fixed_fee_matches_a_hand_computation():
    env = market_env(SquareRootImpact(0.5) + FixedCost(5.0))
    env.reset(seed=0)
    weights = env.target_weights(MARKET_ACTION)[:N]
    cost = env.step(MARKET_ACTION).info["cost"]
    decision = 3 + LOOKBACK
    sigma = volatility_at(decision)
    sigma[2] = np.median(sigma[:2])  # no volatility of its own: the cross-sectional median
    shares = np.abs(weights) * CAPITAL
    dollar_volume = VOLUME[decision] * PRICES[decision]
    impact = np.minimum(0.5 * sigma * np.sqrt(shares / dollar_volume), 1.0) * np.abs(weights)
    assert cost == pytest.approx(impact.sum() + 5.0 * N / CAPITAL, rel=1e-12)


# -- construction-time refusals (§6.1, §3.5) -------------------------------------------------------

WINDOW_ENVS = [
    pytest.param(TradingEnv, "Trading-v0", id="Trading"),
    pytest.param(PortfolioEnv, "Portfolio-v0", id="Portfolio"),
    pytest.param(lambda **kw: TradingVecEnv(2, **kw), "Trading-v0", id="TradingVecEnv"),
    pytest.param(lambda **kw: PortfolioVecEnv(2, **kw), "Portfolio-v0", id="PortfolioVecEnv"),
]


def data_for(env_name: str, **fields: np.ndarray) -> MarketData:
    columns = slice(0, 1) if env_name == "Trading-v0" else slice(None)
    return MarketData(
        PRICES[:, columns], fields={name: value[:, columns] for name, value in fields.items()}
    )


@pytest.mark.parametrize(("make", "env_name"), WINDOW_ENVS)
@pytest.mark.parametrize(
    ("cost", "needed"),
    [
        (SquareRootImpact(0.5), "volume"),
        (SpreadCost(), "spread"),
        (ProportionalCost(0.001) + SpreadCost(), "spread"),
        (Recorder(("volume",)), "volume"),
    ],
)
def test_a_model_needing_a_field_is_refused_on_simulated_prices(make, env_name, cost, needed):
    with pytest.raises(ValueError, match=rf"needs '{needed}', which the simulated market"):
        make(transaction_cost=cost)


@pytest.mark.parametrize(("make", "env_name"), WINDOW_ENVS)
@pytest.mark.parametrize(
    ("cost", "needed", "present"),
    [
        (SquareRootImpact(0.5), "volume", "spread"),
        (SpreadCost(), "spread", "volume"),
        (FixedCost(1.0) + SpreadCost(fallback_spread=0.001), "spread", "volume"),
    ],
)
def test_a_model_needing_a_field_the_data_lacks_is_refused(make, env_name, cost, needed, present):
    data = data_for(env_name, **{present: (VOLUME if present == "volume" else SPREAD)})
    with pytest.raises(ValueError, match=rf"needs '{needed}', which the data of {env_name}"):
        make(data=data, lookback=LOOKBACK, episode_length=LENGTH, transaction_cost=cost)
    # The same field as raw prices (no fields at all) is refused just the same.
    with pytest.raises(ValueError, match=rf"needs '{needed}'"):
        make(prices=data.prices, lookback=LOOKBACK, episode_length=LENGTH, transaction_cost=cost)


@pytest.mark.parametrize(("make", "env_name"), WINDOW_ENVS)
def test_a_volatility_model_is_refused_with_lookback_below_two(make, env_name):
    data = data_for(env_name, volume=VOLUME)
    for cost in (SquareRootImpact(0.5), Recorder(("volatility",))):
        with pytest.raises(ValueError, match=r"volatility estimate.*lookback >= 2 \(got 1\)"):
            make(data=data, lookback=1, episode_length=LENGTH, transaction_cost=cost)
    # lookback 2 gives an estimate: accepted, on history and on simulated prices.
    make(data=data, lookback=2, episode_length=LENGTH, transaction_cost=SquareRootImpact(0.5))
    make(lookback=2, episode_length=LENGTH, transaction_cost=Recorder(("volatility",)))


@pytest.mark.parametrize(("make", "env_name"), WINDOW_ENVS)
def test_models_the_env_can_supply_are_accepted(make, env_name):
    # No fields needed: equity and fixed rates are always available.
    make(transaction_cost=FixedCost(5.0) + SpreadCost(half_spread=0.0002))
    data = data_for(env_name, volume=VOLUME, spread=SPREAD)
    make(
        data=data,
        lookback=LOOKBACK,
        episode_length=LENGTH,
        transaction_cost=SquareRootImpact(0.5) + SpreadCost(),
    )


@pytest.mark.parametrize("cls", [TradingEnv, PortfolioEnv])
def test_a_model_set_later_is_refused_as_well(cls):
    """Failing when the model is given, not at the first step (§3.5)."""
    env = cls(lookback=LOOKBACK, episode_length=LENGTH)
    with pytest.raises(ValueError, match="needs 'volume', which the simulated market"):
        env.cost_model = SquareRootImpact(0.5)
    vec = (TradingVecEnv if cls is TradingEnv else PortfolioVecEnv)(2, lookback=1)
    with pytest.raises(ValueError, match=r"lookback >= 2 \(got 1\)"):
        vec.set_attr("cost_model", Recorder(("volatility",)))


class LayoutRecorder(CostModel):
    """Records whether each batch of trades arrives C-contiguous, shaped (num_envs, n)."""

    def __init__(self) -> None:
        self.layouts: list[tuple[bool, tuple[int, ...]]] = []

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> np.ndarray:
        self.layouts.append((bool(trades.flags.c_contiguous), trades.shape))
        return np.zeros(trades.shape[:-1])


def test_native_portfolio_gives_cost_models_c_contiguous_row_major_trades():
    vec = PortfolioVecEnv(4, n_assets=N, transaction_cost=LayoutRecorder())
    vec.reset(seed=0)
    for _ in range(3):
        vec.step(np.full((4, N + 1), 0.5, dtype=np.float32))
    layouts = vec.template.cost_model.layouts
    assert layouts == [(True, (4, N))] * 3


@pytest.mark.parametrize("mode", [None, "sync"])
def test_a_frozen_native_sub_env_is_not_priced(mode):
    """A finished sub-env trades nothing while frozen: its repeated action is not priced at a
    row it never trades on, where a missing spread would fail the whole batch."""
    import sekai
    from sekai.finance import MarketData, SpreadCost

    r = np.full(60, 0.001)
    r[20] = -0.5  # the price halves: a 3x long is wiped out
    spread = np.full(60, 0.001)
    spread[20] = np.nan  # no quote on the row after the crash
    data = MarketData(100 * np.cumprod(1 + r)).with_fields(spread=spread)
    vec = sekai.make_vec(
        "Trading-v0",
        2,
        vectorization_mode=mode,
        vector_kwargs={"autoreset": False},
        data=data,
        episode_length=10,
        lookback=5,
        positions=(-3.0, 0.0, 3.0),
        transaction_cost=SpreadCost(),
    )
    vec.reset(seed=0, options=[{"start": 19}, {"start": 40}])
    assert vec.step(np.array([2, 2])).terminated.tolist() == [True, False]
    later = vec.step(np.array([2, 2]))
    assert later.rewards[0] == 0.0
    assert later.rewards[1] == pytest.approx(0.002992517948405138, rel=1e-12)
    vec.close()
