"""Bad input to MarketData and Time: a TypeError/ValueError naming the argument and what it
takes, never a bare internal error or a silent conversion (finance.md §3, §5)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import sekai
from sekai.envs.finance import TradingEnv
from sekai.finance.data import MarketData, Time
from sekai.finance.timestamps import TZ_HINT

pd = pytest.importorskip("pandas")

WALK = np.linspace(100.0, 110.0, 50)
DAYS = pd.bdate_range("2021-01-04", periods=50)
FRAME = pd.DataFrame({"a": WALK}, index=DAYS)
LONG = pd.DataFrame(
    {
        "date": [1, 1, 2, 2],
        "symbol": ["a", "b", "a", "b"],
        "close": [1.0, 2.0, 3.0, 4.0],
        "volume": [10, 20, 30, 40],
    }
)


# 1. fields / exogenous must be mappings of str names


@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_a_non_mapping_fields_or_exogenous_is_refused(argument):
    with pytest.raises(TypeError, match=rf"{argument} must be a mapping of name -> .*got list"):
        MarketData(WALK, **{argument: [1, 2]})


@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_non_str_names_are_refused_rather_than_merged(argument):
    with pytest.raises(TypeError, match=rf"{argument} must map str names, got a int key 1"):
        MarketData(WALK, **{argument: {1: WALK, "1": WALK}})


# 2. from_pandas fields / exogenous


def test_from_pandas_refuses_a_series_as_exogenous():
    with pytest.raises(TypeError, match=r"exogenous must be a DataFrame .*got a Series"):
        MarketData.from_pandas(FRAME, exogenous=FRAME["a"])


def test_from_pandas_refuses_non_pandas_fields_and_exogenous_values():
    with pytest.raises(TypeError, match=r"fields\['volume'\] must be a pandas DataFrame.*int"):
        MarketData.from_pandas(FRAME, fields={"volume": 5})
    with pytest.raises(TypeError, match=r"exogenous\['rate'\] must be a pandas Series.*int"):
        MarketData.from_pandas(FRAME, exogenous={"rate": 5})
    with pytest.raises(TypeError, match="fields must be a mapping"):
        MarketData.from_pandas(FRAME, fields=[FRAME])


@pytest.mark.parametrize(
    ("value", "message"), [(FRAME.astype(str), "got strings"), (FRAME > 0, "not bools")]
)
def test_from_pandas_fields_and_exogenous_are_not_cast_to_float(value, message):
    with pytest.raises(TypeError, match=rf"fields\['volume'\] must be real numbers, {message}"):
        MarketData.from_pandas(FRAME, fields={"volume": value})
    with pytest.raises(TypeError, match=rf"exogenous\['x'\] must be real numbers, {message}"):
        MarketData.from_pandas(FRAME, exogenous={"x": value["a"]})


def test_from_pandas_refuses_duplicate_exogenous_columns():
    exogenous = pd.DataFrame(np.ones((50, 2)), index=DAYS, columns=["x", "x"])
    with pytest.raises(ValueError, match="exogenous column names must be unique"):
        MarketData.from_pandas(FRAME, exogenous=exogenous)


# A field or exogenous series is re-indexed to the prices' timestamps and assets by label:
# one that shares none of them (a time zone, another time of day, date strings, another
# column label) would be all NaN, and is refused naming what it has and what the prices have.

PANEL = pd.DataFrame({"a": WALK, "b": WALK + 1.0}, index=DAYS)


@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_from_pandas_refuses_a_timezone_aware_field_or_exogenous_index(argument):
    aware = PANEL.tz_localize("America/New_York")
    value = aware if argument == "fields" else aware["a"]
    message = f"{argument}['x']: {TZ_HINT}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_pandas(PANEL, **{argument: {"x": value}})


@pytest.mark.parametrize(
    ("index", "shown"),
    [
        (DAYS + pd.Timedelta("16h"), r"\[Timestamp\('2021-01-04 16:00:00'\), .*, \.\.\.\]"),
        (DAYS.strftime("%Y-%m-%d"), r"\['2021-01-04', '2021-01-05', '2021-01-06', \.\.\.\]"),
    ],
    ids=["time-of-day", "strings"],
)
@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_from_pandas_refuses_a_field_or_exogenous_sharing_no_timestamp(argument, index, shown):
    moved = PANEL.set_axis(index)
    value = moved if argument == "fields" else moved["a"]
    prices = r"\[Timestamp\('2021-01-04 00:00:00'\), .*, \.\.\.\]"
    with pytest.raises(
        ValueError,
        match=rf"^{argument}\['x'\] shares no timestamp with the prices: its index starts "
        rf"{shown}, the prices' index starts {prices}; re-indexed .* all NaN\.$",
    ):
        MarketData.from_pandas(PANEL, **{argument: {"x": value}})


def test_from_pandas_refuses_a_field_sharing_no_asset():
    # a one-ticker file: the prices' asset is the "Close" column, the volume's is "Volume"
    table = pd.DataFrame({"Close": WALK, "Volume": WALK * 1e4}, index=DAYS)
    message = (
        "fields['volume'] shares no asset with the prices: its columns are ['Volume'], the "
        "prices' columns are ['Close']; re-indexed to the prices' columns by label, it would "
        "be all NaN."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_pandas(table["Close"], fields={"volume": table[["Volume"]]})
    with pytest.raises(
        ValueError, match=r"its columns are \['A', 'B'\], the prices' .*\['a', 'b'\]"
    ):
        MarketData.from_pandas(PANEL, fields={"volume": PANEL.rename(columns=str.upper)})
    data = MarketData.from_pandas(
        table["Close"], fields={"volume": table[["Volume"]].set_axis(["Close"], axis=1)}
    )
    assert data.field("volume")[:, 0].tolist() == (WALK * 1e4).tolist()


def test_from_pandas_keeps_a_partial_overlap_as_the_reindex_gives_it():
    volume = pd.DataFrame({"b": np.arange(40.0), "z": 1.0}, index=DAYS[10:])
    data = MarketData.from_pandas(PANEL, fields={"volume": volume})
    assert np.isnan(data.field("volume")[:10]).all() and np.isnan(data.field("volume")[:, 0]).all()
    assert data.field("volume")[10:, 1].tolist() == list(np.arange(40.0))
    data = MarketData.from_pandas(PANEL, exogenous={"rate": volume["b"]})
    assert np.isnan(data.exogenous_series("rate")[:10]).all()


# The overlap is pandas' own label matching: a DatetimeIndex matches the date strings or
# datetime.date objects of the prices' index (prices read from a CSV without parse_dates,
# or index.date), so the re-index fills it and nothing is refused.
STRING_DAYS = DAYS.strftime("%Y-%m-%d")
DATE_DAYS = pd.Index(list(DAYS.date), dtype=object)


@pytest.mark.filterwarnings("ignore:.*datetime.date:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:.*datetime.date:FutureWarning")
@pytest.mark.parametrize("prices_index", [STRING_DAYS, DATE_DAYS], ids=["strings", "dates"])
@pytest.mark.parametrize("start", [0, 10], ids=["whole", "partial"])
def test_from_pandas_takes_a_datetime_field_and_exogenous_that_pandas_matches(prices_index, start):
    prices = PANEL.set_axis(prices_index)
    volume = PANEL.iloc[start:] * 100.0  # DatetimeIndex
    data = MarketData.from_pandas(
        prices, fields={"volume": volume}, exogenous={"rate": volume["b"]}
    )
    assert np.isnan(data.field("volume")[:start]).all()
    assert data.field("volume")[start:].tolist() == (PANEL.to_numpy()[start:] * 100.0).tolist()
    assert np.isnan(data.exogenous_series("rate")[:start]).all()
    assert data.exogenous_series("rate")[start:].tolist() == ((WALK[start:] + 1.0) * 100.0).tolist()


@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_from_pandas_refuses_a_repeated_timestamp_in_a_field_or_exogenous(argument):
    repeated = pd.concat([PANEL, PANEL.iloc[:1]])
    value = repeated if argument == "fields" else repeated["a"]
    message = (
        f"{argument}['x'] has more than one row for the timestamp "
        "Timestamp('2021-01-04 00:00:00'); keep one row per timestamp, as the prices do."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_pandas(PANEL, **{argument: {"x": value}})


def test_from_pandas_refuses_a_repeated_column_in_a_field():
    message = (
        "fields['x'] has more than one column 'a'; keep one column per asset, as the prices do."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_pandas(PANEL, fields={"x": pd.concat([PANEL, PANEL["a"]], axis=1)})


# The prices' own repeated timestamp or asset is named as theirs, before any field or
# exogenous series on the same labels is looked at.


@pytest.mark.parametrize("argument", ["fields", "exogenous"])
def test_from_pandas_names_the_prices_own_repeated_timestamp_or_asset(argument):
    repeated = PANEL.set_axis(DAYS[[0, 1, 1, *range(3, 50)]])
    value = repeated if argument == "fields" else repeated["a"]
    message = (
        "timestamps must be strictly increasing: row 2 (2021-01-05T00:00:00.000000000) repeats "
        "row 1 (2021-01-05T00:00:00.000000000)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_pandas(repeated, **{argument: {"x": value}})
    twice = PANEL.set_axis(["a", "a"], axis=1)
    value = twice if argument == "fields" else twice.iloc[:, 0]
    with pytest.raises(ValueError, match=re.escape("asset ids must be unique, got ['a', 'a']")):
        MarketData.from_pandas(twice, **{argument: {"x": value}})


# 3. from_long

UNORDERED = (
    "must be given in order, got a {} of 2 items, which has no order; pass a list or tuple in "
    "the order wanted."
)


def test_from_long_names_missing_columns():
    with pytest.raises(ValueError, match=r"no column\(s\) \['px', 'vol'\]"):
        MarketData.from_long(LONG, price="px", fields=["vol"])


def test_from_long_names_duplicated_rows():
    with pytest.raises(ValueError, match=r"more than one row for 1 \(date, symbol\).*'1', 'a'"):
        MarketData.from_long(pd.concat([LONG, LONG.iloc[:1]]))


def test_from_long_takes_a_dataframe():
    with pytest.raises(TypeError, match=r"df must be a pandas DataFrame.*got ndarray"):
        MarketData.from_long(LONG.to_numpy())


def test_from_long_fields_one_name_or_names():
    data = MarketData.from_long(LONG, fields="volume")
    assert data.field("volume").tolist() == [[10.0, 20.0], [30.0, 40.0]]
    with pytest.raises(TypeError, match="fields takes one column name or an iterable"):
        MarketData.from_long(LONG, fields=5)
    with pytest.raises(ValueError, match="price column 'close'"):
        MarketData.from_long(LONG, fields=["close"])


@pytest.mark.parametrize("unordered", [set, frozenset])
def test_from_long_refuses_unordered_fields(unordered: type) -> None:
    with pytest.raises(TypeError) as info:
        MarketData.from_long(LONG, fields=unordered(["volume", "spread"]))
    assert str(info.value) == "MarketData.from_long(): fields " + UNORDERED.format(
        unordered.__name__
    )


# 4. select and asset ids


def test_select_says_what_it_takes():
    data = MarketData(np.ones((3, 2)))
    with pytest.raises(
        TypeError, match=r"^MarketData\.select\(\): assets takes one asset id or an iterable"
    ):
        data.select(None)
    with pytest.raises(TypeError, match="each asset id in assets must be hashable"):
        data.select([["asset_0"]])


def test_assets_is_one_id_or_an_iterable_of_ids():
    assert MarketData(WALK, assets="SPY").assets == ("SPY",)
    with pytest.raises(TypeError, match="assets takes one asset id or an iterable"):
        MarketData(WALK, assets=5)


@pytest.mark.parametrize("unordered", [set, frozenset])
def test_select_refuses_unordered_assets(unordered: type) -> None:
    data = MarketData(np.ones((3, 3)), assets=["a", "b", "c"])
    with pytest.raises(TypeError) as info:
        data.select(unordered(["c", "a"]))
    expected = "MarketData.select(): assets " + UNORDERED.format(unordered.__name__)
    assert str(info.value) == expected
    assert data.select({"c": 0, "a": 1}.keys()).assets == ("c", "a")
    assert data.select(a for a in "ca").assets == ("c", "a")


@pytest.mark.parametrize("unordered", [set, frozenset])
def test_assets_refuses_an_unordered_collection(unordered: type) -> None:
    with pytest.raises(TypeError) as info:
        MarketData(np.ones((3, 2)), assets=unordered(["A", "B"]))
    assert str(info.value) == "MarketData: assets " + UNORDERED.format(unordered.__name__)
    assert MarketData(np.ones((3, 2)), assets=iter(["B", "A"])).assets == ("B", "A")


# 5. Time


def test_time_refuses_a_number_too_large_for_a_float():
    with pytest.raises(ValueError, match=r"Time\(\) takes a number that fits a float64"):
        Time(10**400)


# 6. strings are not prices


@pytest.mark.parametrize("kind", [str, lambda x: str(x).encode()])
def test_an_object_array_of_strings_is_not_prices(kind):
    with pytest.raises(TypeError, match="prices must be real numbers"):
        MarketData(np.array([kind(x) for x in WALK], dtype=object))


@pytest.mark.parametrize("index", [None, DAYS])
def test_trading_env_refuses_a_series_of_strings(index):
    with pytest.raises(TypeError, match="prices must be real numbers"):
        TradingEnv(prices=pd.Series([str(x) for x in WALK], index=index))


# 7. timestamps and look-ups


@pytest.mark.parametrize("timestamps", [5, "2020-01-01", b"\x05\x07"])
def test_timestamps_must_be_a_sequence(timestamps):
    with pytest.raises(TypeError, match="timestamps must be a sequence of 2"):
        MarketData(WALK[:2], timestamps=timestamps)


def test_numbers_in_an_object_array_stay_numbers():
    data = MarketData.from_pandas(pd.DataFrame({"a": WALK[:3]}, index=pd.Index([5, 6, 7], object)))
    assert data.timestamps.dtype == np.int64 and data.timestamps.tolist() == [5, 6, 7]


def test_numbers_and_dates_do_not_mix():
    with pytest.raises(TypeError, match=r"timestamps\[0\] must be a date string.*got int 1"):
        MarketData(WALK[:2], timestamps=[1, "2020-01-01"])


def test_dates_outside_the_ns_range_are_refused_not_wrapped():
    years = np.array(["2020-01-01", "3000-01-01"], "datetime64[D]")
    with pytest.raises(ValueError, match=r"timestamps holds a date outside the datetime64\[ns\]"):
        MarketData(WALK[:2], timestamps=years)
    with pytest.raises(ValueError, match=r"timestamps\[1\] holds a date outside"):
        MarketData(WALK[:2], timestamps=["2020-01-01", "3000-01-01"])


def test_uint64_timestamps_beyond_int64_are_refused():
    with pytest.raises(ValueError, match="too large for an int64"):
        MarketData(WALK[:2], timestamps=np.array([2**63, 2**63 + 1], np.uint64))


@pytest.mark.parametrize(
    ("timestamps", "message"),
    [
        (
            [2**63 + i for i in range(4)],
            r"timestamps\[0\] is 9223372036854775808, an integer too large",
        ),
        # distinct, but equal as float64s: not a false "repeats"
        (
            [2**64 + i for i in range(4)],
            r"timestamps\[0\] is 18446744073709551616, an integer too large",
        ),
        # distinct as float64s too: not accepted rounded
        (
            [0, 1, 2, 2**64 + 2**20],
            r"timestamps\[3\] is 18446744073710600192, an integer too large",
        ),
        ([-(2**63) - 1, 0, 1, 2], r"timestamps\[0\] is -9223372036854775809, an integer too small"),
        (
            [0, 1, 2, 10**400],
            r"timestamps\[3\] is 100000000000\.\.\. \(401 digits\), an integer too large",
        ),
    ],
)
def test_int_timestamps_beyond_int64_in_a_list_are_refused_naming_the_row(timestamps, message):
    with pytest.raises(ValueError, match=rf"^{message} for an int64 \(timestamps are int64"):
        MarketData(np.linspace(100, 110, 4), timestamps=timestamps)


def test_lookups_name_the_argument():
    numeric, dated = MarketData(WALK), MarketData.from_pandas(FRAME)
    with pytest.raises(TypeError, match=r"^between\(\) start must be a number"):
        numeric.between("x")
    with pytest.raises(
        IndexError, match=r"^between\(\) end: row 60 is outside the data's 50 rows\.$"
    ):
        numeric.between(end=60)  # 0..49 are the timestamps too: no Time() hint
    with pytest.raises(TypeError, match=r"^between\(\) start is a number"):
        dated.between(start=5.0)
    with pytest.raises(TypeError, match=r"^index_of\(\) when: cannot read 'x' as a timestamp"):
        dated.index_of("x")
    with pytest.raises(TypeError, match=r"^split\(\) point must be"):
        numeric.split(None)
    with pytest.raises(ValueError, match=r"^index_of\(\) when must not be NaN"):
        numeric.index_of(float("nan"))


EPOCH = 1_700_000_000 + 86_400 * np.arange(50)  # epoch seconds, one a day


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda data, t: data.split(t), "split() point"),
        (lambda data, t: data.between(t), "between() start"),
        (lambda data, t: data.between(end=t), "between() end"),
        (lambda data, t: data.index_of(t), "index_of() when"),
    ],
    ids=["split", "between-start", "between-end", "index_of"],
)
def test_an_int_timestamp_taken_as_a_row_says_to_pass_time(call, name):
    data = MarketData(WALK, timestamps=EPOCH)
    t = int(EPOCH[20])
    message = (
        f"{name}: row {t} is outside the data's 50 rows. An int is a row position; for the "
        f"timestamp {t} pass Time({t})."
    )
    with pytest.raises(IndexError, match=f"^{re.escape(message)}$"):
        call(data, t)
    call(data, Time(t))  # as the hint says
    assert data.index_of(Time(t)) == 20
    beyond = int(EPOCH[-1]) + 1  # no timestamp: no hint
    with pytest.raises(IndexError, match=rf"row {beyond} is outside the data's 50 rows\.$"):
        call(data, beyond)


def test_any_real_non_int_split_point_is_a_fraction():
    assert [len(part) for part in MarketData(WALK).split(np.float32(0.5))] == [25, 25]


def test_walk_forward_checks_its_arguments_when_called():
    with pytest.raises(TypeError, match="train_size must be an int >= 2, got NoneType"):
        MarketData(WALK).walk_forward(None, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="train_size must be an int >= 2, got bool"):
        MarketData(WALK).walk_forward(True, 5)
    with pytest.raises(ValueError, match="test_size must be an int >= 2, got 1"):
        MarketData(WALK).walk_forward(10, 1)
    with pytest.raises(TypeError, match="expanding must be True or False"):
        MarketData(WALK).walk_forward(10, 5, expanding="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"no fold: train_size \+ embargo \+ test_size = 52"):
        MarketData(WALK).walk_forward(40, 10, embargo=2)  # 50 rows
    with pytest.raises(TypeError, match="embargo must be an int >= 0, got bool"):
        MarketData(WALK).split(0.5, embargo=True)


def test_samplers_and_rewards_refuse_arguments_of_the_wrong_type():
    from sekai.finance.rewards import DifferentialSharpe, MeanVariance
    from sekai.finance.sampling import FixedStart, SequentialStart

    for make, match in [
        (lambda: SequentialStart(True), "start must be an int >= 0, got bool"),
        (lambda: SequentialStart(0, 2.0), "stride must be an int >= 1 or None, got float"),
        (lambda: FixedStart(1.0), "start must be an int >= 0, got float"),
        (lambda: MeanVariance("1"), "risk_aversion must be a finite number >= 0, got str"),
        (lambda: DifferentialSharpe(True), r"eta must be a number in \(0, 1\), got bool"),
    ]:
        with pytest.raises(TypeError, match=match):
            make()
    with pytest.raises(ValueError, match="start must be an int >= 0, got -1"):
        FixedStart(-1)


def test_a_numpy_timedelta_is_neither_a_row_nor_a_time():
    span = np.timedelta64(5, "D")
    with pytest.raises(TypeError, match=r"Time\(\) takes a number or a datetime-like value"):
        Time(span)
    with pytest.raises(TypeError, match="when must be a number"):
        MarketData(WALK).index_of(span)


def test_nullable_pandas_columns_give_nan_for_missing_values() -> None:
    pd = pytest.importorskip("pandas")
    index = pd.bdate_range("2020-01-01", periods=10)
    prices = pd.DataFrame(100.0 + np.arange(20).reshape(10, 2), index=index, columns=["a", "b"])
    volume = prices.astype("Float64").mask(prices > 118)
    data = MarketData.from_pandas(prices, fields={"volume": volume})
    assert np.isnan(data.field("volume")[-1, 1]) and data.field("volume")[-1, 0] == 118.0
    long = pd.DataFrame(
        {
            "date": list(index) * 2,
            "symbol": ["a"] * 10 + ["b"] * 10,
            "close": np.r_[np.arange(10) + 100.0, np.arange(10) + 50.0],
            "volume": pd.array([*range(10), None, *range(9)], dtype="Int64"),
        }
    )
    assert np.isnan(MarketData.from_long(long, fields=["volume"]).field("volume")[0, 1])


# 4. a missing asset id is refused, never made an asset


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_from_long_refuses_rows_without_an_asset_id(missing):
    table = LONG.assign(symbol=["a", missing, "a", "b"])
    with pytest.raises(
        ValueError, match=r"df\['symbol'\] is missing \(None or NaN\) in 1 row\(s\), index \[1\]"
    ):
        MarketData.from_long(table)


@pytest.mark.parametrize("missing", [None, np.nan, float("nan"), pd.NA])
def test_assets_refuse_a_missing_id(missing):
    with pytest.raises(
        ValueError, match=r"assets has a missing id \(None or NaN\) at position\(s\) \[1\]"
    ):
        MarketData(np.ones((3, 2)), assets=["a", missing])


def test_from_pandas_refuses_a_missing_column_label():
    frame = pd.DataFrame(np.ones((3, 2)), columns=["a", None])
    with pytest.raises(ValueError, match=r"missing id .* position\(s\) \[1\]"):
        MarketData.from_pandas(frame)


def test_from_long_refuses_rows_without_a_time():
    table = LONG.assign(date=pd.to_datetime(["2021-01-04", None, "2021-01-05", "2021-01-05"]))
    message = (
        "df['date'] is missing (None, NaN or NaT) in 1 row(s), index [1]; every row needs a "
        "time: drop or fill those rows."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData.from_long(table)
    with pytest.raises(
        ValueError, match=r"df\['date'\] is missing .* in 2 row\(s\), index \[0, 3\]"
    ):
        MarketData.from_long(LONG.assign(date=[np.nan, 1.0, 2.0, np.nan]))


def test_nat_timestamps_are_refused_at_their_positions():
    times = np.array(["2020-01-01", "NaT", "2020-01-03", "NaT"], "datetime64[D]")
    message = "timestamps must not contain NaT, got 2 at position(s) [1, 3]."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(np.ones(4), timestamps=times)
    many = np.full(8, np.datetime64("NaT"), "datetime64[D]")
    with pytest.raises(ValueError, match=re.escape("got 8 at position(s) [0, 1, 2, 3, 4, ...].")):
        MarketData(np.ones(8), timestamps=many)


# 5. a bad value is located: row, timestamp, asset and value


def test_a_non_positive_price_is_located():
    prices = np.ones((5, 2))
    prices[3, 1] = -2.0
    with pytest.raises(
        ValueError,
        match=r"found 1 value\(s\) <= 0 \(first at row 3 \(timestamp 13\), asset 'y': -2\.0\)",
    ):
        MarketData(prices, timestamps=np.arange(10, 15), assets=["x", "y"])


@pytest.mark.parametrize(
    ("timestamps", "message"),
    [
        ([0, 1, 3, 2, 4], r"row 3 \(2\) comes before row 2 \(3\)"),
        ([0, 1, 2, 2, 4], r"row 3 \(2\) repeats row 2 \(2\)"),
    ],
)
def test_timestamps_out_of_order_are_located(timestamps, message):
    with pytest.raises(ValueError, match=rf"timestamps must be strictly increasing: {message}"):
        MarketData(np.ones(5), timestamps=timestamps)


def test_a_pandas_index_out_of_order_is_located():
    frame = FRAME.iloc[[0, 2, 1, *range(3, 50)]]
    with pytest.raises(ValueError, match=r"row 2 \(2021-01-05.*\) comes before row 1 \(2021-01-06"):
        MarketData.from_pandas(frame)


def test_a_missing_price_in_a_panel_for_a_complete_env_is_located():
    prices = np.ones((50, 2))
    prices[7, 1] = np.nan
    data = MarketData(prices, timestamps=np.arange(100, 150), assets=["x", "y"])
    with pytest.raises(
        ValueError, match=r"1 place\(s\) \(first at row 7 \(timestamp 107\), asset 'y': nan\)"
    ):
        sekai.make("Portfolio-v0", data=data)


def test_a_bad_price_given_as_prices_is_located():
    prices = np.ones((50, 2))
    prices[7, 1] = 0.0
    with pytest.raises(ValueError, match=r"\(first at row 7, column 1: 0\.0\)"):
        sekai.make("Portfolio-v0", prices=prices)


# 6. split() names the embargo that empties a part


def test_split_names_the_embargo_that_empties_a_part():
    with pytest.raises(ValueError, match=r"embargo=60 leaves part 1 with 0 rows \(of the 50 rows"):
        MarketData(np.arange(1.0, 101)).split(0.5, embargo=60)
    with pytest.raises(ValueError, match=r"split points \[5, 6\] leave part 1 with 1 rows"):
        MarketData(np.ones(10)).split(5, 6, embargo=0)
