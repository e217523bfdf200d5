"""ClipAction and RescaleAction against the straightforward NumPy computation: the same arrays
(dtype, values, NaNs, signs of zeros), the same warnings and the same errors, on their fast
paths (a few float dimensions on Python floats, ``sekai._clip.clip``) and off them."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import ClipAction, RescaleAction
from sekai.wrappers.transform_action import AffineMap

ERRSTATES: list[dict[str, str]] = [{}, {"all": "raise"}, {"under": "warn", "over": "warn"}]


def _outcome(
    compute: Callable[..., Any], errstate: dict[str, str], *args: Any
) -> tuple[Any, list[Any]]:
    """What ``compute(*args)`` returns (or raises: its type and message) and the warnings it
    gives."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(**errstate):  # type: ignore[arg-type]
        warnings.simplefilter("always")
        try:
            result = compute(*args)
        except Exception as exc:  # compared, type and message, with the reference's
            result = (type(exc), str(exc))
    return result, [(w.category, str(w.message)) for w in caught]


def _assert_same_outcome(got: tuple[Any, list[Any]], expected: tuple[Any, list[Any]]) -> None:
    (result, caught), (reference, reference_caught) = got, expected
    assert caught == reference_caught
    if isinstance(reference, tuple):  # raised
        assert result == reference
        return
    assert type(result) is type(reference)  # an array, or np.clip's scalar for a 0-d one
    assert result.dtype == reference.dtype and result.shape == reference.shape
    assert np.array_equal(result, reference, equal_nan=True)
    assert np.array_equal(np.signbit(result), np.signbit(reference))


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 1e-320, 5e-324, 1.0, -1.0]


def _env_with_box(low: Any, high: Any, dtype: Any) -> Any:
    class Recorder(sekai.Env[Any, Any]):
        def __init__(self) -> None:
            self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
            self.action_space = sekai.Box(low, high, dtype=dtype)
            self.actions: list[Any] = []

        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            return sekai.ResetResult(np.zeros(1, np.float32), {})

        def step(self, action: Any) -> sekai.StepResult[Any]:
            self.actions.append(action)
            return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})

    return Recorder()


CLIP_BOUNDS: list[tuple[Any, Any]] = [
    (-2.0, 2.0),
    (0.0, 1.0),
    (-0.0, 0.0),
    (-1.0, -0.0),
    (-np.inf, np.inf),
    (0.5, 0.5),
]


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 2), (20,)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble, np.int16])
def test_clip_action_clips_exactly_as_np_clip(shape: tuple[int, ...], dtype: Any) -> None:
    rng = np.random.default_rng(len(shape))
    size = int(np.prod(shape))
    for low, high in CLIP_BOUNDS:
        if np.dtype(dtype).kind == "i" and not float(low).is_integer():
            continue
        env = ClipAction(_env_with_box(np.full(shape, low), np.full(shape, high), dtype))
        space = env.action_space
        for _ in range(200):
            x = rng.normal(0, 3, size)
            x = np.where(rng.random(size) < 0.3, rng.choice([*SPECIAL, low, high], size), x)
            x = x.reshape(shape)
            x_dtype = dtype if rng.random() < 0.7 else [np.float32, np.float64][rng.integers(2)]
            if np.dtype(x_dtype).kind == "i":
                x = np.nan_to_num(x, posinf=9, neginf=-9).round()
            with np.errstate(all="ignore"):
                action = x.astype(x_dtype)
            if np.dtype(dtype).kind == "f" or action.dtype == dtype:  # else IntegerClip's
                expected = _outcome(_cast_then_clip, {}, action, dtype, space.low, space.high)
                _assert_same_outcome(_outcome(env.action, {}, action), expected)


def _cast_then_clip(action: Any, dtype: Any, low: Any, high: Any) -> Any:
    return np.clip(action.astype(dtype), low, high)


def test_clip_action_clips_float_arrays_without_np_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    env = ClipAction(_env_with_box(np.full(3, -2.0), np.full(3, 2.0), np.float32))

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("np.clip called")

    monkeypatch.setattr(np, "clip", refused)
    out = env.action(np.array([3.0, -0.0, -5.0]))
    assert out.dtype == np.float32 and out.tolist() == [2.0, -0.0, -2.0]
    assert np.signbit(out).tolist() == [False, True, True]


def _reference_map(src: tuple[Any, Any], dst: tuple[Any, Any], dtype: Any) -> Callable[[Any], Any]:
    """The map as written out: the scale (0 where the source range is empty), the affine map
    in float64, np.clip onto the destination, the cast."""
    src_low, src_high = (np.asarray(b, np.float64) for b in src)
    dst_low, dst_high = (np.asarray(b, np.float64) for b in dst)
    with np.errstate(all="ignore"):  # the map's construction, not its call
        span = src_high - src_low
        scale = np.where(span == 0, 0.0, (dst_high - dst_low) / np.where(span == 0, 1.0, span))

    def compute(x: Any) -> Any:
        mapped = dst_low + (np.asarray(x, np.float64) - src_low) * scale
        return np.clip(mapped, dst_low, dst_high).astype(dtype, copy=False)

    return compute


def _bound_pairs(rng: np.random.Generator, n: int) -> list[tuple[Any, Any]]:
    """Bounds for ``n`` dimensions: ordinary ones, zeros of both signs, an empty range, huge
    ones (whose range overflows), tiny ones (whose map underflows)."""
    low = rng.uniform(-5, 1, n)
    high = low + rng.uniform(0.5, 5, n)
    above, below = high - low, low - high  # above and below zero
    pairs = [(low, high), (np.zeros(n), above), (below, np.zeros(n))]
    pairs += [(np.full(n, -0.0), above), (below, np.full(n, -0.0))]
    pairs += [(low, np.where(np.arange(n) == 0, low, high))]  # the first dimension empty
    pairs += [(np.full(n, -1e308), np.full(n, 1e308)), (np.full(n, 1e-310), np.full(n, 3e-310))]
    pairs += [(np.full(n, -3.0e-39), np.full(n, 3.0e-39)), (np.full(n, -1e-5), np.full(n, 1e-5))]
    return pairs


@pytest.mark.parametrize("n", [1, 3, 8, 9])
def test_the_affine_map_casts_exactly_as_numpy_maps_then_casts(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    numpy_maps = []
    numpy_call = AffineMap.__call__

    def counted(self: AffineMap, x: Any) -> Any:
        numpy_maps.append(x)
        return numpy_call(self, x)

    monkeypatch.setattr(AffineMap, "__call__", counted)
    rng = np.random.default_rng(n)
    pairs = _bound_pairs(rng, n)
    casts = 0
    for src in pairs:
        for dst in pairs:
            with np.errstate(all="ignore"):  # a huge range overflows, an empty one has no scale
                m = AffineMap(src[0], src[1], dst[0], dst[1])
            for x_dtype in (np.float16, np.float32, np.float64, np.int64, bool):
                for _ in range(3):
                    x = rng.uniform(-8, 8, n)
                    x = np.where(rng.random(n) < 0.5, np.clip(x, src[0], src[1]), x)  # bounds
                    x = np.where(rng.random(n) < 0.1, rng.choice(SPECIAL, n), x)
                    if x_dtype in (np.int64, bool):
                        x = np.nan_to_num(x, posinf=9, neginf=-9)
                    with np.errstate(all="ignore"):
                        x = x.astype(x_dtype)
                    for dtype in map(np.dtype, (np.float16, np.float32, np.float64, np.int32)):
                        for errstate in ERRSTATES:
                            expected = _outcome(_reference_map(src, dst, dtype), errstate, x)
                            got = _outcome(m.cast, errstate, x, dtype)
                            _assert_same_outcome(got, expected)
                            casts += 1
    on_python_floats = casts - len(numpy_maps)
    if n <= 8:  # many casts, not all: the fall-backs to NumPy are exercised too
        assert casts / 20 < on_python_floats < casts
    else:
        assert on_python_floats == 0


@pytest.mark.parametrize("n", [1, 3, 8, 9])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_rescale_action_sends_and_reverses_exactly_the_written_out_map(n: int, dtype: Any) -> None:
    rng = np.random.default_rng(n)
    low = rng.uniform(-3, -0.5, n).astype(dtype)
    high = rng.uniform(0.5, 3, n).astype(dtype)
    low[0] = 0.0  # bounds of +0.0
    if n > 1:
        high[-1] = 0.0
    if n > 2:
        high[n // 2] = low[n // 2]  # an empty range to reverse
    for new in [(-1.0, 1.0), (0.0, 1.0), (-0.0, 2.0), (rng.uniform(-9, -1, n), 1.5)]:
        inner = _env_with_box(low, high, dtype)
        env = RescaleAction(inner, *new)
        env.reset(seed=0)
        new_low, new_high = env.min_action, env.max_action
        for _ in range(300):
            action = rng.uniform(-2, 2, n) * (new_high - new_low) + new_low
            bound = np.where(rng.random(n) < 0.5, new_low, new_high)
            action = np.where(rng.random(n) < 0.3, bound, action)
            action = np.where(rng.random(n) < 0.1, rng.choice([0.0, -0.0], n), action)
            action = action.astype([np.float16, np.float32, np.float64][rng.integers(3)])
            given = action if rng.random() < 0.8 else action.tolist()
            expected = _outcome(_reference_map((new_low, new_high), (low, high), dtype), {}, action)
            _assert_same_outcome(_outcome(env.action, {}, given), expected)
            env.step(given)
            _assert_same_outcome((inner.actions[-1], []), expected)
            sent = inner.actions[-1]
            back = _outcome(_reference_map((low, high), (new_low, new_high), dtype), {}, sent)
            _assert_same_outcome(_outcome(env.reverse_action, {}, sent), back)
        for bad in [np.nan, np.inf, -np.inf]:  # refused before the map, as given
            action = np.full(n, 0.5, np.float32)
            action[-1] = bad
            with pytest.raises(sekai.InvalidAction) as caught:
                env.step(action)
            assert str(caught.value) == str(sekai.InvalidAction(action, env.action_space))
            assert caught.value.action is action
        assert len(inner.actions) == 300


def test_rescale_action_maps_a_few_float_dimensions_without_numpy_ufuncs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def numpy_map(self: AffineMap, x: Any) -> Any:
        raise AssertionError("mapped with NumPy")

    few = RescaleAction(_env_with_box(np.full(3, -2.0), np.full(3, 2.0), np.float32), -1.0, 1.0)
    many = RescaleAction(_env_with_box(np.full(9, -2.0), np.full(9, 2.0), np.float32), -1.0, 1.0)
    monkeypatch.setattr(AffineMap, "__call__", numpy_map)
    sent = few.action(np.array([0.5, -0.25, 3.0], np.float32))
    assert sent.dtype == np.float32 and sent.tolist() == [1.0, -0.5, 2.0]
    assert few.reverse_action(sent).tolist() == [0.5, -0.25, 1.0]
    with pytest.raises(AssertionError, match="mapped with NumPy"):  # 9 dimensions: NumPy's
        many.action(np.zeros(9, np.float32))
