"""Dict: an ordered mapping of named sub-spaces; samples are dicts."""

from __future__ import annotations

import collections.abc as cabc
from types import MappingProxyType
from typing import Any, ClassVar

from sekai._seeding import check_seed
from sekai.spaces._composite import seed_with_children
from sekai.spaces.jsonable import field_error, register_space_type, space_from_jsonable
from sekai.spaces.space import SeedLike, Space, _Layout

__all__ = ["Dict"]

# What seed() takes (a seed for the whole Dict, or per-child seeds), for its messages.
_SEEDS = (
    "a non-negative int, None, a numpy Generator or a dict {key: seed} for some of its sub-spaces"
)


def _check_child(key: Any, value: Any) -> Space[Any]:
    if not isinstance(value, Space):
        raise TypeError(
            f"Dict values must be sekai spaces, got {type(value).__name__} {value!r} for key "
            f"{key!r}."
        )
    return value


def _pair(item: Any, spaces: Any) -> tuple[Any, Any]:
    """``item`` of the ``spaces`` given to ``Dict()`` as a ``(key, space)`` pair."""
    try:
        pair = () if isinstance(item, (str, bytes, Space)) else tuple(item)
    except TypeError:  # not iterable: a space, a number
        pair = ()
    if len(pair) != 2:
        raise TypeError(
            "Dict spaces must be a mapping or (key, space) pairs, got the "
            f"{type(spaces).__name__} item {item!r}."
        )
    return pair[0], pair[1]


class Dict(Space[dict[Any, Any]], cabc.Mapping[Any, Space[Any]]):
    """A mapping of named sub-spaces, in insertion order (never sorted).

    Args:
        spaces: A mapping (or a sequence of ``(key, space)`` pairs) of sub-spaces.
        seed: An int/Generator seeds this space and its children; a dict seeds named children.
        **spaces_kwargs: More sub-spaces, added after ``spaces``.

    Raises:
        ValueError: a key is given twice (in ``spaces``, or there and as a keyword).
    """

    # Spaces of a different kind (MaskedBox) never equal a plain Dict with the same children.
    _kind: ClassVar[str] = "Dict"

    def __init__(
        self,
        spaces: cabc.Mapping[Any, Space[Any]] | cabc.Iterable[tuple[Any, Space[Any]]] | None = None,
        seed: SeedLike | cabc.Mapping[Any, Any] = None,
        **spaces_kwargs: Space[Any],
    ) -> None:
        if spaces is None:
            pairs: list[tuple[Any, Any]] = []
        elif isinstance(spaces, cabc.Mapping):
            pairs = list(spaces.items())
        elif isinstance(spaces, cabc.Iterable) and not isinstance(spaces, (str, bytes, Space)):
            pairs = [_pair(item, spaces) for item in spaces]
        else:
            raise TypeError(
                f"Dict spaces must be a mapping or (key, space) pairs, got {type(spaces).__name__}."
            )
        self._spaces: dict[Any, Space[Any]] = {}
        for key, value in [*pairs, *spaces_kwargs.items()]:
            if key in self._spaces:
                # Keeping the last one would drop a sub-space without a word.
                raise ValueError(f"Dict key {key!r} is given twice.")
            self._spaces[key] = _check_child(key, value)
        self._plan: Any = None
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    @property
    def spaces(self) -> cabc.Mapping[Any, Space[Any]]:
        """The sub-spaces in order (read-only view; use ``d[key] = space`` to change one)."""
        return MappingProxyType(self._spaces)

    @property
    def is_flattenable(self) -> bool:
        """Whether every sub-space flattens."""
        return all(s.is_flattenable for s in self._spaces.values())

    # -- mapping API -----------------------------------------------------------------------

    def __getitem__(self, key: Any) -> Space[Any]:
        return self._spaces[key]

    def __setitem__(self, key: Any, value: Space[Any]) -> None:
        self._spaces[key] = _check_child(key, value)
        self._plan = None
        _Layout.bump()

    def __iter__(self) -> cabc.Iterator[Any]:
        return iter(self._spaces)

    def __len__(self) -> int:
        return len(self._spaces)

    def keys(self) -> cabc.KeysView[Any]:
        """Keys in insertion order."""
        return self._spaces.keys()

    def values(self) -> cabc.ValuesView[Space[Any]]:
        """Sub-spaces in insertion order."""
        return self._spaces.values()

    def items(self) -> cabc.ItemsView[Any, Space[Any]]:
        """``(key, space)`` pairs in insertion order."""
        return self._spaces.items()

    # -- seeding, sampling, membership -----------------------------------------------------

    def seed(self, seed: Any = None) -> int:
        """Seed this space and its children (``make_seed_sequence``), or named children.

        A dict ``{key: seed}`` seeds only those children and returns ``-1``; all its seeds are
        checked before any child is seeded.

        Raises:
            TypeError: a seed is not one its sub-space takes.
            ValueError: a dict names keys this Dict does not have, or a negative seed.
        """
        self._check_own_seed(seed)
        if isinstance(seed, cabc.Mapping):
            for key, child_seed in seed.items():
                self._spaces[key].seed(child_seed)
            return -1
        return seed_with_children(self, seed, self._spaces.values())

    def _check_seed_arg(self, seed: Any, what: str = "seed") -> None:
        if type(self).seed is not Dict.seed:
            return  # a subclass's own seed() decides what it takes
        self._check_own_seed(seed, what)

    def _check_own_seed(self, seed: Any, what: str = "seed") -> None:
        """Check ``seed`` (called ``what``), and every child's seed in a dict of them, before
        any child is seeded; a child's is called ``what[key]``."""
        if not isinstance(seed, cabc.Mapping):
            check_seed(seed, what=what, accepted=_SEEDS)
            return
        self._check_keys("Seeds", seed, "" if what == "seed" else f" in {what}")
        for key, child_seed in seed.items():
            self._spaces[key]._check_seed_arg(child_seed, f"{what}[{key!r}]")

    def _check_keys(self, what: str, given: cabc.Mapping[Any, Any], where: str = "") -> None:
        """Raise unless every key of ``given`` (seeds or masks, given ``where``: ``" in
        seed['cfg']"`` for a child's) is a key of this Dict."""
        unknown = [k for k in given if k not in self._spaces]
        if unknown:
            raise ValueError(
                f"{what} given for {unknown}{where}, which are not keys of this Dict "
                f"({list(self._spaces)})."
            )

    def sample(self, mask: Any = None) -> dict[Any, Any]:
        """Sample every child; ``mask`` is a dict of sub-masks (missing keys: unmasked).

        Raises:
            ValueError: ``mask`` has keys this Dict does not have.
        """
        if mask is None:
            return {key: space.sample() for key, space in self._spaces.items()}
        if not isinstance(mask, cabc.Mapping):
            raise TypeError(f"A Dict mask must be a dict of sub-masks, got {type(mask).__name__}.")
        if not self._spaces.keys() >= mask.keys():
            self._check_keys("Masks", mask)  # a misspelt key would leave its child unmasked
        return {key: space.sample(mask.get(key)) for key, space in self._spaces.items()}

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a dict with exactly these keys and every value in its sub-space."""
        if not isinstance(x, cabc.Mapping) or len(x) != len(self._spaces):
            return False
        try:
            return all(space.contains(x[key]) for key, space in self._spaces.items())
        except KeyError:
            return False

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Dict)
            and self._kind == other._kind
            and list(self._spaces) == list(other._spaces)
            and all(a == other._spaces[k] for k, a in self._spaces.items())
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{key}: {space!r}" for key, space in self._spaces.items())
        return f"Dict({{{inner}}})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_plan"] = None
        return state

    def to_jsonable(self) -> dict[str, Any]:
        """``{'type': 'Dict', 'spaces': {key: child.to_jsonable(), ...}}``.

        Raises:
            TypeError: a key is not a str: JSON object keys are strings, so the key would
                come back as another one.
        """
        for key in self._spaces:
            if not isinstance(key, str):
                raise TypeError(
                    f"Dict.to_jsonable needs str keys (JSON object keys are strings, so "
                    f"{key!r} would come back as {str(key)!r}), got the {type(key).__name__} "
                    f"key {key!r} of {self!r}."
                )
        return {
            "type": "Dict",
            "spaces": {key: space.to_jsonable() for key, space in self._spaces.items()},
        }

    @classmethod
    def from_jsonable(cls, d: cabc.Mapping[str, Any]) -> Dict:
        """Rebuild a Dict (children via ``space_from_jsonable``).

        Raises:
            TypeError: ``d["spaces"]`` is not a dict of space descriptions by key.
        """
        spaces = d["spaces"]
        if not isinstance(spaces, cabc.Mapping):
            raise field_error("Dict", "spaces", "a dict of space descriptions by key", spaces)
        return cls({key: space_from_jsonable(sub) for key, sub in spaces.items()})


register_space_type("Dict", Dict)
