"""Warm-up rows (finance.md §4.2) and every ``options={"start": ...}`` form (§4.3), on the single
and native Trading/Portfolio envs.

A ``MarketData`` may begin with ``warmup`` rows that are observed as lookback but never decided
on: the first window is ``max(0, warmup − lookback)``, so the first decision row is
``max(lookback, warmup)``. A start option places the first decision: an int is a row position
(negative from the end), a float or ``Time(x)`` is looked up by value, landing on the first row
at or after it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.finance import MarketData, Time

ROWS, LOOKBACK, LENGTH, WARMUP = 60, 5, 10, 12
# window 16, n_starts 45, first usable window 7: decisions at rows 12..49
FIRST, LAST = WARMUP, LOOKBACK + (ROWS - (LOOKBACK + LENGTH + 1) + 1) - 1


def walk(rows: int, n: int, seed: int = 0) -> np.ndarray:
    steps = np.random.default_rng(seed).normal(0.0, 0.01, (rows, n))
    return 100 * np.exp(np.cumsum(steps, axis=0))


def warm_data(n_assets: int, warmup: int = WARMUP) -> MarketData:
    prices = walk(ROWS, n_assets)
    return MarketData(prices[:, 0] if n_assets == 1 else prices, warmup=warmup)


# (single env class, native class, number of assets, an action of one sub-env)
KINDS = {
    "trading": (TradingEnv, TradingVecEnv, 1, 1),
    "portfolio": (PortfolioEnv, PortfolioVecEnv, 2, np.ones(3, np.float32)),
}


def build(kind: str, native: bool, data: MarketData, num_envs: int = 8, **kw: Any) -> Any:
    single, vector, _, _ = KINDS[kind]
    kw = {"data": data, "lookback": LOOKBACK, "episode_length": LENGTH, **kw}
    return vector(num_envs, **kw) if native else single(**kw)


def first_timestamps(env: Any, native: bool, **reset: Any) -> list[Any]:
    result = env.reset(**reset)
    return [i["timestamp"] for i in result.infos] if native else [result.info["timestamp"]]


ENVS = [
    pytest.param(kind, native, id=f"{kind}-{'native' if native else 'single'}")
    for kind in KINDS
    for native in (False, True)
]


# -- warm-up rows ---------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "native"), ENVS)
@pytest.mark.parametrize(("warmup", "first"), [(WARMUP, WARMUP), (3, LOOKBACK), (0, LOOKBACK)])
def test_sequential_first_decision_is_the_first_non_warmup_row(
    kind: str, native: bool, warmup: int, first: int
) -> None:
    """Catches the offset applied to the window start instead of the decision row (first
    decision warmup + lookback = 17), the warm-up ignored (5), or a warm-up shorter than the
    lookback shifting the windows (it is covered by the lookback: decisions start at 5)."""
    env = build(kind, native, warm_data(KINDS[kind][2], warmup), sampler="sequential")
    assert set(first_timestamps(env, native, seed=0)) == {first}
    if not native:  # the next sequential window follows on directly, one episode later
        assert first_timestamps(env, native) == [first + LENGTH]


@pytest.mark.parametrize(("kind", "native"), ENVS)
def test_random_starts_never_decide_on_a_warmup_row(kind: str, native: bool) -> None:
    """Random windows over many seeds (and every native sub-env, autoresets included) cover
    exactly the rows 12..49. Catches sampling over all ``n_starts`` windows (decisions from row
    5, or past the last window) or not shifting by the first usable window."""
    _, _, n_assets, action = KINDS[kind]
    env = build(kind, native, warm_data(n_assets), num_envs=64)
    seen: list[Any] = []
    for seed in range(6 if native else 300):
        seen += first_timestamps(env, native, seed=seed)
    if native:  # autoresets draw windows too: reset_info holds their first decision
        batch = np.array([action] * 64)
        for _ in range(2 * LENGTH):
            seen += [
                i["reset_info"]["timestamp"] for i in env.step(batch).infos if "reset_info" in i
            ]
    assert len(seen) >= 300
    assert all(isinstance(t, int) for t in seen)
    assert min(seen) == FIRST and max(seen) == LAST  # the whole valid range, nothing outside


@pytest.mark.parametrize(("kind", "native"), ENVS)
@pytest.mark.parametrize("start", [0, 8, WARMUP - 1])
def test_start_on_a_warmup_row_is_refused(kind: str, native: bool, start: int) -> None:
    """Catches the start check using ``lookback`` as the lower bound (rows 5..11 accepted) and an
    off-by-one at the last warm-up row 11; row 12 itself is allowed. On the default 0..T-1 time
    axis an int is both a row and a timestamp: the message ends without the hint to pass
    ``Time(start)``, which would name the same row."""
    env = build(kind, native, warm_data(KINDS[kind][2]))
    warm = rf"Row {start} is a warm-up row \(the first {WARMUP} rows are lookback only\)\.$"
    with pytest.raises(ValueError, match=rf"rows {FIRST}\.\.{LAST} .*\. {warm}"):
        env.reset(seed=0, options={"start": start})
    assert set(first_timestamps(env, native, seed=0, options={"start": WARMUP})) == {WARMUP}


def test_split_history_rows_are_warmup_for_the_env() -> None:
    """The warm-up ``MarketData.split(..., history=)`` records is what the env honours: the
    prepended history is observed (the first observation's returns end at the part's first
    own row) but never decided on."""
    data = MarketData(walk(120, 1)[:, 0])
    _, test = data.split(0.5, history=10)
    assert test.warmup == 10 and test.timestamps[0] == 50
    env = TradingEnv(data=test, lookback=LOOKBACK, episode_length=LENGTH, sampler="sequential")
    result = env.reset(seed=0)
    assert result.info["timestamp"] == 60  # the part's first own row (row 10 of the part)
    expected = np.log(test.prices[6:11, 0] / test.prices[5:10, 0]).astype(np.float32)
    assert np.array_equal(result.observation[:LOOKBACK], expected)
    with pytest.raises(ValueError, match="warm-up row"):
        env.reset(options={"start": 9})


# -- every start form on a numeric float time axis ------------------------------------------

TIMES = 100.0 + 0.5 * np.arange(ROWS)  # rows k at 100.0, 100.5, ...; valid rows 5..49


def float_axis(n_assets: int) -> MarketData:
    prices = walk(ROWS, n_assets, seed=3)
    return MarketData(prices[:, 0] if n_assets == 1 else prices, timestamps=TIMES)


# (start option, the decision row it must give)
VALID_STARTS: list[tuple[Any, int]] = [
    (7, 7),  # an int is a row position, even on a numeric time axis
    (np.int64(7), 7),  # numpy integers too
    (-11, ROWS - 11),  # negative ints count from the end: the last valid first decision
    (103.2, 7),  # between rows 6 (103.0) and 7 (103.5): the next row
    (103.0, 6),  # exactly a row's timestamp: that row
    (np.float64(103.2), 7),
    (102.4, 5),  # rounds up to the first valid row
    (Time(103.2), 7),
    (Time(103), 6),  # Time forces a by-value lookup of an int
    (Time(np.int64(124)), 48),
]

BAD_STARTS: list[tuple[Any, str]] = [
    (4, r"row 4 is not a valid first decision; valid range of first decisions: rows 5\.\.49"),
    # row 50: its window would run past the data; the message shows what was passed
    (-10, r"^options\['start'\] = -10 \(row 50, counting from the end\) is not.*rows 5\.\.49"),
    (-90, r"= -90 \(30 rows before the data, counting from the end\)"),
    (102.0, r"102\.0 \(row 4\).*rows 5\.\.49 \(timestamps 102\.5 \.\. 124\.5\)"),
    (124.6, r"124\.6 \(row 50\)"),
    (500.0, r"after the data"),
    (Time(101), r"row 2"),
    (103, r"for the timestamp 103 pass Time\(103\)"),  # an int that looks like a timestamp
]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize(("start", "row"), VALID_STARTS, ids=lambda v: repr(v))
def test_every_start_form_places_the_first_decision(kind: str, start: Any, row: int) -> None:
    """Catches a float start rounded down or to the nearest row (103.2 → row 6), an int on a
    numeric axis looked up as a timestamp, ``Time`` of an int taken as a row, negative ints not
    counted from the end, and the window not starting ``lookback`` rows before the decision."""
    env = build(kind, False, float_axis(KINDS[kind][2]))
    result = env.reset(seed=0, options={"start": start})
    assert result.info["timestamp"] == TIMES[row] and type(result.info["timestamp"]) is float
    history = env.data.prices
    assert np.array_equal(env.price_history, np.squeeze(history[row - LOOKBACK : row + 1]))
    # the observed returns end at the decision row's price (no look-ahead)
    returns = np.log(history[row - LOOKBACK + 1 : row + 1] / history[row - LOOKBACK : row])
    observed = result.observation[:LOOKBACK] if kind == "trading" else result.observation["returns"]
    assert np.array_equal(observed, np.squeeze(returns).astype(np.float32).reshape(observed.shape))


@pytest.mark.parametrize("kind", list(KINDS))
def test_native_start_forms_agree_with_the_single_env(kind: str) -> None:
    """One native reset with a different start form per sub-env: each sub-env equals a single env
    reset with the same form (timestamp, its type, observation and prices). Catches a
    per-sub-env option list misrouted or one form translated differently on the native path."""
    starts = [start for start, _ in VALID_STARTS]
    data = float_axis(KINDS[kind][2])
    vec = build(kind, True, data, num_envs=len(starts))
    result = vec.reset(seed=0, options=[{"start": s} for s in starts])
    single = build(kind, False, data)
    for i, start in enumerate(starts):
        alone = single.reset(seed=0, options={"start": start})
        assert result.infos[i]["timestamp"] == alone.info["timestamp"], start
        assert type(result.infos[i]["timestamp"]) is type(alone.info["timestamp"])
        assert np.array_equal(vec.price_history[i], single.price_history)
        if kind == "trading":
            assert np.array_equal(result.observations[i], alone.observation)
        else:
            assert np.array_equal(result.observations["returns"][i], alone.observation["returns"])


@pytest.mark.parametrize("kind", list(KINDS))
def test_native_start_memo_tells_an_int_row_from_an_equal_float(kind: str) -> None:
    """``7 == 7.0`` and they hash alike, but the int is row 7 and the float the timestamp 7.0
    (before the data). Catches the native env's memo of translated starts keyed by value
    alone, which would accept 7.0 as row 7 after a reset with 7."""
    vec = build(kind, True, float_axis(KINDS[kind][2]), num_envs=2)
    assert {i["timestamp"] for i in vec.reset(seed=0, options={"start": 7}).infos} == {TIMES[7]}
    with pytest.raises(ValueError, match=r"7\.0\)? \(row 0\)"):
        vec.reset(seed=0, options={"start": 7.0})
    with pytest.raises(ValueError, match=r"7\.0\)? \(row 0\)"):
        vec.reset(seed=0, options={"start": np.float64(7.0)})


@pytest.mark.parametrize(("kind", "native"), ENVS)
@pytest.mark.parametrize(("start", "message"), BAD_STARTS, ids=lambda v: repr(v))
def test_starts_outside_the_valid_first_decisions_are_refused(
    kind: str, native: bool, start: Any, message: str
) -> None:
    """Catches a start before the first allowed window (or past the last) clamped or wrapped
    instead of refused, on either backend, and the missing ``Time`` hint for an int timestamp."""
    env = build(kind, native, float_axis(KINDS[kind][2]), num_envs=3)
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"start": start})


@pytest.mark.parametrize(("kind", "native"), ENVS)
def test_a_bool_start_is_a_type_error(kind: str, native: bool) -> None:
    """``True`` is an int to Python; taking it as row 1 (or refusing it with ValueError) is the
    bug caught."""
    env = build(kind, native, float_axis(KINDS[kind][2]), num_envs=2)
    with pytest.raises(TypeError, match="bool"):
        env.reset(seed=0, options={"start": True})
