"""Column packing of per-sub-env results: exact round trips through pickle, and compact ones."""

from __future__ import annotations

import enum
import pickle
from typing import Any

import numpy as np
import pytest

from sekai.vector._packing import Deferred, Packed, defer, pack, plain, received, unpack


def _trip(values: list[Any]) -> list[Any]:
    return unpack(pickle.loads(pickle.dumps(pack(values), pickle.HIGHEST_PROTOCOL)))


def _assert_same(got: Any, want: Any) -> None:
    """Equal as pickling each value would give it: type, dtype, shape, layout, key order."""
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.writeable
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, np.generic):
        assert got.dtype == want.dtype
        assert got == want or (got != got and want != want)
    elif isinstance(want, dict):
        # Equal keys may differ in type (1, True, 1.0) or sign (0.0, -0.0): repr tells them apart.
        assert [(type(k), repr(k)) for k in got] == [(type(k), repr(k)) for k in want]
        for key in want:
            _assert_same(got[key], want[key])
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _assert_same(a, b)
    else:
        assert got == want


def _infos(n: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    return [
        {
            "equity": float(rng.random()),
            "weights": rng.random(6),
            "count": np.int32(i),
            "when": np.datetime64(1_700_000_000 + i, "s"),
            "flag": bool(i % 2),
            "name": f"env{i}",
        }
        for i in range(n)
    ]


def test_step_entries_round_trip_exactly_and_travel_as_columns() -> None:
    entries = [(0.5 * i, False, i == 3, info) for i, info in enumerate(_infos(16))]
    packed = pack(entries)
    assert type(packed) is Packed and packed.kind == Packed.TUPLES
    infos = packed.data[1][3]
    assert infos.kind == Packed.DICTS
    weights = infos.data[1][1]
    assert weights.kind == Packed.ARRAYS and weights.data.shape == (16, 6)
    _assert_same(_trip(entries), entries)


def test_dicts_with_different_keys_keep_their_own_keys_order_and_position() -> None:
    infos = _infos(12)
    for i in (2, 7):
        infos[i] = {"final_info": dict(infos[i]), **infos[i], "episode": {"r": 1.0 * i}}
    infos[9] = {"weights": infos[9]["weights"], "equity": infos[9]["equity"]}  # other order
    _assert_same(_trip(infos), infos)


@pytest.mark.parametrize(
    "values",
    [
        [np.zeros(3), np.zeros(4)] * 3,  # shapes differ
        [np.zeros(3), np.zeros(3, np.float32)] * 3,  # dtypes differ
        [np.asfortranarray(np.ones((2, 3)))] * 6,  # layout a row could not keep
        [np.asfortranarray(np.ones((2, 3))), np.ones((2, 3))] * 3,  # layouts differ
        [np.array(1.5)] * 6,  # 0-d arrays: a row would be a scalar
        [np.array([None, 1], dtype=object)] * 6,
        [np.ma.masked_array([1.0, 2.0])] * 6,  # an ndarray subclass
        [np.datetime64(1, "s"), np.datetime64(1, "ms")] * 3,  # units differ
        [np.str_("a"), np.str_("bc")] * 3,
        [1.0, 2, 3.0, 4.0],  # mixed types
        [{"a": 1}, {"a": 2}],  # too few to pack
        [{}] * 6,  # empty infos
        [({}, 1.0)] * 3 + [({"a": 1}, 2.0)] * 3,  # empty ones among others
        [(1,), (1, 2)] * 3,  # tuples of other lengths
        [((), 1.0)] * 2 + [((1, 2), 2.0)] * 2,  # the same, one column down
    ],
)
def test_values_that_cannot_share_a_column_round_trip_unchanged(values: list[Any]) -> None:
    _assert_same(_trip(values), values)


@pytest.mark.parametrize(
    "keys",
    [
        [1, True, 1.0, np.int64(1)],
        ["a", np.str_("a")],
        [np.int32(7), np.int64(7), 7],
        [(1, "a"), (True, "a")],  # equal tuples of keys of other types
        [0.0, -0.0],
        [frozenset({1}), frozenset({True})],
    ],
    ids=["numbers", "strings", "numpy-ints", "tuples", "signed-zeros", "frozensets"],
)
@pytest.mark.parametrize("rows", [4, 12])
def test_dict_keys_equal_to_another_rows_keys_keep_their_own_type(
    keys: list[Any], rows: int
) -> None:
    """Every row's keys compare equal, so grouping dicts by their keys alone would give each
    row the first row's key objects."""
    values = [{"n": i, keys[i % len(keys)]: float(i)} for i in range(rows)]
    _assert_same(_trip(values), values)
    nested = [{"by_code": value} for value in values]  # a column of dicts in a column of dicts
    _assert_same(_trip(nested), nested)


def test_unpack_leaves_plain_lists_and_none_alone() -> None:
    assert unpack(None) is None
    values = [1, 2, 3, 4, 5]
    assert pack(values) is values and unpack(values) is values
    assert _trip([(), (), (), ()]) == [(), (), (), ()]


def test_packed_columns_are_smaller_and_rows_are_independent() -> None:
    entries = [(0.0, False, False, info) for info in _infos(256)]
    assert len(pickle.dumps(pack(entries))) < len(pickle.dumps(entries))
    got = _trip(entries)
    got[0][3]["weights"][:] = -1.0  # writing one sub-env's info leaves the others alone
    assert got[1][3]["weights"].min() >= 0.0


# -- deferred columns -------------------------------------------------------------------------


class _Local:
    """A class a parent process may not have."""


class _Level(enum.IntEnum):
    LOW = 1


class _Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        None,
        [1, 2.5, True, "a", b"b", 1j, None],
        {"a": (1, [2.0, {"b": "c"}]), 3: np.float32(1.5)},
        np.arange(3.0),
        np.array([np.datetime64(0, "s")]),
        np.bool_(True),
        pack(_infos(8)),
        pack([{"a": 1}] * 4 + [{"b": 2}] * 4),  # groups
        pack([(1.0, np.zeros(2))] * 5),  # tuples
    ],
    ids=["none", "scalars", "nested", "array", "datetimes", "numpy-scalar", "dicts", "groups",
         "tuples"],
)  # fmt: skip
def test_plain_data_is_plain(value: Any) -> None:
    assert plain(value)


@pytest.mark.parametrize(
    "value",
    [
        _Local(),
        [1, _Local()],
        {"a": {"b": [_Local()]}},
        _Level.LOW,  # a subclass of int
        _Name("x"),  # a subclass of str
        np.array([None, 1], dtype=object),
        np.zeros(2, dtype=[("x", "f8")]),
        np.ma.masked_array([1.0, 2.0]),
        {_Name("k"): 1},
        pack([{"a": _Local()} for _ in range(6)]),
    ],
    ids=["instance", "in-list", "nested", "int-enum", "str-subclass", "object-array",
         "structured", "masked", "key", "packed"],
)  # fmt: skip
def test_what_may_not_unpickle_elsewhere_is_not_plain(value: Any) -> None:
    assert not plain(value)
    assert defer(value) is value


def test_a_plain_column_is_deferred_and_unpacks_exactly_once_loaded() -> None:
    infos = _infos(16)
    deferred = defer(pack(infos))
    assert type(deferred) is bytes  # no class in the reply: nothing to look up by name
    arrived = received(pickle.loads(pickle.dumps(deferred, pickle.HIGHEST_PROTOCOL)))
    assert type(arrived) is Deferred
    _assert_same(unpack(arrived), infos)
    assert arrived.load() is arrived.load()  # unpickled once


@pytest.mark.parametrize("column", [[{"a": 1}], pack(_infos(8)), pack([_Local()] * 5)])
def test_a_column_that_was_not_deferred_is_received_as_it_is(column: Any) -> None:
    assert received(column) is column


def test_a_self_containing_list_is_not_deferred() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert defer(loop) is loop
