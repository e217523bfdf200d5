"""snapshot, snapshot_info and snapshot_infos: copies that share nothing mutable with what they
copy, keep the classes of what they copy, and keep cycles and shared references as pickling
does."""

from __future__ import annotations

import collections
from typing import Any, NamedTuple

import numpy as np
import pytest

import sekai.core._snapshot as snapshots
from sekai.core._snapshot import snapshot, snapshot_info
from sekai.core.result import ResetResult


class Graph(NamedTuple):
    nodes: np.ndarray
    edges: np.ndarray


class Pair(tuple):  # type: ignore[type-arg]
    """A tuple subclass that is no namedtuple: kept as it is."""


def _graph() -> Graph:
    return Graph(np.zeros((2, 3)), np.zeros((1, 2), np.int64))


def test_snapshot_keeps_a_namedtuples_class_and_copies_its_arrays() -> None:
    graph = _graph()
    copied = snapshot(graph)
    assert type(copied) is Graph
    assert copied.nodes is not graph.nodes and copied.edges is not graph.edges
    graph.nodes[:] = 1.0
    assert copied.nodes.tolist() == [[0.0] * 3] * 2


def test_snapshot_keeps_dict_subclasses_and_the_items_of_a_sequence_observation() -> None:
    ordered = collections.OrderedDict(b=np.ones(2), a=np.zeros(2))
    copied = snapshot(ordered)
    assert type(copied) is collections.OrderedDict and list(copied) == ["b", "a"]
    assert copied["b"] is not ordered["b"]
    items = (_graph(), _graph())
    assert [type(item) for item in snapshot(items)] == [Graph, Graph]
    pair = Pair((np.zeros(2), 1))
    assert snapshot(pair) is pair


def test_snapshot_info_keeps_a_cycle_as_a_cycle_of_copies() -> None:
    root: dict[str, Any] = {"name": "root", "children": []}
    root["children"].append({"name": "leaf", "parent": root})
    info: dict[str, Any] = {"tree": root}
    info["self"] = info
    copied = snapshot_info(info)
    tree = copied["tree"]
    assert tree is not root and tree["children"][0]["parent"] is tree
    assert copied["self"] is copied
    items: list[Any] = []
    looped = (items, 1)
    items.append(looped)
    twin = snapshot_info({"looped": looped})["looped"]
    assert twin is not looped and twin[0] is not items and twin[0][0] is twin


def test_snapshot_info_copies_an_object_reached_twice_once() -> None:
    array = np.arange(3)
    stats = {"seen": [1]}
    copied = snapshot_info({"x": array, "y": array, "in": [array], "a": stats, "b": (stats,)})
    assert copied["x"] is copied["y"] is copied["in"][0] and copied["x"] is not array
    assert copied["a"] is copied["b"][0] and copied["a"] is not stats


def test_snapshot_info_copies_numpy_records_and_rebuilds_namedtuples() -> None:
    records = np.zeros(1, dtype=[("x", "f8"), ("y", "i4")])
    position = np.zeros(2)
    Point = collections.namedtuple("Point", "pos label")
    copied = snapshot_info({"rec": records[0], "point": Point(position, "a")})
    records["x"][0] = 5.0
    position += 1.0
    assert copied["rec"]["x"] == 0.0
    assert type(copied["point"]) is Point and copied["point"].label == "a"
    assert copied["point"].pos.tolist() == [0.0, 0.0]


def test_snapshot_infos_of_numbers_strings_and_none_are_plain_dict_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: Any) -> Any:
        raise AssertionError("an info of numbers, strings and None took the copying path")

    monkeypatch.setattr(snapshots, "_items_copied", refuse)
    infos = [{"a": 1, "b": 2.5, "c": None, "d": "x", "e": np.float32(1.0), "f": True}] * 2
    copied = snapshots.snapshot_infos([ResetResult(0, info) for info in infos])
    assert copied == infos and all(type(c) is dict and c is not infos[0] for c in copied)
    assert snapshot_info(infos[0]) == infos[0]


def test_snapshot_info_checks_numbers_and_copies_arrays_without_a_call_per_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []
    copied_by = snapshots._copied

    def counted(value: Any, *memo: Any) -> Any:
        calls.append(value)
        return copied_by(value, *memo)

    monkeypatch.setattr(snapshots, "_copied", counted)
    weights = np.ones(3)
    info = {"value": 1.0, "equity": 2.0, "weights": weights, "step": 3, "dt": 1.0}
    copied = snapshot_info(info)
    assert calls == [] and copied["weights"] is not weights
    assert copied["weights"].tolist() == [1.0] * 3 and {**copied, "weights": 0} == {
        **info,
        "weights": 0,
    }


def test_snapshot_infos_hands_on_the_infos_sekai_built_as_they_are() -> None:
    env_info = {"pos": np.zeros(2)}
    built = {"final_observation": np.ones(2), "final_info": {"t": 3}}
    copied = snapshots.snapshot_infos([ResetResult(0, env_info), ResetResult(0, built)], [1])
    assert copied[1] is built
    assert copied[0] is not env_info and copied[0]["pos"] is not env_info["pos"]
    # The others hold numbers only: plain copies, the built one (arrays in it) still as it is.
    scalars = {"t": 1}
    results = [ResetResult(0, built), ResetResult(0, scalars), ResetResult(0, scalars)]
    copied = snapshots.snapshot_infos(results, [0])
    assert copied[0] is built and copied[1] == copied[2] == scalars
    assert len({id(info) for info in [*copied[1:], scalars]}) == 3


def test_snapshot_infos_keeps_a_cycle_back_to_an_info() -> None:
    info: dict[str, Any] = {"t": 1}
    info["self"] = info
    (copied,) = snapshots.snapshot_infos([ResetResult(0, info)])
    assert copied is not info and copied["self"] is copied and copied["t"] == 1
