"""MarketData, an immutable panel of prices, fields and market-wide series (``Time``, the
by-value timestamp, lives in ``sekai.finance.timestamps`` and is re-exported here)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from sekai.finance._gaps import fill_gaps
from sekai.finance._ids import asset_ids, id_list, named
from sekai.finance._located import first_at
from sekai.finance._pandas import (
    import_pandas,
    long_to_wide,
    pandas_assets,
    pandas_times,
    pandas_values,
    reindexed,
)
from sekai.finance._values import check_count, is_int, is_real, real_array, real_float, too_large
from sekai.finance.timestamps import Time, check_timestamps, time_hint, to_datetime64

__all__ = ["MarketData", "Time"]


def _as_panel(name: str, array: object, *, rows: int | None = None) -> np.ndarray:
    a = real_array(name, array)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"{name} must be a (T,) or (T, N) array, got shape {a.shape}.")
    if rows is not None and a.shape[0] != rows:
        raise ValueError(f"{name} has {a.shape[0]} rows, expected {rows} (one per timestamp).")
    return a


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class MarketData:
    """An immutable panel: ``T`` timestamps x ``N`` assets x named fields, plus market series.

    Args:
        prices: ``(T, N)`` or ``(T,)`` prices; NaN marks an asset not listed at that time.
        fields: more ``(T, N)`` arrays (``volume``, ``spread``, features); NaN allowed
            (missing), ``volume`` must be >= 0.
        timestamps: strictly increasing numbers or datetimes (default ``0..T-1``).
        assets: ``N`` unique asset ids (default ``"asset_0", ...``).
        exogenous: market-wide series, name -> ``(T,)`` or ``(T, k)``.
        price_field: the field name the prices are stored under.
        warmup: leading rows that may be observed but never be a decision row.
    """

    def __init__(
        self,
        prices: object = None,
        *,
        fields: Mapping[str, object] | None = None,
        timestamps: object = None,
        assets: Iterable[Any] | None = None,
        exogenous: Mapping[str, object] | None = None,
        price_field: str = "close",
        warmup: int = 0,
    ) -> None:
        if isinstance(prices, MarketData):
            raise TypeError("prices is already a MarketData; use it directly.")
        if not isinstance(price_field, str):
            raise TypeError(f"price_field must be a str, got {type(price_field).__name__}.")
        extra = named("fields", fields, "a (T, N) array")
        if prices is not None and price_field in extra:
            raise ValueError(f"prices were given twice: as prices= and as fields[{price_field!r}].")
        if prices is None:
            if price_field not in extra:
                raise ValueError(
                    f"no prices: pass prices= or fields[{price_field!r}] (a (T, N) array)."
                )
            prices = extra.pop(price_field)
        panel = _as_panel("prices", prices)
        if np.isinf(panel).any():
            raise ValueError("prices must be finite or NaN (unlisted); got inf.")
        n_rows, n_assets = panel.shape
        if n_rows < 2 or n_assets < 1:
            raise ValueError(f"MarketData needs at least 2 rows and 1 asset, got {panel.shape}.")
        all_fields: dict[str, np.ndarray] = {price_field: _frozen(panel)}
        for name, value in extra.items():
            arr = _as_panel(f"fields[{name!r}]", value, rows=n_rows)
            if arr.shape != panel.shape:
                raise ValueError(
                    f"fields[{name!r}] has shape {arr.shape}, expected the prices' {panel.shape}."
                )
            if np.isinf(arr).any():
                raise ValueError(f"fields[{name!r}] contains inf; use NaN for missing values.")
            if name == "volume" and (arr < 0).any():
                row, column = (int(i) for i in np.argwhere(arr < 0)[0])
                raise ValueError(
                    f"fields['volume'] must be >= 0 (shares traded per step), got "
                    f"{float(arr[row, column])!r} at row {row}, column {column}; use NaN for a "
                    "missing volume."
                )
            all_fields[name] = _frozen(arr)
        self._fields = all_fields
        self._price_field = price_field
        self._timestamps = check_timestamps(timestamps, n_rows)
        self._assets = asset_ids(assets, n_assets)
        bad = panel <= 0  # NaN (unlisted) is not
        if bad.any():
            where = first_at(bad, panel, timestamps=self._timestamps, assets=self._assets)
            raise ValueError(
                f"prices must be > 0 where listed (NaN marks an unlisted asset): found "
                f"{int(bad.sum())} value(s) <= 0 ({where})."
            )
        self._exogenous: dict[str, np.ndarray] = {}
        for name, value in named("exogenous", exogenous, "a (T,) or (T, k) array").items():
            series = real_array(f"exogenous[{name!r}]", value)
            if series.ndim not in (1, 2) or series.shape[0] != n_rows:
                raise ValueError(
                    f"exogenous[{name!r}] must be ({n_rows},) or ({n_rows}, k), "
                    f"got shape {series.shape}."
                )
            if np.isinf(series).any():
                raise ValueError(f"exogenous[{name!r}] contains inf; use NaN for missing values.")
            self._exogenous[name] = _frozen(series)
        if isinstance(warmup, (bool, np.bool_)):
            raise TypeError("warmup must be an int, got bool.")
        if not is_int(warmup) or not 0 <= int(warmup) <= n_rows:
            raise ValueError(f"warmup must be an int in [0, {n_rows}], got {warmup!r}.")
        self._warmup = int(warmup)

    # -- read-only members ---------------------------------------------------------------

    @property
    def prices(self) -> np.ndarray:
        """``(T, N)`` float64 prices (read-only); NaN where an asset is not listed."""
        return self._fields[self._price_field]

    @property
    def mask(self) -> np.ndarray:
        """``(T, N)`` bool: where a price exists."""
        result: np.ndarray = np.isfinite(self.prices)
        return result

    @property
    def fields(self) -> dict[str, np.ndarray]:
        """Every field by name, the prices included."""
        return dict(self._fields)

    @property
    def exogenous(self) -> dict[str, np.ndarray]:
        """Market-wide series by name."""
        return dict(self._exogenous)

    @property
    def timestamps(self) -> np.ndarray:
        """``(T,)`` timestamps: int64, float64 or datetime64[ns]."""
        return self._timestamps

    @property
    def assets(self) -> tuple[Any, ...]:
        """The asset ids, one per column."""
        return self._assets

    @property
    def n_steps(self) -> int:
        """Number of rows ``T``."""
        return int(self._timestamps.shape[0])

    @property
    def n_assets(self) -> int:
        """Number of assets ``N``."""
        return int(self.prices.shape[1])

    @property
    def is_datetime(self) -> bool:
        """Whether the time axis holds datetimes."""
        return self._timestamps.dtype.kind == "M"

    @property
    def warmup(self) -> int:
        """Leading rows that are lookback-only."""
        return self._warmup

    @property
    def price_field(self) -> str:
        """Name of the price field."""
        return self._price_field

    @property
    def periods_per_year(self) -> float | None:
        """Rows per year of a datetime axis with a positive span, else None."""
        if not self.is_datetime:
            return None
        span = (self._timestamps[-1] - self._timestamps[0]) / np.timedelta64(1, "D")
        if span <= 0:
            return None
        return float((self.n_steps - 1) / (float(span) / 365.25))

    def __len__(self) -> int:
        return self.n_steps

    def field(self, name: str) -> np.ndarray:
        """One field's ``(T, N)`` array; ``KeyError`` listing the fields when missing."""
        try:
            return self._fields[name]
        except KeyError:
            raise KeyError(f"no field {name!r}; available: {sorted(self._fields)}") from None

    def exogenous_series(self, name: str) -> np.ndarray:
        """One exogenous series; ``KeyError`` listing the series when missing."""
        try:
            return self._exogenous[name]
        except KeyError:
            raise KeyError(
                f"no exogenous series {name!r}; available: {sorted(self._exogenous)}"
            ) from None

    def exogenous_width(self, name: str) -> int:
        """Columns of an exogenous series (1 for a 1-D series)."""
        series = self.exogenous_series(name)
        return 1 if series.ndim == 1 else int(series.shape[1])

    def log_returns(self) -> np.ndarray:
        """``(T, N)`` log returns; NaN in row 0 and where either price is missing."""
        out = np.full(self.prices.shape, np.nan)
        out[1:] = np.log(self.prices[1:] / self.prices[:-1])
        return out

    def index_of(self, when: object, side: str = "left") -> int:
        """Row of ``when``: an int is a position (negative from the end); a timestamp is
        looked up by value (first row at/after it, or after it with ``side="right"``; ``T`` if
        none)."""
        return self._row(when, side, "index_of() when")

    def _row(self, when: object, side: str, name: str) -> int:
        """``index_of``, with errors calling ``when`` by ``name``."""
        if side not in ("left", "right"):
            raise ValueError(f"side must be 'left' or 'right', got {side!r}.")
        if isinstance(when, (bool, np.bool_)):
            raise TypeError(f"{name} is a bool: neither a row position nor a timestamp.")
        if is_int(when):
            row = int(when)
            n = self.n_steps
            if not -n <= row < n:
                raise IndexError(
                    f"{name}: row {row} is outside the data's {n} rows."
                    + time_hint(row, self._timestamps)
                )
            return int(row + n if row < 0 else row)
        key = self._time_key(when, name)
        return int(np.searchsorted(self._timestamps, key, side=side))  # type: ignore[call-overload]

    def _time_key(self, when: object, name: str) -> Any:
        value = when.value if isinstance(when, Time) else when
        if self.is_datetime:
            if is_real(value):
                raise TypeError(
                    f"{name} is a number ({value!r}) but the time axis holds datetimes; "
                    "pass a date."
                )
            return to_datetime64(value, name)
        if not is_real(value):
            raise TypeError(
                f"{name} must be a number (or Time(number)) on a numeric time axis, got "
                f"{type(value).__name__} {value!r}."
            )
        number = real_float(value)  # a Decimal as a float: NumPy compares it as an object
        if number is None:
            raise ValueError(f"{name} must fit a float64, got {too_large(value)}.")
        if number != number:  # NaN
            raise ValueError(f"{name} must not be NaN.")
        return value if is_int(value) else number

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Unpickled arrays come back writable (a ProcVecEnv worker's copy, say): freeze again.
        self.__dict__.update(state)
        for array in (*self._fields.values(), self._timestamps, *self._exogenous.values()):
            array.flags.writeable = False

    # -- derived data ------------------------------------------------------------------------

    def _take(self, rows: slice | np.ndarray, *, warmup: int, columns: Any = None) -> MarketData:
        new = object.__new__(MarketData)
        cols = slice(None) if columns is None else columns
        new._fields = {k: _frozen(v[rows][:, cols].copy()) for k, v in self._fields.items()}
        new._price_field = self._price_field
        new._timestamps = _frozen(self._timestamps[rows].copy())
        new._assets = self._assets if columns is None else tuple(self._assets[i] for i in columns)
        new._exogenous = {k: _frozen(v[rows].copy()) for k, v in self._exogenous.items()}
        new._warmup = warmup
        if new.n_steps < 2:
            raise ValueError(f"the selection keeps {new.n_steps} rows; at least 2 are needed.")
        return new

    def _rows(self, start: int, stop: int, *, extra_warmup: int = 0) -> MarketData:
        own = max(0, min(self._warmup, stop) - start)
        return self._take(slice(start, stop), warmup=max(own, extra_warmup))

    def __getitem__(self, key: slice) -> MarketData:
        if not isinstance(key, slice):
            raise TypeError("MarketData supports row slicing only, e.g. data[10:200].")
        start, stop, step = key.indices(self.n_steps)
        if step != 1:
            raise ValueError("MarketData slices must have step 1.")
        return self._rows(start, max(start, stop))

    def between(self, start: object = None, end: object = None) -> MarketData:
        """Rows with ``start <= timestamp < end``; ints are row positions."""
        lo = 0 if start is None else self._bound(start, "between() start")
        hi = self.n_steps if end is None else self._bound(end, "between() end")
        return self._rows(lo, max(lo, hi))

    def _bound(self, when: object, name: str) -> int:
        if is_int(when) and int(when) == self.n_steps:
            return self.n_steps
        return self._row(when, "left", name)

    def select(self, assets: Iterable[Any] | Any) -> MarketData:
        """Keep the given assets (in the given order: one id, or a list or tuple of ids; a set
        has no order, ``TypeError``); ``KeyError`` for unknown ids."""
        wanted = id_list("MarketData.select()", "assets", assets)
        lookup = {a: i for i, a in enumerate(self._assets)}
        unknown = [a for a in wanted if a not in lookup]
        if unknown:
            raise KeyError(f"unknown assets {unknown}; available: {list(self._assets)}")
        if not wanted:
            raise ValueError("select() needs at least one asset.")
        repeated = sorted({str(a) for a in wanted if wanted.count(a) > 1})
        if repeated:
            raise ValueError(f"select() takes each asset once; repeated: {repeated}.")
        return self._take(slice(None), warmup=self._warmup, columns=[lookup[a] for a in wanted])

    def with_fields(self, **arrays: object) -> MarketData:
        """A copy with more (or replaced) per-asset fields; ``price_field`` replaces the prices."""
        fields = {k: v for k, v in self._fields.items() if k != self._price_field}
        fields.update(arrays)  # type: ignore[arg-type]
        prices = fields.pop(self._price_field, self.prices)
        return MarketData(
            prices,
            fields=fields,
            timestamps=self._timestamps,
            assets=self._assets,
            exogenous=self._exogenous,
            price_field=self._price_field,
            warmup=self._warmup,
        )

    def with_exogenous(self, **arrays: object) -> MarketData:
        """A copy with more (or replaced) market-wide series."""
        exogenous: dict[str, object] = dict(self._exogenous)
        exogenous.update(arrays)
        fields = {k: v for k, v in self._fields.items() if k != self._price_field}
        return MarketData(
            self.prices,
            fields=fields,
            timestamps=self._timestamps,
            assets=self._assets,
            exogenous=exogenous,
            price_field=self._price_field,
            warmup=self._warmup,
        )

    def fill_gaps(self, limit: int | None = None) -> MarketData:
        """A copy whose gaps (missing prices between two prices of an asset) of at most
        ``limit`` rows (any length: None) carry the last price before them.

        The asset then stays listed through the gap at that price, and the move across the gap
        is earned on the first row it trades again. Market-v0 refuses data with gaps, which it
        would read as a delisting; leading and trailing NaN (not yet listed, delisted) stay.
        """
        if limit is not None:
            limit = check_count("limit", limit, 1, none_ok=True)
        return self.with_fields(**{self._price_field: fill_gaps(self.prices, limit)})

    def _split_point(self, point: object) -> int:
        if is_real(point) and not is_int(point):
            fraction = real_float(point)  # a Decimal's NaN refuses to be compared
            if fraction is None or not 0.0 < fraction < 1.0:
                raise ValueError(f"a fractional split point must be in (0, 1), got {point}.")
            return round(fraction * self.n_steps)
        return self._bound(point, "split() point")

    def split(self, *points: object, embargo: int = 0, history: int = 0) -> list[MarketData]:
        """Cut the rows at ``points`` (fractions, row positions or timestamps).

        Part ``i > 0`` starts ``embargo`` rows after its split point and prepends up to
        ``history`` earlier rows as its warm-up.
        """
        embargo, history = _non_negative("embargo", embargo), _non_negative("history", history)
        if not points:
            raise ValueError("split() needs at least one split point.")
        cuts = [self._split_point(p) for p in points]
        edges = [0, *cuts, self.n_steps]
        parts: list[MarketData] = []
        for i in range(len(edges) - 1):
            begin = edges[i] + (embargo if i > 0 else 0)
            end = edges[i + 1]
            if end - begin < 2:
                rows = f"part {i} with {max(end - begin, 0)} rows"
                if end - edges[i] >= 2:  # the points leave enough rows: the embargo took them
                    raise ValueError(
                        f"embargo={embargo} leaves {rows} (of the {end - edges[i]} rows between "
                        f"its split point and the next); each part needs at least 2 rows after "
                        "its embargo."
                    )
                raise ValueError(
                    f"split points {list(points)} leave {rows}; points must increase and "
                    "leave at least 2 rows per part."
                )
            lo = max(0, begin - history) if i > 0 else begin
            parts.append(self._rows(lo, end, extra_warmup=begin - lo))
        return parts

    def walk_forward(
        self,
        train_size: int,
        test_size: int,
        *,
        step: int | None = None,
        embargo: int = 0,
        history: int = 0,
        expanding: bool = False,
    ) -> Iterator[tuple[MarketData, MarketData]]:
        """Yield ``(train, test)`` folds advancing by ``step`` rows (default ``test_size``)."""
        train_size = check_count("train_size", train_size, 2)
        test_size = check_count("test_size", test_size, 2)
        advance = test_size if step is None else check_count("step", step, 1, none_ok=True)
        embargo, history = _non_negative("embargo", embargo), _non_negative("history", history)
        if not isinstance(expanding, (bool, np.bool_)):
            raise TypeError(
                f"expanding must be True or False, got {type(expanding).__name__} {expanding!r}."
            )
        needed = train_size + embargo + test_size
        if needed > self.n_steps:
            raise ValueError(
                f"walk_forward() has no fold: train_size + embargo + test_size = {needed} rows, "
                f"but the data has {self.n_steps}."
            )
        return self._folds(train_size, test_size, advance, embargo, history, bool(expanding))

    def _folds(
        self,
        train_size: int,
        test_size: int,
        advance: int,
        embargo: int,
        history: int,
        expanding: bool,
    ) -> Iterator[tuple[MarketData, MarketData]]:
        offset = 0
        while True:
            train_end = offset + train_size
            test_begin = train_end + embargo
            test_end = test_begin + test_size
            if test_end > self.n_steps:
                return
            train = self._rows(0 if expanding else offset, train_end)
            lo = max(0, test_begin - history)
            yield train, self._rows(lo, test_end, extra_warmup=test_begin - lo)
            offset += advance

    # -- pandas constructors -----------------------------------------------------------------

    @classmethod
    def from_pandas(
        cls,
        prices: Any,
        *,
        fields: Mapping[str, Any] | None = None,
        exogenous: Any = None,
        price_field: str = "close",
    ) -> MarketData:
        """Build from a prices DataFrame (index = timestamps, columns = assets) or Series.

        ``fields`` (DataFrames) are re-indexed to the prices' index and columns by label,
        ``exogenous`` series to their index: NaN where a label is missing. One with a
        timezone-aware index, a label held twice, or no timestamp (or, for a field, no
        column) in common with the prices raises ``ValueError`` naming it.
        """
        pd = import_pandas("MarketData.from_pandas()")
        frame = prices.to_frame() if isinstance(prices, pd.Series) else prices
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"prices must be a pandas DataFrame or Series, got {type(prices).__name__}."
            )
        index = frame.index
        # the prices' own timestamps and assets first: a label they repeat is theirs to name
        timestamps = check_timestamps(pandas_times(pd, index), len(index))
        assets = asset_ids(pandas_assets(frame.columns), len(frame.columns))
        extra: dict[str, np.ndarray] = {}
        for name, value in named("fields", fields, "a pandas DataFrame").items():
            if not isinstance(value, pd.DataFrame):
                raise TypeError(
                    f"fields[{name!r}] must be a pandas DataFrame (index = timestamps, columns "
                    f"= assets, like the prices), got {type(value).__name__}."
                )
            extra[name] = reindexed(pd, f"fields[{name!r}]", value, index, frame.columns)
        if isinstance(exogenous, pd.Series):
            raise TypeError(
                "exogenous must be a DataFrame (one series per column) or a mapping of name -> "
                "Series/DataFrame, got a Series; pass {name: series} or series.to_frame()."
            )
        if isinstance(exogenous, pd.DataFrame):
            items = {str(c): exogenous[c] for c in exogenous.columns}
            if len(items) != exogenous.shape[1]:
                raise ValueError(
                    f"exogenous column names must be unique, got {list(exogenous.columns)}."
                )
        else:
            items = named("exogenous", exogenous, "a pandas Series or DataFrame")
        exo: dict[str, np.ndarray] = {}
        for name, value in items.items():
            if not isinstance(value, (pd.Series, pd.DataFrame)):
                raise TypeError(
                    f"exogenous[{name!r}] must be a pandas Series or DataFrame (re-indexed to "
                    f"the prices' index), got {type(value).__name__}."
                )
            exo[name] = reindexed(pd, f"exogenous[{name!r}]", value, index)
        return cls(
            pandas_values(pd, frame),
            fields=extra,
            timestamps=timestamps,
            assets=assets,
            exogenous=exo,
            price_field=price_field,
        )

    @classmethod
    def from_long(
        cls,
        df: Any,
        *,
        time: str = "date",
        asset: str = "symbol",
        price: str = "close",
        fields: Iterable[str] = (),
    ) -> MarketData:
        """Build from a long table with one row per time and asset (pivoted)."""
        pd = import_pandas("MarketData.from_long()")
        if not isinstance(df, pd.DataFrame):
            raise TypeError(
                "df must be a pandas DataFrame with one row per time and asset, got "
                f"{type(df).__name__}."
            )
        names = id_list("MarketData.from_long()", "fields", fields, "column name")
        if price in names:
            raise ValueError(f"fields lists the price column {price!r}; it is the prices already.")
        wide, extra = long_to_wide(pd, df, time=time, asset=asset, price=price, fields=names)
        return cls.from_pandas(wide, fields=extra, price_field=price)

    def __repr__(self) -> str:
        ts = self._timestamps
        if self.is_datetime:
            midnight = bool(np.all(ts == ts.astype("datetime64[D]")))
            unit = "D" if midnight else "s"
            first, last = (str(np.datetime_as_string(t, unit=unit)) for t in (ts[0], ts[-1]))  # type: ignore[call-overload]
        else:
            first, last = str(ts[0]), str(ts[-1])
        text = f"MarketData(T={self.n_steps}, N={self.n_assets}, fields={list(self._fields)}"
        text += f", {first} .. {last}"
        if self._exogenous:
            text += f", exogenous={list(self._exogenous)}"
        if self._warmup:
            text += f", warmup={self._warmup}"
        return text + ")"


def _non_negative(name: str, value: object) -> int:
    return check_count(name, value, 0)
