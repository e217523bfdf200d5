"""Replayed data in the kernel modes reports the history's own timestamps, exactly as the native
envs do, whatever the float dtype: the device carries the history row, the host looks it up."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance import MarketData

pytest.importorskip("jax")
pytest.importorskip("torch")

ROWS = 60
PRICES = 100.0 * np.exp(np.cumsum(np.random.default_rng(1).normal(0.0, 0.01, ROWS)))
STAMPS = {
    # float32 spaces these 128 apart, and JAX without x64 wraps int64 to int32
    "unix seconds": 1.7e9 + 60.0 * np.arange(ROWS),
    "int64 epoch milliseconds": 1_700_000_000_000 + 60_000 * np.arange(ROWS),
    "dates": np.arange("2024-01-01", ROWS, dtype="datetime64[D]"),
}


def _rows(envs: Any, history: np.ndarray, steps: int) -> list[list[int]]:
    """Sub-env 0's episodes through ``steps`` steps, each as the history rows of its decisions'
    timestamps (which must be the history's own: same values, same dtype)."""
    where = {stamp: row for row, stamp in enumerate(history.tolist())}

    def row(stamp: Any) -> int:
        assert np.asarray(stamp).dtype == history.dtype, stamp
        return where[stamp.item() if isinstance(stamp, np.generic) else stamp]

    episodes = [[row(envs.reset(seed=0).infos[0]["timestamp"])]]
    for _ in range(steps):
        info = envs.step(np.ones(envs.num_envs, dtype=np.int64)).infos[0]
        episodes[-1].append(row(info.get("final_info", info)["timestamp"]))
        if "reset_info" in info:
            episodes.append([row(info["reset_info"]["timestamp"])])
    return episodes


@pytest.mark.parametrize("mode", ["jax", "torch"])
@pytest.mark.parametrize("kind", list(STAMPS))
def test_replayed_timestamps_are_the_historys_own(mode: str, kind: str) -> None:
    data = MarketData(PRICES, timestamps=STAMPS[kind])
    envs = sekai.make_vec(
        "Trading-v0", 2, vectorization_mode=mode, data=data, episode_length=4, lookback=5
    )
    episodes = _rows(envs, data.timestamps, 10)
    assert len(episodes) >= 3  # through autoresets
    for rows in episodes:  # one row further a decision
        assert rows == list(range(rows[0], rows[0] + len(rows))), rows
    native = sekai.make_vec("Trading-v0", 2, data=data, episode_length=4, lookback=5)
    expected = native.reset(seed=0).infos[0]["timestamp"]
    assert type(envs.reset(seed=0).infos[0]["timestamp"]) is type(expected)


@pytest.mark.parametrize("mode", ["jax", "torch"])
def test_portfolio_reports_the_historys_timestamps_too(mode: str) -> None:
    prices = np.stack([PRICES, PRICES[::-1]], axis=1)
    data = MarketData(prices, timestamps=STAMPS["unix seconds"])
    envs = sekai.make_vec(
        "Portfolio-v0", 2, vectorization_mode=mode, data=data, episode_length=4, lookback=5
    )
    first = envs.reset(seed=0).infos[0]["timestamp"]
    out = envs.step(np.full((2, 3), 1.0 / 3.0, dtype=np.float32)).infos[0]["timestamp"]
    assert out - first == 60.0 and first in set(data.timestamps.tolist())
