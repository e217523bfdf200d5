"""Market-v0: trade a changing universe of assets with leverage, financing and any cost model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from sekai._args import check_ordered
from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import check_int, check_real, fixed, python_scalar
from sekai.envs.finance._helpers import equity_remedy, market_values
from sekai.envs.finance._market_account import project_one, settle_one
from sekai.envs.finance._market_episode import MarketEpisode, exogenous_width
from sekai.envs.finance._session import box_action
from sekai.envs.finance._window import History, WindowEnv, window_args
from sekai.envs.finance._wipe_out import equity_out_of_range, warn_wipe_out
from sekai.finance._gaps import refuse_gaps
from sekai.finance._located import priced_at
from sekai.finance.account import AccountConfig
from sekai.finance.costs import ProportionalCost
from sekai.finance.data import MarketData
from sekai.finance.rewards import period_reward
from sekai.finance.sampling import draw_window_start, first_valid_window
from sekai.finance.universe import SlotMap
from sekai.spaces import Box, Dict, MaskedBox

__all__ = ["MarketEnv"]

Observation = dict[str, Any]


def _names(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    check_ordered(None, name, value)
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a sequence of names (str), got {value!r}.")
    return tuple(value)


class MarketEnv(WindowEnv[Observation, np.ndarray]):
    """Trade a changing universe of assets (listings and delistings) with cash and leverage.

    The observation is a padded set of assets (``MaskedBox``): per slot the last ``lookback``
    rows of ``[log return, availability, features...]`` and a mask of the slots tradable now,
    plus the portfolio weights per slot (cash last) and ``[log equity, gross exposure]``. With
    fewer slots than assets a ``SlotMap`` keeps every asset in its slot while it is listed. The
    action gives scores (long-only, cash last) or target weights (``allow_short``), projected
    onto the account's rules; untradable slots get weight 0. Assets earn their return (or
    ``delisting_return`` in the period they delist), cash earns ``cash_rate``, borrowing pays
    ``margin_rate`` and shorts ``borrow_rate``. Reward: ``reward_fn`` (default log growth).

    Args:
        data: a ``MarketData`` (NaN price = not listed).
        model: a ``MarketModel`` to simulate instead (default ``default_market()``).
        max_assets: number of slots ``S`` (default: one per asset).
        features: per-asset data fields to observe (needs ``data``).
        exogenous: market-wide series to observe: data exogenous names or model state names.
        lookback: rows observed; episode_length: decisions per episode.
        sampler: history window sampler. transaction_cost: a rate or a ``CostModel``.
        reward: a ``RewardFunction`` (copied).
        allow_short, max_leverage, cash_rate, margin_rate, borrow_rate: the ``AccountConfig``.
        capital: account size in currency. dt: years per step.
        delisting_return: return of an asset over the period in which it delists (>= -1).
        privileged_state: add the model's latent state at the decision row as ``info["state"]``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}
    max_assets = fixed("Number of slots S (fixed: it sizes the spaces).")
    n_total = fixed("Number of asset columns in the data or model.")
    features = fixed("Per-asset fields observed (fixed: they size the observation).")
    exogenous = fixed("Market-wide series observed (fixed: they size the observation).")
    allow_short = fixed("Whether the action gives signed weights (fixed: the action space).")
    _simulates = "market"
    _history_args = "data="

    def __init__(
        self,
        data: MarketData | None = None,
        *,
        model: Any = None,
        max_assets: int | None = None,
        features: Sequence[str] = (),
        exogenous: Sequence[str] = (),
        lookback: int = 20,
        episode_length: int = 252,
        sampler: Any = "random",
        transaction_cost: Any = 1e-3,
        reward: Any = None,
        allow_short: bool = False,
        max_leverage: float = 1.0,
        cash_rate: float = 0.0,
        margin_rate: float | None = None,
        borrow_rate: float = 0.0,
        capital: float = 1_000_000.0,
        dt: float | None = None,
        delisting_return: float = 0.0,
        privileged_state: bool = False,
    ) -> None:
        episode_length, lookback = window_args(episode_length, lookback)
        window = lookback + episode_length + 1
        if data is not None and model is not None:
            raise ValueError("got data= and model=: pass one source, a history or a model.")
        if data is not None and not isinstance(data, MarketData):
            raise TypeError(
                f"data= must be a sekai.finance.MarketData, got {type(data).__name__}; build one "
                "with MarketData(prices, timestamps=...) (NaN marks an unlisted asset)."
            )
        self._features = _names("features", features)
        self._exogenous = _names("exogenous", exogenous)
        history: History | None = None
        if data is None:
            if self._features:
                raise ValueError(
                    "features= needs data=: a simulated market has no per-asset fields; "
                    "simulate a history into MarketData and add fields."
                )
            if model is None:
                from sekai.finance.simulators import default_market

                model = self._default_model = default_market()
            self._check_model(model)
            n_total = int(model.n_assets)
        else:
            for name in self._features:
                data.field(name)  # KeyError listing the fields
            if data.n_steps < window:
                raise ValueError(
                    f"the data has {data.n_steps} rows but an episode needs lookback + "
                    f"episode_length + 1 = {lookback} + {episode_length} + 1 = {window} rows."
                )
            refuse_gaps(data, "Market-v0")
            history = History(data, window)
            first_valid_window(history.n_starts, lookback=lookback, warmup=history.warmup)
            n_total = data.n_assets
        self._width = exogenous_width(
            self._exogenous, data, None if model is None else model.state_spec()
        )
        self._n_total = n_total
        self._max_assets = n_total if max_assets is None else check_int("max_assets", max_assets)
        if not isinstance(allow_short, (bool, np.bool_)):
            raise ValueError(f"allow_short must be a bool, got {type(allow_short).__name__}.")
        self._allow_short = bool(allow_short)
        self.privileged_state = privileged_state
        self.config = AccountConfig(
            allow_short=self._allow_short,
            max_leverage=max_leverage,
            cash_rate=cash_rate,
            margin_rate=margin_rate,
            borrow_rate=borrow_rate,
        )
        warn_wipe_out(
            self.config.max_leverage, f"max_leverage={self.config.max_leverage!r}", "Market-v0"
        )
        self.delisting_return = delisting_return
        self._setup_window(
            env="Market-v0",
            history=history,
            episode_length=episode_length,
            lookback=lookback,
            transaction_cost=transaction_cost,
            dt=dt,
            model=model,
            reward=reward,
            sampler=sampler,
            capital=capital,
        )
        self._prices = None if history is None else history.prices
        s = self._max_assets
        self._static = s >= n_total
        self._slot_map = SlotMap(s)
        self._episode: MarketEpisode | None = None
        self._weights = np.zeros(s)
        self._cols = np.full(s, -1, np.int64)  # asset column in each slot, -1 = empty
        self._tradable = np.zeros(s, np.bool_)
        self.observation_space = self._make_observation_space()
        box = (
            Box(-1.0, 1.0, (s,), np.float32)
            if self._allow_short
            else Box(0.0, 1.0, (s + 1,), np.float32)
        )
        self._box = box
        self._action_shape: tuple[int, ...] = box.shape
        self.action_space = box

    def _make_observation_space(self) -> Dict:
        s, lookback = self._max_assets, self._lookback
        spaces: dict[str, Any] = {
            "assets": MaskedBox(
                -np.inf, np.inf, shape=(lookback, 2 + len(self._features)), max_size=s
            ),
            "portfolio": Box(-np.inf, np.inf, (s + 1,), np.float32),
            "account": Box(-np.inf, np.inf, (2,), np.float32),
        }
        if self._exogenous:
            spaces["market"] = Box(-np.inf, np.inf, (lookback, self._width), np.float32)
        return Dict(spaces)

    def _check_model(self, model: Any) -> None:
        if model is None:
            if getattr(self, "_history", None) is None and hasattr(self, "_n_total"):
                raise ValueError("Market-v0 without data= needs a model; model=None is refused.")
            return
        super()._check_model(model)
        n_total = getattr(self, "_n_total", None)
        if n_total is not None and int(model.n_assets) != n_total:
            raise ValueError(
                f"the model has {model.n_assets} assets but this env was built for {n_total}; "
                "make a new env for another universe."
            )
        if hasattr(self, "_exogenous"):
            exogenous_width(self._exogenous, None, model.state_spec())

    # -- parameters ------------------------------------------------------------------------------

    def _asset_count(self) -> int | None:
        # Cost models price trades in asset space: one column per asset of the universe.
        return getattr(self, "_n_total", None)

    @property
    def privileged_state(self) -> bool:
        """Whether ``info["state"]`` carries the model's latent state at the decision row."""
        return self._privileged_state

    @privileged_state.setter
    def privileged_state(self, value: Any) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"privileged_state must be a bool, got {type(value).__name__}.")
        self._privileged_state = bool(value)

    @property
    def delisting_return(self) -> float:
        """Return of an asset over the period in which it delists (>= -1)."""
        return self._delisting_return

    @delisting_return.setter
    def delisting_return(self, value: Any) -> None:
        number = check_real("delisting_return", value)
        if number < -1.0:
            raise ValueError(f"delisting_return must be >= -1, got {number!r}.")
        self._delisting_return = number

    @property
    def config(self) -> AccountConfig:
        """The account's rules (leverage, financing rates); ``allow_short`` is fixed."""
        return self._config

    @config.setter
    def config(self, value: Any) -> None:
        if not isinstance(value, AccountConfig):
            raise TypeError(f"config must be an AccountConfig, got {type(value).__name__}.")
        if value.allow_short != self._allow_short:
            raise ValueError(
                f"config.allow_short={value.allow_short} disagrees with the env's allow_short="
                f"{self._allow_short}, which is fixed at construction (it sets the action "
                "space); make a new env to change it."
            )
        self._config = value

    # -- state -----------------------------------------------------------------------------------

    @property
    def weights(self) -> np.ndarray:
        """Current drifted weight per slot ``(S,)`` (a copy)."""
        weights: np.ndarray = self._weights.copy()
        return weights

    @property
    def slot_assets(self) -> list[Any]:
        """The asset in each slot: its id (column index in simulation), None where empty."""
        ids = None if self._history is None else self._history.data.assets
        return [None if c < 0 else (int(c) if ids is None else ids[c]) for c in self._cols]

    @property
    def latent_state(self) -> dict[str, np.ndarray]:
        """The simulation's latent state at the decision row (empty for history)."""
        self._require_episode("latent_state")
        return self._state_at(self._lookback + self._t)

    def _state_at(self, row: int) -> dict[str, np.ndarray]:
        assert self._episode is not None
        return {name: np.array(values[row]) for name, values in self._episode.state.items()}

    def action_mask(self) -> np.ndarray:
        """int8 mask: 1 for slots tradable now (and for cash, last, when long-only)."""
        mask = self._tradable.astype(np.int8)
        return mask if self._allow_short else np.append(mask, np.int8(1))

    def target_weights(self, action: Any) -> np.ndarray:
        """The weights ``(S + 1,)`` (cash last) an action means, given what is tradable now."""
        weights = self._project(box_action(action, self._action_shape, self._box))
        return np.append(weights, 1.0 - weights.sum())

    def _project(self, action: np.ndarray) -> np.ndarray:
        return np.array(self._project_list(action))

    def _project_list(self, action: np.ndarray) -> list[float]:
        a: list[float] = np.clip(action, self._box.low, self._box.high).tolist()
        tradable: list[bool] = self._tradable.tolist()
        if self._allow_short:
            return project_one(a, tradable, self.config, None)
        return project_one(a[:-1], tradable, self.config, a[-1])

    # -- slots -----------------------------------------------------------------------------------

    def _assign(self, row: int) -> None:
        """Give slots to the assets tradable at ``row``; a slot that changed hands is emptied."""
        assert self._episode is not None
        listed = self._episode.listed[row]
        if self._static:
            n = self._n_total
            self._cols[:n] = np.arange(n)
            self._tradable[:] = False
            self._tradable[:n] = listed
            return
        slot_map = self._slot_map
        incumbents = [a for a in slot_map.assets if a is not None and listed[a]]
        kept = set(incumbents)
        newcomers = [int(c) for c in np.flatnonzero(listed) if int(c) not in kept]
        present = incumbents + newcomers[: self._max_assets - len(incumbents)]
        slot_map.update(present)
        self._weights[slot_map.changed] = 0.0
        self._cols = np.array([-1 if a is None else a for a in slot_map.assets], np.int64)
        self._tradable = self._cols >= 0

    # -- episode ---------------------------------------------------------------------------------

    def _observation(self) -> Observation:
        assert self._episode is not None
        lookback, row = self._lookback, self._lookback + self._t
        s = self._max_assets
        occupied = np.flatnonzero(self._tradable)
        values = np.zeros((s, lookback, self._episode.per_asset.shape[2]), np.float32)
        if occupied.size:
            values[occupied] = self._episode.per_asset[
                self._cols[occupied], row - lookback + 1 : row + 1
            ]
        weights: list[float] = self._weights.tolist()
        portfolio = np.empty(s + 1, np.float32)
        portfolio[:s] = self._weights
        portfolio[s] = 1.0 - math.fsum(weights)
        gross = math.fsum(abs(x) for x in weights)
        obs: Observation = {
            "assets": {"values": values, "mask": self._tradable.astype(np.int8)},
            "portfolio": portfolio,
            "account": np.array([math.log(max(self._equity, 1e-12)), gross], np.float32),
        }
        if self._episode.market is not None:
            obs["market"] = self._episode.market[row - lookback + 1 : row + 1].copy()
        return obs

    def _info(self, turnover: float, cost: float, financing: float) -> dict[str, Any]:
        w = self._weights
        info: dict[str, Any] = {
            "equity": float(self._equity),
            "turnover": float(turnover),
            "cost": float(cost),
            "financing": float(financing),
            "gross_exposure": float(np.abs(w).sum()),
            "n_assets": int(self._tradable.sum()),
            "weights": w.copy(),
            "timestamp": python_scalar(self._timestamp(self._t)),
            "dt": float(self._dt),
        }
        if self.privileged_state:
            info["state"] = self._state_at(self._lookback + self._t)
        return info

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Observation]:
        """Start an episode: a new window (or simulated market), all in cash, equity 1."""
        start = self._option_start(options)
        self._set_rng(seed)
        window, lookback = self._window, self._lookback
        history = self._history
        if history is None:
            simulation = self._model.simulate(self.rng, window - 1)
            episode = MarketEpisode.from_simulation(simulation, window, self._exogenous)
        else:
            if start is None:
                start = draw_window_start(
                    self._sampler,
                    self.rng,
                    history.n_starts,
                    self._episode_length,
                    lookback=lookback,
                    warmup=history.warmup,
                )
            episode = MarketEpisode.from_history(
                history.data, start, window, self._features, self._exogenous
            )
        self._episode = episode
        self._start = episode.start
        self._path = episode.prices
        self._times = episode.times
        self._reward_fn.reset()
        self._equity = 1.0
        self._t = 0
        self._begin_episode()
        self._weights = np.zeros(self._max_assets)
        self._slot_map.reset()
        self._cols[:] = -1
        self._assign(lookback)
        return ResetResult(self._observation(), self._info(0.0, 0.0, 0.0))

    def step(self, action: np.ndarray) -> StepResult[Observation]:
        """Rebalance to the action's target weights, hold them one period, then reassign slots."""
        if self._done or not self._started:
            self._check_can_step()
        target = self._project_list(box_action(action, self._action_shape, self._box))
        episode = self._episode
        assert episode is not None
        row = self._lookback + self._t
        current: list[float] = self._weights.tolist()
        trades = [w - c for w, c in zip(target, current)]
        turnover = math.fsum(abs(x) for x in trades)
        cost = self._cost(trades, turnover, row)
        prices_now, prices_next = episode.price_rows[row], episode.price_rows[row + 1]
        listed_now, listed_next = episode.listed_rows[row], episode.listed_rows[row + 1]
        returns: list[float] = []
        delisted: list[bool] = []
        for c in self._cols.tolist():
            held = c >= 0 and listed_now[c]
            stays = held and listed_next[c]
            if stays:
                returns.append(prices_next[c] / prices_now[c] - 1.0)
            else:
                returns.append(self.delisting_return if held else 0.0)
            delisted.append(held and not stays)
        growth, drifted, financing, wiped_out = settle_one(
            target, returns, cost=cost, dt=self._dt, config=self.config
        )
        equity_before = self._equity
        equity = equity_before * growth
        if not 0.0 < equity < math.inf:  # a wipe-out, or equity beyond float64 (refused)
            equity, growth = equity_out_of_range(self, equity, growth)
            wiped_out = True
            drifted = [0.0] * len(drifted)
        self._weights = np.array([0.0 if d else w for w, d in zip(drifted, delisted)])
        self._equity = equity
        t = self._t = self._t + 1
        reward = period_reward(
            self._reward_fn,
            growth,
            equity=equity,
            turnover=turnover,
            cost=cost,
            previous_equity=equity_before,
        )
        terminated = wiped_out
        truncated = not terminated and t >= self._episode_length
        self._elapsed_steps = t
        self._done = terminated or truncated
        if self._done:
            occupied = self._cols >= 0
            self._tradable = episode.listed[row + 1, np.where(occupied, self._cols, 0)] & occupied
        else:
            self._assign(row + 1)
        info = self._info(turnover, cost, financing)
        return StepResult(self._observation(), float(reward), terminated, truncated, info)

    def _equity_values(self) -> tuple[str, str]:
        """What drives the equity and what to change, as its overflow error names them:
        leverage and the market."""
        leverage = self._config.max_leverage
        market, source = market_values(self)
        return f"max_leverage={leverage!r}, {market}", equity_remedy(source, "a lower max_leverage")

    def _cost(self, trades: list[float], turnover: float, row: int) -> float:
        model = self._cost_model
        if type(model) is ProportionalCost and type(model.rate) is float:
            return model.rate * turnover
        assert self._episode is not None
        occupied = np.flatnonzero(self._cols >= 0)
        in_assets = np.zeros(self._n_total)
        in_assets[self._cols[occupied]] = np.asarray(trades)[occupied]
        requires = model.requires
        context: dict[str, Any] = {}
        if "equity" in requires:
            context["equity"] = self._capital * self._equity
        if "volatility" in requires:
            context["volatility"] = self._episode.volatility(row, self._lookback)
        history, start = self._history, self._episode.start
        if history is not None and start is not None:
            volume = history.field_rows("volume")
            if "volume" in requires and volume is not None:
                context["volume"] = volume[start + row] * self._episode.prices[row]
            spread = history.field_rows("spread")
            if "spread" in requires and spread is not None:
                context["spread"] = spread[start + row]
        return float(priced_at(model, in_assets, context, self._decision))
