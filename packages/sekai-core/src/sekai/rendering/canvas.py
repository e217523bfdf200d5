"""A small numpy raster canvas: anti-aliased shapes and bitmap text for renderers."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from sekai.rendering._font import GLYPH_HEIGHT, GLYPH_WIDTH, glyph

__all__ = ["Canvas", "ColorLike", "PointLike"]

ColorLike = Sequence[int]
"""An ``(r, g, b)`` colour with channels in ``[0, 255]``."""

PointLike = Sequence[float]
"""An ``(x, y)`` point in pixels: x to the right, y down, (0, 0) the top-left corner."""

_FloatArray = npt.NDArray[np.float64]

# Pixel boxes x edges up to which a polygon is filled with every edge at once (about 0.5 MB of
# float64 per temporary); a larger one goes row by row and edge by edge.
_SMALL_POLYGON = 65_536

# A glyph occupies a (GLYPH_HEIGHT + 1) x (GLYPH_WIDTH + 1) cell: one column and one row of spacing.
_CELL_W = GLYPH_WIDTH + 1
_CELL_H = GLYPH_HEIGHT + 1


class Canvas:
    """An RGB image to draw on, in pixel coordinates (x right, y down, origin top-left).

    Pixel ``(i, j)`` covers ``[i, i + 1) x [j, j + 1)``, so its centre is ``(i + 0.5, j + 0.5)``.
    Shape edges are anti-aliased from the distance between each pixel centre and the edge.
    Every drawing method takes an optional ``alpha`` in ``[0, 1]`` for translucent ink
    (``ValueError`` outside it, NaN included).

    Args:
        width: image width in pixels (>= 1).
        height: image height in pixels (>= 1).
        background: the initial colour.
    """

    def __init__(self, width: int, height: int, background: ColorLike = (255, 255, 255)) -> None:
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"Canvas {name} must be an int >= 1, got {value!r}.")
        self.pixels: npt.NDArray[np.uint8] = np.empty((int(height), int(width), 3), np.uint8)
        """The image being drawn, a ``(height, width, 3)`` uint8 array (drawn on in place)."""
        self.fill(background)

    @classmethod
    def from_array(cls, image: npt.NDArray[np.uint8]) -> Canvas:
        """A canvas that starts as a copy of ``image`` (a ``(height, width, 3)`` uint8 array)."""
        image = np.asarray(image)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(
                f"Canvas.from_array needs a (height, width, 3) uint8 array, got {image.dtype} "
                f"{image.shape}."
            )
        canvas = cls.__new__(cls)
        canvas.pixels = image.copy()
        return canvas

    @property
    def width(self) -> int:
        """Image width in pixels."""
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        """Image height in pixels."""
        return int(self.pixels.shape[0])

    def to_array(self) -> npt.NDArray[np.uint8]:
        """A copy of the image as a ``(height, width, 3)`` uint8 array."""
        image: npt.NDArray[np.uint8] = self.pixels.copy()
        return image

    # -- shapes ---------------------------------------------------------------------------

    def fill(self, color: ColorLike) -> None:
        """Paint the whole canvas with ``color``."""
        self.pixels[...] = _color(color).astype(np.uint8)

    def rect(
        self, x0: float, y0: float, x1: float, y1: float, color: ColorLike, *, alpha: float = 1.0
    ) -> None:
        """Fill the axis-aligned rectangle with corners ``(x0, y0)`` and ``(x1, y1)``.

        Partly covered edge pixels get a proportional share of the colour.
        """
        x0, x1 = sorted((float(x0), float(x1)))
        y0, y1 = sorted((float(y0), float(y1)))
        box = self._box(x0, y0, x1, y1, pad=0.0)
        if box is None:
            return
        ix0, iy0, ix1, iy1 = box
        cols = np.arange(ix0, ix1, dtype=np.float64)
        rows = np.arange(iy0, iy1, dtype=np.float64)
        cover_x = np.clip(np.minimum(cols + 1.0, x1) - np.maximum(cols, x0), 0.0, 1.0)
        cover_y = np.clip(np.minimum(rows + 1.0, y1) - np.maximum(rows, y0), 0.0, 1.0)
        self._blend(ix0, iy0, np.outer(cover_y, cover_x), color, alpha)

    def polygon(self, points: Iterable[PointLike], color: ColorLike, *, alpha: float = 1.0) -> None:
        """Fill a polygon (any simple or self-intersecting outline, even-odd rule)."""
        pts = _points(points)
        if len(pts) < 3:
            raise ValueError(f"A polygon needs at least 3 points, got {len(pts)}.")
        box = self._box(pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
        if box is None:
            return
        ix0, iy0, ix1, iy1 = box
        nxt = np.concatenate((pts[1:], pts[:1]))
        if (ix1 - ix0) * (iy1 - iy0) * len(pts) <= _SMALL_POLYGON:
            inside, dist = _small_polygon(pts, nxt, ix0, iy0, ix1, iy1)
        else:
            inside = _scanline_inside(pts, ix0, iy0, ix1, iy1)
            dist = np.full(inside.shape, np.inf)
            for a, b in zip(pts, nxt):
                self._segment_distance(a, b, 1.0, box, dist)
        coverage = np.where(inside, np.clip(0.5 + dist, 0.0, 1.0), np.clip(0.5 - dist, 0.0, 1.0))
        self._blend(ix0, iy0, coverage, color, alpha)

    def line(
        self,
        start: PointLike,
        end: PointLike,
        color: ColorLike,
        *,
        width: float = 1.0,
        cap: str = "butt",
        alpha: float = 1.0,
    ) -> None:
        """Draw a straight line ``width`` pixels thick.

        Args:
            cap: ``"butt"`` ends exactly at the points, ``"round"`` adds half-discs there.
        """
        if cap == "round":
            self.polyline([start, end], color, width=width, alpha=alpha)
            return
        if cap != "butt":
            raise ValueError(f"cap must be 'butt' or 'round', got {cap!r}.")
        (ax, ay), (bx, by) = _points([start, end])
        length = math.hypot(bx - ax, by - ay)
        if length == 0.0:
            return
        # The line is a thin rectangle: offset both ends by half the width along the normal.
        nx, ny = -(by - ay) / length * width / 2.0, (bx - ax) / length * width / 2.0
        quad = [(ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny)]
        self.polygon(quad, color, alpha=alpha)

    def polyline(
        self,
        points: Iterable[PointLike],
        color: ColorLike,
        *,
        width: float = 1.0,
        closed: bool = False,
        alpha: float = 1.0,
    ) -> None:
        """Draw connected line segments with round joins and caps, blended once (no dark joints)."""
        pts = _points(points)
        if len(pts) == 0:
            return
        if closed and len(pts) > 2:
            pts = np.vstack([pts, pts[:1]])
        half = max(float(width), 0.0) / 2.0
        box = self._box(
            pts[:, 0].min() - half,
            pts[:, 1].min() - half,
            pts[:, 0].max() + half,
            pts[:, 1].max() + half,
        )
        if box is None:
            return
        ix0, iy0, ix1, iy1 = box
        dist = np.full((iy1 - iy0, ix1 - ix0), np.inf)
        segments = pairwise(pts) if len(pts) > 1 else [(pts[0], pts[0])]
        for a, b in segments:
            self._segment_distance(a, b, half + 1.0, box, dist)
        self._blend(ix0, iy0, np.clip(0.5 - (dist - half), 0.0, 1.0), color, alpha)

    def circle(
        self,
        center: PointLike,
        radius: float,
        color: ColorLike,
        *,
        fill: bool = True,
        width: float = 1.0,
        alpha: float = 1.0,
    ) -> None:
        """Draw a disc (``fill=True``) or a ring ``width`` pixels thick centred on the radius."""
        cx, cy = float(center[0]), float(center[1])
        radius = float(radius)
        reach = radius + (0.0 if fill else width / 2.0)
        box = self._box(cx - reach, cy - reach, cx + reach, cy + reach)
        if box is None or radius < 0:
            return
        ix0, iy0, ix1, iy1 = box
        px = np.arange(ix0, ix1) + 0.5 - cx
        py = np.arange(iy0, iy1) + 0.5 - cy
        r = np.hypot(px[None, :], py[:, None])
        edge = r - radius if fill else np.abs(r - radius) - width / 2.0
        self._blend(ix0, iy0, np.clip(0.5 - edge, 0.0, 1.0), color, alpha)

    # -- text -----------------------------------------------------------------------------

    @staticmethod
    def text_size(text: str, size: int = 1) -> tuple[int, int]:
        """Width and height in pixels of ``text`` drawn with ``size`` (one line per ``\\n``)."""
        lines = text.split("\n")
        longest = max(len(line) for line in lines)
        width = max(longest * _CELL_W - 1, 0) * size
        return width, (len(lines) * _CELL_H - 1) * size

    def text(
        self,
        x: float,
        y: float,
        text: str,
        color: ColorLike,
        *,
        size: int = 1,
        anchor: str = "lt",
        alpha: float = 1.0,
    ) -> tuple[int, int, int, int]:
        """Write ``text`` with the built-in 5x9 bitmap font, each font pixel ``size`` pixels wide.

        Args:
            x, y: the anchor point.
            size: integer scale (1 gives 10-pixel lines).
            anchor: two letters, horizontal ``l``/``m``/``r`` (left, middle, right) then vertical
                ``t``/``m``/``b`` (top, middle, bottom of the text block).

        Returns:
            The ``(left, top, right, bottom)`` pixel box of the text block.
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be an int >= 1, got {size!r}.")
        if len(anchor) != 2 or anchor[0] not in "lmr" or anchor[1] not in "tmb":
            raise ValueError(f"anchor must be two letters from 'lmr' and 'tmb', got {anchor!r}.")
        width, height = self.text_size(text, size)
        left = round(x - {"l": 0.0, "m": width / 2.0, "r": float(width)}[anchor[0]])
        top = round(y - {"t": 0.0, "m": height / 2.0, "b": float(height)}[anchor[1]])
        mask = _text_mask(text)
        if size > 1:
            mask = mask.repeat(size, axis=0).repeat(size, axis=1)
        x0, y0 = max(left, 0), max(top, 0)
        x1, y1 = min(left + mask.shape[1], self.width), min(top + mask.shape[0], self.height)
        if x0 < x1 and y0 < y1:
            part = mask[y0 - top : y1 - top, x0 - left : x1 - left]
            self._blend(x0, y0, part.astype(np.float64), color, alpha)
        return left, top, left + width, top + height

    # -- internals ------------------------------------------------------------------------

    def _box(
        self, x0: float, y0: float, x1: float, y1: float, pad: float = 1.0
    ) -> tuple[int, int, int, int] | None:
        """Integer pixel box around ``[x0, x1] x [y0, y1]`` plus ``pad``, clipped to the canvas."""
        if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
            raise ValueError("Cannot draw at non-finite coordinates.")
        ix0 = max(math.floor(x0 - pad), 0)
        iy0 = max(math.floor(y0 - pad), 0)
        ix1 = min(math.ceil(x1 + pad), self.width)
        iy1 = min(math.ceil(y1 + pad), self.height)
        if ix0 >= ix1 or iy0 >= iy1:
            return None
        return ix0, iy0, ix1, iy1

    @staticmethod
    def _segment_distance(
        a: _FloatArray,
        b: _FloatArray,
        reach: float,
        box: tuple[int, int, int, int],
        dist: _FloatArray,
    ) -> None:
        """Lower ``dist`` (covering ``box``) to the distance from each pixel centre to segment ab.

        Only pixels within ``reach`` of the segment's bounding box are visited.
        """
        ix0, iy0, ix1, iy1 = box
        sx0 = max(math.floor(min(a[0], b[0]) - reach), ix0)
        sx1 = min(math.ceil(max(a[0], b[0]) + reach), ix1)
        sy0 = max(math.floor(min(a[1], b[1]) - reach), iy0)
        sy1 = min(math.ceil(max(a[1], b[1]) + reach), iy1)
        if sx0 >= sx1 or sy0 >= sy1:
            return
        px = np.arange(sx0, sx1)[None, :] + 0.5 - a[0]
        py = np.arange(sy0, sy1)[:, None] + 0.5 - a[1]
        dx, dy = b[0] - a[0], b[1] - a[1]
        length2 = dx * dx + dy * dy
        t = np.clip((px * dx + py * dy) / length2, 0.0, 1.0) if length2 > 0 else 0.0
        d = np.hypot(px - t * dx, py - t * dy)
        view = dist[sy0 - iy0 : sy1 - iy0, sx0 - ix0 : sx1 - ix0]
        np.minimum(view, d, out=view)

    def blend(
        self, x0: int, y0: int, coverage: _FloatArray, color: ColorLike, *, alpha: float = 1.0
    ) -> None:
        """Mix ``color`` into the pixels from ``(x0, y0)`` on in proportion to ``coverage *
        alpha``, where ``coverage`` is a 2-D array of weights in ``[0, 1]`` (for drawing
        helpers that compute their own coverage, e.g. column by column).

        Raises:
            ValueError: ``alpha`` is outside ``[0, 1]``, or ``alpha`` or a ``coverage`` weight
                is NaN (it would paint black).
        """
        self._blend(int(x0), int(y0), np.asarray(coverage, dtype=np.float64), color, alpha)

    def _blend(
        self, x0: int, y0: int, coverage: _FloatArray, color: ColorLike, alpha: float
    ) -> None:
        """Mix ``color`` into the pixels at ``(x0, y0)`` in proportion to ``coverage * alpha``."""
        alpha = float(alpha)
        if not 0.0 <= alpha <= 1.0:  # NaN too: cast to uint8 it paints black
            raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}.")
        if not math.isfinite(float(coverage.sum())):
            raise ValueError("coverage weights must be finite numbers in [0, 1], got NaN or inf.")
        h, w = coverage.shape
        region = self.pixels[y0 : y0 + h, x0 : x0 + w]
        weight = (coverage * alpha)[..., None]
        mixed = region + (_color(color) - region) * weight
        region[...] = np.clip(mixed + 0.5, 0.0, 255.0).astype(np.uint8)


def _color(color: ColorLike) -> _FloatArray:
    if type(color) is tuple:  # a theme's colours: checked once, then looked up
        try:
            return _tuple_color(color)
        except TypeError:  # unhashable channels: checked below, and reported there
            pass
    return _checked_color(color)


def _checked_color(color: ColorLike) -> _FloatArray:
    arr: _FloatArray | None
    try:
        given = np.asarray(color)
        # float64 would read digit strings ("255") as numbers: channels are numbers
        arr = given.astype(np.float64) if given.dtype.kind in "biuf" else None
    except (TypeError, ValueError):  # ragged channels: NumPy's words name neither
        arr = None
    if arr is None or arr.shape != (3,) or not np.all((arr >= 0) & (arr <= 255)):
        raise ValueError(f"A colour must be (r, g, b) with channels in [0, 255], got {color!r}.")
    return arr


@functools.lru_cache(maxsize=1024)
def _tuple_color(color: tuple[int, ...]) -> _FloatArray:
    arr = _checked_color(color)
    arr.setflags(write=False)  # shared by every draw call with this colour
    return arr


def _points(points: Iterable[PointLike]) -> _FloatArray:
    pts = np.asarray(list(points) if not isinstance(points, np.ndarray) else points, np.float64)
    if pts.size == 0:
        return pts.reshape(0, 2)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"Points must be a sequence of (x, y) pairs, got shape {pts.shape}.")
    if not np.all(np.isfinite(pts)):
        raise ValueError("Cannot draw at non-finite coordinates.")
    return pts


def _small_polygon(
    pts: _FloatArray, nxt: _FloatArray, ix0: int, iy0: int, ix1: int, iy1: int
) -> tuple[npt.NDArray[np.bool_], _FloatArray]:
    """``polygon``'s inside mask and edge distances for a small box, every edge at once.

    The same figures as the scanline and per-edge path (the same formulas, pixel by pixel):
    a pixel centre is inside when an odd number of edges cross its row at or left of it, and
    its distance is the smallest to any edge.
    """
    xs = np.arange(ix0, ix1, dtype=np.float64)[None, :, None] + 0.5
    ys = np.arange(iy0, iy1, dtype=np.float64)[:, None, None] + 0.5
    ax, ay, bx, by = pts[:, 0], pts[:, 1], nxt[:, 0], nxt[:, 1]
    crosses = (ay > ys) != (by > ys)  # (rows, 1, edges)
    with np.errstate(divide="ignore", invalid="ignore"):
        at = np.where(crosses, ax + (ys - ay) * (bx - ax) / (by - ay), np.inf)
    inside: npt.NDArray[np.bool_] = np.count_nonzero(at <= xs, axis=2) % 2 == 1
    px, py = xs - ax, ys - ay
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(length2 > 0, np.clip((px * dx + py * dy) / length2, 0.0, 1.0), 0.0)
    dist: _FloatArray = np.hypot(px - t * dx, py - t * dy).min(axis=2)
    return inside, dist


def _scanline_inside(
    pts: _FloatArray, ix0: int, iy0: int, ix1: int, iy1: int
) -> npt.NDArray[np.bool_]:
    """Which pixel centres of the box lie inside the polygon (even-odd rule), row by row at once."""
    ys = np.arange(iy0, iy1, dtype=np.float64)[:, None] + 0.5
    ax, ay = pts[:, 0][None, :], pts[:, 1][None, :]
    bx, by = np.roll(pts[:, 0], -1)[None, :], np.roll(pts[:, 1], -1)[None, :]
    crosses = (ay > ys) != (by > ys)
    with np.errstate(divide="ignore", invalid="ignore"):
        xs = np.where(crosses, ax + (ys - ay) * (bx - ax) / (by - ay), np.inf)
    xs.sort(axis=1)
    n_rows, width = iy1 - iy0, ix1 - ix0
    marks = np.zeros((n_rows, width + 1), np.int32)
    # Pairs of sorted crossings bound the inside spans; a pixel is inside when its centre is.
    for k in range(0, xs.shape[1] - 1, 2):
        start, end = xs[:, k], xs[:, k + 1]
        valid = np.isfinite(end)
        first = np.clip(np.ceil(start[valid] - 0.5) - ix0, 0, width).astype(np.intp)
        stop = np.clip(np.ceil(end[valid] - 0.5) - ix0, 0, width).astype(np.intp)
        rows = np.flatnonzero(valid)
        np.add.at(marks, (rows, first), 1)
        np.add.at(marks, (rows, stop), -1)
    inside: npt.NDArray[np.bool_] = np.cumsum(marks[:, :width], axis=1) > 0
    return inside


@functools.lru_cache(maxsize=4096)
def _text_mask(text: str) -> npt.NDArray[np.bool_]:
    """The 1-bit image of ``text`` (shared by every call with it: read-only)."""
    mask = _render_text(text)
    mask.setflags(write=False)
    return mask


def _render_text(text: str) -> npt.NDArray[np.bool_]:
    lines = text.split("\n")
    longest = max(len(line) for line in lines)
    mask = np.zeros((len(lines) * _CELL_H - 1, max(longest * _CELL_W - 1, 0)), dtype=bool)
    for row, line in enumerate(lines):
        for col, char in enumerate(line):
            y, x = row * _CELL_H, col * _CELL_W
            mask[y : y + GLYPH_HEIGHT, x : x + GLYPH_WIDTH] = glyph(char)
    return mask
