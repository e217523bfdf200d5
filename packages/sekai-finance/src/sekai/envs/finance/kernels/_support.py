"""Small helpers shared by the finance kernels: refusals, dtypes, masked merges."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

from sekai.envs.finance._session import RewardTerm, check_reward_terms

__all__ = [
    "at_least",
    "at_most",
    "check_dtype_range",
    "checked_env",
    "dtype_name",
    "env_float",
    "float_dtype",
    "int_dtype",
    "merge",
    "merge_state",
    "untraceable",
]

Array = Any
T = TypeVar("T")

_INT32_MAX = 2**31 - 1


def checked_env(params: Any, env_class: type[T], keywords: Mapping[str, str]) -> T:
    """Check a session kernel's params by building its env from them (``keywords``: field ->
    the env's keyword), then store the env's checked values back: floats as float64 0-d
    arrays (drivers convert them), ints as ints. Returns the env, for derived values."""
    env = env_class(**{keyword: getattr(params, name) for name, keyword in keywords.items()})
    for name in keywords:
        value = getattr(env, name)
        checked = value if isinstance(value, int) else np.asarray(float(value), np.float64)
        object.__setattr__(params, name, checked)
    return env


def untraceable(env_id: str, argument: str, value: Any, why: str) -> ValueError:
    """The error for an argument an array kernel cannot run (built, not raised)."""
    return ValueError(
        f"{env_id}'s array kernel cannot trace {argument}={value!r}: {why}. Use a supported "
        f"value, or vectorization_mode='native' (or 'sync'), which run any {argument}."
    )


def float_dtype(array: Array) -> Any:
    """The float dtype the driver chose, read off one of its arrays."""
    return array.dtype


def int_dtype(xp: Any, dtype: Any) -> Any:
    """Integers to go with float ``dtype``: int64 with float64, else int32 (JAX without x64)."""
    return xp.int64 if dtype == xp.float64 else xp.int32


def check_dtype_range(
    env_id: str,
    xp: Any,
    float_dtype: Any,
    integers: Mapping[str, int],
    terms: Callable[[], Iterable[RewardTerm]],
    values: Callable[[], Mapping[str, Any]],
) -> None:
    """A session kernel's ``check_params``: in float32 or float16 (JAX: without x64), refuse
    ``integers`` beyond the int32 the kernel then counts in (torch compared an int32 tensor with
    a larger Python int wrongly, JAX raised an unexplained ``OverflowError``) and reward
    ``terms`` beyond the dtype's range (``check_reward_terms``, as the env checks float64).
    float64 returns at once: the params' dataclass checked it as the env does."""
    if float_dtype == xp.float64:
        return
    name = dtype_name(float_dtype)
    for field, value in integers.items():
        if value > _INT32_MAX:
            raise ValueError(
                f"{env_id}'s array kernel counts in int32 when it runs in float32 or float16 "
                f"(JAX: without jax_enable_x64): {field}={value} exceeds 2**31 - 1 = "
                f"{_INT32_MAX}. Run it in float64, use vectorization_mode='native', or keep "
                f"{field} <= {_INT32_MAX}."
            )
    bound = float(xp.finfo(float_dtype).max)
    check_reward_terms(env_id, None, terms(), values(), dtype=name, bound=bound)


def env_float(value: Any) -> Any:
    """One number (an int, a Decimal, a NumPy scalar, a 0-d array) as the float a finance env
    holds it as, for ``host_param``; an array as it is."""
    return value if np.ndim(value) else float(value)


def env_int(value: Any) -> Any:
    """A NumPy integer as the int a finance env holds it as, for ``host_param``; anything else
    as it is."""
    return int(value) if isinstance(value, np.integer) else value


def dtype_name(float_dtype: Any) -> str:
    """The name of a driver's float dtype (``"float32"``), NumPy's, JAX's or torch's."""
    text = str(float_dtype)  # torch's dtypes are no numpy dtypes
    return text.removeprefix("torch.") if text.startswith("torch.") else np.dtype(float_dtype).name


def at_least(xp: Any, x: Array, low: Array | float) -> Array:
    """``maximum(x, low)`` (NaN stays NaN), written with ``where``: array-api-compat's torch
    ``maximum`` with a Python number breaks a ``torch.compile`` graph, and its ``clip`` with a
    number and a tensor copies the number to the device; ``where`` does neither."""
    return xp.where(x < low, low, x)


def at_most(xp: Any, x: Array, high: Array | float) -> Array:
    """``minimum(x, high)`` (NaN stays NaN), as ``at_least``."""
    return xp.where(x > high, high, x)


def merge(xp: Any, mask: Array, new: Array, old: Array | None) -> Array:
    """``new`` where ``mask`` (sub-envs, the leading axis), else ``old`` (all new when None)."""
    if old is None:
        return new
    rows = xp.reshape(mask, (mask.shape[0],) + (1,) * (len(new.shape) - 1))
    return xp.where(rows, new, old)


def merge_state(
    xp: Any, mask: Array, fresh: Mapping[str, Array], state: Mapping[str, Array] | None
) -> dict[str, Array]:
    """Every entry of ``fresh`` merged into ``state`` (``merge``) where ``mask``."""
    return {
        name: merge(xp, mask, value, None if state is None else state[name])
        for name, value in fresh.items()
    }
