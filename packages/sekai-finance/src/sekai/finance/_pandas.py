"""Reading pandas objects into MarketData: the optional import, values, time indexes and
long tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.error import MissingDependency
from sekai.finance.timestamps import TZ_HINT, timezone_refused

__all__ = [
    "import_pandas",
    "long_to_wide",
    "pandas_assets",
    "pandas_times",
    "pandas_values",
    "reindexed",
]

_PANDAS_HINT = '{what} needs pandas, which is not installed: pip install "sekai-finance[pandas]"'


def import_pandas(what: str) -> Any:
    """The pandas module; ``MissingDependency`` naming ``what`` needs it when not installed."""
    try:
        import pandas
    except ImportError as exc:
        raise MissingDependency(
            _PANDAS_HINT.format(what=what), package="pandas", extra="pandas"
        ) from exc
    return pandas


def pandas_values(pd: Any, value: Any) -> np.ndarray:
    """A pandas Series/DataFrame as an array: numeric columns (nullable ones too) as float64
    with missing values as NaN; anything else as it is, for the constructor to refuse bools,
    strings and other non-numbers (converting them to float64 would parse or cast them)."""
    dtypes = [value.dtype] if isinstance(value, pd.Series) else list(value.dtypes)
    types = pd.api.types
    if all(types.is_numeric_dtype(d) and not types.is_bool_dtype(d) for d in dtypes):
        result: np.ndarray = value.to_numpy(dtype=np.float64, na_value=np.nan)
        return result
    return np.asarray(value.to_numpy())


def pandas_assets(columns: Any) -> list[Any]:
    """A frame's column labels as asset ids, whatever its index: the labels themselves (0,
    1, ... select as 0, 1), NumPy scalars as Python's."""
    return [c.item() if isinstance(c, np.generic) else c for c in columns]


def pandas_times(pd: Any, index: Any) -> Any:
    """The index as timestamps: datetimes, or numbers and date strings, which the constructor
    checks (strictly increasing) and converts like any ``timestamps=``."""
    if isinstance(index, pd.DatetimeIndex):
        if index.tz is not None:
            raise ValueError(TZ_HINT)
        return index.to_numpy("datetime64[ns]")
    return index.to_numpy()


def _first(labels: Any) -> str:
    """The first few of an index's labels, for a message: ``[a, b, c, ...]``."""
    shown = repr(labels[:3].tolist())
    return f"{shown[:-1]}, ...]" if len(labels) > 3 else shown


def _checked_labels(name: str, labels: Any, target: Any, axis: str) -> None:
    """Refuse ``labels`` (``name``'s index or columns, ``axis``) holding a label twice (pandas
    cannot re-index them), or sharing none with ``target``, the prices' (re-indexed to them,
    ``name`` would be all NaN). Shared is as the re-index matches labels: a DatetimeIndex
    matches the date strings or ``datetime.date`` objects of the prices' index, say."""
    if axis == "index":
        held, keep, per, verb = "row for the timestamp", "row", "timestamp", "starts"
    else:
        held, keep, per, verb = "column", "column", "asset", "are"
    if labels.has_duplicates:
        raise ValueError(
            f"{name} has more than one {held} {labels[labels.duplicated()][0]!r}; keep one "
            f"{keep} per {per}, as the prices do."
        )
    if len(target) and not (labels.get_indexer(target) >= 0).any():
        raise ValueError(
            f"{name} shares no {per} with the prices: its {axis} {verb} {_first(labels)}, "
            f"the prices' {axis} {verb} {_first(target)}; re-indexed to the prices' {axis} by "
            "label, it would be all NaN."
        )


def reindexed(pd: Any, name: str, value: Any, index: Any, columns: Any = None) -> np.ndarray:
    """``value`` (a field's DataFrame, or an exogenous Series/DataFrame) re-indexed to the
    prices' ``index`` (and ``columns``, for a field), as ``pandas_values``.

    Raises:
        ValueError: naming ``name``: a timezone-aware index, a timestamp (or column) held
            twice, or no timestamp (or column) in common with the prices.
    """
    if isinstance(value.index, pd.DatetimeIndex) and value.index.tz is not None:
        raise timezone_refused(name)
    _checked_labels(name, value.index, index, "index")
    if columns is None:
        return pandas_values(pd, value.reindex(index))
    _checked_labels(name, value.columns, columns, "columns")
    return pandas_values(pd, value.reindex(index=index, columns=columns))


def _refuse_missing(df: Any, column: str, kinds: str, what: str) -> None:
    """Refuse the rows of ``df`` whose ``column`` is missing (``kinds``), naming them."""
    rows = df.index[df[column].isna().to_numpy()]
    if len(rows):
        raise ValueError(
            f"df[{column!r}] is missing ({kinds}) in {len(rows)} row(s), index "
            f"{rows[:5].tolist()}{' ...' if len(rows) > 5 else ''}; every row needs {what}: "
            "drop or fill those rows."
        )


def long_to_wide(
    pd: Any, df: Any, *, time: str, asset: str, price: str, fields: list[Any]
) -> tuple[Any, dict[str, Any]]:
    """A long table (one row per time and asset) as a prices DataFrame (index = times, sorted;
    columns = assets) and one DataFrame per name in ``fields``.

    Raises:
        ValueError: a column is missing, a row has no asset id (None or NaN) or no time
            (None, NaN or NaT), or a (time, asset) pair has more than one row.
    """
    missing = [c for c in (time, asset, price, *fields) if c not in df.columns]
    if missing:
        raise ValueError(
            f"df has no column(s) {missing} (see time=, asset=, price=, fields=); its "
            f"columns are {list(df.columns)}."
        )
    _refuse_missing(df, asset, "None or NaN", "an asset id")
    _refuse_missing(df, time, "None, NaN or NaT", "a time")
    repeated = df.loc[df.duplicated([time, asset], keep=False), [time, asset]]
    if len(repeated):
        pairs = list(dict.fromkeys(map(tuple, repeated.itertuples(index=False))))
        raise ValueError(
            f"df has more than one row for {len(pairs)} ({time}, {asset}) pair(s), e.g. "
            f"{[tuple(map(str, p)) for p in pairs[:3]]}; keep one row per time and asset."
        )
    wide = df.pivot(index=time, columns=asset, values=price).sort_index()
    return wide, {str(n): df.pivot(index=time, columns=asset, values=n) for n in fields}
