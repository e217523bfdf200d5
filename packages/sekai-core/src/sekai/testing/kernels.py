"""Cross-backend checks of array kernels: the same injected draws through numpy, JAX and torch.

``kernel_trajectory`` runs a kernel through the driver's pure transition (time limit and
autoreset included) on one backend with random numbers drawn by numpy in float64 and handed to
the backend, so every backend sees the same noise; ``assert_kernel_equivalent`` compares the
backends with the numpy reference in the same dtype (float64: 1e-12 relative, float32: 1e-5,
or the ``rtol`` and ``atol`` given). Kernel authors call it once per kernel and configuration.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.registry.api import default_registry
from sekai.registry.entry_points import load_entry_point
from sekai.spaces import Box, Discrete, batch_space
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_backend import KernelBackend, NumpyBackend
from sekai.vector.kernel_params import checked_params
from sekai.vector.kernel_step import (
    device_params,
    dynamic_fields,
    initial,
    observation_dtypes,
    transition,
    with_fields,
)
from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = [
    "DrawsKernel",
    "WalkKernel",
    "WalkParams",
    "assert_kernel_equivalent",
    "kernel_backend",
    "kernel_trajectory",
]

TOLERANCE = {"float64": 1e-12, "float32": 1e-5}
Trajectory = dict[str, list[np.ndarray]]


@dataclass(frozen=True)
class NoParams:
    """The params of a kernel that has none."""


class DrawsKernel(ArrayKernel[NoParams]):
    """Observes a uniform and a normal drawn at every reset and every step: what a mode's keys
    or generator give, for tests of its random draws.

    Args:
        every_step_ends: end every episode at each step (so each step's autoreset draws too);
            otherwise episodes never end.
    """

    def __init__(self, every_step_ends: bool = False) -> None:
        self.observation_space = Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = Discrete(2)
        self.params = NoParams()
        self.every_step_ends = every_step_ends

    def reset_draws(self, params: NoParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"), Draw("z", "normal"))

    step_draws = reset_draws

    @staticmethod
    def _observe(xp: Any, draws: Mapping[str, Any]) -> Any:
        return xp.stack([draws["u"], draws["z"]], axis=1)

    def reset(self, xp: Any, params: NoParams, draws: Any, mask: Any, state: Any) -> KernelReset:
        obs = self._observe(xp, draws)
        if state is not None:
            obs = xp.where(mask[:, None], obs, state["obs"])
        return {"obs": obs}, obs, {}

    def step(self, xp: Any, params: NoParams, state: Any, action: Any, draws: Any) -> KernelStep:
        obs = self._observe(xp, draws)
        never = xp.zeros(obs.shape[0], dtype=bool)
        terminated = ~never if self.every_step_ends else never
        return {"obs": obs}, obs, xp.zeros_like(obs[:, 0]), terminated, never, {}


@dataclass(frozen=True)
class WalkParams:
    """``WalkKernel``'s params."""

    step_size: float = 1.0
    goal: float = 3.0
    noise: float = 0.0


class WalkKernel(ArrayKernel[WalkParams]):
    """A walk on a line, the smallest kernel that follows every rule: starts uniform in
    [-1, 1), moves by +-``step_size`` (action 1: up) plus ``noise`` times a normal, and ends
    with reward 1 once ``|x| >= goal``; observes ``x[:, None]``. For tests of drivers and
    checks: a subclass breaks one rule."""

    def __init__(self) -> None:
        self.observation_space = Box(-10.0, 10.0, (1,))
        self.action_space = Discrete(2)
        self.params = WalkParams()

    def reset_draws(self, params: WalkParams) -> tuple[Draw, ...]:
        return (Draw("start", "uniform"),)

    def step_draws(self, params: WalkParams) -> tuple[Draw, ...]:
        return (Draw("z", "normal"),)

    def reset(
        self, xp: Any, params: WalkParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = 2.0 * draws["start"] - 1.0
        if state is not None:
            x = xp.where(mask, x, state["x"])
        return {"x": x}, x[:, None], {}

    def step(
        self, xp: Any, params: WalkParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        move = xp.where(action == 1, params.step_size, -params.step_size)
        x = state["x"] + move + params.noise * draws["z"]
        terminated = xp.abs(x) >= params.goal
        reward = xp.where(terminated, xp.ones_like(x), xp.zeros_like(x))
        return {"x": x}, x[:, None], reward, terminated, xp.zeros_like(terminated), {}


@contextlib.contextmanager
def _jax_precision(dtype: str) -> Iterator[None]:
    import jax

    config: Any = jax.config  # untyped in some JAX versions
    before = config.read("jax_enable_x64")
    config.update("jax_enable_x64", dtype == "float64")
    try:
        yield
    finally:
        config.update("jax_enable_x64", before)


def kernel_backend(name: str, dtype: str = "float64") -> KernelBackend:
    """A backend by mode name (``numpy``, or a registered kernel mode: ``jax``, ``torch``, a
    plugin's own) in ``dtype`` (jax: the x64 flag must already match, see
    :func:`kernel_trajectory`).

    Raises:
        ValueError: ``name`` is no registered vectorization mode.
        TypeError: the mode is not a kernel mode (``sync``, ``proc``...).
    """
    if name == "numpy":
        return NumpyBackend(np.dtype(dtype))
    return _kernel_mode(name).cpu_backend(dtype)


def _kernel_mode(name: str) -> type[KernelVecEnv]:
    """The class of a registered kernel mode; ``kernel_backend`` documents the errors."""
    # The mode's class as registered by its plugin (sekai-jax, sekai-torch, a third party's):
    # core imports no plugin distribution.
    mode = default_registry().backend(name)
    vec_cls = load_entry_point(mode, f"vectorization_mode {name!r}")
    if not (isinstance(vec_cls, type) and issubclass(vec_cls, KernelVecEnv)):
        raise TypeError(f"vectorization_mode {name!r} is not a kernel mode ({vec_cls!r}).")
    return vec_cls


def _noise(rng: np.random.Generator, draws: Sequence[Draw], n: int) -> dict[str, np.ndarray]:
    return {
        d.name: rng.random((n, *d.shape))
        if d.distribution == "uniform"
        else rng.standard_normal((n, *d.shape))
        for d in draws
    }


def _leaves(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, Mapping):
        out: dict[str, Any] = {}
        for key in sorted(tree):
            out.update(_leaves(tree[key], f"{prefix}{key}."))
        return out
    if isinstance(tree, tuple):
        out = {}
        for i, part in enumerate(tree):
            out.update(_leaves(part, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): tree}


def kernel_trajectory(
    kernel: ArrayKernel[Any],
    backend: str,
    *,
    num_envs: int = 8,
    steps: int = 100,
    seed: int = 0,
    dtype: str = "float64",
    max_episode_steps: int | None = None,
    actions: Sequence[Any] | None = None,
) -> Trajectory:
    """Run ``kernel`` on ``backend`` with injected noise and record everything, on the host.

    Args:
        kernel: the kernel.
        backend: ``"numpy"``, ``"jax"`` (jitted; x64 set from ``dtype`` for the run),
            ``"torch"`` (CPU) or another registered kernel mode (its ``cpu_backend``).
        num_envs, steps: the batch and the number of steps.
        seed: seeds the noise and, unless ``actions`` is given, the random actions.
        dtype: ``"float64"`` or ``"float32"``.
        max_episode_steps: the time limit (autoresets happen within ``steps`` with a small one).
        actions: one batch of actions per step (default: uniform samples of the action space).

    Returns:
        Per recorded name (``observation`` or ``observation.<key>``, ``reward``,
        ``terminated``, ``truncated``, ``done``, ``final_observation``, ``state.<name>``,
        ``info.<name>``), one host array per step (index 0: the reset).
    """
    # The mode is looked up before JAX's precision is set, which imports jax: without
    # sekai-jax the registry's error then names what to install, as for any missing mode.
    mode = None if backend == "numpy" else _kernel_mode(backend)
    context = _jax_precision(dtype) if backend == "jax" else contextlib.nullcontext()
    with context:
        return _trajectory(
            kernel,
            kernel_backend(backend, dtype) if mode is None else mode.cpu_backend(dtype),
            num_envs,
            steps,
            seed,
            max_episode_steps,
            actions,
        )


def _trajectory(
    kernel: ArrayKernel[Any],
    be: KernelBackend,
    n: int,
    steps: int,
    seed: int,
    max_episode_steps: int | None,
    actions: Sequence[Any] | None,
) -> Trajectory:
    rng = np.random.default_rng(seed)
    if actions is None:
        space = batch_space(kernel.action_space, n)
        space.seed(seed)
        actions = [space.sample() for _ in range(steps)]
    params = device_params(kernel, checked_params(kernel), be)
    obs_dtype = observation_dtypes(kernel.observation_space, be.numpy_dtype)
    xp = be.xp

    def convert(draws: dict[str, np.ndarray]) -> dict[str, Any]:
        return {key: be.convert(value) for key, value in draws.items()}

    def step(dyn: Any, carry: Any, action: Any, sd: Any, rd: Any) -> Any:
        return transition(
            kernel,
            xp,
            with_fields(kernel.params, dyn),
            carry,
            action,
            sd,
            rd,
            max_episode_steps=max_episode_steps,
            observation_dtype=obs_dtype,
            when=when,
            call=be.call_kernel,
        )

    when = be.conditional()  # the reset runs only in steps where an episode ended, as in modes
    step = be.compiled(step)
    first = initial(
        kernel,
        xp,
        params,
        convert(_noise(rng, kernel.reset_draws(params), n)),
        n,
        observation_dtype=obs_dtype,
        device=be.device,
        call=be.call_kernel,
    )
    out: Trajectory = {}

    def record(values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            out.setdefault(key, []).append(np.asarray(be.to_numpy(value)))

    record(
        {**_leaves(first.observation, "observation."), **_leaves(first.state["state"], "state.")}
    )
    carry = first.state
    for index in range(steps):
        sd = convert(_noise(rng, kernel.step_draws(params), n))
        rd = convert(_noise(rng, kernel.reset_draws(params), n))
        t = step(dynamic_fields(params), carry, be.actions(actions[index]), sd, rd)
        carry = t.state
        record(
            {
                **_leaves(t.observation, "observation."),
                "reward": t.reward,
                "terminated": t.terminated,
                "truncated": t.truncated,
                "done": t.done,
                **_leaves(t.final_observation, "final_observation."),
                **_leaves(carry["state"], "state."),
                **_leaves(dict(t.info), "info."),
            }
        )
    return out


def assert_kernel_equivalent(
    make_kernel: Callable[[], ArrayKernel[Any]],
    *,
    backends: Sequence[str] = ("jax", "torch"),
    dtypes: Sequence[str] = ("float64", "float32"),
    rtol: float | None = None,
    atol: float | None = None,
    **kwargs: Any,
) -> None:
    """Assert that every backend gives the numpy driver's trajectory under the same noise.

    Each backend runs in each dtype and is compared with numpy in the same dtype: float arrays
    within ``rtol`` (relative) and ``atol`` (absolute, near zero), both ``TOLERANCE[dtype]``
    by default (float64: 1e-12, float32: 1e-5), the rest exactly. A kernel that subtracts
    large terms (a wealth of cash and inventory worth ~1e3 each) differs in float32 by an ulp
    of those terms: pass an ``atol`` of that size.

    Args:
        make_kernel: builds the kernel (called per run).
        backends: the backends to compare with numpy.
        dtypes: the float dtypes to run in.
        rtol: the relative tolerance of float arrays, in every dtype (None: the dtype's).
        atol: the absolute tolerance of float arrays, in every dtype (None: the dtype's).
        **kwargs: for :func:`kernel_trajectory` (``num_envs``, ``steps``, ``seed``, ...).
    """
    rtol, atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    for dtype in dtypes:
        expected = kernel_trajectory(make_kernel(), "numpy", dtype=dtype, **kwargs)
        relative = TOLERANCE[dtype] if rtol is None else rtol
        absolute = TOLERANCE[dtype] if atol is None else atol
        for backend in backends:
            actual = kernel_trajectory(make_kernel(), backend, dtype=dtype, **kwargs)
            assert actual.keys() == expected.keys(), (
                backend,
                dtype,
                actual.keys() ^ expected.keys(),
            )
            for key, series in expected.items():
                for step, (want, got) in enumerate(zip(series, actual[key])):
                    where = f"{backend} {dtype}: {key} at step {step}"
                    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
                    if want.dtype.kind == "f":
                        np.testing.assert_allclose(
                            got, want, rtol=relative, atol=absolute, err_msg=where
                        )
                    else:
                        np.testing.assert_array_equal(got, want, err_msg=where)


def _tolerance(name: str, value: float | None) -> float | None:
    """``value``, a tolerance of ``assert_kernel_equivalent``, checked (None: the dtype's)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise ValueError(f"{name} must be a number >= 0 or None, got {value!r}.")
    return float(value)
