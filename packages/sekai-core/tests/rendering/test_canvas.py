"""Canvas: shapes land where they should, edges are anti-aliased, text is drawn."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sekai.rendering import Canvas, canvas as canvas_module

BLACK = (0, 0, 0)
WHITE = (255, 255, 255)


def _ink(canvas: Canvas) -> np.ndarray:
    """How much each pixel is darkened, 0 (white) to 1 (black)."""
    return 1.0 - canvas.pixels.mean(axis=2) / 255.0


def test_a_new_canvas_is_filled_with_the_background() -> None:
    canvas = Canvas(4, 3, background=(10, 20, 30))
    assert canvas.pixels.shape == (3, 4, 3) and canvas.pixels.dtype == np.uint8
    assert (canvas.width, canvas.height) == (4, 3)
    assert np.all(canvas.pixels == [10, 20, 30])


@pytest.mark.parametrize(("width", "height"), [(0, 5), (5, -1), (2.5, 3), (True, 3)])
def test_invalid_sizes_raise_value_error(width: object, height: object) -> None:
    with pytest.raises(ValueError, match="must be an int >= 1"):
        Canvas(width, height)  # type: ignore[arg-type]


def test_to_array_is_a_copy() -> None:
    canvas = Canvas(2, 2)
    image = canvas.to_array()
    image[...] = 0
    assert np.all(canvas.pixels == 255)


def test_from_array_starts_from_a_copy_of_the_image() -> None:
    image = np.zeros((3, 4, 3), np.uint8)
    canvas = Canvas.from_array(image)
    canvas.fill(WHITE)
    assert np.all(image == 0) and np.all(canvas.pixels == 255)
    with pytest.raises(ValueError, match="uint8"):
        Canvas.from_array(np.zeros((3, 4, 3)))


def test_a_pixel_aligned_rect_fills_exactly_its_pixels() -> None:
    canvas = Canvas(10, 10)
    canvas.rect(2, 3, 5, 7, BLACK)
    expected = np.zeros((10, 10), bool)
    expected[3:7, 2:5] = True
    np.testing.assert_array_equal(canvas.pixels[..., 0] == 0, expected)
    assert np.all(canvas.pixels[~expected] == 255)


def test_a_half_covered_pixel_gets_half_the_colour() -> None:
    canvas = Canvas(4, 1)
    canvas.rect(0, 0, 1.5, 1, BLACK)
    assert canvas.pixels[0, 0, 0] == 0 and canvas.pixels[0, 1, 0] in (127, 128)


def test_alpha_blends_with_what_is_below() -> None:
    canvas = Canvas(2, 2)
    canvas.rect(0, 0, 2, 2, BLACK, alpha=0.25)
    assert np.all(np.abs(canvas.pixels.astype(int) - 191) <= 1)


@pytest.mark.parametrize("alpha", [math.nan, -0.1, 1.5])
def test_an_alpha_outside_0_1_is_refused_instead_of_painting(alpha: float) -> None:
    canvas = Canvas(4, 4)
    draws = [
        lambda: canvas.rect(0, 0, 4, 4, BLACK, alpha=alpha),
        lambda: canvas.circle((2, 2), 1.5, BLACK, alpha=alpha),
        lambda: canvas.polyline([(0, 0), (4, 4)], BLACK, alpha=alpha),
        lambda: canvas.blend(0, 0, np.ones((4, 4)), BLACK, alpha=alpha),
    ]
    for draw in draws:
        with pytest.raises(ValueError, match=rf"^alpha must be a number in \[0, 1\], got {alpha}"):
            draw()
    assert np.all(canvas.pixels == 255)


def test_blend_mixes_by_coverage_and_refuses_nan_weights() -> None:
    canvas = Canvas(2, 1)
    canvas.blend(0, 0, np.array([[1.0, 0.5]]), BLACK, alpha=0.5)
    assert canvas.pixels[0, 0, 0] in (127, 128) and canvas.pixels[0, 1, 0] in (191, 192)
    with pytest.raises(ValueError, match=r"coverage weights must be finite numbers in \[0, 1\]"):
        canvas.blend(0, 0, np.array([[np.nan, 1.0]]), BLACK)


def test_polygon_area_matches_its_geometry() -> None:
    canvas = Canvas(100, 100)
    canvas.polygon([(10, 10), (90, 10), (10, 90)], BLACK)  # a right triangle, area 3200
    assert _ink(canvas).sum() == pytest.approx(3200, rel=0.01)
    assert canvas.pixels[20, 20, 0] == 0 and canvas.pixels[80, 80, 0] == 255


def test_polygon_edges_are_anti_aliased() -> None:
    canvas = Canvas(50, 50)
    canvas.polygon([(5, 5), (45, 12), (25, 45)], BLACK)
    partial = (canvas.pixels[..., 0] > 0) & (canvas.pixels[..., 0] < 255)
    assert partial.sum() > 40


def test_non_convex_polygons_use_the_even_odd_rule() -> None:
    canvas = Canvas(30, 30)
    # A square with a square hole (drawn as one outline through a zero-width cut).
    canvas.polygon(
        [
            (0, 0),
            (30, 0),
            (30, 30),
            (0, 30),
            (0, 10),
            (10, 10),
            (10, 20),
            (20, 20),
            (20, 10),
            (0, 10),
        ],
        BLACK,
    )
    assert canvas.pixels[15, 15, 0] == 255 and canvas.pixels[5, 5, 0] == 0


@given(
    points=st.lists(
        st.tuples(st.floats(-8, 40), st.floats(-8, 40)).map(
            lambda p: (round(p[0] * 2) / 2, round(p[1] * 2) / 2)  # half pixels hit centres
        ),
        min_size=3,
        max_size=8,
    ),
    alpha=st.sampled_from([1.0, 0.4]),
)
def test_small_polygons_filled_all_at_once_match_the_edge_by_edge_fill(
    points: list[tuple[float, float]], alpha: float
) -> None:
    # A small box is filled with every edge at once; a large one row by row and edge by edge.
    fast, general = Canvas(32, 32, (30, 60, 90)), Canvas(32, 32, (30, 60, 90))
    fast.polygon(points, (250, 10, 120), alpha=alpha)
    original = canvas_module._SMALL_POLYGON
    canvas_module._SMALL_POLYGON = 0
    try:
        general.polygon(points, (250, 10, 120), alpha=alpha)
    finally:
        canvas_module._SMALL_POLYGON = original
    np.testing.assert_array_equal(fast.pixels, general.pixels)


def test_polygon_needs_three_points() -> None:
    with pytest.raises(ValueError, match="at least 3 points"):
        Canvas(5, 5).polygon([(0, 0), (1, 1)], BLACK)


def test_shapes_outside_the_canvas_are_clipped() -> None:
    canvas = Canvas(10, 10)
    canvas.polygon([(-50, -50), (5, -50), (5, 5), (-50, 5)], BLACK)
    canvas.circle((100, 100), 3, BLACK)
    assert canvas.pixels[2, 2, 0] == 0 and canvas.pixels[8, 8, 0] == 255


def test_non_finite_coordinates_raise_value_error() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        Canvas(5, 5).line((0, 0), (np.nan, 1), BLACK)


def test_line_thickness_sets_the_ink_per_unit_length() -> None:
    for width in (1.0, 3.0, 6.0):
        canvas = Canvas(100, 40)
        canvas.line((10, 20), (90, 20), BLACK, width=width)
        assert _ink(canvas).sum() == pytest.approx(80 * width, rel=0.03)


def test_diagonal_lines_are_continuous() -> None:
    canvas = Canvas(60, 60)
    canvas.line((5, 5), (55, 40), BLACK, width=1.0)
    for x in range(8, 52):
        assert _ink(canvas)[:, x].sum() > 0.6


def test_round_caps_extend_the_line() -> None:
    butt, rounded = Canvas(40, 20), Canvas(40, 20)
    butt.line((10, 10), (30, 10), BLACK, width=6)
    rounded.line((10, 10), (30, 10), BLACK, width=6, cap="round")
    assert _ink(rounded).sum() > _ink(butt).sum() + 20
    with pytest.raises(ValueError, match="cap"):
        butt.line((0, 0), (1, 1), BLACK, cap="square")


def test_polyline_joints_are_not_darker_than_the_strokes() -> None:
    canvas = Canvas(40, 40)
    canvas.polyline([(5, 20), (20, 20), (20, 35)], (100, 100, 100), width=3, alpha=0.5)
    values = canvas.pixels[..., 0]
    assert values.min() >= 177  # one blend of half ink, never two


def test_filled_circle_area_and_ring() -> None:
    disc, ring = Canvas(60, 60), Canvas(60, 60)
    disc.circle((30, 30), 20, BLACK)
    ring.circle((30, 30), 20, BLACK, fill=False, width=2)
    assert _ink(disc).sum() == pytest.approx(np.pi * 400, rel=0.01)
    assert _ink(ring).sum() == pytest.approx(2 * np.pi * 20 * 2, rel=0.03)
    assert ring.pixels[30, 30, 0] == 255


def test_text_is_drawn_where_anchored() -> None:
    canvas = Canvas(100, 40)
    left, top, right, bottom = canvas.text(50, 20, "Hi 42", BLACK, anchor="mm")
    assert (right - left, bottom - top) == Canvas.text_size("Hi 42")
    ink = _ink(canvas) > 0
    rows, cols = np.nonzero(ink)
    assert rows.min() >= top and rows.max() < bottom and cols.min() >= left and cols.max() < right
    assert abs((cols.min() + cols.max()) / 2 - 50) <= 3


def test_text_size_scales_with_size_and_lines() -> None:
    assert Canvas.text_size("ab") == (11, 9)
    assert Canvas.text_size("ab", 2) == (22, 18)
    assert Canvas.text_size("a\nbcd") == (17, 19)


def test_different_characters_draw_different_glyphs() -> None:
    glyphs = set()
    for char in "0123456789ABCabc%.-":
        canvas = Canvas(6, 10)
        canvas.text(0, 0, char, BLACK)
        glyphs.add(canvas.pixels.tobytes())
    assert len(glyphs) == 19


def test_unknown_characters_draw_a_box_instead_of_failing() -> None:
    canvas = Canvas(6, 10)
    canvas.text(0, 0, "\u2603", BLACK)
    assert _ink(canvas).sum() > 10


def test_text_validates_size_and_anchor() -> None:
    with pytest.raises(ValueError, match="size"):
        Canvas(10, 10).text(0, 0, "a", BLACK, size=0)
    with pytest.raises(ValueError, match="anchor"):
        Canvas(10, 10).text(0, 0, "a", BLACK, anchor="xx")


def test_invalid_colours_raise_value_error() -> None:
    with pytest.raises(ValueError, match="colour"):
        Canvas(2, 2).fill((300, 0, 0))
    with pytest.raises(ValueError, match="colour"):
        Canvas(2, 2).rect(0, 0, 1, 1, (1, 2))


@pytest.mark.parametrize(
    "colour",
    [
        "red",
        ([255], 0, 0),
        (1, 2, "x"),
        (1, 2),
        object(),
        [[1, 2], 3],
        ("255", "0", "0"),
        [[255, 0, 0]],
        ((255, 0, 0),),
        np.zeros((2, 3)),
        (-1, 0, 0),
        [0, -0.5, 0],
        np.array([0, 0, -10]),
        (0, 256, 0),
    ],
)
def test_a_colour_that_is_no_three_numbers_in_0_to_255_gets_the_colour_rule(colour: Any) -> None:
    # NumPy's "could not convert string to float" or "inhomogeneous shape" names no colour;
    # a channel below 0 would wrap around when cast to uint8, a (1, 3) colour would broadcast.
    canvas = Canvas(20, 10)
    before = canvas.pixels.copy()
    message = f"A colour must be (r, g, b) with channels in [0, 255], got {colour!r}."
    draws = (
        lambda: canvas.rect(0, 0, 5, 5, colour),
        lambda: canvas.fill(colour),
        lambda: Canvas(2, 2, background=colour),
    )
    for draw in draws:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            draw()
    assert np.array_equal(canvas.pixels, before)


def test_shapes_are_painted_in_the_colour_given_channel_by_channel() -> None:
    canvas = Canvas(20, 10)
    canvas.rect(0, 0, 5, 5, (200, 40, 10))
    canvas.circle((15, 5), 3, (10, 90, 250))
    assert tuple(canvas.pixels[2, 2]) == (200, 40, 10)
    assert tuple(canvas.pixels[5, 15]) == (10, 90, 250)


def test_a_closed_polyline_draws_its_closing_segment() -> None:
    points = [(5, 5), (35, 5), (20, 35)]
    open_, closed = Canvas(40, 40), Canvas(40, 40)
    open_.polyline(points, BLACK, width=2)
    closed.polyline(points, BLACK, width=2, closed=True)
    # The segment back from (20, 35) to (5, 5) passes (12.5, 20).
    assert _ink(open_)[20, 12] < 0.05
    assert _ink(closed)[20, 12] > 0.5


def test_a_one_point_polyline_is_a_dot_and_a_zero_length_line_draws_nothing() -> None:
    canvas = Canvas(20, 20)
    canvas.polyline([(10, 10)], BLACK, width=6)
    assert _ink(canvas).sum() == pytest.approx(math.pi * 9, rel=0.05)
    blank = Canvas(20, 20)
    blank.line((10, 10), (10, 10), BLACK, width=4)
    assert _ink(blank).sum() == 0


def test_a_circle_smaller_than_a_pixel_is_still_drawn() -> None:
    canvas = Canvas(10, 10)
    canvas.circle((5, 5), 0.6, BLACK)
    assert _ink(canvas)[4:6, 4:6].min() > 0.2
    assert _ink(canvas).sum() > 0.5


@pytest.mark.parametrize(
    ("anchor", "box"),
    [
        ("lt", (30, 20, 47, 29)),
        ("rb", (13, 11, 30, 20)),
        ("mm", (22, 16, 39, 25)),
    ],
)
def test_each_anchor_puts_the_text_box_on_its_side_of_the_point(
    anchor: str, box: tuple[int, int, int, int]
) -> None:
    canvas = Canvas(60, 40)
    assert canvas.text(30, 20, "EEE", BLACK, anchor=anchor) == box
    left, top, right, bottom = box
    rows, cols = np.nonzero(_ink(canvas) > 0)
    # "E" inks its cell from its first to its last column, and every row but the descenders'.
    inked = (cols.min(), cols.max() + 1, rows.min(), rows.max() + 1)
    assert inked == (left, right, top, bottom - 2)


def test_text_size_scales_the_glyphs_in_both_directions() -> None:
    canvas = Canvas(20, 20)
    canvas.text(0, 0, "E", BLACK, size=2)
    rows, cols = np.nonzero(_ink(canvas) > 0)
    assert (cols.max() + 1, rows.max() + 1) == (10, 14)


def test_each_line_of_text_starts_one_cell_below_the_last() -> None:
    canvas = Canvas(10, 30)
    canvas.text(0, 0, "E\nE", BLACK)
    ink_rows = np.flatnonzero((_ink(canvas) > 0).any(axis=1))
    assert list(ink_rows) == [*range(7), *range(10, 17)]


# The font as drawn: "#" is ink. Mirrored or missing strokes would make these misread.
_GLYPHS = {
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###. ..... .....",
    "7": "##### ....# ...#. ..#.. .#... .#... .#... ..... .....",
    "F": "##### #.... #.... ####. #.... #.... #.... ..... .....",
    "-": "..... ..... ..... ##### ..... ..... ..... ..... .....",
    "g": "..... ..... .#### #...# #...# #...# .#### ....# .###.",
}


@pytest.mark.parametrize("char", sorted(_GLYPHS))
def test_glyphs_are_drawn_as_the_font_shows_them(char: str) -> None:
    canvas = Canvas(5, 9)
    canvas.text(0, 0, char, BLACK)
    drawn = " ".join("".join("#" if v > 0.5 else "." for v in row) for row in _ink(canvas))
    assert drawn == _GLYPHS[char]
