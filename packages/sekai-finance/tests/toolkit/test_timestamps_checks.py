"""How MarketData reads its timestamps and Time its value (finance.md §5.1): a wrong length, a
NaN or a time zone is refused naming ``timestamps``; a Time of a Time is that Time."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sekai.finance.data import MarketData, Time

PRICES = np.linspace(100.0, 110.0, 10)


@pytest.mark.parametrize(
    ("timestamps", "shape"), [(np.arange(9), "(9,)"), (np.arange(10).reshape(10, 1), "(10, 1)")]
)
def test_timestamps_of_another_shape_are_refused(timestamps: np.ndarray, shape: str) -> None:
    message = f"timestamps must have shape (10,), got {shape}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(PRICES, timestamps=timestamps)


@pytest.mark.parametrize("missing", [np.nan, np.inf])
def test_float_timestamps_must_be_finite(missing: float) -> None:
    timestamps = np.r_[missing, np.arange(1.0, 10.0)]
    message = "timestamps must be finite (no NaN or inf)."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(PRICES, timestamps=timestamps)


def test_a_timezone_aware_index_is_refused_with_the_conversion_to_use() -> None:
    pd = pytest.importorskip("pandas")
    index = pd.date_range("2021-01-04", periods=10, tz="UTC")
    message = (
        "timezone-aware timestamps are not supported; convert them to naive UTC first, e.g. "
        "index.tz_convert('UTC').tz_localize(None) (or tz_localize(None) to keep local time)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(PRICES, timestamps=index)


@pytest.mark.parametrize("value", [3, 2.5, "2020-01-02"])
def test_a_time_of_a_time_is_the_same_time(value: object) -> None:
    inner = Time(value)
    outer = Time(inner)
    assert repr(outer) == repr(inner) and outer.value == inner.value
    assert type(outer.value) is type(inner.value)
