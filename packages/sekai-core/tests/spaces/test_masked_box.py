"""MaskedBox: a Dict of values and mask; pack/unpack/empty, sampling, membership, repr."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Dict, MaskedBox, MultiBinary, flatdim, flatten, unflatten
from sekai.spaces._explain import why_not_in
from sekai.utils._equal import structurally_equal


def test_documented_example() -> None:
    m = sekai.MaskedBox(0.0, np.inf, shape=(3,), max_size=4)
    obs = m.pack(np.ones((2, 3)), slots=[1, 3])
    assert str(obs["mask"]) == "[0 1 0 1]"
    assert str(m.unpack(obs)[1]) == "[1 3]"
    assert m.contains(obs) is True


def test_masked_box_is_a_dict_of_values_and_mask() -> None:
    m = MaskedBox(-1.0, 1.0, shape=(2,), max_size=3)
    assert isinstance(m, Dict)
    assert list(m.keys()) == ["values", "mask"]
    assert m["values"] == Box(-1.0, 1.0, shape=(3, 2))
    assert m["mask"] == MultiBinary(3)
    assert m.element_space == Box(-1.0, 1.0, shape=(2,))
    assert m.element_shape == (2,) and m.value_dtype == np.float32 and m.max_size == 3
    np.testing.assert_array_equal(m.fill_value, [0.0, 0.0])


def test_masked_box_sub_spaces_cannot_be_replaced() -> None:
    with pytest.raises(TypeError):
        MaskedBox(0.0, 1.0, shape=(2,), max_size=2)["mask"] = MultiBinary(3)


@pytest.mark.parametrize("max_size", [0, -1])
def test_masked_box_rejects_max_size_below_one(max_size: int) -> None:
    with pytest.raises(ValueError, match=re.escape(f"max_size must be >= 1, got {max_size}.")):
        MaskedBox(0.0, 1.0, shape=(2,), max_size=max_size)


def test_masked_box_rejects_fill_outside_bounds() -> None:
    with pytest.raises(ValueError, match=re.escape("fill_value must lie within [low, high].")):
        MaskedBox(0.0, 1.0, shape=(2,), max_size=2, fill_value=2.0)


def test_masked_box_bounds_are_checked_on_the_values_as_stored() -> None:
    # float32(0.1) > 0.1: the float64 bound the user wrote was refused before the cast.
    m = MaskedBox(0.1, 1.0, shape=(2,), max_size=3, fill_value=0.1)
    np.testing.assert_array_equal(m.fill_value, np.array([0.1, 0.1], dtype=np.float32))
    x = m.pack(np.array([[0.1, 0.5]]))
    assert x["values"].dtype == np.float32 and m.contains(x)
    with pytest.raises(ValueError, match=re.escape("values[0, 0] = 0.09 is outside")):
        m.pack(np.array([[0.09, 0.5]]))
    with pytest.raises(ValueError, match=re.escape("values[0, 1] = 1e+300 is outside")):
        m.pack(np.array([[0.5, 1e300]]))  # float32 overflow: inf, not in bounds
    with pytest.raises(ValueError, match=re.escape("fill_value must lie within [low, high].")):
        MaskedBox(0.1, 1.0, shape=(2,), max_size=3, fill_value=0.09)


def test_masked_box_default_fill_is_element_zero() -> None:
    m = MaskedBox(0.5, 1.0, shape=(2,), max_size=3)
    np.testing.assert_array_equal(m.fill_value, [0.5, 0.5])
    np.testing.assert_array_equal(m.empty()["values"], np.full((3, 2), 0.5))


def test_masked_box_empty() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=[0.25, 0.75])
    e = m.empty()
    assert e["mask"].dtype == np.int8 and e["mask"].tolist() == [0, 0, 0]
    np.testing.assert_array_equal(e["values"], np.tile([0.25, 0.75], (3, 1)))
    assert m.contains(e)


def test_masked_box_rejects_a_fill_value_that_does_not_broadcast_to_the_element() -> None:
    message = "fill_value of shape (2,) cannot be broadcast to the element shape (3,)."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MaskedBox(0.0, 1.0, shape=(3,), max_size=2, fill_value=[0.5, 0.5])
    fill = MaskedBox(0.0, 1.0, shape=(3,), max_size=2, fill_value=[0.5]).pack([])["values"]
    assert fill.tolist() == [[0.5] * 3] * 2  # one value broadcasts to every entry


@pytest.mark.parametrize(
    ("values", "shape"), [(np.zeros((2, 2)), "(2, 2)"), (np.zeros(3), "(3,)")], ids=repr
)
def test_masked_box_pack_refuses_values_of_another_element_shape(
    values: np.ndarray, shape: str
) -> None:
    message = f"values must have shape (k, *(3,)), got {shape}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MaskedBox(0.0, 1.0, shape=(3,), max_size=2).pack(values)


def test_masked_box_pack_default_slots_and_errors() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    x = m.pack([[0.1, 0.2], [0.3, 0.4]])
    assert x["mask"].tolist() == [1, 1, 0] and x["values"].dtype == np.float32
    values, slots = m.unpack(x)
    np.testing.assert_allclose(values, [[0.1, 0.2], [0.3, 0.4]])
    assert slots.tolist() == [0, 1]
    assert m.pack([])["mask"].tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match=re.escape("Got 4 values but the space has only 3 slots.")):
        m.pack(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=re.escape("Got 1 values but 2 slots.")):
        m.pack(np.zeros((1, 2)), slots=[0, 1])
    for bad in ([1, 1], [0, 3], [-1, 0]):
        with pytest.raises(
            ValueError, match=re.escape("slots must be distinct indices in [0, 3).")
        ):
            m.pack(np.zeros((2, 2)), slots=bad)


@pytest.mark.parametrize("slots", [[], (), np.array([]), np.array([], dtype=np.int64), None])
def test_masked_box_pack_of_no_values_in_no_slots_is_empty(slots: object) -> None:
    # An empty slot list is what sorted(chosen) gives when nothing was chosen.
    m = MaskedBox(-1.0, 1.0, shape=(2,), max_size=4)
    x = m.pack(np.zeros((0, 2)), slots=slots)
    assert structurally_equal(x, m.empty()) and x in m
    with pytest.raises(ValueError, match=re.escape("Got 0 values but 1 slots.")):
        m.pack(np.zeros((0, 2)), slots=[0])


@pytest.mark.parametrize(
    ("values", "slots", "msg"),
    [
        ([[2.0, 0.5]], None, "values must lie within [low, high]: values[0, 0] = 2.0 is outside"),
        ([[0.5, 0.5], [0.5, -1.0]], [2, 0], "values[1, 1] = -1.0 is outside"),
        ([[0.5, np.inf]], None, "values[0, 1] = inf is outside"),
        ([[0.5, np.nan]], [1], "values contain NaN at values[0, 1]; elements of"),
    ],
)
def test_masked_box_pack_rejects_values_outside_the_element_space(
    values: list[list[float]], slots: list[int] | None, msg: str
) -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    with pytest.raises(ValueError, match=re.escape(msg)) as info:
        m.pack(values, slots=slots)
    assert "Box(0.0, 1.0, (2,), float32)" in str(info.value)


def test_masked_box_pack_checks_integer_values_before_casting() -> None:
    m = MaskedBox(0, 255, shape=(), max_size=2, dtype=np.uint8)
    assert m.contains(m.pack([0, 255]))
    with pytest.raises(ValueError, match=re.escape("values[1] = 256 is outside")):
        m.pack([3, 256])
    with pytest.raises(ValueError, match=re.escape("values[0] = -1 is outside")):
        m.pack([-1])
    with pytest.raises(
        ValueError, match=re.escape("values must hold whole numbers for dtype uint8")
    ):
        m.pack([1.5])
    assert m.pack([2.0])["values"].tolist() == [2, 0]
    with pytest.raises(TypeError, match=re.escape("values must be numeric, got dtype <U1.")):
        m.pack(["a"])


def test_masked_box_sample_fills_empty_rows_and_respects_mask() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=4, fill_value=0.5, seed=0)
    for _ in range(20):
        x = m.sample()
        assert m.contains(x)
        assert (x["values"][x["mask"] == 0] == 0.5).all()
    forced = m.sample(mask=np.array([1, 0, -1, 2], dtype=np.int8))
    assert forced["mask"][0] == 1 and forced["mask"][1] == 0


def test_masked_box_sample_mask_errors_say_what_masked_box_takes() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    wanted = "MaskedBox.sample() takes a mask of shape (3,), one entry per slot: 1 occupied"
    with pytest.raises(TypeError, match=re.escape(wanted) + ".*not a dict of masks") as info:
        m.sample(mask={"mask": np.ones(3, np.int8)})
    assert "MultiBinary" not in str(info.value)
    with pytest.raises(ValueError, match=f"^{re.escape(wanted)}.*got \\(4,\\)"):
        m.sample(mask=np.ones(4, np.int8))


def test_masked_box_contains_rules() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=2)
    good = m.pack([[0.5, 0.5]])
    assert m.contains(good)
    assert not m.contains({"values": good["values"]})
    assert not m.contains({**good, "extra": 1})
    bad_fill = {"values": np.full((2, 2), 0.5, dtype=np.float32), "mask": good["mask"]}
    assert not m.contains(bad_fill)
    out_of_bounds = {"values": np.array([[2.0, 0.5], [0.0, 0.0]]), "mask": good["mask"]}
    assert not m.contains(out_of_bounds)
    bad_mask = {"values": good["values"], "mask": np.array([2, 0], dtype=np.int8)}
    assert not m.contains(bad_mask)
    wrong_dtype = {"values": good["values"].astype(np.complex64), "mask": good["mask"]}
    assert not m.contains(wrong_dtype)
    assert m.contains({"values": good["values"].astype(np.float64), "mask": good["mask"]})


def test_masked_box_judges_lists_of_python_ints_as_its_values_box_does() -> None:
    # np.asarray made the list int64, which does not cast to uint8 (same kind): refused,
    # while the values Box, an equal Dict and pack() all take it.
    m = MaskedBox(0, 255, shape=(2,), max_size=2, dtype=np.uint8)
    x = {"values": [[1, 2], [0, 0]], "mask": [1, 0]}
    assert m["values"].contains(x["values"]) and Dict(m.spaces).contains(x)
    assert m.contains(x)
    assert why_not_in(m, x) is None
    out_of_bounds = {"values": [[1, 256], [0, 0]], "mask": [1, 0]}
    assert not m.contains(out_of_bounds)
    assert why_not_in(m, out_of_bounds) == (
        "['values'][0, 1]",
        "is 256, outside [0, 255] (an occupied slot)",
    )
    assert not m.contains({"values": [[1.0, 2.0], [0, 0]], "mask": [1, 0]})


def test_masked_box_contains_float64_values_at_a_float32_bound() -> None:
    m = MaskedBox(0.1, 1.0, shape=(2,), max_size=2, fill_value=0.1)
    x = {"values": np.array([[0.1, 0.5], [0.1, 0.1]]), "mask": np.array([1, 0], np.int8)}
    assert m.contains(x)
    assert sekai.Box(0.1, 1.0, shape=(2,)).contains(x["values"][0])


def test_masked_box_repr() -> None:
    assert repr(MaskedBox(-1.0, 1.0, shape=(2,), max_size=3)) == (
        "MaskedBox(-1.0, 1.0, (2,), max_size=3, float32)"
    )
    assert repr(MaskedBox(0.5, 1.0, shape=(2,), max_size=3)) == (
        "MaskedBox(0.5, 1.0, (2,), max_size=3, float32, fill_value=0.5)"
    )


def test_masked_box_equality_is_not_plain_dict_equality() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    plain = Dict(values=Box(0.0, 1.0, shape=(3, 2)), mask=MultiBinary(3))
    assert m != plain and plain != m
    assert m == MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    assert m != MaskedBox(0.0, 1.0, shape=(2,), max_size=4)
    assert m != MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=0.5)
    with pytest.raises(TypeError, match="unhashable type: 'MaskedBox'"):
        hash(m)


def test_masked_box_flattens_like_its_dict() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=2)
    x = m.pack([[0.25, 0.75]], slots=[1])
    flat = flatten(m, x)
    assert flatdim(m) == 6
    np.testing.assert_allclose(flat, [0, 0, 0.25, 0.75, 0, 1])
    assert structurally_equal(unflatten(m, flat), x)


def test_masked_box_seeding_and_pickle() -> None:
    a = MaskedBox(0.0, 1.0, shape=(2,), max_size=3, seed=4)
    b = MaskedBox(0.0, 1.0, shape=(2,), max_size=3, seed=4)
    assert structurally_equal(a.sample(), b.sample())
    c, d = pickle.loads(pickle.dumps(a)), copy.deepcopy(a)
    assert c == a and d == a
    expected = a.sample()
    assert structurally_equal(c.sample(), expected)
    assert structurally_equal(d.sample(), expected)


def test_masked_box_integer_values() -> None:
    m = MaskedBox(0, 9, shape=(), max_size=3, dtype=np.int64, fill_value=0, seed=0)
    x = m.sample()
    assert x["values"].dtype == np.int64 and m.contains(x)
    with pytest.raises(ValueError):
        MaskedBox(0, 9, shape=(), max_size=3, dtype=np.int64, fill_value=0.5)


_UNPACK = re.escape(
    "The argument of unpack() is not a sample of MaskedBox(0.0, 1.0, (2,), max_size=3, float32): "
)


@pytest.mark.parametrize(
    ("x", "problem"),
    [
        ([1, 2], "it is a list, not a dict of 'values' and 'mask'"),
        ({"values": np.zeros((3, 2))}, "it has no 'mask'"),
        ({"mask": np.zeros(3, np.int8)}, "it has no 'values'"),
        (
            {"values": np.zeros((3, 2), np.float32), "mask": np.array([1, 0, 2])},
            "its mask holds 2, expected 0 (empty) or 1 (occupied) in each slot",
        ),
        (
            {"values": np.zeros((3, 2), np.float32), "mask": np.array([1, 0, 0.5])},
            "its mask holds 0.5, expected 0 (empty) or 1 (occupied) in each slot",
        ),
        (
            {"values": np.zeros((2, 2)), "mask": np.array([1, 0, 1])},
            "its values have shape (2, 2), expected (3, 2)",
        ),
        (
            {"values": np.zeros((3, 2)), "mask": np.array([1, 0])},
            "its mask has shape (2,), expected (3,), one entry per slot",
        ),
        (
            {"values": np.zeros((3, 2)), "mask": np.array(["1", "0", "1"])},
            "its mask holds '1', expected 0 (empty) or 1 (occupied) in each slot",
        ),
    ],
)
def test_unpack_refuses_what_is_not_one_sample(x: object, problem: str) -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    with pytest.raises(ValueError, match="^" + _UNPACK + re.escape(problem) + r"\.$"):
        m.unpack(x)  # type: ignore[arg-type]


def test_unpack_refuses_a_batch_and_says_to_unpack_its_samples_one_by_one() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    items = [m.pack(np.full((3, 2), 0.5)), m.pack(np.full((1, 2), 0.5)), m.empty(), m.empty()]
    batch = sekai.spaces.concatenate(m, items)
    problem = (
        "its mask has shape (4, 3), expected (3,), one entry per slot (a batch of 4 samples: "
        "unpack each, as unpack(sample) for sample in iterate(space, batch))"
    )
    with pytest.raises(ValueError, match="^" + _UNPACK + re.escape(problem) + r"\.$"):
        m.unpack(batch)
    unpacked = [m.unpack(x) for x in sekai.spaces.iterate(m, batch)]
    assert [slots.tolist() for _, slots in unpacked] == [[0, 1, 2], [0], [], []]
    assert [values.shape for values, _ in unpacked] == [(3, 2), (1, 2), (0, 2), (0, 2)]


def test_unpack_takes_lists_and_bool_masks() -> None:
    m = MaskedBox(0, 5, shape=(), max_size=3, dtype=np.int64)
    values, slots = m.unpack({"values": [4, 0, 2], "mask": [True, False, True]})
    assert values.tolist() == [4, 2] and slots.tolist() == [0, 2]
