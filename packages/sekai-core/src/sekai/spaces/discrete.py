"""Discrete: the integers ``start, ..., start + n - 1``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sekai._args import IntLike
from sekai.spaces._array import allowed_indices, numeric_mask
from sekai.spaces.jsonable import register_space_type
from sekai.spaces.space import SeedLike, Space

__all__ = ["Discrete", "DiscreteAction"]

# What an env with a Discrete action space takes as an action, for type checkers: a Python or
# NumPy int, as ``Discrete.contains`` judges (``sample()`` gives an ``np.int64``, and typed code
# also passes plain ints: ``env.step(1)``). ``sekai.Env[Obs, DiscreteAction]`` holds a Discrete.
DiscreteAction = IntLike

_I64 = np.iinfo(np.int64)
# rng.integers(n) draws from [0, n) for n up to 2**63; larger n take the (slower) endpoint form.
_MAX_PLAIN_DRAW = 2**63


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}.")
    return int(value)


class Discrete(Space[np.int64]):
    """A finite set of integers ``{start, ..., start + n - 1}`` (samples are ``np.int64``).

    Args:
        n: Number of values (> 0).
        seed: Seed for the space's generator.
        start: Smallest value (default 0).
    """

    def __init__(self, n: IntLike, seed: SeedLike = None, start: Any = 0) -> None:
        n_i = _as_int("n", n)
        if n_i <= 0:
            raise ValueError(f"n must be positive, got {n_i}.")
        start_i = _as_int("start", start)
        last = start_i + n_i - 1
        if start_i < _I64.min or last > _I64.max:
            raise ValueError(
                f"Discrete values [start, start + n - 1] = [{start_i}, {last}] do not fit in "
                f"int64 (n={n_i}, start={start_i}); samples are int64, within "
                f"[{_I64.min}, {_I64.max}]."
            )
        self._n = n_i
        self._start = start_i
        self._start64 = np.int64(self._start)
        super().__init__((), np.int64, seed)

    @property
    def n(self) -> int:
        """Number of values."""
        return self._n

    @property
    def start(self) -> int:
        """Smallest value."""
        return self._start

    @property
    def shape(self) -> tuple[int, ...]:
        """Always ``()``."""
        return ()

    @property
    def dtype(self) -> np.dtype[Any]:
        """Always int64."""
        return np.dtype(np.int64)

    @property
    def is_flattenable(self) -> bool:
        """Discrete spaces flatten to one-hot vectors."""
        return True

    def sample(self, mask: Any = None) -> np.int64:
        """Draw ``start + rng.integers(n)``; ``mask`` (shape ``(n,)``, 1 = allowed) restricts it.

        Raises:
            ValueError: the mask has the wrong shape, entries other than 0/1, or allows nothing.
        """
        rng = self._rng if self._rng is not None else self.rng
        if mask is None:
            if self._n > _MAX_PLAIN_DRAW:
                last = self._start + self._n - 1
                return rng.integers(self._start, last, endpoint=True)
            # Annotated, not ignored: NumPy's stubs type this sum as Any for Python 3.10/3.11
            # and as np.int64 from 3.12 on, where an ignore would be unused.
            drawn: np.int64 = self._start64 + rng.integers(self._n)
            return drawn
        m = numeric_mask(mask, self)
        if m.shape != (self._n,):
            raise ValueError(f"mask.shape must be ({self._n},), got {m.shape}.")
        allowed = allowed_indices(m, self)
        if allowed.size == 0:
            raise ValueError("All actions masked — at least one must be valid.")
        return self._start64 + rng.choice(allowed)  # type: ignore[no-any-return]

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an int (Python, NumPy, or a 0-d integer array) in range."""
        if isinstance(x, (int, np.integer)):
            if isinstance(x, (bool, np.bool_)):
                return False
        elif isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
            x = x.item()
        else:
            return False
        return self._start <= int(x) < self._start + self._n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Discrete) and self._n == other._n and self._start == other._start

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self._start != 0:
            return f"Discrete({self._n}, start={self._start})"
        return f"Discrete({self._n})"

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'Discrete', 'n': n, 'start': start}``."""
        return {"type": "Discrete", "n": self._n, "start": self._start}

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> Discrete:
        """Rebuild a Discrete from ``to_jsonable()``'s dict; its values are checked as
        ``Discrete()`` checks them."""
        return cls(d["n"], start=d.get("start", 0))


register_space_type("Discrete", Discrete)
