"""Rules every backend shares (core.md §14), checked on sync, async and native alike."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, SyncVecEnv, VecEnv
from sekai.vector._conformance import GOAL, CounterEnv, CounterVecEnv

Factory = Callable[..., VecEnv]

BACKENDS: dict[str, Factory] = {
    "sync": lambda n, autoreset=True: SyncVecEnv([CounterEnv] * n, autoreset=autoreset),
    "async": lambda n, autoreset=True: AsyncVecEnv([CounterEnv] * n, autoreset=autoreset),
    "native": lambda n, autoreset=True: CounterVecEnv(n, autoreset=autoreset),
}


@pytest.fixture(params=list(BACKENDS))
def make(request: pytest.FixtureRequest) -> Factory:
    return BACKENDS[request.param]


def _steps(vec: VecEnv) -> list[int]:
    return [int(s) for s in vec.get_attr("steps")]


def test_repr_len_and_spaces(make: Factory) -> None:
    with make(3) as vec:
        assert repr(vec) == f"{type(vec).__name__}(num_envs=3)"
        assert len(vec) == vec.num_envs == 3
        assert vec.observation_space == sekai.Box(0.0, 1000.0, shape=(3,))
        assert vec.action_space == sekai.Discrete(3)
        assert vec.batch_action_space == sekai.MultiDiscrete([3, 3, 3])
        assert vec.batch_observation_space.shape == (3, 3)
        assert vec.batch_action_space is vec.batch_action_space  # one space, one generator
        assert vec.unwrapped is vec
        assert vec.spec is None
        assert vec.autoreset is True


def test_step_before_reset_raises_reset_required_without_stepping(make: Factory) -> None:
    with make(2) as vec:
        with pytest.raises(sekai.ResetRequired):
            vec.step(np.array([1, 1]))
        assert _steps(vec) == [0, 0]


def test_a_step_after_a_reset_that_raised_says_the_reset_failed(make: Factory) -> None:
    with make(2) as vec:
        vec.reset(seed=0)
        vec.step(np.array([1, 1]))
        with pytest.raises(ValueError):
            vec.reset(options=[{}, {"start": "not a position"}])
        with pytest.raises(sekai.ResetRequired, match=r"^The last reset\(\) raised before"):
            vec.step(np.array([1, 1]))
        vec.reset(seed=0)
        vec.step(np.array([1, 1]))


def test_call_reads_an_attribute_but_refuses_arguments_for_it(make: Factory) -> None:
    with make(2) as vec:
        vec.reset(seed=0)
        assert [int(v) for v in vec.call("steps")] == [0, 0]
        with pytest.raises(TypeError, match=r"call\('steps', \.\.\.\) got arguments, but"):
            vec.call("steps", 1, k=2)


def test_a_reset_refused_for_its_options_draws_nothing_from_any_generator(
    make: Factory,
) -> None:
    with make(2) as vec:
        vec.reset(seed=0)
        g = np.random.default_rng(7)
        before = (
            g.bit_generator.state,
            vec.unwrapped.rng.bit_generator.state if hasattr(vec.unwrapped, "rng") else None,
        )
        with pytest.raises(TypeError, match=r"reset\(options=\.\.\.\) must be"):
            vec.reset(seed=[g, 1], options="bad")
        with pytest.raises(TypeError, match=r"reset\(options=\.\.\.\) must be"):
            vec.reset(seed=None, options="bad")
        after = (
            g.bit_generator.state,
            vec.unwrapped.rng.bit_generator.state if hasattr(vec.unwrapped, "rng") else None,
        )
        assert after == before


def test_closed_vec_env_raises_vec_env_closed(make: Factory) -> None:
    vec = make(2)
    vec.reset(seed=0)
    vec.close()
    assert vec.closed
    vec.close()  # a second close is a no-op
    with pytest.raises(sekai.VecEnvClosed, match=r"This VecEnv has been closed\."):
        vec.reset(seed=0)
    with pytest.raises(sekai.VecEnvClosed):
        vec.step(np.array([0, 0]))
    with pytest.raises(sekai.VecEnvClosed):
        vec.get_attr("steps")


def test_context_manager_closes(make: Factory) -> None:
    with make(2) as vec:
        pass
    assert vec.closed


def test_wrong_action_shape_raises_value_error_before_stepping(make: Factory) -> None:
    with make(3) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"\(3,\)"):
            vec.step(np.array([1, 1]))
        assert _steps(vec) == [0, 0, 0]


def test_invalid_action_value_raises_invalid_action_before_stepping(make: Factory) -> None:
    with make(3) as vec:
        vec.reset(seed=0)
        with pytest.raises(sekai.InvalidAction) as info:
            vec.step([1, 1, 3])
        assert info.value.index == 2
        assert _steps(vec) == [0, 0, 0]


def test_result_dtypes_and_distinct_infos(make: Factory) -> None:
    with make(3) as vec:
        reset = vec.reset(seed=0)
        first = vec.step([1, 2, 0])
        second = vec.step([1, 2, 0])
        assert reset.observations.dtype == np.float32
        assert first.rewards.dtype == np.float64 and first.rewards.shape == (3,)
        assert first.terminated.dtype == bool and first.truncated.dtype == bool
        assert type(first.infos) is list and all(type(i) is dict for i in first.infos)
        ids = {id(i) for i in [*reset.infos, *first.infos, *second.infos]}
        assert len(ids) == 9
        assert first.infos[1]["position"] == (3 * 0) % 10 + 2


def test_options_per_sub_env_set_the_start(make: Factory) -> None:
    with make(3) as vec:
        result = vec.reset(options=[{"start": 4}, None, {"start": 9}])
        assert result.observations[:, 0].tolist() == [4.0, 0.0, 9.0]
        assert [info["start"] for info in result.infos] == [4, 0, 9]
        result = vec.reset(options={"start": 2})
        assert result.observations[:, 0].tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(ValueError, match="2 entries for 3 sub-envs"):
            vec.reset(options=[{}, {}])


@pytest.mark.parametrize("backend", ["sync", "async"])  # native: errors of its option check
def test_an_error_from_a_list_entry_notes_its_sub_env(backend: str) -> None:
    with BACKENDS[backend](3) as vec:
        with pytest.raises(ValueError) as raised:
            vec.reset(options=[{"start": 1}, None, {"start": "not a position"}])
        assert raised.value.__notes__ == ["raised by sub-env 2, reset with reset(options=...)[2]"]
        with pytest.raises(ValueError) as raised:  # one dict for all: no entry to name
            vec.reset(options={"start": "not a position"})
        assert not hasattr(raised.value, "__notes__")


def test_gymnasiums_reset_mask_is_refused_before_any_sub_env_resets(make: Factory) -> None:
    with make(3) as vec:
        vec.reset(seed=0)
        vec.step(np.array([1, 1, 1]))
        with pytest.raises(ValueError, match=r"^reset\(options=\{'reset_mask': \.\.\.\}\) is "):
            vec.reset(options={"reset_mask": np.array([True, False, True])})
        assert _steps(vec) == [1, 1, 1]  # no sub-env was reset
        result = vec.reset(options=[{"start": 1}, None, None])  # one sub-env's own options
        assert result.observations[0, 0] == 1.0


def test_generator_seed_raises_type_error(make: Factory) -> None:
    with make(2) as vec, pytest.raises(TypeError, match="Generator"):
        vec.reset(seed=np.random.default_rng(0))


def test_finished_sub_env_freezes_without_autoreset(make: Factory) -> None:
    with make(2, autoreset=False) as vec:
        vec.reset(options=[{"start": GOAL - 2}, {"start": 0}])
        assert vec.frozen.tolist() == [False, False]
        last = vec.step([2, 1])
        assert last.terminated.tolist() == [True, False]
        assert last.infos[0]["position"] == GOAL
        assert vec.frozen.tolist() == [True, False]
        for _ in range(3):
            # the frozen sub-env's action is ignored, even an invalid one
            later = vec.step(np.array([7, 1]))
            assert later.rewards[0] == 0.0
            assert later.terminated.tolist() == [True, False]
            assert later.dones.tolist() == [True, False]
            assert later.infos[0] == {}
            assert np.array_equal(later.observations[0], last.observations[0])
        assert int(vec.get_attr("position")[0]) == GOAL
        assert _steps(vec)[0] == 1
        frozen = vec.frozen
        frozen[0] = False  # a copy
        assert vec.frozen.tolist() == [True, False]
        vec.reset(options={"start": 0})
        assert vec.frozen.tolist() == [False, False]
        assert vec.step([1, 1]).rewards.tolist() == [0.4, 0.4]


def test_frozen_info_dicts_are_new_every_step(make: Factory) -> None:
    with make(1, autoreset=False) as vec:
        vec.reset(options={"start": GOAL - 1})
        vec.step([1])
        a, b = vec.step([0]).infos[0], vec.step([0]).infos[0]
        assert a == b == {} and a is not b


def test_get_attr_reads_every_sub_env(make: Factory) -> None:
    with make(2) as vec:
        vec.reset(options=[{"start": 3}, {"start": 5}])
        assert [int(p) for p in vec.get_attr("position")] == [3, 5]
        with pytest.raises(AttributeError):
            vec.get_attr("no_such_attribute")
