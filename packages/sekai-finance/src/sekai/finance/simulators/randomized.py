"""Domain randomisation: a freshly built model for every simulated path."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sekai.finance.simulators.base import BuiltinModel, MarketModel, Simulation, check_simulate_args

__all__ = ["Randomized"]


class Randomized(BuiltinModel):
    """Build a fresh model per path with ``factory(rng)`` (domain randomisation).

    The model built for ``np.random.default_rng(0)`` is kept as ``reference``; it fixes
    ``n_assets``, ``dt`` and ``state_spec``, which every later model must match.

    Args:
        factory: ``factory(rng) -> MarketModel``, drawing its parameters from ``rng``.
    """

    factory: Callable[[np.random.Generator], MarketModel]
    reference: MarketModel

    def __init__(self, factory: Callable[[np.random.Generator], MarketModel]) -> None:
        if not callable(factory):
            raise TypeError(
                "factory must be a callable factory(rng) -> MarketModel, "
                f"got {type(factory).__name__}"
            )
        reference = factory(np.random.default_rng(0))
        if not isinstance(reference, MarketModel):
            raise TypeError(
                f"factory(rng) must return a MarketModel, got {type(reference).__name__}"
            )
        self._set(
            factory=factory, reference=reference, n_assets=reference.n_assets, dt=reference.dt
        )

    def __repr__(self) -> str:
        name = getattr(self.factory, "__qualname__", type(self.factory).__name__)
        return f"Randomized(factory={name}, reference={self.reference!r})"

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """The reference model's state spec."""
        return self.reference.state_spec()

    def _build(self, rng: np.random.Generator) -> MarketModel:
        model = self.factory(rng)
        if not isinstance(model, MarketModel):
            raise ValueError(f"factory(rng) must return a MarketModel, got {type(model).__name__}")
        if model.n_assets != self.n_assets or abs(model.dt - self.dt) > 1e-12 * self.dt:
            raise ValueError(
                "every model built by factory must match the reference's n_assets and dt "
                f"({self.n_assets}, {self.dt}); got ({model.n_assets}, {model.dt})"
            )
        if model.state_spec() != self.state_spec():
            raise ValueError(
                f"every model built by factory must have the reference's state_spec "
                f"{self.state_spec()}, got {model.state_spec()}"
            )
        return model

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate each path with its own model ``factory(rng)`` (built just before it)."""
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        sims = [self._build(rng).simulate(rng, steps) for _ in range(1 if paths is None else paths)]
        if paths is None:
            return sims[0]
        prices = np.stack([s.prices for s in sims])
        mask = None
        if any(s.mask is not None for s in sims):
            mask = np.stack(
                [np.ones(s.prices.shape, np.bool_) if s.mask is None else s.mask for s in sims]
            )
        state = {name: np.stack([s.state[name] for s in sims]) for name in self.state_spec()}
        return Simulation(prices, mask, state)
