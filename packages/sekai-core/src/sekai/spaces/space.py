"""The abstract Space base class: shape, dtype, seeding and membership."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from sekai._args import type_name
from sekai._seeding import SeedLike, check_seed, np_random
from sekai.spaces._bounds import normalise_shape

__all__ = ["SeedLike", "Space", "T_cov"]

T_cov = TypeVar("T_cov", covariant=True)


class _Layout:
    """Process-wide counter bumped whenever a space changes its structure after creation.

    Composite spaces cache per-space plans (flatten offsets, fast paths); they compare this
    counter to know whether a nested child may have changed since the plan was built.
    """

    version: ClassVar[int] = 0

    @classmethod
    def bump(cls) -> None:
        cls.version += 1


class Space(abc.ABC, Generic[T_cov]):
    """A set of valid values (observations or actions) with its own random generator.

    Subclasses implement ``sample()``, ``contains()`` and ``is_flattenable``. The generator is
    independent of any environment's: seed it with ``seed()`` or the ``seed=`` argument.
    """

    _shape: tuple[int, ...] | None = None
    _dtype: np.dtype[Any] | None = None
    _rng: np.random.Generator | None = None
    _rng_seed: int | None = None

    def __init__(
        self,
        shape: int | tuple[int, ...] | None = None,
        dtype: Any = None,
        seed: SeedLike = None,
    ) -> None:
        """Store ``shape`` and ``dtype`` and, if ``seed`` is given, seed the generator now.

        ``shape`` follows Box's rules: an int ``n`` means ``(n,)``, entries are ints ``>= 0``.

        Raises:
            TypeError: ``shape`` is not an int or a sequence of ints.
            ValueError: a ``shape`` entry is negative.
        """
        self._shape = normalise_shape(shape, type(self).__name__)
        self._dtype = None if dtype is None else np.dtype(dtype)
        if seed is not None:
            self.seed(seed)

    # -- basic properties ------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...] | None:
        """Shape of one sample (``None`` for composite spaces)."""
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any] | None:
        """NumPy dtype of a sample (``None`` for composite spaces)."""
        return self._dtype

    @property
    @abc.abstractmethod
    def is_flattenable(self) -> bool:
        """Whether ``sekai.spaces.flatten`` can turn samples into fixed-size vectors."""

    # -- seeding ---------------------------------------------------------------------------

    @property
    def rng(self) -> np.random.Generator:
        """This space's generator, created from OS entropy on first use if never seeded."""
        rng = self._rng
        if rng is None:
            rng, self._rng_seed = np_random(None)
            self._rng = rng
        return rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(value).__name__}.")
        self._rng = value
        self._rng_seed = -1

    def seed(self, seed: Any = None) -> int:
        """Seed this space's generator and return the seed used.

        An int (>= 0) gives a fresh PCG64 generator; a Generator is used as is (returns ``-1``);
        ``None`` keeps an existing generator, or creates one from OS entropy (returning it).

        Raises:
            TypeError: ``seed`` is a float, bool, str or other non-integer.
            ValueError: ``seed`` is negative.
        """
        return self._seed_self(seed)

    def _check_seed_arg(self, seed: Any, what: str = "seed") -> None:
        """Raise as ``seed(seed)`` would, seeding nothing; the message calls the seed ``what``
        (a composite's child is ``seed['pos']`` or ``seed[1]``).

        Composites check every child's seed this way before seeding any, so a bad seed late
        in a list leaves no child re-seeded. A space whose class has a ``seed()`` of its own
        and not this method is left to its ``seed()`` (which may take other seeds).
        """
        if type(self).seed is not Space.seed:
            return
        check_seed(seed, what=what)

    def _seed_self(self, seed: Any) -> int:
        check_seed(seed)
        if seed is None and self._rng is not None:
            return self._rng_seed if self._rng_seed is not None else -1
        self._rng, self._rng_seed = np_random(seed)
        return self._rng_seed

    # -- membership and sampling -----------------------------------------------------------

    @abc.abstractmethod
    def sample(self, mask: Any = None) -> T_cov:
        """Draw a random member of the space (``mask`` restricts it, format per space)."""

    @abc.abstractmethod
    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a member of the space."""

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    # -- serialisation ---------------------------------------------------------------------

    def to_jsonable(self) -> dict[str, Any]:
        """Describe the space as a JSON-compatible dict (``{"type": ..., ...}``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support JSON serialization")

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> Space[Any]:
        """Rebuild a space from ``to_jsonable()``'s dict."""
        raise NotImplementedError(f"{cls.__name__} does not support JSON serialization")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def not_a_space(value: object) -> str:
    """How an error names a value that is not a sekai Space (ending the sentence): a foreign
    class by its full name (gymnasium's ``Box`` is not sekai's), with how to convert a
    gymnasium space."""
    named = type_name(value)
    if type(value).__module__.partition(".")[0] == "gymnasium":
        return f"{named}. Convert it with sekai.compat.space_from_gymnasium(space)."
    return f"{named}."


def check_space(owner: str, name: str, value: object) -> Space[Any]:
    """``value``, which argument or attribute ``name`` of ``owner`` must hold a Space;
    raises ``TypeError`` otherwise."""
    if not isinstance(value, Space):
        raise TypeError(f"{owner}: {name} must be a sekai.Space, got {not_a_space(value)}")
    return value
