"""ClipAction and RescaleAction."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import ClipAction, RescaleAction
from sekai.wrappers.transform_action import AffineMap


def _box_env(toy_env: Any, low: Any = -2.0, high: Any = 2.0, **kwargs: Any) -> Any:
    return toy_env(action_space=sekai.Box(low, high, shape=(2,)), **kwargs)


def test_clip_action_clips_to_bounds_and_keeps_space(toy_env: Any) -> None:
    inner = _box_env(toy_env)
    env = ClipAction(inner)
    assert env.action_space == inner.action_space
    env.reset(seed=0)
    env.step(np.array([5.0, -0.5]))
    np.testing.assert_array_equal(inner.actions[-1], [2.0, -0.5])
    assert inner.actions[-1].dtype == np.float32
    np.testing.assert_array_equal(env.reverse_action(np.array([1.0, 9.0])), [1.0, 9.0])


def test_clip_action_clips_to_bounds_below_zero(toy_env: Any) -> None:
    env = ClipAction(_box_env(toy_env, -5.0, -1.0))
    np.testing.assert_array_equal(env.action(np.array([0.0, -9.0])), [-1.0, -5.0])


def test_clip_action_rejects_discrete(toy_env: Any) -> None:
    with pytest.raises(
        TypeError, match=r"^ClipAction requires a Box action space, got Discrete\.$"
    ):
        ClipAction(toy_env())


def test_rescale_action_maps_affinely_and_exposes_new_space(toy_env: Any) -> None:
    inner = _box_env(toy_env)
    env = RescaleAction(inner, -1.0, 1.0)
    assert repr(env.action_space) == "Box(-1.0, 1.0, (2,), float32)"
    np.testing.assert_allclose(env.action([0.5, -1.0]), [1.0, -2.0])
    env.reset(seed=0)
    env.step(np.array([0.0, 1.0], dtype=np.float32))
    np.testing.assert_allclose(inner.actions[-1], [0.0, 2.0])
    assert inner.actions[-1].dtype == np.float32


def test_rescale_action_clips_out_of_range_and_reverses(toy_env: Any) -> None:
    env = RescaleAction(_box_env(toy_env, low=0.0, high=10.0), [0.0, -1.0], [1.0, 1.0])
    np.testing.assert_allclose(env.action([2.0, -3.0]), [10.0, 0.0])
    np.testing.assert_allclose(env.reverse_action([5.0, 5.0]), [0.5, 0.0])
    np.testing.assert_allclose(env.reverse_action([20.0, -5.0]), [1.0, -1.0])


def test_rescale_action_sends_masked_components_as_zero(toy_env: Any) -> None:
    class Masked(toy_env):  # type: ignore[misc,valid-type]
        def action_mask(self) -> np.ndarray:
            return np.array([1, 0], dtype=np.int8)

    inner = Masked(action_space=sekai.Box(1.0, 3.0, shape=(2,)))
    env = RescaleAction(inner, -1.0, 1.0)
    np.testing.assert_allclose(env.action([1.0, 1.0]), [3.0, 1.0])  # zero() of [1, 3] is 1


def test_rescale_action_rejects_discrete(toy_env: Any) -> None:
    with pytest.raises(
        TypeError, match=r"^RescaleAction requires a Box action space, got Discrete\.$"
    ):
        RescaleAction(toy_env(), -1.0, 1.0)


def test_rescale_action_rejects_unbounded_env_space(toy_env: Any) -> None:
    with pytest.raises(
        ValueError, match=re.escape("RescaleAction requires a Box action space with finite bounds.")
    ):
        RescaleAction(_box_env(toy_env, low=-np.inf), -1.0, 1.0)


@pytest.mark.parametrize("low, high", [(1.0, 1.0), (1.0, 0.0), ([0.0, 1.0], [1.0, 1.0])])
def test_rescale_action_requires_min_below_max(low: Any, high: Any, toy_env: Any) -> None:
    with pytest.raises(
        ValueError, match=re.escape("min_action must be strictly less than max_action.")
    ):
        RescaleAction(_box_env(toy_env), low, high)


@pytest.mark.parametrize("bad", [np.array([0.2]), np.zeros(3), np.zeros((2, 2)), 0.5])
@pytest.mark.parametrize("wrap", [ClipAction, lambda e: RescaleAction(e, 0.0, 1.0)])
def test_an_action_of_another_shape_is_invalid_not_broadcast(
    wrap: Any, bad: Any, toy_env: Any
) -> None:
    inner = _box_env(toy_env)
    env = wrap(inner)
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction, match=r"is not valid for space Box") as caught:
        env.step(bad)
    assert caught.value.space == env.action_space
    assert inner.actions == []


I64 = np.iinfo(np.int64)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([np.nan, 0.0]),
        [0.5, np.inf],
        np.array([-np.inf, 0.0], np.float32),
        ["0.5", "0.5"],
        [[0.5], [0.5, 0.5]],
    ],
)
def test_rescale_action_reports_an_invalid_action_as_given_against_its_own_space(
    bad: Any, toy_env: Any
) -> None:
    # Before: a NaN went through the map and the env refused it, showing the mapped action
    # and the env's space; an infinity was clipped, a numeric string parsed.
    inner = _box_env(toy_env)
    env = RescaleAction(inner, -1.0, 1.0)
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction, match=r"for space Box\(-1\.0, 1\.0, \(2,\)") as caught:
        env.step(bad)
    assert caught.value.action is bad and caught.value.space == env.action_space
    assert inner.actions == []


def test_rescale_action_still_clips_finite_actions_of_any_real_dtype(toy_env: Any) -> None:
    env = RescaleAction(_box_env(toy_env), -1.0, 1.0)
    np.testing.assert_array_equal(env.action(np.array([5, -1])), [2.0, -2.0])
    np.testing.assert_array_equal(env.action([True, 0.5]), [2.0, 1.0])
    np.testing.assert_array_equal(env.action(np.array([3e38, -0.5], np.float32)), [2.0, -1.0])


@pytest.mark.parametrize(
    "dtype, low, high, action, expected",
    [
        (np.uint8, 0, 10, np.array([-3.0, 300.0]), [0, 10]),
        (np.uint8, 0, 10, np.array([-1, 20]), [0, 10]),
        (np.uint8, 0, 10, [-3, 20], [0, 10]),
        (np.int8, -5, 5, np.array([200.0, -1000.0]), [5, -5]),
        (np.int8, -5, 5, np.array([2.7, -2.7]), [2, -2]),
        # bounds an int8 action cannot hold still bound what is sent
        (np.int64, 1000, 2000, np.array([5, -5], np.int8), [1000, 1000]),
        (np.int64, -2000, -1000, np.array([5, -5], np.int8), [-1000, -1000]),
        (np.int64, 0, np.inf, np.array([2**62 + 1, 2**63 + 5], np.uint64), [2**62 + 1, I64.max]),
        (np.uint64, 0, np.inf, np.array([-1, 2**62 + 1], np.int64), [0, 2**62 + 1]),
    ],
)
def test_clip_action_on_an_integer_box_clips_before_casting(
    dtype: Any, low: Any, high: Any, action: Any, expected: Any, toy_env: Any
) -> None:
    env = ClipAction(toy_env(action_space=sekai.Box(low, high, shape=(2,), dtype=dtype)))
    out = env.action(action)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.array(expected, dtype=dtype))


@pytest.mark.parametrize(
    "bad",
    [["a", "b"], ["0.5", "0.5"], {"torque": 1.0}, [1 + 2j, 0.0], np.array([1 + 0j, 0j]), None],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_clip_action_refuses_an_action_that_is_not_real_numbers_naming_the_space(
    bad: Any, dtype: Any, toy_env: Any
) -> None:
    inner = toy_env(action_space=sekai.Box(-2, 2, shape=(2,), dtype=dtype))
    env = ClipAction(inner)
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction) as caught:
        env.step(bad)
    assert caught.value.action is bad and caught.value.space == env.action_space
    assert str(caught.value) == f"Action {bad!r} is not valid for space {env.action_space!r}."
    assert inner.actions == []


def test_clip_action_clips_infinities_and_casts_other_real_dtypes(toy_env: Any) -> None:
    env = ClipAction(_box_env(toy_env))
    for action in ([np.inf, -1], np.array([True, False]), np.array([-np.inf, 0.5])):
        out = env.action(action)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, np.clip(np.asarray(action, np.float32), -2, 2))


@pytest.mark.parametrize("action", [[np.nan, 3.0], np.array([3.0, np.nan])])
def test_clip_action_refuses_a_nan_for_an_integer_box(action: Any, toy_env: Any) -> None:
    env = ClipAction(toy_env(action_space=sekai.Box(0, 10, shape=(2,), dtype=np.int64)))
    with pytest.raises(sekai.InvalidAction):
        env.action(action)
    np.testing.assert_array_equal(env.action(np.array([12, -1])), [10, 0])  # same dtype


def test_clip_action_float_actions_beyond_int64_stay_in_the_box(toy_env: Any) -> None:
    space = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.int64)
    out = ClipAction(toy_env(action_space=space)).action(np.array([1e30, -1e30]))
    assert out in space
    assert out[0] > 2**62 and out[1] == I64.min


def test_rescale_action_reverse_maps_degenerate_env_dimensions_to_min_action(
    toy_env: Any,
) -> None:
    # The env's first dimension has low == high: reverse_action must not divide by its zero
    # range (NaN, and a RuntimeWarning, which this suite turns into an error).
    inner = toy_env(action_space=sekai.Box(np.array([0.0, -2.0]), np.array([0.0, 2.0])))
    env = RescaleAction(inner, -1.0, 1.0)
    sent = env.action(np.array([0.3, 0.5], np.float32))
    np.testing.assert_allclose(sent, [0.0, 1.0])
    back = env.reverse_action(sent)
    np.testing.assert_allclose(back, [-1.0, 0.5])
    assert back in env.action_space


def _clipped_map(m: AffineMap, x: Any) -> Any:
    """The map as written with np.clip, the reference for its results."""
    mapped = m._dst_low + (np.asarray(x, dtype=np.float64) - m._src_low) * m._scale
    return np.clip(mapped, m._dst_low, m._dst_high)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (40,)])
def test_the_affine_map_clips_exactly_as_np_clip_with_nan_and_signed_zeros(
    shape: tuple[int, ...],
) -> None:
    rng = np.random.default_rng(0)
    size = int(np.prod(shape))
    bounds = [
        np.resize(np.array(v), size).reshape(shape)  # zeros of both signs among the bounds
        for v in (
            [-1.0, 0.0, 2.0, -0.0, 3.0, 1.0],
            [1.0, 10.0, 2.0, 0.0, 4.0, 1.0],
            [-0.0, -5.0, 0.0, -2.0, 0.0, -1.0],
            [2.0, 0.0, 1.0, -0.0, 5.0, 1.0],
        )
    ]
    m = AffineMap(*bounds)
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, 3e38, -3e38]
    for dtype in (np.float32, np.float64, np.int64):
        for _ in range(300):
            x = rng.uniform(-20, 20, shape).astype(np.float64)
            if dtype is not np.int64:
                x = np.where(rng.random(shape) < 0.3, rng.choice(values, shape), x)
            x = np.asarray(x).astype(dtype)
            with np.errstate(invalid="ignore"):  # inf times a degenerate dimension's 0
                expected, got = _clipped_map(m, x), m(x)
            assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
            assert np.array_equal(got, expected, equal_nan=True)
            assert np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize(
    "dtype, low, high, message",
    [
        (np.uint8, -1.0, 1.0, "min_action -1.0 is outside the range of uint8 [0, 255]"),
        (np.uint8, 0.0, 256.0, "max_action 256.0 is outside the range of uint8 [0, 255]"),
        (np.int64, 0.0, 2.0**63, "max_action 9.223372036854776e+18 is outside the range of int64"),
        (np.int8, 0.0, 2.5, "max_action 2.5 is fractional, but the space's dtype int8 holds"),
        (np.float16, 0.0, 1e6, "max_action 1000000.0 overflows float16 (largest 65504.0)"),
    ],
)
def test_rescale_action_refuses_bounds_its_dtype_cannot_hold(
    dtype: Any, low: float, high: float, message: str, toy_env: Any
) -> None:
    # Box would clip them (or make them inf), and the map would disagree with the space.
    inner = toy_env(action_space=sekai.Box(0, 100, shape=(1,), dtype=dtype))
    with pytest.raises(ValueError, match="^RescaleAction: " + re.escape(message)):
        RescaleAction(inner, low, high)


def test_rescale_action_accepts_integer_bounds_at_the_dtype_limits(toy_env: Any) -> None:
    inner = toy_env(action_space=sekai.Box(0, 100, shape=(1,), dtype=np.uint8))
    assert repr(RescaleAction(inner, 0, 255).action_space) == "Box(0, 255, (1,), uint8)"
