"""JaxBackend: drives a KernelVecEnv with jitted FunctionalEnv calls and a JAX key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

import jax
import jax.numpy as jnp
from sekai.jax.functional import (
    X64_OFF,
    FunctionalEnv,
    check_x64,
    cond,
    float_dtype,
    in_order,
    narrow,
)
from sekai.vector.kernel_backend import KernelBackend, ResetFn, StepFn
from sekai.vector.kernel_step import KernelReset, KernelTransition, dynamic_fields

if TYPE_CHECKING:
    from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = ["JaxBackend", "float_dtype", "key_from_generator"]


def key_from_generator(generator: np.random.Generator) -> jax.Array:
    """The JAX key a driver seeded with ``generator`` starts from: two uint32 words drawn from it
    as a typed threefry key (``jax.random.key_data`` gives the words back), whatever
    ``jax_default_prng_impl`` says: the same seed gives the same trajectory in any setting."""
    words = jnp.asarray(generator.integers(2**32, size=2, dtype=np.uint32))
    return jax.random.wrap_key_data(words, impl="threefry2x32")


def _device(device: Any) -> Any:
    """``device`` as a ``jax.Device`` (a platform name picks that platform's device)."""
    if device is None or isinstance(device, jax.Device):
        return device
    if not isinstance(device, str):
        raise TypeError(
            f"device must be a jax.Device or a platform name such as 'cpu' or 'gpu', got "
            f"{type(device).__name__}."
        )
    platform, _, index = device.partition(":")
    platform = "gpu" if platform == "cuda" else platform
    try:
        devices = jax.devices(platform)
    except RuntimeError as exc:
        raise ValueError(f"device {device!r}: JAX has no {platform!r} devices ({exc}).") from None
    if not index:
        return devices[0]
    if not index.isdigit() or int(index) >= len(devices):
        raise ValueError(
            f"device {device!r}: the index must be one of 0..{len(devices) - 1} "
            f"({len(devices)} {platform} device(s))."
        )
    return devices[int(index)]


def _check_dtype(dtype: Any, current: Any) -> None:
    """Refuse a float dtype other than the one ``jax_enable_x64`` gives, saying how to get it."""
    try:
        asked = np.dtype(dtype)
    except TypeError:
        asked = None
    if asked == current:
        return
    if asked == np.float64:
        raise ValueError(f"dtype='float64': {X64_OFF} before building the env.")
    if asked == np.float32:
        raise ValueError(
            "dtype='float32': JAX computes in float64 while jax_enable_x64 is on; call "
            "jax.config.update('jax_enable_x64', False) before building the env."
        )
    raise TypeError(
        f"dtype must be 'float32' or 'float64' (the one jax_enable_x64 gives), got {dtype!r}."
    )


class JaxBackend(KernelBackend):
    """JAX: the kernel's reset and step, autoreset and draws included, in one jitted call each.

    Args:
        device: a ``jax.Device`` to put the state on, or a platform name (``"cpu"``,
            ``"gpu"``, ``"tpu"``, optionally ``":index"``; ``"cuda"`` means ``"gpu"``) for that
            platform's device (None: JAX's default device).
        dtype: None, or the float dtype ``jax_enable_x64`` gives (float64 on, float32 off),
            checked: JAX's setting decides it.
    """

    name = "jax"

    def __init__(self, device: Any = None, dtype: Any = None) -> None:
        self.xp = jnp
        self.float_dtype = float_dtype()
        if dtype is not None:
            _check_dtype(dtype, self.float_dtype)
        self.device = _device(device)
        self.key: jax.Array = key_from_generator(np.random.default_rng())
        # The kernel's info keys in its order, recorded when reset and step are traced.
        self._info_order: dict[str, list[str]] = {}

    def convert(self, value: Any) -> jax.Array:
        array = np.asarray(value)
        out = jnp.asarray(array, dtype=self.float_dtype if array.dtype.kind == "f" else None)
        return out if self.device is None else jax.device_put(out, self.device)

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def conditional(self) -> Any:
        return cond

    def compiled(self, fn: Any) -> Any:
        return jax.jit(fn)

    def numpy_dtype(self, dtype: np.dtype[Any]) -> Any:
        return narrow(dtype)

    def seed(self, generator: np.random.Generator) -> None:
        self.key = key_from_generator(generator)
        if self.device is not None:
            self.key = jax.device_put(self.key, self.device)

    def actions(self, actions: Any) -> jax.Array:
        array = jnp.asarray(actions)
        return array if self.device is None else jax.device_put(array, self.device)

    def is_device_array(self, value: Any) -> bool:
        return isinstance(value, jax.Array)

    def check_ready(self) -> None:
        check_x64(self.float_dtype)

    def synchronize(self, values: Any) -> None:
        # A jitted call returns its outputs before they are computed.
        jax.block_until_ready(values)

    def functional(self, env: KernelVecEnv) -> FunctionalEnv:
        """The FunctionalEnv of ``env`` (its kernel with the env's current static params)."""
        return FunctionalEnv(
            env.kernel,
            env.num_envs,
            max_episode_steps=env._max_episode_steps,
            autoreset=env.autoreset,
            observation_dtype=env.observation_dtype,
            params=env.params,
        )

    def build_reset(self, env: KernelVecEnv) -> ResetFn:
        functional = self.functional(env)

        def reset_once(key: jax.Array, params: dict[str, Any]) -> tuple[jax.Array, KernelReset]:
            key, sub = jax.random.split(key)
            result = functional._start(sub, functional._stateful_params(params))
            self._info_order["reset"] = list(result.info)  # traced: the kernel's own dict
            return key, result

        # jax.jit called, not used as a decorator: without JAX installed mypy sees it untyped.
        pure: Callable[..., tuple[jax.Array, KernelReset]] = jax.jit(reset_once)

        def reset(params: Any) -> KernelReset:
            result: KernelReset
            self.key, result = pure(self.key, dynamic_fields(params))
            return result._replace(info=self._in_order(result.info, "reset"))

        return reset

    def build_step(self, env: KernelVecEnv) -> StepFn:
        functional = self.functional(env)

        def step_once(
            key: jax.Array, params: dict[str, Any], carry: Any, action: jax.Array
        ) -> tuple[jax.Array, KernelTransition]:
            key, sub = jax.random.split(key)
            # The actions were checked and cast (DeviceActions) before.
            result = functional._advance(sub, carry, action, functional._stateful_params(params))
            self._info_order["step"] = list(result.info)
            return key, result

        pure: Callable[..., tuple[jax.Array, KernelTransition]] = jax.jit(step_once)

        def step(params: Any, carry: Any, action: Any) -> KernelTransition:
            result: KernelTransition
            self.key, result = pure(self.key, dynamic_fields(params), carry, action)
            return result._replace(
                info=self._in_order(result.info, "step"),
                reset_info=self._in_order(result.reset_info, "reset"),
            )

        return step

    def _in_order(self, info: Mapping[str, Any], call: str) -> Mapping[str, Any]:
        """``info`` with its keys in the order the kernel's ``call`` gives them, as the other
        backends report them (a jitted function returns its dicts sorted by key)."""
        return in_order(info, self._info_order.get(call, []))
