"""Box: a (possibly unbounded) n-dimensional box of integer or floating values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces._array import ArraySpace, numeric_mask
from sekai.spaces._bounds import (
    as_bound,
    bound_from_json,
    check_dtype,
    exact_ints,
    normalise_shape,
    to_float_dtype,
    to_integer_dtype,
)
from sekai.spaces._format import format_bound
from sekai.spaces.jsonable import register_space_type
from sekai.spaces.space import SeedLike

__all__ = ["Box"]

_UNIFORM, _INTEGER, _MIXED = 0, 1, 2
_REJECT, _CHECK_BOUNDS, _ALWAYS_IN, _CAST_FIRST = 0, 1, 2, 3

# Up to this many entries, contains() compares Python scalars: a few hundred ns instead of
# the ~2 us that two NumPy comparisons and reductions cost on tiny arrays.
_SMALL = 16
_F64 = np.dtype(np.float64)


def _rounds_into(bound: NDArray[Any], *, lower: bool) -> NDArray[np.float64]:
    """For each entry ``b`` of a float ``bound`` narrower than float64: the float64 farthest
    outward (down for a lower bound, up for an upper one) that the cast to ``b``'s dtype still
    rounds to ``b`` or inward. That is halfway to ``b``'s outward neighbour when the tie
    rounds to ``b``, else the next float64 inward of halfway."""
    outward, dt, shape = (-np.inf if lower else np.inf), bound.dtype, bound.shape
    bound = bound.reshape(-1)
    value = bound.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        beyond = np.nextafter(bound, dt.type(outward)).astype(np.float64)
        # Past the largest finite value: one more step of its size.
        last = np.isinf(beyond) & np.isfinite(value)
        inward = np.nextafter(bound, dt.type(-outward)).astype(np.float64)
        beyond[last] = 2 * value[last] - inward[last]
        half = (value + beyond) / 2  # exact: float64 has bits to spare
        kept = half.astype(dt) >= bound if lower else half.astype(dt) <= bound
    limits: NDArray[np.float64] = np.where(kept, half, np.nextafter(half, -outward))
    limits[np.isinf(value)] = value[np.isinf(value)]
    limits = limits.reshape(shape)
    limits.setflags(write=False)
    return limits


class Box(ArraySpace[NDArray[Any]]):
    """A box in R^n (or Z^n): every value lies in ``[low, high]`` element-wise.

    Args:
        low: Lower bound, a scalar or an array (``-np.inf`` for unbounded).
        high: Upper bound, a scalar or an array (``np.inf`` for unbounded).
        shape: Shape of a sample (a tuple or an int); bounds are broadcast to it. Without it,
            the bounds' common shape is used.
        dtype: An integer or floating dtype (default float32).
        seed: Seed for the space's generator.
    """

    _derived = (
        "_cast_ok",
        "_full_range",
        "_small",
        "_low_list",
        "_high_list",
        "_zero",
        "_is_bounded",
        "_sample_kind",
        "_u_low",
        "_u_high",
        "_u_terms",
        "_groups",
        "_unbounded_float",
        "_f64_limits",
    )
    _frozen = ("_low", "_high")

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: Any = None,
        dtype: Any = np.float32,
        seed: SeedLike = None,
    ) -> None:
        dt = check_dtype(dtype)
        shape_t = normalise_shape(shape)
        low_a = as_bound("low", low)
        high_a = as_bound("high", high)
        if shape_t is None:
            if low_a.shape != high_a.shape:
                # A scalar bound goes with an array bound, as in gymnasium.
                if low_a.ndim == 0:
                    low_a = np.broadcast_to(low_a, high_a.shape)
                elif high_a.ndim == 0:
                    high_a = np.broadcast_to(high_a, low_a.shape)
                else:
                    raise ValueError(
                        f"low.shape {low_a.shape} != high.shape {high_a.shape}. Provide an "
                        "explicit shape= if broadcasting is intended."
                    )
            shape_t = tuple(int(s) for s in low_a.shape)
        else:
            low_a = self._broadcast("low", low_a, shape_t)
            high_a = self._broadcast("high", high_a, shape_t)
        if dt.kind == "f":
            low_c = to_float_dtype("low", low_a, dt)
            high_c = to_float_dtype("high", high_a, dt)
        else:
            low_c = to_integer_dtype("low", low_a, dt)
            high_c = to_integer_dtype("high", high_a, dt)
        if bool((low_c > high_c).any()):
            raise ValueError("low must be <= high for all dimensions.")
        # Both are fresh C-ordered arrays (np.array / np.empty above), owned by this Box.
        self._low = low_c
        self._high = high_c
        super().__init__(shape_t, dt, None)
        self._setup()
        if seed is not None:
            self.seed(seed)

    @staticmethod
    def _broadcast(name: str, arr: NDArray[Any], shape: tuple[int, ...]) -> NDArray[Any]:
        try:
            return np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueError(
                f"Box {name} of shape {arr.shape} cannot be broadcast to shape {shape}."
            ) from None

    def _setup(self) -> None:
        """Precompute what contains() and sample() need on every call."""
        low, high, dt = self._low, self._high, self.dtype
        low.setflags(write=False)
        high.setflags(write=False)
        self._cast_ok: dict[np.dtype[Any], int] = {}
        self._full_range = dt.kind in "iu" and bool(
            (low == np.iinfo(dt).min).all() and (high == np.iinfo(dt).max).all()
        )
        self._small = low.size <= _SMALL
        self._low_list: list[Any] = low.reshape(-1).tolist() if self._small else []
        self._high_list: list[Any] = high.reshape(-1).tolist() if self._small else []
        # (low, high, low list, high list) for float64 values: built on first use
        self._f64_limits: tuple[Any, Any, list[float], list[float]] | None = None
        # np.asarray: np.clip gives a NumPy scalar for shape (); zero() is an array like sample().
        zero = np.asarray(np.clip(np.zeros(low.shape, dtype=dt), low, high))
        zero.setflags(write=False)
        self._zero: NDArray[Any] = zero
        self._groups: tuple[Any, ...] = ()
        self._u_low: Any = None
        self._u_high: Any = None
        self._u_terms: Any = None  # _uniform_terms() where low/high are not one finite range
        self._unbounded_float = False
        if dt.kind != "f":
            self._is_bounded = (True, True)
            self._sample_kind = _INTEGER
            return
        self._is_bounded = (bool(np.isfinite(low).all()), bool(np.isfinite(high).all()))
        # gymnasium's classes: low == high == -inf is "bounded above" and draws -inf (a member),
        # where isfinite() would draw finite normals outside the space.
        below = low > -np.inf
        above = high < np.inf
        self._unbounded_float = not bool(below.any()) and not bool(above.any())
        # + 0.0 turns -0.0 into 0.0: numpy's uniform refuses Box(0.0, -0.0) as "high < low"
        low64 = low.astype(np.float64).reshape(-1) + 0.0
        high64 = high.astype(np.float64).reshape(-1) + 0.0
        if bool(below.all()) and bool(above.all()):
            self._sample_kind = _UNIFORM
            one_range = low64.size and (low64 == low64[0]).all() and (high64 == high64[0]).all()
            if one_range and math.isfinite(float(high64[0]) - float(low64[0])):
                self._u_low, self._u_high = float(low64[0]), float(high64[0])
            else:
                self._u_terms = self._uniform_terms(low64, high64)
            return
        # Mixed bounds: gymnasium's four groups, drawn in gymnasium's order; flat indices select
        # in C order, exactly like gymnasium's n-d boolean masks.
        self._sample_kind = _MIXED
        below, above = below.reshape(-1), above.reshape(-1)
        unbounded = np.flatnonzero(~below & ~above)
        lowb = np.flatnonzero(below & ~above)
        upp = np.flatnonzero(~below & above)
        both = np.flatnonzero(below & above)
        self._groups = (
            unbounded,
            (lowb, low64[lowb]),
            (upp, high64[upp]),
            (both, self._uniform_terms(low64[both], high64[both])),
        )

    @staticmethod
    def _uniform_terms(low64: NDArray[Any], high64: NDArray[Any]) -> tuple[Any, Any, Any]:
        """``(low, span, wide)`` for uniform draws ``low + span * u`` (``u`` in [0, 1)).

        Where ``high - low`` overflows (float64 bounds beyond +-max/2), the entry is drawn in
        halves: ``low/2 + (high/2 - low/2) * u``, doubled; ``wide`` is then ``(the entries,
        their high)``, else None.
        """
        with np.errstate(over="ignore"):
            span = high64 - low64
        overflows = ~np.isfinite(span)
        if not overflows.any():
            return low64, span, None
        half_low, half_high = low64[overflows] / 2, high64[overflows] / 2
        low64, span = low64.copy(), span.copy()
        low64[overflows], span[overflows] = half_low, half_high - half_low
        return low64, span, (overflows, high64[overflows])

    # -- attributes ------------------------------------------------------------------------

    @property
    def low(self) -> NDArray[Any]:
        """Lower bounds (read-only array of ``dtype``)."""
        return self._low

    @property
    def high(self) -> NDArray[Any]:
        """Upper bounds (read-only array of ``dtype``)."""
        return self._high

    @property
    def is_bounded(self) -> tuple[bool, bool]:
        """``(all lower bounds finite, all upper bounds finite)``; integer Boxes are bounded."""
        return self._is_bounded

    @property
    def is_flattenable(self) -> bool:
        """Boxes always flatten."""
        return True

    def zero(self) -> NDArray[Any]:
        """The sample closest to zero: zeros clipped into ``[low, high]``."""
        out: NDArray[Any] = self._zero.copy()
        return out

    # -- sampling --------------------------------------------------------------------------

    def sample(self, mask: Any = None) -> NDArray[Any]:
        """Draw a sample: uniform, shifted exponential or normal per dimension (gymnasium's rule).

        Integer Boxes draw ``rng.integers(low, high, endpoint=True)``. ``mask`` (broadcastable
        to ``shape``) sets the entries where it is 0 to ``zero()``.
        """
        rng = self._rng if self._rng is not None else self.rng
        kind = self._sample_kind
        if kind == _UNIFORM:
            terms = self._u_terms
            if terms is None:
                out = rng.uniform(self._u_low, self._u_high, self._shape).astype(self._dtype)
            else:
                out = self._uniform(rng, terms).reshape(self._shape)
                out = out.astype(self._dtype)
        elif kind == _INTEGER:
            out = rng.integers(
                self._low, self._high, size=self._shape, dtype=self._dtype, endpoint=True
            )
        else:
            out = self._sample_mixed(rng)
        if mask is not None:
            return self._apply_mask(out, mask)
        return out

    @staticmethod
    def _uniform(rng: np.random.Generator, terms: tuple[Any, Any, Any]) -> NDArray[np.float64]:
        """``rng.uniform(low, high)`` without numpy's slow array-argument path.

        numpy computes ``low + (high - low) * next_double`` per entry; so does this, from the
        same stream of doubles. A range too wide for float64 is drawn in halves (see
        ``_uniform_terms``) where numpy raises.
        """
        low, span, wide = terms
        out: NDArray[np.float64] = rng.random(low.shape)
        out *= span
        out += low
        if wide is not None:
            overflows, high = wide
            with np.errstate(over="ignore"):  # rounding past high/2: kept at high below
                out[overflows] = np.minimum(out[overflows] * 2, high)
        return out

    def _sample_mixed(self, rng: np.random.Generator) -> NDArray[Any]:
        unbounded, (lowb, low_l), (upp, high_u), (both, terms_b) = self._groups
        sample = np.empty(self._low.size)
        if unbounded.size:
            sample[unbounded] = rng.normal(size=unbounded.size)
        if lowb.size:
            sample[lowb] = rng.exponential(size=lowb.size) + low_l
        if upp.size:
            sample[upp] = -rng.exponential(size=upp.size) + high_u
        if both.size:
            sample[both] = self._uniform(rng, terms_b)
        return sample.reshape(self.shape).astype(self.dtype)

    def _apply_mask(self, out: NDArray[Any], mask: Any) -> NDArray[Any]:
        return np.where(self._kept(mask), out, self._zero)

    def _kept(self, mask: Any) -> NDArray[np.bool_]:
        """Where ``mask`` (numbers or bools, broadcastable to the shape) keeps a component: a
        read-only broadcast view, True where the mask is not 0."""
        m = numeric_mask(mask, self)
        try:
            return np.broadcast_to(m != 0, self.shape)
        except ValueError:
            raise ValueError(
                f"A mask for {self!r} must be broadcastable to its shape {self.shape}, got "
                f"shape {m.shape}."
            ) from None

    # -- membership ------------------------------------------------------------------------

    def contains(self, x: Any) -> bool:
        """Whether ``x`` has the right shape, a same-kind castable dtype and lies in bounds.

        Floats of a wider float dtype are compared after the cast to the Box's dtype that
        storing or batching them does, so a float64 value at a float32 bound is inside.
        """
        if not isinstance(x, np.ndarray):
            if self._by_value(x):
                values = self._compared(x)
                return values is not None and bool(
                    (values >= self._low).all() and (values <= self._high).all()
                )
            try:
                x = np.asarray(x)
            except (ValueError, TypeError, OverflowError):
                return False
        if x.shape != self._shape:
            return False
        dt = x.dtype
        ok = self._cast_ok.get(dt)
        if ok is None:
            ok = self._rule(dt)
        if ok != _CHECK_BOUNDS:
            if ok == _CAST_FIRST:
                return self._contains_cast(x)
            return ok == _ALWAYS_IN
        if self._small and type(x) is np.ndarray:  # (a masked array compares its own way)
            # NaN fails both comparisons, as it does in NumPy. A plain loop: all() over a
            # generator costs more than the comparisons themselves here.
            values = x.tolist() if x.ndim == 1 else x.reshape(-1).tolist()
            for v, lo, hi in zip(values, self._low_list, self._high_list):  # noqa: SIM110
                if not lo <= v <= hi:
                    return False
            return True
        if self._unbounded_float:
            return not bool(np.isnan(x).any())
        return bool((x >= self._low).all() and (x <= self._high).all())

    def _contains_cast(self, x: NDArray[Any]) -> bool:
        """contains() for floats that the Box's dtype cannot hold exactly (float64 in a
        float32 Box): whether they lie in bounds once cast to it."""
        if x.dtype != _F64:
            return self.contains(self._as_compared(x))
        # float64: compared with the limits of the values that the cast rounds into the
        # bounds, without the cast (whose overflow guard alone costs about 1 us).
        low, high, lows, highs = self._f64_limits or self._float64_limits()
        if not self._small or type(x) is not np.ndarray:  # as in contains()
            return bool((x >= low).all() and (x <= high).all())
        values = x.tolist() if x.ndim == 1 else x.reshape(-1).tolist()
        for v, lo, hi in zip(values, lows, highs):  # noqa: SIM110
            if not lo <= v <= hi:  # as in contains()
                return False
        return True

    def _rule(self, dt: np.dtype[Any]) -> int:
        """How contains() treats arrays of dtype ``dt`` (computed once per dtype, then cached)."""
        ok = self._cast_ok.get(dt)
        if ok is None:
            ok = self._cast_ok[dt] = self._cast_rule(dt)
        return ok

    def _cast_rule(self, dt: np.dtype[Any]) -> int:
        if not np.can_cast(dt, self.dtype, "same_kind"):
            return _REJECT
        safe = np.can_cast(dt, self.dtype, "safe")
        if self._full_range and safe:
            # Every value of dt is a value of the Box's dtype, and the Box spans them all.
            return _ALWAYS_IN
        if dt.kind == "f" and not safe:
            # Floats the Box's float dtype cannot hold exactly are compared as it stores them
            # (as batching does): 0.1 given as float64 is then the float32 bound 0.1.
            return _CAST_FIRST
        return _CHECK_BOUNDS

    def _float64_limits(self) -> tuple[Any, Any, list[float], list[float]]:
        """The bounds for float64 values, as arrays and (small Boxes) lists: per entry, the
        least and the greatest float64 that the cast to the Box's dtype rounds into
        ``[low, high]`` (to nearest, ties to even)."""
        low, high = _rounds_into(self._low, lower=True), _rounds_into(self._high, lower=False)
        lists = (low.reshape(-1).tolist(), high.reshape(-1).tolist()) if self._small else ([], [])
        self._f64_limits = (low, high, *lists)
        return self._f64_limits

    def _by_value(self, x: Any) -> bool:
        """Whether contains() judges ``x`` by its values whatever NumPy makes of it: Python
        ints (an int, a list or tuple of them) in an integer Box (``[1, 2]`` is in a uint8
        Box, though NumPy makes it int64)."""
        return self._dtype.kind != "f" and (  # type: ignore[union-attr]
            isinstance(x, (list, tuple)) or (isinstance(x, int) and not isinstance(x, bool))
        )

    def _compared(self, x: Any) -> NDArray[Any] | None:
        """``x`` as contains() compares it with the bounds, entry by entry; None when
        contains() refuses it whatever its values: not of the Box's shape, or not of a dtype
        that casts to the Box's (same kind).

        Python ints (``_by_value``) are taken exactly (``exact_ints`` where NumPy would round
        them to float64 or hold them as objects); floats the Box's dtype cannot hold exactly
        are cast to it, as storing them does.
        """
        if not isinstance(x, np.ndarray):
            try:
                arr = np.asarray(x)
            except (ValueError, TypeError, OverflowError):
                return None
            if self._by_value(x):
                if arr.dtype.kind in "fO":
                    ints = exact_ints(x)
                    if ints is None:
                        return None
                    arr = ints
                if arr.dtype.kind in "iuO":  # by value (objects: ints no 64-bit dtype holds)
                    return arr if arr.shape == self._shape else None
            x = arr  # bools and the rest: judged by their dtype, like an array of it
        if x.shape != self._shape or self._rule(x.dtype) == _REJECT:
            return None
        return self._as_compared(x)

    def _as_compared(self, x: NDArray[Any]) -> NDArray[Any]:
        """``x`` (a same-kind array) as contains() compares it with the bounds."""
        if self._rule(x.dtype) != _CAST_FIRST:
            return x
        with np.errstate(over="ignore"):  # too large for the dtype: inf, outside finite bounds
            return x.astype(self._dtype)

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and bool(np.array_equal(self._low, other._low))
            and bool(np.array_equal(self._high, other._high))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        dt = self.dtype
        return (
            f"Box({format_bound(self._low, dt)}, {format_bound(self._high, dt)}, "
            f"{self._shape}, {dt})"
        )

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'Box', 'low': [...], 'high': [...], 'shape': [...], 'dtype': 'float32'}``."""
        return {
            "type": "Box",
            "low": self._low.tolist(),
            "high": self._high.tolist(),
            "shape": list(self.shape),
            "dtype": str(self.dtype),
        }

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> Box:
        """Rebuild a Box from ``to_jsonable()``'s dict; its values are checked as ``Box()``
        checks them."""
        dtype, shape = d["dtype"], normalise_shape(d["shape"])
        low, high = bound_from_json(d, "low", shape), bound_from_json(d, "high", shape)
        return cls(low, high, shape=shape, dtype=dtype)


register_space_type("Box", Box)
