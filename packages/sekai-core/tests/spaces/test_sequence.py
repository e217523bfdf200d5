"""Sequence: construction errors, lengths, stacking, masks, pack/elements, membership, repr."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

import numpy as np
import pytest

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
)
from sekai.utils._equal import structurally_equal


def test_sequence_signature_is_positional() -> None:
    seq = Sequence(Discrete(3), 4, True)
    assert seq.max_length == 4 and seq.stack is True
    assert seq.feature_space == Discrete(3)
    assert not seq.is_flattenable


def test_sequence_accepts_gymnasium_space_keyword() -> None:
    seq = Sequence(space=Discrete(3), max_length=4, stack=True)
    plain = Sequence(Discrete(3), 4, True)
    assert (
        seq == plain
        and repr(seq) == repr(plain) == "Sequence(Discrete(3), max_length=4, stack=True)"
    )
    assert seq.to_jsonable() == plain.to_jsonable()
    assert pickle.loads(pickle.dumps(seq)) == plain


def test_sequence_needs_exactly_one_of_feature_space_and_space() -> None:
    with pytest.raises(TypeError, match=re.escape("got both 'feature_space' and 'space'")):
        Sequence(Discrete(3), space=Discrete(3))
    with pytest.raises(
        TypeError,
        match=re.escape("missing required argument: 'feature_space' (also accepted as 'space')"),
    ):
        Sequence()


def test_sequence_rejects_non_space_feature() -> None:
    with pytest.raises(TypeError, match=re.escape("feature_space must be a sekai.Space, got 3.")):
        Sequence(3)  # type: ignore[arg-type]


def test_sequence_rejects_negative_max_length() -> None:
    with pytest.raises(ValueError):
        Sequence(Discrete(3), max_length=-1)
    with pytest.raises(TypeError):
        Sequence(Discrete(3), max_length=2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("feature", "name"),
    [
        (Sequence(Discrete(2)), "Sequence"),
        (Dict(), "Dict"),
        (Tuple([]), "Tuple"),
        (Dict(a=Sequence(Discrete(2))), "Dict"),
    ],
)
def test_sequence_stack_rejects_unstackable_features(feature: object, name: str) -> None:
    msg = f"Sequence(stack=True) cannot stack elements of {name}."
    with pytest.raises(TypeError, match=re.escape(msg)):
        Sequence(feature, stack=True)  # type: ignore[arg-type]


def test_sequence_of_sequence_is_allowed_unstacked() -> None:
    seq = Sequence(Sequence(Discrete(2), max_length=2), max_length=3, seed=0)
    for _ in range(10):
        x = seq.sample()
        assert isinstance(x, tuple) and all(isinstance(e, tuple) for e in x)
        assert seq.contains(x)


def test_sequence_bounded_lengths_are_uniform_in_range() -> None:
    seq = Sequence(Discrete(3), max_length=3, seed=0)
    lengths = {len(seq.sample()) for _ in range(100)}
    assert lengths == {0, 1, 2, 3}


def test_sequence_unbounded_lengths_follow_geometric_rule() -> None:
    seq = Sequence(Discrete(3), seed=5)
    rng = np.random.default_rng(5)
    feature_seed = make_seed_sequence(5, 1)[0]
    feature = Discrete(3, seed=feature_seed)
    for _ in range(10):
        expected_len = int(rng.geometric(0.25)) - 1
        sample = seq.sample()
        assert len(sample) == expected_len
        assert [int(v) for v in sample] == [int(feature.sample()) for _ in range(expected_len)]


def test_sequence_unbounded_mean_length_is_about_three() -> None:
    seq = Sequence(Discrete(3), seed=0)
    mean = np.mean([len(seq.sample()) for _ in range(2000)])
    assert 2.5 < mean < 3.5


def test_sequence_stacked_samples() -> None:
    seq = Sequence(Box(0.0, 1.0, shape=(2,)), max_length=4, stack=True, seed=0)
    for _ in range(10):
        x = seq.sample()
        assert isinstance(x, np.ndarray) and x.shape[1:] == (2,) and x.dtype == np.float32
        assert seq.contains(x)
    assert Sequence(Discrete(3), stack=True, seed=0).sample().dtype == np.int64


def test_sequence_stacked_dict_and_tuple_samples() -> None:
    seq = Sequence(
        Dict(a=Discrete(3), b=Tuple([MultiDiscrete([2, 2]), MultiBinary(1)])),
        max_length=3,
        stack=True,
        seed=1,
    )
    for _ in range(10):
        x = seq.sample()
        assert isinstance(x, dict) and isinstance(x["b"], tuple)
        assert x["a"].shape[0] == x["b"][0].shape[0] == x["b"][1].shape[0]
        assert seq.contains(x)


def test_sequence_mask_fixes_length_and_passes_feature_mask() -> None:
    seq = Sequence(Discrete(3), max_length=5, seed=0)
    x = seq.sample(mask=(4, np.array([0, 0, 1], dtype=np.int8)))
    assert [int(v) for v in x] == [2, 2, 2, 2]
    assert len(seq.sample(mask=(None, None))) <= 5


def test_sequence_mask_length_out_of_range() -> None:
    with pytest.raises(ValueError, match=re.escape("length 5 is outside [0, 3].")):
        Sequence(Discrete(3), max_length=3).sample(mask=(5, None))
    with pytest.raises(ValueError, match="outside"):
        Sequence(Discrete(3)).sample(mask=(-1, None))


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (3, "A Sequence mask must be a (length, feature_mask) pair, got 3."),
        (
            (1, None, None),
            "A Sequence mask must be a (length, feature_mask) pair, got (1, None, None).",
        ),
        ((1.0, None), "A Sequence length must be an int, got 1.0."),
        ((True, None), "A Sequence length must be an int, got True."),
    ],
    ids=["not-a-pair", "three-parts", "float-length", "bool-length"],
)
def test_sequence_sample_refuses_a_mask_of_the_wrong_form(mask: Any, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        Sequence(Discrete(3), max_length=3).sample(mask=mask)


def test_sequence_pack_and_elements_are_inverse() -> None:
    plain = Sequence(Discrete(3))
    assert plain.pack([1, 2]) == (1, 2)
    assert plain.elements((1, 2)) == [1, 2]
    stacked = Sequence(Dict(a=Discrete(3), b=Box(0.0, 1.0, shape=(2,))), stack=True)
    items = [
        {"a": np.int64(1), "b": np.array([0.1, 0.2], dtype=np.float32)},
        {"a": np.int64(2), "b": np.array([0.3, 0.4], dtype=np.float32)},
    ]
    packed = stacked.pack(items)
    assert packed["a"].tolist() == [1, 2] and packed["b"].shape == (2, 2)
    assert structurally_equal(stacked.elements(packed), items)
    empty = stacked.pack([])
    assert empty["a"].shape == (0,) and empty["b"].shape == (0, 2)
    assert stacked.contains(empty) and stacked.elements(empty) == []


def test_sequence_stacked_pack_refuses_elements_the_cast_would_change() -> None:
    box = Sequence(Box(0, 255, (2,), np.uint8), stack=True)
    msg = "items[0] is not a member of Box(0, 255, (2,), uint8): items[0][0] is 300, outside "
    with pytest.raises(ValueError, match=re.escape(msg)):
        box.pack([np.array([300, -1]), np.array([7, 8])])
    msg = "items[1] is not a member of Box(0, 255, (2,), uint8): it has dtype float64"
    with pytest.raises(ValueError, match=re.escape(msg)):
        box.pack([np.array([3.0, 4.0]), np.array([7.5, 8.0])])
    msg = "items[0] is not a member of Box(0, 255, (2,), uint8): items[0][0] is 300, outside "
    msg += "[0, 255]."
    with pytest.raises(ValueError, match=re.escape(msg)):
        box.pack([[300, -1], [7, 8]])
    msg = "items[0] is not a member of Discrete(3): it is 1.9 (a float), expected an int."
    with pytest.raises(ValueError, match=re.escape(msg)):
        Sequence(Discrete(3), stack=True).pack([1.9, 2.7])
    assert box.pack([np.array([3, 4], np.uint8), [5, 6]]).tolist() == [[3, 4], [5, 6]]


@pytest.mark.parametrize("stack", [False, True])
def test_sequence_pack_takes_in_range_values_of_another_dtype_as_the_box_dtype(stack: bool) -> None:
    seq = Sequence(Box(0, 255, (2,), np.uint8), stack=stack)
    for item in (np.array([5, 6]), np.array([5.0, 6.0]), np.array([5, 6], np.int16)):
        packed = seq.pack([item, [7, 8]])
        assert seq.contains(packed)
        assert [np.asarray(e).tolist() for e in seq.elements(packed)] == [[5, 6], [7, 8]]
        assert np.asarray(seq.elements(packed)[0]).dtype == np.uint8


@pytest.mark.parametrize("stack", [False, True])
def test_sequence_pack_refuses_more_items_than_max_length(stack: bool) -> None:
    seq = Sequence(Box(-1.0, 1.0, shape=(2,)), max_length=2, stack=stack)
    msg = "Got 3 items but the Sequence holds at most 2 (max_length)."
    with pytest.raises(ValueError, match=re.escape(msg)):
        seq.pack([np.zeros(2, np.float32)] * 3)
    assert len(seq.pack([np.zeros(2, np.float32)] * 2)) == 2


@pytest.mark.parametrize("stack", [False, True])
@pytest.mark.parametrize(
    ("items", "msg"),
    [
        ([np.zeros(3)], "items[0] is not a member of BOX: it has shape (3,), expected (2,)."),
        (
            [np.zeros(2), np.array([0.5, 2.0])],
            "items[1] is not a member of BOX: items[1][1] is 2.0, outside [-1.0, 1.0].",
        ),
        ([[0.1, np.nan]], "items[0] is not a member of BOX: items[0][1] is NaN."),
        (["ab"], "items[0] is not a member of BOX: it is 'ab' (a str), expected an array"),
    ],
)
def test_sequence_pack_refuses_items_outside_the_feature_space(
    stack: bool, items: list[Any], msg: str
) -> None:
    seq = Sequence(Box(-1.0, 1.0, shape=(2,)), stack=stack)
    with pytest.raises(ValueError, match=re.escape(msg.replace("BOX", repr(seq.feature_space)))):
        seq.pack(items)


def test_sequence_pack_names_the_failing_part_of_a_composite_item() -> None:
    seq = Sequence(Dict(a=Discrete(3), b=Box(0.0, 1.0, shape=(2,))), stack=True)
    with pytest.raises(ValueError, match=re.escape("items[1]['b'] has shape (3,), expected (2,).")):
        seq.pack([{"a": 1, "b": np.zeros(2)}, {"a": 1, "b": np.zeros(3)}])
    with pytest.raises(ValueError, match=re.escape("items[0] is not a member of Dict")):
        seq.pack([{"a": 1}])
    with pytest.raises(
        ValueError, match=re.escape("items[0] is not a member of Discrete(3): it is 7")
    ):
        Sequence(Discrete(3)).pack([7, 1])


def test_sequence_contains_checks_container_length_and_elements() -> None:
    seq = Sequence(Discrete(3), max_length=2)
    assert seq.contains(()) and seq.contains((0, 2)) and seq.contains([1])
    assert not seq.contains((0, 1, 2)) and not seq.contains((3,))
    assert not seq.contains(np.array([0, 1]))
    stacked = Sequence(Discrete(3), max_length=2, stack=True)
    assert stacked.contains(np.array([0, 1])) and not stacked.contains([0, 1])
    assert not stacked.contains(np.array([0, 1, 2])) and not stacked.contains(np.array([[0]]))


@pytest.mark.parametrize(
    ("feature", "members", "others"),
    [
        (Discrete(3), [np.int64, np.uint8], [np.float64, "<U1", object, np.complex128, bool]),
        (Box(0, 255, (2,), np.uint8), [np.uint8, bool], [np.int64, np.float64, np.complex128]),
        (Box(0.0, 1.0, (2,)), [np.float32, np.float64, np.int64], [np.complex64, "<U1", object]),
        (MultiBinary(2), [np.int8, bool], [np.float32, object]),
        (MultiDiscrete([2, 3]), [np.int64, np.int16], [np.float64, bool]),
    ],
)
def test_stacked_sequence_judges_an_empty_array_by_its_dtype(
    feature: Space[Any], members: list[Any], others: list[Any]
) -> None:
    # An empty array has no element to refuse: any dtype was taken, strings and objects too.
    seq = Sequence(feature, stack=True)
    shape = (0, *(feature.shape or ()))
    assert seq.contains(seq.pack([]))
    for dtype in members:
        assert seq.contains(np.zeros(shape, dtype)), dtype
        assert seq.contains(np.zeros((1, *shape[1:]), dtype)), dtype
    for dtype in others:
        empty = np.zeros(shape, dtype)
        assert not seq.contains(empty), dtype
        assert not seq.contains(np.zeros((1, *shape[1:]), dtype)), dtype
        with pytest.raises(ValueError, match="is not a stacked sample of"):
            seq.elements(empty)


def test_sequence_repr() -> None:
    assert repr(Sequence(Discrete(3))) == "Sequence(Discrete(3))"
    assert repr(Sequence(Box(0.0, 1.0, shape=(2,)), max_length=3)) == (
        "Sequence(Box(0.0, 1.0, (2,), float32), max_length=3)"
    )
    assert repr(Sequence(Discrete(3), max_length=4, stack=True)) == (
        "Sequence(Discrete(3), max_length=4, stack=True)"
    )


def test_sequence_equality_and_hash() -> None:
    assert Sequence(Discrete(3), 2) == Sequence(Discrete(3), max_length=2)
    assert Sequence(Discrete(3), 2) != Sequence(Discrete(3), 3)
    assert Sequence(Discrete(3)) != Sequence(Discrete(3), stack=True)
    with pytest.raises(TypeError, match="unhashable type: 'Sequence'"):
        hash(Sequence(Discrete(3)))


def test_sequence_pickle_keeps_both_generators() -> None:
    seq = Sequence(MaskedBox(0.0, 1.0, shape=(2,), max_size=2), max_length=3, stack=True, seed=2)
    seq.sample()
    a, b = pickle.loads(pickle.dumps(seq)), copy.deepcopy(seq)
    expected = seq.sample()
    assert structurally_equal(a.sample(), expected)
    assert structurally_equal(b.sample(), expected)
