"""MultiBinary: arrays of 0/1 values (int8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces._array import numeric_mask
from sekai.spaces.jsonable import register_space_type
from sekai.spaces.space import SeedLike, Space

__all__ = ["MultiBinary"]


# contains(): up to this many entries, a set of the Python ints beats NumPy's reductions.
_SMALL = 64
_BITS = frozenset((0, 1))
# The unsigned dtype of the same size, for each integer dtype in native byte order.
_UNSIGNED = {
    np.dtype(f"{kind}{size}"): np.dtype(f"u{size}") for kind in "iu" for size in (1, 2, 4, 8)
}


def _normalise_n(n: Any) -> tuple[int, ...]:
    entries = n if isinstance(n, (tuple, list, np.ndarray)) else (n,)
    result = []
    for entry in entries:
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
            raise TypeError(f"MultiBinary n must be an int or a tuple of ints, got {n!r}.")
        result.append(int(entry))
    if not result or any(s < 1 for s in result):
        raise ValueError(f"MultiBinary sizes must be >= 1, got {n!r}.")
    return tuple(result)


class MultiBinary(Space[NDArray[np.int8]]):
    """Binary arrays of shape ``n`` (an int or a shape tuple); samples are int8 arrays of 0/1.

    Args:
        n: Size (int) or shape (tuple of ints, every entry >= 1).
        seed: Seed for the space's generator.
    """

    def __init__(self, n: Any, seed: SeedLike = None) -> None:
        self._n = _normalise_n(n)
        super().__init__(self._n, np.int8, seed)

    @property
    def n(self) -> tuple[int, ...]:
        """The shape of a sample."""
        return self._n

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of a sample (``n``)."""
        return self._n

    @property
    def dtype(self) -> np.dtype[Any]:
        """Always int8."""
        return np.dtype(np.int8)

    @property
    def is_flattenable(self) -> bool:
        """MultiBinary spaces flatten by ravelling."""
        return True

    def sample(self, mask: Any = None) -> NDArray[np.int8]:
        """Draw independent fair bits; ``mask`` (shape ``n``): 1 forces 1, 0 forces 0, -1 or 2 free.

        Raises:
            ValueError: the mask has the wrong shape or other values.
        """
        rng = self._rng if self._rng is not None else self.rng
        bits = rng.integers(low=0, high=2, size=self._n, dtype=np.int8)
        if mask is None:
            return bits
        m = numeric_mask(mask, self)
        if m.shape != self._n:
            raise ValueError(f"mask.shape must be {self._n}, got {m.shape}.")
        free = (m == -1) | (m == 2)
        if not bool((free | (m == 0) | (m == 1)).all()):
            raise ValueError(
                "MultiBinary mask entries must be 0 (force 0), 1 (force 1) or -1/2 (free)."
            )
        return np.where(free, bits, m.astype(np.int8))

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an integer or bool array-like of shape ``n`` with only 0s and 1s."""
        if not isinstance(x, np.ndarray):
            if not isinstance(x, (list, tuple)):
                return False
            try:
                x = np.asarray(x)
            except (ValueError, TypeError, OverflowError):
                return False
        if x.shape != self._n or x.dtype.kind not in "iub":
            return False
        if type(x) is np.ndarray:  # (a subclass, a masked array, compares its own way)
            if x.dtype.kind == "b":  # False and True are 0 and 1
                return True
            if x.size <= _SMALL:
                return set(x.ravel().tolist()) <= _BITS
            unsigned = _UNSIGNED.get(x.dtype)
            if unsigned is not None:  # viewed as unsigned, a negative value is large
                return int(x.view(unsigned).max()) <= 1
        return bool(((x == 0) | (x == 1)).all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultiBinary) and self._n == other._n

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if len(self._n) == 1:
            return f"MultiBinary({self._n[0]})"
        return f"MultiBinary({self._n})"

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'MultiBinary', 'n': [...]}``."""
        return {"type": "MultiBinary", "n": list(self._n)}

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> MultiBinary:
        """Rebuild a MultiBinary from ``to_jsonable()``'s dict; its values are checked as
        ``MultiBinary()`` checks them."""
        return cls(d["n"])


register_space_type("MultiBinary", MultiBinary)
