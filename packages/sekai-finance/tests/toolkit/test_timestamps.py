"""Reading one timestamp: UTC offsets refused, and the process's warnings filters untouched."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

from sekai.finance.timestamps import TZ_HINT, to_datetime64


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
    ],
)
def test_a_string_with_a_utc_offset_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(TZ_HINT)}$"):
        to_datetime64(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-01-02", "2020-01-02T00:00"),
        ("2020-01-02T03", "2020-01-02T03:00"),
        ("2020-01-02 03:04:05", "2020-01-02T03:04:05"),
        ("2020-01-02T03:04:05.123456", "2020-01-02T03:04:05.123456"),
    ],
)
def test_a_naive_date_string_is_read_as_it_is(text: str, expected: str) -> None:
    assert to_datetime64(text) == np.datetime64(expected)


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
