"""stack_infos, splitting info arrays per sub-env, and ArrayInfos (native infos)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Dict
from sekai.vector._packing import defer, pack
from sekai.vector.infos import ArrayInfos, PackedInfos, split_value, stack_infos


def test_stack_infos_stacks_keys_present_in_every_info() -> None:
    infos = [{"elapsed_steps": 2, "a": 1.0}, {"elapsed_steps": 2}, {"elapsed_steps": 2, "b": 0}]
    stacked = stack_infos(infos)
    assert list(stacked) == ["elapsed_steps"]
    assert stacked["elapsed_steps"].tolist() == [2, 2, 2]
    assert sekai.stack_infos is stack_infos


def test_stack_infos_of_one_info_stacks_all_its_keys() -> None:
    assert stack_infos([{"elapsed_steps": 3}])["elapsed_steps"].tolist() == [3]


def test_stack_infos_leaves_out_a_key_that_one_of_the_other_infos_lacks() -> None:
    assert stack_infos([{"k": 1}, {"k": 2}, {}]) == {}
    assert list(stack_infos([{"k": 1, "j": 0}, {"j": 1}, {"k": 3, "j": 2}])) == ["j"]


def test_stack_infos_keeps_first_info_key_order_and_stacks_arrays() -> None:
    infos = [{"b": np.zeros(2), "a": 1}, {"a": 2, "b": np.ones(2)}]
    stacked = stack_infos(infos)
    assert list(stacked) == ["b", "a"]
    assert stacked["b"].shape == (2, 2)
    assert stacked["a"].tolist() == [1, 2]


def test_stack_infos_of_different_shapes_gives_an_object_array() -> None:
    stacked = stack_infos([{"w": np.zeros(2)}, {"w": np.zeros(3)}])
    assert stacked["w"].dtype == object and stacked["w"].shape == (2,)


@pytest.mark.parametrize(
    ("values", "dtype", "shape"),
    [
        ([np.float32(1), np.float32(2)], np.float32, (2,)),
        ([1, 2.5], np.float64, (2,)),
        ([1, "a"], np.dtype("<U21"), (2,)),
        ([(1, 2), (3, 4)], np.int64, (2, 2)),
        ([np.zeros((2, 2), np.int8), np.ones((2, 2), np.int8)], np.int8, (2, 2, 2)),
        ([np.datetime64("2020-01-01"), np.datetime64("2020-01-02")], "<M8[D]", (2,)),
        ([[1, 2], [3]], object, (2,)),
        ([{"a": 1}, None], object, (2,)),
        ([2**70, 1], object, (2,)),
    ],
    ids=str,
)
def test_stack_infos_gives_each_key_the_dtype_and_shape_of_its_values_stacked(
    values: list[Any], dtype: Any, shape: tuple[int, ...]
) -> None:
    column = stack_infos([{"k": value} for value in values])["k"]
    assert (column.dtype, column.shape) == (np.dtype(dtype), shape)
    if column.dtype == object:  # the values themselves, one per sub-env
        assert all(cell is value for cell, value in zip(column, values))
    else:
        assert np.array_equal(column, np.stack([np.asarray(value) for value in values]))


def test_stack_infos_of_nothing_is_empty() -> None:
    assert stack_infos([]) == {}


@pytest.mark.parametrize(
    ("infos", "message"),
    [
        ({"a": 1}, "stack_infos takes a list of info dicts (one per sub-env), got dict."),
        (3, "stack_infos takes a list of info dicts (one per sub-env), got int."),
        ([{"a": 1}, None], "stack_infos: infos[1] must be a dict, got NoneType."),
    ],
)
def test_stack_infos_of_something_other_than_a_list_of_dicts_is_a_type_error(
    infos: Any, message: str
) -> None:
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        stack_infos(infos)


def test_split_value_turns_1d_arrays_into_python_scalars() -> None:
    values = split_value(np.array([1.5, 2.5]), 2)
    assert values == [1.5, 2.5] and all(type(v) is float for v in values)
    assert [type(v) for v in split_value(np.array([1, 2]), 2)] == [int, int]


def test_split_value_keeps_datetimes_numpy() -> None:
    stamps = np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[D]")
    values = split_value(stamps, 2)
    assert all(isinstance(v, np.datetime64) for v in values)


def test_split_value_gives_rows_of_2d_arrays_and_repeats_other_values() -> None:
    rows = split_value(np.arange(6).reshape(2, 3), 2)
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    other_length = np.arange(3)
    assert all(v is other_length for v in split_value(other_length, 2))
    assert split_value(7, 3) == [7, 7, 7]


def test_array_infos_skips_frozen_sub_envs_and_adds_elapsed_steps() -> None:
    infos = ArrayInfos(
        3,
        {"p": np.array([1, 2, 3])},
        elapsed=np.array([4, 5, 6]),
        skip=np.array([False, True, False]),
    ).build()
    assert infos == [{"p": 1, "elapsed_steps": 4}, {}, {"p": 3, "elapsed_steps": 6}]
    assert list(infos[0]) == ["p", "elapsed_steps"]


def test_array_infos_after_autoreset_follow_the_autoreset_convention() -> None:
    space = Dict(pos=Box(-1.0, 1.0, shape=(2,)))
    final = {"pos": np.arange(6, dtype=np.float32).reshape(3, 2)}
    lazy = ArrayInfos(
        3,
        {"p": np.array([1, 2, 3])},
        reset=np.array([0, 2]),
        final_observations=final,
        observation_space=space,
        reset_arrays={"start": np.array([10, 30])},
    )
    one = lazy.at(2)
    infos = lazy.build()
    assert infos[2] is one
    assert sorted(infos[0]) == ["final_info", "final_observation", "p", "reset_info"]
    assert infos[0]["final_info"] == {"p": 1}
    assert infos[0]["reset_info"] == {"start": 10}
    assert infos[2]["reset_info"] == {"start": 30}
    assert infos[2]["final_observation"]["pos"].tolist() == [4.0, 5.0]
    assert infos[1] == {"p": 2}


def _native_infos(reset: list[int]) -> ArrayInfos:
    """Five sub-envs' infos: datetime64, timedelta64, float and int columns, one frozen
    sub-env (3) and same-step resets of ``reset``."""
    space = Box(-10.0, 10.0, shape=(2,))
    start = np.datetime64("2024-01-01T00:00", "ns")
    return ArrayInfos(
        5,
        {
            "timestamp": start + np.arange(5).astype("timedelta64[m]"),
            "wait": np.arange(5).astype("timedelta64[s]"),
            "price": np.linspace(1.0, 3.0, 5),
            "t": np.arange(5, dtype=np.int64),
        },
        elapsed=np.arange(10, 15),
        skip=np.array([False, False, False, True, False]),
        reset=np.array(reset, dtype=np.intp),
        final_observations=np.arange(10, dtype=np.float32).reshape(5, 2),
        observation_space=space,
        reset_arrays={"day": np.array(reset) + 100},
    )


@pytest.mark.parametrize("reset", [[4], [2], [0, 4], [1, 2]], ids=str)
def test_array_infos_built_one_at_a_time_equal_the_list_built_at_once(reset: list[int]) -> None:
    # at(i) builds sub-env i's dict alone (a tracker with on_step reads each so): the same
    # keys, values and types as the whole list, and only the reset sub-envs look finished.
    built = _native_infos(reset).build()
    lazy = _native_infos(reset)
    one_at_a_time = [lazy.at(i) for i in range(5)]
    assert [repr(info) for info in one_at_a_time] == [repr(info) for info in built]
    finished = [i for i, info in enumerate(one_at_a_time) if "final_observation" in info]
    assert finished == reset
    assert all(a is b for a, b in zip(lazy.build(), one_at_a_time))


def test_array_infos_keep_datetimes_numpy_and_give_python_numbers_in_every_dict() -> None:
    for infos in (_native_infos([]).build(), [_native_infos([]).at(i) for i in range(5)]):
        for info in infos[:3] + infos[4:]:
            types = {key: type(value) for key, value in info.items()}
            assert types == {
                "timestamp": np.datetime64,
                "wait": np.timedelta64,
                "price": float,
                "t": int,
                "elapsed_steps": int,
            }
        assert infos[3] == {}


def test_packed_infos_unpack_each_reply_in_order_and_take_the_rows_asked() -> None:
    first = [{"t": i, "v": np.float64(i / 2)} for i in range(5)]
    second = [{"t": 10 + i} for i in range(4)]
    infos = PackedInfos([(5, pack(first)), (np.array([3, 0]), pack(second))])
    one = infos.at(6)
    assert one == {"t": 10}
    built = infos.build()
    assert built == [*first, {"t": 13}, {"t": 10}]
    assert built[6] is one  # the dict handed out by at() is the one in the list
    assert len({id(info) for info in built}) == 7


def test_packed_infos_read_one_at_a_time_give_the_first_row_of_each_reply() -> None:
    first = [{"t": i} for i in range(3)]
    second = [{"t": 10 + i} for i in range(2)]
    infos = PackedInfos([(3, pack(first)), (np.array([1, 0]), pack(second))])
    assert [infos.at(i) for i in range(5)] == [*first, {"t": 11}, {"t": 10}]


def test_packed_infos_unpickle_a_deferred_column_once_when_first_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pickle

    from sekai.vector import _packing

    column = [{"t": i} for i in range(4)]
    loads: list[int] = []
    real = pickle.loads
    monkeypatch.setattr(_packing.pickle, "loads", lambda data: loads.append(1) or real(data))
    infos = PackedInfos([(4, defer(pack(column))), (2, defer(pack([{"u": 0}, {"u": 1}])))], 6)
    assert loads == []  # nothing unpickled until read
    assert infos.at(1) == {"t": 1}
    assert infos.at(2) == {"t": 2}
    assert len(loads) == 1  # the first reply's column, once
    built = infos.build()
    assert built == [*column, {"u": 0}, {"u": 1}]
    assert len(loads) == 2
    assert len({id(info) for info in built}) == 6


def _autoreset_infos(arrays: dict[str, Any] | None = None) -> ArrayInfos:
    """Sub-envs 0 and 2 of 4 reset; sub-env 3 frozen is impossible with autoreset, so the
    frozen case is its own test."""
    return ArrayInfos(
        4,
        arrays if arrays is not None else {"p": np.array([1, 2, 3, 4])},
        elapsed=np.array([5, 6, 7, 8]),
        reset=np.array([0, 2]),
        final_observations=np.arange(8, dtype=np.float32).reshape(4, 2),
        observation_space=Box(-10.0, 10.0, shape=(2,)),
        reset_arrays={"start": np.array([10, 30])},
    )


# (index, key, value) in the order a stack of wrappers sets them
SETS = [
    (2, "episode", "ep2"),
    (0, "final_observation", "normalised0"),  # a key the dict has: it keeps its place
    (1, "episode", "ep1"),
    (0, "episode", "ep0"),
    (0, "final_observation", "again0"),
    (3, "p", -4),
]


def _items(info: dict[str, Any]) -> list[tuple[str, Any]]:
    """A dict's items in order, arrays as (dtype, list)."""
    return [
        (key, (value.dtype, value.tolist()) if isinstance(value, np.ndarray) else value)
        for key, value in info.items()
    ]


@pytest.mark.parametrize("read", [None, 0, 1, 2, 3])
def test_keys_set_on_lazy_infos_are_those_set_on_the_built_dicts_in_order(
    read: int | None,
) -> None:
    expected = _autoreset_infos()
    for index, key, value in SETS:
        expected.at(index)[key] = value
    lazy = _autoreset_infos()
    for step, (index, key, value) in enumerate(SETS):
        if step == 3 and read is not None:
            lazy.at(read)  # a wrapper reads one dict in between
        lazy.set_item(index, key, value)
    got, want = lazy.build(), expected.build()
    assert [_items(info) for info in got] == [_items(info) for info in want]
    assert list(got[0]) == [
        "p",
        "elapsed_steps",
        "final_observation",
        "final_info",
        "reset_info",
        "episode",
    ]
    assert got[0]["final_info"] == {"p": 1, "elapsed_steps": 5}
    lazy.set_item(-1, "late", True)  # after the build: on the built dict
    assert got[3]["late"] is True


def test_get_reads_a_terminal_observation_without_building_the_dict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(self: ArrayInfos, index: int) -> Any:
        raise AssertionError(f"dict {index} built")

    lazy = _autoreset_infos()
    monkeypatch.setattr(ArrayInfos, "_make_one", refuse)
    assert lazy.get(0, "final_observation").tolist() == [0.0, 1.0]
    assert lazy.get(-2, "final_observation").tolist() == [4.0, 5.0]
    assert lazy.get(1, "final_observation", "none") == "none"  # not reset: no such key
    lazy.set_item(2, "final_observation", "changed")
    assert lazy.get(2, "final_observation") == "changed"
    with pytest.raises(IndexError, match="sub-env index 4 out of range for 4 sub-envs"):
        lazy.get(4, "final_observation")
    monkeypatch.undo()
    assert lazy.get(1, "p") == 2  # other keys: from the dict, built
    assert lazy.build()[2]["final_observation"] == "changed"
    assert lazy.get(0, "final_observation").tolist() == [0.0, 1.0]


def test_get_of_a_frozen_sub_env_or_an_envs_own_final_observation_key() -> None:
    frozen = ArrayInfos(2, {"p": np.array([1, 2])}, skip=np.array([True, False]))
    assert frozen.get(0, "final_observation", "none") == "none"
    assert frozen.get(1, "final_observation", "none") == "none"
    own = _autoreset_infos({"final_observation": np.array([7, 8, 9, 10])})
    assert own.get(1, "final_observation") == 8  # the env's own value, from its built dict
    assert own.get(0, "final_observation").tolist() == [0.0, 1.0]
    assert next(iter(own.build()[0])) == "final_observation"  # where the env's info had it


def test_keys_set_on_packed_infos_reach_the_built_list() -> None:
    infos = PackedInfos([(3, pack([{"t": i} for i in range(3)]))])
    infos.set_item(1, "episode", 1)
    infos.set_item(2, "t", 20)
    assert infos.get(1, "episode") == 1
    assert infos.at(2) == {"t": 20}
    assert infos.build() == [{"t": 0}, {"t": 1, "episode": 1}, {"t": 20}]
