"""MultiDiscrete: an array of independent Discrete values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._args import holds_bool
from sekai.spaces._array import ArraySpace, allowed_indices, numeric_mask
from sekai.spaces.discrete import Discrete
from sekai.spaces.jsonable import register_space_type
from sekai.spaces.space import SeedLike

__all__ = ["MultiDiscrete"]

_I64 = np.iinfo(np.int64)


def _int_array(name: str, value: Any) -> NDArray[np.int64]:
    if holds_bool(value):
        raise TypeError(f"MultiDiscrete {name} must hold integers, not bools.")
    try:
        arr = np.asarray(value)
    except ValueError as exc:  # NumPy's "inhomogeneous shape"
        raise ValueError(
            f"MultiDiscrete {name} must be a rectangular array of integers (a list of lists of "
            f"one length), got the ragged sequence {value!r}."
        ) from exc
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and arr.size == 0):
        raise TypeError(f"MultiDiscrete {name} must hold integers, got dtype {arr.dtype}.")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _I64.max:
        raise ValueError(f"MultiDiscrete {name} has values above the int64 maximum {_I64.max}.")
    return np.array(arr, dtype=np.int64)


def _check_range(nvec: NDArray[np.int64], start: NDArray[np.int64], dtype: np.dtype[Any]) -> None:
    """Raise unless every ``[start, start + nvec - 1]`` fits in ``dtype`` (and in int64)."""
    info = np.iinfo(dtype)
    low, high = max(info.min, _I64.min), min(info.max, _I64.max)
    # high - (nvec - 1) cannot overflow (nvec >= 1), unlike start + nvec - 1.
    bad = (start < low) | (start > high - (nvec - 1))
    if not bool(bad.any()):
        return
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    first = int(start[index])
    last = first + int(nvec[index]) - 1
    holder = np.dtype(np.int64) if last > _I64.max else dtype
    at = f"[{', '.join(str(i) for i in index)}]" if index else ""
    limits = np.iinfo(holder)
    raise ValueError(
        f"MultiDiscrete nvec{at} = {int(nvec[index])} with start{at} = {first} gives values "
        f"[{first}, {last}], which {holder} cannot hold (its range is "
        f"[{limits.min}, {limits.max}])."
    )


class MultiDiscrete(ArraySpace[NDArray[np.integer[Any]]]):
    """An array of discrete values: entry ``i`` lies in ``[start[i], start[i] + nvec[i])``.

    Args:
        nvec: Number of values of each entry (any shape, all > 0).
        dtype: Integer dtype of samples (default int64).
        seed: Seed for the space's generator.
        start: Smallest value of each entry (default zeros), same shape as ``nvec``.
    """

    _derived = (
        "_end",
        "_nvec_f",
        "_start_dt",
        "_any_start",
        "_flat_n",
        "_flat_offsets",
        "_flat_width",
    )
    _frozen = ("_nvec", "_start")

    def __init__(
        self,
        nvec: Any,
        dtype: Any = np.int64,
        seed: SeedLike = None,
        start: Any = None,
    ) -> None:
        nvec_a = _int_array("nvec", nvec)
        if not bool((nvec_a > 0).all()):
            raise ValueError("All entries in nvec must be positive.")
        if start is None:
            start_a = np.zeros_like(nvec_a)
        else:
            start_a = _int_array("start", start)
            if start_a.shape != nvec_a.shape:
                raise ValueError("start.shape must match nvec.shape.")
        dt = np.dtype(dtype)
        if dt.kind not in "iu":
            raise TypeError(f"MultiDiscrete dtype must be an integer dtype, got {dt}.")
        _check_range(nvec_a, start_a, dt)
        nvec_a.setflags(write=False)
        start_a.setflags(write=False)
        self._nvec = nvec_a
        self._start = start_a
        super().__init__(nvec_a.shape, dt, None)
        self._setup()
        if seed is not None:
            self.seed(seed)

    def _setup(self) -> None:
        self._end = self._start + self._nvec - 1
        self._nvec_f = self._nvec.astype(np.float64)
        self._start_dt = self._start.astype(self.dtype)
        self._any_start = bool(self._start.any())
        # Where each entry's one-hot block starts in flatten()'s output.
        counts = self._nvec.reshape(-1)
        self._flat_n = counts
        self._flat_offsets = (np.cumsum(counts) - counts).astype(np.intp)
        # The blocks' common size when they all have one: unflatten then takes one argmax.
        self._flat_width = (
            int(counts[0]) if counts.size and bool((counts == counts[0]).all()) else 0
        )

    @property
    def nvec(self) -> NDArray[np.int64]:
        """Number of values of each entry (read-only int64 array)."""
        return self._nvec

    @property
    def start(self) -> NDArray[np.int64]:
        """Smallest value of each entry (read-only int64 array)."""
        return self._start

    @property
    def is_flattenable(self) -> bool:
        """MultiDiscrete spaces flatten to concatenated one-hot vectors."""
        return True

    def __len__(self) -> int:
        if self._nvec.ndim == 0:
            raise TypeError("len() of a 0-d MultiDiscrete")
        return len(self._nvec)

    def __getitem__(self, index: Any) -> Discrete | MultiDiscrete:
        nvec = self._nvec[index]
        start = self._start[index]
        if nvec.ndim == 0:
            return Discrete(int(nvec), start=int(start))
        return MultiDiscrete(nvec, dtype=self.dtype, start=start)

    # -- sampling --------------------------------------------------------------------------

    def sample(self, mask: Any = None) -> NDArray[np.integer[Any]]:
        """Draw every entry uniformly (gymnasium's draw), or from the allowed values of ``mask``.

        ``mask`` is a tuple (nested like ``nvec``) of per-entry arrays of length ``nvec[i]``, or
        one array of shape ``(*nvec.shape, max(nvec))`` padded on the last axis; 1 = allowed.
        """
        rng = self._rng if self._rng is not None else self.rng
        if mask is None:
            out = (rng.random(self._nvec.shape) * self._nvec_f).astype(self.dtype)
            if self._any_start:
                out += self._start_dt
            # A 0-d nvec gives NumPy scalars (ufuncs unwrap 0-d arrays); samples are arrays.
            return out if self._shape else np.asarray(out)
        rows = self._mask_rows(mask)
        out = np.empty(self.shape, dtype=self.dtype)
        for index, row in rows:
            allowed = allowed_indices(row, self, f" of dimension {index}")
            if allowed.size == 0:
                raise ValueError(f"All actions masked in dimension {index}.")
            out[index] = rng.choice(allowed) + self._start[index]
        return out

    def _mask_rows(self, mask: Any) -> list[tuple[tuple[int, ...], NDArray[Any]]]:
        """Per-entry masks in C order, validated, as ``[(index, row), ...]``."""
        nvec = self._nvec
        if isinstance(mask, list) and nvec.ndim:
            try:
                m = numeric_mask(mask, self)
            except ValueError:
                # Ragged: only the per-entry form can be; read it as that form's tuple.
                mask = tuple(mask)
        if isinstance(mask, tuple):
            rows: list[tuple[tuple[int, ...], NDArray[Any]]] = []
            self._collect_tuple_mask(mask, (), rows)
            return rows
        m = numeric_mask(mask, self)
        width = int(nvec.max()) if nvec.size else 0
        expected = (*nvec.shape, width)
        if m.shape != expected:
            raise ValueError(
                f"A mask array for {self!r} must have shape {expected} (one row per entry, "
                f"padded to max(nvec)), got {m.shape}."
            )
        return [(idx, m[idx][: int(nvec[idx])]) for idx in np.ndindex(nvec.shape)]

    def _collect_tuple_mask(
        self, mask: Any, prefix: tuple[int, ...], rows: list[tuple[tuple[int, ...], NDArray[Any]]]
    ) -> None:
        sub = self._nvec[prefix] if prefix else self._nvec
        if isinstance(sub, np.ndarray) and sub.ndim > 0:
            if not isinstance(mask, (tuple, list)) or len(mask) != len(sub):
                got = len(mask) if isinstance(mask, (tuple, list)) else type(mask).__name__
                raise ValueError(
                    f"A mask tuple for {self!r} needs {len(sub)} sub-masks at dimension "
                    f"{prefix}, got {got}."
                )
            for i, entry in enumerate(mask):
                self._collect_tuple_mask(entry, (*prefix, i), rows)
            return
        n = int(sub)
        row = numeric_mask(mask, self)
        if row.shape != (n,):
            where = ", ".join(str(i) for i in prefix)
            raise ValueError(
                f"The mask for dimension {prefix} must have shape ({n},) (nvec[{where}] = {n}), "
                f"got {row.shape}."
            )
        rows.append((prefix, row))

    # -- membership ------------------------------------------------------------------------

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an integer array-like of the right shape with every entry in range."""
        if not isinstance(x, np.ndarray):
            if not isinstance(x, (list, tuple)) and not (
                # Rows of a batch of 0-d entries come out as NumPy scalars.
                not self._shape and isinstance(x, (int, np.integer)) and not isinstance(x, bool)
            ):
                return False
            try:
                x = np.asarray(x)
            except (ValueError, TypeError, OverflowError):
                return False
        if x.shape != self._shape or x.dtype.kind not in "iu":
            return False
        return bool((x >= self._start).all() and (x <= self._end).all())

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MultiDiscrete)
            and self.dtype == other.dtype
            and self._nvec.shape == other._nvec.shape
            and bool(np.array_equal(self._nvec, other._nvec))
            and bool(np.array_equal(self._start, other._start))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [repr(self._nvec.tolist())]
        if self._any_start:
            parts.append(f"start={self._start.tolist()!r}")
        if self.dtype != np.int64:
            parts.append(f"dtype={self.dtype}")
        return f"MultiDiscrete({', '.join(parts)})"

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'MultiDiscrete', 'nvec': [...], 'start': [...], 'dtype': 'int64'}``."""
        return {
            "type": "MultiDiscrete",
            "nvec": self._nvec.tolist(),
            "start": self._start.tolist(),
            "dtype": str(self.dtype),
        }

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> MultiDiscrete:
        """Rebuild a MultiDiscrete from ``to_jsonable()``'s dict; its values are checked as
        ``MultiDiscrete()`` checks them."""
        return cls(d["nvec"], dtype=d.get("dtype", "int64"), start=d.get("start"))


register_space_type("MultiDiscrete", MultiDiscrete)
