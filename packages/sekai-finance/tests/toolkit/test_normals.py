"""The whole-array ziggurat of the native envs (``sekai.finance._normals``): its tables, its
distribution (every path: rectangles, wedges, tail, restarts) and the blocks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from sekai.finance import _normals
from sekai.finance._normals import (
    INSIDE,
    SCALE,
    F,
    NormalBlocks,
    R,
    V,
    _words,
    fill_standard_normal,
)

EDGES = np.abs(SCALE[:256]) * 2.0**52  # x_i, the right edge of layer i (layer 0: the base)


def normal_cdf(x: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x.tolist()])


def chi_square(sample: np.ndarray, edges: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic of ``sample`` binned by ``edges`` (plus the two outer bins)."""
    counts = np.bincount(np.searchsorted(edges, sample), minlength=edges.size + 1)
    cdf = np.concatenate([[0.0], normal_cdf(edges), [1.0]])
    expected = np.diff(cdf) * sample.size
    return float(((counts - expected) ** 2 / expected).sum()), edges.size


# -- the tables --------------------------------------------------------------------------------


def test_every_layer_has_the_same_area() -> None:
    f = np.exp(-0.5 * EDGES**2)
    assert np.allclose(F[1:], f[1:], rtol=1e-15, atol=0) and F[0] == 1.0
    # layer i: the rectangle [0, x_i] x [f(x_i), f(x_{i-1})], the top one ending at f(0) = 1
    areas = EDGES[1:] * (np.concatenate([[1.0], f[1:-1]]) - f[1:])
    assert np.allclose(areas, V, rtol=1e-12, atol=0), np.abs(areas / V - 1).max()
    tail = math.sqrt(math.pi / 2) * math.erfc(R / math.sqrt(2))
    assert R * math.exp(-0.5 * R * R) + tail == pytest.approx(V, rel=1e-15)  # the base
    assert abs(V / 0.00492867323399 - 1) < 1e-11  # Marsaglia and Tsang's value


def test_the_rectangles_shrink_to_the_top_and_the_inside_parts_sit_under_the_curve() -> None:
    assert EDGES[255] == R and np.all(np.diff(EDGES[1:]) > 0)
    inside = INSIDE[:256] / 2.0**52  # fraction of each layer's width under the layer above
    assert inside[1] == 0.0  # the top layer has no part surely under the curve
    assert np.allclose(inside[2:] * EDGES[2:], EDGES[1:-1], rtol=1e-15)
    assert inside[0] * EDGES[0] == pytest.approx(R, rel=1e-15)
    assert np.array_equal(SCALE[256:], -SCALE[:256]) and np.array_equal(INSIDE[256:], INSIDE[:256])


# -- the distribution --------------------------------------------------------------------------

N = 2_000_000


@pytest.fixture(scope="module")
def sample() -> np.ndarray:
    out = np.empty(N)
    fill_standard_normal(np.random.default_rng(20261202), out)
    return out


def test_the_sample_fits_the_normal_distribution_bin_by_bin(sample: np.ndarray) -> None:
    # Fine bins across the body, and the layers' own edges (where a wrong table shows first).
    edges = np.unique(np.concatenate([np.linspace(-4.5, 4.5, 181), EDGES[1:], -EDGES[1:]]))
    stat, dof = chi_square(sample, edges)
    # chi-square with ~680 degrees of freedom: mean dof, sd sqrt(2 dof); 5 sd is p ~ 1e-7
    assert stat < dof + 5 * math.sqrt(2 * dof), (stat, dof)
    reference, _ = chi_square(np.random.default_rng(20261202).standard_normal(N), edges)
    assert reference < dof + 5 * math.sqrt(2 * dof)  # the same test passes NumPy's sampler


def test_moments_and_symmetry(sample: np.ndarray) -> None:
    se = 1 / math.sqrt(N)
    assert abs(sample.mean()) < 5 * se
    assert abs(sample.var() - 1) < 5 * math.sqrt(2) * se
    assert abs((sample**3).mean()) < 5 * math.sqrt(15) * se
    assert abs((sample**4).mean() - 3) < 5 * math.sqrt(96) * se
    assert abs((sample < 0).mean() - 0.5) < 5 * 0.5 * se


@pytest.mark.parametrize("beyond", [R, 4.0, 4.5])
def test_the_tail_beyond_the_base_layer_has_its_normal_weight(
    sample: np.ndarray, beyond: float
) -> None:
    expected = N * math.erfc(beyond / math.sqrt(2))  # both sides
    count = int((np.abs(sample) > beyond).sum())
    assert abs(count - expected) < 5 * math.sqrt(expected), (count, expected)


def test_consecutive_draws_are_uncorrelated(sample: np.ndarray) -> None:
    lag = float(np.corrcoef(sample[:-1], sample[1:])[0, 1])
    assert abs(lag) < 5 / math.sqrt(N)


# -- each path, with chosen raw draws ----------------------------------------------------------


class ChosenBits:
    """A generator stand-in: these 64-bit words, then these uniforms, then these normals."""

    bit_generator = None  # not one whose raw output the sampler reads directly

    def __init__(self, raw: list[int], uniforms: list[float], normals: list[float] = ()) -> None:
        self._raw = np.array(raw, dtype=np.uint64)
        self._uniforms = list(uniforms)
        self._normals = list(normals)

    def integers(self, low: int, high: int, size: int, dtype: type, endpoint: bool) -> np.ndarray:
        assert (low, high, dtype, endpoint) == (0, 2**64 - 1, np.uint64, True)
        assert size == self._raw.size
        return self._raw.copy()

    def random(self, size: int) -> np.ndarray:
        taken, self._uniforms = self._uniforms[:size], self._uniforms[size:]
        return np.array(taken)

    def standard_normal(self, size: int) -> np.ndarray:
        taken, self._normals = self._normals[:size], self._normals[size:]
        return np.array(taken)


def word(layer: int, negative: bool, draw: int) -> int:
    return (draw << 12) | (int(negative) << 8) | layer


def draw_values(rng: ChosenBits, size: int) -> np.ndarray:
    out = np.empty(size)
    fill_standard_normal(rng, out)  # type: ignore[arg-type]
    return out


def test_a_draw_inside_its_rectangle_is_its_position_in_the_layer() -> None:
    layer, draw = 200, 2**50
    out = draw_values(ChosenBits([word(layer, False, draw), word(layer, True, draw)], []), 2)
    assert out.tolist() == [draw * SCALE[layer], -draw * SCALE[layer]]
    assert 0 < out[0] < EDGES[layer - 1]


def test_a_wedge_draw_is_kept_under_the_curve_and_restarted_above_it() -> None:
    layer = 100
    top = 2**52 - 1  # the far right of the layer: outside its rectangle
    x = top * SCALE[layer]
    assert x > EDGES[layer - 1]
    # a uniform height of 0 lies under the curve; of 1 - 2**-53, above it
    rng = ChosenBits([word(layer, False, top), word(layer, True, top)], [0.0, 1 - 2**-53], [0.25])
    assert draw_values(rng, 2).tolist() == [x, 0.25]  # the second one restarted


def test_the_top_layer_always_takes_the_wedge_test() -> None:
    x = 1 * SCALE[1]
    rng = ChosenBits([word(1, True, 1)], [0.0])
    assert draw_values(rng, 1).tolist() == [-x]


def test_a_base_draw_beyond_r_is_drawn_from_the_tail_with_its_sign() -> None:
    top = 2**52 - 1
    # the tail retries until 2 yy > xx^2: the first pair fails (yy = 0), the second holds
    u1, u2 = 0.5, 0.9
    rng = ChosenBits([word(0, True, top)], [0.3, 0.0, u1, u2])
    (value,) = draw_values(rng, 1).tolist()
    xx = -math.log1p(-u1) / R
    assert value == -(R + xx)


def test_a_tail_pair_is_accepted_when_twice_yy_exceeds_xx_squared() -> None:
    top = 2**52 - 1
    u1, u2 = 0.9, 0.26  # xx^2 / 2 < yy < xx^2: accepted at once; a later pair is never read
    xx, yy = -math.log1p(-u1) / R, -math.log1p(-u2)
    assert xx * xx / 2 < yy < xx * xx
    rng = ChosenBits([word(0, False, top)], [u1, u2, 0.5, 0.9])
    assert draw_values(rng, 1).tolist() == [R + xx]


def test_a_base_draw_inside_r_is_kept() -> None:
    draw = int(INSIDE[0]) - 1
    assert draw_values(ChosenBits([word(0, False, draw)], []), 1)[0] == draw * SCALE[0] < R


def test_large_arrays_are_filled_in_passes_from_one_stream() -> None:
    # Every pass takes the next words of the stream; a draw inside its rectangle is its
    # word's position in the layer, wherever its pass falls.
    size = 2 * _normals._CHUNK + 7
    whole = np.empty(size)
    fill_standard_normal(np.random.default_rng(3), whole)
    words = np.random.default_rng(3).bit_generator.random_raw(size)
    index = (words & np.uint64(0x1FF)).astype(np.intp)
    draw = (words >> np.uint64(12)).astype(np.float64)
    inside = draw < INSIDE[index]
    assert 0.97 < inside.mean() < 1.0
    assert np.array_equal(whole[inside], (draw * SCALE[index])[inside])


def test_the_slow_steps_of_every_pass_run_once_for_the_whole_fill() -> None:
    # Two passes' words first, then the uniforms of both passes' wedge draws, in order, each
    # result at its own position.
    chunk = _normals._CHUNK
    layer, top = 100, 2**52 - 1  # the far right of the layer: outside its rectangle
    inside = word(200, False, 2**50)
    raw = [inside] * (2 * chunk)
    raw[5], raw[chunk + 3] = word(layer, False, top), word(layer, True, top)

    class Passes(ChosenBits):
        calls = 0

        def integers(self, *args: Any, size: int, **kwargs: Any) -> np.ndarray:
            taken, self._raw = self._raw[:size], self._raw[size:]
            return taken

        def random(self, size: int) -> np.ndarray:
            self.calls += 1
            return super().random(size)

    rng = Passes(raw, [0.0, 1 - 2**-53], [0.25])  # kept under the curve, then restarted
    out = np.empty(2 * chunk)
    fill_standard_normal(rng, out)  # type: ignore[arg-type]
    assert out[5] == top * SCALE[layer] and out[chunk + 3] == 0.25
    assert rng._raw.size == 0 and not rng._uniforms and not rng._normals
    assert rng.calls == 1  # one wedge round for both passes


# -- blocks ------------------------------------------------------------------------------------


def test_blocks_hand_out_one_stream_and_never_reuse_an_array() -> None:
    blocks = NormalBlocks()
    rng = np.random.default_rng(5)
    shape = (512, 5)
    draws = [blocks.draw(rng, shape) for _ in range(20)]  # several blocks
    kept = [d.copy() for d in draws]
    assert all(d.shape == shape for d in draws)
    later = [blocks.draw(rng, shape) for _ in range(20)]
    assert all(np.array_equal(d, k) for d, k in zip(draws, kept))  # untouched by later draws
    stream = np.concatenate([d.ravel() for d in draws + later])
    assert np.unique(stream).size == stream.size


def test_blocks_follow_the_generator_they_are_given() -> None:
    blocks = NormalBlocks()
    first = [blocks.draw(np.random.default_rng(9), (3, 4)) for _ in range(2)]
    # A new generator (a reseed) drops the block: the same seed gives the same draws again.
    assert np.array_equal(first[0], first[1])
    twin = NormalBlocks()
    rng_a, rng_b = np.random.default_rng(11), np.random.default_rng(11)
    a = [blocks.draw(rng_a, (7,)) for _ in range(5)]
    b = [twin.draw(rng_b, (7,)) for _ in range(5)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_draws_too_big_to_draw_ahead_skip_the_block_but_keep_its_rest() -> None:
    blocks, rng = NormalBlocks(), np.random.default_rng(2)
    small = blocks.draw(rng, (4,))
    big = blocks.draw(rng, (_normals._MAX_BLOCK + 1,))
    again = blocks.draw(rng, (4,))
    assert big.shape == (_normals._MAX_BLOCK + 1,)
    block = blocks._block
    assert np.array_equal(block[:4], small) and np.array_equal(block[4:8], again)


def test_draws_of_a_pass_or_more_share_a_block_that_ends_on_a_pass_boundary() -> None:
    chunk = _normals._CHUNK
    size = 4 * chunk // 3  # 4,096 sub-envs of 5 assets: 20,480
    blocks, rng = NormalBlocks(), np.random.default_rng(6)
    draws = [blocks.draw(rng, (size // 5, 5)) for _ in range(7)]
    assert blocks._block.size == 8 * chunk  # six draws, eight full passes; the 7th opened a new one
    whole = np.empty(8 * chunk)
    fill_standard_normal(np.random.default_rng(6), whole)
    assert np.array_equal(np.concatenate([d.ravel() for d in draws[:6]]), whole)


@pytest.mark.parametrize(
    "size", [5, 7, 5120, 7000, 15_360, 15_361, 20_480, 30_720, 40_960, 100_000, 122_880]
)
def test_each_block_takes_the_fewest_passes_per_draw_and_then_the_most_draws(size: int) -> None:
    chunk, cap = _normals._CHUNK, _normals._MAX_BLOCK
    block = _normals._block_size(size)
    assert block % size == 0 and block <= cap

    def passes(draws: int) -> int:
        return -(-draws * size // chunk)

    draws = block // size
    for other in range(1, cap // size + 1):  # every block of whole draws within the cap
        assert passes(draws) * other <= passes(other) * draws  # no fewer passes per draw
        if passes(draws) * other == passes(other) * draws:
            assert other <= draws


def test_one_block_serves_many_steps_of_a_thousand_sub_envs() -> None:
    assert _normals._block_size(5120) == 24 * 5120  # eight full passes


def test_fill_takes_small_arrays_from_the_block_and_fills_large_ones_directly() -> None:
    blocks, twin = NormalBlocks(), NormalBlocks()
    rng_a, rng_b = np.random.default_rng(8), np.random.default_rng(8)
    small = np.empty((3, 5))
    blocks.fill(rng_a, small)
    assert np.array_equal(small, twin.draw(rng_b, (3, 5)))
    large = np.empty((_normals._CHUNK + 1,))
    blocks.fill(rng_a, large)
    direct = np.empty_like(large)
    fill_standard_normal(rng_b, direct)
    assert np.array_equal(large, direct)


def test_an_empty_draw_is_an_empty_array() -> None:
    blocks, rng = NormalBlocks(), np.random.default_rng(0)
    assert blocks.draw(rng, (0, 5)).shape == (0, 5)
    assert blocks.draw(rng, (2,)).shape == (2,)


def test_every_bit_generator_gives_full_words() -> None:
    # MT19937's raw output is 32 bits: taken as 64-bit words, every draw would be ~1e-10.
    for bits in (np.random.MT19937(1), np.random.PCG64(1), np.random.Philox(1), np.random.SFC64(1)):
        out = np.empty(200_000)
        fill_standard_normal(np.random.Generator(bits), out)
        assert abs(out.std() - 1) < 0.01 and abs(out.mean()) < 0.01, type(bits).__name__


BIT_GENERATORS = (np.random.MT19937, np.random.PCG64, np.random.PCG64DXSM, np.random.Philox)
BIT_GENERATORS += (np.random.SFC64,)


@pytest.mark.parametrize("bits", BIT_GENERATORS, ids=lambda b: b.__name__)
def test_the_words_are_those_of_integers_over_all_of_uint64(bits: type) -> None:
    # The sampler reads 64-bit generators' raw output directly: the same words, faster.
    expected = np.random.Generator(bits(4)).integers(0, 2**64 - 1, 999, np.uint64, endpoint=True)
    assert np.array_equal(_words(np.random.Generator(bits(4)), 999), expected)
    a, b = np.empty(20_000), np.empty(20_000)
    fill_standard_normal(np.random.Generator(bits(5)), a)
    fill_standard_normal(ViaIntegers(np.random.Generator(bits(5))), b)  # type: ignore[arg-type]
    assert np.array_equal(a, b)


class ViaIntegers:
    """A generator whose words can only come from ``integers``."""

    bit_generator = None

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rng, name)


@pytest.mark.parametrize(
    "out",
    [
        np.zeros((200, 100), order="F"),
        np.zeros((7690, 4))[:, :3],
        np.zeros(10, dtype=np.float32),
        np.zeros(20)[::2],
    ],
    ids=["fortran-order", "strided-columns", "float32", "strided-1d"],
)
def test_an_array_that_cannot_be_filled_in_place_is_refused(out: np.ndarray) -> None:
    with pytest.raises(ValueError, match="C-contiguous float64"):
        fill_standard_normal(np.random.default_rng(0), out)
    with pytest.raises(ValueError, match="C-contiguous float64"):
        NormalBlocks().fill(np.random.default_rng(0), out)
