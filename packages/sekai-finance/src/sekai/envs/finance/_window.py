"""The window-based single envs' common machinery: price sources, windows, costs, rewards."""

from __future__ import annotations

import copy
import math
from typing import Any, Generic, TypeVar

import numpy as np

from sekai.envs.finance._common import (
    FinanceEnv,
    check_int,
    check_real,
    fixed,
    parse_options,
    python_scalar,
)
from sekai.envs.finance._helpers import (
    check_gbm_prices,
    price_source,
    refuse_unused_gbm,
    simulated_prices,
)
from sekai.finance._located import decision_at, first_at
from sekai.finance._pandas import pandas_assets
from sekai.finance._values import real_array
from sekai.finance.costs import CostModel, as_cost_model
from sekai.finance.data import MarketData
from sekai.finance.rewards import LogReturn, RewardFunction
from sekai.finance.sampling import (
    EpisodeSampler,
    RandomStart,
    as_sampler,
    check_fixed_start,
    draw_window_start,
    first_valid_window,
    window_start_from_option,
)
from sekai.finance.simulators._checks import format_dt

__all__ = [
    "History",
    "WindowEnv",
    "check_cost_model",
    "load_history",
    "resolve_dt",
]

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")

_ONE_SOURCE = (
    "got {given}: pass one source: historical `prices=` or `data=`, or a `model=` to simulate."
)


class History:
    """A complete price panel with its log returns, ready to cut into episode windows."""

    def __init__(self, data: MarketData, window: int) -> None:
        self.data = data
        self.prices = data.prices  # (T, n) float64, read-only
        with np.errstate(divide="ignore"):
            log_returns = np.log(self.prices[1:] / self.prices[:-1])
        log_returns.flags.writeable = False
        self.log_returns = log_returns  # (T - 1, n): row k is the return from row k to k + 1
        self.log_returns32 = log_returns.astype(np.float32)  # what observations hold
        self.timestamps = data.timestamps
        self.n_starts = data.n_steps - window + 1
        self.warmup = data.warmup

    def timestamp(self, row: int) -> Any:
        """The data's timestamp of ``row`` (a Python number, or numpy datetime64)."""
        return python_scalar(self.timestamps[row])

    def field_rows(self, name: str) -> np.ndarray | None:
        """A data field, or None when the data has no such field."""
        return self.data.fields.get(name)


def _from_prices(prices: Any, *, env: str, single_asset: bool) -> MarketData:
    module = type(prices).__module__
    if module.startswith("pandas") and hasattr(prices, "index"):
        import pandas as pd

        frame = prices.to_frame() if isinstance(prices, pd.Series) else prices
        if isinstance(frame.index, pd.DatetimeIndex):
            return _complete(MarketData.from_pandas(frame), env=env, single_asset=single_asset)
        values = frame.to_numpy()  # its own dtype: _raw refuses bools and other non-numbers
        # The column labels as asset ids, as MarketData.from_pandas keeps them for dated data.
        return _raw(values, env=env, single_asset=single_asset, assets=pandas_assets(frame.columns))
    return _raw(prices, env=env, single_asset=single_asset)


def _raw(prices: Any, *, env: str, single_asset: bool, assets: Any = None) -> MarketData:
    array = real_array("prices", prices)  # TypeError for bools, strings, complex numbers...
    if single_asset:
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1:
            raise ValueError(
                f"{env} trades one asset: prices must have shape (T,) or (T, 1), got "
                f"{array.shape}; pass a single column."
            )
    elif array.ndim not in (1, 2):
        raise ValueError(f"prices must have shape (T,) or (T, n_assets), got {array.shape}.")
    bad = ~np.isfinite(array)
    if bad.any():
        raise ValueError(
            f"prices must be finite: found {int(bad.sum())} NaN or inf value(s) "
            f"({first_at(bad, array)}); {env} needs a complete history (use Market-v0 for "
            "assets that list and delist)."
        )
    if (array <= 0).any():
        raise ValueError(
            f"prices must be strictly positive: found {int((array <= 0).sum())} value(s) <= 0 "
            f"({first_at(array <= 0, array)})."
        )
    if array.shape[0] < 2:
        raise ValueError(f"prices must have at least 2 rows, got {array.shape[0]}.")
    if array.ndim == 2 and array.shape[1] == 0:
        raise ValueError(f"prices must have at least 1 asset (column), got shape {array.shape}.")
    return MarketData(array, assets=assets)


def _complete(data: MarketData, *, env: str, single_asset: bool) -> MarketData:
    if single_asset and data.n_assets != 1:
        raise ValueError(
            f"{env} trades one asset but the data has {data.n_assets}; pick one with "
            "data.select([asset])."
        )
    missing = ~data.mask
    if missing.any():
        where = first_at(missing, data.prices, timestamps=data.timestamps, assets=data.assets)
        raise ValueError(
            f"the price panel has missing prices (NaN = unlisted) in {int(missing.sum())} "
            f"place(s) ({where}); {env} needs a complete panel: use Market-v0 for a universe "
            "that changes, or fill/select the data."
        )
    return data


def load_history(
    prices: Any,
    data: Any,
    model: Any,
    *,
    env: str,
    single_asset: bool,
    window: int,
    lookback: int,
    episode_length: int,
) -> History | None:
    """Resolve ``prices=``/``data=``/``model=`` into a ``History`` (None when simulating)."""
    given = [
        name for name, v in (("prices", prices), ("data", data), ("model", model)) if v is not None
    ]
    if len(given) > 1:
        raise ValueError(_ONE_SOURCE.format(given=" and ".join(f"{g}=" for g in given)))
    if isinstance(prices, MarketData):
        raise TypeError("prices= got a MarketData: pass a MarketData as data=.")
    if data is not None and not isinstance(data, MarketData):
        raise TypeError(
            f"data= must be a sekai.finance.MarketData, got {type(data).__name__}; build one with "
            "MarketData(prices, timestamps=...) or MarketData.from_pandas(df), or pass a raw "
            "price array as prices=."
        )
    if prices is not None:
        data = _from_prices(prices, env=env, single_asset=single_asset)
    if data is None:
        return None
    data = _complete(data, env=env, single_asset=single_asset)
    if data.n_steps < window:
        raise ValueError(
            f"the price history has {data.n_steps} rows but an episode needs lookback + "
            f"episode_length + 1 = {lookback} + {episode_length} + 1 = {window} rows; pass a "
            "longer history or a shorter lookback/episode_length."
        )
    history = History(data, window)
    first_valid_window(history.n_starts, lookback=lookback, warmup=history.warmup)
    return history


def resolve_dt(dt: Any, model: Any, history: History | None, default_of: str = "") -> float:
    """Explicit ``dt``; else the model's; else ``1/periods_per_year`` of dated data; else 1/252.
    ``default_of`` names the env when ``model`` is its default market, not the caller's.

    Raises:
        ValueError: an explicit ``dt`` other than the model's: the model moves its prices by
            its own ``dt``, so another one would misstate every step's length (annualised
            statistics, financing).
    """
    model_dt = (
        None if model is None else check_real("model.dt", getattr(model, "dt", 1 / 252), "gt0")
    )
    if dt is not None:
        value = check_real("dt", dt, "gt0")
        if model_dt is not None and not math.isclose(value, model_dt, rel_tol=1e-9):
            steps = f"steps of {format_dt(model_dt)} years, which info['dt'] must report"
            if default_of:
                raise ValueError(
                    f"dt={format_dt(value)} contradicts {default_of}'s default market: "
                    f"default_market() simulates {steps}; leave dt out, or pass model= a model "
                    "built with the dt you want."
                )
            raise ValueError(
                f"dt={format_dt(value)} contradicts the model's dt={format_dt(model_dt)}: "
                f"its {type(model).__name__} simulates {steps}; leave dt out (None) to follow "
                "the model, or build the model with the dt you want."
            )
        return value
    if model_dt is not None:
        return model_dt
    if history is not None:
        ppy = history.data.periods_per_year
        if ppy is not None and ppy > 0:
            return 1.0 / ppy
    return 1 / 252


def check_cost_model(
    value: Any,
    *,
    history: History | None,
    lookback: int,
    env: str,
    n_assets: int | None,
    name: str = "transaction_cost",
) -> CostModel:
    """``as_cost_model`` plus the construction-time checks of finance.md §6.1 (and, with
    ``n_assets``, one entry per asset in every per-asset parameter); errors name ``name``."""
    model = as_cost_model(value, name)
    for name, values in model.per_asset().items() if n_assets is not None else ():
        if values.shape != (n_assets,):
            raise ValueError(
                f"{model!r}: {name} has {values.size} per-asset values but {env} trades "
                f"{n_assets} asset{'s' if n_assets != 1 else ''}; pass one value or {n_assets}."
            )
    for name in ("volume", "spread"):
        if name in model.requires and (history is None or history.field_rows(name) is None):
            where = "the simulated market" if history is None else "the data"
            raise ValueError(
                f"{model!r} needs {name!r}, which {where} of {env} does not have; add a "
                f"{name!r} field with MarketData.with_fields({name}=...) or use another cost model."
            )
    if "volatility" in model.requires and lookback < 2:
        raise ValueError(
            f"{model!r} needs a volatility estimate, which takes lookback >= 2 (got {lookback})."
        )
    return model


class WindowEnv(FinanceEnv[ObsT, ActT], Generic[ObsT, ActT]):
    """Trading-v0 and Portfolio-v0: episodes are windows of ``lookback + episode_length + 1`` rows.

    Subclasses call ``_setup_window`` in ``__init__`` and implement ``_simulate_path``.
    """

    episode_length = fixed("Decisions per episode (fixed at construction).")
    lookback = fixed("Log returns observed (fixed at construction).")
    prices = fixed("The price history, or None when simulating (fixed at construction).")
    data = fixed("The MarketData of the history, or None when simulating.")
    transaction_cost = fixed("The transaction_cost argument (it became cost_model).")

    _history: History | None
    # The built-in GBM's parameters the caller gave or set: a model set later would leave them
    # unused, so the model setter refuses it as the constructor refuses both together.
    _gbm_given: tuple[str, ...] = ()
    _default_model: Any = None  # the model the env built itself (Market-v0's default market)
    _episode_gbm: tuple[Any, Any, Any] | None = None  # (mu, sigma, dt) its GBM episode is of
    # What the env simulates without a history, and the arguments that give it one.
    _simulates = "prices"
    _history_args = "prices= or data="

    def _setup_window(
        self,
        *,
        env: str,
        history: History | None,
        episode_length: int,
        lookback: int,
        transaction_cost: Any,
        dt: Any,
        model: Any,
        reward: Any,
        sampler: Any,
        capital: Any,
    ) -> None:
        self._env_name = env
        self._history = history
        self._episode_length = episode_length
        self._lookback = lookback
        self._window = lookback + episode_length + 1
        self._transaction_cost = transaction_cost
        self._data = None if history is None else history.data
        self._cost_model = check_cost_model(
            transaction_cost,
            history=history,
            lookback=lookback,
            env=env,
            n_assets=self._asset_count(),
        )
        self._model = model
        self._dt_arg = dt
        self._dt = self._resolve_dt(dt, model)
        self.reward_fn = LogReturn() if reward is None else reward
        self.sampler = sampler
        self._capital = check_real("capital", capital, "gt0")
        self._equity = 1.0
        self._t = 0
        self._start: int | None = None
        self._path: np.ndarray | None = None
        self._log_returns: np.ndarray | None = None
        self._log_returns32: np.ndarray | None = None
        self._times: list[Any] | None = None

    # -- settable parameters --------------------------------------------------------------

    @property
    def cost_model(self) -> CostModel:
        """The cost model pricing every rebalance."""
        return self._cost_model

    @cost_model.setter
    def cost_model(self, value: Any) -> None:
        self._cost_model = check_cost_model(
            value,
            history=self._history,
            lookback=self._lookback,
            env=self._env_name,
            n_assets=self._asset_count(),
            name="cost_model",
        )

    @property
    def reward_fn(self) -> RewardFunction:
        """The reward function (the env holds its own copy)."""
        return self._reward_fn

    @reward_fn.setter
    def reward_fn(self, value: Any) -> None:
        if not isinstance(value, RewardFunction):
            raise TypeError(
                f"reward must be a sekai.finance.RewardFunction, got {type(value).__name__}."
            )
        self._reward_fn = copy.deepcopy(value)

    @property
    def dt(self) -> float:
        """Years per step (``info["dt"]``)."""
        return self._dt

    @dt.setter
    def dt(self, value: Any) -> None:
        self._dt = self._resolve_dt(value, self._model)
        self._dt_arg = value

    @property
    def model(self) -> Any:
        """The market model simulated each episode, or None."""
        return self._model

    @model.setter
    def model(self, value: Any) -> None:
        if self._history is not None and value is not None:
            raise ValueError("this env replays a price history; model= cannot be set on it.")
        self._check_model(value)
        refuse_unused_gbm(
            list(self._gbm_given), price_source(None, None, value), env=self._env_name
        )
        self._dt = self._resolve_dt(self._dt_arg, value)  # first: it may refuse
        self._model = value

    def _resolve_dt(self, dt: Any, model: Any) -> float:
        default = model is not None and model is self._default_model
        return resolve_dt(dt, model, self._history, self._env_name if default else "")

    def _check_builtin_gbm(self, name: str) -> None:
        """``ValueError`` when setting the built-in GBM's ``name`` would have no effect."""
        replays = self._history is not None
        source = "the price history" if replays else price_source(None, None, self._model)
        refuse_unused_gbm([name], source, env=self._env_name)

    def _gbm_set(self, name: str) -> None:
        """Note that the built-in GBM's ``name`` was set (after ``_check_builtin_gbm``)."""
        if name not in self._gbm_given:
            self._gbm_given = (*self._gbm_given, name)

    def _asset_count(self) -> int | None:
        """Number of assets the env's spaces are built for (None while not yet known)."""
        return None

    def _check_model(self, model: Any) -> None:
        """``model`` is None or a ``MarketModel`` of as many assets as the env trades."""
        if model is None:
            return
        if isinstance(model, type):
            raise TypeError(
                f"model must be a MarketModel instance, got the class {model.__name__}: "
                f"pass {model.__name__}(...)."
            )
        if not callable(getattr(model, "simulate", None)):
            raise TypeError(
                f"model must be a sekai.finance.MarketModel, got {type(model).__name__}."
            )
        expected = self._asset_count()
        simulated = getattr(model, "n_assets", 1)
        if expected is not None and simulated != expected:
            name = type(self).__name__
            trades = "one asset" if expected == 1 else f"{expected} assets"
            raise ValueError(
                f"{name} trades {trades} but the model simulates {simulated}; the number of "
                f"assets fixes the env's spaces, so build a new {name} for this model."
            )

    @property
    def capital(self) -> float:
        """Account size in currency, for fixed fees and impact models."""
        return self._capital

    @capital.setter
    def capital(self, value: Any) -> None:
        self._capital = check_real("capital", value, "gt0")

    @property
    def sampler(self) -> EpisodeSampler:
        """The episode sampler choosing history windows."""
        return self._sampler

    @sampler.setter
    def sampler(self, value: Any) -> None:
        self._sampler = self._checked_sampler(value)

    def _needs_history(self, what: str, alternative: str = "") -> str:
        """The ``ValueError`` message for ``what``, which only a history env can honour."""
        return (
            f"{what} needs a price history; this env simulates its {self._simulates} (pass "
            f"{self._history_args} to replay history{alternative})."
        )

    def _checked_sampler(self, value: Any) -> EpisodeSampler:
        """``value`` as a sampler (``as_sampler``), a fixed start checked against the history;
        without a history only the default ``RandomStart`` (any other would be ignored)."""
        sampler = as_sampler(value)
        history = self._history
        if history is None:
            if type(sampler) is not RandomStart:
                raise ValueError(
                    self._needs_history(f"sampler={value!r}", ", or leave sampler='random'")
                )
        else:
            check_fixed_start(
                sampler,
                history.n_starts,
                self._episode_length,
                lookback=self._lookback,
                warmup=history.warmup,
            )
        return sampler

    # -- episode state ----------------------------------------------------------------------

    @property
    def equity(self) -> float:
        """Account value relative to the episode start."""
        return self._equity

    @property
    def timestamp(self) -> Any:
        """Time of the current decision (as in ``info["timestamp"]``)."""
        self._require_episode("timestamp")
        return self._timestamp(self._t)

    @property
    def price_history(self) -> np.ndarray:
        """Prices observed so far, lookback included, ending at the current price."""
        self._require_episode("price_history")
        assert self._path is not None
        result: np.ndarray = self._path_prices()[: self._lookback + self._t + 1].copy()
        return result

    def _path_prices(self) -> np.ndarray:
        assert self._path is not None
        return self._path

    def _timestamp(self, t: int) -> Any:
        times = self._times
        return t if times is None else times[self._lookback + t]

    # -- reset ----------------------------------------------------------------------------------

    def _option_start(self, options: Any) -> int | None:
        """The window start row that ``reset(options=...)`` asks for (None when it asks none).

        Every option is checked here, before ``reset()`` seeds anything: a reset refused for
        its options leaves the env as it was (its generator and recorded seed included), as
        the session envs leave it.
        """
        opts = parse_options(options, ("start",))
        if "start" not in opts:
            return None
        history = self._history
        if history is None:
            raise ValueError(self._needs_history("options['start']"))
        return window_start_from_option(
            opts["start"],
            history.timestamps,
            lookback=self._lookback,
            n_starts=history.n_starts,
            warmup=history.warmup,
            data=history.data,
        )

    def _reset_window(self, seed: Any, options: Any) -> None:
        """Check the options, seed, pick the window (or simulate it), reset account and reward."""
        start = self._option_start(options)
        self._set_rng(seed)
        history = self._history
        if history is None:
            if self._model is None:
                with np.errstate(over="ignore"):  # refused just below, naming the parameters
                    path = self._simulate_path()
                check_gbm_prices(path, self, self._window - 1)
            else:  # a model's prices are checked as it returns them
                path = self._simulate_path()
            with np.errstate(divide="ignore"):
                self._log_returns = np.log(path[1:] / path[:-1])
            self._log_returns32 = self._log_returns.astype(np.float32)
            self._path = path
            self._start = None
            self._times = None
        else:
            if start is None:
                start = draw_window_start(
                    self._sampler,
                    self.rng,
                    history.n_starts,
                    self._episode_length,
                    lookback=self._lookback,
                    warmup=history.warmup,
                )
            self._start = start
            self._path = history.prices[start : start + self._window]
            self._log_returns = history.log_returns[start : start + self._window - 1]
            self._log_returns32 = history.log_returns32[start : start + self._window - 1]
            times = history.timestamps[start : start + self._window]
            # Python ints/floats for numeric axes, numpy datetime64 for dated ones.
            self._times = list(times) if times.dtype.kind == "M" else times.tolist()
        self._reward_fn.reset()
        self._equity = 1.0
        self._t = 0
        self._begin_episode()

    def _simulate_path(self) -> np.ndarray:
        """A ``(window, n)`` price path for a simulated episode."""
        raise NotImplementedError

    def _model_path(self) -> np.ndarray:
        simulation = self._model.simulate(self.rng, self._window - 1)
        count = self._asset_count()
        return simulated_prices(
            simulation, self._model, self._env_name, rows=self._window, n_assets=count
        )

    # -- cost context -----------------------------------------------------------------------------

    def _cost_context(self) -> dict[str, Any]:
        requires = self._cost_model.requires
        if not requires:
            return {}
        context: dict[str, Any] = {}
        t, lookback = self._t, self._lookback
        if "equity" in requires:
            context["equity"] = self._capital * self._equity
        if "volatility" in requires:
            assert self._log_returns is not None
            context["volatility"] = self._log_returns[t : t + lookback].std(axis=0)
        if self._history is not None and ("volume" in requires or "spread" in requires):
            assert self._start is not None and self._path is not None
            row = self._start + lookback + t
            volume = self._history.field_rows("volume")
            if "volume" in requires and volume is not None:
                context["volume"] = volume[row] * self._path[lookback + t]
            spread = self._history.field_rows("spread")
            if "spread" in requires and spread is not None:
                context["spread"] = spread[row]
        return context

    def _decision(self, _row: int = 0) -> str:
        """Where the current decision is (for an error): its data row and timestamp, or step."""
        start = self._start
        row = None if start is None else start + self._lookback + self._t
        return decision_at(row, self._timestamp(self._t))


def window_args(episode_length: Any, lookback: Any) -> tuple[int, int]:
    """Validate ``episode_length`` and ``lookback`` (ints >= 1)."""
    return check_int("episode_length", episode_length), check_int("lookback", lookback)
