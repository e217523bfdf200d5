"""Where a bad value is: in a price panel, or at an env's decision, for the messages that
refuse it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sekai.finance.costs import CostModel, UnpricedTrade

__all__ = ["decision_at", "first_at", "priced_at"]


def _time(value: Any) -> str:
    """A timestamp as the messages show it: a datetime64 to its last nonzero unit (a day's
    date alone), anything else as ``str``."""
    if isinstance(value, np.datetime64):
        return str(np.datetime_as_string(value, unit="auto"))
    return str(value)


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
        text += f" (timestamp {_time(timestamps[row])})"
    if column:
        text += f", column {column[0]}" if assets is None else f", asset {assets[column[0]]!r}"
    at = (row, *column)
    return f"{text}: {float(values[at])!r}"


def decision_at(row: int | None, timestamp: Any, sub_env: int | None = None) -> str:
    """``"at the decision of row r (timestamp t)"``: where an env decided, ``row`` being the
    row of its data; ``"at the decision of step t"`` in a simulated episode (no ``row``: the
    ``timestamp`` is the step). A sub-env of a vector env leads: ``"of sub-env i at ..."``."""
    if row is None:
        where = f"at the decision of step {timestamp}"
    else:
        where = f"at the decision of row {row} (timestamp {_time(timestamp)})"
    return where if sub_env is None else f"of sub-env {sub_env} {where}"


def priced_at(
    model: CostModel, trades: np.ndarray, context: dict[str, Any], where: Callable[[int], str]
) -> Any:
    """``model(trades, **context)``, called by an env: when the model cannot price a row of
    ``trades`` (``UnpricedTrade``), its error says where the env decided it, ``where(row)``
    (``row``: the index of the row among the trades' rows, a sub-env's for a vector env)."""
    try:
        return model(trades, **context)
    except UnpricedTrade as error:
        raise error.at(where(error.row)) from None  # the same error, its traceback kept
