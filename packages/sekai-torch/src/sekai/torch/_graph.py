"""GraphStep: a kernel step captured once in a CUDA graph and replayed (CUDA devices only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from sekai.vector.kernel_step import KernelTransition, dynamic_fields

__all__ = ["GraphStep"]

_WARMUP = 3  # eager calls on a side stream before capture, as torch.cuda.graphs advises


def _leaves(tree: Any) -> list[torch.Tensor]:
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree] if isinstance(tree, torch.Tensor) else []


def _clone(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _clone(value) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_clone(part) for part in tree)
    return tree.clone() if isinstance(tree, torch.Tensor) else tree


class GraphStep:
    """Replays ``step(params, carry, action)`` from a CUDA graph captured at the first call.

    The graph owns static input buffers (params, carry, action) and writes the new carry back
    into its carry buffers, so a step is: copy the action in, replay, clone the results out.
    Everything returned is a clone, the carry included: ``envs.state``, ``last_transition``
    and the frozen mask the lazy infos read keep their values through the next replay, as in
    eager mode. A carry that is not the one last returned (one from ``reset``) and new params
    are copied in.
    """

    def __init__(
        self, step: Callable[[Any, Any, Any], KernelTransition], generator: torch.Generator
    ) -> None:
        self._step = step
        self._generator = generator
        self._graph: torch.cuda.CUDAGraph | None = None
        self._params: Any = None  # the captured params (their tensors are graph inputs)
        self._seen: Any = None  # the params object last copied into them
        self._carry: Any = None
        self._returned: Any = None  # the clone of the carry last returned
        self._action: torch.Tensor | None = None
        self._out: KernelTransition | None = None

    def _capture(self, params: Any, carry: Any, action: torch.Tensor) -> None:
        self._params = self._seen = params
        self._carry = _clone(carry)
        self._action = action.clone()
        cuda: Any = torch.cuda  # partly untyped
        # The warm-up draws from the env's generator too: put its state back after them, so
        # that the replays draw what eager steps would (reset(seed=s) replays an episode).
        drawn_from = self._generator.get_state()
        side = cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(_WARMUP):
                self._step(self._params, _clone(self._carry), self._action)
        torch.cuda.current_stream().wait_stream(side)
        self._generator.set_state(drawn_from)
        graph = torch.cuda.CUDAGraph()
        graph.register_generator_state(self._generator)
        # "thread_local": CUDA calls of other threads (JAX's, a data loader's) during the
        # capture are theirs, not an error of this capture as in the default "global" mode.
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            out = self._step(self._params, self._carry, self._action)
            for dst, src in zip(_leaves(self._carry), _leaves(out.state)):
                dst.copy_(src)
        self._graph, self._out = graph, out

    def __call__(self, params: Any, carry: Any, action: torch.Tensor) -> KernelTransition:
        if self._graph is None:
            self._capture(params, carry, action)
        assert self._action is not None and self._out is not None and self._graph is not None
        if params is not self._seen:  # set_attr made new params: copy them in
            mine = dynamic_fields(self._params)
            for name, value in dynamic_fields(params).items():
                mine[name].copy_(value)
            self._seen = params
        if carry is not self._returned:  # the buffers already hold the carry last returned
            for dst, src in zip(_leaves(self._carry), _leaves(carry)):
                dst.copy_(src)
        self._action.copy_(action)
        self._graph.replay()
        self._returned = _clone(self._carry)
        return KernelTransition(self._returned, *(_clone(part) for part in self._out[1:]))
