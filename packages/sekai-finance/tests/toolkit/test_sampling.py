"""Episode samplers and the start option."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sekai.finance.data import MarketData, Time
from sekai.finance.sampling import (
    EpisodeSampler,
    FixedStart,
    RandomStart,
    SequentialStart,
    as_sampler,
    draw_window_start,
    sequential_lanes,
    window_start_from_option,
)
from sekai.vector import Spawnable

RNG = np.random.default_rng(0)


def test_samplers_are_spawnable_and_shared_by_default():
    sampler = RandomStart()
    assert isinstance(sampler, Spawnable) and sampler.spawn() is sampler
    assert repr(sampler) == "RandomStart()"
    assert all(0 <= sampler.sample(RNG, 10, 3) < 10 for _ in range(50))


def test_random_start_uses_one_integers_draw():
    assert RandomStart().sample(np.random.default_rng(5), 275, 20) == int(
        np.random.default_rng(5).integers(0, 275)
    )


def test_sequential_start_tiles_then_wraps_with_epoch():
    sampler = SequentialStart()
    positions = [sampler.sample(RNG, 275, 20) for _ in range(15)]
    assert positions == [*range(0, 261, 20), 0]
    assert sampler.epoch == 1
    strided = SequentialStart(start=3, stride=50)
    assert [strided.sample(RNG, 275, 20) for _ in range(7)] == [3, 53, 103, 153, 203, 253, 3]
    assert repr(strided) == "SequentialStart(start=3, stride=50)"


def test_sequential_epoch_loop_visits_every_window_once():
    sampler = SequentialStart(stride=4)
    seen = []
    while sampler.epoch == 0:
        seen.append(sampler.sample(RNG, 10, 4))
    assert seen == [0, 4, 8]


def test_sequential_epoch_ends_when_the_windows_tile_the_history_exactly():
    sampler = SequentialStart(stride=4)
    seen = []
    while sampler.epoch == 0 and len(seen) < 5:  # the cap turns a missed epoch into a failure
        seen.append(sampler.sample(RNG, 8, 4))
    assert seen == [0, 4]
    assert sampler.epoch == 1
    assert sampler.sample(RNG, 8, 4) == 0


def test_sequential_restarts_when_the_history_shrank():
    sampler = SequentialStart(stride=10)
    for _ in range(3):
        sampler.sample(RNG, 100, 10)
    assert sampler.sample(RNG, 25, 10) == 0


def test_sequential_spawn_and_reset():
    sampler = SequentialStart(start=2, stride=3)
    sampler.sample(RNG, 50, 3)
    child = sampler.spawn()
    assert child is not sampler and child.sample(RNG, 50, 3) == 2
    sampler.reset()
    assert sampler.sample(RNG, 50, 3) == 2 and sampler.epoch == 0


def test_sequential_lanes_hand_out_the_walk_of_one_sampler_in_its_order():
    lanes = sequential_lanes(SequentialStart(start=3, stride=50), 2)
    assert lanes is not None
    assert [[lane.sample(RNG, 275, 20) for _ in range(4)] for lane in lanes] == [
        [3, 103, 203, 3],
        [53, 153, 253, 53],
    ]
    walk = SequentialStart(start=3, stride=50)
    assert [walk.sample(RNG, 275, 20) for _ in range(8)] == [3, 53, 103, 153, 203, 253, 3, 53]
    assert [repr(lane) for lane in lanes] == [
        "SequentialStart(start=3, stride=50) lane 0 of 2",
        "SequentialStart(start=3, stride=50) lane 1 of 2",
    ]


def test_sequential_lanes_without_a_stride_step_by_the_episode_length():
    lanes = sequential_lanes(SequentialStart(), 3)
    assert lanes is not None
    assert [[lane.sample(RNG, 100, 30) for _ in range(2)] for lane in lanes] == [
        [0, 90],
        [30, 0],
        [60, 30],
    ]


def test_a_sequential_lane_spawns_and_resets_to_its_first_episode():
    lane = sequential_lanes(SequentialStart(start=3, stride=50), 2)[1]
    assert [lane.sample(RNG, 275, 20) for _ in range(2)] == [53, 153]
    child = lane.spawn()
    assert child is not lane and child.sample(RNG, 275, 20) == 53
    assert lane.sample(RNG, 275, 20) == 253  # the parent goes on where it was
    lane.reset()
    assert lane.sample(RNG, 275, 20) == 53


def test_a_sequential_lane_refuses_a_start_beyond_the_last_window():
    lane = sequential_lanes(SequentialStart(start=9), 2)[0]
    with pytest.raises(
        ValueError, match=f"^{re.escape('start 9 is beyond the last window start 4.')}$"
    ):
        lane.sample(RNG, 5, 1)


class EveryOtherWindow(SequentialStart):
    """A sequential sampler with a walk of its own: lanes cannot know it."""

    def sample(self, rng, n_starts, episode_length):
        return 2 * super().sample(rng, n_starts, episode_length) % n_starts


@pytest.mark.parametrize("sampler", [RandomStart(), FixedStart(3), EveryOtherWindow()])
def test_no_lanes_for_a_sampler_whose_walk_is_unknown(sampler):
    assert sequential_lanes(sampler, 2) is None


@pytest.mark.parametrize("sampler", [SequentialStart(start=9), FixedStart(9)])
def test_start_beyond_the_last_window_is_refused(sampler):
    with pytest.raises(ValueError, match="start 9 is beyond the last window start 4"):
        sampler.sample(RNG, 5, 1)


def test_invalid_constructor_arguments():
    for build in (
        lambda: SequentialStart(-1),
        lambda: SequentialStart(0, 0),
        lambda: FixedStart(-2),
    ):
        with pytest.raises(ValueError):
            build()
    assert repr(FixedStart(7)) == "FixedStart(7)"


def test_as_sampler_forms():
    assert isinstance(as_sampler("random"), RandomStart)
    assert isinstance(as_sampler("sequential"), SequentialStart)
    assert as_sampler(7).start == 7 and isinstance(as_sampler(np.int64(7)), FixedStart)
    sampler = SequentialStart()
    assert as_sampler(sampler) is sampler
    for bad in (True, "other", 1.5, None):
        with pytest.raises(ValueError, match="'random' or 'sequential'"):
            as_sampler(bad)


def test_draw_window_start_skips_warmup_windows():
    assert draw_window_start(SequentialStart(), RNG, 100, 10, lookback=5, warmup=12) == 7
    with pytest.raises(ValueError, match="no episode fits"):
        draw_window_start(SequentialStart(), RNG, 3, 10, lookback=5, warmup=12)
    with pytest.raises(ValueError, match="warm-up rows"):
        draw_window_start(FixedStart(95), RNG, 100, 10, lookback=5, warmup=12)


def test_a_custom_sampler_out_of_range_is_reported():
    class Bad(EpisodeSampler):
        def sample(self, rng, n_starts, episode_length):
            return n_starts

    with pytest.raises(ValueError, match="returned 10"):
        draw_window_start(Bad(), RNG, 10, 3)


def test_start_option_forms_and_errors():
    days = np.busday_offset("2020-01-01", np.arange(300), roll="forward")
    data = MarketData(np.ones(300), timestamps=days)
    kw = {"lookback": 5, "n_starts": 275, "data": data}
    assert window_start_from_option(10, days, **kw) == 5
    assert window_start_from_option(-21, days, **kw) == 274
    assert window_start_from_option("2020-03-02", days, **kw) == data.index_of("2020-03-02") - 5
    assert window_start_from_option(Time("2020-03-01"), days, **kw) == 43 - 5
    with pytest.raises(ValueError, match=r"rows 5\.\.279 \(timestamps 2020-01-08"):
        window_start_from_option(2, days, **kw)
    with pytest.raises(ValueError, match="after the data"):
        window_start_from_option("2030-01-01", days, **kw)
    with pytest.raises(TypeError):
        window_start_from_option(True, days, **kw)
    with pytest.raises(TypeError):
        window_start_from_option(1.5, days, **kw)
