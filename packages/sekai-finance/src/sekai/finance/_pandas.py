"""Reading pandas objects into MarketData: the optional import, values and time indexes."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.error import MissingDependency
from sekai.finance.timestamps import TZ_HINT

__all__ = ["import_pandas", "pandas_times", "pandas_values"]

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


def pandas_times(pd: Any, index: Any) -> Any:
    """The index as timestamps: datetimes, or numbers and date strings, which the constructor
    checks (strictly increasing) and converts like any ``timestamps=``."""
    if isinstance(index, pd.DatetimeIndex):
        if index.tz is not None:
            raise ValueError(TZ_HINT)
        return index.to_numpy("datetime64[ns]")
    return index.to_numpy()
