"""Market-v0 through sekai.compat: the migration page's flattened gymnasium env."""

from __future__ import annotations

import gymnasium
import numpy as np

import sekai
from sekai.compat import to_gymnasium


def test_flattened_market_is_a_gymnasium_box_env() -> None:
    market = to_gymnasium(sekai.FlattenObservation(sekai.make("Market-v0")))
    assert type(market.observation_space).__name__ == "Box"
    assert market.observation_space.shape == (423,)


def test_flattened_vector_equals_gymnasiums_flattening_of_the_converted_env() -> None:
    ours = to_gymnasium(sekai.FlattenObservation(sekai.make("Market-v0")))
    theirs = gymnasium.wrappers.FlattenObservation(to_gymnasium(sekai.make("Market-v0")))
    a, _ = ours.reset(seed=3)
    b, _ = theirs.reset(seed=3)
    assert np.array_equal(a, b)
    action = np.ones(11, np.float32)
    assert np.array_equal(ours.step(action)[0], theirs.step(action)[0])
