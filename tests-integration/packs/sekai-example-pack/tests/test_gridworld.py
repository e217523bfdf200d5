"""The example pack's own tests: its env conforms, through the registry and directly."""

import re

import numpy as np
import pytest

import sekai
from sekai.testing import assert_env_conforms

pytestmark = [pytest.mark.full, pytest.mark.minimal]


def test_registered_gridworld_conforms_with_its_native_vector_env():
    assert_env_conforms("example/Gridworld-v0")


def test_gridworld_instance_conforms():
    from sekai_example_pack.gridworld import GridworldEnv

    assert_env_conforms(GridworldEnv(size=3))


def test_reaching_the_corner_terminates_with_the_goal_reward():
    from sekai_example_pack.gridworld import GridworldEnv

    env = GridworldEnv(size=3)
    env.reset(options={"start": (2, 1)})
    result = env.step(1)
    assert result.observation.tolist() == [2, 2]
    assert (result.reward, result.terminated) == (1.0, True)


def test_make_vec_picks_the_native_gridworld_by_default():
    vec = sekai.make_vec("example/Gridworld-v0", num_envs=4)
    assert str(vec) == "GridworldVecEnv(num_envs=4)"
    result = vec.reset(seed=0)
    assert result.observations.shape == (4, 2)
    result = vec.step(np.array([1, 1, 2, 2]))
    assert result.rewards.shape == (4,)
    vec.close()


def test_native_and_single_env_agree_on_dynamics():
    from sekai_example_pack.gridworld import GridworldEnv, GridworldVecEnv

    env = GridworldEnv(size=4)
    vec = GridworldVecEnv(1, size=4, autoreset=False)
    env.reset(options={"start": (0, 0)})
    vec.reset(options=[{"start": (0, 0)}])
    for action in [1, 1, 2, 3, 0, 2, 2, 1, 1, 2]:
        single = env.step(action)
        batch = vec.step(np.array([action]))
        assert batch.observations[0].tolist() == single.observation.tolist()
        assert batch.rewards[0] == single.reward
        if single.terminated:
            break


def test_the_gridworld_kernel_moves_like_the_native_env_from_the_same_starts():
    from sekai_example_pack.kernel import GridworldKernel

    from sekai.vector.kernel_vec_env import KernelVecEnv

    kernel = KernelVecEnv(GridworldKernel(size=4), 6, autoreset=False)
    starts = kernel.reset(seed=0).observations
    native = sekai.make_vec("example/Gridworld-v0", 6, size=4, vector_kwargs={"autoreset": False})
    native.reset(options=[{"start": tuple(start)} for start in starts.tolist()])
    for actions in np.random.default_rng(1).integers(0, 4, (60, 6)):
        want, got = native.step(actions), kernel.step(actions)
        assert got.observations.dtype == want.observations.dtype
        np.testing.assert_array_equal(got.observations, want.observations)
        np.testing.assert_array_equal(got.rewards, want.rewards)
        np.testing.assert_array_equal(got.terminated, want.terminated)
    assert kernel.frozen.any()  # some sub-envs reached the goal on the way


def test_the_gridworld_kernel_passes_the_kernel_contract_checks():
    from sekai_example_pack.kernel import GridworldKernel

    from sekai.vector.kernel_check import check_kernel_vec_env
    from sekai.vector.kernel_vec_env import KernelVecEnv

    assert check_kernel_vec_env(lambda: KernelVecEnv(GridworldKernel(size=3), 4), n_steps=50) == []


def test_the_registry_names_the_gridworld_kernel():
    spec = sekai.spec("example/Gridworld-v0")
    assert spec.kernel_entry_point == "sekai_example_pack.kernel:GridworldKernel"


@pytest.mark.parametrize("mode", [None, "sync"])
def test_the_native_gridworld_has_the_single_envs_metadata(mode):
    from sekai_example_pack.gridworld import GridworldEnv, GridworldVecEnv

    assert GridworldVecEnv.metadata == GridworldEnv.metadata == {"render_fps": 4}
    vec = sekai.make_vec("example/Gridworld-v0", 2, vectorization_mode=mode)
    assert vec.metadata == {"render_fps": 4}
    vec.close()


BAD_STARTS = [
    *[(7, -3), (5, 0), (0, 5), (-1, 2), (1,), (1, 2, 3), (1.0, 2), (True, 0), "ab", 3],
    # iterables of two ints in the grid, but no (row, column) sequence
    {0: "row", 1: "col"},
    {3, 1},
    range(2, 4),
    iter((1, 2)),
    np.array([[1, 2]]),
]


@pytest.mark.parametrize("start", BAD_STARTS)
def test_a_start_off_the_grid_or_not_two_ints_is_refused_by_every_backend(start):
    # One check for both envs: the option, the value given and the valid range are named.
    message = (
        r"options\['start'\] must be a \(row, column\) pair of ints \(a tuple, list or 1-D "
        rf"array\), each in 0\.\.4 \(the 5 x 5 grid\), got {re.escape(repr(start))}\.$"
    )
    env = sekai.make("example/Gridworld-v0")
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"start": start})
    for mode in (None, "sync"):
        vec = sekai.make_vec("example/Gridworld-v0", 2, vectorization_mode=mode)
        with pytest.raises(ValueError, match=message):
            vec.reset(seed=0, options={"start": start})
        vec.close()


def test_any_cell_of_the_grid_is_a_valid_start_on_every_backend():
    starts = [(0, 0), (4, 0), (np.int64(2), np.int64(3)), np.array([0, 4]), [3, 3]]
    env = sekai.make("example/Gridworld-v0")
    native = sekai.make_vec("example/Gridworld-v0", len(starts))
    sync = sekai.make_vec("example/Gridworld-v0", len(starts), vectorization_mode="sync")
    options = [{"start": start} for start in starts]
    expected = [[int(v) for v in start] for start in starts]
    assert [env.reset(options=o).observation.tolist() for o in options] == expected
    assert native.reset(options=options).observations.tolist() == expected
    assert sync.reset(options=options).observations.tolist() == expected
    native.close()
    sync.close()


@pytest.mark.parametrize("options", [["start", (0, 0)], "start", 3])
def test_options_that_are_not_a_dict_raise_type_error_like_the_built_in_envs(options):
    from sekai_example_pack.gridworld import GridworldEnv

    env = GridworldEnv(size=3)
    kind = type(options).__name__
    with pytest.raises(TypeError, match=rf"^options must be a dict or None, got {kind}\.$"):
        env.reset(seed=0, options=options)
    assert env.position is None  # the refused reset changed nothing
