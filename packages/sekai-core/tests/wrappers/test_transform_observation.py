"""TransformObservation, RescaleObservation, DtypeObservation and FilterObservation."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import (
    DtypeObservation,
    FilterObservation,
    RescaleObservation,
    TransformObservation,
)


def test_transform_observation_positional_fn_keeps_space(toy_env: Any) -> None:
    inner = toy_env()
    env = TransformObservation(inner, lambda o: o + 1)
    assert env.observation_space is inner.observation_space
    np.testing.assert_array_equal(env.reset(seed=0).observation, [1, 1])
    result = env.step(0)
    np.testing.assert_array_equal(result.observation, [2, 0])
    assert result.info == {"t": 1}


@pytest.mark.parametrize("keyword", ["fn", "func"])
def test_transform_observation_accepts_fn_and_func_keywords(keyword: str, toy_env: Any) -> None:
    space = sekai.Box(0.0, 1.0, shape=(1,))
    env = TransformObservation(
        toy_env(), **{keyword: lambda o: o[:1] * 0}, new_observation_space=space
    )
    assert env.observation_space is space
    np.testing.assert_array_equal(env.reset(seed=0).observation, [0])


def test_transform_observation_rejects_both_and_neither(toy_env: Any) -> None:
    with pytest.raises(TypeError, match="got both 'fn' and 'func'"):
        TransformObservation(toy_env(), fn=abs, func=abs)
    with pytest.raises(
        TypeError, match=r"TransformObservation\(\) missing required argument: 'fn'"
    ):
        TransformObservation(toy_env())


def test_transform_observation_rejects_non_space(toy_env: Any) -> None:
    message = "TransformObservation: new_observation_space must be a sekai.Space, got int."
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        TransformObservation(toy_env(), abs, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])  # a float input keeps its dtype
def test_rescale_observation_maps_bounds(dtype: Any, toy_env: Any) -> None:
    space = sekai.Box(np.array([-1.2, -0.07]), np.array([0.6, 0.07]), dtype=dtype)
    obs = np.array([-1.2, 0.07], dtype=dtype)
    env = RescaleObservation(toy_env(observation_space=space, obs_fn=lambda e: obs), -1.0, 1.0)
    assert repr(env.observation_space) == f"Box(-1.0, 1.0, (2,), {np.dtype(dtype).name})"
    out = env.reset(seed=0).observation
    assert out.dtype == dtype
    np.testing.assert_allclose(out, [-1.0, 1.0], atol=1e-6)


def test_rescale_observation_integer_input_becomes_float32_and_degenerate_maps_to_min(
    toy_env: Any,
) -> None:
    space = sekai.Box(np.array([0, 5]), np.array([10, 5]), dtype=np.int64)
    obs = np.array([5, 5], dtype=np.int64)
    env = RescaleObservation(toy_env(observation_space=space, obs_fn=lambda e: obs), 0.0, 2.0)
    out = env.reset(seed=0).observation
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1.0, 0.0])


def test_rescale_observation_errors(toy_env: Any) -> None:
    with pytest.raises(
        TypeError,
        match=re.escape("RescaleObservation requires a Box observation space, got Discrete."),
    ):
        RescaleObservation(toy_env(observation_space=sekai.Discrete(3)), 0.0, 1.0)
    unbounded = sekai.Box(-np.inf, 1.0, shape=(2,))
    with pytest.raises(
        ValueError,
        match=re.escape("RescaleObservation requires an observation space with finite bounds."),
    ):
        RescaleObservation(toy_env(observation_space=unbounded), 0.0, 1.0)
    with pytest.raises(ValueError, match=re.escape("min_obs must be strictly less than max_obs.")):
        RescaleObservation(toy_env(), 1.0, 1.0)


def test_rescale_observation_refuses_bounds_that_overflow_its_dtype(toy_env: Any) -> None:
    # Box would make the bound inf, and every observation would become inf.
    space = sekai.Box(0.0, 4.0, shape=(2,), dtype=np.float16)
    message = "RescaleObservation: max_obs 1000000.0 overflows float16 (largest 65504.0)."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        RescaleObservation(toy_env(observation_space=space), 0.0, 1e6)
    integer = sekai.Box(0, 9, shape=(2,), dtype=np.int64)  # observed as float32
    message = "RescaleObservation: min_obs -1e+39 overflows float32"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        RescaleObservation(toy_env(observation_space=integer), -1e39, 1.0)


def test_dtype_observation_casts_obs_and_bounds(toy_env: Any) -> None:
    env = DtypeObservation(toy_env(), np.float64)
    assert env.observation_space == sekai.Box(-100.0, 100.0, shape=(2,), dtype=np.float64)
    obs = env.reset(seed=0).observation
    assert obs.dtype == np.float64


def test_dtype_observation_to_integer_truncates_bounds(toy_env: Any) -> None:
    space = sekai.Box(-4.8, 4.8, shape=(2,))
    env = DtypeObservation(
        toy_env(observation_space=space, obs_fn=lambda e: np.array([-4.7, 4.8], np.float32)),
        np.int32,
    )
    assert repr(env.observation_space) == "Box(-4, 4, (2,), int32)"
    obs = env.reset(seed=0).observation
    assert obs.dtype == np.int32 and obs in env.observation_space


@pytest.mark.parametrize(
    "space, dtype, obs, expected",
    [
        (sekai.Box(-1.0, 1.0, shape=(3,)), np.int8, np.array([-1.0, -0.5, 1.0]), [-1, 0, 1]),
        (sekai.Box(0.0, 100.0, shape=(2,)), np.int8, np.array([200.0, 100.0]), [100, 100]),
        (sekai.Box(0, 200, shape=(2,), dtype=np.int64), np.uint8, np.array([-9, 300]), [0, 200]),
        (
            sekai.Box(0, 2**63 - 1, shape=(2,), dtype=np.int64),
            np.uint64,
            np.array([2**62 + 1, 5]),
            [2**62 + 1, 5],
        ),
        (sekai.Box(-np.inf, np.inf, shape=(2,)), np.int64, np.array([1e30, -1e30]), None),
    ],
)
def test_dtype_observation_to_a_narrower_integer_stays_in_its_space(
    space: sekai.Box, dtype: Any, obs: Any, expected: Any, toy_env: Any
) -> None:
    obs = obs.astype(space.dtype)
    env = DtypeObservation(toy_env(observation_space=space, obs_fn=lambda e: obs), dtype)
    out = env.reset(seed=0).observation
    assert out.dtype == dtype and out in env.observation_space
    if expected is not None:
        np.testing.assert_array_equal(out, np.array(expected, dtype=dtype))


@pytest.mark.parametrize(
    "space, dtype, says",
    [
        (sekai.Box(-1.0, 1.0, (3,)), np.uint8, "low -1.0 is outside the range of uint8 [0, 255]"),
        (sekai.Box(-4.8, 4.8, (2,)), np.uint8, "low -4.8 is outside the range of uint8"),
        (sekai.Box(0.0, 1000.0, (2,)), np.int8, "high 1000.0 is outside the range of int8"),
        (sekai.Box(-9, 300, (2,), np.int64), np.uint8, "low -9 is outside the range of uint8"),
        (sekai.Box(0, 2**64 - 1, (2,), np.uint64), np.int64, f"high {2**64 - 1} is outside"),
        (sekai.Box(-1e6, 1e6, (1,)), np.float16, "low -1000000.0 overflows float16"),
        (sekai.Box(0, 10**5, (1,), np.int64), np.float16, "high 100000 overflows float16"),
        (sekai.Box(-np.inf, 1e300, (1,), np.float64), np.float32, "high 1e+300 overflows float32"),
    ],
)
def test_dtype_observation_refuses_a_dtype_that_cannot_hold_the_bounds(
    space: sekai.Box, dtype: Any, says: str, toy_env: Any
) -> None:
    # Before: the bounds were clipped (or became inf) and the observations with them.
    with pytest.raises(
        ValueError, match=rf"^DtypeObservation: observation space {re.escape(says)}"
    ):
        DtypeObservation(toy_env(observation_space=space), dtype)


@pytest.mark.parametrize(("dtype", "name"), [(bool, "bool"), (np.complex64, "complex64")])
def test_dtype_observation_to_a_dtype_no_box_holds_is_refused_by_box(
    dtype: Any, name: str, toy_env: Any
) -> None:
    space = sekai.Box(-1.0, 1.0, (2,))
    with pytest.raises(
        TypeError, match=rf"^Box dtype must be an integer or floating dtype, got {name}"
    ):
        DtypeObservation(toy_env(observation_space=space), dtype)


def test_dtype_observation_keeps_exact_integer_bounds_at_the_limits(toy_env: Any) -> None:
    space = sekai.Box(0, 2**63 - 1, (1,), np.uint64)  # 2**63 - 1 is 2**63 as a float
    env = DtypeObservation(toy_env(observation_space=space), np.int64)
    assert env.observation_space == sekai.Box(0, 2**63 - 1, (1,), np.int64)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_dtype_observation_refuses_a_non_finite_observation_cast_to_integers(
    bad: float, dtype: Any, toy_env: Any
) -> None:
    obs = np.array([bad, 1.0], np.float32)
    inner = toy_env(observation_space=sekai.Box(-np.inf, np.inf, (2,)), obs_fn=lambda e: obs)
    env = DtypeObservation(inner, dtype)
    says = rf"^DtypeObservation: cannot cast an observation holding {bad!r} to {np.dtype(dtype)};"
    with pytest.raises(ValueError, match=says):
        env.reset(seed=0)
    with pytest.raises(ValueError, match=says):
        env.step(0)


def test_dtype_observation_to_a_float_dtype_keeps_non_finite_observations(toy_env: Any) -> None:
    obs = np.array([np.nan, np.inf], np.float32)
    inner = toy_env(observation_space=sekai.Box(-np.inf, np.inf, (2,)), obs_fn=lambda e: obs)
    out = DtypeObservation(inner, np.float16).reset(seed=0).observation
    assert out.dtype == np.float16 and np.isnan(out[0]) and out[1] == np.inf


def test_dtype_observation_rejects_non_box(toy_env: Any) -> None:
    with pytest.raises(
        TypeError,
        match=re.escape("DtypeObservation requires a Box observation space, got Discrete."),
    ):
        DtypeObservation(toy_env(observation_space=sekai.Discrete(3)), np.float64)


def _dict_env(toy_env: Any) -> Any:
    space = sekai.Dict(
        a=sekai.Box(0.0, 1.0, shape=(2,)), b=sekai.Discrete(3), c=sekai.MultiBinary(2)
    )
    return toy_env(observation_space=space)


def test_filter_observation_keeps_keys_in_given_order(toy_env: Any) -> None:
    env = FilterObservation(_dict_env(toy_env), ["c", "a"])
    assert list(env.observation_space.keys()) == ["c", "a"]
    obs = env.reset(seed=0).observation
    assert list(obs) == ["c", "a"]
    assert obs in env.observation_space


def test_filter_observation_errors(toy_env: Any) -> None:
    with pytest.raises(
        TypeError, match=r"^FilterObservation requires a Dict observation space, got Box\.$"
    ):
        FilterObservation(toy_env(), ["a"])
    with pytest.raises(KeyError) as info:
        FilterObservation(_dict_env(toy_env), ["a", "zz"])
    assert str(info.value) == "\"Keys ['zz'] are not in the observation space ['a', 'b', 'c'].\""
    with pytest.raises(ValueError, match=r"^FilterObservation needs at least one key\.$"):
        FilterObservation(_dict_env(toy_env), [])


@pytest.mark.parametrize("keys, name", [(5, "int"), (None, "NoneType")])
def test_filter_observation_names_keys_that_are_not_iterable(
    keys: Any, name: str, toy_env: Any
) -> None:
    with pytest.raises(
        TypeError,
        match=rf"^FilterObservation: keys must be an iterable of keys \(or one string key\), "
        rf"got {name}\.$",
    ):
        FilterObservation(_dict_env(toy_env), keys)


def test_filter_observation_takes_any_iterable_of_keys(toy_env: Any) -> None:
    env = FilterObservation(_dict_env(toy_env), (k for k in "ca"))
    assert list(env.observation_space.keys()) == ["c", "a"]


@pytest.mark.parametrize("keys", [{"c", "a"}, frozenset({"c", "a"})])
def test_filter_observation_refuses_unordered_keys(keys: Any, toy_env: Any) -> None:
    name = type(keys).__name__
    with pytest.raises(
        TypeError,
        match=rf"^FilterObservation: keys must be given in order, got a {name} of 2 items, "
        r"which has no order; pass a list or tuple in the order wanted\.$",
    ):
        FilterObservation(_dict_env(toy_env), keys)


def test_filter_observation_takes_dict_keys_in_their_order(toy_env: Any) -> None:
    env = FilterObservation(_dict_env(toy_env), {"c": 0, "a": 1}.keys())
    assert list(env.observation_space.keys()) == ["c", "a"]
