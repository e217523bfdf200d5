"""Tuple: sequence API, seeding (int, list), masks, membership, repr, equality."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest

from sekai.core._rng import make_seed_sequence
from sekai.spaces import Box, Dict, Discrete, MultiBinary, Sequence, Tuple
from sekai.utils._equal import structurally_equal


def pair() -> Tuple:
    return Tuple([Discrete(2), MultiBinary((2, 2))])


def test_tuple_repr_and_access() -> None:
    t = pair()
    assert repr(t) == "Tuple(Discrete(2), MultiBinary((2, 2)))"
    assert repr(Tuple([])) == "Tuple()"
    assert len(t) == 2 and t[0] == Discrete(2) and t.spaces[1] == MultiBinary((2, 2))
    assert list(t) == [Discrete(2), MultiBinary((2, 2))]
    assert t.shape is None and t.dtype is None


def test_tuple_rejects_non_spaces() -> None:
    with pytest.raises(TypeError, match="index 1"):
        Tuple([Discrete(2), 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Tuple(Discrete(2))  # type: ignore[arg-type]


def test_tuple_sample_and_contains() -> None:
    t = pair()
    t.seed(0)
    s = t.sample()
    assert isinstance(s, tuple) and t.contains(s) and t.contains(list(s))
    assert not t.contains(s[:1]) and not t.contains((s[0], s[1], 1))
    assert not t.contains((5, s[1])) and not t.contains({"0": s[0]})


def test_tuple_sample_mask_needs_one_entry_per_child() -> None:
    t = pair()
    s = t.sample((np.array([0, 1], dtype=np.int8), None))
    assert int(s[0]) == 1
    msg = "Tuple mask needs one mask per sub-space (2), got 1."
    with pytest.raises(ValueError, match=re.escape(msg)):
        t.sample((None,))


def test_tuple_seed_int_seeds_children_with_seed_sequence() -> None:
    t = Tuple([Discrete(100), Box(0.0, 1.0, shape=(2,))])
    assert t.seed(4) == 4
    s0, s1 = make_seed_sequence(4, 2)
    d, b = Discrete(100, seed=s0), Box(0.0, 1.0, shape=(2,), seed=s1)
    for _ in range(3):
        x = t.sample()
        assert x[0] == d.sample()
        np.testing.assert_array_equal(x[1], b.sample())


def test_tuple_seed_list_seeds_children_in_order_and_none_leaves_them() -> None:
    t = Tuple([Discrete(100), Discrete(100), Discrete(100)])
    t.seed(0)
    middle = copy.deepcopy(t[1])
    assert t.seed([5, None, 6]) == -1
    assert int(t[0].sample()) == int(Discrete(100, seed=5).sample())
    assert int(t[1].sample()) == int(middle.sample())
    assert int(t[2].sample()) == int(Discrete(100, seed=6).sample())


def test_tuple_seed_list_shorter_than_children_raises_and_seeds_nothing() -> None:
    # One seed (or None) per child: a short list used to seed only the first children and
    # leave the rest unseeded without a word.
    t = Tuple([Discrete(100), Discrete(100), Discrete(100)], seed=0)
    expected = copy.deepcopy(t).sample()
    with pytest.raises(ValueError, match=re.escape("Got 1 seed for a Tuple of 3 sub-spaces.")):
        t.seed([1])
    with pytest.raises(ValueError, match=re.escape("Got 0 seeds for a Tuple of 3 sub-spaces.")):
        t.seed([])
    assert t.sample() == expected


def test_tuple_seed_list_longer_than_children_raises() -> None:
    with pytest.raises(ValueError, match=re.escape("Got 3 seeds for a Tuple of 2 sub-spaces.")):
        pair().seed([1, 2, 3])


@pytest.mark.parametrize("seeds", [[5, 1.5], [5, -1], [5, (7, "x")], (5, None, 6)])
def test_tuple_seed_list_checks_every_seed_before_seeding(seeds: object) -> None:
    t = Tuple([Discrete(1000), Tuple([Discrete(1000), Discrete(1000)])], seed=0)
    expected = copy.deepcopy(t).sample()
    with pytest.raises((TypeError, ValueError)):
        t.seed(seeds)
    assert structurally_equal(t.sample(), expected)  # child 0 was not re-seeded to 5


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (
            {"a": 1},
            TypeError,
            "seed must be a non-negative int, None, a numpy Generator or a list (or tuple) with "
            "one seed (or None) per sub-space, got dict {'a': 1}.",
        ),
        (
            [0, True, None],
            TypeError,
            "seed[1] must be a non-negative int, None or a numpy Generator, got bool True.",
        ),
        ((None, -3, None), ValueError, "seed[1] must be a non-negative integer, got -3."),
        (
            [None, None, {"k": 1.5}],
            TypeError,
            "seed[2]['k'] must be a non-negative int, None or a numpy Generator, got float 1.5.",
        ),
    ],
)
def test_a_bad_seed_message_names_the_per_child_form_and_the_bad_child(
    seed: object, error: type[Exception], message: str
) -> None:
    t = Tuple([Discrete(2), Discrete(2), Dict(k=Discrete(2))])
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        t.seed(seed)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Tuple(t.spaces, seed=seed)  # the constructor's seed too


def test_a_sequence_child_is_checked_before_any_child_is_seeded() -> None:
    t = Tuple([Discrete(1000), Sequence(Discrete(3))], seed=0)
    expected = copy.deepcopy(t).sample()
    with pytest.raises(ValueError):
        t.seed([5, -1])
    assert structurally_equal(t.sample(), expected)


class Pairs(Discrete):
    """A space of one's own whose seed() also takes a (seed, tag) pair."""

    def seed(self, seed: object = None) -> int:
        return super().seed(seed[0] if isinstance(seed, tuple) else seed)


def test_a_child_with_a_seed_of_its_own_decides_what_it_takes() -> None:
    assert Tuple([Discrete(2), Pairs(2)]).seed([1, (3, "tag")]) == -1
    assert Dict(a=Pairs(2)).seed({"a": (3, "tag")}) == -1


class PairedDict(Dict):
    """A composite of one's own whose seed() also takes a (seed, tag) pair."""

    def seed(self, seed: object = None) -> int:
        return super().seed(seed[0] if isinstance(seed, tuple) else seed)


def test_a_composite_child_with_a_seed_of_its_own_decides_what_it_takes() -> None:
    assert Tuple([Discrete(2), PairedDict(a=Discrete(2))]).seed([1, (3, "tag")]) == -1


class LoggedTuple(Tuple):
    """A subclass whose seed() only adds to Tuple's."""

    def seed(self, seed: object = None) -> int:
        return super().seed(seed)


def test_a_subclass_calling_tuples_seed_keeps_its_checks() -> None:
    t = LoggedTuple([Discrete(1000), Discrete(1000)], seed=0)
    expected = copy.deepcopy(t).sample()
    with pytest.raises(TypeError):
        t.seed([7, "bad"])
    assert structurally_equal(t.sample(), expected)
    with pytest.raises(ValueError, match="Got 3 seeds for a Tuple of 2 sub-spaces"):
        t.seed([1, 2, 3])


def test_tuple_equality_and_hash() -> None:
    assert pair() == pair()
    assert pair() != Tuple([Discrete(2)])
    assert pair() != Tuple([MultiBinary((2, 2)), Discrete(2)])
    with pytest.raises(TypeError, match="unhashable type: 'Tuple'"):
        hash(pair())


def test_tuple_pickle_and_deepcopy_keep_state() -> None:
    t = pair()
    t.seed(3)
    t.sample()
    a, b = pickle.loads(pickle.dumps(t)), copy.deepcopy(t)
    expected = t.sample()
    assert structurally_equal(a.sample(), expected)
    assert structurally_equal(b.sample(), expected)
