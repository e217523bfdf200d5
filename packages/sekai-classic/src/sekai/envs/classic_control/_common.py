"""Helpers shared by the classic-control envs: action checks and reset-option parsing."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.error import InvalidAction
from sekai.spaces import DiscreteAction

__all__ = [
    "F64",
    "DiscreteAction",
    "check_flag",
    "check_options",
    "check_parameter",
    "discrete_action",
    "discrete_actions",
    "python_floats_exact",
    "reset_bounds",
    "to_float",
]

F64 = np.dtype(np.float64)


def python_floats_exact(state: Any, *constants: Any) -> bool:
    """Whether Python-float arithmetic reproduces gymnasium's NumPy-scalar arithmetic exactly.

    It does when ``state`` is a float64 array (or None: not checked) and every constant a
    Python number (or a float64): then both compute in IEEE double. A float32 state or constant
    makes NumPy compute in float32 where Python floats would not, so the envs then step with
    NumPy scalars, as gymnasium does (a state restored from a float32 observation, ``set_attr``
    with ``np.float32(9.8)``).
    """
    if state is not None and (type(state) is not np.ndarray or state.dtype != F64):
        return False
    for value in constants:
        kind = type(value)
        if kind is not float and kind is not int and kind is not np.float64:
            return False
    return True


def discrete_action(action: Any, space: Any, n: int) -> int:
    """``action`` as an int in ``[0, n)``, as ``Discrete(n).contains`` judges it.

    Raises:
        InvalidAction: not an integer (bools and floats included) or out of range.
    """
    if type(action) is int:
        value = action
    elif isinstance(action, np.integer) or (
        isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"
    ):
        value = int(action)
    else:
        raise InvalidAction(action, space)
    if not 0 <= value < n:
        raise InvalidAction(action, space)
    return value


def discrete_actions(actions: Any, space: Any, n: int) -> npt.NDArray[np.int64]:
    """A batch of Discrete actions as an int64 array (values checked in ``[0, n)``)."""
    arr = np.asarray(actions)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise InvalidAction(actions, space)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise InvalidAction(arr.flat[index], space, index=index)
    return arr.astype(np.int64, copy=False)


def check_parameter(owner: str, name: str, value: Any) -> Any:
    """A constructor's number: finite and real (not a bool), returned as given, since its type
    decides the precision NumPy computes in, as in gymnasium."""
    real = isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"
    )
    if isinstance(value, (bool, np.bool_)) or not real:
        raise TypeError(f"{owner}: {name} must be a real number, got {type(value).__name__}.")
    if not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be finite, got {value}.")
    return value


def check_flag(owner: str, name: str, value: Any) -> bool:
    """A constructor's bool (``"no"`` would otherwise switch it on)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be a bool, got {type(value).__name__}.")
    return bool(value)


def check_options(options: Any) -> None:
    """``reset(options=...)`` must be a dict or None."""
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")


def to_float(value: Any) -> float:
    """``float(value)``, or the ``ValueError`` gymnasium raises for a non-numeric option."""
    try:
        return float(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"An option ({value}) could not be converted to a float.") from exc


def reset_bounds(
    options: dict[str, Any] | None, default_low: float, default_high: float
) -> tuple[float, float]:
    """The ``low``/``high`` reset options (gymnasium's ``maybe_parse_reset_bounds``).

    Raises:
        ValueError: an option is not a number, is not finite, ``low > high``, or the range
            ``high - low`` is not finite (bounds too far apart to subtract; gymnasium's draw
            raises OverflowError there), as for Pendulum's ``x_init``/``y_init``.
    """
    check_options(options)
    if options is None:
        return default_low, default_high
    low = to_float(options["low"]) if "low" in options else default_low
    high = to_float(options["high"]) if "high" in options else default_high
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"The reset bounds must be finite, got low={low}, high={high}.")
    if low > high:
        raise ValueError(f"Lower bound ({low}) must be lower than higher bound ({high}).")
    if not math.isfinite(high - low):
        raise ValueError(
            f"The reset bounds low={low} and high={high} must give a finite range high - low."
        )
    return low + 0.0, high + 0.0  # -0.0 is 0.0: NumPy's draw refuses high=-0.0 above low=0.0
