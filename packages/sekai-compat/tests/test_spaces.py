"""space_to_gymnasium / space_from_gymnasium: every space both ways, key order, reprs, errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import sekai
from sekai.compat import space_from_gymnasium, space_to_gymnasium


def test_space_to_gymnasium_sequence_matches_migration_page() -> None:
    space = sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=8)
    assert str(space_to_gymnasium(space)) == "Sequence(Box(0.0, 1.0, (2,), float32), stack=False)"


def test_space_to_gymnasium_masked_box_matches_migration_page() -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=8)
    assert (
        str(space_to_gymnasium(space))
        == "Dict('values': Box(0.0, 1.0, (8, 2), float32), 'mask': MultiBinary((8,)))"
    )


def test_masked_box_comes_back_as_plain_dict_of_values_and_mask() -> None:
    space = sekai.MaskedBox(-1.0, 1.0, shape=(3,), max_size=4)
    back = space_from_gymnasium(space_to_gymnasium(space))
    assert type(back) is sekai.Dict
    assert list(back) == ["values", "mask"]
    assert back["values"] == sekai.Box(-1.0, 1.0, shape=(4, 3))
    assert back["mask"] == sekai.MultiBinary(4)
    sample = space.sample()
    assert sample in back


@pytest.mark.parametrize(
    "space",
    [
        sekai.Box(-1.0, 2.0, shape=(3,)),
        sekai.Box(np.array([-1.0, -np.inf]), np.array([1.0, np.inf]), dtype=np.float64),
        sekai.Box(0, 255, shape=(4, 4, 3), dtype=np.uint8),
        sekai.Discrete(5),
        sekai.Discrete(3, start=-1),
        sekai.MultiDiscrete([2, 3, 4]),
        sekai.MultiDiscrete([[2, 3], [4, 5]], start=[[1, 0], [0, -2]]),
        sekai.MultiDiscrete([6, 6], dtype=np.int32),
        sekai.MultiBinary(4),
        sekai.MultiBinary((2, 3)),
        sekai.Tuple([sekai.Discrete(2), sekai.Box(0.0, 1.0, shape=(2,))]),
        sekai.Sequence(sekai.Discrete(3), stack=True),
        sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,))),
        sekai.Dict({"z": sekai.Discrete(2), "a": sekai.Box(0.0, 1.0, shape=(2,))}),
    ],
    ids=repr,
)
def test_space_round_trip_gives_an_equal_space(space: sekai.Space) -> None:
    assert space_from_gymnasium(space_to_gymnasium(space)) == space


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        (sekai.Box(-1.0, 2.0, shape=(3,)), gym.spaces.Box(-1.0, 2.0, shape=(3,))),
        (sekai.Discrete(3, start=-1), gym.spaces.Discrete(3, start=-1)),
        (
            sekai.MultiDiscrete([2, 2], start=[1, -1], dtype=np.int32),
            gym.spaces.MultiDiscrete([2, 2], start=[1, -1], dtype=np.int32),
        ),
        (sekai.MultiBinary((2, 3)), gym.spaces.MultiBinary((2, 3))),
        (
            sekai.Sequence(sekai.Discrete(3), stack=True),
            gym.spaces.Sequence(gym.spaces.Discrete(3), stack=True),
        ),
    ],
    ids=repr,
)
def test_space_to_gymnasium_gives_the_equal_gymnasium_space(
    space: sekai.Space, expected: gym.spaces.Space
) -> None:
    converted = space_to_gymnasium(space)
    assert converted == expected
    assert converted.dtype == expected.dtype


def test_a_1d_multi_binary_becomes_gymnasiums_multi_binary_of_an_int() -> None:
    """SB3 refuses gymnasium's MultiBinary((4,)) as an action space, not MultiBinary(4)."""
    assert space_to_gymnasium(sekai.MultiBinary(4)) == gym.spaces.MultiBinary(4)
    assert space_to_gymnasium(sekai.MultiBinary((4,))) == gym.spaces.MultiBinary(4)
    assert str(space_to_gymnasium(sekai.MultiBinary((2, 3)))) == "MultiBinary((2, 3))"


def test_only_the_masked_box_mask_keeps_its_tuple_n() -> None:
    space = sekai.Dict({"mask": sekai.MultiBinary(8), "values": sekai.Box(0.0, 1.0, (8,))})
    assert str(space_to_gymnasium(space)["mask"]) == "MultiBinary(8)"


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.MultiBinary(4),
        gym.spaces.MultiBinary((2, 3)),
        gym.spaces.Dict([("b", gym.spaces.MultiBinary(3)), ("d", gym.spaces.Discrete(2))]),
        gym.spaces.Box(-1.0, 1.0, (2,)),
        gym.spaces.MultiDiscrete([3, 4], start=[1, 0]),
    ],
    ids=repr,
)
def test_gymnasium_round_trip_gives_an_equal_space(space: gym.spaces.Space) -> None:
    assert space_to_gymnasium(space_from_gymnasium(space)) == space


def test_a_multi_binary_of_a_1_tuple_comes_back_with_an_int() -> None:
    """sekai's MultiBinary(4) is MultiBinary((4,)): which one gymnasium's was is not kept, and
    gymnasium's __eq__ compares n itself; the shape and the samples are the same."""
    back = space_to_gymnasium(space_from_gymnasium(gym.spaces.MultiBinary((4,))))
    assert back == gym.spaces.MultiBinary(4) and back.shape == (4,)


def test_a_bool_box_is_refused_naming_it_and_what_to_do() -> None:
    space = gym.spaces.Box(0, 1, (3,), dtype=bool)
    with pytest.raises(TypeError) as error:
        space_from_gymnasium(space)
    assert str(error.value).startswith(
        "space_from_gymnasium() cannot convert gymnasium's Box(False, True, (3,), bool): "
        "sekai's Box takes integer and floating dtypes only, got bool."
    )


def test_dict_key_order_is_kept_to_gymnasium() -> None:
    space = sekai.Dict(
        {"zeta": sekai.Discrete(2), "alpha": sekai.Discrete(3), "mid": sekai.MultiBinary(2)}
    )
    assert list(space_to_gymnasium(space).spaces) == ["zeta", "alpha", "mid"]


def test_dict_key_order_is_kept_from_gymnasium() -> None:
    space = gym.spaces.Dict([("zeta", gym.spaces.Discrete(2)), ("alpha", gym.spaces.Discrete(3))])
    assert list(space_from_gymnasium(space)) == ["zeta", "alpha"]


def test_flattened_observations_line_up_on_both_sides() -> None:
    space = sekai.Dict(
        {"w": sekai.Box(0.0, 1.0, shape=(2,)), "k": sekai.Discrete(3), "b": sekai.MultiBinary(2)}
    )
    space.seed(0)
    sample = space.sample()
    ours = sekai.spaces.flatten(space, sample)
    theirs = gym.spaces.flatten(space_to_gymnasium(space), sample)
    np.testing.assert_array_equal(ours, theirs.astype(np.float32))


def test_sequence_drops_max_length_and_comes_back_unbounded() -> None:
    space = sekai.Sequence(sekai.Discrete(3), max_length=4, stack=True)
    back = space_from_gymnasium(space_to_gymnasium(space))
    assert back.max_length is None
    assert back.stack is True


def test_nested_spaces_convert_recursively() -> None:
    space = sekai.Dict(
        {
            "inner": sekai.Dict({"t": sekai.Tuple([sekai.Discrete(2), sekai.MultiBinary(3)])}),
            "seq": sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,))),
        }
    )
    converted = space_to_gymnasium(space)
    assert isinstance(converted["inner"]["t"][1], gym.spaces.MultiBinary)
    assert isinstance(converted["seq"], gym.spaces.Sequence)
    assert space_from_gymnasium(converted) == space


def test_converted_spaces_contain_each_others_samples() -> None:
    space = sekai.Dict(
        {"x": sekai.Box(-1.0, 1.0, shape=(2,)), "n": sekai.MultiDiscrete([3, 4], start=[1, 0])}
    )
    converted = space_to_gymnasium(space)
    space.seed(1)
    converted.seed(1)
    for _ in range(20):
        assert space.sample() in converted
        assert space.contains(converted.sample())


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.Text(8),
        gym.spaces.Graph(node_space=gym.spaces.Discrete(3), edge_space=None),
        gym.spaces.OneOf([gym.spaces.Discrete(2), gym.spaces.Discrete(3)]),
    ],
    ids=lambda s: type(s).__name__,
)
def test_space_from_gymnasium_rejects_spaces_sekai_lacks_naming_them(
    space: gym.spaces.Space,
) -> None:
    with pytest.raises(TypeError, match=type(space).__name__):
        space_from_gymnasium(space)


def test_space_from_gymnasium_rejects_them_nested_in_a_dict() -> None:
    space = gym.spaces.Dict({"ok": gym.spaces.Discrete(2), "text": gym.spaces.Text(4)})
    with pytest.raises(TypeError, match="Text"):
        space_from_gymnasium(space)


def test_space_to_gymnasium_rejects_a_gymnasium_space() -> None:
    with pytest.raises(TypeError, match="expects a sekai space, got Discrete"):
        space_to_gymnasium(gym.spaces.Discrete(2))  # type: ignore[arg-type]


def test_space_from_gymnasium_rejects_a_sekai_space() -> None:
    with pytest.raises(TypeError, match="expects a gymnasium space, got Discrete"):
        space_from_gymnasium(sekai.Discrete(2))  # type: ignore[arg-type]


def test_space_to_gymnasium_rejects_a_custom_space_naming_it() -> None:
    class Weird(sekai.Space[int]):
        def sample(self, mask: object = None) -> int:
            return 0

        def contains(self, x: object) -> bool:
            return x == 0

        @property
        def is_flattenable(self) -> bool:
            return False

    with pytest.raises(TypeError, match="gymnasium has no equivalent of Weird"):
        space_to_gymnasium(Weird())
