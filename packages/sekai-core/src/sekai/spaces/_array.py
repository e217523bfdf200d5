"""ArraySpace: the base of spaces whose samples are arrays of one fixed shape and dtype."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from sekai.spaces.space import Space, T_cov

__all__ = ["ArraySpace", "allowed_indices", "allowed_mask", "numeric_mask"]


def numeric_mask(mask: Any, space: Space[Any]) -> np.ndarray:
    """``mask`` as an array of numbers or bools: strings, None or objects would otherwise be
    read as "nothing masked" (or as "everything masked")."""
    if isinstance(mask, np.random.Generator):
        raise TypeError(
            f"sample() takes a mask, not a random generator (got one for {space!r}): seed the "
            "space with space.seed(seed), or draw from the generator yourself."
        )
    m = np.asarray(mask)
    if m.dtype.kind not in "biuf":
        raise TypeError(
            f"A mask for {space!r} must hold numbers or bools, got {type(mask).__name__} "
            f"of dtype {m.dtype}."
        )
    return m


def allowed_indices(row: np.ndarray, space: Space[Any], where: str = "") -> np.ndarray:
    """Indices where the 0/1 mask ``row`` (1-d) allows a value; ``where`` names the row."""
    if row.dtype.kind == "b":
        return np.flatnonzero(row)
    return np.flatnonzero(allowed_mask(row, space, where))


def allowed_mask(row: np.ndarray, space: Space[Any], where: str = "") -> np.ndarray:
    """The 0/1 mask ``row`` as bools (True: allowed); ``where`` names the row in errors.

    Other entries raise: a probability vector passed as a mask would otherwise be read as
    "only the entries equal to 1 are allowed".
    """
    if row.dtype.kind == "b":
        return row
    allowed = row == 1
    # Every nonzero entry must be a 1 (two counts: cheaper than building a second mask).
    if np.count_nonzero(row) != np.count_nonzero(allowed):
        index = int(np.argmax((row != 0) & ~allowed))
        raise ValueError(
            f"A mask for {space!r} must hold only 0 (forbidden) and 1 (allowed), got "
            f"{row[index].item()!r} at index {index}{where}."
        )
    return np.asarray(allowed)


class ArraySpace(Space[T_cov]):
    """A space whose samples are NumPy arrays of the ``shape`` and ``dtype`` given at creation.

    Subclasses pass both to ``Space.__init__`` and precompute per-call helpers in ``_setup()``.
    Pickles leave out the attributes named in ``_derived`` (``_setup()`` recomputes them) and
    restore the arrays named in ``_frozen`` as fresh read-only copies.
    """

    # Attributes _setup() derives from the others: recomputed instead of pickled.
    _derived: ClassVar[tuple[str, ...]] = ()
    # Read-only array attributes the space is defined by.
    _frozen: ClassVar[tuple[str, ...]] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of a sample."""
        assert self._shape is not None
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """dtype of a sample."""
        assert self._dtype is not None
        return self._dtype

    @abc.abstractmethod
    def _setup(self) -> None:
        """Precompute the ``_derived`` attributes from the defining ones."""

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in self._derived:
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for key in self._frozen:
            arr = np.array(getattr(self, key))
            arr.setflags(write=False)
            setattr(self, key, arr)
        self._setup()
