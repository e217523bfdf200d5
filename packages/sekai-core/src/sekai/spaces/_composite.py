"""Seeding shared by composite spaces (Dict, Tuple, Sequence)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from sekai._seeding import check_seed, make_seed_sequence
from sekai.spaces.space import Space

__all__ = ["seed_with_children"]


def seed_with_children(space: Space[Any], seed: Any, children: Iterable[Space[Any]]) -> int:
    """Seed ``space`` itself, then each child with ``make_seed_sequence(seed, n)``.

    A Generator seeds ``space`` as is and its children from one draw of it (``-1`` returned);
    ``None`` keeps existing generators: if ``space`` was never seeded, it seeds it from
    entropy, and from that entropy the children that were never seeded either.
    """
    check_seed(seed)
    if seed is None and space._rng is not None:
        return space._rng_seed if space._rng_seed is not None else -1
    used = space._seed_self(seed)
    base = int(seed.integers(2**63)) if isinstance(seed, np.random.Generator) else used
    kids = list(children)
    for child, child_seed in zip(kids, make_seed_sequence(base, len(kids))):
        if seed is not None or child._rng is None:  # None leaves a seeded child's stream
            child.seed(child_seed)
    return used
