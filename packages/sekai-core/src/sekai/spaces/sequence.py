"""Sequence: variable-length sequences of elements of a feature space."""

from __future__ import annotations

import collections.abc as cabc
from typing import Any

import numpy as np

from sekai._seeding import check_seed
from sekai.spaces._composite import seed_with_children
from sekai.spaces._explain import Reason, described, why_not_in
from sekai.spaces._kinds import ARRAY_SPACES as _ARRAY_SPACES
from sekai.spaces._stack import concatenate, create_empty_array
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.jsonable import register_space_type, space_from_jsonable
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.space import SeedLike, Space
from sekai.spaces.tuple import Tuple

__all__ = ["Sequence"]


def _stackable(space: Space[Any]) -> bool:
    """Whether elements of ``space`` stack into arrays (array leaves, Dict/Tuple of them)."""
    if isinstance(space, _ARRAY_SPACES):
        return True
    if isinstance(space, Dict):
        return len(space) > 0 and all(_stackable(s) for s in space.values())
    if isinstance(space, Tuple):
        return len(space) > 0 and all(_stackable(s) for s in space.spaces)
    return False


def _stack_length(space: Space[Any], x: Any, dtypes: bool = True) -> int | None:
    """Length of a stacked sample ``x`` of elements of ``space``; ``None`` if malformed
    (with ``dtypes=False``, only if its structure and shapes are not a stack's)."""
    if isinstance(space, _ARRAY_SPACES):
        shape = space.shape
        assert shape is not None
        if not isinstance(x, np.ndarray) or x.ndim != len(shape) + 1 or x.shape[1:] != shape:
            return None
        if dtypes and not _holds_elements(space, x.dtype):
            return None  # so also with no element to judge: an empty array of strings
        return int(x.shape[0])
    if isinstance(space, Dict):
        if not isinstance(x, cabc.Mapping) or x.keys() != space.keys():
            return None
        lengths = {_stack_length(child, x[key], dtypes) for key, child in space.items()}
    elif isinstance(space, Tuple):
        if not isinstance(x, tuple) or len(x) != len(space):
            return None
        lengths = {_stack_length(child, part, dtypes) for child, part in zip(space.spaces, x)}
    else:
        return None
    if len(lengths) != 1 or None in lengths:
        return None
    return lengths.pop()


def _holds_elements(space: Space[Any], dtype: np.dtype[Any]) -> bool:
    """Whether a stacked array of ``dtype`` may hold elements of the array space ``space``:
    whether its ``contains`` takes arrays of that dtype (a Box: a dtype that casts to its own,
    same kind; Discrete and MultiDiscrete: integers; MultiBinary: integers or bools)."""
    if isinstance(space, Box):
        return bool(np.can_cast(dtype, space.dtype, "same_kind"))
    return dtype.kind in ("iub" if isinstance(space, MultiBinary) else "iu")


def _why_no_elements(space: Space[Any], x: Any) -> Reason | None:
    """Where and why the stack ``x`` of ``space``'s structure and shapes holds no elements of
    ``space`` by its dtype (an empty stack has no element to explain it); None if it may."""
    if isinstance(space, _ARRAY_SPACES):
        if _holds_elements(space, x.dtype):
            return None
        return "", f"has dtype {x.dtype}, which holds no elements of {space!r}"
    if isinstance(space, Dict):
        parts = [(f"[{key!r}]", child, x[key]) for key, child in space.items()]
    else:
        assert isinstance(space, Tuple)
        parts = [(f"[{i}]", child, part) for i, (child, part) in enumerate(zip(space.spaces, x))]
    for path, child, part in parts:
        inner = _why_no_elements(child, part)
        if inner is not None:
            return path + inner[0], inner[1]
    return None


def _unstack(space: Space[Any], x: Any, length: int) -> list[Any]:
    """Split a stacked sample into its ``length`` elements."""
    if isinstance(space, _ARRAY_SPACES):
        return [x[i] for i in range(length)]
    if isinstance(space, Dict):
        columns = {key: _unstack(child, x[key], length) for key, child in space.items()}
        return [{key: col[i] for key, col in columns.items()} for i in range(length)]
    assert isinstance(space, Tuple)
    parts = [_unstack(child, part, length) for child, part in zip(space.spaces, x)]
    return [tuple(col[i] for col in parts) for i in range(length)]


def _as_member(space: Space[Any], item: Any) -> Any:
    """``item`` if it is in ``space``; for a Box, a NumPy array or scalar of another real dtype
    cast to the Box's dtype when the cast changes no value and makes it a member (an int64
    array of bytes for a uint8 Box); else None."""
    if space.contains(item):
        return item
    real = isinstance(item, (np.ndarray, np.generic)) and item.dtype.kind in "biuf"
    if isinstance(space, Box) and real:
        with np.errstate(all="ignore"):
            cast = np.asarray(item).astype(space.dtype)
        if bool((cast == item).all()) and space.contains(cast):
            return cast
    return None


class Sequence(Space[Any]):
    """Sequences of any length (up to ``max_length``) of elements of ``feature_space``.

    Args:
        feature_space: The space of each element.
        max_length: Longest allowed sequence (``None``: unbounded).
        stack: If True, samples stack their elements on a new leading axis (arrays, or a
            dict/tuple of arrays); otherwise samples are tuples of elements.
        seed: Seed for this space (lengths) and, derived from it, the feature space.
        space: ``feature_space`` under gymnasium's name (keyword only; give one of the two).
    """

    def __init__(
        self,
        feature_space: Space[Any] | None = None,
        max_length: int | None = None,
        stack: bool = False,
        *,
        seed: SeedLike = None,
        space: Space[Any] | None = None,
    ) -> None:
        if space is not None:
            if feature_space is not None:
                raise TypeError(
                    "Sequence() got both 'feature_space' and 'space'; pass the feature space once."
                )
            feature_space = space
        elif feature_space is None:
            raise TypeError(
                "Sequence() missing required argument: 'feature_space' (also accepted as 'space')."
            )
        if not isinstance(feature_space, Space):
            raise TypeError(f"feature_space must be a sekai.Space, got {feature_space!r}.")
        if not isinstance(stack, (bool, np.bool_)):
            raise TypeError(f"stack must be a bool, got {type(stack).__name__}.")
        if max_length is not None:
            if isinstance(max_length, (bool, np.bool_)) or not isinstance(
                max_length, (int, np.integer)
            ):
                raise TypeError(f"max_length must be an int or None, got {max_length!r}.")
            if max_length < 0:
                raise ValueError(f"max_length must be >= 0, got {max_length}.")
            max_length = int(max_length)
        if stack and not _stackable(feature_space):
            raise TypeError(
                f"Sequence(stack=True) cannot stack elements of {type(feature_space).__name__}."
            )
        self._feature_space = feature_space
        self._max_length = max_length
        self._stack = bool(stack)
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    @property
    def feature_space(self) -> Space[Any]:
        """The space of each element."""
        return self._feature_space

    @property
    def max_length(self) -> int | None:
        """Longest allowed sequence (``None``: unbounded)."""
        return self._max_length

    @property
    def stack(self) -> bool:
        """Whether samples stack their elements."""
        return self._stack

    @property
    def is_flattenable(self) -> bool:
        """Sequences have no fixed size, so they never flatten."""
        return False

    def seed(self, seed: Any = None) -> int:
        """Seed this space, then the feature space with ``make_seed_sequence(seed, 1)[0]``."""
        return seed_with_children(self, seed, [self._feature_space])

    def _check_seed_arg(self, seed: Any, what: str = "seed") -> None:
        if type(self).seed is not Sequence.seed:
            return  # a subclass's own seed() decides what it takes
        check_seed(seed, what=what)

    def _check_length(self, length: Any) -> int:
        if isinstance(length, (bool, np.bool_)) or not isinstance(length, (int, np.integer)):
            raise TypeError(f"A Sequence length must be an int, got {length!r}.")
        upper = "inf)" if self._max_length is None else f"{self._max_length}]"
        if length < 0 or (self._max_length is not None and length > self._max_length):
            raise ValueError(f"length {int(length)} is outside [0, {upper}.")
        return int(length)

    def sample(self, mask: Any = None) -> Any:
        """Draw a length (uniform in ``[0, max_length]``, else ``geometric(0.25) - 1``), then items.

        ``mask=(length, feature_mask)`` fixes the length (``None``: drawn) and passes
        ``feature_mask`` to every element.

        Raises:
            ValueError: the fixed length is out of range.
        """
        feature_mask = None
        length: int | None = None
        if mask is not None:
            if not isinstance(mask, (tuple, list)) or len(mask) != 2:
                raise TypeError(
                    f"A Sequence mask must be a (length, feature_mask) pair, got {mask!r}."
                )
            raw_length, feature_mask = mask
            if raw_length is not None:
                length = self._check_length(raw_length)
        if length is None:
            rng = self._rng if self._rng is not None else self.rng
            if self._max_length is None:
                length = int(rng.geometric(0.25)) - 1
            else:
                length = int(rng.integers(0, self._max_length + 1))
        fs = self._feature_space
        return self._build([fs.sample(feature_mask) for _ in range(length)])

    def pack(self, items: cabc.Iterable[Any]) -> Any:
        """Build a sample from a list of elements (a tuple, or stacked when ``stack=True``).

        Raises:
            ValueError: more items than ``max_length``, or an item that is not a member of
                the feature space (wrong shape, out of bounds, ...).
        """
        items = list(items)
        if self._max_length is not None and len(items) > self._max_length:
            raise ValueError(
                f"Got {len(items)} items but the Sequence holds at most {self._max_length} "
                "(max_length)."
            )
        fs = self._feature_space
        for i, item in enumerate(items):
            member = _as_member(fs, item)
            if member is None:
                # An integer array is judged by its values, as _as_member judged it.
                by_value = isinstance(item, np.ndarray) and item.dtype.kind in "iu"
                shown = item.tolist() if by_value and isinstance(fs, Box) else item
                where, why = why_not_in(fs, shown) or ("", f"is not in {fs!r}")
                subject = f"items[{i}]{where}" if where else "it"
                raise ValueError(f"items[{i}] is not a member of {fs!r}: {subject} {why}.")
            items[i] = member
        return self._build(items)

    def _build(self, items: list[Any]) -> Any:
        """A sample of ``items``, which are members of the feature space."""
        if not self._stack:
            return tuple(items)
        if not items:
            return create_empty_array(self._feature_space, 0)
        return concatenate(self._feature_space, items)

    def elements(self, x: Any) -> list[Any]:
        """The elements of a sample, as a list (the inverse of ``pack``).

        Raises:
            ValueError: a stacked ``x`` does not have the feature space's structure.
        """
        if not self._stack:
            return list(x)
        length = _stack_length(self._feature_space, x)
        if length is None:
            raise ValueError(f"{x!r} is not a stacked sample of {self!r}.")
        return _unstack(self._feature_space, x, length)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` has the right container, an allowed length and only valid elements."""
        if self._stack:
            length = _stack_length(self._feature_space, x)
            if length is None:
                return False
            elems = None
        else:
            if not isinstance(x, (tuple, list)):
                return False
            length = len(x)
            elems = x
        if self._max_length is not None and length > self._max_length:
            return False
        if elems is None:
            elems = _unstack(self._feature_space, x, length)
        return all(self._feature_space.contains(e) for e in elems)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Sequence)
            and self._feature_space == other._feature_space
            and self._max_length == other._max_length
            and self._stack == other._stack
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [repr(self._feature_space)]
        if self._max_length is not None:
            parts.append(f"max_length={self._max_length}")
        if self._stack:
            parts.append("stack=True")
        return f"Sequence({', '.join(parts)})"

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'Sequence', 'feature_space': {...}, 'max_length': ..., 'stack': ...}``."""
        return {
            "type": "Sequence",
            "feature_space": self._feature_space.to_jsonable(),
            "max_length": self._max_length,
            "stack": self._stack,
        }

    @classmethod
    def from_jsonable(cls, d: cabc.Mapping[str, Any]) -> Sequence:
        """Rebuild a Sequence (feature space via ``space_from_jsonable``); its values are
        checked as ``Sequence()`` checks them."""
        return cls(
            space_from_jsonable(d["feature_space"]),
            max_length=d.get("max_length"),
            stack=d.get("stack", False),
        )


@why_not_in.register(Sequence)
def _why_not_in_sequence(space: Sequence, x: Any) -> Reason | None:
    fs = space.feature_space
    if space.stack:
        length = _stack_length(fs, x, dtypes=False)  # a wrong dtype: explained by an element
        if length is None:
            return "", (
                f"is {described(x)}, expected elements of {fs!r} stacked on a new leading axis"
            )
        elements = _unstack(fs, x, length)
    elif not isinstance(x, (tuple, list)):
        return "", f"is {described(x)}, expected a tuple of elements"
    else:
        elements = list(x)
    if space.max_length is not None and len(elements) > space.max_length:
        return "", f"has {len(elements)} items, more than max_length {space.max_length}"
    for i, element in enumerate(elements):
        inner = why_not_in(fs, element)
        if inner is None:
            continue
        if not space.stack or isinstance(fs, _ARRAY_SPACES):
            return f"[{i}]{inner[0]}", inner[1]
        # stacked dicts/tuples: the element's parts lie under the keys, not at [i]
        return inner[0], f"{inner[1]} (in element {i} of the sequence)"
    return _why_no_elements(fs, x) if space.stack else None


register_space_type("Sequence", Sequence)
