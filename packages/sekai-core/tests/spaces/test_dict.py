"""Dict: mapping API, order, seeding of children, masks, membership, repr, equality."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.core._rng import make_seed_sequence
from sekai.spaces import Box, Dict, Discrete, MultiBinary, Tuple, batch_space
from sekai.utils._equal import structurally_equal


def pos_k() -> Dict:
    return Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3))


def test_dict_keeps_insertion_order_never_sorted() -> None:
    d = Dict({"z": Discrete(2), "a": Discrete(3)}, m=Discrete(4))
    assert list(d.keys()) == ["z", "a", "m"]
    assert list(d) == ["z", "a", "m"]
    assert list(d.sample()) == ["z", "a", "m"]


def test_dict_accepts_pairs_and_kwargs() -> None:
    d = Dict([("a", Discrete(2)), ("b", Discrete(3))])
    assert d == Dict(a=Discrete(2), b=Discrete(3))
    assert Dict() == Dict({})


def test_dict_rejects_non_space_values() -> None:
    with pytest.raises(TypeError, match="'a'"):
        Dict(a=3)  # type: ignore[arg-type]
    d = pos_k()
    with pytest.raises(TypeError):
        d["x"] = 3  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("spaces", "given"), [(5, "int"), ("ab", "str"), (Discrete(2), "Discrete")]
)
def test_dict_refuses_what_is_neither_a_mapping_nor_pairs(spaces: Any, given: str) -> None:
    message = f"Dict spaces must be a mapping or (key, space) pairs, got {given}."
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        Dict(spaces)


def test_dict_mapping_api() -> None:
    d = pos_k()
    assert len(d) == 2
    assert d["k"] == Discrete(3)
    assert list(d.values()) == [Box(-1.0, 1.0, shape=(2,)), Discrete(3)]
    assert [k for k, _ in d.items()] == ["pos", "k"]
    d["extra"] = MultiBinary(2)
    assert list(d.keys()) == ["pos", "k", "extra"]
    assert d.spaces["extra"] == MultiBinary(2)
    assert d.shape is None and d.dtype is None


def test_dict_spaces_view_is_read_only() -> None:
    with pytest.raises(TypeError):
        pos_k().spaces["x"] = Discrete(2)  # type: ignore[index]


def test_dict_repr() -> None:
    assert repr(pos_k()) == "Dict({pos: Box(-1.0, 1.0, (2,), float32), k: Discrete(3)})"
    assert repr(Dict()) == "Dict({})"


def test_dict_sample_and_contains() -> None:
    d = pos_k()
    d.seed(0)
    s = d.sample()
    assert d.contains(s)
    assert not d.contains({"pos": s["pos"]})
    assert not d.contains({**s, "other": 1})
    assert not d.contains({"pos": s["pos"], "kk": 0})
    assert not d.contains([s["pos"], s["k"]])
    assert d.contains({"k": s["k"], "pos": s["pos"]})


def test_dict_sample_passes_sub_masks() -> None:
    d = pos_k()
    d.seed(0)
    for _ in range(10):
        assert int(d.sample({"k": np.array([0, 0, 1], dtype=np.int8)})["k"]) == 2
    with pytest.raises(TypeError):
        d.sample([1, 2])


def test_dict_seed_seeds_children_with_seed_sequence() -> None:
    d = pos_k()
    assert d.seed(7) == 7
    pos_seed, k_seed = make_seed_sequence(7, 2)
    pos, k = Box(-1.0, 1.0, shape=(2,), seed=pos_seed), Discrete(3, seed=k_seed)
    for _ in range(5):
        s = d.sample()
        np.testing.assert_array_equal(s["pos"], pos.sample())
        assert s["k"] == k.sample()


def test_dict_seed_with_generator_derives_children_from_a_draw() -> None:
    def child_draws(generator_seed: int) -> list[int]:
        d = Dict(a=Discrete(1000))
        assert d.seed(np.random.default_rng(generator_seed)) == -1
        return [int(d["a"].sample()) for _ in range(5)]

    a, b = pos_k(), pos_k()
    a.seed(np.random.default_rng(1))
    b.seed(np.random.default_rng(1))
    assert structurally_equal(a.sample(), b.sample())
    assert child_draws(1) == child_draws(1)
    assert child_draws(1) != child_draws(2)  # the children's seeds come from the Generator


def test_dict_seed_with_dict_seeds_named_children_only() -> None:
    d = pos_k()
    d.seed(1)
    k_before = copy.deepcopy(d["k"])
    assert d.seed({"pos": 5}) == -1
    np.testing.assert_array_equal(d["pos"].sample(), Box(-1.0, 1.0, shape=(2,), seed=5).sample())
    assert d["k"].sample() == k_before.sample()


def test_dict_seed_with_unknown_keys_raises() -> None:
    msg = "Seeds given for ['zz'], which are not keys of this Dict (['pos', 'k'])."
    with pytest.raises(ValueError, match=re.escape(msg)):
        pos_k().seed({"zz": 1})


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ({"obs": [1, 2, 3]}, "Got 3 seeds in seed['obs'] for a Tuple of 2 sub-spaces."),
        ({"obs": []}, "Got 0 seeds in seed['obs'] for a Tuple of 2 sub-spaces."),
        (
            {"cfg": {"zz": 1}},
            "Seeds given for ['zz'] in seed['cfg'], which are not keys of this Dict (['a']).",
        ),
        (
            {"cfg": {"a": [{"zz": 1}]}},
            "Seeds given for ['zz'] in seed['cfg']['a'][0], which are not keys of this Dict "
            "(['b']).",
        ),
        (
            {"cfg": {"a": [{"b": 1}, 2]}},
            "Got 2 seeds in seed['cfg']['a'] for a Tuple of 1 sub-space.",
        ),
    ],
)
def test_nested_seed_count_and_key_errors_name_the_child(seeds: object, message: str) -> None:
    # As a bad seed value does (seed['obs'][1] must be ...): the user sees which child it is.
    space = Dict(
        obs=Tuple((Discrete(2), Discrete(3))),
        cfg=Dict(a=Tuple([Dict(b=Discrete(2))])),
        k=Discrete(2),
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        space.seed(seeds)


def test_dict_seed_with_dict_checks_every_seed_before_seeding() -> None:
    d = Dict(a=Discrete(1000), b=Tuple([Discrete(1000), Discrete(1000)]), seed=0)
    expected = copy.deepcopy(d).sample()
    bad: list[dict[str, object]] = [{"a": 5, "b": 1.5}, {"a": 5, "b": [7, -1]}]
    for seeds, where in zip(bad, [r"seed\['b'\] must be", r"seed\['b'\]\[1\] must be"]):
        with pytest.raises((TypeError, ValueError), match=where):
            d.seed(seeds)
    assert structurally_equal(d.sample(), expected)  # no child was re-seeded


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (
            [1, 2],
            TypeError,
            "seed must be a non-negative int, None, a numpy Generator or a dict {key: seed} "
            "for some of its sub-spaces, got list [1, 2].",
        ),
        ({"pos": 1, "k": -1}, ValueError, "seed['k'] must be a non-negative integer, got -1."),
        (
            {"pos": 1.5},
            TypeError,
            "seed['pos'] must be a non-negative int, None or a numpy Generator, got float 1.5.",
        ),
        (
            {"inner": [0, True]},
            TypeError,
            "seed['inner'][1] must be a non-negative int, None or a numpy Generator, got bool "
            "True.",
        ),
        (
            {"nested": [1]},
            TypeError,
            "seed['nested'] must be a non-negative int, None, a numpy Generator or a dict "
            "{key: seed} for some of its sub-spaces, got list [1].",
        ),
    ],
)
def test_a_bad_seed_message_names_the_per_child_form_and_the_bad_child(
    seed: object, error: type[Exception], message: str
) -> None:
    d = Dict(
        pos=Discrete(3),
        k=Discrete(3),
        inner=Tuple([Discrete(2), Discrete(2)]),
        nested=Dict(x=Discrete(2)),
    )
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        d.seed(seed)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Dict(d.spaces, seed=seed)  # the constructor's seed too


def test_dict_rejects_a_key_given_twice() -> None:
    with pytest.raises(ValueError, match=re.escape("Dict key 'a' is given twice.")):
        Dict({"a": Discrete(2)}, a=Box(0.0, 1.0, (3,)))
    with pytest.raises(ValueError, match=re.escape("Dict key 'a' is given twice.")):
        Dict([("a", Discrete(2)), ("b", Discrete(4)), ("a", Discrete(9))])


def test_dict_sample_rejects_mask_keys_it_does_not_have() -> None:
    d = Dict(action=Discrete(3), aux=MultiBinary(2), seed=0)
    msg = "Masks given for ['actions'], which are not keys of this Dict (['action', 'aux'])."
    with pytest.raises(ValueError, match=re.escape(msg)):
        d.sample({"actions": np.array([0, 0, 1], dtype=np.int8)})
    assert int(d.sample({"action": np.array([0, 0, 1], dtype=np.int8)})["action"]) == 2


def test_dict_constructor_accepts_dict_seed() -> None:
    d = Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3), seed={"k": 3})
    assert int(d.sample()["k"]) == int(Discrete(3, seed=3).sample())


def test_nested_dict_seeding_is_deterministic() -> None:
    def make() -> Dict:
        return Dict(a=Dict(b=Discrete(100), c=Tuple([Discrete(100), Box(0.0, 1.0, shape=(2,))])))

    x, y = make(), make()
    x.seed(3)
    y.seed(3)
    for _ in range(5):
        assert structurally_equal(x.sample(), y.sample())


def test_dict_equality_is_by_value_and_order() -> None:
    assert pos_k() == pos_k()
    assert pos_k() != Dict(k=Discrete(3), pos=Box(-1.0, 1.0, shape=(2,)))
    assert pos_k() != Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(4))
    assert pos_k() != Dict(pos=Box(-1.0, 1.0, shape=(2,)))
    with pytest.raises(TypeError, match="unhashable type: 'Dict'"):
        hash(pos_k())


def test_dict_is_flattenable_needs_all_children() -> None:
    assert pos_k().is_flattenable
    assert not Dict(a=Discrete(2), s=sekai.Sequence(Discrete(2))).is_flattenable


def test_dict_pickle_and_deepcopy_keep_children_state() -> None:
    d = pos_k()
    d.seed(9)
    d.sample()
    a, b = pickle.loads(pickle.dumps(d)), copy.deepcopy(d)
    assert a == d and b == d
    expected = d.sample()
    assert structurally_equal(a.sample(), expected)
    assert structurally_equal(b.sample(), expected)


def test_seed_none_keeps_the_streams_of_children_seeded_on_their_own() -> None:
    def draws(space: Any) -> list[int]:
        return [int(space["k"].sample()) for _ in range(5)]

    expected = draws(Dict(k=Discrete(100, seed=2)))
    seeded_child = Dict(k=Discrete(100, seed=2))
    seeded_child.seed()  # the Dict itself was never seeded: only it gets entropy
    assert draws(seeded_child) == expected
    by_key = Dict(pos=Discrete(100), k=Discrete(100))
    by_key.seed({"pos": 1, "k": 2})
    by_key.seed(None)
    assert draws(by_key) == expected


def test_batch_space_of_a_dict_keeps_its_childrens_seeded_streams() -> None:
    rows = [batch_space(Dict(k=Discrete(100, seed=2)), 3).sample()["k"].tolist() for _ in range(2)]
    assert rows[0] == rows[1]


@pytest.mark.parametrize(
    ("spaces", "bad"),
    [
        ([Discrete(2)], 0),  # Tuple-style: spaces, not (key, space) pairs
        ([1, 2], 0),
        ([("a", Discrete(2)), ("b",)], 1),
        ((("a", Discrete(2), 3),), 0),
        ([Dict(a=Discrete(2), b=Discrete(3))], 0),  # iterable, but a space
        (["ab"], 0),
    ],
)
def test_dict_of_items_that_are_no_pairs_names_the_item(spaces: Any, bad: int) -> None:
    message = (
        "Dict spaces must be a mapping or (key, space) pairs, got the "
        f"{type(spaces).__name__} item {spaces[bad]!r}."
    )
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        Dict(spaces)
