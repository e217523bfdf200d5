"""Reading timestamps: UTC offsets refused (one, or an array's), and the process's warnings
filters untouched."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sekai.finance import timestamps
from sekai.finance.timestamps import (
    _UTC_OFFSET,
    TZ_HINT,
    has_timezone,
    holds_timezone,
    to_datetime64,
)


@pytest.mark.parametrize(
    "text",
    [
        "2020-01-02T03:04Z",
        "2020-01-02T03:04:05+01:00",
        "2020-01-02T03:04:05-0130",
        "2020-01-02T03+01",
        "2020-01-02 03:04:05+01:00",
        "2020-01-02T03:04:05.5Z",
        "2020-01-02T03:04:05 +01:00",
        b"2020-01-02T03:04Z",  # bytes are read as their text
        b"2020-01-02T03:04:05+01:00",
    ],
)
def test_a_string_with_a_utc_offset_is_refused(text: str | bytes) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(TZ_HINT)}$"):
        to_datetime64(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-01-02", "2020-01-02T00:00"),
        ("2020-01-02T03", "2020-01-02T03:00"),
        ("2020-01-02 03:04:05", "2020-01-02T03:04:05"),
        ("2020-01-02T03:04:05.123456", "2020-01-02T03:04:05.123456"),
        ("2020-01-02T03:04 ", "2020-01-02T03:04"),  # NumPy took the space for a timezone
        (b"2020-01-02", "2020-01-02T00:00"),
    ],
)
def test_a_naive_date_string_is_read_as_it_is(text: str | bytes, expected: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and NumPy's timezone warning is never left to show
        assert to_datetime64(text) == np.datetime64(expected)


def test_a_date_past_the_ns_range_written_to_the_nanosecond_is_refused_not_wrapped() -> None:
    # NumPy reads it in ns and wraps it around (to 1915-06-14), with no error.
    with pytest.raises(ValueError, match="outside the datetime64\\[ns\\] range"):
        to_datetime64("2500-01-01T00:00:00.000000001")
    assert to_datetime64("2200-01-01T00:00:00.000000001") == np.datetime64(
        "2200-01-01T00:00:00.000000001"
    )


@pytest.mark.parametrize(
    "value", ["NaT", b"NaT", np.datetime64("NaT")], ids=["str", "bytes", "datetime64"]
)
def test_nat_is_refused_as_nat(value: object) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape('timestamps[1] must not be NaT.')}$"):
        to_datetime64(value, "timestamps[1]")


def test_reading_timestamps_leaves_the_warnings_filters_alone(monkeypatch: Any) -> None:
    # catch_warnings swaps the filters of the whole process: a thread building data at the
    # same time as another could leave its "error" filter behind, turning every later
    # UserWarning into an exception.
    def swap(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the warnings filters were swapped")

    monkeypatch.setattr(warnings, "catch_warnings", swap)
    filters = list(warnings.filters)
    to_datetime64("2020-01-02")
    with pytest.raises(ValueError, match="timezone"):
        to_datetime64("2020-01-02T03:04Z")
    assert warnings.filters == filters


# A str or bytes array is looked through all at once (asof_join's event_times and
# target_times): the same entries are refused as has_timezone refuses one by one.

TEXT = st.text(alphabet=st.sampled_from("0123456789-:.TZ+ \t\nxŔīĀ"), max_size=12)


@given(st.lists(TEXT, min_size=1, max_size=6), st.sampled_from(["U", "S", "O"]))
@settings(max_examples=300, deadline=None)
def test_an_array_holds_a_time_zone_where_an_entry_has_one(texts: list[str], kind: str) -> None:
    # Ŕ, ī and Ā are T, + and a NUL modulo 256
    values: list[Any] = texts
    if kind == "S":
        values = [t.encode() for t in texts]
    array = np.array(values, dtype=object if kind == "O" else kind)
    assert holds_timezone(array) == any(has_timezone(v) for v in values)
    assert holds_timezone(array[::-2]) == any(has_timezone(v) for v in values[::-2])


class _CountedSearch:
    """_UTC_OFFSET, counting the entries it reads."""

    def __init__(self) -> None:
        self.reads = 0

    def search(self, text: str) -> Any:
        self.reads += 1
        return _UTC_OFFSET.search(text)


@pytest.mark.parametrize("kind", ["U", "S"])
def test_a_str_or_bytes_array_reads_only_entries_that_may_have_an_offset(
    kind: str, monkeypatch: Any
) -> None:
    counted = _CountedSearch()
    monkeypatch.setattr(timestamps, "_UTC_OFFSET", counted)
    naive = np.datetime_as_string(np.arange(1000).astype("datetime64[m]")).astype(kind)
    assert not holds_timezone(naive)
    assert counted.reads == 0
    aware = naive.copy()
    aware[500] = "1970-01-01T08:20+01:00"
    assert holds_timezone(aware)
    assert counted.reads == 1
