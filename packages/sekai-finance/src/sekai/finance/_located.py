"""Where a bad value of a price panel is, for the messages that refuse it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["first_at"]


def first_at(
    bad: np.ndarray,
    values: np.ndarray,
    *,
    timestamps: np.ndarray | None = None,
    assets: Sequence[Any] | None = None,
) -> str:
    """``"first at row r (timestamp t), asset 'a': value"`` for the first True of ``bad``, a
    ``(T,)`` or ``(T, N)`` mask of ``values``; the timestamp where ``timestamps`` are given,
    the asset by its id where ``assets`` are given (else by its column, for ``(T, N)``)."""
    row, *column = (int(i) for i in np.argwhere(bad)[0])
    text = f"first at row {row}"
    if timestamps is not None:
        text += f" (timestamp {timestamps[row]})"
    if column:
        text += f", column {column[0]}" if assets is None else f", asset {assets[column[0]]!r}"
    at = (row, *column)
    return f"{text}: {float(values[at])!r}"
