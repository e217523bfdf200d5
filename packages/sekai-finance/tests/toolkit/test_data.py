"""MarketData and Time."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pytest

from sekai.error import MissingDependency
from sekai.finance.data import MarketData, Time


def business_days(n: int = 300) -> np.ndarray:
    return np.busday_offset("2020-01-01", np.arange(n), roll="forward")


def dated(n: int = 300, assets: int = 1) -> MarketData:
    prices = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (n, assets)), 0))
    return MarketData(prices, timestamps=business_days(n))


def test_repr_of_dated_data_shows_range():
    assert repr(dated()) == "MarketData(T=300, N=1, fields=['close'], 2020-01-01 .. 2021-02-23)"


def test_repr_shows_exogenous_and_warmup():
    data = MarketData(np.ones(5), exogenous={"rate": np.zeros(5)}, warmup=2)
    assert (
        repr(data) == "MarketData(T=5, N=1, fields=['close'], 0 .. 4, exogenous=['rate'], warmup=2)"
    )


def test_default_timestamps_and_assets():
    data = MarketData(np.ones((4, 2)))
    assert data.timestamps.dtype == np.int64
    assert data.timestamps.tolist() == [0, 1, 2, 3]
    assert data.assets == ("asset_0", "asset_1")
    assert (data.n_steps, data.n_assets, len(data)) == (4, 2, 4)
    assert not data.is_datetime and data.periods_per_year is None


def test_prices_are_read_only():
    data = MarketData(np.ones(3))
    with pytest.raises(ValueError):
        data.prices[0, 0] = 2.0


def test_nan_marks_unlisted_and_mask_reflects_it():
    data = MarketData([[1.0, np.nan], [2.0, 3.0]])
    assert data.mask.tolist() == [[True, False], [True, True]]


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        ([[1.0], [np.inf]], "finite"),
        ([[1.0], [-1.0]], "> 0"),
        ([[1.0]], "at least 2 rows"),
        (np.ones((2, 2, 2)), "shape"),
    ],
)
def test_bad_prices_are_refused(prices, message):
    with pytest.raises(ValueError, match=message):
        MarketData(prices)


def test_prices_given_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        MarketData(np.ones(3), fields={"close": np.ones(3)})


def test_no_prices_is_refused():
    with pytest.raises(ValueError, match="no prices"):
        MarketData()


def test_fields_must_match_and_refuse_inf():
    with pytest.raises(ValueError, match="shape"):
        MarketData(np.ones((3, 2)), fields={"volume": np.ones((3, 1))})
    with pytest.raises(ValueError, match="inf"):
        MarketData(np.ones(3), fields={"volume": [1.0, np.inf, 1.0]})


def test_field_lookup_lists_available_fields():
    data = MarketData(np.ones(3), fields={"volume": np.ones(3)})
    assert data.field("volume").shape == (3, 1)
    with pytest.raises(KeyError, match="available"):
        data.field("spread")


def test_timestamps_must_increase_and_not_be_nat():
    with pytest.raises(ValueError, match="strictly increasing"):
        MarketData(np.ones(3), timestamps=[0, 2, 1])
    with pytest.raises(ValueError, match="NaT"):
        MarketData(np.ones(2), timestamps=np.array(["2020-01-01", "NaT"], "datetime64[D]"))


def test_timestamps_accept_strings_and_datetimes():
    data = MarketData(np.ones(2), timestamps=["2020-01-01", dt.datetime(2020, 1, 2)])
    assert data.timestamps.dtype == np.dtype("datetime64[ns]")


def test_timezone_aware_timestamps_are_refused_with_hint():
    aware = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    with pytest.raises(ValueError, match="tz_localize"):
        MarketData(np.ones(2), timestamps=[aware, aware + dt.timedelta(days=1)])


def test_warmup_bool_is_a_type_error():
    with pytest.raises(TypeError):
        MarketData(np.ones(3), warmup=True)


def test_periods_per_year_of_business_days_is_about_261():
    assert dated().periods_per_year == pytest.approx(260.6, abs=0.1)


def test_log_returns_are_nan_in_row_zero():
    data = MarketData([1.0, 2.0, 4.0])
    out = data.log_returns()
    assert np.isnan(out[0, 0]) and out[1:, 0] == pytest.approx([np.log(2)] * 2)


def test_index_of_positions_and_timestamps():
    data = dated()
    assert data.index_of(10) == 10 and data.index_of(-1) == 299
    assert data.index_of("2020-03-02") == data.index_of(Time("2020-03-01"))
    assert data.index_of("2020-03-02", side="right") == data.index_of("2020-03-02") + 1
    assert data.index_of("2030-01-01") == 300
    with pytest.raises(TypeError):
        data.index_of(True)


def test_numeric_axis_looks_up_floats_and_time_by_value():
    data = MarketData(np.ones(3), timestamps=[100, 200, 300])
    assert data.index_of(Time(200)) == 1
    assert data.index_of(150.0) == 1
    assert data.index_of(1) == 1  # an int is a row position


def test_slicing_keeps_the_warmup_it_contains():
    data = MarketData(np.ones(10), warmup=4)
    assert data[2:8].warmup == 2
    assert data[5:8].warmup == 0
    with pytest.raises(TypeError):
        data[3]


def test_a_slice_within_the_warmup_is_warmup_to_its_end_and_no_longer():
    data = MarketData(np.ones(10), warmup=10)
    inside = data[2:5]
    assert (inside.warmup, inside.n_steps) == (3, 3)
    assert data.between(0, 4).warmup == 4


def test_between_and_select():
    data = MarketData(np.arange(1.0, 13.0).reshape(6, 2), assets=["a", "b"])
    assert data.between(1, 4).n_steps == 3
    picked = data.select(["b"])
    assert picked.assets == ("b",) and picked.prices[:, 0].tolist() == [2, 4, 6, 8, 10, 12]
    with pytest.raises(KeyError):
        data.select(["c"])


def test_split_with_embargo_and_history_records_warmup():
    train, test = dated().split(0.5, embargo=2, history=5)
    assert train.n_steps == 150 and test.warmup == 5
    assert test.timestamps[5] == dated().timestamps[152]


def test_split_points_must_leave_two_rows():
    with pytest.raises(ValueError, match="at least 2 rows"):
        MarketData(np.ones(10)).split(5, 6)


def test_walk_forward_folds_advance_by_test_size():
    folds = list(MarketData(np.ones(100)).walk_forward(40, 20, history=5))
    assert len(folds) == 3
    assert [f[1].warmup for f in folds] == [5, 5, 5]
    assert folds[1][0].timestamps[0] == 20


@pytest.mark.parametrize(
    ("expanding", "trains"),
    [
        (False, [(5, 0), (5, 3), (5, 6), (5, 9), (5, 12)]),
        (True, [(5, 0), (8, 0), (11, 0), (14, 0), (17, 0)]),
    ],
)
def test_walk_forward_train_folds_slide_or_grow_from_row_0(expanding, trains):
    folds = list(MarketData(np.ones(20)).walk_forward(5, 3, expanding=expanding))
    assert [(train.n_steps, int(train.timestamps[0])) for train, _ in folds] == trains
    assert [(test.n_steps, int(test.timestamps[0])) for _, test in folds] == [
        (3, 5),
        (3, 8),
        (3, 11),
        (3, 14),
        (3, 17),
    ]


def test_a_price_of_zero_is_refused():
    message = (
        "prices must be > 0 where listed (NaN marks an unlisted asset): found 1 value(s) <= 0 "
        "(first at row 1 (timestamp 1), asset 'asset_0': 0.0)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(np.array([100.0, 0.0, 101.0]))
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MarketData(np.array([100.0, 99.0, 101.0])).with_fields(close=np.array([100.0, 0.0, 101.0]))


def test_with_fields_and_exogenous_return_new_objects():
    data = MarketData(np.ones(3))
    more = data.with_fields(volume=np.ones(3)).with_exogenous(rate=np.zeros(3))
    assert "volume" in more.fields and more.exogenous_width("rate") == 1
    assert "volume" not in data.fields


def test_with_fields_and_with_exogenous_keep_what_the_data_had():
    data = MarketData(np.ones(3), fields={"spread": np.full(3, 0.1)}, exogenous={"vix": [1, 2, 3]})
    more = data.with_exogenous(rate=np.zeros(3)).with_fields(volume=np.ones(3))
    assert sorted(more.exogenous) == ["rate", "vix"]
    assert more.exogenous_series("vix").tolist() == [1.0, 2.0, 3.0]
    assert sorted(more.fields) == ["close", "spread", "volume"]


def test_counts_beyond_int64_are_refused_naming_the_argument():
    data = MarketData(np.ones(3))
    assert data.fill_gaps(limit=2**63 - 1).n_steps == 3
    with pytest.raises(
        ValueError, match=r"^limit must be an int >= 1 or None that fits in 64 bits"
    ):
        data.fill_gaps(limit=2**63)


def test_a_negative_volume_is_refused_naming_where():
    volume = np.ones((3, 2))
    volume[1, 1] = -0.5
    with pytest.raises(
        ValueError, match=r"fields\['volume'\] must be >= 0 .* got -0.5 at row 1, column 1"
    ):
        MarketData(np.ones((3, 2)), fields={"volume": volume})


def test_from_pandas_without_pandas_names_the_extra():
    try:
        import pandas
    except ImportError:
        with pytest.raises(MissingDependency, match=r"sekai-finance\[pandas\]"):
            MarketData.from_pandas(object())
    else:
        frame = pandas.DataFrame(
            {"x": [1.0, 2.0]}, index=pandas.to_datetime(["2020-01-01", "2020-01-02"])
        )
        assert MarketData.from_pandas(frame).is_datetime


PANEL = np.linspace(100.0, 110.0, 10)[:, None] * np.ones((1, 2))  # 10 rows, 2 assets
PANEL_DATA = MarketData(PANEL)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: MarketData(PANEL_DATA),
            TypeError,
            "prices is already a MarketData; use it directly.",
        ),
        (
            lambda: MarketData(PANEL, price_field=3),
            TypeError,
            "price_field must be a str, got int.",
        ),
        (
            lambda: MarketData(PANEL, fields={"close": PANEL}),
            ValueError,
            "prices were given twice: as prices= and as fields['close'].",
        ),
        (
            lambda: MarketData(PANEL, fields={"volume": np.ones((9, 2))}),
            ValueError,
            "fields['volume'] has 9 rows, expected 10 (one per timestamp).",
        ),
        (
            lambda: MarketData(PANEL, exogenous={"r": np.ones(9)}),
            ValueError,
            "exogenous['r'] must be (10,) or (10, k), got shape (9,).",
        ),
        (
            lambda: MarketData(PANEL, exogenous={"r": np.r_[np.inf, np.ones(9)]}),
            ValueError,
            "exogenous['r'] contains inf; use NaN for missing values.",
        ),
        (
            lambda: MarketData(PANEL, warmup=11),
            ValueError,
            "warmup must be an int in [0, 10], got 11.",
        ),
        (
            lambda: PANEL_DATA.index_of(3, side="middle"),
            ValueError,
            "side must be 'left' or 'right', got 'middle'.",
        ),
        (
            lambda: PANEL_DATA[9:10],
            ValueError,
            "the selection keeps 1 rows; at least 2 are needed.",
        ),
        (lambda: PANEL_DATA[::2], ValueError, "MarketData slices must have step 1."),
        (lambda: PANEL_DATA.select([]), ValueError, "select() needs at least one asset."),
        (
            lambda: PANEL_DATA.split(1.5),
            ValueError,
            "a fractional split point must be in (0, 1), got 1.5.",
        ),
        (lambda: PANEL_DATA.split(), ValueError, "split() needs at least one split point."),
        (
            lambda: MarketData.from_pandas(PANEL),
            TypeError,
            "prices must be a pandas DataFrame or Series, got ndarray.",
        ),
        (
            lambda: MarketData(PANEL, assets=["a"]),
            ValueError,
            "assets has 1 ids for 2 price columns.",
        ),
        (
            lambda: MarketData(PANEL, assets=[1, "1"]),
            ValueError,
            "asset ids must be unique, got [1, '1'].",
        ),
    ],
    ids=lambda value: None if callable(value) or isinstance(value, type) else value[:40],
)
def test_bad_arguments_are_refused_naming_them(call, error, message):
    if error is TypeError and "pandas" in message:
        pytest.importorskip("pandas")
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_an_unknown_exogenous_series_is_a_key_error_listing_the_series():
    data = MarketData(PANEL, exogenous={"rate": np.zeros(10)})
    with pytest.raises(KeyError) as caught:
        data.exogenous_series("x")
    assert caught.value.args == ("no exogenous series 'x'; available: ['rate']",)


def test_the_prices_may_be_a_named_field():
    data = MarketData(fields={"px": PANEL}, price_field="px")
    assert data.price_field == "px"
    np.testing.assert_array_equal(data.prices, PANEL)


def test_between_takes_the_row_count_as_an_end_past_the_last_row():
    tail = PANEL_DATA.between(3, 10)
    assert tail.timestamps.tolist() == [3, 4, 5, 6, 7, 8, 9]
    assert PANEL_DATA.between(0, 10).n_steps == 10


def test_time_validates_and_reprs():
    assert repr(Time(1700000000)) == "Time(1700000000)"
    assert Time(np.int64(5)).value == 5 and isinstance(Time(np.int64(5)).value, int)
    with pytest.raises(TypeError):
        Time(True)
    with pytest.raises(TypeError):
        Time(object())
    with pytest.raises(AttributeError):
        Time(1).value = 2  # type: ignore[misc]
