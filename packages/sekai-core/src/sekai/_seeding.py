"""Seeds: validated seeds, generators and independent child seeds (below spaces and envs)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sekai._args import IntLike

__all__ = ["SeedLike", "check_seed", "make_seed_sequence", "np_random"]

# What a seed argument accepts (``reset(seed=...)``, ``space.seed()``, ``np_random``): a
# non-negative Python or NumPy int, a Generator (used as is), or None.
SeedLike = int | np.integer[Any] | np.random.Generator | None


def check_seed(
    seed: object, *, what: str = "seed", allow_generator: bool = True, accepted: str | None = None
) -> None:
    """Raise TypeError/ValueError unless ``seed`` is None, a non-negative int or (when
    allowed) a Generator; ``accepted`` overrides the description of what is accepted."""
    if accepted is None:
        accepted = (
            "a non-negative int, None or a numpy Generator"
            if allow_generator
            else ("a non-negative int or None")
        )
    if seed is None:
        return
    if isinstance(seed, np.random.Generator):
        if allow_generator:
            return
        raise TypeError(f"{what} must be {accepted}, got a numpy Generator.")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{what} must be {accepted}, got {type(seed).__name__} {seed!r}.")
    if int(seed) < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {int(seed)}.")


def np_random(seed: SeedLike = None) -> tuple[np.random.Generator, int]:
    """Return ``(generator, seed_used)`` for a seed, following the Env seeding rules.

    An int gives ``np.random.default_rng(seed)``; a Generator is used as is (seed ``-1``);
    ``None`` draws 128 bits of OS entropy and returns them as the seed.
    """
    check_seed(seed)
    if isinstance(seed, np.random.Generator):
        return seed, -1
    if seed is None:
        entropy = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
        return np.random.default_rng(entropy), entropy
    value = int(seed)
    return np.random.default_rng(value), value


def make_seed_sequence(base_seed: IntLike, n: IntLike) -> list[int]:
    """Derive ``n`` independent int seeds from ``base_seed`` with ``SeedSequence.spawn``.

    Child ``i`` is ``SeedSequence(base_seed).spawn(n)[i].generate_state(1)[0]``, so it does not
    depend on ``n``.
    """
    if base_seed is None:
        raise TypeError("base_seed must be a non-negative int, got None.")
    check_seed(base_seed, what="base_seed", allow_generator=False, accepted="a non-negative int")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}.")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}.")
    children = np.random.SeedSequence(int(base_seed)).spawn(int(n))
    return [int(child.generate_state(1)[0]) for child in children]
