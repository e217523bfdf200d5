"""NativeVecEnv: the page's Drift example, seeding, time limit, infos, freezing, attributes."""

from __future__ import annotations

import pickle
import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.testing.envs import Drift, DriftVecEnv
from sekai.vector import NativeVecEnv, shared
from sekai.vector._contract.seeding import vector_seeds


class ScheduledDrift(DriftVecEnv):
    @shared
    def push_schedule(self) -> Any:
        """The push for each of the next 4 steps, the same for every sub-env."""
        return np.array([1, 1, 0, 0])

    @shared
    @property
    def schedule(self) -> Any:
        return np.array([0, 1, 0, 1])

    @property
    def levels(self) -> Any:
        return np.arange(4) * 10

    def scaled_x(self, factor: float) -> Any:
        return self.x * factor


def test_drift_example_prints_the_page_numbers() -> None:
    vec = DriftVecEnv(4, max_episode_steps=100)
    result = vec.reset(seed=0)
    assert result.observations.shape == (4, 1)
    assert repr(vec.batch_action_space) == "MultiDiscrete([2, 2, 2, 2])"
    result = vec.step(np.array([1, 1, 0, 0]))
    assert str(result.rewards.round(3)) == "[-0.572 -0.404 -0.271 -0.3  ]"
    assert result.infos[0] == {"elapsed_steps": 1}
    assert vec.get_attr("max_episode_steps") == [100, 100, 100, 100]
    assert [round(float(x), 3) for x in vec.get_attr("x")] == [0.572, 0.404, 0.271, -0.3]
    vec.close()


def test_single_drift_pushes_the_point_and_terminates_beyond_five() -> None:
    env = Drift()
    first = env.reset(seed=0)
    assert env.observation_space.contains(first.observation)
    assert first.observation.tolist() == [np.float32(env.x)]
    env.x = 4.8
    result = env.step(1)
    assert 5.0 < env.x < 5.6  # +0.5 push, N(0, 0.1) noise
    assert result.reward == -abs(env.x) and result.terminated and not result.truncated
    assert result.observation.tolist() == [np.float32(env.x)]
    env.x = -9.9
    assert env.step(0).observation.tolist() == [-10.0]  # clipped to the space


def test_shared_method_gives_every_sub_env_the_whole_value() -> None:
    vec = ScheduledDrift(4)
    assert str(vec.call("push_schedule")[0]) == "[1 1 0 0]"
    assert all(np.array_equal(v, [0, 1, 0, 1]) for v in vec.get_attr("schedule"))
    assert vec.get_attr("levels") == [0, 10, 20, 30]  # not shared: split


def test_call_passes_a_keyword_argument_called_name_to_the_method() -> None:
    class Named(DriftVecEnv):
        def label(self, name: str, *, suffix: str = "") -> np.ndarray:
            return np.array([f"{name}{i}{suffix}" for i in range(self.num_envs)])

    vec = Named(2)
    assert vec.call("label", name="x", suffix="!") == ["x0!", "x1!"]
    assert sekai.VecWrapper(vec).call("label", name="y") == ["y0", "y1"]


def test_call_splits_a_method_result_and_passes_arguments() -> None:
    vec = ScheduledDrift(2)
    vec.reset(seed=0)
    expected = (vec.x * 2).tolist()
    assert vec.call("scaled_x", 2.0) == expected
    assert vec.call("autoreset") == [True, True]


def test_int_seed_seeds_the_one_generator_with_default_rng() -> None:
    vec = DriftVecEnv(3)
    vec.reset(seed=7)
    assert vec.x.tolist() == np.random.default_rng(7).normal(size=3).tolist()
    assert vec._rng_seed == 7


def test_seed_list_is_combined_into_one_seed_sequence() -> None:
    vec = DriftVecEnv(2)
    vec.reset(seed=[3, 4])
    expected = np.random.default_rng(np.random.SeedSequence([3, 4])).normal(size=2)
    assert vec.x.tolist() == expected.tolist()
    assert vec._rng_seed == -1


def test_all_none_seed_list_continues_the_stream_like_no_seed() -> None:
    a, b = DriftVecEnv(2), DriftVecEnv(2)
    a.reset(seed=1)
    b.reset(seed=1)
    a.reset(seed=[None, None])
    b.reset()
    assert a.x.tolist() == b.x.tolist()


def test_generator_seed_raises_type_error_and_rng_is_settable() -> None:
    vec = DriftVecEnv(2)
    with pytest.raises(TypeError, match="Generator"):
        vec.reset(seed=np.random.default_rng(0))
    vec.rng = np.random.default_rng(5)
    assert vec._rng_seed == -1
    with pytest.raises(TypeError):
        vec.rng = 5  # type: ignore[assignment]


def test_time_limit_truncates_with_elapsed_steps_and_restarts_after_autoreset() -> None:
    vec = DriftVecEnv(2, max_episode_steps=3)
    vec.reset(seed=0)
    for step in (1, 2):
        result = vec.step([1, 0])
        assert [info["elapsed_steps"] for info in result.infos] == [step, step]
    result = vec.step([1, 0])
    assert result.truncated.tolist() == [True, True]
    assert result.infos[0]["elapsed_steps"] == 3
    assert result.infos[0]["final_info"] == {"elapsed_steps": 3}
    assert vec.step([1, 0]).infos[0] == {"elapsed_steps": 1}


def test_max_episode_steps_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"max_episode_steps must be >= 1, got 0\."):
        DriftVecEnv(2, max_episode_steps=0)
    with pytest.raises(ValueError, match=r"num_envs must be >= 1, got 0\."):
        DriftVecEnv(0)
    with pytest.raises(ValueError, match=r"^num_envs must be at most \d+ \(the longest array "):
        DriftVecEnv(2**70)


class Spaced(NativeVecEnv):
    """Built with the spaces it is given (it is never stepped)."""

    def __init__(self, observation_space: Any, action_space: Any) -> None:
        super().__init__(2, observation_space, action_space)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        pass

    def _observe(self) -> Any:
        return np.zeros((2, 1), np.float32)

    def _step(self, actions: Any) -> Any:
        return np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), {}


@pytest.mark.parametrize("which", ["observation", "action"])
def test_spaces_that_are_not_sekai_spaces_are_refused_naming_the_class(which: str) -> None:
    spaces = {"observation": sekai.Box(0.0, 1.0, shape=(1,)), "action": sekai.Discrete(2)}
    spaces[which] = "box"  # type: ignore[assignment]
    with pytest.raises(TypeError, match=r"^Spaced needs sekai spaces, got str\.$"):
        Spaced(spaces["observation"], spaces["action"])


@pytest.mark.parametrize("name", ["observation_space", "action_space"])
def test_assigning_a_space_that_is_no_sekai_space_is_refused_and_keeps_the_space(
    name: str,
) -> None:
    vec = DriftVecEnv(2)
    before = getattr(vec, name)
    text = f"DriftVecEnv: {name} must be a sekai.Space, got int."
    with pytest.raises(TypeError, match=f"^{re.escape(text)}$"):
        setattr(vec, name, 5)
    assert getattr(vec, name) is before


class Recorder(NativeVecEnv):
    """Records the actions and options it receives; returns rich info arrays."""

    def __init__(self, num_envs: int, autoreset: bool = True) -> None:
        super().__init__(
            num_envs, sekai.Box(-1.0, 1.0, shape=(2,)), sekai.Discrete(3), autoreset=autoreset
        )
        self.seen: list[Any] = []
        self.options: list[Any] = []
        self.t = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.options.append((indices.tolist(), list(options)))
        self.t[indices] = 0

    def _observe(self) -> Any:
        return np.zeros((self.num_envs, 2))  # float64: the base casts to float32

    def _step(self, actions: Any) -> Any:
        self.seen.append(np.array(actions))
        self.t += 1
        n = self.num_envs
        infos = {
            "count": self.t.copy(),
            "rows": np.arange(2 * n).reshape(n, 2),
            "when": np.array(["2024-01-01"] * n, dtype="datetime64[D]"),
            "label": "same",
        }
        return np.ones(n), self.t >= np.arange(1, n + 1), np.zeros(n, bool), infos


def test_observations_take_the_space_dtype() -> None:
    vec = Recorder(2)
    assert vec.reset(seed=0).observations.dtype == np.float32
    assert vec.step([0, 0]).observations.dtype == np.float32


class Misfit(NativeVecEnv):
    """``_observe()`` returns ``batch`` (for an integer Box, or a Dict holding one)."""

    def __init__(self, batch: Any, in_dict: bool = False) -> None:
        space: sekai.Space[Any] = sekai.Box(0, 10, (2,), dtype=np.int64)
        super().__init__(2, sekai.Dict(k=space) if in_dict else space, sekai.Discrete(2))
        self.batch = {"k": batch} if in_dict else batch

    def _reset_envs(self, indices: Any, options: Any) -> None:
        pass

    def _observe(self) -> Any:
        return self.batch

    def _step(self, actions: Any) -> Any:
        return np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), {}


@pytest.mark.parametrize("in_dict", [False, True], ids=["box", "dict"])
@pytest.mark.parametrize(
    ("batch", "reason"),
    [
        (np.full((2, 2), 1.7), r"dtype float64 \(kind 'f'\), the space's dtype kind is 'i'"),
        (np.ones(2, np.int64), r"shape \(2,\), a batch's shape \(num_envs, \*shape\) is \(2, 2\)"),
        (np.ones((2, 5), np.int64), r"shape \(2, 5\), a batch's shape"),
    ],
    ids=["floats", "no-env-axis", "wide"],
)
def test_observation_batches_that_do_not_fit_the_space_are_refused(
    batch: Any, reason: str, in_dict: bool
) -> None:
    vec = Misfit(batch, in_dict)
    with pytest.raises(ValueError, match=r"from Misfit\._observe\(\).*" + reason):
        vec.reset(seed=0)
    vec.batch = {"k": np.ones((2, 2), np.int32)} if in_dict else [[1, 2], [3, 4]]  # they fit
    observations = vec.reset(seed=0).observations
    assert (observations["k"] if in_dict else observations).dtype == np.int64
    vec.batch = {"k": batch} if in_dict else batch
    with pytest.raises(ValueError, match=reason):
        vec.step([0, 0])


def test_info_arrays_are_split_per_sub_env() -> None:
    vec = Recorder(3)
    vec.reset(seed=0)
    info = vec.step([0, 0, 0]).infos[2]
    assert info["count"] == 1 and type(info["count"]) is int
    assert info["rows"].tolist() == [4, 5]
    assert isinstance(info["when"], np.datetime64)
    assert info["label"] == "same"


def test_options_reach_reset_envs_one_per_index() -> None:
    vec = Recorder(2)
    vec.reset(options=[{"a": 1}, None])
    assert vec.options[-1] == ([0, 1], [{"a": 1}, None])
    vec.step([0, 0])  # sub-env 0 finishes: autoreset passes no options
    assert vec.options[-1] == ([0], [None])


def test_frozen_sub_env_is_passed_its_last_action_again() -> None:
    vec = Recorder(3, autoreset=False)
    vec.reset(seed=0)
    vec.step(np.array([2, 1, 1]))  # sub-env 0 finishes with action 2
    assert vec.frozen.tolist() == [True, False, False]
    result = vec.step(np.array([0, 0, 0]))
    assert vec.seen[-1].tolist() == [2, 0, 0]
    assert result.infos[0] == {} and result.rewards[0] == 0.0
    assert result.terminated.tolist() == [True, True, False]
    vec.step(np.array([9, 9, 2]))  # frozen actions are not checked
    assert vec.seen[-1].tolist() == [2, 0, 2]


def test_a_frozen_sub_env_keeps_its_last_action_when_the_caller_reuses_its_array() -> None:
    vec = Recorder(3, autoreset=False)
    vec.reset(seed=0)
    actions = np.array([2, 1, 1])
    vec.step(actions)  # sub-env 0 finishes with action 2
    actions[:] = 0  # the caller fills its buffer with the next actions
    vec.step(actions)
    assert vec.seen[-1].tolist() == [2, 0, 0]


class Careless(NativeVecEnv):
    """Ignores ``self.frozen``: every step advances every sub-env's counter ``t`` (observation
    ``[t]``, reward ``t``, info ``{"t": t}``); sub-env 0 terminates at t = 1, sub-env 1 is
    truncated at t = 2, sub-env 2 runs on."""

    def __init__(self) -> None:
        super().__init__(3, sekai.Box(0.0, 100.0, shape=(1,)), sekai.Discrete(2), autoreset=False)
        self.t = np.zeros(3, dtype=np.int64)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.t[indices] = 0

    def _observe(self) -> Any:
        return self.t[:, None].astype(np.float32)

    def _step(self, actions: Any) -> Any:
        self.t += 1
        terminated = np.array([self.t[0] >= 1, False, False])
        truncated = np.array([False, self.t[1] >= 2, False])
        return self.t.astype(float), terminated, truncated, {"t": self.t.copy()}


def test_frozen_sub_envs_repeat_their_final_step_whatever_step_returns_for_them() -> None:
    # Without autoreset the base class replaces a frozen sub-env's row of every part of the
    # result: its final observation and flags, reward 0 and info {}.
    vec = Careless()
    vec.reset(seed=0)
    results = [vec.step([0, 0, 0]) for _ in range(4)]
    assert [r.observations[:, 0].tolist() for r in results] == [
        [1.0, 1.0, 1.0],
        [1.0, 2.0, 2.0],
        [1.0, 2.0, 3.0],
        [1.0, 2.0, 4.0],
    ]
    assert [r.rewards.tolist() for r in results] == [
        [1.0, 1.0, 1.0],
        [0.0, 2.0, 2.0],
        [0.0, 0.0, 3.0],
        [0.0, 0.0, 4.0],
    ]
    last = results[-1]
    assert (last.terminated.tolist(), last.truncated.tolist()) == (
        [True, False, False],
        [False, True, False],
    )
    assert last.infos == [{}, {}, {"t": 4}]
    assert vec.frozen.tolist() == [True, True, False]


class CarelessPair(NativeVecEnv):
    """Careless with a Tuple observation ``([t], t)``, whose arrays ``_observe`` may hand out
    read-only; sub-env i terminates at t = i + 1."""

    def __init__(self, read_only: bool) -> None:
        space = sekai.Tuple((sekai.Box(0.0, 100.0, shape=(1,)), sekai.Discrete(100)))
        super().__init__(3, space, sekai.Discrete(2), autoreset=False)
        self.t = np.zeros(3, dtype=np.int64)
        self.read_only = read_only

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.t[indices] = 0

    def _observe(self) -> Any:
        parts = (self.t[:, None].astype(np.float32), self.t.copy())
        for part in parts:
            part.flags.writeable = not self.read_only
        return parts

    def _step(self, actions: Any) -> Any:
        self.t += 1
        return self.t.astype(float), self.t >= np.arange(1, 4), np.zeros(3, dtype=bool), {}


@pytest.mark.parametrize("read_only", [False, True], ids=["writeable", "read-only"])
def test_frozen_sub_envs_repeat_their_final_tuple_observation(read_only: bool) -> None:
    vec = CarelessPair(read_only)
    vec.reset(seed=0)
    results = [vec.step([0, 0, 0]) for _ in range(4)]
    assert [r.observations[1].tolist() for r in results] == [
        [1, 1, 1],
        [1, 2, 2],
        [1, 2, 3],
        [1, 2, 3],
    ]
    assert results[-1].observations[0][:, 0].tolist() == [1.0, 2.0, 3.0]
    assert results[-1].rewards.tolist() == [0.0, 0.0, 0.0]
    assert vec.frozen.tolist() == [True, True, True]


def test_frozen_sub_envs_report_empty_infos_through_an_observation_wrapper() -> None:
    # The wrapper reads done sub-envs' infos one at a time, not the whole list.
    vec = sekai.VecTransformObservation(
        DriftVecEnv(2, autoreset=False, max_episode_steps=1), lambda o: -o
    )
    vec.reset(seed=0)
    assert vec.step(np.array([1, 1])).infos == [{"elapsed_steps": 1}] * 2  # both freeze
    assert vec.step(np.array([1, 1])).infos == [{}, {}]


def test_native_infos_are_distinct_real_dicts() -> None:
    vec = DriftVecEnv(5)
    vec.reset(seed=0)
    a, b = vec.step(np.zeros(5, int)), vec.step(np.zeros(5, int))
    infos = a.infos + b.infos
    assert all(type(info) is dict for info in infos)
    assert len({id(info) for info in infos}) == 10


def test_get_attr_of_a_missing_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="nope"):
        DriftVecEnv(2).get_attr("nope")


def test_set_attr_of_one_generator_sets_the_native_envs_own_generator() -> None:
    # A native env's one generator serves all its sub-envs (unlike sub-envs of other backends).
    vec = DriftVecEnv(3)
    generator = np.random.default_rng(7)
    vec.set_attr("rng", generator)
    assert vec.rng is generator


@pytest.mark.parametrize("kind", [list, tuple])
def test_set_attr_of_one_generator_per_sub_env_says_a_native_env_has_one(kind: type) -> None:
    # seeding.md's recipe for the per-env backends (a list of rng.spawn(n)) names the cause here
    vec = DriftVecEnv(3)
    before = vec.rng
    generators = kind(np.random.default_rng(0).spawn(3))
    with pytest.raises(
        TypeError,
        match=rf"^DriftVecEnv.set_attr\('rng', values\) got a {kind.__name__} of 3: a native "
        r"vector env draws from one Generator for all its sub-envs\. Pass one Generator",
    ):
        vec.set_attr("rng", generators)
    assert vec.rng is before


def test_set_attr_stores_a_list_of_num_envs_as_one_array() -> None:
    vec = DriftVecEnv(3, max_episode_steps=5)
    vec.set_attr("x", [1, 2, 3])
    assert isinstance(vec.x, np.ndarray) and vec.x.dtype == np.float64
    assert vec.get_attr("x") == [1.0, 2.0, 3.0]
    vec.set_attr("max_episode_steps", 9)
    assert vec.max_episode_steps == 9
    vec.set_attr("x", (1, 2, 3))
    assert vec.x == (1, 2, 3)


def test_without_a_time_limit_max_episode_steps_is_missing_as_on_sync_sub_envs() -> None:
    vec = DriftVecEnv(2)
    with pytest.raises(AttributeError, match="'DriftVecEnv' object has no attribute 'max_"):
        vec.get_attr("max_episode_steps")
    with pytest.raises(AttributeError, match="only changes existing attributes"):
        vec.set_attr("max_episode_steps", 1)
    result = vec.reset(seed=0)
    assert result.observations.shape[0] == 2
    assert not any(vec.step(np.zeros(2)).truncated.any() for _ in range(5))  # none was added


def test_max_episode_steps_set_on_a_limited_native_env_is_checked() -> None:
    vec = DriftVecEnv(2, max_episode_steps=5)
    with pytest.raises(ValueError, match=r"^max_episode_steps must be >= 1, got 0\.$"):
        vec.set_attr("max_episode_steps", 0)
    with pytest.raises(TypeError, match=r"got None: a time limit can be changed but not removed"):
        vec.set_attr("max_episode_steps", None)
    assert vec.get_attr("max_episode_steps") == [5, 5]
    vec.set_attr("max_episode_steps", 1)
    vec.reset(seed=0)
    assert vec.step(np.zeros(2)).truncated.all()


@pytest.mark.parametrize("values", [[], [1.0], [1.0, 2.0], [1.0, 2.0, 3.0, 4.0]], ids=len)
def test_set_attr_stores_a_list_of_another_length_than_num_envs_as_it_is(
    values: list[float],
) -> None:
    vec = DriftVecEnv(3)
    vec.set_attr("x", values)
    assert vec.x is values  # one value for all, as on the other backends
    assert vec.get_attr("x") == [values] * 3


def test_set_attr_with_ragged_or_non_numeric_rows_names_the_problem_and_keeps_the_value() -> None:
    vec = DriftVecEnv(3)
    before = vec.get_attr("x")
    ragged = r"3 values must have one shape .* got \[\(\), \(2,\), \(\)\]"
    with pytest.raises(ValueError, match=ragged):
        vec.set_attr("x", [1.0, [2.0, 3.0], 4.0])
    with pytest.raises(TypeError, match=r"x holds numbers, got values of dtype <U32 \(\[1\.0, 'a'"):
        vec.set_attr("x", [1.0, "a", 2.0])
    with pytest.raises(TypeError, match="x holds numbers, got values of dtype object"):
        vec.set_attr("x", [None, None, None])
    assert vec.get_attr("x") == before
    vec.set_attr("x", [True, False, True])  # bools are numbers to NumPy's arithmetic
    assert vec.get_attr("x") == [1.0, 0.0, 1.0]


def test_set_attr_of_non_numbers_on_a_number_that_is_no_array_names_the_problem() -> None:
    vec = DriftVecEnv(3)
    vec.scale = 1.0  # a plain float the env computes with
    text = "DriftVecEnv.set_attr('scale', values): scale holds numbers, got values of dtype <U1 "
    with pytest.raises(TypeError, match="^" + re.escape(text + "(['a', 'b', 'c']).") + "$"):
        vec.set_attr("scale", ["a", "b", "c"])
    assert vec.scale == 1.0
    vec.set_attr("scale", [1.0, 2.0, 3.0])
    assert vec.get_attr("scale") == [1.0, 2.0, 3.0]


class Waypoints(DriftVecEnv):
    """``waypoints`` is a property whose setter takes the values as given (one that checks
    them itself, which set_attr leaves ragged values to)."""

    @property
    def waypoints(self) -> Any:
        return self._waypoints

    @waypoints.setter
    def waypoints(self, values: Any) -> None:
        self._waypoints = values


def test_set_attr_of_ragged_values_gives_a_property_with_a_setter_the_list_itself() -> None:
    vec = Waypoints(2)
    vec.waypoints = np.zeros(2)
    ragged = [[0.5], [0.1, 0.9]]
    vec.set_attr("waypoints", ragged)
    assert vec.waypoints is ragged


class Levels(DriftVecEnv):
    """``level`` is a number per sub-env behind a setter that parses what it is given."""

    @property
    def level(self) -> Any:
        return self._level

    @level.setter
    def level(self, values: Any) -> None:
        self._level = np.asarray(values, dtype=np.float64)


def test_set_attr_of_non_numbers_leaves_a_property_with_a_setter_to_check_them() -> None:
    vec = Levels(3)
    vec.level = np.zeros(3)
    vec.set_attr("level", ["1.5", "2", "3"])
    assert vec.get_attr("level") == [1.5, 2.0, 3.0]


def test_set_attr_names_nested_ragged_values_too() -> None:
    vec = DriftVecEnv(2)
    with pytest.raises(ValueError, match=r"got \['a ragged list', \(2,\)\]\.$"):
        vec.set_attr("x", [[1.0, [2.0, 3.0]], [1.0, 2.0]])


def test_set_attr_keeps_an_attribute_of_one_object_per_sub_env_one_per_sub_env() -> None:
    vec = DriftVecEnv(2)
    vec.waypoints = np.empty(2, dtype=object)
    vec.waypoints[:] = [[0.5], [0.1, 0.9]]
    vec.set_attr("waypoints", vec.get_attr("waypoints"))  # what get_attr gives goes back
    assert vec.get_attr("waypoints") == [[0.5], [0.1, 0.9]]
    vec.set_attr("waypoints", [[1, 2], [3, 4]])  # same-length lists stay one list a sub-env
    assert vec.waypoints.shape == (2,) and vec.get_attr("waypoints") == [[1, 2], [3, 4]]


def test_get_attr_of_a_name_no_sub_env_has_raises_attribute_error_like_sync_vec_env() -> None:
    from sekai.vector import SyncVecEnv

    for vec in (DriftVecEnv(2), SyncVecEnv([Drift, Drift])):
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            vec.get_attr("nope")


def test_set_attr_of_a_missing_name_raises_attribute_error() -> None:
    vec = DriftVecEnv(2)
    with pytest.raises(AttributeError, match="only changes existing attributes"):
        vec.set_attr("new_name", 1)
    assert not hasattr(vec, "new_name")


@pytest.mark.parametrize("name", ["observation_space", "action_space"])
@pytest.mark.parametrize(
    "value",
    [5, None, [sekai.Discrete(3)], [sekai.Discrete(3)] * 3],
    ids=["int", "none", "list-of-1", "list-of-3"],  # a list of another length is one value
)
def test_set_attr_of_a_space_refuses_what_is_not_a_space_as_sync_sub_envs_do(
    name: str, value: Any
) -> None:
    vec = DriftVecEnv(2)
    before = getattr(vec, name)
    message = f"DriftVecEnv: {name} must be a sekai.Space, got {type(value).__name__}."
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        vec.set_attr(name, value)
    assert getattr(vec, name) is before
    assert vec.get_attr(name) == [before, before]
    vec.set_attr(name, before)  # a Space is taken


@pytest.mark.parametrize("mode", ["native", "sync"])
def test_set_attr_of_a_space_changes_the_sub_envs_attribute_not_the_checked_space(
    mode: str,
) -> None:
    from sekai.vector import SyncVecEnv

    vec = DriftVecEnv(2) if mode == "native" else SyncVecEnv([Drift, Drift])
    vec.reset(seed=0)
    built_action, built_obs = vec.action_space, vec.observation_space
    vec.set_attr("action_space", sekai.Discrete(5))
    vec.set_attr("observation_space", [sekai.Box(-1.0, 1.0, (1,)), sekai.Box(-2.0, 2.0, (1,))])
    assert vec.get_attr("action_space") == [sekai.Discrete(5)] * 2
    assert vec.call("action_space") == [sekai.Discrete(5)] * 2  # call reads what get_attr does
    assert vec.get_attr("observation_space") == [
        sekai.Box(-1.0, 1.0, (1,)),
        sekai.Box(-2.0, 2.0, (1,)),
    ]
    assert vec.call("observation_space") == vec.get_attr("observation_space")
    got = vec.get_attr("action_space")
    got[0] = sekai.Discrete(9)  # the caller's own list: the sub-envs' spaces stay
    assert vec.get_attr("action_space") == vec.call("action_space") == [sekai.Discrete(5)] * 2
    assert vec.action_space is built_action and vec.observation_space is built_obs
    assert vec.batch_action_space == sekai.MultiDiscrete([2, 2])
    message = "Action 4 is not valid for space Discrete(2) (sub-env 0)."
    with pytest.raises(sekai.InvalidAction, match=f"^{re.escape(message)}$"):
        vec.step(np.array([4, 4]))
    assert vec.step(np.array([1, 0])).observations.shape == (2, 1)  # the env as it was


def test_set_attr_of_spaces_one_per_sub_env_checks_every_one_before_keeping_any() -> None:
    vec = DriftVecEnv(2)
    with pytest.raises(TypeError, match=r"action_space must be a sekai\.Space, got int"):
        vec.set_attr("action_space", [sekai.Discrete(5), 5])
    assert vec.get_attr("action_space") == [sekai.Discrete(2)] * 2


def test_metadata_is_the_class_attribute_and_unwrapped_is_self() -> None:
    class WithMeta(DriftVecEnv):
        metadata = {"render_fps": 4}  # noqa: RUF012

    vec = WithMeta(2)
    assert vec.metadata == {"render_fps": 4}
    assert vec.unwrapped is vec


def test_shared_rejects_objects_it_cannot_mark() -> None:
    with pytest.raises(TypeError, match="methods and properties"):
        shared(3)


def test_native_step_builds_no_info_dicts_until_infos_are_read() -> None:
    from sekai.vector.infos import LazyInfos
    from sekai.vector.result import _raw_infos

    vec = sekai.VecRecordEpisodeStatistics(DriftVecEnv(64, max_episode_steps=1000))
    vec.reset(seed=0)
    result = vec.step(np.zeros(64, int))
    raw = _raw_infos(result)
    assert isinstance(raw, LazyInfos) and raw._built is None and not raw._given
    assert len(result.infos) == 64  # reading builds them, as real dicts
    assert _raw_infos(result) is result.infos


class ScalarRewards(Recorder):
    """Returns one reward for the whole batch: a bug in the subclass, reported by the base."""

    def _step(self, actions: Any) -> Any:
        _, terminated, truncated, infos = super()._step(actions)
        return 1.0, terminated, truncated, infos


def test_step_results_of_the_wrong_shape_are_refused_naming_the_class() -> None:
    vec = ScalarRewards(3)
    vec.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"ScalarRewards\._step\(\) returned rewards of shape \(\), .*\(3,\)"
    ):
        vec.step([0, 0, 0])


class NoInfos(Recorder):
    """Returns None instead of a dict of info arrays (a bug in the subclass): from ``_step``,
    and from ``_reset_infos`` while ``broken_reset`` is set."""

    broken_reset = True

    def _step(self, actions: Any) -> Any:
        rewards, terminated, truncated, _ = super()._step(actions)
        return rewards, terminated, truncated, None

    def _reset_infos(self, indices: Any) -> Any:
        return None if self.broken_reset else {}


def test_infos_that_are_not_a_mapping_are_refused_naming_the_class_and_hook() -> None:
    vec = NoInfos(2)
    with pytest.raises(TypeError, match=r"NoInfos\._reset_infos\(\) returned infos of type "):
        vec.reset(seed=0)
    vec.broken_reset = False
    vec.reset(seed=0)
    with pytest.raises(TypeError, match=r"NoInfos\._step\(\) returned infos of type NoneType"):
        vec.step([0, 0])


class Picky(Recorder):
    """Accepts only options with a "level" key of at most 5."""

    def _check_reset_options(self, index: int, options: Any) -> None:
        if options is not None and options.get("level", 0) > 5:
            raise ValueError(f"level too high for sub-env {index}")


def test_invalid_options_of_some_sub_envs_reset_the_others_then_raise_the_first() -> None:
    vec = Picky(4)
    vec.reset(seed=0)
    vec.step([0, 0, 0, 0])
    with pytest.raises(ValueError, match="sub-env 1"):
        vec.reset(options=[None, {"level": 9}, {"level": 1}, {"level": 7}])
    assert vec.options[-1] == ([0, 2], [None, {"level": 1}])  # the valid ones, in order
    with pytest.raises(sekai.ResetRequired):
        vec.step([0, 0, 0, 0])
    vec.reset(options={"level": 2})
    assert vec.options[-1] == ([0, 1, 2, 3], [{"level": 2}] * 4)


@pytest.mark.parametrize(
    "options", [{"level": 9}, [{"level": 6}, {"level": 7}, {"level": 8}]], ids=["dict", "list"]
)
def test_options_refused_for_every_sub_env_seed_nothing(options: Any) -> None:
    vec = Picky(3)
    vec.reset(seed=0)
    generator = vec.rng
    state = generator.bit_generator.state
    theirs = np.random.default_rng(1)  # a seed entry that would be drawn from
    their_state = theirs.bit_generator.state
    with pytest.raises(ValueError, match="level too high for sub-env 0"):
        vec.reset(seed=[theirs, 5, None], options=options)
    assert vec.rng is generator and generator.bit_generator.state == state  # not reseeded
    assert theirs.bit_generator.state == their_state  # not drawn from
    assert vec._recorded_seeds == [0, 0, 0] and vec._rng_seed == 0  # no seed recorded
    assert vec.options[-1] == ([0, 1, 2], [None] * 3)  # no sub-env was reset


@pytest.mark.parametrize(
    "seed",
    ["abc", -1, 1.5, np.random.default_rng(0), [1, 2], [0, "x", None], [0, -3, None]],
    ids=["str", "negative", "float", "generator", "short-list", "str-entry", "negative-entry"],
)
def test_a_bad_seed_is_refused_before_options_every_sub_env_refuses(seed: Any) -> None:
    # The seed's error, as the other backends raise it (they check the seed before any
    # sub-env sees its options), not the options' error.
    with pytest.raises((TypeError, ValueError)) as expected:
        vector_seeds(seed, 3)
    vec = Picky(3)
    vec.reset(seed=0)
    state = vec.rng.bit_generator.state
    with pytest.raises(expected.type, match=re.escape(str(expected.value))):
        vec.reset(seed=seed, options={"level": 9})
    assert vec.rng.bit_generator.state == state and vec._rng_seed == 0
    assert vec.options[-1] == ([0, 1, 2], [None] * 3)  # no sub-env was reset


def test_options_refused_for_some_sub_envs_seed_the_reset_of_the_others() -> None:
    vec = Picky(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="level too high for sub-env 1"):
        vec.reset(seed=5, options=[None, {"level": 9}, {"level": 1}])
    assert vec._rng_seed == 5 and vec._recorded_seeds == [5, 5, 5]
    assert vec.options[-1] == ([0, 2], [None, {"level": 1}])


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("backend", ["native", "sync", "async", "vec-wrapper"])
def test_a_stepped_vector_env_pickles_and_continues_like_the_original(
    backend: str, protocol: int
) -> None:
    from sekai.vector import AsyncVecEnv, SyncVecEnv, VecNormalizeObservation

    fns = [Drift for _ in range(3)]
    vec = {
        "native": lambda: DriftVecEnv(3),
        "sync": lambda: SyncVecEnv(fns),
        "async": lambda: AsyncVecEnv(fns),
        "vec-wrapper": lambda: VecNormalizeObservation(SyncVecEnv(fns)),
    }[backend]()
    vec.reset(seed=0)
    actions = np.array([1, 0, 1])
    vec.step(actions)  # builds the cached observation caster, a closure
    copy = pickle.loads(pickle.dumps(vec, protocol=protocol))
    ours, theirs = vec.step(actions), copy.step(actions)
    assert np.array_equal(ours.observations, theirs.observations)
    assert np.array_equal(ours.rewards, theirs.rewards)


class Growing(NativeVecEnv):
    """A Sequence observation: t + 1 rows of value t at step t; ends after ``options["length"]``."""

    def __init__(self, num_envs: int) -> None:
        space = sekai.spaces.Sequence(sekai.Box(0.0, 10.0, (1,)), stack=True)
        super().__init__(num_envs, space, sekai.Discrete(2), autoreset=False)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.length = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.length[indices] = [option["length"] for option in options]
        self.t[indices] = 0

    def _observe(self) -> Any:
        return tuple(np.full((t + 1, 1), float(t), np.float32) for t in self.t.tolist())

    def _step(self, actions: Any) -> Any:
        self.t = np.where(self.frozen, self.t, self.t + 1)
        n = self.num_envs
        return np.ones(n), self.t >= self.length, np.zeros(n, bool), {}


def test_frozen_sub_envs_repeat_their_own_final_sequence_observation() -> None:
    vec = Growing(2)
    vec.reset(options=[{"length": 1}, {"length": 3}])  # sub-env 0 freezes first, then 1
    for _ in range(4):
        result = vec.step([0, 0])
    assert result.dones.tolist() == [True, True]
    assert [obs[:, 0].tolist() for obs in result.observations] == [[1.0] * 2, [3.0] * 4]


def test_a_time_limit_takes_one_value_per_sub_env_when_they_agree_and_is_never_added() -> None:
    vec = DriftVecEnv(2, max_episode_steps=5)
    vec.set_attr("max_episode_steps", [3, 3])
    assert vec.get_attr("max_episode_steps") == [3, 3]
    with pytest.raises(ValueError, match=r"one limit for every sub-env .* got \[3, 4\]"):
        vec.set_attr("max_episode_steps", [3, 4])
    with pytest.raises(TypeError, match=r"got None: a time limit can be changed but not removed"):
        vec.set_attr("max_episode_steps", [None, None])
    with pytest.raises(ValueError, match=r"one value per sub-env \(2\), got 3\."):
        vec.set_attr("max_episode_steps", [3, 3, 3])  # not one per sub-env: not one limit
    with pytest.raises(
        ValueError, match=r"^DriftVecEnv\.max_episode_steps: a list must hold one value per "
        r"sub-env \(2\), got 3\. Pass one int \(not a list\) to set it for every sub-env\.$"
    ):  # fmt: skip
        vec.max_episode_steps = [3, 3, 3]  # type: ignore[assignment]
    # "an int >= 1", not "or None": None is refused when changing a limit
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int >= 1, got ndarray"):
        vec.max_episode_steps = np.array([3, 3])  # type: ignore[assignment]  # one value: not an int
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int >= 1, got str\.$"):
        vec.set_attr("max_episode_steps", [3, "3"])  # each item checked, as on sync
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int >= 1, got float\.$"):
        vec.set_attr("max_episode_steps", 2.0)
    assert vec.get_attr("max_episode_steps") == [3, 3]
    unlimited = DriftVecEnv(2)
    unlimited.max_episode_steps = None  # a constructor may assign None: still no limit
    with pytest.raises(AttributeError, match="set_attr cannot add one"):
        unlimited.max_episode_steps = 3  # as set_attr: added on one backend only otherwise
    assert not hasattr(unlimited, "max_episode_steps")


class Refuser(NativeVecEnv):
    """Counts each sub-env's steps; action 2 fails its sub-env (``_step_errors``); an episode
    ends after two steps."""

    def __init__(self, num_envs: int, autoreset: bool = True) -> None:
        super().__init__(
            num_envs,
            sekai.Box(0.0, 9.0, shape=(1,)),
            sekai.Discrete(3),
            autoreset=autoreset,
            max_episode_steps=5,
        )
        self.t = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.t[indices] = 0

    def _observe(self) -> Any:
        return self.t[:, None].astype(np.float32)

    def _step_errors(self, actions: Any) -> dict[int, BaseException]:
        bad = np.flatnonzero(np.asarray(actions) == 2).tolist()
        return {i: ValueError(f"sub-env {i} refuses 2") for i in bad if not self.frozen[i]}

    def _step(self, actions: Any) -> Any:
        self.t += ~self.frozen
        n = self.num_envs
        return np.ones(n), self.t >= 2, np.zeros(n, bool), {}


def test_a_failing_sub_env_is_held_back_while_the_others_step_then_the_lowest_error_raises() -> (
    None
):
    vec = Refuser(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"^sub-env 0 refuses 2$"):
        vec.step([2, 0, 2])
    assert vec.t.tolist() == [0, 1, 0]
    result = vec.step([0, 0, 0])
    assert [info["elapsed_steps"] for info in result.infos] == [1, 2, 1]
    assert result.terminated.tolist() == [False, True, False]


def test_sub_envs_that_end_in_a_failed_step_are_autoreset() -> None:
    vec = Refuser(3)
    vec.reset(seed=0)
    vec.step([0, 0, 0])
    with pytest.raises(ValueError, match=r"^sub-env 1 refuses 2$"):
        vec.step([0, 2, 0])
    assert vec.t.tolist() == [0, 1, 0]  # sub-envs 0 and 2 ended and were reset
    assert [info["elapsed_steps"] for info in vec.step([0, 0, 0]).infos] == [1, 2, 1]


def test_sub_envs_that_end_in_a_failed_step_freeze_without_autoreset() -> None:
    vec = Refuser(3, autoreset=False)
    vec.reset(seed=0)
    vec.step([0, 0, 0])
    with pytest.raises(ValueError, match=r"^sub-env 1 refuses 2$"):
        vec.step([0, 2, 0])
    assert vec.frozen.tolist() == [True, False, True]
    result = vec.step([2, 0, 2])  # frozen sub-envs are not stepped: their action is ignored
    assert vec.t.tolist() == [2, 2, 2]
    assert result.terminated.tolist() == [True, True, True]
    assert result.rewards.tolist() == [0.0, 1.0, 0.0]
    assert result.observations[:, 0].tolist() == [2.0, 2.0, 2.0]
