"""MarketModel, Simulation and online steppers: the interface every market simulator follows."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sekai.finance.simulators._checks import as_positive_int, check_generator, read_only

__all__ = ["MarketModel", "ModelStepper", "PathStepper", "Simulation"]

_IMMUTABLE = "{cls} is immutable: build a new model with the parameters you want"


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: compare fields
class Simulation:
    """Simulated prices (row 0 = the initial prices), an optional listing mask and latent state.

    Attributes:
        prices: ``(n_steps + 1, n_assets)`` or ``(n_paths, n_steps + 1, n_assets)`` float64,
            NaN where an asset is unlisted.
        mask: bool array of the same shape (True = listed), or None when every asset is listed.
        state: latent state arrays whose leading axes equal ``prices.shape[:-1]``.
    """

    prices: np.ndarray
    mask: np.ndarray | None = None
    state: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        prices = np.asarray(self.prices, dtype=np.float64)
        if prices.ndim not in (2, 3) or prices.shape[-1] < 1 or prices.shape[-2] < 1:
            raise ValueError(
                "Simulation.prices must have shape (n_steps + 1, n_assets) or "
                f"(n_paths, n_steps + 1, n_assets), got {prices.shape}"
            )
        object.__setattr__(self, "prices", prices)
        if self.mask is not None:
            mask = np.asarray(self.mask)
            if mask.dtype != np.bool_ or mask.shape != prices.shape:
                raise ValueError(
                    f"Simulation.mask must be a bool array of shape {prices.shape}, "
                    f"got {mask.dtype} {mask.shape}"
                )
            object.__setattr__(self, "mask", mask)
        lead = prices.shape[:-1]
        state: dict[str, np.ndarray] = {}
        for name, value in dict(self.state).items():
            array = np.asarray(value)
            if array.shape[: len(lead)] != lead:
                raise ValueError(
                    f"Simulation.state[{name!r}] must have leading axes {lead}, got {array.shape}"
                )
            state[name] = array
        object.__setattr__(self, "state", state)

    @property
    def n_paths(self) -> int | None:
        """Number of paths, or None for a single path of shape ``(n_steps + 1, n_assets)``."""
        return int(self.prices.shape[0]) if self.prices.ndim == 3 else None

    @property
    def n_steps(self) -> int:
        """Number of steps (rows minus one)."""
        return int(self.prices.shape[-2]) - 1

    @property
    def n_assets(self) -> int:
        """Number of assets."""
        return int(self.prices.shape[-1])

    def path(self, index: int) -> Simulation:
        """Return path ``index`` of a batch as a single-path Simulation."""
        if self.prices.ndim != 3:
            raise ValueError("path() needs a batch of paths (prices of shape (n_paths, rows, n))")
        return Simulation(
            self.prices[index],
            None if self.mask is None else self.mask[index],
            {name: value[index] for name, value in self.state.items()},
        )


def check_simulate_args(rng: object, n_steps: object, n_paths: object) -> tuple[int, int | None]:
    """Validate the arguments of ``simulate``; return ``(n_steps, n_paths)``."""
    check_generator(rng)
    steps = as_positive_int("n_steps", n_steps, not_int=TypeError)
    paths = None if n_paths is None else as_positive_int("n_paths", n_paths, not_int=TypeError)
    return steps, paths


class MarketModel(abc.ABC):
    """A stochastic model of ``n_assets`` prices sampled every ``dt`` years.

    Subclasses set ``n_assets`` and ``dt`` and implement ``simulate``. Those with a Markov state
    override ``stepper`` to simulate online, one step at a time (the built-in models do).
    """

    n_assets: int
    dt: float

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """Return ``{name: per-step shape}`` of the latent state ``simulate`` reports."""
        return {}

    @abc.abstractmethod
    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate ``n_steps`` steps from the initial prices.

        Args:
            rng: the generator to draw from (an env passes ``self.rng``).
            n_steps: number of steps (int >= 1); the result has ``n_steps + 1`` rows.
            n_paths: number of independent paths (int >= 1), or None for one unbatched path.
        """

    def stepper(self, n_paths: int, *, horizon: int | None = None) -> ModelStepper:
        """Return an object that simulates ``n_paths`` paths online, one step per call.

        The default simulates ``horizon`` steps per path at every reset (``simulate``'s whole
        paths) and replays them; the built-in models override it with a true online simulation
        that needs no horizon and keeps no path in memory.

        Raises:
            ValueError: when the default is used without a ``horizon``.
        """
        if horizon is None:
            raise ValueError(
                f"{type(self).__name__} simulates whole paths only; pass horizon= (the number "
                "of steps a path needs) to replay paths simulated at reset"
            )
        return PathStepper(self, n_paths, horizon=horizon)


class ModelStepper(abc.ABC):
    """Online simulation of ``n_paths`` independent paths of a model (leading axis: path).

    ``reset(rng, indices)`` starts new paths at the model's initial prices, ``step(rng)``
    advances every active path by one step. Arrays handed out are never modified later.
    """

    def __init__(self, model: MarketModel, n_paths: int) -> None:
        self.model = model
        self.n_paths = as_positive_int("n_paths", n_paths, not_int=TypeError)
        self.n_assets = int(model.n_assets)
        self._steps = np.zeros(self.n_paths, np.int64)

    @property
    def steps(self) -> np.ndarray:
        """Steps taken by each path since its reset, ``(n_paths,)`` int64 (a copy)."""
        steps: np.ndarray = self._steps.copy()
        return steps

    @property
    @abc.abstractmethod
    def prices(self) -> np.ndarray:
        """Current prices ``(n_paths, n_assets)`` (read-only), NaN where unlisted."""

    @property
    def mask(self) -> np.ndarray | None:
        """Current listing mask ``(n_paths, n_assets)`` or None when every asset is listed."""
        return None

    @property
    def state(self) -> dict[str, np.ndarray]:
        """Current latent state (the model's ``state_spec``), leading axis ``n_paths``."""
        return {}

    def _indices(self, indices: Any) -> np.ndarray:
        if indices is None:
            return np.arange(self.n_paths)
        return np.asarray(indices, dtype=np.intp).reshape(-1)

    @abc.abstractmethod
    def reset(self, rng: np.random.Generator, indices: Any = None) -> None:
        """Start new paths in ``indices`` (all when None) at the model's initial prices."""

    @abc.abstractmethod
    def step(self, rng: np.random.Generator, active: np.ndarray | None = None) -> np.ndarray:
        """Advance every path where ``active`` (all when None); return the step's log returns.

        Paths that are not active keep their prices and state and get a log return of 0.

        Returns:
            A new ``(n_paths, n_assets)`` float64 array (NaN for unlisted assets).
        """


class PathStepper(ModelStepper):
    """A stepper for any model: simulates ``horizon`` steps per path at reset, then replays them."""

    def __init__(self, model: MarketModel, n_paths: int, *, horizon: int) -> None:
        super().__init__(model, n_paths)
        self.horizon = as_positive_int("horizon", horizon, not_int=TypeError)
        self._prices = np.full((self.n_paths, self.horizon + 1, self.n_assets), np.nan)
        self._mask: np.ndarray | None = None
        self._state: dict[str, np.ndarray] = {
            name: np.zeros((self.n_paths, self.horizon + 1, *shape))
            for name, shape in model.state_spec().items()
        }
        self._rows = np.arange(self.n_paths)

    @property
    def prices(self) -> np.ndarray:
        """Current prices ``(n_paths, n_assets)`` (read-only), NaN where unlisted."""
        return read_only(self._prices[self._rows, self._steps])

    @property
    def mask(self) -> np.ndarray | None:
        """Current listing mask, or None when every asset is listed."""
        if self._mask is None:
            return None
        return read_only(self._mask[self._rows, self._steps])

    @property
    def state(self) -> dict[str, np.ndarray]:
        """Current latent state, leading axis ``n_paths``."""
        return {k: v[self._rows, self._steps] for k, v in self._state.items()}

    def reset(self, rng: np.random.Generator, indices: Any = None) -> None:
        """Simulate fresh paths of ``horizon`` steps for ``indices``."""
        idx = self._indices(indices)
        if idx.size == 0:
            return
        sim = self.model.simulate(rng, self.horizon, n_paths=int(idx.size))
        self._prices[idx] = sim.prices
        if sim.mask is not None:
            if self._mask is None:
                self._mask = np.ones(self._prices.shape, np.bool_)
            self._mask[idx] = sim.mask
        elif self._mask is not None:
            self._mask[idx] = True
        for name, value in sim.state.items():
            if name in self._state:
                self._state[name][idx] = value
        self._steps[idx] = 0

    def step(self, rng: np.random.Generator, active: np.ndarray | None = None) -> np.ndarray:
        """Move to the next stored row of every active path."""
        move = np.ones(self.n_paths, np.bool_) if active is None else np.asarray(active, bool)
        if np.any(self._steps[move] >= self.horizon):
            raise RuntimeError(
                f"a path ran past its horizon of {self.horizon} steps; reset it first"
            )
        before = self._prices[self._rows, self._steps]
        self._steps = self._steps + move
        after = self._prices[self._rows, self._steps]
        with np.errstate(invalid="ignore", divide="ignore"):
            log_returns = np.log(after / before)
        log_returns[~move] = 0.0
        result: np.ndarray = log_returns
        return result


class BuiltinModel(MarketModel):
    """Base of the built-in models: immutable, with a compact repr."""

    _repr_fields: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(_IMMUTABLE.format(cls=type(self).__name__))

    def __delattr__(self, name: str) -> None:
        raise AttributeError(_IMMUTABLE.format(cls=type(self).__name__))

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        from sekai.finance.simulators._checks import format_dt, format_param

        parts = []
        for name in self._repr_fields:
            value = getattr(self, name)
            if name == "dt":
                parts.append(f"dt={format_dt(value)}")
            elif name == "n_assets":
                parts.append(f"n_assets={value}")
            else:
                parts.append(f"{name}={format_param(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"


class KernelModel(BuiltinModel):
    """A built-in model defined by a one-step Markov kernel, simulated online or as paths.

    Subclasses implement ``_init_state(rng, k)`` (a dict of arrays with leading axis ``k``;
    public state under the names of ``state_spec``, private entries prefixed with ``_``) and
    ``_advance(rng, state, k)`` returning ``(log_returns (k, n), new_state)`` without modifying
    ``state``. ``_s0`` is the ``(n,)`` vector of initial prices.
    """

    _s0: np.ndarray

    @abc.abstractmethod
    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        """Return the initial state of ``k`` paths."""

    @abc.abstractmethod
    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Return one step's log returns ``(k, n)`` and the next state of ``k`` paths."""

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        """Simulate ``n_steps`` steps of ``n_paths`` paths (one unbatched path when None)."""
        steps, paths = check_simulate_args(rng, n_steps, n_paths)
        k = 1 if paths is None else paths
        state = self._init_state(rng, k)
        spec = self.state_spec()
        log_prices = np.empty((k, steps + 1, self.n_assets))
        log_prices[:, 0] = 0.0
        history = {name: np.empty((k, steps + 1, *shape)) for name, shape in spec.items()}
        for name in spec:
            history[name][:, 0] = state[name]
        for t in range(steps):
            log_returns, state = self._advance(rng, state, k)
            log_prices[:, t + 1] = log_prices[:, t] + log_returns
            for name in spec:
                history[name][:, t + 1] = state[name]
        prices = self._s0 * np.exp(log_prices)
        if paths is None:
            return Simulation(prices[0], None, {name: h[0] for name, h in history.items()})
        return Simulation(prices, None, history)

    def stepper(self, n_paths: int, *, horizon: int | None = None) -> ModelStepper:
        """Return an online stepper (``horizon`` is accepted and ignored: none is needed)."""
        return KernelStepper(self, n_paths)


class KernelStepper(ModelStepper):
    """Online simulation of a ``KernelModel``: one kernel step for all paths per call."""

    model: KernelModel

    def __init__(self, model: KernelModel, n_paths: int) -> None:
        super().__init__(model, n_paths)
        self._spec = tuple(model.state_spec())
        self._state = model._init_state(np.random.default_rng(0), self.n_paths)
        self._prices = read_only(np.repeat(model._s0[None], self.n_paths, axis=0))

    @property
    def prices(self) -> np.ndarray:
        """Current prices ``(n_paths, n_assets)`` (read-only)."""
        return self._prices

    @property
    def state(self) -> dict[str, np.ndarray]:
        """Current latent state (copies), leading axis ``n_paths``."""
        return {name: self._state[name].copy() for name in self._spec}

    def reset(self, rng: np.random.Generator, indices: Any = None) -> None:
        """Start fresh paths for ``indices`` (all when None)."""
        idx = self._indices(indices)
        if idx.size == 0:
            return
        fresh = self.model._init_state(rng, int(idx.size))
        state = {}
        for name, value in self._state.items():
            updated = value.copy()
            updated[idx] = fresh[name]
            state[name] = updated
        self._state = state
        prices = self._prices.copy()
        prices[idx] = self.model._s0
        self._prices = read_only(prices)
        self._steps[idx] = 0

    def step(self, rng: np.random.Generator, active: np.ndarray | None = None) -> np.ndarray:
        """Advance every active path by one kernel step; return the log returns."""
        log_returns, state = self.model._advance(rng, self._state, self.n_paths)
        if active is None:
            self._state = state
            self._steps += 1
        else:
            move = np.asarray(active, dtype=np.bool_)
            for name, value in state.items():
                old = self._state[name]
                where = move.reshape((-1,) + (1,) * (value.ndim - 1))
                state[name] = np.where(where, value, old)
            self._state = state
            log_returns = np.where(move[:, None], log_returns, 0.0)
            self._steps += move
        self._prices = read_only(self._prices * np.exp(log_returns))
        return log_returns
