"""The "torch" vectorization mode, on CPU."""

from __future__ import annotations

import contextlib
import gc
import types
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

import sekai
import sekai.torch._graph
from sekai.envs.classic_control.kernels.cartpole import CartPoleKernel
from sekai.error import InvalidAction
from sekai.spaces import Box
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase
from sekai.testing.kernels import DrawsKernel
from sekai.torch import TorchVecEnv
from sekai.torch._graph import GraphStep, _leaves
from sekai.vector.kernel import ArrayKernel, KernelReset, KernelStep


@pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
def test_the_torch_mode_passes_every_kernel_mode_check(check: Callable[[ModeCase], None]) -> None:
    check(ModeCase("torch", torch.as_tensor, "torch"))


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


def test_synchronize_waits_for_the_cuda_device_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # CUDA runs the queued kernels after step() returns; on the CPU there is nothing to wait for.
    waited: list[Any] = []
    monkeypatch.setattr(torch.cuda, "synchronize", waited.append)
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.reset(seed=0)
    envs.unwrapped.synchronize()
    assert waited == []
    envs.unwrapped.backend.device = torch.device("cuda", 0)  # as a backend on a GPU holds it
    envs.unwrapped.synchronize()
    assert waited == [torch.device("cuda", 0)]
    envs.close()


def test_float64_is_a_vector_kwarg() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 2, vectorization_mode="torch", vector_kwargs={"dtype": "float64"}
    )
    envs.reset(seed=0)
    assert envs.step(np.zeros(2, dtype=np.int64)).rewards.dtype == torch.float64
    assert envs.state["x"].dtype == torch.float64
    # bfloat16 and float8 have no numpy dtype for the infos, nor random draws: refused at once
    for dtype in ("int32", "bfloat16", torch.float8_e5m2, np.float32):
        with pytest.raises(TypeError, match=r"float16, float32 or float64 .* got "):
            TorchVecEnv(CartPoleKernel(), 2, dtype=dtype)
    half = TorchVecEnv(CartPoleKernel(), 2, dtype="float16", max_episode_steps=1)
    half.reset(seed=0)
    assert half.step(np.zeros(2, dtype=np.int64)).infos[0]["final_observation"].dtype == np.float16


def test_float16_uniforms_are_the_multiples_of_2_to_the_minus_11_each_as_likely() -> None:
    # torch.rand in float16 rounds a finer uniform (and 1.0 to 0): 0 came half again as often
    # as the other values, and with it the leading digit of a replayed window's start.
    envs = TorchVecEnv(DrawsKernel(), 2**16, dtype="float16")
    envs.reset(seed=0)
    draws = [envs.reset().observations[:, 0] for _ in range(16)]
    steps = torch.cat(draws).double().numpy() * 2**11
    np.testing.assert_array_equal(steps, np.floor(steps))
    counts = np.bincount(steps.astype(np.int64), minlength=2**11)
    assert len(counts) == 2**11  # all below 1
    assert 0.8 < counts[0] / counts.mean() < 1.2, counts[0] / counts.mean()  # 1.5 before


def test_a_read_only_host_batch_of_actions_steps_without_a_warning() -> None:
    envs = TorchVecEnv(CartPoleKernel(), 4)
    envs.reset(seed=0)
    for check_actions in (True, False):
        envs.check_actions = check_actions
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            envs.step(np.broadcast_to(np.int64(1), (4,)))


@dataclass(frozen=True)
class _DriftParams:
    scale: float = 1.0


class _Drift(ArrayKernel[_DriftParams]):
    """Moves by ``scale * action`` (a Box action), pays the move: a policy's action tensor
    would carry its autograd graph into the state and the rewards if the env kept it."""

    def __init__(self) -> None:
        self.observation_space = Box(-np.inf, np.inf, (1,))
        self.action_space = Box(-1.0, 1.0, (1,))
        self.params = _DriftParams()

    def reset(
        self, xp: Any, params: _DriftParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = xp.zeros(mask.shape)
        if state is not None:
            x = xp.where(mask, x, state["x"])
        return {"x": x}, x[:, None], {}

    def step(
        self, xp: Any, params: _DriftParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        move = params.scale * action[:, 0]
        x = state["x"] + move
        done = xp.zeros(x.shape, dtype=xp.bool)
        return {"x": x}, x[:, None], move, done, done, {}


def test_an_action_that_requires_grad_leaves_no_autograd_graph_behind() -> None:
    envs = TorchVecEnv(_Drift(), 2)
    envs.reset(seed=0)
    policy = torch.full((2, 1), 0.5, requires_grad=True)
    for _ in range(2):
        out = envs.step(policy * 1.0)
    assert not out.rewards.requires_grad and not out.observations.requires_grad
    assert not envs.state["x"].requires_grad
    assert envs.state["x"].tolist() == [1.0, 1.0]


def test_cuda_graph_capture_needs_a_cuda_device() -> None:
    with pytest.raises(ValueError, match="needs a CUDA device"):
        TorchVecEnv(CartPoleKernel(), 2, compile="cuda_graph")
    with pytest.raises(ValueError, match="compile must be one of"):
        TorchVecEnv(CartPoleKernel(), 2, compile="fast")


class _Replay:
    """A CUDA graph's replay on the CPU: the captured step run again into the same buffers."""

    def __init__(self, graph_step: GraphStep) -> None:
        self.graph_step = graph_step

    def replay(self) -> None:
        step = self.graph_step
        out = step._step(step._params, step._carry, step._action)
        for dst, src in zip(_leaves(step._out), _leaves(out)):
            dst.copy_(src)  # the graph's static outputs
        for dst, src in zip(_leaves(step._carry), _leaves(out.state)):
            dst.copy_(src)  # the carry, written back inside the graph


class _Stream:
    def wait_stream(self, other: Any) -> None:
        pass


class _CapturedGraph:
    def register_generator_state(self, generator: torch.Generator) -> None:
        self.generator = generator


@contextlib.contextmanager
def _capturing(graph: _CapturedGraph, capture_error_mode: str) -> Iterator[None]:
    # A capture records the draws and leaves the generator's offset to the replays.
    state = graph.generator.get_state()
    yield
    graph.generator.set_state(state)


_CUDA = types.SimpleNamespace(
    Stream=_Stream,
    CUDAGraph=_CapturedGraph,
    current_stream=_Stream,
    stream=lambda stream: contextlib.nullcontext(),
    graph=_capturing,
)


class _EmulatedGraphStep(GraphStep):
    """GraphStep's own capture (warm-up included) and ``__call__``, with torch.cuda's streams
    and graphs emulated on the CPU (no GPU needed)."""

    def _capture(self, params: Any, carry: Any, action: torch.Tensor) -> None:
        cuda = torch.cuda
        torch.cuda = _CUDA  # type: ignore[assignment]
        try:
            super()._capture(params, carry, action)
        finally:
            torch.cuda = cuda
        self._graph = _Replay(self)  # type: ignore[assignment]


def _graph_envs(monkeypatch: pytest.MonkeyPatch, env_id: str = "CartPole-v1", **kwargs: Any) -> Any:
    """``compile="cuda_graph"`` emulated on the CPU."""
    envs = sekai.make_vec(env_id, 2, vectorization_mode="torch", **kwargs)
    monkeypatch.setattr(sekai.torch._graph, "GraphStep", _EmulatedGraphStep)
    envs.backend.compile = "cuda_graph"  # what the constructor refuses without a GPU
    envs._rebuild()
    assert isinstance(envs._step_fn, _EmulatedGraphStep)
    return envs


def test_with_cuda_graphs_the_lazy_infos_of_a_finished_step_stay_as_they_were(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def run(envs: Any) -> tuple[list[Any], dict[str, np.ndarray]]:
        envs.reset(seed=0)
        first = envs.step(np.array([1, 0]))
        state = {key: value.clone() for key, value in envs.state.items()}
        held = envs.state
        ended = envs.step(np.array([1, 0]))  # the time limit: both sub-envs freeze
        envs.step(np.array([1, 0]))  # a replay after it
        for key, value in held.items():  # what envs.state gave stays as it was
            torch.testing.assert_close(value, state[key], rtol=0, atol=0)
        assert first.infos == [{"elapsed_steps": 1}] * 2
        return ended.infos, {k: v.numpy() for k, v in envs.state.items()}

    kwargs = {"max_episode_steps": 2, "vector_kwargs": {"autoreset": False}}
    eager_infos, eager_state = run(
        sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch", **kwargs)
    )
    graph_infos, graph_state = run(_graph_envs(monkeypatch, **kwargs))
    assert graph_infos == eager_infos == [{"elapsed_steps": 2}] * 2
    for key in eager_state:
        np.testing.assert_array_equal(graph_state[key], eager_state[key])


def test_with_cuda_graphs_set_attr_after_the_capture_reaches_the_replays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def run(envs: Any) -> list[np.ndarray]:
        envs.reset(seed=0)
        envs.step(np.array([1, 1]))  # the capture, with the parameters as built
        x_dots = []
        for force_mag in (0.0, 20.0):
            envs.set_attr("force_mag", force_mag)
            envs.step(np.array([1, 1]))
            x_dots.append(envs.state["x_dot"].numpy().copy())
        return x_dots

    eager = run(sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch"))
    graph = run(_graph_envs(monkeypatch))
    for got, want in zip(graph, eager):
        np.testing.assert_array_equal(got, want)


def test_reset_noise_is_drawn_in_steps_that_reset_only_but_every_step_in_a_cuda_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def draws_per_step(envs: Any) -> list[list[str]]:
        calls: list[str] = []
        sample = envs.backend._sample
        monkeypatch.setattr(
            envs.backend,
            "_sample",
            lambda draw, shape: (calls.append(draw.name), sample(draw, shape))[1],
        )
        envs.reset(seed=0)
        per_step = []
        for _ in range(4):
            calls.clear()
            envs.step(np.array([1, 0]))
            per_step.append(list(calls))
        return per_step

    eager = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch", max_episode_steps=3)
    assert draws_per_step(eager) == [[], [], ["state"], []]  # the time limit resets at step 3
    graph = _graph_envs(monkeypatch, max_episode_steps=3)
    assert draws_per_step(graph)[1:] == [["state"]] * 3  # fixed launches (1: the capture)


def test_with_cuda_graphs_reset_with_a_seed_replays_the_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The capture's warm-up steps draw (branch-free) reset noise; they must leave no trace in
    # the episodes the seed starts: the time limit resets both sub-envs at step 2.
    envs = _graph_envs(monkeypatch, max_episode_steps=2)

    def episode() -> list[torch.Tensor]:
        first = envs.reset(seed=42).observations.clone()
        return [first] + [envs.step(np.array([1, 0])).observations.clone() for _ in range(4)]

    once, again = episode(), episode()
    for a, b in zip(once, again):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_close_drops_the_device_copies_of_the_params() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="torch")
    envs.reset(seed=0)
    copy = weakref.ref(envs._params.force_mag)
    step = weakref.ref(envs._step_fn)
    envs.close()
    gc.collect()
    assert copy() is None and step() is None


def test_a_cuda_device_without_cuda_is_refused_with_the_reason() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(ValueError, match=r"^device 'cuda': torch has no CUDA devices"):
        TorchVecEnv(CartPoleKernel(), 2, device="cuda")
    with pytest.raises(ValueError, match=r"^device must be a torch device or its name"):
        TorchVecEnv(CartPoleKernel(), 2, device="gpu")


def test_a_device_without_random_numbers_is_refused_naming_the_device() -> None:
    # torch's own RuntimeError named neither the argument nor what works
    with pytest.raises(ValueError, match=r"^device 'meta': torch cannot draw random numbers"):
        TorchVecEnv(CartPoleKernel(), 2, device="meta")


def test_a_bad_device_action_reads_as_the_same_bad_host_action() -> None:
    envs = TorchVecEnv(CartPoleKernel(), 3)
    envs.reset(seed=0)
    messages = []
    for actions in (np.array([0, 5, 1]), torch.tensor([0, 5, 1], dtype=torch.int32)):
        with pytest.raises(InvalidAction) as refused:
            envs.step(actions)
        messages.append(str(refused.value))
    assert messages == ["Action 5 is not valid for space Discrete(2) (sub-env 1)."] * 2


@pytest.mark.parametrize("check_actions", [True, False])
def test_without_value_checks_the_shape_is_checked_and_float_indices_cast(
    check_actions: bool,
) -> None:
    kwargs = {"vector_kwargs": {"check_actions": check_actions}}
    envs = sekai.make_vec("CartPole-v1", 4, vectorization_mode="torch", **kwargs)
    envs.reset(seed=0)
    for batch in (np.array([1]), torch.ones(1, dtype=torch.int64), torch.ones((4, 1))):
        with pytest.raises(ValueError, match=r"^actions must have shape \(4,\) \(4 sub-envs"):
            envs.step(batch)
