"""Argument checks shared by the spaces, wrappers and statistics trackers, and by plugins."""

from __future__ import annotations

import math
from collections.abc import Callable, ItemsView, KeysView, Set as AbstractSet
from decimal import Decimal
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._numbers import (
    array_kind,
    decimal_float,
    object_floats,
    refused_kind,
    too_large,
)

__all__ = [
    "IntLike",
    "check_int",
    "check_num_envs",
    "check_ordered",
    "check_real",
    "check_reals",
    "holds_bool",
    "resolve_callable",
    "reward_scaling_args",
    "type_name",
]


# What an integer argument (a count, a length, a limit) accepts: a Python or NumPy int, as
# ``check_int`` does (it rejects bools, which type checkers see as ints).
IntLike = int | np.integer[Any]


def type_name(value: object) -> str:
    """How an error names the type of ``value``: a builtin by its name, any other class by its
    full name (sekai's ``TimeLimit`` is not gymnasium's)."""
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


# The longest array NumPy can make: more sub-envs could not have a batch.
_MAX_NUM_ENVS = int(np.iinfo(np.intp).max)


def check_num_envs(num_envs: object) -> int:
    """``num_envs`` as an int: a Python or NumPy int (not a bool) from 1 to the longest array
    NumPy can make (``TypeError`` / ``ValueError`` naming it otherwise)."""
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)):
        raise TypeError(f"num_envs must be an int, got {type(num_envs).__name__}.")
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}.")
    if num_envs > _MAX_NUM_ENVS:
        raise ValueError(
            f"num_envs must be at most {_MAX_NUM_ENVS} (the longest array NumPy can make), "
            f"got {num_envs}."
        )
    return int(num_envs)


def resolve_callable(
    owner: str, name: str, value: Callable[..., Any] | None, alias: str, alias_value: Any
) -> Callable[..., Any]:
    """Return the callable given as ``name`` or as its alias ``alias`` (exactly one of them)."""
    if value is not None and alias_value is not None:
        raise TypeError(f"{owner}() got both {name!r} and {alias!r}; pass the callable once.")
    func = value if value is not None else alias_value
    if func is None:
        raise TypeError(
            f"{owner}() missing required argument: {name!r} (also accepted as {alias!r})."
        )
    if not callable(func):
        raise TypeError(f"{owner}() argument {name!r} must be callable, got {type(func).__name__}.")
    return func


_PLAIN_NUMBERS = frozenset({float, int})


def holds_bool(value: Any) -> bool:
    """Whether ``value`` is or holds a bool of any library: a JAX or torch bool array too, read
    as :func:`~sekai._numbers.array_kind` reads it (NumPy turns ``[True, 2]`` into ints, and
    ``[jnp.array(True), 0.5]`` into floats, silently)."""
    kind = type(value)
    if kind is float or kind is int:  # the common items of a list: no further checks
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "b" or (
            value.dtype == object and any(holds_bool(v) for v in value.ravel().tolist())
        )
    if isinstance(value, (list, tuple)):
        # A list of Python floats and ints (a reward per sub-env, per step) is checked in C.
        return not _PLAIN_NUMBERS.issuperset(map(type, value)) and any(map(holds_bool, value))
    if isinstance(value, (bool, np.generic)):
        return isinstance(value, (bool, np.bool_))
    return array_kind(value) == "b"


def check_int(owner: str, name: str, value: Any, minimum: int) -> int:
    """Validate an integer argument (bools rejected) that must be ``>= minimum``; both errors
    start with ``owner``: ``TypeError`` for what is not an int, ``ValueError`` below
    ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an int, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value}.")
    return int(value)


def check_bool(owner: str | None, name: str, value: Any) -> bool:
    """A flag argument: a bool (NumPy's too), not any object Python would read as true;
    the error starts with ``owner`` when it is given."""
    if not isinstance(value, (bool, np.bool_)):
        prefix = "" if owner is None else f"{owner}: "
        raise TypeError(f"{prefix}{name} must be a bool, got {type_name(value)}.")
    return bool(value)


def check_ordered(owner: str | None, name: str, value: object) -> None:
    """Refuse an unordered collection for an argument whose order matters: a set, a frozenset
    or another ``collections.abc.Set`` raises ``TypeError`` (starting with ``owner`` when it
    is given). Dict key and item views keep insertion order and pass, as does anything else
    (the caller checks what it accepts)."""
    if isinstance(value, AbstractSet) and not isinstance(value, (KeysView, ItemsView)):
        prefix = "" if owner is None else f"{owner}: "
        items = f"{len(value)} item" + ("" if len(value) == 1 else "s")
        raise TypeError(
            f"{prefix}{name} must be given in order, got a {type_name(value)} of {items}, "
            "which has no order; pass a list or tuple in the order wanted."
        )


def check_real(owner: str, name: str, value: Any) -> float:
    """A real-number argument as a float: any real number (NumPy's, ``Decimal``, a 0-d array)
    but not a bool, a string, None or an array of several; ranges are the caller's to check,
    so that their messages can say what the number means.

    Raises:
        TypeError: what is not one real number.
        ValueError: a finite number beyond float64 (an int, a Decimal), which ``float()``
            would make infinite or refuse with a bare ``OverflowError``.
    """
    refused = isinstance(value, (bool, np.bool_, str, bytes, complex)) or value is None
    if isinstance(value, np.ndarray):
        refused = value.ndim != 0 or value.dtype.kind not in "iuf"
    if not refused:
        try:
            result = decimal_float(value) if isinstance(value, Decimal) else float(value)
        except OverflowError:
            raise ValueError(f"{owner}: {name} must be a number, got {too_large(value)}.") from None
        except (TypeError, ValueError):
            pass
        else:
            # A finite longdouble beyond float64 becomes inf without an OverflowError.
            if math.isinf(result) and _finite_array_number(value):
                raise ValueError(f"{owner}: {name} must be a number, got {too_large(value)}.")
            return result
    raise TypeError(f"{owner}: {name} must be a number, got {type(value).__name__}.")


def check_reals(owner: str, name: str, value: Any) -> NDArray[np.float64]:
    """A real number, or an array of them (a list, a NumPy or other library's array), as a new
    float64 array: one number is checked by :func:`check_real`; an array must hold real numbers
    only, not bools, strings or None, which ``np.asarray(value, float)`` would silently make
    0/1, parse or make NaN. Shapes are the caller's to check.

    Raises:
        TypeError: what is not a number or an array of numbers.
        ValueError: a finite number beyond float64 (as :func:`check_real`).
    """
    if not isinstance(value, (list, tuple)) and getattr(value, "ndim", 0) == 0:
        if holds_bool(value):  # a 0-d bool array of another library, which float() takes
            raise TypeError(f"{owner}: {name} must be a number, got bool.")
        return np.array(check_real(owner, name, value), dtype=np.float64)
    expected = f"{owner}: {name} must be a number or an array of numbers"
    if holds_bool(value):
        raise TypeError(f"{expected}, got bools.")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        if isinstance(value, (list, tuple)):
            raise TypeError(f"{expected}, got a ragged {type_name(value)}.") from None
        # Another library's array NumPy cannot read (a torch bfloat16 tensor).
        raise TypeError(
            f"{expected}, got a {type_name(value)} NumPy cannot read ({exc})."
        ) from None
    if array.dtype == object:
        kind = refused_kind(array)
        if kind is not None:
            raise TypeError(f"{expected}, got an array holding {_KIND_NAMES.get(kind, kind)}.")
        try:
            return object_floats(array)
        except OverflowError as exc:
            raise ValueError(f"{expected}, got {too_large(exc.args[0])}.") from None
        except (TypeError, ValueError):  # an object no float cast can read
            raise TypeError(f"{expected}, got an array holding objects.") from None
    if array.dtype.kind not in "iuf" and not (
        array.dtype.kind == "V" and np.can_cast(array.dtype, np.float64)  # bfloat16 (ml_dtypes)
    ):
        raise TypeError(f"{expected}, got an array of dtype {array.dtype}.")
    return array.astype(np.float64)


# How check_reals names the refused kinds of item_kind.
_KIND_NAMES = {
    "None": "None",
    "b": "bools",
    "U": "strings",
    "S": "bytes",
    "c": "complex numbers",
    "M": "dates",
    "m": "time spans",
}


def _finite_array_number(value: Any) -> bool:
    """Whether ``value`` is a finite NumPy float (a longdouble float() may still make inf)."""
    return isinstance(value, (np.floating, np.ndarray)) and bool(np.isfinite(value))


def reward_scaling_args(owner: str, gamma: Any, epsilon: Any) -> tuple[float, float]:
    """``(gamma, epsilon)`` of the reward normalizers: gamma in [0, 1], epsilon finite > 0."""
    gamma = check_real(owner, "gamma", gamma)
    epsilon = check_real(owner, "epsilon", epsilon)
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}.")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon}.")
    return gamma, epsilon
