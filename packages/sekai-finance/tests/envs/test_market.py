"""Market-v0: spaces, slots, listings and delistings, financing, costs, episode bookkeeping."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market import MarketEnv
from sekai.error import InvalidAction, ResetRequired
from sekai.finance.costs import ProportionalCost, SpreadCost
from sekai.finance.data import MarketData
from sekai.finance.rewards import SimpleReturn
from sekai.finance.simulators import GBM
from sekai.spaces import flatdim

INFO_KEYS = [
    "equity",
    "turnover",
    "cost",
    "financing",
    "gross_exposure",
    "n_assets",
    "weights",
    "timestamp",
    "dt",
]


def panel(rows: int = 60, seed: int = 0) -> np.ndarray:
    """Three assets: asset 0 always listed, asset 1 delists after row 20, asset 2 lists at 10."""
    rng = np.random.default_rng(seed)
    prices = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, (rows, 3)), axis=0))
    prices[21:, 1] = np.nan
    prices[:10, 2] = np.nan
    return prices


def history_env(**kwargs: Any) -> MarketEnv:
    kwargs.setdefault("lookback", 3)
    kwargs.setdefault("episode_length", 30)
    data = kwargs.pop("data", None) or MarketData(panel())
    return MarketEnv(data, **kwargs)


# -- spaces and the migration page ---------------------------------------------------------


def test_default_spaces() -> None:
    env = MarketEnv()
    assert repr(env.observation_space) == (
        "Dict({assets: MaskedBox(-inf, inf, (20, 2), max_size=10, float32), portfolio: "
        "Box(-inf, inf, (11,), float32), account: Box(-inf, inf, (2,), float32)})"
    )
    assert flatdim(env.observation_space) == 423
    assert env.action_space == sekai.Box(0.0, 1.0, (11,), np.float32)
    assert MarketEnv(allow_short=True).action_space == sekai.Box(-1.0, 1.0, (10,), np.float32)


def test_registered_env_flattens_to_a_box() -> None:
    env = sekai.FlattenObservation(sekai.make("Market-v0"))
    assert type(env.observation_space).__name__ == "Box"
    assert env.reset(seed=0).observation.shape == (423,)
    assert env.spec is not None and env.spec.vector_entry_point is None
    assert env.spec.max_episode_steps is None


def test_make_vec_of_market_is_a_sync_vec_env() -> None:
    vec = sekai.make_vec("Market-v0", 2)
    assert type(vec).__name__ == "SyncVecEnv"
    vec.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_assets": 4, "allow_short": True, "max_leverage": 2.0, "borrow_rate": 0.02},
        {"privileged_state": True, "exogenous": ("regime",), "cash_rate": 0.03},
    ],
)
def test_check_env_passes(kwargs: dict[str, Any]) -> None:
    assert sekai.check_env(MarketEnv(**kwargs), check_determinism=True) == []


def test_check_env_passes_on_history_with_features_and_exogenous() -> None:
    prices = panel(80)
    data = MarketData(
        prices,
        fields={"volume": np.where(np.isnan(prices), np.nan, 1e5)},
        exogenous={"rate": np.linspace(0.01, 0.02, 80), "index": np.ones((80, 2))},
    )
    env = MarketEnv(
        data,
        features=("volume",),
        exogenous=("rate", "index"),
        lookback=5,
        episode_length=20,
        max_assets=2,
    )
    space: Any = env.observation_space
    assert space["market"].shape == (5, 3)
    assert space["assets"].element_shape == (5, 3)
    assert sekai.check_env(env, check_determinism=True) == []


# -- slots and masks -------------------------------------------------------------------------


def test_untradable_slots_are_masked_and_observed_as_zeros() -> None:
    env = history_env()
    result = env.reset(options={"start": 3})  # decision row 3: asset 2 lists at row 10
    assert env.action_mask().tolist() == [1, 1, 0, 1]
    assert result.observation["assets"]["mask"].tolist() == [1, 1, 0]
    assert not result.observation["assets"]["values"][2].any()
    assert env.slot_assets == ["asset_0", "asset_1", "asset_2"]


def test_untradable_slots_get_zero_weight() -> None:
    env = history_env()
    env.reset(options={"start": 3})
    weights = env.target_weights(np.ones(4))
    assert weights.tolist() == pytest.approx([1 / 3, 1 / 3, 0.0, 1 / 3])
    result = env.step(np.ones(4, np.float32))
    assert result.info["weights"][2] == 0.0


def test_fewer_slots_than_assets_keep_assets_in_their_slot() -> None:
    env = history_env(max_assets=2)
    env.reset(options={"start": 3})
    assert env.slot_assets == ["asset_0", "asset_1"]
    for _ in range(17):  # decision row 20: asset 1 is still listed, asset 2 waits
        env.step(np.array([1.0, 1.0, 0.0], np.float32))
    assert env.slot_assets == ["asset_0", "asset_1"]
    result = env.step(np.array([1.0, 1.0, 0.0], np.float32))  # asset 1 delists at row 21
    assert env.slot_assets == ["asset_0", "asset_2"]
    assert result.info["weights"][1] == 0.0  # the slot changed hands
    assert result.observation["assets"]["mask"].tolist() == [1, 1]


def test_the_final_observation_masks_an_asset_that_delisted_in_the_last_period() -> None:
    env = history_env(episode_length=1)
    env.reset(options={"start": 20})  # asset 1 is listed at row 20 and gone at row 21
    result = env.step(np.ones(4, np.float32))
    assert result.truncated
    assert result.observation["assets"]["mask"].tolist() == [1, 0, 1]
    assert result.info["n_assets"] == 2
    assert env.action_mask().tolist() == [1, 0, 1, 1]


def test_delisting_pays_the_delisting_return_and_turns_the_holding_into_cash() -> None:
    prices = panel()
    env = history_env(data=MarketData(prices), transaction_cost=0.0, delisting_return=-0.5)
    env.reset(options={"start": 20})
    result = env.step(np.array([0.0, 1.0, 0.0, 0.0], np.float32))  # all in asset 1
    assert result.info["equity"] == pytest.approx(0.5)
    assert result.reward == pytest.approx(math.log(0.5))
    assert result.info["weights"].tolist() == [0.0, 0.0, 0.0]
    assert env.action_mask().tolist() == [1, 0, 1, 1]


def test_step_matches_a_hand_computation_with_financing_and_costs() -> None:
    prices = panel()
    env = history_env(
        data=MarketData(prices),
        transaction_cost=0.002,
        cash_rate=0.05,
        allow_short=True,
        borrow_rate=0.1,
        dt=0.01,
    )
    env.reset(options={"start": 12})
    result = env.step(np.array([0.5, -0.25, 0.1], np.float32))
    w = np.array([0.5, -0.25, 0.1])
    r = prices[13] / prices[12] - 1.0
    cost = 0.002 * np.abs(w).sum()
    cash = 1.0 - w.sum()
    financing = cash * 0.05 * 0.01 - 0.1 * 0.01 * 0.25
    growth = (1 - cost) * (1 + w @ r + financing)
    assert result.info["cost"] == pytest.approx(cost)
    assert result.info["financing"] == pytest.approx(financing)
    assert result.info["equity"] == pytest.approx(growth)
    assert result.info["weights"] == pytest.approx(w * (1 + r) / (1 + w @ r + financing))
    assert result.info["gross_exposure"] == pytest.approx(np.abs(result.info["weights"]).sum())
    assert result.observation["portfolio"][-1] == pytest.approx(
        1 - result.info["weights"].sum(), abs=1e-6
    )


def test_the_observed_gross_exposure_counts_short_weights_at_their_size() -> None:
    env = history_env(allow_short=True, max_leverage=2.0)
    env.reset(options={"start": 12})
    result = env.step(np.array([0.8, -0.5, 0.3], np.float32))
    weights = result.info["weights"]
    assert weights[1] < 0 < weights[0]
    gross = math.fsum(abs(w) for w in weights)
    assert result.info["gross_exposure"] == pytest.approx(gross)
    assert result.observation["account"][1] == pytest.approx(gross, rel=1e-6)
    assert gross - abs(math.fsum(weights)) > 0.9  # the short leg adds to it, not nets out


def test_cost_model_sees_trades_in_asset_space() -> None:
    rates = [0.01, 0.02, 0.04]
    env = history_env(max_assets=2, transaction_cost=ProportionalCost(rates))
    env.reset(options={"start": 21})  # asset 1 gone: the slots hold assets 0 and 2
    assert env.slot_assets == ["asset_0", "asset_2"]
    result = env.step(np.array([0.0, 1.0, 0.0], np.float32))
    assert result.info["cost"] == pytest.approx(0.04)


def test_cost_model_needing_data_fields_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="spread"):
        MarketEnv(transaction_cost=SpreadCost())


def test_wipe_out_terminates() -> None:
    prices = np.full((10, 1), 100.0)
    prices[5] = 400.0
    env = MarketEnv(
        MarketData(prices),
        lookback=2,
        episode_length=3,
        allow_short=True,
        max_leverage=1.0,
        transaction_cost=0.0,
    )
    env.reset(options={"start": 4})
    result = env.step(np.array([-1.0], np.float32))
    assert result.terminated and not result.truncated
    assert result.info["equity"] == 0.0 and result.reward == pytest.approx(math.log(1e-12))
    with pytest.raises(ResetRequired):
        env.step(np.array([0.0], np.float32))


# -- episode ---------------------------------------------------------------------------------


def test_reset_info() -> None:
    env = history_env()
    result = env.reset(options={"start": 12})
    info = result.info
    assert list(info) == INFO_KEYS
    assert (info["equity"], info["turnover"], info["cost"], info["financing"]) == (1.0, 0, 0, 0)
    assert info["n_assets"] == 3 and info["timestamp"] == 12 and type(info["timestamp"]) is int
    assert result.observation["account"].tolist() == [0.0, 0.0]
    assert result.observation["portfolio"].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_observation_holds_the_lookback_returns_ending_at_the_decision_row() -> None:
    prices = panel()
    env = history_env(data=MarketData(prices))
    obs = env.reset(options={"start": 12}).observation
    expected = np.log(prices[10:13, 0] / prices[9:12, 0])
    assert obs["assets"]["values"][0, :, 0] == pytest.approx(expected, rel=1e-5)
    assert obs["assets"]["values"][0, :, 1].tolist() == [1.0, 1.0, 1.0]
    # asset 2 lists at row 10: its first return (row 9 -> 10) is undefined
    assert obs["assets"]["values"][2, :, 1].tolist() == [0.0, 1.0, 1.0]
    assert obs["assets"]["values"][2, 0, 0] == 0.0


def test_episode_is_truncated_after_episode_length() -> None:
    env = MarketEnv(episode_length=5)
    result: Any = env.reset(seed=0)
    flags = []
    while not result.done:
        result = env.step(np.ones(11, np.float32))
        flags.append((result.terminated, result.truncated))
    assert flags == [(False, False)] * 4 + [(False, True)]
    assert result.info["timestamp"] == 5 and env.elapsed_steps == 5


def test_privileged_state_and_observed_regime() -> None:
    env = MarketEnv(privileged_state=True, exogenous=("regime",))
    result = env.reset(seed=3)
    assert list(result.info)[-1] == "state"
    regime = result.info["state"]["regime"]
    assert regime.shape == () and float(regime) in (0.0, 1.0)
    assert result.observation["market"][-1, 0] == float(regime)
    assert env.latent_state["regime"] == regime


def test_reward_function_is_used_and_copied() -> None:
    reward = SimpleReturn()
    env = history_env(reward=reward)
    assert env.reward_fn is not reward
    env.reset(options={"start": 5})
    result = env.step(np.ones(4, np.float32))
    assert result.reward == pytest.approx(result.info["equity"] - 1.0)


def test_same_seed_gives_the_same_episode() -> None:
    def run(seed: int) -> list[float]:
        env = MarketEnv(episode_length=20)
        env.reset(seed=seed)
        return [env.step(np.ones(11, np.float32)).reward for _ in range(20)]

    assert run(1) == run(1) and run(1) != run(2)


def test_simulated_market_uses_the_model() -> None:
    model = GBM(mu=0.1, sigma=0.2, n_assets=3)
    env = MarketEnv(model=model, episode_length=10)
    assert env.action_space.shape == (4,) and env.dt == model.dt
    assert env.reset(seed=0).info["n_assets"] == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"data": MarketData(panel()), "model": GBM()}, ValueError, "one source"),
        ({"data": panel()}, TypeError, "MarketData"),
        ({"features": ("volume",)}, ValueError, "data="),
        ({"exogenous": ("rate",)}, KeyError, "rate"),
        (
            {"data": MarketData(panel(), fields={"v": np.ones((60, 3))}), "features": ("x",)},
            KeyError,
            "x",
        ),
        ({"data": MarketData(panel()), "episode_length": 50}, ValueError, "rows"),
        (  # long enough, but every window would decide on a warm-up row (as Trading/Portfolio)
            {"data": MarketData(panel(), warmup=40), "lookback": 5, "episode_length": 30},
            ValueError,
            "no episode fits after the 40 warm-up rows",
        ),
        ({"max_assets": 0}, ValueError, "max_assets"),
        ({"max_leverage": 0.0}, ValueError, "max_leverage"),
        ({"delisting_return": -2.0}, ValueError, "delisting_return"),
        ({"allow_short": 1}, ValueError, "allow_short"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, Any], error: type, match: str) -> None:
    data = kwargs.pop("data", None)
    with pytest.raises(error, match=match):
        MarketEnv(data, **kwargs)


@pytest.mark.parametrize("name", ["features", "exogenous"])
@pytest.mark.parametrize("unordered", [set, frozenset])
def test_feature_names_must_be_ordered(name: str, unordered: type) -> None:
    data = MarketData(panel(), fields={"v": np.ones((60, 3))}, exogenous={"r": np.zeros(60)})
    with pytest.raises(
        TypeError,
        match=rf"^{name} must be given in order, got a {unordered.__name__} of 1 item, which "
        r"has no order; pass a list or tuple in the order wanted\.$",
    ):
        MarketEnv(data, **{name: unordered(["v" if name == "features" else "r"])})
    with pytest.raises(TypeError, match=rf"^{name} must be a sequence of names \(str\)"):
        MarketEnv(data, **{name: iter(["v"])})


def test_reset_options() -> None:
    with pytest.raises(ValueError, match="needs a price history"):
        MarketEnv().reset(options={"start": 3})
    with pytest.raises(ValueError, match="strat"):
        history_env().reset(options={"strat": 3})
    assert history_env().reset(options={"start": 9}).info["timestamp"] == 9


def test_invalid_actions() -> None:
    env = MarketEnv()
    env.reset(seed=0)
    actions: tuple[Any, ...] = (np.ones(10), np.full(11, np.nan), "x")
    for action in actions:
        with pytest.raises(InvalidAction):
            env.step(action)
    env.step(np.full(11, 5.0))  # finite values outside the box are clipped


@pytest.mark.parametrize("name", ["max_assets", "features", "exogenous", "allow_short", "lookback"])
def test_space_defining_parameters_are_read_only(name: str) -> None:
    with pytest.raises(AttributeError, match="fixed at construction"):
        setattr(MarketEnv(), name, 3)


def test_model_with_another_universe_is_refused() -> None:
    env = MarketEnv()
    with pytest.raises(ValueError, match="10"):
        env.model = GBM(n_assets=3)


def test_per_asset_cost_rates_are_checked_at_construction():
    with pytest.raises(ValueError, match="rate has 3 per-asset values but Market-v0 trades 10"):
        sekai.make("Market-v0", transaction_cost=ProportionalCost([0.001] * 3))
    env = sekai.make("Market-v0", transaction_cost=ProportionalCost([0.001] * 10))
    with pytest.raises(ValueError, match="rate has 2 per-asset values"):
        env.unwrapped.cost_model = ProportionalCost([0.001] * 2)


def test_parameters_set_after_construction_are_checked():
    from sekai.finance.account import AccountConfig

    env = sekai.make("Market-v0").unwrapped
    with pytest.raises(ValueError, match=r"delisting_return must be >= -1, got -5\.0"):
        env.delisting_return = -5.0
    with pytest.raises(ValueError, match="privileged_state must be a bool, got str"):
        env.privileged_state = "yes"
    with pytest.raises(TypeError, match="config must be an AccountConfig, got NoneType"):
        env.config = None
    with pytest.raises(ValueError, match=r"config\.allow_short=True disagrees"):
        env.config = AccountConfig(allow_short=True)
    env.config = AccountConfig(max_leverage=2.0)
    env.delisting_return = -0.5
    assert env.config.max_leverage == 2.0 and env.delisting_return == -0.5


def test_prices_is_the_data_panel_or_none_when_simulating():
    assert sekai.make("Market-v0").unwrapped.prices is None
    panel = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (300, 3)), 0))
    env = sekai.make("Market-v0", data=MarketData(panel), episode_length=20, lookback=5)
    assert np.array_equal(env.unwrapped.prices, panel)


def test_datetime64_timestamps_are_reported_as_datetime64() -> None:
    stamps = np.arange("2024-01-01", "2024-03-01", dtype="datetime64[D]").astype("datetime64[ns]")
    prices = np.linspace(100.0, 120.0, len(stamps))
    data = MarketData(np.stack([prices, 2.0 * prices], axis=1), timestamps=stamps)
    env = MarketEnv(data=data, lookback=5, episode_length=10)
    info = env.reset(seed=0).info
    assert isinstance(info["timestamp"], np.datetime64)
    assert info["timestamp"] in stamps
    step = env.step(np.array([0.5, 0.5, 0.0], dtype=np.float32)).info
    assert isinstance(step["timestamp"], np.datetime64) and step["timestamp"] > info["timestamp"]
