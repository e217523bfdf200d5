"""FunctionalEnv: an array kernel as pure ``reset(key, params)`` / ``step(key, state, action,
params)`` functions of JAX arrays, autoreset and time limit included (the PureJaxRL way)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import jax
import jax.numpy as jnp
from sekai._args import check_num_envs
from sekai.registry._build import effective_steps, merge_kwargs, refuse_kernel_wrappers
from sekai.registry.api import spec as registered_spec
from sekai.registry.kernels import load_kernel
from sekai.registry.spec import EnvSpec
from sekai.vector._time_limit import check_max_episode_steps
from sekai.vector.kernel import ArrayKernel, Draw
from sekai.vector.kernel_backend import (
    bool_dtype,
    check_action_shape,
    index_dtype,
    kernel_actions,
    refuse_never_valid,
)
from sekai.vector.kernel_params import (
    checked_params,
    converted_params,
    replaced_params,
    settable_fields,
)
from sekai.vector.kernel_step import (
    KernelReset,
    KernelTransition,
    dynamic_fields,
    initial,
    observation_dtypes,
    transition,
    with_fields,
)

__all__ = [
    "X64_OFF",
    "FunctionalEnv",
    "check_x64",
    "draw",
    "float_dtype",
    "make_functional",
    "narrow",
    "x64",
]

Params = dict[str, jax.Array]


def x64() -> bool:
    """Whether ``jax_enable_x64`` is on (64-bit floats and ints)."""
    config: Any = jax.config  # untyped in some JAX versions
    return bool(config.read("jax_enable_x64"))


def float_dtype() -> Any:
    """float64 when ``jax_enable_x64`` is on, else float32 (read when an env is built)."""
    return jnp.float64 if x64() else jnp.float32


#: How to get float64 from JAX, for the errors of a float64 env or dtype without x64.
X64_OFF = (
    "JAX computes in float32 unless its 64-bit mode is on; call "
    "jax.config.update('jax_enable_x64', True)"
)


def check_x64(dtype: Any) -> None:
    """Refuse to run an env built in ``dtype`` float64 once ``jax_enable_x64`` is off: JAX would
    truncate its float64 arrays to float32 (and int64 to int32) while it reports float64."""
    if dtype == jnp.float64 and not x64():
        raise ValueError(
            "this env was built in float64, with jax_enable_x64 on, which is now off: "
            f"{X64_OFF} again before resetting or stepping it (or build a new env, in float32)."
        )


def draw(key: jax.Array, draws: tuple[Draw, ...], num_envs: int, dtype: Any) -> dict[str, Any]:
    """The random numbers a kernel requests, one subkey per request (in order)."""
    if not draws:
        return {}
    keys = jax.random.split(key, len(draws))
    out = {}
    for sub, request in zip(keys, draws):
        shape = (num_envs, *request.shape)
        if request.distribution == "uniform":
            out[request.name] = jax.random.uniform(sub, shape, dtype)
        else:
            out[request.name] = jax.random.normal(sub, shape, dtype)
    return out


class FunctionalEnv:
    """``num_envs`` sub-envs of a kernel as pure functions: no state of its own, so ``reset``
    and ``step`` can be jitted, vmapped (e.g. over params or keys) and scanned.

    ``step`` splits ``key`` for the step's noise and for the autoreset of the sub-envs whose
    episode ends (same-step autoreset: the returned observation is the new episode's first,
    ``final_observation`` the one it ended with).

    Attributes:
        kernel: the env's kernel.
        num_envs: the leading axis of every array.
        default_params: the kernel's float parameters that ``set_attr`` changes on the
            stateful env, as a dict of JAX scalars/arrays; pass a changed copy to
            ``reset``/``step``. The others are fixed when it is built (static ones, and those
            the stateful env refuses as read-only, such as a replayed history): rebuild to
            change them.
        observation_space, action_space: those of one sub-env.

    Args:
        kernel: the env's kernel.
        num_envs: the leading axis of every array.
        max_episode_steps: the time limit (None: none).
        autoreset: reset finished sub-envs within ``step`` (else they freeze).
        observation_dtype: the dtype(s) observations are cast to (default: the observation
            space's, narrowed to 32 bits without x64).
        params: the kernel's params to start from (default: ``kernel.params``); its static
            fields are fixed for this object.
    """

    def __init__(
        self,
        kernel: ArrayKernel[Any],
        num_envs: int,
        *,
        max_episode_steps: int | None = None,
        autoreset: bool = True,
        observation_dtype: Any = None,
        params: Any = None,
    ) -> None:
        self.kernel = kernel
        self.num_envs = check_num_envs(num_envs)
        self.max_episode_steps = check_max_episode_steps(
            max_episode_steps, counter="the functional API (sekai.jax.make_functional)"
        )
        self.autoreset = autoreset
        self.dtype = float_dtype()
        self.observation_space = kernel.observation_space
        self.action_space = kernel.action_space
        if observation_dtype is None:
            observation_dtype = observation_dtypes(kernel.observation_space, narrow)
        self.observation_dtype = observation_dtype
        checked = checked_params(kernel)
        self._template = checked if params is None else params
        # Here, on the host: the params given to reset and step are traced.
        kernel.check_params(jnp, self._template, self.dtype)
        converted = {
            name: self._convert(value) for name, value in dynamic_fields(self._template).items()
        }
        # Those set_attr changes: derived fields (``init=False``) follow the others
        # (``derive``), and read-only ones (a replayed history, the arrays whose shapes it
        # fixes) have values the static fields were computed from.
        settable = settable_fields(kernel, self._template) - set(kernel.read_only) - kernel.unused
        self.default_params: Params = {
            name: value for name, value in converted.items() if name in settable
        }
        self._defaults = with_fields(self._template, converted)
        # The fields the params' dataclass derives (``init=False``) that travel as arrays:
        # computed again for the params given, by ``derive`` or, concrete, by the dataclass.
        self._derived = {
            field.name
            for field in dataclasses.fields(self._template)
            if not field.init and field.name in converted
        }
        self._index_dtype = index_dtype(self.action_space, narrow)
        self._bool_dtype = bool_dtype(self.action_space, self.dtype)
        # The kernel's reset info keys in its order, recorded when ``reset`` is traced.
        self._reset_order: list[str] = []
        self._reset = jax.jit(self._traced_reset)

    def _convert(self, value: Any) -> jax.Array:
        array = np.asarray(value)
        return jnp.asarray(array, dtype=self.dtype if array.dtype.kind == "f" else None)

    def _check_params_type(self, params: Any) -> None:
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"params must be a dict of {type(self.kernel).__name__}'s params (keys among "
                f"{sorted(self.default_params)}) or None, got {type(params).__name__}."
            )

    def _params(self, params: Mapping[str, Any] | None) -> Any:
        """The kernel's params with ``params`` (names of ``default_params``) in place, and the
        fields derived from them computed again."""
        if params is None:
            return self._defaults
        return self._derived_from(self._given(params))

    def _derived_from(self, fields: Mapping[str, Any]) -> Any:
        """The kernel's params with ``fields`` (``_given``'s) in place and, where the params
        have a ``derive(xp)`` method, the derived fields it computes from them."""
        replaced = with_fields(self._defaults, fields)
        derive = getattr(replaced, "derive", None)  # the derived fields follow those given
        return replaced if derive is None else with_fields(replaced, derive(jnp))

    def _given(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The fields to replace for ``params``: those given, checked (``_check_given``), and,
        for concrete values, the fields their dataclass derived (as ``set_attr`` has them),
        which ``derive`` computes again where there is one. Traced values of params whose
        dataclass derives fields and has no ``derive`` keep the fields derived when the env
        was built: ``__post_init__`` cannot run on them (accelerators.md)."""
        return dict(self._check_given(params))

    def _check_given(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """``params`` to run with: refused when of another type or with names ``reset`` and
        ``step`` do not take and, when their values are concrete, checked and converted as the
        stateful env's ``set_attr`` checks and converts them."""
        self._check_params_type(params)
        kernel = type(self.kernel).__name__
        taken = sorted(self.default_params)
        # Worded as the stateful env's set_attr refuses them.
        read_only = [
            f"{name!r} is read-only: {reason}"
            for name, reason in self.kernel.read_only.items()
            if name in params
        ]
        if read_only:
            raise ValueError(
                f"params of {kernel}: {'; '.join(read_only)}. reset and step take {taken}."
            )
        for name in sorted(set(params) & self.kernel.unused):
            self.kernel.check_set(name, params[name])  # the env's ValueError, as set_attr's
        fields = {field.name for field in dataclasses.fields(self._template)}
        fixed = sorted(set(params) & (fields - set(self.default_params)))
        if fixed:
            raise ValueError(
                f"params {fixed} of {kernel} are fixed when the FunctionalEnv is built (static: "
                "shapes and Python branches depend on them, or derived from the others): pass "
                f"the env's arguments that set them to make_functional() instead; reset and "
                f"step take {taken}."
            )
        unknown = sorted(set(params) - fields)
        if unknown:  # a typo would otherwise leave the default in place, silently
            raise ValueError(f"unknown params {unknown} for {kernel}; its params are {taken}.")
        # Traced values (under jit, vmap or grad) have no value to check without a host sync
        # in every call: the values checked are those known when the call is traced. Next to
        # a traced value, constants are converted and their kind and shape checked, not their
        # values: the env's rules relate params (a price floor from s0 and sigma), and the
        # traced ones' values are unknown.
        concrete = {name: value for name, value in params.items() if not _traced(value)}
        if not concrete:
            return params
        if len(concrete) < len(params):
            where = f"params of {kernel}: "
            converted = converted_params(self._template, concrete, where)
            checked = {name: self._convert(value) for name, value in converted.items()}
        else:
            checked = self._checked_values(concrete)
        return {**params, **checked}

    def _checked_values(self, params: Mapping[str, Any]) -> Params:
        """Concrete ``params`` checked as ``set_attr`` checks them (``replaced_params``: kind,
        shape and the env's rules; ``kernel.check_params``: what this float dtype can run),
        converted as it converts them (a list to an array, one number broadcast), with the
        fields the dataclass derived from them (as ``set_attr`` has them)."""
        where = f"params of {type(self.kernel).__name__}: "
        checked = replaced_params(self._template, params, where)
        self.kernel.check_params(jnp, checked, self.dtype)
        return {name: self._convert(getattr(checked, name)) for name in [*params, *self._derived]}

    def _actions(self, action: Any) -> jax.Array:
        """``action`` checked and cast as the stateful JAX mode does, from its shape and dtype
        alone (static under ``jit``): its values are not checked."""
        actions = jnp.asarray(action)
        check_action_shape(self.action_space, self.num_envs, actions)
        refuse_never_valid(jnp, self.action_space, actions.dtype)
        return kernel_actions(jnp, actions, self._index_dtype, self._bool_dtype)

    def reset(self, key: jax.Array, params: Mapping[str, Any] | None = None) -> KernelReset:
        """Start every sub-env's episode: ``(state, observation, info)``.

        Runs under ``jax.jit`` even when called eagerly, so that its arrays are buffers of
        their own: a jitted ``step`` may donate the state (``donate_argnums``) while the
        observation and info stay readable.

        Args:
            key: a JAX PRNG key.
            params: None (``default_params``), or a dict of some of ``default_params``' names.
                Concrete values are checked as the stateful env's ``set_attr`` checks them;
                values traced by an enclosing ``jit`` or ``vmap`` are not (see accelerators.md).

        Raises:
            TypeError: ``params`` is not a dict.
            ValueError: a name of ``params`` that is read-only, fixed when built, or unknown; a
                concrete value the env, or this float dtype, cannot run; an env built in
                float64 once ``jax_enable_x64`` is off.
        """
        check_x64(self.dtype)
        # Before jit, which would misread another type, and traces the values (checked, with
        # the fields their dataclass derived, when concrete).
        fields = None if params is None else self._given(params)
        result: KernelReset = self._reset(key, fields)
        return result._replace(info=in_order(result.info, self._reset_order))

    def _traced_reset(self, key: jax.Array, fields: Mapping[str, Any] | None) -> KernelReset:
        params = self._defaults if fields is None else self._derived_from(fields)
        result = self._start(key, params)
        self._reset_order = list(result.info)
        return result

    def _start(self, key: jax.Array, p: Any) -> KernelReset:
        """``reset`` with the kernel's params as they are (a stateful env's, checked when set)."""
        draws = draw(key, self.kernel.reset_draws(p), self.num_envs, self.dtype)
        return initial(
            self.kernel,
            jnp,
            p,
            draws,
            self.num_envs,
            autoreset=self.autoreset,
            observation_dtype=self.observation_dtype,
        )

    def step(
        self,
        key: jax.Array,
        state: Any,
        action: jax.Array,
        params: Mapping[str, Any] | None = None,
    ) -> KernelTransition:
        """Advance every sub-env; finished ones restart (or freeze without autoreset).

        ``action`` is checked as the stateful JAX mode checks it from its shape and dtype
        (``(num_envs, *action_space.shape)``; integral floats and other integer widths act as
        a Discrete's integers) but, as that takes a host sync, not for its values: an index out
        of range, or a fraction (cast down), gives undefined results.

        Returns:
            A ``KernelTransition``: ``state``, ``observation``, ``reward``, ``terminated``,
            ``truncated``, ``info``, ``elapsed``, ``done``, ``final_observation``,
            ``reset_info``.

        Raises:
            ValueError: ``action`` of the wrong shape; ``params`` and ``jax_enable_x64`` as
                for ``reset``.
            TypeError: ``action`` of a dtype no action of the space has; ``params`` not a dict.
        """
        check_x64(self.dtype)  # under jit: when traced, which a change of the flag makes again
        return self._advance(key, state, self._actions(action), self._params(params))

    def _advance(self, key: jax.Array, state: Any, action: jax.Array, p: Any) -> KernelTransition:
        """``step`` with the kernel's params as they are and ``action`` as the kernel takes it
        (a stateful env's, checked before)."""
        step_key, reset_key = jax.random.split(key)
        n, dtype = self.num_envs, self.dtype
        return transition(
            self.kernel,
            jnp,
            p,
            state,
            action,
            draw(step_key, self.kernel.step_draws(p), n, dtype),
            # Drawn inside the lax.cond of the autoreset, so only in steps where an episode
            # ended; the key is the same either way, so are the numbers.
            lambda done: draw(reset_key, self.kernel.reset_draws(p), n, dtype),
            max_episode_steps=self.max_episode_steps,
            autoreset=self.autoreset,
            observation_dtype=self.observation_dtype,
            when=cond,
        )

    def _stateful_params(self, fields: Mapping[str, Any]) -> Any:
        """The kernel's params of a stateful env's dynamic ``fields`` (every one, derived and
        read-only ones included, as ``set_attr`` checked and derived them)."""
        return with_fields(self._defaults, fields)

    def __repr__(self) -> str:
        return (
            f"FunctionalEnv({type(self.kernel).__name__}, num_envs={self.num_envs}, "
            f"{jnp.dtype(self.dtype).name})"
        )


def _traced(value: Any) -> bool:
    """Whether ``value`` holds a value traced by ``jit``, ``vmap`` or ``grad``."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))


def in_order(info: Mapping[str, Any], order: list[str]) -> Mapping[str, Any]:
    """``info`` with its keys in ``order``, the kernel's (a jitted function returns its dicts
    sorted by key); as it is when its keys are others (the reset info of a step without
    autoreset: ``{}``)."""
    if len(order) != len(info) or set(order) != info.keys():
        return info
    return {key: info[key] for key in order}


def cond(pred: Any, yes: Callable[[Any], Any], no: Callable[[Any], Any], operand: Any) -> Any:
    """``jax.lax.cond`` for the driver's autoreset: ``no``'s result gets ``yes``'s structure and
    dtypes (its missing reset infos are zeros), as ``lax.cond`` requires."""
    shape = jax.eval_shape(yes, operand)

    def otherwise(operand: Any) -> Any:
        state, obs, _ = no(operand)
        info = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shape[2])
        state, obs = jax.tree_util.tree_map(
            lambda x, s: jnp.asarray(x, s.dtype), (state, obs), (shape[0], shape[1])
        )
        return state, obs, info

    return jax.lax.cond(pred, yes, otherwise, operand)


def narrow(dtype: np.dtype[Any]) -> Any:
    """A numpy dtype as JAX can hold it: 64-bit types become 32-bit without x64."""
    if x64() or dtype.itemsize < 8:
        return jnp.dtype(dtype)
    return {"f": jnp.float32, "i": jnp.int32, "u": jnp.uint32}.get(dtype.kind, jnp.dtype(dtype))


def make_functional(
    id: str | EnvSpec,
    num_envs: int = 1,
    *,
    max_episode_steps: int | None = None,
    **kwargs: Any,
) -> FunctionalEnv:
    """The functional form of a registered env that has an array kernel.

    Args:
        id: a registered ID or spec (its ``kernel_entry_point`` is used).
        num_envs: the leading sub-env axis of every array.
        max_episode_steps: the time limit: None keeps the spec's, an int overrides it, -1
            removes it (as for ``make_vec``).
        **kwargs: the env's keyword arguments (over the spec's).

    Raises:
        ValueError: the spec has ``additional_wrappers``, which have no per-env objects to wrap
            here (as ``make_vec``'s kernel modes refuse them).

    Example:
        >>> env = make_functional("CartPole-v1", 4)
        >>> state, obs, info = env.reset(jax.random.PRNGKey(0))
        >>> t = env.step(jax.random.PRNGKey(1), state, jnp.zeros(4, jnp.int32))
    """
    spec = id if isinstance(id, EnvSpec) else registered_spec(id)
    refuse_kernel_wrappers(
        spec,
        "make_functional",
        False,
        "register the env without them and apply their transformation to what step returns",
    )
    kernel = load_kernel(spec, merge_kwargs(spec, kwargs), call="sekai.jax.make_functional()")
    steps = effective_steps(spec, max_episode_steps)
    return FunctionalEnv(kernel, num_envs, max_episode_steps=steps)
