"""Vector seeding and options rules (core.md §3, §14 rule 5), shared by every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, NativeVecEnv, SyncVecEnv, VecEnv
from sekai.vector._contract.seeding import native_seed, vector_options, vector_seeds


def test_int_seed_gives_spawned_child_seeds() -> None:
    assert vector_seeds(0, 3) == sekai.make_seed_sequence(0, 3)
    assert vector_seeds(0, 3) == [3757552657, 673228719, 3241444873]


def test_child_seed_does_not_depend_on_num_envs() -> None:
    assert vector_seeds(7, 2) == vector_seeds(7, 5)[:2]


def test_none_seed_continues_every_stream() -> None:
    assert vector_seeds(None, 3) == [None, None, None]


def test_seed_list_passes_ints_and_none_through() -> None:
    assert vector_seeds([5, None, np.int64(7)], 3) == [5, None, 7]
    assert vector_seeds((1, 2), 2) == [1, 2]
    assert vector_seeds(np.array([1, 2]), 2) == [1, 2]


def test_generator_entries_become_one_draw_each() -> None:
    g = np.random.default_rng(3)
    expected = np.random.default_rng(3).integers(2**63, size=2).tolist()
    assert vector_seeds([g, None, g], 3) == [expected[0], None, expected[1]]


def test_generator_seed_raises_type_error() -> None:
    with pytest.raises(TypeError, match="one generator cannot seed 4 sub-envs"):
        vector_seeds(np.random.default_rng(0), 4)


@pytest.mark.parametrize("bad", [1.5, True, "3", np.float64(2.0)])
def test_non_integer_seed_raises_type_error_alone_or_in_a_list(bad: object) -> None:
    with pytest.raises(TypeError):
        vector_seeds(bad, 2)
    with pytest.raises(TypeError, match=r"seed\[1\]"):
        vector_seeds([0, bad], 2)


def test_negative_seed_raises_value_error_alone_or_in_a_list() -> None:
    with pytest.raises(ValueError, match="-1"):
        vector_seeds(-1, 2)
    with pytest.raises(ValueError, match="-1"):
        vector_seeds([0, -1], 2)


def test_seed_list_of_wrong_length_names_both_lengths() -> None:
    with pytest.raises(ValueError, match="3 seeds for 2 sub-envs"):
        vector_seeds([1, 2, 3], 2)


def test_bad_entry_is_found_before_any_generator_is_drawn() -> None:
    g = np.random.default_rng(0)
    state = g.bit_generator.state
    with pytest.raises(TypeError):
        vector_seeds([g, 1.5], 2)
    assert g.bit_generator.state == state


def test_native_int_seed_is_passed_as_is() -> None:
    assert native_seed(4, 3, lambda: np.random.default_rng()) == (4, [4, 4, 4])


def test_native_all_none_list_keeps_the_stream() -> None:
    current = np.random.default_rng(0)
    state = current.bit_generator.state
    assert native_seed([None, None], 2, lambda: current) == (None, [None, None])
    assert native_seed(None, 2, lambda: current) == (None, [None, None])
    assert current.bit_generator.state == state


def test_native_list_is_combined_into_one_seed_sequence() -> None:
    current = np.random.default_rng(1)
    other = np.random.default_rng(2)
    draws = np.random.default_rng(1).integers(2**63, size=1).tolist()
    other_draw = int(np.random.default_rng(2).integers(2**63))
    rng, sub_seeds = native_seed([5, None, other], 3, lambda: current)
    assert isinstance(rng, np.random.Generator)
    assert sub_seeds == [5, None, other_draw]  # each entry, as vector_seeds gives it
    expected = np.random.default_rng(np.random.SeedSequence([5, draws[0], other_draw]))
    assert rng.integers(1000, size=4).tolist() == expected.integers(1000, size=4).tolist()


def test_native_generator_seed_raises_type_error() -> None:
    with pytest.raises(TypeError, match="numpy Generator"):
        native_seed(np.random.default_rng(), 2, lambda: np.random.default_rng())


def test_one_options_dict_is_given_to_every_sub_env_as_its_own_copy() -> None:
    options = {"start": 3}
    per_env = vector_options(options, 3)
    assert per_env == [options] * 3
    assert len({id(o) for o in per_env}) == 3 and all(o is not options for o in per_env)


def test_options_list_gives_one_entry_per_sub_env() -> None:
    assert vector_options([{"a": 1}, None], 2) == [{"a": 1}, None]
    assert vector_options(None, 2) == [None, None]


class _Popper(sekai.Env[Any, Any]):
    """Consumes its reset options: pops ``level`` and keeps it in ``seen``."""

    observation_space = sekai.Box(0.0, 1.0, shape=(1,))
    action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.seen = (options or {}).pop("level", None)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


class _PopperVecEnv(NativeVecEnv):
    """The native twin of ``_Popper``."""

    def __init__(self, num_envs: int) -> None:
        super().__init__(num_envs, _Popper.observation_space, _Popper.action_space)
        self.seen: list[Any] = [None] * num_envs

    def _reset_envs(self, indices: Any, options: Any) -> None:
        for index, opts in zip(indices, options):
            self.seen[index] = (opts or {}).pop("level", None)

    def _observe(self) -> np.ndarray:
        return np.zeros((self.num_envs, 1), np.float32)

    def _step(self, actions: Any) -> Any:
        done = np.zeros(self.num_envs, bool)
        return np.zeros(self.num_envs), done, done, {}


POPPERS: dict[str, tuple[Callable[[], VecEnv], Callable[[Any], list[Any]]]] = {
    "sync": (lambda: SyncVecEnv([_Popper] * 2), lambda vec: vec.get_attr("seen")),
    "async": (lambda: AsyncVecEnv([_Popper] * 2), lambda vec: vec.get_attr("seen")),
    "native": (lambda: _PopperVecEnv(2), lambda vec: vec.seen),
}


@pytest.mark.parametrize("backend", list(POPPERS))
def test_each_dict_of_an_options_list_is_given_as_its_own_copy(backend: str) -> None:
    # An env that consumes its options changes neither the caller's dict nor another sub-env's.
    build, seen = POPPERS[backend]
    mine = {"level": 3}
    with build() as vec:
        vec.reset(options=[mine, mine])
        assert seen(vec) == [3, 3]
    assert mine == {"level": 3}


def test_options_list_of_wrong_length_raises_value_error() -> None:
    with pytest.raises(ValueError, match="1 entries for 2 sub-envs"):
        vector_options([{}], 2)


def test_options_of_wrong_type_raise_type_error() -> None:
    with pytest.raises(TypeError, match=r"options=...\)\[1\]"):
        vector_options([{}, 3], 2)
    with pytest.raises(TypeError, match="must be a dict"):
        vector_options("start", 2)


@pytest.mark.parametrize("seed", [1.5, "0", True])
def test_a_vector_seed_of_another_type_says_what_a_vector_reset_takes(seed: object) -> None:
    for check in (
        lambda: vector_seeds(seed, 3),
        lambda: native_seed(seed, 3, np.random.default_rng),
    ):
        with pytest.raises(
            TypeError, match=r"reset\(seed=...\) must be None, a non-negative int or a list of 3"
        ):
            check()
