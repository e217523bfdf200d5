"""Market-v0's episode window: availability, the observed features and the cost volatility."""

from __future__ import annotations

import numpy as np

from sekai.envs.finance._market_episode import MarketEpisode
from sekai.finance.simulators import Simulation

NAN = np.nan


def test_volatility_is_the_ddof0_std_of_the_available_returns_in_the_lookback() -> None:
    # asset 0 always listed; asset 1 unlisted at row 2, so returns 2 and 3 are missing
    prices = np.array(
        [[100.0, 10.0], [110.0, 11.0], [99.0, NAN], [108.9, 12.0], [108.9, 13.2], [119.79, 13.2]]
    )
    episode = MarketEpisode(prices, np.isfinite(prices))
    returns = np.log(prices[1:, 0] / prices[:-1, 0])
    # the lookback of 3 at row 5 holds the returns into rows 3, 4 and 5
    expected_0 = np.std(returns[2:5])
    expected_1 = np.std(np.log([13.2 / 12.0, 1.0]))  # rows 4 and 5 only
    np.testing.assert_allclose(episode.volatility(5, 3), [expected_0, expected_1], rtol=1e-12)
    # at row 4 asset 1 has one available return (into row 4): no estimate
    at_4 = episode.volatility(4, 3)
    np.testing.assert_allclose(at_4[0], np.std(returns[1:4]), rtol=1e-12)
    assert np.isnan(at_4[1])


def test_missing_feature_values_are_observed_as_zero() -> None:
    prices = np.array([[100.0], [101.0], [102.0]])
    feature = np.array([[0.5], [NAN], [2.0]])
    episode = MarketEpisode(prices, np.isfinite(prices), features=[feature])
    assert episode.per_asset[0, :, 2].tolist() == [0.5, 0.0, 2.0]


def test_a_simulated_price_that_is_not_finite_is_unlisted_whatever_the_mask() -> None:
    prices = np.array([[100.0, 50.0], [NAN, 51.0], [102.0, np.inf]])
    simulation = Simulation(prices, mask=np.ones((3, 2), dtype=bool))
    episode = MarketEpisode.from_simulation(simulation, 3, ())
    assert episode.listed.tolist() == [[True, True], [False, True], [True, False]]
    assert episode.per_asset[:, 1:, 1].tolist() == [[0.0, 0.0], [1.0, 0.0]]
