"""Parameter validation shared by the market models."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai._args import holds_bool
from sekai.finance._values import is_int, is_real, real_array, real_float, scalar, too_large

__all__ = [
    "as_float",
    "as_positive_int",
    "check_correlation",
    "check_correlation_matrix",
    "check_generator",
    "format_dt",
    "per_asset",
    "read_only",
    "resolve_n_assets",
]

_EXACT = 2.0**53  # float64 holds every integer below this exactly

_BOUNDS = {
    None: "",
    "ge0": " >= 0",
    "gt0": " > 0",
    "unit": " in [-1, 1]",
    "prob": " in [0, 1]",
}


def _within(values: np.ndarray, bound: str | None) -> bool:
    if not np.all(np.isfinite(values)):
        return False
    if bound == "ge0":
        return bool(np.all(values >= 0.0))
    if bound == "gt0":
        return bool(np.all(values > 0.0))
    if bound == "unit":
        return bool(np.all(np.abs(values) <= 1.0))
    if bound == "prob":
        return bool(np.all((values >= 0.0) & (values <= 1.0)))
    return True


def as_float(name: str, value: object, bound: str | None = None) -> float:
    """Return ``value`` as a float after checking it is a finite real number within ``bound``.

    Args:
        name: parameter name used in the error message.
        value: the value to check, or a 0-d array of it (bools and timedelta64 are refused).
        bound: ``None``, ``"ge0"``, ``"gt0"``, ``"unit"`` or ``"prob"``.

    Raises:
        ValueError: naming the parameter, the bound and the value.
    """
    value = scalar(value)
    if not is_real(value):
        raise ValueError(
            f"{name} must be a finite number{_BOUNDS[bound]}, got {type(value).__name__} {value!r}"
        )
    result = real_float(value)
    if result is None:
        raise ValueError(f"{name} must be a finite number{_BOUNDS[bound]}, got {too_large(value)}")
    if not _within(np.asarray(result), bound):
        raise ValueError(f"{name} must be a finite number{_BOUNDS[bound]}, got {result!r}")
    return result


def as_positive_int(
    name: str, value: object, *, minimum: int = 1, not_int: type[Exception] = ValueError
) -> int:
    """Return ``value`` (or a 0-d array of it, as ``as_float`` takes one) as an int
    ``>= minimum``.

    Raises:
        ValueError: below ``minimum``; also for a non-integer (bool included), the rule for a
            model's parameters (finance.md §10), unless ``not_int`` names another error (the
            ``TypeError`` of ``simulate()``'s arguments).
    """
    number = scalar(value)
    if not is_int(number):  # named as given: a bfloat16 array is no float64
        raise not_int(f"{name} must be an int >= {minimum}, got {type(value).__name__} {value!r}")
    if int(number) < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {int(number)}")
    return int(number)


def per_asset(name: str, value: object, bound: str | None = None) -> np.ndarray:
    """Return a scalar or 1-D per-asset parameter as a read-only float64 array (0-d for scalars).

    Raises:
        ValueError: for a non-numeric value, a wrong dimensionality, or entries outside ``bound``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a finite number{_BOUNDS[bound]}, got bool {value!r}")
    if holds_bool(value):
        raise ValueError(
            f"{name} must be a finite number{_BOUNDS[bound]} or a 1-D array of them, not bools; "
            f"got {value!r}"
        )
    try:
        array = real_array(name, value)  # TypeError for strings and other non-numbers
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a finite number{_BOUNDS[bound]} or a 1-D array of them, "
            f"got {type(value).__name__} ({exc})"
        ) from exc
    if array.ndim > 1 or array.size == 0:
        raise ValueError(
            f"{name} must be a scalar or a non-empty 1-D per-asset array, got shape {array.shape}"
        )
    if not _within(array, bound):
        shown = float(array) if array.ndim == 0 else array.tolist()
        what = "a finite number" if array.ndim == 0 else "finite numbers"
        raise ValueError(f"{name} must be {what}{_BOUNDS[bound]}, got {shown!r}")
    array.flags.writeable = False
    return array


def resolve_n_assets(
    n_assets: object, arrays: dict[str, np.ndarray], corr: np.ndarray | None
) -> int:
    """Infer the number of assets from array parameters and ``corr``, or check the given one.

    Raises:
        ValueError: when the lengths disagree with each other or with ``n_assets``.
    """
    sizes: dict[str, int] = {name: a.shape[0] for name, a in arrays.items() if a.ndim == 1}
    if corr is not None:
        sizes["corr"] = corr.shape[0]
    if n_assets is not None:
        n = as_positive_int("n_assets", n_assets)
        wrong = {k: v for k, v in sizes.items() if v != n}
        if wrong:
            raise ValueError(
                f"n_assets={n} disagrees with the length of {', '.join(wrong)} "
                f"({', '.join(str(v) for v in wrong.values())}); leave n_assets out to follow them"
            )
        return n
    distinct = set(sizes.values())
    if len(distinct) > 1:
        listed = ", ".join(f"{k} has {v}" for k, v in sizes.items())
        raise ValueError(f"per-asset parameters disagree on the number of assets: {listed}")
    return distinct.pop() if distinct else 1


def check_correlation(corr: object) -> np.ndarray | None:
    """Validate a correlation matrix; return it as a read-only float64 array (or None).

    Raises:
        ValueError: unless ``corr`` is square, finite, symmetric and unit-diagonal within 1e-8
            and positive definite.
    """
    if corr is None:
        return None
    try:
        matrix = real_array("corr", corr)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"corr must be a square matrix of numbers, got {type(corr).__name__}"
        ) from exc
    return check_correlation_matrix(matrix)


def check_correlation_matrix(matrix: np.ndarray, n: int | None = None, end: str = "") -> np.ndarray:
    """Check that a float64 array is a correlation matrix; mark it read-only and return it.

    Args:
        matrix: the candidate, already converted to float64.
        n: the number of rows and columns it must have, or None for any square shape.
        end: appended to every error message (the envs end theirs with a full stop).

    Raises:
        ValueError: unless ``matrix`` is square (``(n, n)`` when given), finite, symmetric and
            unit-diagonal within 1e-8 and positive definite.
    """
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ValueError(f"corr must be a square (n, n) matrix, got shape {matrix.shape}{end}")
    if n is not None and matrix.shape != (n, n):
        raise ValueError(
            f"corr must have shape ({n}, {n}) (one row per asset), got {matrix.shape}{end}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"corr must be finite{end}")
    if not np.allclose(matrix, matrix.T, rtol=0.0, atol=1e-8):
        raise ValueError(f"corr must be symmetric (within 1e-8){end}")
    if not np.allclose(np.diag(matrix), 1.0, rtol=0.0, atol=1e-8):
        raise ValueError(f"corr must have a unit diagonal (within 1e-8){end}")
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"corr must be positive definite{end}") from exc
    return read_only(matrix)


def check_generator(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a numpy Generator, else raise ``TypeError`` with a hint."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy Generator, got {type(rng).__name__}; "
            "use np.random.default_rng(seed) (inside an env: self.rng)"
        )
    return rng


def format_dt(dt: float) -> str:
    """Format a step length compactly: ``1/252`` when it is the reciprocal of an integer.

    ``repr(dt)`` otherwise, and where ``1 / dt`` is 2**53 or more: no float64 reciprocal is
    then an exact integer, and below about 5.6e-309 ``1 / dt`` overflows to inf.
    """
    inverse = 1.0 / dt
    if not inverse < _EXACT:
        return repr(dt)
    rounded = round(inverse)
    if rounded >= 1 and abs(inverse - rounded) <= 1e-9 * inverse:
        return f"1/{rounded}"
    return repr(dt)


def format_param(value: Any) -> str:
    """Format a parameter for a model's repr: scalars as floats, arrays as ``[...]``."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return repr(float(value)) if value.ndim == 0 else "[...]"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_param(v) for v in value) + ")"
    return repr(value)


def read_only(array: np.ndarray) -> np.ndarray:
    """Mark ``array`` read-only and return it."""
    array.flags.writeable = False
    return array


def broadcast(array: np.ndarray, n: int) -> np.ndarray:
    """Return a read-only ``(n,)`` float64 copy of a scalar or per-asset parameter."""
    return read_only(np.broadcast_to(array, (n,)).astype(np.float64, copy=True))


def cholesky(corr: np.ndarray | None) -> np.ndarray | None:
    """Return the read-only lower Cholesky factor of a validated correlation matrix (or None)."""
    return None if corr is None else read_only(np.linalg.cholesky(corr))


def public(array: np.ndarray) -> float | np.ndarray:
    """Return a validated parameter as users passed it: a float, or a read-only 1-D array."""
    return float(array) if array.ndim == 0 else array
