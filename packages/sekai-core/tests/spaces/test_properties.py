"""Property tests (hypothesis) over every space type, nested Dict/Tuple included."""

from __future__ import annotations

import copy
import json
import os
import pickle
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from sekai.core._rng import make_seed_sequence
from sekai.spaces import (
    Box,
    Dict,
    Discrete,
    MaskedBox,
    MultiBinary,
    MultiDiscrete,
    Sequence,
    Space,
    Tuple,
    batch_space,
    concatenate,
    flatdim,
    flatten,
    flatten_space,
    iterate,
    space_from_jsonable,
    unflatten,
    zero_sample,
)
from sekai.spaces.batch import _holds_data

SETTINGS = settings(
    max_examples=int(os.environ.get("SEKAI_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
shapes = st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple)


def same(a: Any, b: Any) -> bool:
    """Strict equality of samples: container types, dtypes, shapes and values (NaN == NaN)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        x, y = np.asarray(a), np.asarray(b)
        return (
            x.dtype == y.dtype
            and x.shape == y.shape
            and bool(np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))
        )
    return bool(a == b)


# -- space strategies ----------------------------------------------------------------------


@st.composite
def boxes(draw: st.DrawFn, exact: bool = False) -> Box:
    """Boxes; ``exact`` keeps every value exactly representable in float32 (flatten is lossless)."""
    dtypes = (
        [np.float32, np.int32, np.uint8, np.int64]
        if exact
        else [
            np.float32,
            np.float64,
            np.int64,
            np.int32,
            np.uint8,
            np.int16,
        ]
    )
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(shapes)
    size = int(np.prod(shape))
    if dtype.kind == "f":
        finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)
        bound = st.one_of(finite, st.just(np.inf), st.just(-np.inf))
        a = np.array(draw(st.lists(bound, min_size=size, max_size=size)), dtype=np.float64)
        b = np.array(draw(st.lists(bound, min_size=size, max_size=size)), dtype=np.float64)
        low, high = np.minimum(a, b), np.maximum(a, b)
        # Identical infinite bounds are an empty interval: widen them.
        low[np.isposinf(low)] = 0.0
        high[np.isneginf(high)] = 0.0
        low, high = np.minimum(low, high), np.maximum(low, high)
    else:
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -(2**20)), min(int(info.max), 2**20)
        ints = st.integers(lo, hi)
        a = np.array(draw(st.lists(ints, min_size=size, max_size=size)), dtype=np.int64)
        b = np.array(draw(st.lists(ints, min_size=size, max_size=size)), dtype=np.int64)
        low, high = np.minimum(a, b), np.maximum(a, b)
        if not exact and draw(st.booleans()):
            low, high = np.full(size, -np.inf), np.full(size, np.inf)
    return Box(low.reshape(shape), high.reshape(shape), shape=shape, dtype=dtype)


discretes = st.builds(Discrete, st.integers(1, 6), start=st.integers(-5, 5))


@st.composite
def multi_discretes(draw: st.DrawFn) -> MultiDiscrete:
    shape = draw(nonempty_shapes)
    size = int(np.prod(shape))
    nvec = np.array(draw(st.lists(st.integers(1, 5), min_size=size, max_size=size)))
    start = np.array(draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size)))
    dtype = draw(st.sampled_from([np.int64, np.int32]))
    return MultiDiscrete(nvec.reshape(shape), dtype=dtype, start=start.reshape(shape))


multi_binaries = st.one_of(st.integers(1, 4), nonempty_shapes).map(MultiBinary)


@st.composite
def masked_boxes(draw: st.DrawFn) -> MaskedBox:
    low = draw(st.floats(-10, 0, width=32))
    high = draw(st.floats(0, 10, width=32))
    shape = draw(st.lists(st.integers(1, 3), max_size=1).map(tuple))
    fill = draw(st.one_of(st.none(), st.floats(low, high, width=32)))
    return MaskedBox(low, high, shape, max_size=draw(st.integers(1, 3)), fill_value=fill)


def leaves(exact: bool) -> st.SearchStrategy[Space[Any]]:
    return st.one_of(boxes(exact), discretes, multi_discretes(), multi_binaries, masked_boxes())


def stackable(exact: bool = False) -> st.SearchStrategy[Space[Any]]:
    return st.recursive(
        leaves(exact),
        lambda kids: st.one_of(
            st.lists(kids, min_size=1, max_size=3).map(Tuple),
            st.dictionaries(st.sampled_from("abcd"), kids, min_size=1, max_size=3).map(Dict),
        ),
        max_leaves=4,
    )


def flattenable(exact: bool = False) -> st.SearchStrategy[Space[Any]]:
    return st.recursive(
        leaves(exact),
        lambda kids: st.one_of(
            st.lists(kids, max_size=3).map(Tuple),
            st.dictionaries(st.sampled_from("abcd"), kids, max_size=3).map(Dict),
        ),
        max_leaves=5,
    )


sequences = st.builds(
    Sequence,
    stackable(),
    max_length=st.one_of(st.none(), st.integers(0, 3)),
    stack=st.booleans(),
)

any_space = st.recursive(
    st.one_of(leaves(False), sequences),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3).map(Tuple),
        st.dictionaries(st.sampled_from("abcd"), kids, max_size=3).map(Dict),
        st.builds(Sequence, kids, max_length=st.integers(0, 2)),
    ),
    max_leaves=5,
)


# -- properties ----------------------------------------------------------------------------


@SETTINGS
@given(any_space, seeds)
def test_samples_are_members(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    for _ in range(3):
        assert space.contains(space.sample())


@SETTINGS
@given(any_space, seeds)
def test_same_seed_gives_same_samples(space: Space[Any], seed: int) -> None:
    other = copy.deepcopy(space)
    assert space.seed(seed) == seed
    assert other.seed(seed) == seed
    for _ in range(3):
        assert same(space.sample(), other.sample())


@SETTINGS
@given(any_space, seeds)
def test_pickle_and_deepcopy_keep_equality_and_generator_state(
    space: Space[Any], seed: int
) -> None:
    space.seed(seed)
    space.sample()
    pickled = pickle.loads(pickle.dumps(space))
    copied = copy.deepcopy(space)
    assert pickled == space and copied == space
    expected = [space.sample() for _ in range(2)]
    assert all(same(pickled.sample(), e) for e in expected)
    assert all(same(copied.sample(), e) for e in expected)


@SETTINGS
@given(any_space)
def test_json_round_trip_gives_an_equal_space(space: Space[Any]) -> None:
    back = space_from_jsonable(json.loads(json.dumps(space.to_jsonable())))
    assert back == space and repr(back) == repr(space)


@SETTINGS
@given(any_space)
def test_zero_sample_is_a_member(space: Space[Any]) -> None:
    assert space.contains(zero_sample(space))


@SETTINGS
@given(flattenable(exact=True), seeds)
def test_unflatten_inverts_flatten(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    flat = flatten(space, x)
    assert flat.dtype == np.float32 and flat.shape == (flatdim(space),)
    assert same(unflatten(space, flat), x)


@SETTINGS
@given(flattenable(), seeds)
def test_flattened_samples_lie_in_flatten_space(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    flat_space = flatten_space(space)
    assert flat_space.shape == (flatdim(space),) and flat_space.dtype == np.float32
    for _ in range(3):
        assert flat_space.contains(flatten(space, space.sample()))


@SETTINGS
@given(flattenable(), st.lists(st.floats(allow_nan=True, width=32), min_size=0, max_size=64))
def test_unflatten_always_returns_a_member(space: Space[Any], values: list[float]) -> None:
    n = flatdim(space)
    flat = np.resize(np.array(values or [0.0], dtype=np.float32), n)
    assert space.contains(unflatten(space, flat))


@SETTINGS
@given(any_space, st.integers(1, 4), seeds)
def test_iterate_batch_of_concatenate_yields_the_items(
    space: Space[Any], n: int, seed: int
) -> None:
    # A Dict/Tuple without any leaf batches to nothing that could tell n.
    assume(_holds_data(space))
    space.seed(seed)
    items = [space.sample() for _ in range(n)]
    batched = batch_space(space, n)
    batch = concatenate(space, items)
    assert batched.contains(batch)
    back = list(iterate(batched, batch))
    assert len(back) == n
    for got, want in zip(back, items):
        assert space.contains(got)
        assert same(got, want) or (isinstance(want, tuple) and same(tuple(got), want))


@SETTINGS
@given(any_space, st.integers(1, 3), seeds)
def test_batched_space_samples_are_members(space: Space[Any], n: int, seed: int) -> None:
    batched = batch_space(space, n)
    batched.seed(seed)
    assert batched.contains(batched.sample())


@SETTINGS
@given(st.lists(st.one_of(leaves(False), sequences), min_size=1, max_size=4), seeds)
def test_composites_seed_children_with_make_seed_sequence(
    children: list[Space[Any]], seed: int
) -> None:
    as_dict = Dict({f"k{i}": c for i, c in enumerate(children)})
    as_tuple = Tuple([copy.deepcopy(c) for c in children])
    expected = [copy.deepcopy(c) for c in children]
    for child, child_seed in zip(expected, make_seed_sequence(seed, len(children))):
        child.seed(child_seed)
    as_dict.seed(seed)
    as_tuple.seed(seed)
    d, t = as_dict.sample(), as_tuple.sample()
    for i, child in enumerate(expected):
        want = child.sample()
        assert same(d[f"k{i}"], want) and same(t[i], want)
