"""Tuple: a fixed sequence of sub-spaces; samples are tuples."""

from __future__ import annotations

import collections.abc as cabc
from typing import Any, overload

from sekai._seeding import check_seed
from sekai.spaces._composite import seed_with_children
from sekai.spaces.jsonable import field_error, register_space_type, space_from_jsonable
from sekai.spaces.space import SeedLike, Space

__all__ = ["Tuple"]

# What seed() takes (a seed for the whole Tuple, or per-child seeds), for its messages.
_SEEDS = (
    "a non-negative int, None, a numpy Generator or a list (or tuple) with one seed (or None) "
    "per sub-space"
)


class Tuple(Space[tuple[Any, ...]], cabc.Sequence[Space[Any]]):
    """A fixed-length tuple of sub-spaces.

    Args:
        spaces: The sub-spaces, in order.
        seed: An int/Generator seeds this space and its children; a list seeds children in
            order (``None`` entries leave a child alone).
    """

    def __init__(
        self,
        spaces: cabc.Iterable[Space[Any]],
        seed: SeedLike | cabc.Sequence[Any] = None,
    ) -> None:
        if isinstance(spaces, Space) or not isinstance(spaces, cabc.Iterable):
            raise TypeError(
                f"Tuple spaces must be an iterable of sekai spaces, got {type(spaces).__name__}."
            )
        children = tuple(spaces)
        for i, child in enumerate(children):
            if not isinstance(child, Space):
                raise TypeError(
                    f"Tuple sub-spaces must be sekai spaces, got {type(child).__name__} "
                    f"{child!r} at index {i}."
                )
        self._spaces: tuple[Space[Any], ...] = children
        self._plan: Any = None
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    @property
    def spaces(self) -> tuple[Space[Any], ...]:
        """The sub-spaces."""
        return self._spaces

    @property
    def is_flattenable(self) -> bool:
        """Whether every sub-space flattens."""
        return all(s.is_flattenable for s in self._spaces)

    @overload
    def __getitem__(self, index: int) -> Space[Any]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Space[Any], ...]: ...

    def __getitem__(self, index: int | slice) -> Space[Any] | tuple[Space[Any], ...]:
        return self._spaces[index]

    def __len__(self) -> int:
        return len(self._spaces)

    def __iter__(self) -> cabc.Iterator[Space[Any]]:
        return iter(self._spaces)

    def seed(self, seed: Any = None) -> int:
        """Seed this space and its children, or the children in order from a list.

        Every seed of a list is checked before any child is seeded.

        Raises:
            TypeError: a seed is not one its sub-space takes.
            ValueError: a list does not have one seed (or None) per sub-space, or a seed is
                negative.
        """
        self._check_own_seed(seed)
        if isinstance(seed, (list, tuple)):
            for child, child_seed in zip(self._spaces, seed):
                if child_seed is not None:
                    child.seed(child_seed)
            return -1
        return seed_with_children(self, seed, self._spaces)

    def _check_seed_arg(self, seed: Any, what: str = "seed") -> None:
        if type(self).seed is not Tuple.seed:
            return  # a subclass's own seed() decides what it takes
        self._check_own_seed(seed, what)

    def _check_own_seed(self, seed: Any, what: str = "seed") -> None:
        """Check ``seed`` (called ``what``), and every child's seed in a list of them, before
        any child is seeded; a child's is called ``what[index]``."""
        if not isinstance(seed, (list, tuple)):
            check_seed(seed, what=what, accepted=_SEEDS)
            return
        if len(seed) != len(self._spaces):
            seeds = "seed" if len(seed) == 1 else "seeds"
            where = "" if what == "seed" else f" in {what}"  # a child's: where it was given
            n = len(self._spaces)
            raise ValueError(
                f"Got {len(seed)} {seeds}{where} for a Tuple of {n} "
                f"sub-space{'' if n == 1 else 's'}."
            )
        for index, (child, child_seed) in enumerate(zip(self._spaces, seed)):
            if child_seed is not None:
                child._check_seed_arg(child_seed, f"{what}[{index}]")

    def sample(self, mask: Any = None) -> tuple[Any, ...]:
        """Sample every child; ``mask`` has one sub-mask (or ``None``) per child."""
        if mask is None:
            return tuple(space.sample() for space in self._spaces)
        if not isinstance(mask, (tuple, list)) or len(mask) != len(self._spaces):
            got = len(mask) if isinstance(mask, (tuple, list)) else type(mask).__name__
            raise ValueError(
                f"Tuple mask needs one mask per sub-space ({len(self._spaces)}), got {got}."
            )
        return tuple(space.sample(m) for space, m in zip(self._spaces, mask))

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a tuple or list with one member of each sub-space, in order."""
        if not isinstance(x, (tuple, list)) or len(x) != len(self._spaces):
            return False
        return all(space.contains(part) for space, part in zip(self._spaces, x))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tuple)
            and len(self._spaces) == len(other._spaces)
            and all(a == b for a, b in zip(self._spaces, other._spaces))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Tuple({', '.join(repr(s) for s in self._spaces)})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_plan"] = None
        return state

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'Tuple', 'spaces': [child.to_jsonable(), ...]}``."""
        return {"type": "Tuple", "spaces": [space.to_jsonable() for space in self._spaces]}

    @classmethod
    def from_jsonable(cls, d: cabc.Mapping[str, Any]) -> Tuple:
        """Rebuild a Tuple (children via ``space_from_jsonable``).

        Raises:
            TypeError: ``d["spaces"]`` is not a list of space descriptions.
        """
        spaces = d["spaces"]
        if not isinstance(spaces, (list, tuple)):
            raise field_error("Tuple", "spaces", "a list of space descriptions", spaces)
        return cls(space_from_jsonable(sub) for sub in spaces)


register_space_type("Tuple", Tuple)
