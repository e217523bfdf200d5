"""The reusable charts of sekai.finance.rendering: formatting, tracks, layout, custom dashboards."""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pytest

from sekai.finance.lob import OrderBook, Side
from sekai.finance.rendering import (
    AreaChart,
    BarChart,
    Chart,
    Column,
    Dashboard,
    DrawContext,
    LineChart,
    OrderBookChart,
    PriceChart,
    Row,
    Series,
    Stat,
    UniverseChart,
    book as book_module,
    chart as chart_module,
    dashboard as dashboard_module,
)
from sekai.finance.rendering._format import (
    format_number,
    format_pct,
    format_price,
    format_ticks,
    nice_ticks,
    plain,
)
from sekai.finance.rendering._paint import dashed, fill_between, mix, resolve_color
from sekai.finance.rendering.chart import Track, layout
from sekai.rendering import Canvas, Theme


class Ticker:
    """A minimal stand-in env: what a custom dashboard reads."""

    def __init__(self) -> None:
        self.elapsed_steps = 0
        self.price = 100.0
        self.position = 0.0
        self.weights = np.array([0.0, 0.0, 1.0])

    def advance(self, price: float, position: float) -> None:
        self.elapsed_steps += 1
        self.price, self.position = price, position
        self.weights = np.array([position / 2, position / 2, 1 - position])


def test_nice_ticks_are_round_and_inside_the_range() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(96.3, 114.9) == [100.0, 105.0, 110.0]
    assert nice_ticks(3.0, 3.0) == [3.0]


def test_tick_labels_use_as_few_decimals_as_tell_them_apart() -> None:
    assert format_ticks([9997.5, 10000.0, 10002.5]) == ["9997.5", "10000.0", "10002.5"]
    assert format_ticks([0.0, 500_000.0, 1_000_000.0]) == ["0", "0.5M", "1.0M"]
    assert format_ticks([0.0, 0.25, 0.5], kind="pct") == ["0%", "25%", "50%"]
    assert format_ticks([0.95, 1.0, 1.05]) == ["0.95", "1.00", "1.05"]


def test_values_format_for_people() -> None:
    assert format_pct(0.0432, signed=True) == "+4.32%"
    assert format_pct(-0.0432) == "−4.32%"
    assert format_price(10006.5) == "10006.50"
    assert plain("Avellaneda–Stoikov") == "Avellaneda-Stoikov"


def test_a_track_replaces_a_step_drawn_twice_and_restarts_when_time_goes_back() -> None:
    track: Track[float] = Track()
    for step, value in [(0, 1.0), (1, 2.0), (1, 2.5), (2, 3.0)]:
        track.put(step, value)
    assert (track.steps, track.values) == ([0, 1, 2], [1.0, 2.5, 3.0])
    track.trim(1)
    assert track.visible(2) == ([2], [3.0])
    track.put(0, 9.0)
    assert (track.steps, track.values) == ([0], [9.0])


def test_layout_splits_boxes_by_weight() -> None:
    a, b, c = (LineChart([Series("price")]) for _ in range(3))
    a.width = 3.0
    placed = {
        id(chart): box
        for chart, box in layout(Column(Row(a, b), c, height=1.0), (0, 0, 410, 210), gap=10)
    }
    assert placed[id(a)] == (0, 0, 300.0, 100.0)
    assert placed[id(b)] == (310.0, 0, 410.0, 100.0)
    assert placed[id(c)] == (0, 110.0, 410, 210.0)


def test_layouts_and_charts_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="at least one chart"):
        Row()
    with pytest.raises(TypeError, match="holds charts"):
        Row(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="width"):
        Row(LineChart([Series("price")]), width=0)
    with pytest.raises(TypeError, match="attribute name"):
        PriceChart(3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_trade"):
        PriceChart("price", min_trade=-1.0)
    for bad in (np.nan, True, "0"):
        with pytest.raises(ValueError, match=r"^min_trade must be a number >= 0"):
            PriceChart("price", min_trade=bad)
    for weight in (np.float32(2.0), Decimal("2"), np.array(2.0)):  # refused as no int or float
        assert Row(LineChart([Series("price")]), width=weight).width == 2.0
        assert PriceChart("price", min_trade=weight, height=weight).min_trade == 2.0
    with pytest.raises(ValueError, match=r"^width must be a number > 0, got True\.$"):
        Row(LineChart([Series("price")]), width=True)
    with pytest.raises(TypeError, match="at least one Series"):
        LineChart([])
    with pytest.raises(ValueError, match="primary"):
        LineChart([Series("price")], primary=1)
    with pytest.raises(ValueError, match="style"):
        Series("price", style="dotted")
    with pytest.raises(ValueError, match="kind"):
        LineChart([Series("price")], kind="log")
    with pytest.raises(ValueError, match="levels"):
        OrderBookChart("book", levels=0)
    with pytest.raises(ValueError, match="levels"):
        OrderBookChart("book", levels=np.array(0))
    # a 0-d array, as the order book renderers take it
    assert OrderBookChart("book", levels=np.array(5)).levels == 5
    with pytest.raises(TypeError, match="Chart, Row or Column"):
        Dashboard(42)  # type: ignore[arg-type]
    # frame sizes, unlike layout weights, are ints of at least 64 pixels
    with pytest.raises(TypeError, match=r"^Dashboard: width must be an int, got float\.$"):
        Dashboard(PriceChart("price"), width=720.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^Dashboard: height must be >= 64, got 10\.$"):
        Dashboard(PriceChart("price"), height=10)
    with pytest.raises(ValueError, match="Unknown colour"):
        resolve_color(Theme.light(), "teal")


@pytest.mark.parametrize("theme", [Theme.light(), Theme.dark()], ids=["light", "dark"])
def test_palette_indices_past_the_palette_get_shades_before_colours_repeat(theme: Theme) -> None:
    n = len(theme.palette)
    colors = [resolve_color(theme, i) for i in range(3 * n)]
    assert colors[:n] == list(theme.palette)
    assert len(set(colors)) == 3 * n  # the palette, then two shades of it
    assert resolve_color(theme, 3 * n + 1) == theme.palette[1]  # only then do they repeat


def _custom(**kwargs: Any) -> Dashboard:
    return Dashboard(
        Column(
            PriceChart("price", position="position", height=2.0),
            Row(AreaChart("weights"), BarChart("weights", labels=["a", "b", "cash"])),
        ),
        title="My strategy",
        subtitle=lambda env: f"price {env.price:.2f}",
        stats=lambda env: [Stat("Position", f"{env.position:+.1f}")],
        horizon=30,
        **kwargs,
    )


def test_a_custom_dashboard_draws_any_object_with_the_attributes_it_reads() -> None:
    ticker, dashboard = Ticker(), _custom(width=400, height=300)
    first = dashboard.render(ticker)
    assert first.shape == (300, 400, 3) and first.dtype == np.uint8
    frames = [first]
    for k in range(10):
        ticker.advance(100.0 + np.sin(k), 1.0 if k < 5 else -1.0)
        frames.append(dashboard.render(ticker))
    assert all(not np.array_equal(a, b) for a, b in pairwise(frames))


def test_a_window_keeps_only_the_latest_steps() -> None:
    ticker, dashboard = Ticker(), _custom(window=5)
    dashboard.render(ticker)
    for k in range(20):
        ticker.advance(100.0 + k, 1.0)
        dashboard.render(ticker)
    price_chart = dashboard.charts[0]
    assert isinstance(price_chart, PriceChart)
    assert price_chart._prices.steps == list(range(14, 21))


class AxisProbe(Chart):
    """A custom chart that keeps the visible steps it was asked to draw."""

    def __init__(self) -> None:
        self.axes: list[tuple[float, float, int]] = []

    def draw(self, canvas: Any, box: Any, ctx: DrawContext) -> None:
        self.axes.append((ctx.x_lo, ctx.x_hi, ctx.step))


@pytest.mark.parametrize("horizon", [None, 30])
def test_a_window_ends_its_time_axis_at_the_current_step(horizon: int | None) -> None:
    ticker, probe = Ticker(), AxisProbe()
    dashboard = Dashboard(Column(PriceChart("price"), probe), window=5, horizon=horizon)
    dashboard.render(ticker)
    for k in range(20):
        ticker.advance(100.0 + k, 1.0)
        dashboard.render(ticker)
    assert probe.axes[-1] == (15.0, 20.0, 20)


def test_a_chart_factory_gets_the_env_and_must_return_a_chart() -> None:
    seen: list[Any] = []

    def build(env: Any) -> Any:
        seen.append(env)
        return LineChart([Series("price")])

    ticker = Ticker()
    Dashboard(build).render(ticker)
    assert seen == [ticker]
    with pytest.raises(TypeError, match="factory returned"):
        Dashboard(lambda env: "not a chart").render(ticker)  # type: ignore[arg-type, return-value]


def test_the_order_book_chart_highlights_an_owners_orders_at_their_queue_place() -> None:
    book = OrderBook()
    for price in range(95, 100):
        book.limit(Side.BID, price, 5)
        book.limit(Side.ASK, price + 6, 5)
    book.limit(Side.BID, 99, 3, owner=7)  # behind 5 lots at the best bid
    ticker = Ticker()
    chart = OrderBookChart(lambda env: book, owners={7: "Me"}, levels=5)
    frame = Dashboard(chart, progress=False).render(ticker)
    accent = np.asarray(Theme.light().accent)
    hits = np.all(frame.astype(np.int16) == accent, axis=2)
    assert hits.sum() > 50  # the order's bar segment and its label
    plain_book = Dashboard(OrderBookChart(lambda env: book, levels=5), progress=False)
    assert not np.all(plain_book.render(Ticker()).astype(np.int16) == accent, axis=2).any()


def test_the_universe_chart_greys_untradable_time() -> None:
    class Universe(Ticker):
        available = np.array([True, False, True])
        slot_assets: ClassVar[list[str | None]] = ["AAA", None, "CCC"]

    env, theme = Universe(), Theme.light()
    chart = UniverseChart("weights", available="available", labels="slot_assets")
    dashboard = Dashboard(chart, horizon=10, progress=False)
    dashboard.render(env)
    for _ in range(5):
        env.advance(100.0, 0.5)
        frame = dashboard.render(env)
    grid = np.all(frame.astype(np.int16) == np.asarray(theme.grid), axis=2)
    assert grid.sum() > 500  # the untradable middle slot


@pytest.mark.parametrize(
    "make",
    [
        lambda: PriceChart("price", title=3),
        lambda: LineChart([Series("price")], title=None),
        lambda: AreaChart("weights", title=b"w"),
        lambda: BarChart("weights", title=1.0),
        lambda: UniverseChart("weights", title=[]),
        lambda: OrderBookChart("book", title=0),
        lambda: Dashboard(PriceChart("price"), title=7),
    ],
)
def test_titles_must_be_strings(make: Any) -> None:
    with pytest.raises(TypeError, match="title must be a str, got"):
        make()


def test_a_missing_attribute_source_names_the_env_and_its_attributes() -> None:
    ticker = Ticker()
    with pytest.raises(AttributeError, match=r"chart source 'turnover': Ticker has no attribute"):
        Dashboard(PriceChart("turnover")).render(ticker)
    with pytest.raises(AttributeError, match=r"\(.*position.*price.*\); for anything else"):
        Dashboard(LineChart([Series("cost")])).render(ticker)


def test_an_order_book_source_must_give_an_order_book() -> None:
    with pytest.raises(TypeError, match=r"book source 'price' must give an order book.*got float"):
        Dashboard(OrderBookChart("price")).render(Ticker())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Stat("Equity", 1.0432),
            r"^Stat value must be a str \(the text to show\), got float 1\.0432; format the "
            r"number, e\.g\. Stat\('Equity', value=f\"\{value:\.4f\}\"\)\.$",
        ),
        (lambda: Stat(3, "x"), r"^Stat label must be a str \(the text to show\), got int 3\.$"),
        (
            lambda: Stat("Equity", "1.04", 0.04),
            r"^Stat detail must be a str .* got float 0\.04; format the number, e\.g\. "
            r"Stat\('Equity', '1\.04', detail=f\"\{detail:\.4f\}\"\)\.$",
        ),
        (lambda: Dashboard(PriceChart("price"), subtitle=252), r"^subtitle must be a str, got int"),
        (lambda: Dashboard(PriceChart("price"), stats=[]), r"^stats must be a callable of the env"),
        (lambda: Series("price", color="nope"), r"^Series color: Unknown colour 'nope'; use one"),
        (lambda: UniverseChart("weights", negative_color=(1, 2)), r"^UniverseChart negative_color"),
        (lambda: AreaChart("weights", colors=["up", 300.0]), r"^AreaChart colors\[1\]: A colour"),
        (lambda: BarChart("weights", colors="accent"), r"^BarChart colors must be a list of"),
    ],
    ids=[
        "stat-value", "stat-label", "stat-detail", "subtitle", "stats", "series-color",
        "universe-color", "area-colors", "bar-colors-str",
    ],
)  # fmt: skip
def test_malformed_dashboard_parts_are_refused_when_built(make: Any, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        make()
    with pytest.raises(ValueError, match=r"^Stat tone must be 'up', 'down' or None, got 'green'"):
        Stat("Equity", "1.04", "+4%", "green")


@pytest.mark.parametrize(
    ("dashboard", "error", "message"),
    [
        (
            lambda: Dashboard(PriceChart("price"), subtitle=lambda env: 252),
            TypeError,
            r"^The dashboard's subtitle must be a str, got int 252 from the subtitle callable\.$",
        ),
        (
            lambda: Dashboard(PriceChart("price"), stats=lambda env: ["equity"]),
            TypeError,
            r"^The dashboard's stats callable must return a list of Stat, got str 'equity' at "
            r"position 0",
        ),
        (
            lambda: Dashboard(PriceChart("price"), stats=lambda env: Stat("Price", "100")),
            TypeError,
            r"^The dashboard's stats callable must return a list of Stat, got Stat",
        ),
        (
            lambda: Dashboard(AreaChart(lambda env: np.zeros(0))),
            ValueError,
            r"^AreaChart source <lambda> gave an empty vector; it needs one value per part\.$",
        ),
        (
            lambda: Dashboard(UniverseChart("weights", labels=lambda env: None)),
            TypeError,
            r"^UniverseChart labels source <lambda> must give a sequence of labels \(a str or "
            r"None each\), got NoneType None\.$",
        ),
        (
            lambda: Dashboard(BarChart("weights", labels="price")),
            TypeError,
            r"^BarChart labels source 'price' must give a sequence of labels .* got float 100\.0",
        ),
        (
            lambda: Dashboard(OrderBookChart(lambda env: OrderBook(), owners=lambda env: [7])),
            TypeError,
            r"^OrderBookChart owners source <lambda> must give a mapping \{owner id: label\}, "
            r"got list \[7\]\.$",
        ),
    ],
    ids=[
        "subtitle",
        "stats-items",
        "stats-one",
        "area-empty",
        "universe-labels",
        "bar-labels",
        "book-owners",
    ],
)
def test_malformed_values_from_sources_name_the_part_and_the_field(
    dashboard: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        dashboard().render(Ticker())


def test_owner_labels_are_shown_as_text_whatever_their_type() -> None:
    book = OrderBook()
    book.limit(Side.BID, 99, 5, owner=7)
    book.limit(Side.ASK, 101, 5)
    frame = Dashboard(OrderBookChart(lambda env: book, owners={7: 7})).render(Ticker())
    named = Dashboard(OrderBookChart(lambda env: book, owners={7: "7"})).render(Ticker())
    np.testing.assert_array_equal(frame, named)


def test_the_attributes_a_missing_source_lists_are_ones_that_can_be_read() -> None:
    import sekai

    env = sekai.make("Trading-v0")
    env.reset(seed=0)
    with pytest.raises(AttributeError) as info:
        Dashboard(LineChart([Series("turnover")])).render(env)
    listed = str(info.value).split("(", 1)[1].split(")", 1)[0].split(", ")
    assert "equity" in listed and "price_history" in listed
    assert "render" not in listed  # reading it raises AttributeError on every sekai env


def _record(chart: Chart, values: list[tuple[Any, ...]]) -> np.ndarray:
    """Draw ``chart`` after each of ``values`` (what the env's ``v`` holds at steps 0, 1, ...)."""

    class Env:
        elapsed_steps = 0
        v: Any = None

    dashboard, env = Dashboard(chart, horizon=len(values) - 1, width=360, height=240), Env()
    for step, value in enumerate(values):
        env.elapsed_steps, env.v = step, value
        frame = dashboard.render(env)
    return frame


def test_a_nan_price_is_a_gap_in_the_price_line() -> None:
    def chart() -> PriceChart:
        return PriceChart(lambda env: env.v[0], title="", tag=False)

    def dark(frame: np.ndarray) -> np.ndarray:  # the price line's ink (grid lines are light)
        return frame.astype(np.int16).sum(axis=2) < 400

    flat = _record(chart(), [(100.0,), (100.0,), (100.0,)])
    gap = _record(chart(), [(100.0,), (np.nan,), (100.0,)])
    row = int(np.argmax(dark(flat).sum(axis=1)))  # the flat price line across the plot
    line = np.flatnonzero(dark(flat[row - 2 : row + 3]).any(axis=0))
    middle = slice(line[len(line) // 4], line[3 * len(line) // 4])  # around step 1
    assert dark(flat[row - 2 : row + 3, middle]).any(axis=0).all()
    assert not dark(gap[row - 2 : row + 3, middle]).any()  # a gap where the price is NaN
    assert dark(gap[row - 2 : row + 3, line[-3:]]).any()  # the last price, as a dot


def test_a_nan_position_shades_nothing_and_marks_no_trade() -> None:
    def chart() -> PriceChart:
        return PriceChart(lambda env: env.v[0], position=lambda env: env.v[1])

    prices = [100.0, 100.5, 101.0]
    unknown = _record(chart(), [(p, q) for p, q in zip(prices, [0.0, np.nan, 0.0])])
    flat = _record(chart(), [(p, 0.0) for p in prices])
    np.testing.assert_array_equal(unknown, flat)


def test_non_finite_values_of_the_other_price_sources_are_skipped() -> None:
    def chart(**sources: Any) -> PriceChart:
        return PriceChart(lambda env: 100.0, **sources)

    plain = _record(chart(), [(), (), ()])
    infinite = _record(chart(reference=lambda env: np.inf, reference_label="arrival"), [()] * 3)
    np.testing.assert_array_equal(infinite, plain)
    band = _record(chart(spread=lambda env: env.v), [(99.0, 101.0), (np.nan, 101.0), (99, 101)])
    assert band.shape == (240, 360, 3)  # a one-sided book leaves a gap in the band


def test_universe_weights_that_are_not_finite_leave_their_lane_blank() -> None:
    unknown = _record(UniverseChart(lambda env: env.v), [np.array([0.5, np.nan])] * 2)
    empty = _record(UniverseChart(lambda env: env.v), [np.array([0.5, 0.0])] * 2)
    np.testing.assert_array_equal(unknown, empty)


class _Text(NamedTuple):
    value: str
    color: tuple[int, ...]
    anchor: str | None


def _text_calls(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[_Text]:
    """Record every string ``module`` draws with the shared ``text`` helper, with its colour
    and anchor, as the drawing goes on."""
    drawn: list[_Text] = []
    real = module.text

    def record(canvas: Any, x: float, y: float, value: str, color: Any, **kwargs: Any) -> Any:
        drawn.append(_Text(value, tuple(color), kwargs.get("anchor")))
        return real(canvas, x, y, value, color, **kwargs)

    monkeypatch.setattr(module, "text", record)
    return drawn


def _crowded_book(traders: int) -> OrderBook:
    book = OrderBook()
    for owner in range(traders):  # every trader rests one lot at the best bid
        book.limit(Side.BID, 99, 1, owner=owner)
    book.limit(Side.BID, 98, 30)
    book.limit(Side.ASK, 101, 30)
    return book


def test_many_traders_at_one_price_leave_the_depth_bars_readable() -> None:
    theme = Theme.light()
    bar = np.asarray(mix(theme.background, theme.up, 0.35))

    def longest_bar(owners: dict[int, str] | None) -> int:
        book = _crowded_book(8)
        chart = OrderBookChart(lambda env: book, owners=owners)
        frame = Dashboard(chart, width=360, height=300).render(Ticker())
        return int((np.abs(frame.astype(np.int16) - bar).sum(axis=2) < 6).sum(axis=1).max())

    plain = longest_bar(None)
    labelled = longest_bar({i: f"trader_{i}" for i in range(8)})
    assert labelled >= plain / 4  # the names give way to the bars, not the bars to the names


def test_the_ladder_names_the_first_traders_at_a_price_and_counts_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _text_calls(monkeypatch, book_module)
    book = _crowded_book(8)
    owners = {i: f"trader_{i}" for i in range(8)}
    Dashboard(OrderBookChart(lambda env: book, owners=owners), width=360).render(Ticker())
    drawn = [call.value for call in calls]
    names = [s for s in drawn if s.startswith("trader_")]
    counts = [s for s in drawn if s.startswith("+")]
    assert sorted(names) == sorted(f"trader_{i}" for i in range(len(names)))  # the first ones
    assert len(counts) == 1
    assert len(names) + int(counts[0][1:]) == 8


def test_a_legend_without_room_for_every_entry_says_how_many_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _text_calls(monkeypatch, chart_module)
    series = [Series(lambda env, i=i: float(i), label=f"trader_{i}", color=i) for i in range(12)]
    Dashboard(Row(LineChart(series, title="Inventory"), LineChart([Series("price")]))).render(
        Ticker()
    )
    drawn = [call.value for call in calls]
    names = [s for s in drawn if s.startswith("trader_")]
    more = [s for s in drawn if s.endswith(" more")]
    assert sorted(names) == sorted(f"trader_{i}" for i in range(len(names)))  # the first ones
    assert more == [f"+{12 - len(names)} more"] and names


def test_owners_take_distinct_colours_past_the_palette() -> None:
    chart = OrderBookChart(lambda env: _crowded_book(25), owners={i: str(i) for i in range(25)})
    Dashboard(chart).render(Ticker())
    ctx = DrawContext(theme=Theme.light(), unit=1.0, text=1, x_lo=0.0, x_hi=1.0, step=0)
    assert len({chart.owner_color(ctx, i) for i in range(25)}) == 25


def test_numbers_keep_four_digits_before_taking_a_suffix() -> None:
    assert format_number(1234.0) == "1234"
    assert format_number(12345.0) == "12.35k"
    assert format_number(-2_500_000.0) == "-2.500M"


def test_a_percentage_that_rounds_to_zero_has_no_minus_sign() -> None:
    assert format_pct(-0.00001) == "0.00%"
    assert format_pct(-0.00001, signed=True) == "+0.00%"


def test_small_prices_keep_their_significant_digits() -> None:
    assert format_price(0.012345) == "0.012345"
    assert format_price(0.5) == "0.50"


@pytest.mark.parametrize("theme", [Theme.light(), Theme.dark()], ids=["light", "dark"])
def test_palette_shades_lean_first_to_the_ink_then_to_the_paper(theme: Theme) -> None:
    def distance(a: Any, b: Any) -> float:
        return float(np.abs(np.subtract(a, b)).sum())

    n = len(theme.palette)
    base, inked, paper = (resolve_color(theme, k * n) for k in range(3))
    assert distance(inked, theme.foreground) < distance(base, theme.foreground)
    assert distance(paper, theme.background) < distance(base, theme.background)


def test_a_dashed_line_leaves_gaps_between_its_dashes() -> None:
    canvas = Canvas(60, 9)
    dashed(canvas, [(0.0, 4.5), (60.0, 4.5)], (0, 0, 0), width=3.0, dash=6.0, gap=4.0)
    inked = canvas.pixels[4, :, 0] < 128
    # Dashes cover [0, 6], [10, 16], ... (round caps reach 1.5 pixels further).
    assert inked[3] and inked[13] and inked[23]
    assert not inked[8] and not inked[18] and not inked[28]


def test_a_filled_area_stays_inside_its_clip_box() -> None:
    canvas = Canvas(20, 20)
    fill_between(canvas, [0.0, 20.0], [0.0, 0.0], [20.0, 20.0], (0, 0, 0), clip=(0, 5, 20, 15))
    dark_rows = np.flatnonzero((canvas.pixels[:, :, 0] < 128).any(axis=1))
    assert list(dark_rows) == list(range(5, 15))


def test_a_bar_series_keeps_zero_in_view(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _text_calls(monkeypatch, chart_module)
    bars = LineChart([Series(lambda env: env.v[0], style="bars")])
    _record(bars, [(5.0,), (8.0,), (10.0,)])
    # right-aligned left of the plot: the y axis
    y_labels = [call.value for call in calls if call.anchor == "rm"]
    assert y_labels[0] == "0"  # the y axis starts at the bars' foot, not at the lowest bar


def test_the_time_axis_is_labelled_with_the_steps_it_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _text_calls(monkeypatch, chart_module)
    # A flat 0.5 gets y labels with decimals: the whole numbers are the x labels.
    _record(LineChart([Series(lambda env: env.v[0])]), [(0.5,)] * 11)
    drawn = [call.value for call in calls]
    steps = [int(s) for s in drawn if s.isdigit()]
    assert steps and min(steps) == 0 and max(steps) == 10


def test_the_spread_label_gives_the_best_prices_gap_and_mid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = OrderBook()
    book.limit(Side.BID, 99, 5)
    book.limit(Side.ASK, 103, 5)
    calls = _text_calls(monkeypatch, book_module)
    Dashboard(OrderBookChart(lambda env: book, levels=3), progress=False).render(Ticker())
    drawn = [call.value for call in calls]
    assert "spread 4   mid 101.00" in drawn


def test_stats_show_their_label_in_capitals_and_the_detail_in_its_tone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _text_calls(monkeypatch, dashboard_module)
    theme = Theme.light()
    stats = [Stat("Equity", "1.05", "+5%", "up"), Stat("Loss", "0.9", "-10%", "down")]
    Dashboard(LineChart([Series("price")]), stats=lambda env: stats).render(Ticker())
    drawn = [(call.value, call.color) for call in calls]
    assert ("EQUITY", theme.muted) in drawn and ("LOSS", theme.muted) in drawn
    assert ("+5%", theme.up) in drawn and ("-10%", theme.down) in drawn


def test_a_negative_bar_extends_left_of_zero_and_a_positive_one_right() -> None:
    theme = Theme.light()
    chart = BarChart(lambda env: [-0.5, 0.5], labels=["short", "long"])
    frame = Dashboard(chart, progress=False, width=400, height=200).render(Ticker())

    def columns(color: Any) -> np.ndarray:
        return np.flatnonzero(np.all(frame.astype(int) == color, axis=2).any(axis=0))

    short, long = columns(theme.palette[0]), columns(theme.palette[1])
    assert short.size > 20 and long.size > 20
    assert short.max() < long.min()  # the bars meet at the zero line, one on each side


def test_the_universe_chart_marks_a_change_of_asset_where_the_new_one_starts() -> None:
    theme = Theme.light()
    chart = UniverseChart(lambda env: [env.v[0]], labels=lambda env: [env.v[1]], title="")
    held = [(0.0, "A"), (0.0, "A"), (1.0, "B"), (1.0, "B"), (1.0, "B")]
    frame = _record(chart, held).astype(np.int16)
    band = np.all(frame == np.asarray(theme.accent), axis=2)  # step 2 on: drawn over (1, 5]
    rows = np.flatnonzero(band.any(axis=1))
    first = int(np.flatnonzero(band.any(axis=0)).min())
    marker = (frame[rows].sum(axis=2) < 250).any(axis=0)  # dark ink: the marker (and name)
    columns = np.flatnonzero(marker)
    columns = columns[columns > first - 10]  # past the lane's name at the left
    assert columns.size and abs(int(columns.min()) - first) <= 2
