"""Seeding of envs: ``rng`` and ``_set_rng``, over the seed helpers of ``sekai._seeding``."""

from __future__ import annotations

import numpy as np

from sekai._seeding import SeedLike, check_seed, make_seed_sequence, np_random

__all__ = ["SeedLike", "SeededMixin", "check_seed", "make_seed_sequence", "np_random"]


class SeededMixin:
    """``rng`` and ``_set_rng`` shared by Env and MultiAgentEnv (core.md §3)."""

    _rng: np.random.Generator | None = None
    _rng_seed: int | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The environment's random generator, created from OS entropy if never seeded."""
        if self._rng is None:
            self._rng, self._rng_seed = np_random(None)
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(value).__name__}.")
        self._rng = value
        self._rng_seed = -1

    def _set_rng(self, seed: SeedLike) -> int:
        """Seed ``self.rng``: an int or Generator reseeds, None keeps the current stream.

        Returns:
            The seed in use: the int, ``-1`` for a Generator, or the entropy drawn when the
            environment had never been seeded.
        """
        if seed is None and self._rng is not None:
            return self._rng_seed if self._rng_seed is not None else -1
        self._rng, self._rng_seed = np_random(seed)
        return self._rng_seed
