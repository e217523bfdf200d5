"""The "torch" vectorization mode, on CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sekai
from sekai.envs.classic_control.kernels.cartpole import CartPoleKernel
from sekai.testing.kernels import assert_kernel_equivalent
from sekai.torch import TorchVecEnv


def test_make_vec_torch_gives_tensors_on_the_device() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 4, vectorization_mode="torch", vector_kwargs={"device": "cpu"}
    )
    assert isinstance(envs, TorchVecEnv)
    assert repr(envs) == "TorchVecEnv(CartPole-v1, num_envs=4, backend=torch, float32, device=cpu)"
    first = envs.reset(seed=0)
    assert isinstance(first.observations, torch.Tensor) and first.observations.shape == (4, 4)
    step = envs.step(torch.ones(4, dtype=torch.int64))
    assert step.observations.dtype == torch.float32 and step.rewards.dtype == torch.float32
    assert step.terminated.dtype == torch.bool and step.infos[0]["elapsed_steps"] == 1
    envs.close()


def test_float64_is_a_vector_kwarg() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 2, vectorization_mode="torch", vector_kwargs={"dtype": "float64"}
    )
    envs.reset(seed=0)
    assert envs.step(np.zeros(2, dtype=np.int64)).rewards.dtype == torch.float64
    assert envs.state["x"].dtype == torch.float64
    with pytest.raises(TypeError, match="torch float dtype"):
        TorchVecEnv(CartPoleKernel(), 2, dtype="int32")


def test_the_same_seed_gives_the_same_episodes() -> None:
    def run(seed: int) -> np.ndarray:
        envs = sekai.make_vec("CartPole-v1", 8, vectorization_mode="torch", max_episode_steps=10)
        envs.reset(seed=seed)
        for _ in range(25):
            out = envs.step(np.zeros(8, dtype=np.int64))
        return out.observations.numpy()

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


def test_torch_matches_the_numpy_driver_under_the_same_draws() -> None:
    assert_kernel_equivalent(
        CartPoleKernel, backends=("torch",), num_envs=6, steps=40, max_episode_steps=15
    )


def test_invalid_actions_are_caught_on_the_device() -> None:
    envs = sekai.make_vec("CartPole-v1", 3, vectorization_mode="torch")
    envs.reset(seed=0)
    with pytest.raises(sekai.InvalidAction) as caught:
        envs.step(torch.tensor([0, 1, -1]))
    assert caught.value.index == 2
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        envs.step(torch.zeros((3, 1), dtype=torch.int64))
    with pytest.raises(ValueError, match=r"must have shape \(3,\).*got shape \(2,\)"):
        envs.step(torch.zeros(2, dtype=torch.int64))


def test_cuda_graph_capture_needs_a_cuda_device() -> None:
    with pytest.raises(ValueError, match="needs a CUDA device"):
        TorchVecEnv(CartPoleKernel(), 2, compile="cuda_graph")
    with pytest.raises(ValueError, match="compile must be one of"):
        TorchVecEnv(CartPoleKernel(), 2, compile="fast")


def test_set_attr_changes_a_parameter() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.reset(seed=0)
    envs.set_attr("force_mag", 0.0)
    before = envs.state["x_dot"].clone()
    envs.step(np.ones(2, dtype=np.int64))
    assert (envs.state["x_dot"] - before).abs().max() < 0.01


def test_plugin_discovery_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, sekai; sekai.all_specs(); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_episode_statistics_and_reward_normalisation_wrap_torch_env() -> None:
    inner = sekai.make_vec("CartPole-v1", 4, vectorization_mode="torch")
    vec = sekai.VecNormalizeReward(sekai.VecRecordEpisodeStatistics(inner), gamma=0.9)
    vec.reset(seed=0)
    episodes = []
    for _ in range(40):
        result = vec.step(torch.zeros(4, dtype=torch.int64))
        assert isinstance(result.rewards, torch.Tensor)  # scaled where the env put them
        for i, info in enumerate(result.infos):
            if "episode" in info:
                episodes.append((i, info["episode"].episode_length, info["episode"].episode_return))
    assert len(episodes) >= 4
    # CartPole pays 1 a step: each recorded return is its episode's length
    assert all(length == ret for _, length, ret in episodes)
    assert vec.return_rms.count == 160


@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("bad", [[0.5, 1.0], [float("nan"), 1.0], [True, False]])
def test_a_discrete_action_must_be_an_integral_number_not_a_bool(
    bad: list[float], where: str
) -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.reset(seed=0)
    actions = np.array(bad) if where == "host" else torch.tensor(bad)
    with pytest.raises(sekai.InvalidAction, match=r"\(sub-env 0\)") as caught:
        envs.step(actions)
    assert caught.value.index == 0


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), None, np.array([1, 2**32])])
def test_host_actions_are_checked_before_the_backend_converts_them(bad: object) -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.reset(seed=0)
    with pytest.raises((sekai.InvalidAction, ValueError), match=r"sub-env|must have shape"):
        envs.step(bad)


def test_integral_float_actions_act_as_their_integers() -> None:
    by_float = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    by_int = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    by_float.reset(seed=0)
    by_int.reset(seed=0)
    for _ in range(3):
        a = by_float.step(torch.tensor([0.0, 1.0]))
        b = by_int.step(np.array([0, 1]))
        np.testing.assert_array_equal(np.asarray(a.observations), np.asarray(b.observations))


def test_set_attr_of_the_time_limit_applies_to_the_next_steps() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch", max_episode_steps=100)
    envs.set_attr("max_episode_steps", 2)
    envs.reset(seed=0)
    truncated = [bool(np.asarray(envs.step(np.array([0, 1])).truncated).any()) for _ in range(3)]
    assert truncated == [False, True, False]
    with pytest.raises(ValueError, match=r"^max_episode_steps must be >= 1, got -1\.$"):
        envs.set_attr("max_episode_steps", -1)
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int or None, got str\.$"):
        envs.set_attr("max_episode_steps", "x")
    assert envs.get_attr("max_episode_steps") == [2, 2]


def test_set_attr_of_a_float_parameter_takes_an_int_and_refuses_an_array() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.set_attr("force_mag", 20)
    assert envs.get_attr("force_mag") == [20.0, 20.0]
    with pytest.raises(TypeError, match=r"same kind and shape, got array\(\[1\., 2\., 3\.\]\)"):
        envs.set_attr("force_mag", np.array([1.0, 2.0, 3.0]))
    assert envs.get_attr("force_mag") == [20.0, 20.0]


def test_integral_float_indices_become_torch_integers() -> None:
    from sekai.spaces import Discrete
    from sekai.torch.backend import TorchBackend
    from sekai.vector.kernel_backend import index_actions

    cast = index_actions(TorchBackend(), Discrete(3), torch.tensor([0.0, 2.0]))
    assert cast.dtype == torch.int64 and cast.tolist() == [0, 2]
