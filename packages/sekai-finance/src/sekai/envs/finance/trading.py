"""Trading-v0: trade one asset by choosing a target position each step."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import check_real, discrete_action, fixed
from sekai.envs.finance._helpers import (
    equity_remedy,
    market_values,
    price_source,
    refuse_unused_gbm,
    simulate_gbm,
)
from sekai.envs.finance._window import (
    WindowEnv,
    load_history,
    window_args,
)
from sekai.envs.finance._wipe_out import equity_out_of_range, warn_wipe_out
from sekai.finance._located import priced_at
from sekai.finance._values import real_float
from sekai.finance.costs import ProportionalCost
from sekai.finance.rewards import period_reward
from sekai.spaces import Box, Discrete, DiscreteAction

__all__ = ["DiscreteAction", "TradingEnv", "check_positions", "trading_observation_space"]


def check_positions(positions: Any) -> tuple[float, ...]:
    """Validate ``positions``: at least 2 distinct finite numbers."""
    try:
        values = tuple(positions)
    except TypeError as exc:
        raise ValueError(
            f"positions must be a sequence of at least 2 finite numbers, got {positions!r}."
        ) from exc
    floats = [real_float(v) for v in values]  # None: not a number, or beyond float64
    if len(values) < 2 or not all(f is not None and math.isfinite(f) for f in floats):
        raise ValueError(
            f"positions must be a sequence of at least 2 finite numbers, got {positions!r}."
        )
    result = tuple(f for f in floats if f is not None)
    if len(set(result)) < len(result):  # two actions for one position
        repeated = sorted({f for f in result if result.count(f) > 1})
        raise ValueError(
            f"positions must be distinct (each action a different target position), got "
            f"{positions!r}: {', '.join(map(repr, repeated))} repeated."
        )
    return result


def trading_observation_space(lookback: int, positions: tuple[float, ...]) -> Box:
    """``Box(lookback + 1,)``: log returns (unbounded) then the drifted position."""
    low = np.full(lookback + 1, -np.inf, dtype=np.float32)
    high = np.full(lookback + 1, np.inf, dtype=np.float32)
    low[-1] = 0.0 if min(positions) >= 0 else -np.inf
    high[-1] = 1.0 if max(positions) <= 1 else np.inf
    return Box(low, high, dtype=np.float32)


class TradingEnv(WindowEnv[np.ndarray, DiscreteAction]):
    """Trade one asset: each step, choose a target position as a fraction of equity.

    Observation: the last ``lookback`` log returns (oldest first) and the current drifted
    position. Action: an index into ``positions``. Reward: ``reward_fn`` of the step's outcome
    (default: log equity growth).

    Args:
        prices: a price history, ``(T,)`` or ``(T, 1)`` (or a pandas Series/DataFrame).
        data: a single-asset ``MarketData`` instead of ``prices``.
        episode_length: decisions per episode.
        lookback: log returns observed.
        positions: the allowed target positions.
        transaction_cost: a proportional rate or a ``CostModel``.
        mu: annual drift of the built-in GBM (None: 0.05).
        sigma: annual volatility of the built-in GBM (None: 0.2).
        dt: years per step (default: the model's, the data's, or 1/252); with ``model=`` it
            must be the model's.
        s0: initial price of the built-in GBM (None: 100.0).
        model: a one-asset ``MarketModel`` to simulate instead of GBM.
        reward: a ``RewardFunction`` (copied).
        sampler: ``"random"``, ``"sequential"``, an int or an ``EpisodeSampler``.
        capital: account size in currency, for fixed fees and impact models.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}
    positions = fixed("The allowed target positions (fixed at construction).")

    def __init__(
        self,
        prices: Any = None,
        *,
        data: Any = None,
        episode_length: int = 252,
        lookback: int = 30,
        positions: Any = (-1.0, 0.0, 1.0),
        transaction_cost: Any = 1e-3,
        mu: float | None = None,
        sigma: float | None = None,
        dt: float | None = None,
        s0: float | None = None,
        model: Any = None,
        reward: Any = None,
        sampler: Any = "random",
        capital: float = 1_000_000.0,
    ) -> None:
        episode_length, lookback = window_args(episode_length, lookback)
        self._positions = check_positions(positions)
        exposure = max(abs(p) for p in self._positions)
        warn_wipe_out(exposure, f"positions={self._positions}", "Trading-v0")
        # None: not given, so the default of a simulation that may not run (refused below).
        self._mu = check_real("mu", 0.05 if mu is None else mu)
        self._sigma = check_real("sigma", 0.2 if sigma is None else sigma, "ge0")
        self._s0 = check_real("s0", 100.0 if s0 is None else s0, "gt0")
        self._check_model(model)
        history = load_history(
            prices,
            data,
            model,
            env="Trading-v0",
            single_asset=True,
            window=lookback + episode_length + 1,
            lookback=lookback,
            episode_length=episode_length,
        )
        given = [name for name, v in (("mu", mu), ("sigma", sigma), ("s0", s0)) if v is not None]
        refuse_unused_gbm(given, price_source(prices, data, model), env="Trading-v0")
        self._gbm_given = tuple(given)
        self._setup_window(
            env="Trading-v0",
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
        self._prices = None if history is None else history.prices[:, 0]
        self._position = 0.0
        self._closes: list[float] = []
        self.observation_space = trading_observation_space(lookback, self._positions)
        self.action_space = Discrete(len(self._positions))

    # -- parameters ---------------------------------------------------------------------

    @property
    def mu(self) -> float:
        """Annual drift of the built-in GBM."""
        return self._mu

    @mu.setter
    def mu(self, value: Any) -> None:
        self._check_builtin_gbm("mu")
        self._mu = check_real("mu", value)
        self._gbm_set("mu")

    @property
    def sigma(self) -> float:
        """Annual volatility of the built-in GBM."""
        return self._sigma

    @sigma.setter
    def sigma(self, value: Any) -> None:
        self._check_builtin_gbm("sigma")
        self._sigma = check_real("sigma", value, "ge0")
        self._gbm_set("sigma")

    @property
    def s0(self) -> float:
        """Initial price of the built-in GBM."""
        return self._s0

    @s0.setter
    def s0(self, value: Any) -> None:
        self._check_builtin_gbm("s0")
        self._s0 = check_real("s0", value, "gt0")
        self._gbm_set("s0")

    # -- state ----------------------------------------------------------------------------

    @property
    def position(self) -> float:
        """The current position (fraction of equity), drifted with the price."""
        return self._position

    @property
    def price(self) -> float:
        """The current price (at the decision row)."""
        self._require_episode("price")
        return self._closes[self._lookback + self._t]

    @property
    def price_history(self) -> np.ndarray:
        """Prices observed so far, lookback included: ``lookback + elapsed_steps + 1`` values."""
        return super().price_history[:, 0]

    # -- episode ------------------------------------------------------------------------------

    def _asset_count(self) -> int:
        return 1

    def _simulate_path(self) -> np.ndarray:
        if self._model is not None:
            return self._model_path()
        self._episode_gbm = (self._mu, self._sigma, self._dt)  # what its errors name
        path = simulate_gbm(
            self.rng, self._window - 1, s0=self._s0, mu=self._mu, sigma=self._sigma, dt=self._dt
        )
        return path[:, None]

    def _equity_values(self, gbm: tuple[Any, Any, Any] | None = None) -> tuple[str, str]:
        """What drives the equity and what to change, as its overflow error names them: the
        positions and the market (``gbm``: the built-in GBM's ``(mu, sigma, dt)`` an episode
        simulated with; by default the running episode's)."""
        market, source = market_values(self, gbm)
        remedy = equity_remedy(source, "smaller positions")
        return f"positions={self._positions!r}, {market}", remedy

    def _observation(self) -> np.ndarray:
        assert self._log_returns32 is not None
        obs = np.empty(self._lookback + 1, dtype=np.float32)
        obs[:-1] = self._log_returns32[self._t : self._t + self._lookback, 0]
        obs[-1] = self._position
        return obs

    def _info(
        self, price: float, asset_return: float, cost: float, turnover: float
    ) -> dict[str, Any]:
        return {
            "equity": self._equity,
            "position": self._position,
            "price": price,
            "asset_return": asset_return,
            "cost": cost,
            "turnover": turnover,
            "timestamp": self._timestamp(self._t),
            "dt": self._dt,
        }

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[np.ndarray]:
        """Start an episode: a new window (or simulated path), equity 1, flat position."""
        self._reset_window(seed, options)
        assert self._path is not None
        self._closes = self._path[:, 0].tolist()
        self._position = 0.0
        info = self._info(self._closes[self._lookback], 0.0, 0.0, 0.0)
        return ResetResult(self._observation(), info)

    def step(self, action: DiscreteAction) -> StepResult[np.ndarray]:
        """Move to the target position ``positions[action]`` and hold it for one period."""
        self._check_can_step()
        target = self._positions[discrete_action(action, len(self._positions))]
        previous = self._position
        trade = target - previous
        turnover = abs(trade)
        cost_model = self._cost_model
        if type(cost_model) is ProportionalCost and type(cost_model.rate) is float:
            cost = cost_model.rate * turnover  # what the model computes, without numpy
        else:
            trades = np.array([trade])
            cost = float(priced_at(cost_model, trades, self._cost_context(), self._decision))
        i = self._lookback + self._t
        price = self._closes[i + 1]
        r = price / self._closes[i] - 1.0
        held = 1.0 + target * r
        growth = 0.0 if cost >= 1.0 else (1.0 - cost) * held
        equity_before = self._equity
        equity = equity_before * growth
        if not 0.0 < equity < math.inf:  # a wipe-out, or equity beyond float64 (refused)
            equity, growth = equity_out_of_range(self, equity, growth)
        self._position = target * (1.0 + r) / held if growth > 0 and held > 0 else 0.0
        self._equity = equity
        self._t += 1
        reward = period_reward(
            self._reward_fn,
            growth,
            equity=self._equity,
            turnover=turnover,
            cost=cost,
            previous_equity=equity_before,
        )
        terminated = not growth > 0
        truncated = not terminated and self._t >= self._episode_length
        self._end_step(terminated, truncated)
        info = self._info(price, r, cost, turnover)
        return StepResult(self._observation(), reward, terminated, truncated, info)
