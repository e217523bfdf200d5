"""Stateless action wrappers for Box action spaces: ClipAction and RescaleAction."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sekai._args import check_reals
from sekai._box_actions import DOUBLES, box_action, real_array
from sekai._clip import clip
from sekai.core.env import Env
from sekai.core.wrapper import ActionWrapper
from sekai.error import InvalidAction
from sekai.spaces import Box, Space
from sekai.utils.action_mask import get_action_mask, supports_action_mask

__all__ = ["ClipAction", "RescaleAction"]

# The smallest normal number of each dtype AffineMap.cast maps to on Python floats: a product
# below float64's may have underflowed, a nonzero value below the dtype's may underflow in the
# cast, and NumPy reports either under np.errstate(under=...).
_SMALLEST_NORMAL: dict[np.dtype[Any], float] = {
    dtype: float(np.finfo(dtype.type).smallest_normal) for dtype in DOUBLES
}
_F64_SMALLEST_NORMAL = _SMALLEST_NORMAL[np.dtype(np.float64)]
_INF = float("inf")
# Up to this many dimensions, the map on Python floats (about 0.2 us a dimension) beats NumPy's
# (about 3 us, whatever the size up to a few dozen).
_FEW_DIMS = 8


def require_box(owner: str, space: Space[Any], what: str = "action") -> Box:
    """Return ``space`` if it is a Box, else raise the wrappers' common TypeError."""
    if not isinstance(space, Box):
        raise TypeError(f"{owner} requires a Box {what} space, got {type(space).__name__}.")
    return space


def check_bound_fits(
    owner: str,
    name: str,
    bound: NDArray[Any],
    dtype: np.dtype[Any],
    shown: NDArray[Any] | None = None,
) -> None:
    """Refuse a finite bound (float64, or of an integer dtype) that a Box of ``dtype`` cannot
    hold as given.

    Box would clip an out-of-range bound (or turn an overflowing one into inf) with at most a
    warning, and the wrapper's map or cast, built from the bound as given, would then disagree
    with its declared space. ``shown``: the values to quote, where ``bound`` was derived from
    them (a float bound truncated for an integer cast); default ``bound``.
    """
    flat = bound.reshape(-1)
    quoted = flat if shown is None else shown.reshape(-1)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            bad = np.isinf(flat.astype(dtype))
        if bool(bad.any()):
            raise ValueError(
                f"{owner}: {name} {flat[bad][0].item()!r} overflows {dtype} "
                f"(largest {float(np.finfo(dtype).max)!r})."
            )
        return
    info = np.iinfo(dtype)
    if flat.dtype.kind in "iu":  # compared exactly, as Python ints
        exact = flat.astype(object)
        outside = (exact < info.min) | (exact > info.max)
    else:
        fractional = flat != np.floor(flat)
        if bool(fractional.any()):
            raise ValueError(
                f"{owner}: {name} {float(flat[fractional][0])!r} is fractional, but the "
                f"space's dtype {dtype} holds whole numbers only."
            )
        lo, hi = float(info.min), float(info.max)
        # float(info.max) may round up (2**63 for int64): then that value itself is out of range.
        outside = (flat < lo) | ((flat >= hi) if hi > info.max else (flat > hi))
    if bool(outside.any()):
        raise ValueError(
            f"{owner}: {name} {quoted[outside][0]!s} is outside the range of {dtype} "
            f"[{info.min}, {info.max}]."
        )


def rescale_bounds(
    owner: str,
    names: tuple[str, str],
    low: Any,
    high: Any,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The new bounds of a rescaling wrapper as float64 arrays of ``shape``: numbers (or arrays
    of them) broadcastable to ``shape``, finite, ``low < high`` everywhere, and held by ``dtype``
    as given (:func:`check_bound_fits`). ``names`` are the arguments' names.
    """
    low_name, high_name = names
    low_a = check_reals(owner, low_name, low)
    high_a = check_reals(owner, high_name, high)
    try:
        new_low = np.broadcast_to(low_a, shape).copy()
        new_high = np.broadcast_to(high_a, shape).copy()
    except ValueError:
        raise ValueError(
            f"{low_name} and {high_name} must be scalars or broadcastable to {shape}."
        ) from None
    if not (np.all(np.isfinite(new_low)) and np.all(np.isfinite(new_high))):
        raise ValueError(f"{low_name} and {high_name} must be finite.")
    if np.any(new_low >= new_high):
        raise ValueError(f"{low_name} must be strictly less than {high_name}.")
    check_bound_fits(owner, low_name, new_low, dtype)
    check_bound_fits(owner, high_name, new_high, dtype)
    return new_low, new_high


class AffineMap:
    """The affine map of ``[src_low, src_high]`` onto ``[dst_low, dst_high]``, per dimension,
    computed in float64 and clipped to the destination. Where ``src_low == src_high`` there is
    no range to map (dividing by it would give NaN): those dimensions map to ``dst_low``.

    Args:
        src_low, src_high: the finite source bounds.
        dst_low, dst_high: the finite destination bounds, of the same shape.
    """

    def __init__(
        self,
        src_low: NDArray[Any],
        src_high: NDArray[Any],
        dst_low: NDArray[Any],
        dst_high: NDArray[Any],
    ) -> None:
        self._src_low = src_low.astype(np.float64)
        self._dst_low = dst_low.astype(np.float64)
        self._dst_high = dst_high.astype(np.float64)
        span = src_high.astype(np.float64) - self._src_low
        degenerate = span == 0
        self._scale = np.where(
            degenerate, 0.0, (self._dst_high - self._dst_low) / np.where(degenerate, 1.0, span)
        )
        # A few dimensions map on Python floats (``cast``): the same IEEE double operations
        # without NumPy's per-call costs. Not onto a bound of -0.0: where a value equals a bound,
        # NumPy's maximum/minimum may return either zero (it depends on the SIMD loop).
        self._dims: list[tuple[float, float, float, float]] | None = None
        dst = np.concatenate([self._dst_low.ravel(), self._dst_high.ravel()])
        if (
            self._src_low.ndim == 1
            and len(self._src_low) <= _FEW_DIMS
            and not np.signbit(dst[dst == 0]).any()
        ):
            self._dims = list(
                zip(
                    self._src_low.tolist(),
                    self._scale.tolist(),
                    self._dst_low.tolist(),
                    self._dst_high.tolist(),
                )
            )

    def __call__(self, x: ArrayLike) -> NDArray[np.float64]:
        mapped = self._dst_low + (np.asarray(x, dtype=np.float64) - self._src_low) * self._scale
        clipped: NDArray[np.float64] = clip(mapped, self._dst_low, self._dst_high)
        return clipped

    def cast(self, x: ArrayLike, dtype: np.dtype[Any]) -> NDArray[Any]:
        """``self(x).astype(dtype, copy=False)``: the same array, warnings and errors.

        A 1-D float array of a few entries maps on Python floats, which compute the same IEEE
        double operations. Where one of them would raise a floating-point flag that NumPy
        reports (an overflow, an invalid operation, an underflow: a non-finite or a tiny nonzero
        result), NumPy maps the array instead and reports it as ``np.errstate`` says.
        """
        dims = self._dims
        smallest = _SMALLEST_NORMAL.get(dtype)
        if (
            dims is not None
            and smallest is not None
            and type(x) is np.ndarray
            and x.dtype in DOUBLES
            and x.shape == self._src_low.shape
        ):
            out = []
            for value, (src_low, scale, dst_low, dst_high) in zip(x.tolist(), dims):
                product = (value - src_low) * scale
                mapped = dst_low + product
                if not -_INF < mapped < _INF or (
                    abs(product) < _F64_SMALLEST_NORMAL and value != src_low and scale
                ):
                    break  # an overflow, an invalid operation or (maybe) an underflow
                # maximum, then minimum: where a value equals a bound, both are the same number
                if mapped < dst_low:
                    mapped = dst_low
                if mapped > dst_high:
                    mapped = dst_high
                if mapped and abs(mapped) < smallest:
                    break  # the cast may underflow
                out.append(mapped)
            else:
                return np.array(out, dtype=dtype)
        return self(x).astype(dtype, copy=False)


class IntegerClip:
    """Clip numbers of any dtype into integer bounds, then cast them to the bounds' dtype.

    Casting first would wrap out-of-range values around (-1 becomes 255 in uint8), and clipping
    in the type NumPy promotes to can be inexact (int64 with uint64 promotes to float64; int64's
    maximum rounds up to 2**63 as a float). So each input dtype gets the bounds, once, in its
    own type: clamped to its range for integers, rounded inwards for floats.

    Args:
        low, high: the bounds, integer arrays of one dtype.
    """

    def __init__(self, low: NDArray[Any], high: NDArray[Any]) -> None:
        self.dtype = low.dtype
        self._low, self._high = low, high
        self._plans: dict[np.dtype[Any], tuple[NDArray[Any], NDArray[Any], bool]] = {}

    def __call__(self, x: NDArray[Any]) -> NDArray[Any]:
        if x.dtype.kind not in "iuf":  # bools, and Python ints beyond 64 bits (objects)
            x = x.astype(np.float64)
        plan = self._plans.get(x.dtype) or self._plan(x.dtype)
        low, high, recheck = plan
        out: NDArray[Any] = np.clip(x, low, high).astype(self.dtype)
        if recheck:  # some bounds lie beyond x's type (or between two floats): clip exactly
            np.clip(out, self._low, self._high, out=out)
        return out

    def _plan(self, dtype: np.dtype[Any]) -> tuple[NDArray[Any], NDArray[Any], bool]:
        """The bounds in ``dtype``'s working type, and whether they can miss the true ones."""
        low, high = self._low.astype(object), self._high.astype(object)  # exact Python ints
        if dtype.kind == "f":
            # Large ints round to the nearest float (or overflow): step those back inside.
            with np.errstate(over="ignore"):
                flow, fhigh = low.astype(dtype), high.astype(dtype)
            flow = np.where(flow.astype(object) < low, np.nextafter(flow, np.inf), flow)
            fhigh = np.where(fhigh.astype(object) > high, np.nextafter(fhigh, -np.inf), fhigh)
            plan = (flow, fhigh, bool((flow > fhigh).any()))
        else:
            info = np.iinfo(dtype)
            lo, hi = int(info.min), int(info.max)
            recheck = bool((low > hi).any() or (high < lo).any())
            plan = (
                np.clip(low, lo, hi).astype(dtype),
                np.clip(high, lo, hi).astype(dtype),
                recheck,
            )
        plan = (_scalar_if_uniform(plan[0]), _scalar_if_uniform(plan[1]), plan[2])
        self._plans[dtype] = plan
        return plan


def _scalar_if_uniform(bound: NDArray[Any]) -> Any:
    """``bound``'s single value if all its entries are equal (np.clip is ~3x faster with scalar
    bounds on large arrays such as images), else ``bound``."""
    if bound.size and bool((bound == bound.flat[0]).all()):
        return bound.flat[0]
    return bound


class ClipAction(ActionWrapper[Any, NDArray[Any], NDArray[Any]]):
    """Clip every action to the bounds of the env's Box action space (the space is unchanged)."""

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        space = require_box("ClipAction", env.action_space)
        self._low, self._high, self._dtype = space.low, space.high, space.dtype
        self._space = space  # the Box clipped to, named by InvalidAction (no property lookup)
        # Integer Boxes clip before casting (casting first wraps); float casts cannot wrap.
        self._integer = IntegerClip(space.low, space.high) if space.dtype.kind in "iu" else None

    def action(self, action: ArrayLike) -> NDArray[Any]:
        """Return ``action`` clipped into ``[low, high]`` with the space's dtype.

        Raises:
            sekai.InvalidAction: an action that is not real numbers (strings, complex numbers,
                a dict), of another shape (clipping would broadcast it), or with a NaN for an
                integer Box (no integer stands for it).
        """
        x = real_array(action, self._space, self._low.shape)
        if x.dtype is not self._dtype:
            integer = self._integer
            if integer is None:
                x = x.astype(self._dtype)
            else:
                if x.dtype.kind == "f" and np.isnan(x).any():
                    raise InvalidAction(action, self._space)
                return integer(x)
        clipped: NDArray[Any] = clip(x, self._low, self._high)
        return clipped

    def reverse_action(self, action: NDArray[Any]) -> NDArray[Any]:
        """Identity: every env action is already a valid wrapper action."""
        return action


class RescaleAction(ActionWrapper[Any, NDArray[Any], NDArray[Any]]):
    """Expose the env's bounded Box actions as ``Box(min_action, max_action)``, mapped affinely.

    Actions are mapped onto the env's range, cast to its dtype and clipped. When the env has an
    ``action_mask()``, masked components are sent as the env space's ``zero()``.

    Args:
        env: an env with a Box action space with finite bounds.
        min_action: the new lower bound (scalar or array broadcastable to the shape).
        max_action: the new upper bound; strictly greater than ``min_action`` everywhere.

    Raises:
        TypeError: a bound that is not a number or an array of numbers (a bool, a string, None).
        ValueError: a bound the env's dtype cannot hold as given (out of its range, fractional
            for an integer dtype, overflowing to inf).
    """

    def __init__(self, env: Env[Any, Any], min_action: ArrayLike, max_action: ArrayLike) -> None:
        super().__init__(env)
        space = require_box("RescaleAction", env.action_space)
        if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise ValueError("RescaleAction requires a Box action space with finite bounds.")
        shape = space.shape
        self.min_action, self.max_action = rescale_bounds(
            "RescaleAction",
            ("min_action", "max_action"),
            min_action,
            max_action,
            shape,
            space.dtype,
        )
        self._env_space = space
        self._to_env = AffineMap(self.min_action, self.max_action, space.low, space.high)
        self._from_env = AffineMap(space.low, space.high, self.min_action, self.max_action)
        self._masked = supports_action_mask(env)
        self.action_space = Box(self.min_action, self.max_action, shape=shape, dtype=space.dtype)

    def action(self, action: ArrayLike) -> NDArray[Any]:
        """Map a wrapper action onto the env's range (cast and clipped).

        Raises:
            sekai.InvalidAction: what the envs refuse for a Box action (core.md §1), with the
                action as given and this wrapper's space: another shape (the map would
                broadcast it), a NaN or an infinity, or no real numbers.
        """
        x = box_action(action, self.action_space, self.min_action.shape)
        out = self._to_env.cast(x, self._env_space.dtype)
        if self._masked:
            mask = get_action_mask(self.env)
            if mask is not None:
                allowed = np.broadcast_to(np.asarray(mask) != 0, out.shape)
                out = np.where(allowed, out, self._env_space.zero())
        return out

    def reverse_action(self, action: ArrayLike) -> NDArray[Any]:
        """Map an env action back into ``[min_action, max_action]`` (clipped); where the env's
        ``low == high`` any action maps to ``min_action``."""
        return self._from_env.cast(action, self._env_space.dtype)
