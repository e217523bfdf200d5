"""Standard normals for the native envs: a ziggurat run as whole-array NumPy operations.

``Generator.standard_normal`` runs Marsaglia and Tsang's ziggurat one draw at a time; here
the same algorithm (256 layers, 52-bit positions, the same ``R``) runs on a whole block of
64-bit words at once, and only the ~1.5% of draws that fall outside their layer's rectangle
take the slow steps (the wedge test, the tail beyond ``R``), again as array operations, once
for a whole fill (after every pass has drawn its words: the slow steps cost the same dozen
NumPy calls for one pass or eight). A draw rejected by the wedge test restarts the
algorithm; its value is then an independent standard normal, taken from
``Generator.standard_normal``. The result has the same distribution as ``standard_normal``,
not the same values.

The native envs draw a small array every step; ``NormalBlocks`` draws many steps' worth at
once (a block of up to eight passes of 15,360), which is where the whole-array form pays off.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NormalBlocks", "fill_standard_normal"]

R = 3.6541528853610088  # start of the tail: the right edge of the base layer
# The area of each of the 256 layers under exp(-x**2 / 2): the base layer's rectangle plus
# the tail beyond R (about 0.00492867323399).
V = R * math.exp(-0.5 * R * R) + math.sqrt(math.pi / 2) * math.erfc(R / math.sqrt(2))
_BITS = 2.0**52
_CHUNK = 15_360  # draws per pass: every temporary stays below malloc's mmap threshold
_MAX_BLOCK = 8 * _CHUNK  # the largest block drawn ahead (~1 MB); larger draws are filled alone
# Bit generators whose random_raw words are the words of rng.integers over all of uint64
_WORD_GENERATORS = frozenset(
    {np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64}
)


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(scale, inside, f)``: per 9-bit index (layer, sign bit 8) the signed width of a
    52-bit unit and the draw below which the point is inside the layer's rectangle; per
    layer ``f(x_i) = exp(-x_i**2 / 2)`` at its right edge (``f[0] = 1``: the top)."""
    width = np.zeros(256)
    inside = np.zeros(256)
    f = np.zeros(256)
    x = R
    q = V / math.exp(-0.5 * R * R)  # the base layer's width, counting its tail
    inside[0] = math.floor(R / q * _BITS)
    width[0] = q / _BITS
    width[255] = R / _BITS
    f[0] = 1.0
    f[255] = math.exp(-0.5 * R * R)
    for i in range(254, 0, -1):  # each layer's edge from the one below: equal areas V
        inner = math.sqrt(-2.0 * math.log(V / x + math.exp(-0.5 * x * x)))
        inside[i + 1] = math.floor(inner / x * _BITS)
        x = inner
        f[i] = math.exp(-0.5 * x * x)
        width[i] = x / _BITS
    return np.concatenate([width, -width]), np.concatenate([inside, inside]), f


SCALE, INSIDE, F = _tables()


class _Work:
    """Scratch arrays of one pass, reused (allocating them anew costs page faults)."""

    def __init__(self) -> None:
        self.index = np.empty(_CHUNK, np.uint64)
        self.draw = np.empty(_CHUNK)
        self.table = np.empty(_CHUNK)
        self.outside = np.empty(_CHUNK, bool)


def fill_standard_normal(
    rng: np.random.Generator, out: np.ndarray, work: _Work | None = None
) -> None:
    """Fill the C-contiguous float64 array ``out`` with standard normals drawn from ``rng``.

    Raises:
        ValueError: ``out`` is not a C-contiguous float64 array.
    """
    _check_out(out)
    flat = out.reshape(-1)  # a view: out is C-contiguous
    if work is None:
        work = _Work()
    rows: list[np.ndarray] = []
    layers: list[np.ndarray] = []
    for start in range(0, flat.size, _CHUNK):
        outside, layer = _pass(rng, flat[start : start + _CHUNK], work)
        if outside.size:
            rows.append(outside + start)
            layers.append(layer)
    if rows:
        _outside(rng, flat, np.concatenate(rows), np.concatenate(layers))


def _check_out(out: np.ndarray) -> None:
    if out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(
            f"out must be a C-contiguous float64 array, got a {out.dtype} array with "
            f"strides {out.strides}."
        )


def _pass(rng: np.random.Generator, out: np.ndarray, work: _Work) -> tuple[np.ndarray, np.ndarray]:
    """Fill ``out`` (one pass) with the rectangle step: ``(rows, layers)`` of the draws that
    fell outside their rectangle, still to be finished by ``_outside``."""
    m = out.size
    raw = _words(rng, m)
    index, draw, table, outside = work.index[:m], work.draw[:m], work.table[:m], work.outside[:m]
    np.bitwise_and(raw, 0x1FF, out=index)  # bits 0-7 pick the layer, bit 8 the sign
    layer = index.view(np.int64)
    np.right_shift(raw, 12, out=raw)  # 52 bits, independent of the 9 above
    # Exact (every value is below 2**53); from int64, which has a SIMD conversion without
    # AVX-512, where uint64 has none.
    np.copyto(draw, raw.view(np.int64), casting="unsafe")
    # mode="clip" never clips (indices are below 512); mode="raise" would buffer ``out``.
    SCALE.take(layer, out=table, mode="clip")
    np.multiply(draw, table, out=out)
    INSIDE.take(layer, out=table, mode="clip")
    np.greater_equal(draw, table, out=outside)
    rows = np.flatnonzero(outside)
    return rows, layer[rows] & 0xFF


def _words(rng: np.random.Generator, m: int) -> np.ndarray:
    """``m`` full 64-bit words: ``rng.integers`` over all of uint64, whose words are the raw
    output of a 64-bit bit generator (read directly, faster); ``random_raw`` of MT19937
    gives 32-bit words, so it and any other generator go through ``integers``."""
    bit_generator = rng.bit_generator
    if type(bit_generator) in _WORD_GENERATORS:
        words: np.ndarray = bit_generator.random_raw(m)
        return words
    return rng.integers(0, 2**64 - 1, size=m, dtype=np.uint64, endpoint=True)


def _outside(
    rng: np.random.Generator, out: np.ndarray, rows: np.ndarray, layer: np.ndarray
) -> None:
    """The draws ``rows`` that fell outside their layer's rectangle (``layer`` 0: the tail)."""
    x = out[rows]
    tail = layer == 0
    wedge = np.flatnonzero(~tail)
    # The wedge: accept x if a uniform height within the layer lies under the curve.
    inner, outer = F[layer[wedge] - 1], F[layer[wedge]]
    height = (inner - outer) * rng.random(wedge.size) + outer
    xw = x[wedge]
    restart = rows[wedge[height >= np.exp(-0.5 * xw * xw)]]
    pending = np.flatnonzero(tail)
    while pending.size:  # Marsaglia's tail method, beyond R (1 - U avoids log(0))
        xx = -np.log1p(-rng.random(pending.size)) / R
        yy = -np.log1p(-rng.random(pending.size))
        done = yy + yy > xx * xx
        kept = pending[done]
        out[rows[kept]] = np.copysign(R + xx[done], x[kept])
        pending = pending[~done]
    if restart.size:
        out[restart] = rng.standard_normal(restart.size)


class NormalBlocks:
    """Standard normals drawn from a generator a block of several calls' worth at a time.

    ``draw(rng, shape)`` gives a new array of standard normals. The next calls' draws come
    from the same block until it is used up. The block belongs to one ``Generator`` object:
    another object (a reseed makes a new one) drops it, so the values are a function of the
    generator's seed and the sequence of calls. (Restoring ``rng.bit_generator.state`` on
    the same object does not replay the block.)
    """

    def __init__(self) -> None:
        self._rng: np.random.Generator | None = None
        self._block = np.empty(0)
        self._next = 0
        self._work = _Work()

    def fill(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Fill the C-contiguous float64 array ``out`` with the next standard normals.

        Raises:
            ValueError: ``out`` is not a C-contiguous float64 array.
        """
        _check_out(out)
        if out.size >= _CHUNK:
            fill_standard_normal(rng, out, self._work)
        else:
            out[...] = self.draw(rng, out.shape)

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """A new ``shape`` array of standard normals: a view of the block (never handed out
        again), or a fresh array for a size of 0 or above ``_MAX_BLOCK``."""
        size = math.prod(shape)
        if size == 0 or size > _MAX_BLOCK:  # nothing to draw, or too big to draw ahead
            out = np.empty(shape)
            fill_standard_normal(rng, out, self._work)
            return out
        if rng is not self._rng or self._next + size > self._block.size:
            # A fresh block each time: arrays handed out earlier stay views of the old one.
            self._block = np.empty(_block_size(size))
            fill_standard_normal(rng, self._block, self._work)
            self._rng, self._next = rng, 0
        start = self._next
        self._next = start + size
        return self._block[start : self._next].reshape(shape)


def _block_size(size: int) -> int:
    """The block for draws of ``size``: whole draws in up to eight passes, the fewest passes
    per draw and, among those, the most draws (one round of slow steps serves them all).

    For 5,120 (1,024 sub-envs of 5 assets), 24 draws in 8 full passes; for 20,480 (4,096
    sub-envs), 6 draws in 8 full passes, not one draw in two passes (one of a third).
    """
    best_passes, best_draws = 0, 0
    for passes in range(1, _MAX_BLOCK // _CHUNK + 1):
        draws = passes * _CHUNK // size  # the most whole draws these passes hold
        if draws and (not best_draws or passes * best_draws <= best_passes * draws):
            best_passes, best_draws = passes, draws
    return best_draws * size
