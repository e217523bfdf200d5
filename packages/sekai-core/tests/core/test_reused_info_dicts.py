"""An env may return one info dict, refilled in place, from every reset() and step(): no result
that sekai hands out may share it, and nothing sekai adds may be written into it."""

from __future__ import annotations

import collections
from typing import Any, NamedTuple

import numpy as np
import pytest

import sekai
import sekai.vector._in_process as in_process
from sekai.core._snapshot import snapshot_info
from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv


class ReusedInfoEnv(sekai.Env[Any, Any]):
    """Episodes of two steps; ``self.info`` is cleared and refilled by every reset and step."""

    observation_space = sekai.Box(0.0, 10.0, shape=(1,))
    action_space = sekai.Discrete(2)

    def __init__(self) -> None:
        self.info: dict[str, Any] = {}
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        self.info.clear()
        self.info["phase"] = "reset"
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), self.info)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        self.info.clear()
        self.info.update(phase="step", t=self.t)
        obs = np.full(1, self.t, dtype=np.float32)
        return sekai.StepResult(obs, 1.0, self.t >= 2, False, self.info)


def test_autoreset_keeps_the_ending_steps_info_although_the_reset_refills_the_dict() -> None:
    env = sekai.AutoReset(ReusedInfoEnv())
    env.reset(seed=0)
    env.step(0)
    info = env.step(0).info
    assert info["final_info"] == {"phase": "step", "t": 2}
    assert info["reset_info"] == {"phase": "reset"}
    assert info["t"] == 2 and info["phase"] == "step"
    env.step(0)  # refills the dict the reset returned
    assert info["reset_info"] == {"phase": "reset"}


def test_episode_statistics_are_not_written_into_the_envs_dict() -> None:
    env = sekai.RecordEpisodeStatistics(ReusedInfoEnv())
    env.reset(seed=0)
    env.step(0)
    ending = env.step(0).info
    assert ending["episode"].episode_length == 2
    assert "episode" not in env.unwrapped.info  # type: ignore[attr-defined]
    env.reset()
    assert "episode" not in env.step(0).info


BACKENDS = {"sync": SyncVecEnv, "async": AsyncVecEnv}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_vector_infos_are_distinct_and_autoreset_keeps_the_ending_info(backend: str) -> None:
    with BACKENDS[backend]([ReusedInfoEnv] * 2) as vec:
        reset = vec.reset(seed=0)
        first = vec.step([0, 0])
        second = vec.step([0, 0])  # both end and reset within the step
        infos = [*reset.infos, *first.infos, *second.infos]
        assert len({id(info) for info in infos}) == 6
        envs = vec.envs  # type: ignore[attr-defined]
        assert all(info is not env.unwrapped.info for info in infos for env in envs)
        assert reset.infos[0] == {"phase": "reset"}
        assert first.infos[0] == {"phase": "step", "t": 1}
        ending = second.infos[1]
        assert ending["final_info"] == {"phase": "step", "t": 2}
        assert ending["reset_info"] == {"phase": "reset"}
        vec.step([0, 0])  # refills the dicts the resets returned
        assert ending["reset_info"] == {"phase": "reset"}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_vector_episode_statistics_stay_in_their_result_after_the_next_reset(backend: str) -> None:
    inner = BACKENDS[backend]([ReusedInfoEnv] * 2, autoreset=False)
    with sekai.VecRecordEpisodeStatistics(inner) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        ending = vec.step([0, 0])
        vec.reset()
        assert [info["episode"].extra for info in ending.infos] == [
            {"env_index": 0},
            {"env_index": 1},
        ]
        assert ending.infos[1]["t"] == 2


class NestedStateEnv(sekai.Env[Any, Any]):
    """Episodes of three steps; its info holds its own running-stats dict, its position array
    and a list, all changed in place by every step and cleared in place by every reset."""

    observation_space = sekai.Box(-100.0, 100.0, shape=(2,))
    action_space = sekai.Discrete(2)

    def __init__(self) -> None:
        self.pos = np.zeros(2)
        self.stats: dict[str, Any] = {"steps": 0, "inner": {"seen": []}}

    def _info(self) -> dict[str, Any]:
        return {"pos": self.pos, "stats": self.stats, "trail": self.stats["inner"]["seen"]}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.pos[:] = 0.0
        self.stats["steps"] = 0
        self.stats["inner"]["seen"].clear()
        return sekai.ResetResult(self.pos.astype(np.float32), self._info())

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.pos += 1.0
        self.stats["steps"] += 1
        self.stats["inner"]["seen"].append(self.stats["steps"])
        done = self.stats["steps"] >= 3
        return sekai.StepResult(self.pos.astype(np.float32), 1.0, done, False, self._info())


def _plain(value: Any) -> Any:
    """``value`` with its arrays as lists, to compare with ``==``."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _state(t: int) -> dict[str, Any]:
    """NestedStateEnv's info after step ``t`` of an episode, as ``_plain`` gives it."""
    seen = list(range(1, t + 1))
    return {"pos": [t, t], "stats": {"steps": t, "inner": {"seen": seen}}, "trail": seen}


def test_autoreset_keeps_the_final_values_of_nested_dicts_and_arrays_the_reset_clears() -> None:
    env = sekai.AutoReset(NestedStateEnv())
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    info = env.step(0).info
    env.step(0)
    assert _plain(info["final_info"]) == _state(3)
    assert _plain(info["reset_info"]) == _state(0)


ALL_BACKENDS = {
    **BACKENDS,
    "proc": lambda fns, **kwargs: ProcVecEnv(fns, num_workers=1, context="fork", **kwargs),
}


@pytest.mark.parametrize("backend", sorted(ALL_BACKENDS))
def test_vector_infos_hold_copies_of_the_envs_nested_dicts_and_arrays(backend: str) -> None:
    # Every backend hands out what ProcVecEnv's pickling gives: the values of that call.
    with ALL_BACKENDS[backend]([NestedStateEnv] * 2) as vec:
        reset = vec.reset(seed=0)
        first = vec.step([0, 0])
        vec.step([0, 0])
        ending = vec.step([0, 0])  # the autoreset clears the env's dicts in place
        vec.step([0, 0])
    assert _plain(reset.infos[1]) == _state(0)
    assert _plain(first.infos[1]) == _state(1)
    assert _plain(ending.infos[1]["final_info"]) == _state(3)
    assert _plain(ending.infos[1]["reset_info"]) == _state(0)


class SequenceBufferEnv(sekai.Env[Any, Any]):
    """A Sequence observation made of the env's own buffers, changed in place by every step."""

    observation_space = sekai.Sequence(sekai.Box(-100.0, 100.0, shape=(2,)))
    action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.buffers = (np.zeros(2, np.float32), np.ones(2, np.float32))
        return sekai.ResetResult(self.buffers, {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        for buffer in self.buffers:
            buffer += 1.0
        return sekai.StepResult(self.buffers, 1.0, False, False, {})


@pytest.mark.parametrize("backend", sorted(ALL_BACKENDS))
def test_vector_sequence_observations_hold_copies_of_the_envs_arrays(backend: str) -> None:
    with ALL_BACKENDS[backend]([SequenceBufferEnv] * 2) as vec:
        results = [vec.reset(seed=0)] + [vec.step([0, 0]) for _ in range(2)]
        got = [[item.tolist() for item in result.observations[1]] for result in results]
    assert got == [[[t, t], [t + 1, t + 1]] for t in (0.0, 1.0, 2.0)]


def test_snapshot_info_copies_containers_and_arrays_and_keeps_their_classes() -> None:
    counts: collections.defaultdict[str, list[int]] = collections.defaultdict(list, a=[1])
    array = np.arange(3)
    info = {"counts": counts, "array": array, "pair": (array, 1), "n": np.int64(2), "s": "x"}
    copied = snapshot_info(info)
    assert type(copied) is dict and type(copied["counts"]) is collections.defaultdict
    assert copied["counts"].default_factory is list
    assert copied["counts"] == {"a": [1]} and copied["counts"]["a"] is not counts["a"]
    assert copied["array"] is not array and copied["pair"][0] is not array
    assert copied["n"] is info["n"] and copied["s"] is info["s"]
    scalars = {"a": 1, "b": 2.0, "c": None, "d": "x", "e": np.float32(1.0), "f": True}
    assert snapshot_info(scalars) == scalars and snapshot_info(scalars) is not scalars


class TreeEnv(sekai.Env[Any, Any]):
    """Reports a tree whose leaves link back to their parent, updated in place, in its info;
    episodes of two steps."""

    observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
    action_space = sekai.Discrete(2)

    def __init__(self) -> None:
        self.root: dict[str, Any] = {"visits": 0, "children": []}
        self.root["children"].append({"name": "leaf", "parent": self.root})
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        self.root["visits"] = 0
        return sekai.ResetResult(np.zeros(2, np.float32), {"tree": self.root})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        self.root["visits"] = self.t
        return sekai.StepResult(
            np.zeros(2, np.float32), 1.0, self.t >= 2, False, {"tree": self.root}
        )


def _linked_visits(info: dict[str, Any]) -> int:
    """The tree's visits, read through its leaf's link back to it (which must be the copy)."""
    tree = info["tree"]
    assert tree["children"][0]["parent"] is tree
    visits: int = tree["visits"]
    return visits


@pytest.mark.parametrize("backend", sorted(ALL_BACKENDS))
def test_vector_infos_that_refer_to_themselves_are_copied_with_their_cycles(backend: str) -> None:
    with ALL_BACKENDS[backend]([TreeEnv] * 2) as vec:
        reset = vec.reset(seed=0)
        first = vec.step([0, 0])
        ending = vec.step([0, 0])
        vec.step([0, 0])
    assert _linked_visits(reset.infos[1]) == 0 and _linked_visits(first.infos[1]) == 1
    assert _linked_visits(ending.infos[1]["final_info"]) == 2
    assert _linked_visits(ending.infos[1]["reset_info"]) == 0


def test_autoreset_copies_an_info_that_refers_to_itself_with_its_cycle() -> None:
    env = sekai.AutoReset(TreeEnv())
    env.reset(seed=0)
    env.step(0)
    info = env.step(0).info
    env.step(0)
    assert _linked_visits(info["final_info"]) == 2 and _linked_visits(info["reset_info"]) == 0


class Graph(NamedTuple):
    nodes: np.ndarray
    edges: np.ndarray


class GraphSpace(sekai.Space[Graph]):
    """A custom space whose samples are ``Graph`` namedtuples."""

    def __init__(self) -> None:
        super().__init__(None, None)

    def sample(self, mask: Any = None, probability: Any = None) -> Graph:
        return Graph(np.zeros((2, 3)), np.zeros((1, 2), np.int64))

    def contains(self, x: Any) -> bool:
        return isinstance(x, Graph)

    @property
    def is_flattenable(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphSpace)

    __hash__ = object.__hash__


class GraphEnv(sekai.Env[Any, Any]):
    """Observes its own ``Graph``, whose node array every step changes in place."""

    observation_space = GraphSpace()
    action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.graph = Graph(np.zeros((2, 3)), np.zeros((1, 2), np.int64))
        return sekai.ResetResult(self.graph, {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.graph.nodes[:] += 1.0
        return sekai.StepResult(self.graph, 1.0, False, False, {})


@pytest.mark.parametrize("backend", sorted(ALL_BACKENDS))
def test_vector_namedtuple_observations_keep_their_class(backend: str) -> None:
    with ALL_BACKENDS[backend]([GraphEnv] * 2) as vec:
        results = [vec.reset(seed=0)] + [vec.step([0, 0]) for _ in range(2)]
        space = vec.observation_space
    graphs = [result.observations[1] for result in results]
    assert [type(graph) for graph in graphs] == [Graph] * 3
    assert all(space.contains(graph) for graph in graphs)
    assert [graph.nodes[0, 0] for graph in graphs] == [0.0, 1.0, 2.0]


Point = collections.namedtuple("Point", "pos")


class RecordEnv(sekai.Env[Any, Any]):
    """Reports a NumPy record and a namedtuple of its position array, both updated in place."""

    observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
    action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.records = np.zeros(1, dtype=[("x", "f8"), ("y", "i4")])
        self.pos = np.zeros(2)
        return sekai.ResetResult(np.zeros(2, np.float32), self._info())

    def _info(self) -> dict[str, Any]:
        return {"record": self.records[0], "point": Point(self.pos)}

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.records["x"][0] += 1.0
        self.pos += 1.0
        return sekai.StepResult(np.zeros(2, np.float32), 1.0, False, False, self._info())


@pytest.mark.parametrize("backend", sorted(ALL_BACKENDS))
def test_vector_infos_hold_copies_of_numpy_records_and_namedtuples(backend: str) -> None:
    with ALL_BACKENDS[backend]([RecordEnv] * 2) as vec:
        results = [vec.reset(seed=0)] + [vec.step([0, 0]) for _ in range(2)]
    infos = [result.infos[1] for result in results]
    assert [info["record"]["x"] for info in infos] == [0.0, 1.0, 2.0]
    assert [type(info["point"]) for info in infos] == [Point] * 3
    assert [info["point"].pos.tolist() for info in infos] == [[t, t] for t in (0.0, 1.0, 2.0)]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_vector_autoreset_infos_are_handed_on_without_a_second_copy(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ending step's info is sekai's own, built of snapshots taken before the reset.
    built: list[list[dict[str, Any]]] = []
    snapshot_infos = in_process.snapshot_infos

    def recorded(results: list[Any], own: Any = ()) -> list[dict[str, Any]]:
        built.append([results[index].info for index in own])
        return snapshot_infos(results, own)

    monkeypatch.setattr(in_process, "snapshot_infos", recorded)
    with BACKENDS[backend]([NestedStateEnv] * 2) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        vec.step([0, 0])
        ending = vec.step([0, 0])
        following = vec.step([0, 0])
    assert [len(own) for own in built] == [0, 0, 0, 2, 0]
    assert [info is own for info, own in zip(ending.infos, built[3])] == [True, True]
    assert _plain(ending.infos[1]["final_info"]) == _state(3)
    assert _plain(following.infos[1]) == _state(1)


class InterruptingEnv(ReusedInfoEnv):
    """A ReusedInfoEnv whose second step raises KeyboardInterrupt (a Ctrl-C) when asked to."""

    interrupt = False

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if self.interrupt:
            raise KeyboardInterrupt
        return super().step(action)


def test_sync_step_interrupted_after_an_autoreset_copies_that_sub_envs_next_info() -> None:
    # Sub-env 0 ends its episode and is reset, then sub-env 1's Ctrl-C stops the step: the next
    # step's info of sub-env 0, the env's own refilled dict, is still handed out as a copy.
    with SyncVecEnv([InterruptingEnv] * 2) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        envs = [env.unwrapped for env in vec.envs]
        envs[1].interrupt = True  # type: ignore[attr-defined]
        with pytest.raises(KeyboardInterrupt):
            vec.step([0, 0])
        envs[1].interrupt = False  # type: ignore[attr-defined]
        info = vec.step([0, 0]).infos[0]
        assert info == {"phase": "step", "t": 1} and info is not envs[0].info  # type: ignore[attr-defined]
