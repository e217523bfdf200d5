"""concatenate of array spaces without ``out``: the batch ``np.stack(items, axis=0,
dtype=space.dtype, casting="unsafe")`` makes, bit for bit, whatever the items (arrays of the
space's dtype or of another, lists, scalars, views), and the same errors when they misfit."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete, Space, concatenate

Warned = list[tuple[type[Warning], str]]


def _recorded(call: Any) -> tuple[Any, Warned]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


def _stacked(space: Space[Any], items: list[Any]) -> Any:
    return np.stack(items, axis=0, dtype=space.dtype, casting="unsafe")


def _same(got: Any, expected: Any) -> None:
    assert type(got) is np.ndarray and got.base is None and got.flags.c_contiguous
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    assert got.tobytes() == expected.tobytes(), (got, expected)


_F32 = Box(-np.inf, np.inf, (2, 3), np.float32)
_F64 = Box(-1.0, 1.0, (4,), np.float64)
_U8 = Box(0, 255, (3,), np.uint8)
_I64 = Box(-(2**62), 2**62, (2,), np.int64)
_MD = MultiDiscrete([3, 4, 5], dtype=np.int16)
_MB = MultiBinary((2, 2))
_D = Discrete(5, start=-2)


def _edge(dtype: Any, shape: tuple[int, ...], seed: int) -> np.ndarray[Any, Any]:
    """An array of ``dtype`` and ``shape`` holding the dtype's edge values."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        pool = [0.0, -0.0, np.nan, np.inf, -np.inf, info.max, info.min, info.smallest_subnormal]
    else:
        iinfo = np.iinfo(dtype)
        pool = [0, 1, iinfo.max, iinfo.min, iinfo.max - 1]
    values = np.random.default_rng(seed).choice(np.array(pool, dtype=dtype), size=shape)
    return np.asarray(values, dtype=dtype)


def _cases() -> list[tuple[Space[Any], list[Any]]]:
    rng = np.random.default_rng(0)
    cases: list[tuple[Space[Any], list[Any]]] = []
    for space in (_F32, _F64, _U8, _I64, _MD, _MB, _D):
        space.seed(1)
        shape, dtype = tuple(space.shape or ()), space.dtype
        for n in (1, 2, 4, 9):
            samples = [space.sample() for _ in range(n)]
            cases.append((space, samples))
            arrays = [np.asarray(s, dtype=dtype) for s in samples]  # 0-d arrays for Discrete
            cases.append((space, arrays))
            cases.append((space, [_edge(dtype, shape, seed) for seed in range(n)]))
            # views: transposed, strided, read-only
            wide = np.asarray(rng.integers(0, 2, size=(2 * n, *shape)), dtype=dtype)
            cases.append((space, list(wide[::2])))
            cases.append((space, [a.T.copy().T for a in arrays]))
            frozen = [a.copy() for a in arrays]
            for a in frozen:
                a.flags.writeable = False
            cases.append((space, frozen))
            # not all of the space's dtype: one item of another dtype, a list, a NumPy scalar
            cases.append((space, [*arrays, arrays[0].astype(np.float64)]))
            cases.append((space, [*arrays, arrays[0].tolist()]))
            cases.append((space, [arrays[0].tolist(), *arrays]))
            if not shape:
                cases.append((space, [*arrays, dtype.type(1)]))
                cases.append((space, [dtype.type(1)] * n))  # NumPy scalars: of the dtype
                cases.append((space, [np.int32(1)] * n))  # and of another
                cases.append((space, [np.float64(1.0)] * n))
            # byte-swapped arrays: equal values, another dtype
            cases.append((space, [a.astype(dtype.newbyteorder()) for a in arrays]))
    # a float64 item cast unsafely into float32 (an overflow: NumPy's warning)
    cases.append((_F32, [np.full((2, 3), 1e300), np.zeros((2, 3), np.float32)]))
    return cases


@pytest.mark.parametrize(("space", "items"), _cases())
def test_the_batch_is_the_one_np_stack_makes(space: Space[Any], items: list[Any]) -> None:
    expected, expected_warned = _recorded(lambda: _stacked(space, items))
    got, warned = _recorded(lambda: concatenate(space, items))
    _same(got, expected)
    assert warned == expected_warned
    before = got.copy()
    for item in items:  # the batch is a copy
        if isinstance(item, np.ndarray) and item.flags.writeable and item.size:
            item.flat[0] = 1
    assert got.tobytes() == before.tobytes()


@pytest.mark.parametrize(
    ("space", "items", "message"),
    [
        (
            _F64,
            [np.zeros(4), np.zeros(3)],
            "items[1] = array([0., 0., 0.]) is not a member of Box(-1.0, 1.0, (4,), float64): "
            "it is of shape (3,), the space's shape is (4,).",
        ),
        (
            _F64,
            [np.zeros(3), np.zeros(3)],
            "items[0] = array([0., 0., 0.]) is not a member of Box(-1.0, 1.0, (4,), float64): "
            "it is of shape (3,), the space's shape is (4,).",
        ),
        (
            _F64,
            [np.zeros(4), np.zeros((1, 4))],
            "items[1] = array([[0., 0., 0., 0.]]) is not a member of Box(-1.0, 1.0, (4,), "
            "float64): it is of shape (1, 4), the space's shape is (4,).",
        ),
        (
            _MB,
            [np.zeros((2, 2), np.int8), np.zeros((2, 2, 1), np.int8)],
            "items[1] = array([[[0],\n        [0]],\n\n       [[0],\n        [0]]], dtype=int8) "
            "is not a member of MultiBinary((2, 2)): it is of shape (2, 2, 1), the space's shape "
            "is (2, 2).",
        ),
        (
            _D,
            [np.array(1), np.array([1])],
            "items[1] = array([1]) is not a member of Discrete(5, start=-2): it is of shape (1,), "
            "the space's shape is ().",
        ),
    ],
    ids=["one-of-another-shape", "all-of-another-shape", "another-ndim", "multibinary", "0-d"],
)
def test_arrays_of_the_dtype_and_another_shape_are_named(
    space: Space[Any], items: list[Any], message: str
) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$") as info:
        concatenate(space, items)
    try:  # chained as before: to np.stack's own error, where it raised one
        _stacked(space, items)
    except ValueError as error:
        assert str(info.value.__context__) == str(error)
    else:
        assert info.value.__context__ is None


def test_arrays_of_one_real_dtype_are_stacked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The cases above would pass through np.stack alone: check that arrays of one real dtype
    # take the other path, with at most one check of their stack (batching is on every vector
    # step), and that only other items are read one by one.
    calls = {"stack": 0, "can_cast": 0}
    stack, can_cast = np.stack, np.can_cast

    def counted_stack(*args: Any, **kwargs: Any) -> Any:
        calls["stack"] += 1
        return stack(*args, **kwargs)

    def counted_can_cast(*args: Any, **kwargs: Any) -> Any:
        calls["can_cast"] += 1
        return can_cast(*args, **kwargs)

    def counted(space: Space[Any], items: list[Any], out: Any = None) -> dict[str, int]:
        calls.update(stack=0, can_cast=0)
        concatenate(space, items, out)
        return dict(calls)

    monkeypatch.setattr(np, "stack", counted_stack)
    monkeypatch.setattr(np, "can_cast", counted_can_cast)
    for space in (_F32, _U8, _MD, _MB):  # arrays of the space's dtype
        space.seed(0)
        samples = [space.sample() for _ in range(4)]
        assert counted(space, samples) == {"stack": 0, "can_cast": 0}
    # of another real dtype: no check for a float dtype, one for an integer dtype
    rows = [np.zeros(4) for _ in range(16)]
    assert counted(_F32, [np.zeros((2, 3))] * 16) == {"stack": 0, "can_cast": 0}
    assert counted(MultiBinary(4), rows) == {"stack": 0, "can_cast": 1}
    # NumPy scalars of one type likewise
    assert counted(_D, [np.int64(1)] * 16) == {"stack": 0, "can_cast": 0}
    assert counted(_D, [np.float64(1.0)] * 16) == {"stack": 0, "can_cast": 1}
    out = np.zeros((16, 4), np.int8)
    assert counted(MultiBinary(4), rows, out) == {"stack": 1, "can_cast": 1}  # np.stack writes out
    # other items: one by one, stacked by np.stack
    assert counted(_F64, [np.zeros(4, np.float32), np.zeros(4)]) == {"stack": 1, "can_cast": 0}
    assert counted(_U8, [np.zeros(3, np.int64), [0, 1, 2]]) == {"stack": 1, "can_cast": 2}
