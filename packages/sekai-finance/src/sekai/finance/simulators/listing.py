"""Listings and delistings: assets enter and leave the tradable universe over time."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.finance.simulators._checks import as_float, as_positive_int, read_only
from sekai.finance.simulators.base import (
    BuiltinModel,
    MarketModel,
    ModelStepper,
    Simulation,
    check_simulate_args,
)

__all__ = ["ListingProcess"]


class ListingProcess(BuiltinModel):
    """Wrap a model so each asset is listed or unlisted by a two-state Markov chain.

    An asset is listed at t = 0 with probability ``initial_listed``; after each step an unlisted
    asset lists with probability ``1 - exp(-listing_rate dt)`` and a listed one delists with
    ``1 - exp(-delisting_rate dt)``. Whenever fewer than ``min_listed`` are listed, the
    lowest-index unlisted assets are listed. Prices are NaN and the mask False where unlisted
    (ANDed with the inner model's mask).

    Args:
        model: the inner market model. initial_listed: probability in [0, 1].
        listing_rate, delisting_rate: rates per year (>= 0). min_listed: ``0 <= min_listed <= n``.
    """

    _repr_fields = ("model", "initial_listed", "listing_rate", "delisting_rate", "min_listed")

    model: MarketModel
    initial_listed: float
    listing_rate: float
    delisting_rate: float
    min_listed: int

    def __init__(
        self,
        model: MarketModel,
        *,
        initial_listed: float = 0.8,
        listing_rate: float = 1.0,
        delisting_rate: float = 0.25,
        min_listed: int = 1,
    ) -> None:
        if not isinstance(model, MarketModel):
            raise TypeError(f"model must be a MarketModel, got {type(model).__name__}")
        minimum = as_positive_int("min_listed", min_listed, minimum=0)
        if minimum > model.n_assets:
            raise ValueError(
                f"min_listed must be between 0 and n_assets ({model.n_assets}), got {minimum}"
            )
        on = as_float("listing_rate", listing_rate, "ge0")
        off = as_float("delisting_rate", delisting_rate, "ge0")
        self._set(
            model=model,
            initial_listed=as_float("initial_listed", initial_listed, "prob"),
            listing_rate=on,
            delisting_rate=off,
            min_listed=minimum,
            n_assets=model.n_assets,
            dt=model.dt,
            _p_on=-math.expm1(-on * model.dt),
            _p_off=-math.expm1(-off * model.dt),
        )

    _p_on: float
    _p_off: float

    def __repr__(self) -> str:
        return (
            f"ListingProcess({self.model!r}, initial_listed={self.initial_listed!r}, "
            f"listing_rate={self.listing_rate!r}, delisting_rate={self.delisting_rate!r}, "
            f"min_listed={self.min_listed})"
        )

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """The inner model's state spec."""
        return self.model.state_spec()

    def _enforce_minimum(self, listed: np.ndarray) -> np.ndarray:
        """List the lowest-index unlisted assets of rows with fewer than ``min_listed`` listed."""
        if self.min_listed == 0:
            return listed
        deficit = self.min_listed - listed.sum(axis=-1, keepdims=True)
        if not np.any(deficit > 0):
            return listed
        unlisted = ~listed
        rank = np.cumsum(unlisted, axis=-1)
        result: np.ndarray = listed | (unlisted & (rank <= deficit))
        return result

    def _initial(self, u: np.ndarray) -> np.ndarray:
        return self._enforce_minimum(u < self.initial_listed)

    def _transition(self, listed: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self._enforce_minimum(np.where(listed, u >= self._p_off, u < self._p_on))

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate the inner model, then the listing chains (one uniform per asset and row)."""
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        inner = self.model.simulate(rng, steps, n_paths=paths)
        prices = inner.prices if paths is not None else inner.prices[None]
        k = prices.shape[0]
        u = rng.random((k, steps + 1, self.n_assets))
        listed = np.empty(prices.shape, np.bool_)
        listed[:, 0] = self._initial(u[:, 0])
        for t in range(1, steps + 1):
            listed[:, t] = self._transition(listed[:, t - 1], u[:, t])
        if paths is None:
            listed = listed[0]
        mask = listed if inner.mask is None else listed & inner.mask
        return Simulation(np.where(mask, inner.prices, np.nan), mask, inner.state)

    def stepper(self, n_paths: int, *, horizon: int | None = None) -> ModelStepper:
        """An online stepper over the inner model's stepper."""
        return ListingStepper(self, n_paths, horizon=horizon)


class ListingStepper(ModelStepper):
    """Online listing chains on top of the inner model's online stepper."""

    model: ListingProcess

    def __init__(self, model: ListingProcess, n_paths: int, *, horizon: int | None) -> None:
        super().__init__(model, n_paths)
        self._inner = model.model.stepper(n_paths, horizon=horizon)
        self._listed = read_only(np.ones((self.n_paths, self.n_assets), np.bool_))

    @property
    def mask(self) -> np.ndarray:
        """Current listing mask ``(n_paths, n_assets)`` (read-only)."""
        inner = self._inner.mask
        return self._listed if inner is None else read_only(self._listed & inner)

    @property
    def prices(self) -> np.ndarray:
        """Current prices, NaN where unlisted (read-only)."""
        return read_only(np.where(self.mask, self._inner.prices, np.nan))

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The inner model's state."""
        return self._inner.state

    def reset(self, rng: np.random.Generator, indices: Any = None) -> None:
        """Start new inner paths and draw the initial listings for ``indices``."""
        idx = self._indices(indices)
        if idx.size == 0:
            return
        self._inner.reset(rng, idx)
        listed = self._listed.copy()
        listed[idx] = self.model._initial(rng.random((idx.size, self.n_assets)))
        self._listed = read_only(listed)
        self._steps[idx] = 0

    def step(self, rng: np.random.Generator, active: np.ndarray | None = None) -> np.ndarray:
        """Advance the inner paths and the listing chains; NaN log returns where unlisted."""
        before = self.mask
        log_returns = self._inner.step(rng, active)
        listed = self.model._transition(self._listed, rng.random((self.n_paths, self.n_assets)))
        if active is not None:
            move = np.asarray(active, dtype=np.bool_)
            listed = np.where(move[:, None], listed, self._listed)
            self._steps += move
        else:
            self._steps += 1
        self._listed = read_only(listed)
        return np.where(before & self.mask, log_returns, np.nan)
