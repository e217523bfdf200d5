"""The vector semantics of a kernel as pure array code: time limit, autoreset and freezing.

Written once for every backend: the numpy driver calls these functions eagerly, the JAX mode
inside ``jit`` (they are also its functional API), the torch mode eagerly, compiled or captured
in a CUDA graph. Nothing here branches on array values except through a ``reset_draws``
callback, which only the numpy driver uses (to draw reset noise for the finished rows alone,
exactly as the native envs consume their generator).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from sekai.spaces import Dict, Space, Tuple
from sekai.spaces._kinds import ARRAY_SPACES
from sekai.vector.kernel import ArrayKernel, Draw
from sekai.vector.kernel_outputs import FirstCalls, check_reset, check_step

__all__ = [
    "KernelCall",
    "KernelReset",
    "KernelTransition",
    "When",
    "convert_params",
    "device_params",
    "direct_call",
    "draw_all",
    "dynamic_fields",
    "host_when",
    "initial",
    "is_dynamic",
    "observation_dtypes",
    "read_only_arrays",
    "select",
    "transition",
    "tree_map",
    "with_fields",
]

Array = Any
Carry = dict[str, Any]
"""The driver's state: ``state`` (the kernel's), ``elapsed`` (int32 steps) and, with
``autoreset=False``, ``frozen``, ``final_observation``, ``final_terminated`` and
``final_truncated``."""
ResetDraws = Mapping[str, Array] | Callable[[Array], Mapping[str, Array]]
KernelCall = Callable[[Callable[..., Any], tuple[Any, ...], bool], Any]
"""``call(method, args, checked)``: calls a kernel's ``reset`` or ``step`` with ``args``;
``checked`` says that this call's outputs are checked, as the first of its kind (a backend's
``call_kernel``: numpy's then hands the kernel read-only arrays; ``direct_call``)."""
When = Callable[[Array, Callable[[Any], Any], Callable[[Any], Any], Any], Any]
"""``when(pred, yes, no, operand)``: ``yes(operand)`` if the scalar ``pred`` is true, else
``no(operand)`` (``host_when`` on the host, ``jax.lax.cond`` under JAX)."""


def host_when(
    pred: Array, yes: Callable[[Any], Any], no: Callable[[Any], Any], operand: Any
) -> Any:
    """``when`` decided on the host (one sync of ``pred``): numpy, torch eager."""
    return yes(operand) if bool(pred) else no(operand)


class KernelReset(NamedTuple):
    """What :func:`initial` returns (a pytree under JAX)."""

    state: Carry
    observation: Any
    info: Mapping[str, Array]


class KernelTransition(NamedTuple):
    """What :func:`transition` returns (a pytree under JAX).

    Attributes:
        state: the new carry.
        observation: the observations, those of reset sub-envs after their reset.
        reward: ``(num_envs,)`` rewards (0 for frozen sub-envs).
        terminated: ``(num_envs,)`` bool.
        truncated: ``(num_envs,)`` bool, the time limit included.
        info: the kernel's step info arrays.
        elapsed: ``(num_envs,)`` steps of the episode that was stepped (before any reset).
        done: ``(num_envs,)`` bool, the sub-envs whose episode ended in this step (and, with
            autoreset, were reset).
        final_observation: the observations before the autoreset (rows of ``done`` matter).
        reset_info: the kernel's reset info arrays (rows of ``done`` matter).
    """

    state: Carry
    observation: Any
    reward: Array
    terminated: Array
    truncated: Array
    info: Mapping[str, Array]
    elapsed: Array
    done: Array
    final_observation: Any
    reset_info: Mapping[str, Array]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Apply ``fn`` to the arrays of an observation (an array, or dicts/tuples of arrays)."""
    if isinstance(tree, Mapping):
        return {key: tree_map(fn, tree[key], *(r[key] for r in rest)) for key in tree}
    if isinstance(tree, tuple):
        return tuple(tree_map(fn, *parts) for parts in zip(tree, *rest))
    return fn(tree, *rest)


def select(xp: Any, mask: Array, a: Any, b: Any) -> Any:
    """Rows of ``a`` where ``mask`` (``(num_envs,)`` bool) is true, else rows of ``b``."""

    def pick(x: Array, y: Array) -> Array:
        ndim = len(x.shape)
        rows = mask if ndim <= 1 else xp.reshape(mask, (mask.shape[0],) + (1,) * (ndim - 1))
        return xp.where(rows, x, y)

    return tree_map(pick, a, b)


def is_dynamic(value: Any) -> bool:
    """Whether a parameter value travels as an array (floats, arrays); ints, bools, strings and
    the rest are static (a kernel may branch on them in Python or use them as shapes)."""
    if isinstance(value, (bool, int, np.bool_, np.integer)):
        return False
    # floats, and arrays of any library (numpy, or already converted to the backend's)
    return isinstance(value, float) or (hasattr(value, "shape") and hasattr(value, "dtype"))


def dynamic_fields(params: Any) -> dict[str, Any]:
    """The fields of a kernel's params (a frozen dataclass) that travel as arrays."""
    if not dataclasses.is_dataclass(params) or isinstance(params, type):
        raise TypeError(
            f"an ArrayKernel's params must be a dataclass instance, got {type(params).__name__}."
        )
    return {
        field.name: getattr(params, field.name)
        for field in dataclasses.fields(params)
        if is_dynamic(getattr(params, field.name))
    }


def with_fields(params: Any, values: Mapping[str, Any]) -> Any:
    """A copy of ``params`` with some fields replaced, bypassing the dataclass's ``__init__``
    (its checks ran when the kernel was built; traced arrays would not pass them)."""
    changed = copy.copy(params)
    for name, value in values.items():
        object.__setattr__(changed, name, value)
    return changed


def read_only_arrays(params: Any) -> Any:
    """``params`` with every writable numpy array field replaced by a read-only copy (those
    already read-only are kept, not copied), so that what ``get_attr`` hands out cannot be
    changed in place, as a native env's parameters cannot."""
    copies = {}
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if isinstance(value, np.ndarray) and value.flags.writeable:
            value = value.copy()
            value.flags.writeable = False
            copies[field.name] = value
    return with_fields(params, copies) if copies else params


def device_params(kernel: ArrayKernel[Any], params: Any, backend: Any) -> Any:
    """Host ``params`` for ``backend`` (a ``KernelBackend``): checked for its float dtype by
    ``kernel.check_params``, then converted (``convert_params``)."""
    kernel.check_params(backend.xp, params, backend.float_dtype)
    return convert_params(params, backend.convert)


def convert_params(params: Any, convert: Callable[[Any], Any]) -> Any:
    """A copy of ``params`` with every dynamic field passed through ``convert`` (one float or
    numpy array to the backend's array)."""
    return with_fields(params, {k: convert(v) for k, v in dynamic_fields(params).items()})


def observation_dtypes(space: Space[Any], convert: Callable[[np.dtype[Any]], Any]) -> Any:
    """The dtype each part of an observation is cast to: ``convert(space.dtype)`` for an array
    space, a dict/tuple of them for Dict/Tuple spaces, None (no cast) for any other space."""
    if isinstance(space, Dict):
        return {key: observation_dtypes(sub, convert) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(observation_dtypes(sub, convert) for sub in space.spaces)
    if isinstance(space, ARRAY_SPACES):
        return convert(np.dtype(space.dtype))
    return None


def _cast_observation(xp: Any, obs: Any, dtype: Any, copy: bool = True) -> Any:
    """``obs`` with each array cast to its dtype in ``dtype`` (a tree like ``obs``, or None):
    with ``copy``, a copy even where it has that dtype, so that an observation handed out
    never shares memory with the kernel's state (an observation is often a view of it:
    ``x[:, None]``); without, as it is where it has that dtype (one ``select`` copies)."""
    if dtype is None:
        return obs
    if isinstance(dtype, Mapping):
        return {key: _cast_observation(xp, obs[key], dtype[key], copy) for key in obs}
    if isinstance(dtype, tuple):
        return tuple(_cast_observation(xp, o, d, copy) for o, d in zip(obs, dtype))
    if not copy and obs.dtype == dtype:
        return obs
    return xp.astype(obs, dtype)  # a copy (the array API's default; JAX's arrays are immutable)


def direct_call(method: Callable[..., Any], args: tuple[Any, ...], checked: bool) -> Any:
    """``method(*args)``: how ``initial`` and ``transition`` call a kernel's ``reset`` and
    ``step`` unless a driver says otherwise (a backend's ``call_kernel``)."""
    return method(*args)


def _checked_call(
    call: KernelCall,
    method: Callable[..., Any],
    args: tuple[Any, ...],
    checked: FirstCalls | None,
    kind: str,
    check: Callable[[Any], None],
) -> Any:
    """``call(method, args, ...)``, its outputs checked by ``check`` while no call of ``kind``
    has passed (``checked``; None: at every call, which tracing runs once)."""
    first = checked is None or checked.pending(kind)
    outputs = call(method, args, first)
    if first:
        check(outputs)
        if checked is not None:
            checked.passed(kind)
    return outputs


def initial(
    kernel: ArrayKernel[Any],
    xp: Any,
    params: Any,
    draws: Mapping[str, Array],
    num_envs: int,
    *,
    autoreset: bool = True,
    observation_dtype: Any = None,
    device: Any = None,
    call: KernelCall = direct_call,
) -> KernelReset:
    """Reset every sub-env: the first carry, the observations and the reset info.

    ``device`` is where new arrays go (torch: the driver's device; None: the default).
    ``call`` calls the kernel's ``reset`` (``direct_call``; a backend's ``call_kernel``), and
    what it returns is checked (``check_reset``).
    """
    where = {} if device is None else {"device": device}
    mask = xp.ones((num_envs,), dtype=xp.bool, **where)
    state, obs, info = call(kernel.reset, (xp, params, draws, mask, None), True)
    check_reset(kernel, state, obs, num_envs)
    obs = _cast_observation(xp, obs, observation_dtype)
    # int32 on every backend: drivers refuse longer limits (check_max_episode_steps(counter=))
    elapsed = xp.zeros((num_envs,), dtype=xp.int32, **where)
    carry: Carry = {"state": dict(state), "elapsed": elapsed}
    if not autoreset:
        no = xp.zeros((num_envs,), dtype=xp.bool, **where)
        carry.update(
            frozen=no,
            final_observation=obs,
            final_terminated=no,
            final_truncated=no,
        )
    return KernelReset(carry, obs, info)


def transition(
    kernel: ArrayKernel[Any],
    xp: Any,
    params: Any,
    carry: Carry,
    action: Array,
    step_draws: Mapping[str, Array],
    reset_draws: ResetDraws,
    *,
    max_episode_steps: int | None = None,
    autoreset: bool = True,
    observation_dtype: Any = None,
    when: When | None = None,
    call: KernelCall = direct_call,
    checked: FirstCalls | None = None,
) -> KernelTransition:
    """Step every sub-env, apply the time limit, then autoreset (or freeze) finished ones.

    Args:
        kernel: the env's kernel.
        xp: the array namespace.
        params: the kernel's params, converted to ``xp``.
        carry: from :func:`initial` or the previous transition.
        action: the batch of actions.
        step_draws: the random numbers of ``kernel.step_draws``.
        reset_draws: those of ``kernel.reset_draws`` for every sub-env, or a function of the
            ``done`` mask returning them (called only when the kernel's reset runs).
        max_episode_steps: truncate episodes after this many steps (None: no limit).
        autoreset: reset finished sub-envs within the step; with False they freeze (keep their
            state and final observation, reward 0) until the next :func:`initial`.
        observation_dtype: cast observations to this dtype (None: as the kernel returns them).
        when: runs the kernel's reset (and draws its noise) only in steps where some episode
            ended (``host_when``, ``jax.lax.cond``); None runs it every step, branch-free (for
            CUDA graphs). Envs whose episodes end together (fixed lengths) gain the most.
        call: calls the kernel's ``reset`` and ``step`` (``direct_call``; a backend's
            ``call_kernel``: numpy's hands the kernel read-only arrays in the calls checked).
        checked: the kinds of call that passed their checks (``check_step``, ``check_reset``,
            and numpy's read-only arrays) in an eager driver, which checks each kind until one
            passes; None checks every call (under ``jit``, ``torch.compile`` and CUDA graphs:
            when traced).
    """
    old_state = carry["state"]
    n = carry["elapsed"].shape[0]
    state, obs, reward, terminated, truncated, info = _checked_call(
        call,
        kernel.step,
        (xp, params, old_state, action, step_draws),
        checked,
        "step",
        lambda outputs: check_step(kernel, xp, old_state, outputs, n),
    )
    obs = _cast_observation(xp, obs, observation_dtype)
    state = dict(state)
    elapsed = carry["elapsed"]
    frozen = carry.get("frozen")
    elapsed = elapsed + 1 if frozen is None else elapsed + xp.astype(~frozen, elapsed.dtype)
    if max_episode_steps is not None:
        truncated = truncated | (elapsed >= max_episode_steps)
    if frozen is not None:
        state = select(xp, frozen, old_state, state)
        reward = xp.where(frozen, xp.zeros_like(reward), reward)
        terminated = xp.where(frozen, carry["final_terminated"], terminated)
        truncated = xp.where(frozen, carry["final_truncated"], truncated)
        obs = select(xp, frozen, carry["final_observation"], obs)
    done = terminated | truncated
    if frozen is not None:
        newly = done & ~frozen
        new_carry: Carry = {
            "state": state,
            "elapsed": elapsed,
            "frozen": frozen | done,
            "final_observation": select(xp, newly, obs, carry["final_observation"]),
            "final_terminated": xp.where(newly, terminated, carry["final_terminated"]),
            "final_truncated": xp.where(newly, truncated, carry["final_truncated"]),
        }
        return KernelTransition(
            new_carry, obs, reward, terminated, truncated, info, elapsed, newly, obs, {}
        )

    def reset_finished(operand: tuple[Any, Any]) -> tuple[Any, Any, Any]:
        state, obs = operand
        draws = reset_draws(done) if callable(reset_draws) else reset_draws
        reset_state, reset_obs, reset_info = _checked_call(
            call,
            kernel.reset,
            (xp, params, draws, done, state),
            checked,
            "reset",
            lambda outputs: check_reset(kernel, outputs[0], outputs[1], n, state),
        )
        reset_obs = _cast_observation(xp, reset_obs, observation_dtype, copy=False)
        return dict(reset_state), select(xp, done, reset_obs, obs), dict(reset_info)

    def keep(operand: tuple[Any, Any]) -> tuple[Any, Any, Any]:
        return operand[0], operand[1], {}

    if when is None:
        next_state, next_obs, reset_info = reset_finished((state, obs))
    else:
        next_state, next_obs, reset_info = when(xp.any(done), reset_finished, keep, (state, obs))
    next_carry: Carry = {
        "state": next_state,
        "elapsed": xp.where(done, xp.zeros_like(elapsed), elapsed),
    }
    return KernelTransition(
        next_carry, next_obs, reward, terminated, truncated, info, elapsed, done, obs, reset_info
    )


def draw_all(
    draws: tuple[Draw, ...], num_envs: int, sample: Callable[[Draw, tuple[int, ...]], Array]
) -> dict[str, Array]:
    """``{draw.name: sample(draw, (num_envs, *draw.shape))}`` for every request, in order."""
    return {draw.name: sample(draw, (num_envs, *draw.shape)) for draw in draws}
