"""Causal features and check_causal."""

from __future__ import annotations

import datetime
import re
import warnings

import numpy as np
import pytest

from sekai.error import LookAheadError
from sekai.finance import features as f
from sekai.finance.timestamps import TZ_HINT

X = 100 * np.exp(np.cumsum(np.random.default_rng(1).normal(0, 0.01, (40, 3)), axis=0))


def test_returns_and_momentum():
    assert np.isnan(f.log_returns(X)[0]).all()
    assert f.log_returns(X)[1:] == pytest.approx(np.log(X[1:] / X[:-1]))
    assert f.simple_returns(X)[5] == pytest.approx(X[5] / X[4] - 1)
    assert f.momentum(X, 3)[10] == pytest.approx(X[10] / X[7] - 1)


def test_lag_and_forward_fill():
    assert f.lag([1.0, 2.0, 3.0], 1)[1:].tolist() == [1.0, 2.0]
    filled = f.forward_fill([np.nan, 1.0, np.nan, np.nan, 2.0])
    assert np.isnan(filled[0]) and filled[1:].tolist() == [1.0, 1.0, 1.0, 2.0]
    limited = f.forward_fill([1.0, np.nan, np.nan], limit=1)
    assert limited[1] == 1.0 and np.isnan(limited[2])
    with pytest.raises(ValueError):
        f.lag([1.0], -1)


def test_lag_by_zero_is_a_copy_and_by_the_length_or_more_is_all_nan():
    x = np.array([1.0, 2.0, 3.0])
    assert f.lag(x, 0).tolist() == [1.0, 2.0, 3.0]
    assert all(np.isnan(f.lag(x, periods)).all() for periods in (3, 4, 5, 7))
    assert np.isnan(f.momentum(X, 40)).all()


def test_asof_join_refuses_unsorted_times_even_two_of_them():
    with pytest.raises(ValueError, match="event_times must be sorted"):
        f.asof_join([0, 5], [9, 4], [1.0, 2.0])


def test_rolling_statistics_match_numpy():
    x = X[:, 0]
    assert f.rolling_mean(x, 5)[10] == pytest.approx(x[6:11].mean())
    assert np.isnan(f.rolling_mean(x, 5)[3])
    assert f.rolling_mean(x, 5, min_periods=2)[3] == pytest.approx(x[:4].mean())
    assert f.rolling_std(x, 5)[10] == pytest.approx(x[6:11].std(ddof=1))
    z = f.rolling_zscore(x, 5)[10]
    assert z == pytest.approx((x[10] - x[6:11].mean()) / x[6:11].std(ddof=1))
    assert f.realized_volatility(x, 5, periods_per_year=4)[10] == pytest.approx(
        2 * x[6:11].std(ddof=1)
    )


def _by_window(x: np.ndarray, window: int, stat) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``stat`` of each trailing window's valid values, computed window by window."""
    out = np.full(x.shape, np.nan)
    for t in range(len(x)):
        for j in range(x.shape[1]):
            block = x[max(0, t + 1 - window) : t + 1, j]
            block = block[~np.isnan(block)]
            if len(block) >= 2:
                out[t, j] = stat(block)
    return out


def test_rolling_statistics_match_each_window_computed_alone():
    x = X.copy()
    x[[3, 4, 17], [0, 0, 2]] = np.nan
    for window in (2, 3, 5, 39, 40, 60):
        mean = f.rolling_mean(x, window, min_periods=2)
        std = f.rolling_std(x, window, min_periods=2)
        assert np.allclose(mean, _by_window(x, window, np.mean), rtol=1e-13, equal_nan=True)
        expected = _by_window(x, window, lambda b: b.std(ddof=1))
        assert np.allclose(std, expected, rtol=1e-11, equal_nan=True)


def test_rolling_std_is_nan_until_a_window_holds_more_values_than_ddof():
    # min_periods=1 would let one value through; std with ddof=d needs d + 1 values, so the
    # first d entries are NaN (not inf or 0 from dividing by count - ddof <= 0).
    x = np.array([1.0, 2.0, 4.0, 8.0])
    for ddof in (0, 1, 2):
        std = f.rolling_std(x, 3, min_periods=1, ddof=ddof)
        assert np.isnan(std[:ddof]).all()
        assert std[ddof:] == pytest.approx(
            [x[max(0, t - 2) : t + 1].std(ddof=ddof) for t in range(ddof, 4)]
        )
    with pytest.raises(ValueError, match="ddof"):
        f.rolling_std(x, 3, ddof=-1)


def test_a_window_depends_only_on_its_own_rows_whatever_came_before():
    a, b, c = 100000.00132836, 99999.99944665, 100000.00279355
    direct = np.std([a, b, c], ddof=1)
    for first in (100000.0, 7.0, np.nan):
        x = np.array([first, a, b, c])
        assert f.rolling_std(x, 3)[-1] == pytest.approx(direct, rel=1e-9)


def test_an_asset_listed_late_at_a_high_price_keeps_its_precision():
    # NaN until listing (a MarketData panel's layout), then a level far from zero
    listed = 50_000 + np.cumsum(np.random.default_rng(0).standard_normal(400)) * 0.01
    x = np.concatenate([np.full(13, np.nan), listed])[:, None]
    for window in (7, 20):
        std = f.rolling_std(x, window, min_periods=2)
        expected = _by_window(x, window, lambda block: block.std(ddof=1))
        mask = ~np.isnan(expected)
        assert np.isnan(std[~mask]).all()
        assert np.allclose(std[mask], expected[mask], rtol=1e-9)


def test_flat_windows_are_not_recomputed_one_by_one(monkeypatch: pytest.MonkeyPatch):
    # nothing cancels in a window of equal values on its own anchor: the fast sums are exact
    import sekai.finance.features.rolling as rolling

    redone: list[int] = []
    real = rolling._exact_moments
    monkeypatch.setattr(
        rolling,
        "_exact_moments",
        lambda a, w, redo, m, q: (redone.append(int(redo.sum())), real(a, w, redo, m, q)),
    )
    assert (f.rolling_std(np.full((500, 2), 100.0), 20)[19:] == 0).all()
    assert redone == []
    x = np.array([7.0, 100000.00132836, 99999.99944665, 100000.00279355])
    f.rolling_std(x, 3)
    assert redone == [1]  # the window far from its block's anchor


def test_an_inf_affects_only_the_windows_holding_it():
    x = np.array([1.0, np.inf, 1.0, 1.0, 1.0])
    assert f.rolling_mean(x, 2).tolist()[1:] == [np.inf, np.inf, 1.0, 1.0]
    std = f.rolling_std(x, 2)
    assert np.isnan(std[:3]).all() and std[3:].tolist() == [0.0, 0.0]
    # a zero price gives -inf then +inf log returns; the windows after them are finite again
    returns = f.rolling_mean(f.log_returns([1.0, 1.1, 0.0, 1.0, 1.05, 1.1, 1.2]), 2)
    assert np.isfinite(returns[-2:]).all()


def test_long_histories_far_from_zero_keep_their_precision():
    rng = np.random.default_rng(0)
    x = 50_000 + np.cumsum(rng.normal(0, 0.01, 200_000))
    z = f.rolling_zscore(x, 5)
    tail = x[-5:]
    assert z[-1] == pytest.approx((tail[-1] - tail.mean()) / tail.std(ddof=1), abs=1e-6)
    assert f.rolling_mean(x, 5)[-1] == pytest.approx(tail.mean(), rel=1e-15)


def test_ewm_matches_adjusted_weights():
    x = np.array([1.0, 2.0, np.nan, 4.0])
    keep = 0.5  # halflife 1
    weights = np.array([keep**3, keep**2, keep**0])
    values = np.array([1.0, 2.0, 4.0])
    assert f.ewm_mean(x, 1.0)[3] == pytest.approx((weights * values).sum() / weights.sum())
    assert np.isnan(f.ewm_std(x, 1.0)[0]) and f.ewm_std(x, 1.0)[3] > 0


def test_ewm_std_is_the_bias_corrected_weighted_std_of_each_prefix_at_any_level():
    # a price of 50,000 moving by cents: sum(w*x*x)/sum(w) - mean**2 would cancel to nothing
    steps = np.random.default_rng(0).standard_normal(60) * 0.01
    for level in (0.0, 50_000.0):
        x = level + np.cumsum(steps)
        x[7] = np.nan
        std = f.ewm_std(x, 5.0)
        keep = 0.5 ** (1 / 5)
        for t in (1, 2, 8, 30, 59):
            w = keep ** np.arange(t, -1, -1.0)
            ok = ~np.isnan(x[: t + 1])
            w, v = w[ok], x[: t + 1][ok]
            mean = (w * v).sum() / w.sum()
            var = (w * (v - mean) ** 2).sum() / w.sum()
            var *= w.sum() ** 2 / (w.sum() ** 2 - (w * w).sum())
            assert std[t] == pytest.approx(np.sqrt(var), rel=1e-7)


def test_ewm_mean_keeps_an_infinity_while_it_has_weight_and_ewm_std_is_nan():
    x = np.array([1.0, np.inf, np.nan, 2.0])
    assert f.ewm_mean(x, 1.0).tolist() == [1.0, np.inf, np.inf, np.inf]
    assert f.ewm_mean(-x, 1.0)[-1] == -np.inf
    assert np.isnan(f.ewm_mean(np.array([np.inf, -np.inf]), 1.0)[-1])
    assert np.isnan(f.ewm_std(x, 1.0)).all()


def test_cross_sections():
    z = f.cross_sectional_zscore([[1.0, 2.0, 3.0], [5.0, np.nan, 5.0]])
    assert (
        z[0] == pytest.approx([-1.2247449, 0.0, 1.2247449]) and z[1, 0] == 0.0 and np.isnan(z[1, 1])
    )
    ranks = f.cross_sectional_rank([[3.0, 1.0, 1.0, 2.0], [np.nan, 7.0, np.nan, np.nan]])
    assert ranks[0].tolist() == [1.0, 1 / 6, 1 / 6, 2 / 3]
    assert ranks[1, 1] == 0.5


def test_asof_join_respects_lag():
    targets = np.array([0, 5, 10, 15])
    out = f.asof_join(targets, [4, 9], [1.0, 2.0], lag=1)
    assert np.isnan(out[0]) and out[1:].tolist() == [1.0, 2.0, 2.0]
    days = np.array(["2020-01-01", "2020-01-05"], "datetime64[D]")
    assert f.asof_join(days, days, [1.0, 2.0], lag=np.timedelta64(1, "D"))[1] == 1.0
    with pytest.raises(TypeError, match="must both be datetimes or both numbers"):
        f.asof_join(days, [1, 2], [1.0, 2.0])
    with pytest.raises(TypeError, match="must both be datetimes or both numbers"):
        f.asof_join([1, 2], days, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"got an int too large for a float64\.$"):
        f.asof_join(targets, [4, 9], [1.0, 2.0], lag=10**400)  # not its 401 digits


BARS = np.arange("2021-01-06T09:00", "2021-01-06T12:00", dtype="datetime64[h]")  # naive local


AWARE = ["DatetimeIndex", "Series", "datetime", "str", "str-array", "bytes"]


def _aware(kind: str) -> object:
    """10:30 in Tokyo, as 01:30 UTC, in one of the forms a feed gives it."""
    if kind in ("DatetimeIndex", "Series"):
        pd = pytest.importorskip("pandas")
        aware = pd.DatetimeIndex(["2021-01-06 01:30"], tz="UTC")
        return aware if kind == "DatetimeIndex" else pd.Series(aware)
    return {
        "datetime": [datetime.datetime(2021, 1, 6, 1, 30, tzinfo=datetime.timezone.utc)],
        "str": ["2021-01-06T01:30+00:00"],
        "str-array": np.array(["2021-01-06T01:30Z"]),
        "bytes": [b"2021-01-06 01:30:00+00:00"],
    }[kind]


@pytest.mark.parametrize("kind", AWARE)
def test_asof_join_refuses_timezone_aware_times_naming_them(kind: str) -> None:
    # Converted to UTC, the 10:30 Tokyo event would show from the 09:00 naive local bar on.
    aware = _aware(kind)
    for name, call in [
        ("event_times", lambda: f.asof_join(BARS, aware, [1.0])),
        ("target_times", lambda: f.asof_join(aware, BARS[:1], [1.0])),
    ]:
        with pytest.raises(ValueError, match=f"^{re.escape(f'{name}: {TZ_HINT}')}$"):
            call()


def test_asof_join_reads_naive_date_strings_and_datetimes_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for events in (["2021-01-06T10:30"], [datetime.datetime(2021, 1, 6, 10, 30)]):
            assert np.isnan(f.asof_join(BARS, events, [1.0])).tolist() == [True, True, False]


def test_asof_join_quotes_a_negative_pandas_lag_as_given():
    pd = pytest.importorskip("pandas")
    days = np.array(["2020-01-02", "2020-01-05"], dtype="M8[D]")
    # not its conversion, np.timedelta64(-86400000000,'us')
    with pytest.raises(ValueError, match=r"^lag must be non-negative, got Timedelta\('-1 days"):
        f.asof_join(days, days, [1.0, 2.0], lag=pd.Timedelta(days=-1))
    assert f.asof_join(days, days, [1.0, 2.0], lag=pd.Timedelta(days=1))[1] == 1.0


def test_check_causal_accepts_causal_transforms():
    for fn in (f.log_returns, lambda x: f.rolling_mean(x, 5), lambda x: f.ewm_std(x, 3.0)):
        f.check_causal(fn, X, rng=0)


def test_check_causal_catches_look_ahead():
    with pytest.raises(LookAheadError, match="time index"):
        f.check_causal(lambda x: x - np.nanmean(x, axis=0), X, rng=0)
    with pytest.raises(LookAheadError, match="shape"):
        f.check_causal(lambda x: x[~np.isnan(x).any(axis=1)], X, rng=0)


def test_check_causal_catches_a_transform_that_reads_only_the_next_row() -> None:
    def next_row(x: np.ndarray) -> np.ndarray:
        out = np.full_like(x, np.nan)
        out[:-1] = x[1:]
        return out

    # The output at the cut row itself must be compared: the look-ahead shows only there.
    with pytest.raises(LookAheadError, match=r"time index 0 changed .* cut point 0"):
        f.check_causal(next_row, X, rng=0)


def test_check_causal_diagnoses_a_reduction_over_time_and_outputs_without_a_row_per_time():
    with pytest.raises(LookAheadError, match=r"one value \(shape \(\)\), not one per row"):
        f.check_causal(np.nanmean, X, rng=0)
    with pytest.raises(ValueError, match=r"one row per row of x \(40 rows\).*shape \(39, 3\)"):
        f.check_causal(lambda x: np.diff(x, axis=0), X, rng=0)


def test_realized_volatility_names_its_own_argument():
    with pytest.raises(TypeError, match=r"^returns must be real numbers"):
        f.realized_volatility(None, 5)
    with pytest.raises(ValueError, match=r"^returns must be a \(T,\) or \(T, N\) array"):
        f.realized_volatility(np.zeros((2, 2, 2)), 5)


def test_long_windows_over_a_drifting_history_match_each_window_alone():
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.normal(0.5, 1.0, (1500, 2)), axis=0) + 50_000  # far from 0, drifting
    x[[10, 700], [0, 1]] = np.nan
    for window in (64, 252, 700):
        mean = f.rolling_mean(x, window, min_periods=2)
        std = f.rolling_std(x, window, min_periods=2)
        np.testing.assert_allclose(mean, _by_window(x, window, np.mean), rtol=1e-12)
        expected = _by_window(x, window, lambda b: b.std(ddof=1))
        np.testing.assert_allclose(std, expected, rtol=1e-9)


@pytest.mark.parametrize(
    ("rng", "error"), [(True, TypeError), ([1, 2], TypeError), (2.0, TypeError), (-1, ValueError)]
)
def test_check_causal_checks_its_rng_as_every_seed_is_checked(rng: object, error: type) -> None:
    with pytest.raises(error, match=r"^rng must be a non-negative int"):
        f.check_causal(f.log_returns, X, rng=rng)  # type: ignore[arg-type]
