"""MaskedBox: a padded set of up to ``max_size`` Box elements with a validity mask."""

from __future__ import annotations

import collections.abc as cabc
import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from sekai.spaces._bounds import bound_from_json, exact_ints, normalise_shape
from sekai.spaces._format import format_bound
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.jsonable import register_space_type
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.space import SeedLike, Space

__all__ = ["MaskedBox"]


def _inside(element: Box, values: NDArray[Any]) -> NDArray[np.bool_]:
    """Where ``values`` (broadcast against the element shape) lie within the element's bounds.

    Float values are compared as the element dtype stores them: 0.1 given as float64 is the
    bound 0.1 of a float32 Box once stored, though it is not equal to float32(0.1).
    """
    dt = element.dtype
    if dt.kind == "f" and values.dtype != dt:
        with np.errstate(over="ignore"):  # too large for dt: inf, outside finite bounds
            values = values.astype(dt)
    inside: NDArray[np.bool_] = (values >= element.low) & (values <= element.high)
    return inside


def _numbers(element: Box, x: Any, name: str) -> NDArray[Any]:
    """``x`` (``name`` in errors) as an array of numbers for ``element``: Python ints of an
    integer element by value, exactly, as ``Box.contains`` takes them (``exact_ints`` where
    NumPy would round them to float64 or hold them as objects).

    Raises:
        TypeError: ``x`` does not hold numbers.
    """
    arr = np.asarray(x)
    if arr.dtype.kind in "fO" and element._by_value(x):
        ints = exact_ints(x)
        if ints is not None:
            return ints
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}.")
    return arr


class MaskedBox(Dict):
    """Variable-size observations: ``{"values": Box((max_size, *shape)), "mask": MultiBinary}``.

    Row ``i`` of ``values`` holds an element when ``mask[i] == 1``; empty rows hold
    ``fill_value``. Being a Dict, every Dict utility (flatten, batching, ...) applies.

    Args:
        low: Lower bound of an element (scalar or array).
        high: Upper bound of an element (scalar or array).
        shape: Shape of one element.
        max_size: Number of slots (>= 1).
        dtype: dtype of the values (default float32).
        fill_value: Value of empty rows (default ``element_space.zero()``), within bounds.
        seed: Seed, as for a Dict.
    """

    _kind: ClassVar[str] = "MaskedBox"

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: Any = None,
        *,
        max_size: int,
        dtype: Any = np.float32,
        fill_value: Any = None,
        seed: SeedLike | cabc.Mapping[Any, Any] = None,
    ) -> None:
        element = Box(low, high, shape, dtype)
        if isinstance(max_size, (bool, np.bool_)) or not isinstance(max_size, (int, np.integer)):
            raise TypeError(f"max_size must be an int, got {max_size!r}.")
        if max_size < 1:
            raise ValueError(f"max_size must be >= 1, got {max_size}.")
        max_size = int(max_size)
        fill = element.zero() if fill_value is None else self._check_fill(element, fill_value)
        fill.setflags(write=False)
        reps = (max_size,) + (1,) * len(element.shape)
        values = Box(np.tile(element.low, reps), np.tile(element.high, reps), dtype=element.dtype)
        self._element = element
        self._max_size = max_size
        self._fill: NDArray[Any] = fill
        self._fill_rows = np.tile(fill, reps)
        super().__init__({"values": values, "mask": MultiBinary(max_size)}, seed=seed)

    @staticmethod
    def _check_fill(element: Box, fill_value: Any) -> NDArray[Any]:
        raw = _numbers(element, fill_value, "fill_value")
        try:
            raw = np.broadcast_to(raw, element.shape)
        except ValueError:
            raise ValueError(
                f"fill_value of shape {raw.shape} cannot be broadcast to the element shape "
                f"{element.shape}."
            ) from None
        if not bool(_inside(element, raw).all()):
            raise ValueError("fill_value must lie within [low, high].")  # core.md's text
        fill = raw.astype(element.dtype)
        if element.dtype.kind != "f" and not bool((fill == raw).all()):
            raise ValueError(f"fill_value must hold whole numbers for dtype {element.dtype}.")
        return fill

    # -- properties ------------------------------------------------------------------------

    @property
    def element_space(self) -> Box:
        """The Box of one element."""
        return self._element

    @property
    def element_shape(self) -> tuple[int, ...]:
        """Shape of one element."""
        return self._element.shape

    @property
    def value_dtype(self) -> np.dtype[Any]:
        """dtype of the values."""
        return self._element.dtype

    @property
    def max_size(self) -> int:
        """Number of slots."""
        return self._max_size

    @property
    def fill_value(self) -> NDArray[Any]:
        """Value of empty rows (an array of the element shape)."""
        out: NDArray[Any] = self._fill.copy()
        return out

    def __setitem__(self, key: Any, value: Space[Any]) -> None:
        raise TypeError("The sub-spaces of a MaskedBox cannot be replaced.")

    # -- building samples ------------------------------------------------------------------

    def empty(self) -> dict[str, NDArray[Any]]:
        """A sample with every slot empty."""
        return {
            "values": self._fill_rows.copy(),
            "mask": np.zeros(self._max_size, dtype=np.int8),
        }

    def pack(self, values: Any, slots: Any = None) -> dict[str, NDArray[Any]]:
        """Place ``k`` rows (shape ``(k, *element_shape)``) in ``slots`` (default the first k).

        Raises:
            TypeError: values that are not numbers.
            ValueError: too many values, a values/slots length mismatch, bad slots, or values
                outside the element space (NaN, out of bounds, fractional for an integer dtype).
        """
        shape = self._element.shape
        v = _numbers(self._element, values, "values")
        if v.size == 0 and v.shape[1:] != shape:
            v = np.zeros((0, *shape), dtype=self.value_dtype)
        if v.ndim != len(shape) + 1 or v.shape[1:] != shape:
            raise ValueError(f"values must have shape (k, *{shape}), got {v.shape}.")
        self._check_values(v)
        k = v.shape[0]
        if k > self._max_size:
            raise ValueError(f"Got {k} values but the space has only {self._max_size} slots.")
        if slots is None:
            idx = np.arange(k)
        else:
            idx = np.asarray(slots).reshape(-1)
            if idx.size != k:
                raise ValueError(f"Got {k} values but {idx.size} slots.")
            if idx.size and (
                idx.dtype.kind not in "iu"
                or len(set(idx.tolist())) != idx.size
                or int(idx.min()) < 0
                or int(idx.max()) >= self._max_size
            ):
                raise ValueError(f"slots must be distinct indices in [0, {self._max_size}).")
            # An empty list of slots (no values) arrives as float64: index with no integers.
            idx = idx.astype(np.intp, copy=False)
        out = self.empty()
        out["values"][idx] = v
        out["mask"][idx] = 1
        return out

    def _check_values(self, v: NDArray[Any]) -> None:
        """Raise unless every row of ``v`` is a member of the element space once stored."""
        element = self._element
        rows = v.reshape(len(v), math.prod(element.shape))
        inside = _inside(element, v).reshape(rows.shape)
        if not bool(inside.all()):
            i = int(np.argmin(inside.all(1)))
            j = int(np.argmin(inside[i]))
            value = rows[i, j : j + 1].tolist()[0]  # a Python number (exact ints: one already)
            at = ", ".join(str(a) for a in (i, *np.unravel_index(j, element.shape)))
            if isinstance(value, float) and math.isnan(value):
                raise ValueError(
                    f"values contain NaN at values[{at}]; elements of {element!r} must lie "
                    "within [low, high]."
                )
            raise ValueError(
                f"values must lie within [low, high]: values[{at}] = {value} is outside "
                f"{element!r}."
            )
        if element.dtype.kind != "f" and v.dtype.kind == "f" and not bool((v == np.floor(v)).all()):
            raise ValueError(f"values must hold whole numbers for dtype {element.dtype}.")

    def unpack(self, x: cabc.Mapping[str, Any]) -> tuple[NDArray[Any], NDArray[np.intp]]:
        """``(values of occupied slots, their slot indices)`` of one sample (the inverse of
        ``pack``).

        Raises:
            ValueError: ``x`` is not one sample: not a dict of ``'values'`` and ``'mask'``, a
                mask that is not ``(max_size,)`` entries of 0 and 1, or values not of shape
                ``(max_size, *element_shape)`` (a batch of samples included). Only the shapes
                and the mask are checked, not the values' bounds (``contains`` does that).
        """
        values, mask = self._parts(x)
        slots = np.flatnonzero(mask)
        return values[slots], slots

    def _parts(self, x: Any) -> tuple[NDArray[Any], NDArray[Any]]:
        """``x``'s values and mask as arrays, once their shapes and the mask's 0/1 entries say
        it is one sample (``unpack``)."""
        problem: str | None
        if not isinstance(x, cabc.Mapping):
            problem = f"it is a {type(x).__name__}, not a dict of 'values' and 'mask'"
        elif "mask" not in x or "values" not in x:
            problem = f"it has no {'mask' if 'mask' not in x else 'values'!r}"
        else:
            mask, values = np.asarray(x["mask"]), np.asarray(x["values"])
            problem = self._mask_problem(mask)
            expected = (self._max_size, *self._element.shape)
            if problem is None and values.shape != expected:
                problem = f"its values have shape {values.shape}, expected {expected}"
            if problem is None:
                return values, mask
        raise ValueError(f"The argument of unpack() is not a sample of {self!r}: {problem}.")

    def _mask_problem(self, mask: NDArray[Any]) -> str | None:
        """What makes ``mask`` no slot mask of one sample, or None."""
        size = self._max_size
        if mask.shape != (size,):
            problem = f"its mask has shape {mask.shape}, expected ({size},), one entry per slot"
            if mask.ndim == 2 and mask.shape[1] == size:
                problem += (
                    f" (a batch of {len(mask)} samples: unpack each, as unpack(sample) for "
                    "sample in iterate(space, batch))"
                )
            return problem
        binary = (mask == 0) | (mask == 1) if mask.dtype.kind in "biuf" else np.zeros(size, bool)
        if bool(binary.all()):
            return None
        bad = mask[int(np.argmin(binary))].item()
        return f"its mask holds {bad!r}, expected 0 (empty) or 1 (occupied) in each slot"

    # -- sampling and membership -----------------------------------------------------------

    def sample(self, mask: Any = None) -> dict[str, NDArray[Any]]:
        """Occupy each slot with probability 1/2 (or per ``mask``: 1 full, 0 empty, -1/2 free).

        Raises:
            TypeError, ValueError: ``mask`` is not an array of shape ``(max_size,)`` of those.
        """
        values = self._spaces["values"].sample()
        try:
            occupied = self._spaces["mask"].sample(mask)
        except (TypeError, ValueError) as exc:
            # The slot mask's own error names MultiBinary, a part the user never built.
            wanted = (
                f"MaskedBox.sample() takes a mask of shape ({self._max_size},), one entry per "
                "slot: 1 occupied, 0 empty, -1 or 2 either"
            )
            if isinstance(mask, cabc.Mapping):
                raise TypeError(
                    f"{wanted}; got a {type(mask).__name__}, but a MaskedBox is sampled with one "
                    "slot array, not a dict of masks."
                ) from None
            raise type(exc)(f"{wanted} ({exc})") from None
        empty = occupied == 0
        values[empty] = self._fill_rows[empty]
        return {"values": values, "mask": occupied}

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a valid packed set: mask valid, rows in bounds, empty rows = fill."""
        if not isinstance(x, cabc.Mapping) or len(x) != 2 or "values" not in x or "mask" not in x:
            return False
        mask = x["mask"]
        if not self._spaces["mask"].contains(mask):
            return False
        box = self._spaces["values"]
        assert isinstance(box, Box)
        stored = box._compared(x["values"])  # the values as Box.contains compares them
        if stored is None:
            return False
        full = np.asarray(mask) == 1
        inside = (stored >= box.low) & (stored <= box.high)
        if not bool(inside[full].all()):
            return False
        return bool((stored[~full] == self._fill_rows[~full]).all())

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MaskedBox)
            and self._element == other._element
            and self._max_size == other._max_size
            and bool(np.array_equal(self._fill, other._fill))
        )

    __hash__ = None

    def __repr__(self) -> str:
        e = self._element
        dt = e.dtype
        text = (
            f"MaskedBox({format_bound(e.low, dt)}, {format_bound(e.high, dt)}, {e.shape}, "
            f"max_size={self._max_size}, {dt}"
        )
        if self._fill.size and bool(self._fill.any()):
            text += f", fill_value={format_bound(self._fill, dt)}"
        return text + ")"

    def to_jsonable(self) -> dict[str, Any]:
        """The element bounds, shape, max_size, dtype and fill_value as JSON."""
        e = self._element
        return {
            "type": "MaskedBox",
            "low": e.low.tolist(),
            "high": e.high.tolist(),
            "shape": list(e.shape),
            "max_size": self._max_size,
            "dtype": str(e.dtype),
            "fill_value": self._fill.tolist(),
        }

    @classmethod
    def from_jsonable(cls, d: cabc.Mapping[str, Any]) -> MaskedBox:
        """Rebuild a MaskedBox from ``to_jsonable()``'s dict; its values are checked as
        ``MaskedBox()`` checks them."""
        shape = normalise_shape(d["shape"])
        return cls(
            bound_from_json(d, "low", shape),
            bound_from_json(d, "high", shape),
            shape,
            max_size=d["max_size"],
            dtype=d["dtype"],
            fill_value=bound_from_json(d, "fill_value", shape),
        )


register_space_type("MaskedBox", MaskedBox)
