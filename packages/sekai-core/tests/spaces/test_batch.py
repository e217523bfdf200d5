"""batch_space, concatenate, iterate, create_empty_array."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

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
    create_empty_array,
    iterate,
    zero_sample,
)
from sekai.utils._equal import structurally_equal


@pytest.fixture
def opaque(make_space_type: Callable[..., type[Space[Any]]]) -> type[Space[Any]]:
    """A space the batch utilities do not know, with members "a", "b" and "c"."""
    return make_space_type("Opaque", ("a", "b", "c"))


def test_batch_box_stacks_bounds() -> None:
    box = Box(np.array([0.0, -1.0]), np.array([1.0, 2.0]), dtype=np.float64)
    batched = batch_space(box, 3)
    assert batched.shape == (3, 2) and batched.dtype == np.float64
    np.testing.assert_array_equal(batched.low, np.tile([0.0, -1.0], (3, 1)))


def test_batch_discrete_is_multi_discrete_with_start() -> None:
    assert repr(batch_space(Discrete(2), 4)) == "MultiDiscrete([2, 2, 2, 2])"
    assert batch_space(Discrete(3, start=-1), 4) == MultiDiscrete(
        [3, 3, 3, 3], start=[-1, -1, -1, -1]
    )


def test_batch_multi_discrete_and_multi_binary_add_leading_axis() -> None:
    md = batch_space(MultiDiscrete([2, 3], start=[1, 0], dtype=np.int32), 2)
    assert md == MultiDiscrete([[2, 3], [2, 3]], start=[[1, 0], [1, 0]], dtype=np.int32)
    assert batch_space(MultiBinary((2, 3)), 4) == MultiBinary((4, 2, 3))


def test_batch_dict_tuple_recurse() -> None:
    space = Dict(a=Discrete(2), b=Tuple([Box(0.0, 1.0, shape=(2,)), MultiBinary(2)]))
    assert batch_space(space, 3) == Dict(
        a=MultiDiscrete([2, 2, 2]), b=Tuple([Box(0.0, 1.0, shape=(3, 2)), MultiBinary((3, 2))])
    )


def test_batch_masked_box_is_a_plain_dict() -> None:
    batched = batch_space(MaskedBox(0.0, 1.0, shape=(3,), max_size=4), 2)
    assert type(batched) is Dict
    assert repr(batched) == (
        "Dict({values: Box(0.0, 1.0, (2, 4, 3), float32), mask: MultiBinary((2, 4))})"
    )


def test_batch_sequence_is_tuple_of_independent_copies() -> None:
    seq = Sequence(Discrete(1000), max_length=5, seed=0)
    batched = batch_space(seq, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert all(child == seq and child is not seq for child in batched)
    samples = [child.sample() for child in batched]
    assert len({tuple(int(v) for v in s) for s in samples}) > 1


def test_batch_unknown_space_is_tuple_of_copies(opaque: type[Space[Any]]) -> None:
    batched = batch_space(opaque(seed=1), 2)
    assert isinstance(batched, Tuple) and all(isinstance(c, opaque) for c in batched)


@pytest.mark.parametrize("n", [0, -1])
def test_batch_space_rejects_n_below_one(n: int) -> None:
    with pytest.raises(ValueError, match=">= 1"):
        batch_space(Discrete(2), n)


def test_batch_space_rejects_non_int_n() -> None:
    with pytest.raises(TypeError):
        batch_space(Discrete(2), 2.0)  # type: ignore[arg-type]


_SEEDED_ARRAY_SPACES: list[Callable[[], Space[Any]]] = [
    lambda: Box(0.0, 1.0, shape=(2,), seed=0),
    lambda: Box(-np.inf, np.inf, shape=(2,), seed=0),
    lambda: Box(np.array([0.0, -np.inf]), np.array([1.0, np.inf]), seed=0),
    lambda: Discrete(1000, seed=0),
    lambda: MultiDiscrete([5, 1000], seed=0),
    lambda: MultiBinary(8, seed=0),
]


@pytest.mark.parametrize(
    "make",
    _SEEDED_ARRAY_SPACES,
    ids=["box", "box-unbounded", "box-mixed", "discrete", "multi-discrete", "multi-binary"],
)
def test_batched_array_space_copies_generator_state(make: Callable[[], Space[Any]]) -> None:
    space = make()
    space.sample()  # the generator moves on from its seeded state
    batched = batch_space(space, 3)
    # The batched space draws from a copy of the original's generator, in its current state.
    assert batched.rng is not space.rng
    assert batched.rng.bit_generator.state == space.rng.bit_generator.state
    assert batched.rng.bit_generator.state != make().rng.bit_generator.state
    again = make()
    again.sample()
    np.testing.assert_array_equal(batched.sample(), batch_space(again, 3).sample())


@pytest.mark.parametrize(
    "make",
    [
        lambda: Dict(a=Box(0.0, 1.0, shape=(2,)), b=Discrete(3), seed=7),
        lambda: Tuple([Box(0.0, 1.0, shape=(2,)), Discrete(3)], seed=7),
    ],
    ids=["dict", "tuple"],
)
def test_batched_composite_copies_its_own_generator(make: Callable[[], Space[Any]]) -> None:
    space = make()
    space.rng.random()  # its own generator moves on from its seeded state
    batched = batch_space(space, 2)
    assert batched.seed() == 7  # seed(None) keeps the copied generator and returns its seed
    assert batched.rng is not space.rng
    assert batched.rng.bit_generator.state == space.rng.bit_generator.state
    assert batched.rng.bit_generator.state != make().rng.bit_generator.state


def test_batched_multi_discrete_sample_is_reproducible_after_seed() -> None:
    batched = batch_space(Discrete(2), 4)
    batched.seed(0)
    first = batched.sample()
    batched.seed(0)
    np.testing.assert_array_equal(batched.sample(), first)


def test_concatenate_casts_to_space_dtype() -> None:
    box = Box(0.0, 1.0, shape=(2,))
    out = concatenate(box, [np.zeros(2, dtype=np.float64), np.ones(2, dtype=np.float64)])
    assert out.dtype == np.float32 and out.shape == (2, 2)
    disc = concatenate(Discrete(3), [0, 2, 1])
    assert disc.dtype == np.int64 and disc.tolist() == [0, 2, 1]


@pytest.mark.parametrize(
    ("space", "items", "i"),
    [
        (Box(0, 255, (2,), np.uint8), [np.array([300, 7]), np.array([1, 2])], 0),
        (Box(0, 255, (2,), np.uint8), [np.array([1.0, 7.0]), np.array([1.0, 2.5])], 1),
        (MultiBinary((2, 2)), [np.zeros((2, 2), np.int64)] * 2 + [np.array([[0, 1], [300, 1]])], 2),
        (Discrete(3), [np.int64(1), 2.5], 1),
        (Discrete(3), [np.float64(1.0), np.float64(2.5)], 1),
        (MultiDiscrete([3, 3], dtype=np.int8), [np.array([1, 2]), [1, -129]], 1),
        (MultiBinary(2), [np.array([1.0, np.nan])], 0),
        (Discrete(3), [0, 2**70], 1),  # a Python int beyond int64
    ],
)
def test_concatenate_refuses_items_the_cast_would_change(
    space: Space[Any], items: list[Any], i: int
) -> None:
    # The unsafe cast used to wrap 300 to 44 in uint8 and truncate 2.5 to 2: corrupted values
    # that contains() could no longer tell apart.
    msg = f"items[{i}] = {items[i]!r} is not a member of {space!r}: stacking it as {space.dtype}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        concatenate(space, items)
    with pytest.raises(ValueError, match=re.escape(msg)):
        concatenate(space, items, create_empty_array(space, len(items)))


@pytest.mark.parametrize(
    ("space", "item", "dtype"),
    [
        (Box(0.0, 1.0, (2,)), ["0.5", "0.25"], "<U4"),
        (Box(0.0, 1.0, (2,)), [None, 0.5], "object"),
        (Box(0.0, 1.0, (2,)), np.array([0.5 + 2j, 0.1]), "complex128"),
        (Box(0.0, 1.0, (2,), np.float64), np.array([0.5, 0.1], dtype=object), "object"),
        (Box(0.0, 1.0, ()), "0.5", "<U3"),
        (Box(0, 9, (2,), np.int64), np.array(["3", "4"]), "<U1"),
        (MultiBinary(2), np.array([1 + 0j, 0j]), "complex128"),
    ],
    ids=repr,
)
def test_concatenate_refuses_items_that_are_not_real_numbers(
    space: Space[Any], item: Any, dtype: str
) -> None:
    # The float path's unsafe stack parsed strings, made None NaN and dropped imaginary parts.
    good = space.sample()
    msg = (
        f"items[1] = {item!r} is not a member of {space!r}: it holds {dtype} values, not real "
        f"numbers to stack as {space.dtype}."
    )
    for out in (None, create_empty_array(space, 2)):
        with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
            concatenate(space, [good, item], out)


def test_concatenate_keeps_casts_that_keep_values() -> None:
    md = MultiDiscrete([3, 3], dtype=np.uint8)
    out = concatenate(md, [np.array([1, 2]), [0, 1], np.array([2.0, 0.0])])
    assert out.dtype == np.uint8 and out.tolist() == [[1, 2], [0, 1], [2, 0]]
    wide = concatenate(MultiDiscrete([3]), [np.array([1], np.int32), np.array([2], np.uint8)])
    assert wide.dtype == np.int64 and wide.tolist() == [[1], [2]]


def test_concatenate_into_out_writes_in_place() -> None:
    space = Dict(a=Box(0.0, 1.0, shape=(2,)), b=Tuple([Discrete(3)]))
    out = create_empty_array(space, 2)
    items = [
        {"a": np.array([0.1, 0.2]), "b": (1,)},
        {"a": np.array([0.3, 0.4]), "b": (2,)},
    ]
    result = concatenate(space, items, out)
    assert result["a"] is out["a"] and result["b"][0] is out["b"][0]
    np.testing.assert_allclose(out["a"], [[0.1, 0.2], [0.3, 0.4]])
    assert out["b"][0].tolist() == [1, 2]


def test_concatenate_into_out_returns_out_for_every_buffer_kind() -> None:
    spaces: list[Space[Any]] = [
        Box(0.0, 1.0, shape=(2,)),
        Dict(a=Box(0.0, 1.0, shape=(2,)), b=Dict(c=Discrete(3))),
        Tuple([Box(0.0, 1.0, shape=(2,)), Tuple([MultiBinary(2)])]),
        MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
    ]
    for space in spaces:
        space.seed(0)
        items = [space.sample() for _ in range(3)]
        out = create_empty_array(space, 3)
        assert concatenate(space, items, out) is out
        assert structurally_equal(out, concatenate(space, items))


def test_concatenate_refuses_out_where_the_batch_is_no_buffer(
    opaque: type[Space[Any]],
) -> None:
    with pytest.raises(TypeError, match=r"^concatenate cannot write a batch of Opaque"):
        concatenate(opaque(), ["a"], ["b"])


def test_concatenate_into_a_buffer_holding_a_sequence_gives_its_new_tuple() -> None:
    seq = Sequence(Discrete(3))
    items = [(1,), (0, 2)]
    assert concatenate(seq, items, create_empty_array(seq, 2)) == ((1,), (0, 2))
    spaces: list[Space[Any]] = [Dict(a=Discrete(3), s=seq), Tuple([Discrete(3), seq])]
    for space in spaces:
        pairs = [{"a": 2, "s": (1,)}, {"a": 0, "s": (0, 2)}]
        batch_items = pairs if isinstance(space, Dict) else [(p["a"], p["s"]) for p in pairs]
        out = create_empty_array(space, 2)
        batch = concatenate(space, batch_items, out)
        assert structurally_equal(batch, concatenate(space, batch_items))
        first = out["a"] if isinstance(out, dict) else out[0]
        assert first.tolist() == [2, 0]  # the array part written into the buffer


def test_concatenate_refuses_a_tuple_out_of_another_length() -> None:
    space = Tuple([Discrete(3), Discrete(2)])
    with pytest.raises(ValueError, match=r"^out has 1 parts, but Tuple\(Discrete\(3\), "):
        concatenate(space, [(1, 0), (2, 1)], (np.zeros(2, np.int64),))


@pytest.mark.parametrize(
    "space",
    [
        Box(0.0, 1.0, shape=(2,)),
        Discrete(3),
        Dict(pos=Box(-1.0, 1.0, (2,)), k=Discrete(3)),
        Tuple([Discrete(2), Dict(m=MaskedBox(0.0, 1.0, shape=(2,), max_size=3))]),
    ],
    ids=["box", "discrete", "dict", "nested"],
)
def test_concatenate_names_an_empty_items_and_the_space(space: Space[Any]) -> None:
    message = f"items is empty: concatenate needs at least one sample of {space!r} to stack"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}") as info:
        concatenate(space, [])
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        concatenate(space, [], create_empty_array(space, 2))
    create_empty_array(space, 0)  # what the message points to: a batch of none


DICT = Dict(pos=Box(-1.0, 1.0, (2,)), k=Discrete(3))
NESTED = Tuple([Discrete(2), Dict(m=MaskedBox(0.0, 1.0, shape=(2,), max_size=3))])


@pytest.mark.parametrize(
    ("space", "items", "out", "message"),
    [
        (
            Box(0.0, 1.0, (2,)),
            [np.zeros(2, np.float32)] * 3,
            np.zeros((3, 5), np.float32),
            "out has shape (3, 5), expected (3, 2) for 3 items of Box(0.0, 1.0, (2,), float32): "
            "pass a buffer from create_empty_array(space, 3).",
        ),
        (
            DICT,
            [DICT.sample()],
            create_empty_array(DICT, 2),
            "out['pos'] has shape (2, 2), expected (1, 2) for 1 items of "
            "Box(-1.0, 1.0, (2,), float32): pass a buffer from create_empty_array(space, 1).",
        ),
        (
            DICT,
            [DICT.sample()] * 2,
            {"pos": np.zeros((2, 2), np.float32), "k": np.zeros((2, 1), np.int64)},
            "out['k'] has shape (2, 1), expected (2,) for 2 items of Discrete(3): pass a "
            "buffer from create_empty_array(space, 2).",
        ),
        (
            NESTED,
            [NESTED.sample()] * 2,
            (
                np.zeros(2, np.int64),
                {"m": {"values": np.zeros((2, 3, 2), np.float32), "mask": np.zeros((2, 4))}},
            ),
            "out[1]['m']['mask'] has shape (2, 4), expected (2, 3) for 2 items of "
            "MultiBinary(3): pass a buffer from create_empty_array(space, 2).",
        ),
    ],
    ids=["box", "dict-fewer-items", "dict-leaf", "nested"],
)
def test_concatenate_names_the_part_of_out_of_another_shape(
    space: Space[Any], items: list[Any], out: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$") as info:
        concatenate(space, items, out)
    assert info.value.__suppress_context__  # not chained to NumPy's message naming nothing


@pytest.mark.parametrize(
    ("space", "items", "message"),
    [
        (
            Box(0.0, 1.0, shape=(2,)),
            [0.5, 0.5],
            "items[0] = 0.5 is not a member of Box(0.0, 1.0, (2,), float32): it is of shape "
            "(), the space's shape is (2,).",
        ),
        (
            Box(0.0, 1.0, shape=(2,)),
            [np.zeros(3), np.zeros(3)],
            "items[0] = array([0., 0., 0.]) is not a member of Box(0.0, 1.0, (2,), float32): "
            "it is of shape (3,),",
        ),
        (
            MultiBinary(2),
            [[0, 1], [0, 1, 1]],
            "items[1] = [0, 1, 1] is not a member of MultiBinary(2): it is of shape (3,),",
        ),
        (
            Discrete(3),
            [1, np.array([2])],
            "items[1] = array([2]) is not a member of Discrete(3): it is of shape (1,), the "
            "space's shape is ().",
        ),
        (
            MultiDiscrete([3, 3]),
            [[1, 2], [1, [2]]],
            "items[1] = [1, [2]] is not a member of MultiDiscrete([3, 3]): it is ragged,",
        ),
    ],
)
def test_concatenate_refuses_items_of_another_shape(
    space: Space[Any], items: list[Any], message: str
) -> None:
    # Two scalars for a (2,) Box gave a (2,) batch and rows of three a (2, 3) one: batches
    # outside batch_space(space, n), with no error.
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        concatenate(space, items)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        concatenate(space, items, create_empty_array(space, len(items)))


@pytest.mark.parametrize(
    ("space", "items", "message"),
    [
        (
            Tuple([Discrete(2), Discrete(2)]),
            [(0, 1), (1,)],
            "items[1] has 1 parts, but Tuple(Discrete(2), Discrete(2)) has 2 sub-spaces.",
        ),
        (
            Tuple([Discrete(2)]),
            [(0,), 1],
            "items[1] is 1 (an int), not a tuple with one part per sub-space of "
            "Tuple(Discrete(2)).",
        ),
        (
            Dict(a=Discrete(2)),
            [{"a": 0, "b": 1}],
            "items[0] has the key 'b', which Dict({a: Discrete(2)}) does not have.",
        ),
        (
            Dict(a=Discrete(2), b=Discrete(2)),
            [{"a": 0, "b": 1}, {"a": 0, "c": 1}],
            "items[1] has no key 'b' of Dict({a: Discrete(2), b: Discrete(2)}).",
        ),
        (
            Dict(a=Discrete(2)),
            [{"a": 0}, [1]],
            "items[1] is a list, not a dict with the keys of Dict({a: Discrete(2)}).",
        ),
    ],
)
def test_concatenate_names_an_item_without_the_parts_of_the_space(
    space: Space[Any], items: list[Any], message: str
) -> None:
    # A short Tuple item raised a bare IndexError; a Dict item's extra key was dropped.
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        concatenate(space, items)
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        concatenate(space, items, create_empty_array(space, len(items)))


@pytest.mark.parametrize(
    ("space", "items"),
    [
        (
            Dict(a=Box(0, 1, (2,)), b=Discrete(3)),
            [{"a": np.zeros(2), "b": 1}, {"a": np.zeros(3), "b": 1}],
        ),
        (Tuple([Box(0, 1, (2,)), Discrete(3)]), [(np.zeros(2), 1), (np.zeros(3), 1)]),
    ],
    ids=["dict", "tuple"],
)
def test_concatenate_names_the_item_whose_part_does_not_fit_its_sub_space(
    space: Space[Any], items: list[Any]
) -> None:
    pattern = r"^items\[1\] .* it is of shape \(3,\), the space's shape is \(2,\)\.$"
    with pytest.raises(ValueError, match=pattern):
        concatenate(space, items)


@pytest.mark.parametrize(
    ("space", "sample"),
    [
        (Box(0, 1, (2,)), lambda i: np.full(2, i / 4)),
        (Discrete(3), lambda i: i),
        (Dict(a=Discrete(3), b=Box(0, 1, (2,))), lambda i: {"a": i, "b": np.full(2, i / 4)}),
        (Tuple([Discrete(3), Box(0, 1, (2,))]), lambda i: (i, np.full(2, i / 4))),
    ],
    ids=["box", "discrete", "dict", "tuple"],
)
def test_concatenate_takes_a_generator_of_items(
    space: Space[Any], sample: Callable[[int], Any]
) -> None:
    from_generator = concatenate(space, (sample(i) for i in range(3)))
    assert structurally_equal(from_generator, concatenate(space, [sample(i) for i in range(3)]))
    assert space.contains(next(iterate(batch_space(space, 3), from_generator)))


def test_concatenate_sequence_and_unknown(opaque: type[Space[Any]]) -> None:
    items = [(1, 2), (0,)]
    assert concatenate(Sequence(Discrete(3)), items) == ((1, 2), (0,))
    assert concatenate(opaque(), ["a", "b"]) == ["a", "b"]


def test_iterate_inverts_concatenate() -> None:
    space = Dict(a=Discrete(3), b=Tuple([Box(0.0, 1.0, shape=(2,)), MultiBinary(2)]))
    space.seed(0)
    items = [space.sample() for _ in range(4)]
    batch = concatenate(space, items)
    back = list(iterate(batch_space(space, 4), batch))
    assert len(back) == 4
    assert all(structurally_equal(x, y) for x, y in zip(back, items))


def test_iterate_tuple_of_sequences_yields_items(opaque: type[Space[Any]]) -> None:
    seq = Sequence(Discrete(3), max_length=3, seed=1)
    items = [seq.sample() for _ in range(3)]
    assert list(iterate(batch_space(seq, 3), concatenate(seq, items))) == items
    assert list(iterate(batch_space(opaque(), 2), ["a", "c"])) == ["a", "c"]


def test_iterate_rejects_unbatched_discrete() -> None:
    with pytest.raises(TypeError):
        iterate(Discrete(3), np.array([1, 2]))


def test_iterate_list_is_iterated_as_is(opaque: type[Space[Any]]) -> None:
    assert list(iterate(opaque(), ["a", "b"])) == ["a", "b"]


def test_create_empty_array_shapes_and_fn() -> None:
    space = Dict(a=Discrete(3), b=Box(0.0, 1.0, shape=(2,), dtype=np.float64), c=MultiBinary(2))
    arr = create_empty_array(space, 5)
    assert arr["a"].shape == (5,) and arr["a"].dtype == np.int64
    assert arr["b"].shape == (5, 2) and arr["b"].dtype == np.float64
    assert arr["c"].dtype == np.int8
    ones = create_empty_array(space, 2, fn=np.ones)
    assert (ones["b"] == 1).all()
    single = create_empty_array(space, None)
    assert single["a"].shape == () and single["b"].shape == (2,)


def test_create_empty_array_sequence_and_tuple() -> None:
    assert create_empty_array(Sequence(Discrete(3)), 2) == ((), ())
    assert create_empty_array(Sequence(Discrete(3)), None) == ()
    stacked = create_empty_array(Sequence(Discrete(3), stack=True), None)
    assert stacked.shape == (0,)
    t = create_empty_array(Tuple([Discrete(2), MultiDiscrete([2, 3])]), 3)
    assert t[0].shape == (3,) and t[1].shape == (3, 2)


def test_create_empty_array_unknown_space_raises(opaque: type[Space[Any]]) -> None:
    with pytest.raises(NotImplementedError, match="create_empty_array not implemented for Opaque"):
        create_empty_array(opaque(), 2)


def test_masked_box_batch_round_trips_through_concatenate_and_iterate() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3, seed=0)
    items = [m.sample() for _ in range(4)]
    batched = batch_space(m, 4)
    batch = concatenate(m, items)
    assert batched.contains(batch)
    back = list(iterate(batched, batch))
    assert all(m.contains(x) and structurally_equal(x, y) for x, y in zip(back, items))


def test_iterate_dict_with_an_empty_child_keeps_the_batch_length() -> None:
    space = Dict(a=Discrete(3), e=Dict(), t=Tuple([Tuple([])]))
    items = [{"a": np.int64(i), "e": {}, "t": ((),)} for i in range(3)]
    back = list(iterate(batch_space(space, 3), concatenate(space, items)))
    assert len(back) == 3
    assert all(structurally_equal(x, y) for x, y in zip(back, items))


@pytest.mark.parametrize(
    ("n", "error"), [(2.9, TypeError), ("3", TypeError), (True, TypeError), (-1, ValueError)]
)
def test_create_empty_array_checks_n_as_batch_space_does(n: Any, error: type) -> None:
    for space in (Box(0, 1, (2,)), Dict(a=Discrete(2), b=Box(0, 1, (1,)))):
        with pytest.raises(error, match=r"^n must be"):
            create_empty_array(space, n)
    assert create_empty_array(Box(0, 1, (2,)), np.int64(0)).shape == (0, 2)


def test_space_utilities_name_what_is_wrong() -> None:
    with pytest.raises(TypeError, match=r"^batch_space expects a sekai Space, got NoneType\.$"):
        batch_space(None, 2)  # type: ignore[arg-type]
    space = Dict(a=Discrete(2), b=Discrete(2))
    with pytest.raises(ValueError, match=r"^items\[1\] has no key 'b' of Dict"):
        concatenate(space, [{"a": 0, "b": 1}, {"a": 0}])


def test_iterate_refuses_parts_of_different_lengths() -> None:
    # zip used to cut the batch to its shortest part: the third item of "a" was lost.
    space = batch_space(Dict(a=Discrete(3), b=Tuple([Box(0, 1, (2,))])), 2)
    batch = {"a": np.array([0, 1, 2]), "b": (np.zeros((2, 2)),)}
    message = (
        f"The parts of a batch of {space!r} hold different numbers of items: batch['a'] has "
        "3, batch['b'] has 2."
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        iterate(space, batch)
    nested = Tuple([Box(0, 1, (2, 1)), Box(0, 1, (3, 1))])
    with pytest.raises(ValueError, match=r"batch\[0\] has 2, batch\[1\] has 3\.$"):
        iterate(Dict(t=nested), {"t": (np.zeros((2, 1)), np.zeros((3, 1)))})


@pytest.mark.parametrize(
    ("space", "batch", "expected"),
    [
        (Box(0.0, 1.0, (2, 2)), 5, "an array of shape (2, 2) (or a list of its items)"),
        (Box(0.0, 1.0, (2, 2)), np.float32(0.5), "an array of shape (2, 2) (or a list of its"),
        (MultiBinary((2, 3)), "ab", "an array of shape (2, 3)"),
        (MultiDiscrete([3, 3]), {"a": 1}, "an array of shape (2,)"),
        (Tuple([Box(0.0, 1.0, (2,)), MultiBinary(2)]), 5, "a tuple with one batch per sub-space"),
    ],
    ids=repr,
)
def test_iterate_names_a_batch_of_another_kind(
    space: Space[Any], batch: Any, expected: str
) -> None:
    # It raised Python's own "'int' object is not iterable" or iterated a string's characters.
    message = f"A batch of {space!r} must be {expected}"
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        iterate(space, batch)
    with pytest.raises(ValueError, match=re.escape(f", got {type(batch).__name__} ")):
        iterate(space, batch)


def test_iterate_names_a_missing_key() -> None:
    space = batch_space(Dict(a=Discrete(3), b=Box(0, 1, (2,))), 2)
    with pytest.raises(ValueError, match=re.escape(f"The batch of {space!r} has no key 'b'.")):
        iterate(space, {"a": np.array([0, 1])})
    with pytest.raises(ValueError, match=r"must be a dict with its keys, got list\.$"):
        iterate(space, [np.array([0, 1])])


@pytest.mark.parametrize(
    "space", [Dict(a=Dict()), Dict(), Tuple([]), Tuple([Dict(), Tuple([])])], ids=repr
)
def test_iterate_refuses_a_batch_without_data(space: Space[Any]) -> None:
    # Nothing in such a batch tells how many items it holds: it iterated as no items at all.
    batch = concatenate(space, [zero_sample(space)] * 3)
    with pytest.raises(
        ValueError, match=r"^Cannot iterate a batch of .*none of its sub-spaces holds data"
    ):
        iterate(batch_space(space, 3), batch)
