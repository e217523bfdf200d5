"""ClipAction against the straightforward NumPy computation: the same arrays (dtype, values,
NaNs, signs of zeros), the same warnings and the same errors, on its fast path
(``sekai._clip.clip``) and off it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import ClipAction

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
