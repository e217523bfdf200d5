"""Portfolio-v0: allocate wealth across n assets and cash, rebalancing every step."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import check_int, check_per_asset, fixed, numeric_action
from sekai.envs.finance._helpers import (
    check_correlation,
    equity_remedy,
    gbm_path,
    market_values,
    price_source,
    random_correlation,
    refuse_unused_gbm,
)
from sekai.envs.finance._window import (
    WindowEnv,
    load_history,
    window_args,
)
from sekai.envs.finance._wipe_out import equity_out_of_range
from sekai.error import InvalidAction
from sekai.finance._located import priced_at
from sekai.finance._numeric import divide_along, seq_sum
from sekai.finance.costs import ProportionalCost
from sekai.finance.rewards import period_reward
from sekai.spaces import Box, Dict

__all__ = [
    "PortfolioEnv",
    "portfolio_action_space",
    "portfolio_observation_space",
    "portfolio_return",
    "scores_to_weights",
]

_DEFAULT_ASSETS = 5


def portfolio_observation_space(lookback: int, n: int, allow_short: bool) -> Dict:
    """``Dict{returns: (lookback, n), weights: (n + 1,)}`` (weights unbounded with shorts)."""
    low, high = (-np.inf, np.inf) if allow_short else (0.0, 1.0)
    return Dict(
        {
            "returns": Box(-np.inf, np.inf, (lookback, n), np.float32),
            "weights": Box(low, high, (n + 1,), np.float32),
        }
    )


def portfolio_action_space(n: int, allow_short: bool) -> Box:
    """Long-only: ``Box(0, 1, (n + 1,))`` scores (cash last); with shorts ``Box(-1, 1, (n,))``."""
    if allow_short:
        return Box(-1.0, 1.0, (n,), np.float32)
    return Box(0.0, 1.0, (n + 1,), np.float32)


def scores_to_weights(action: np.ndarray, allow_short: bool, axis: int = -1) -> np.ndarray:
    """Map actions ``(..., n + 1)`` (or ``(..., n)`` with shorts) to weights ``(..., n + 1)``.

    Long-only: scores clipped into [0, 1] and normalised to sum 1 (all cash when the sum is
    below 1e-12). With shorts: clipped into [-1, 1], scaled down to gross 1, cash ``1 − Σw``.
    Sums run left to right (``seq_sum``), as the single env's Python arithmetic does.
    ``axis`` is the asset axis, -1 or 0: with ``axis=0`` (``action`` may be a transposed
    view) the weights come back asset-major and C-contiguous, ``(n + 1, ...)``.
    """
    if not allow_short:
        # Copied into a new C-ordered float64 array (NumPy's casting copy beats a casting
        # ufunc), then clipped and normalised in place: this runs on every native step.
        # (np.clip keeps a -0.0 score, as the single env does.)
        scores = np.asarray(action).astype(np.float64, order="C")
        np.clip(scores, 0.0, 1.0, out=scores)
        total = seq_sum(scores, axis)
        if total.size and np.minimum.reduce(total, axis=None) >= 1e-12:
            return divide_along(scores, total, axis, out=scores)
        cash_only = total < 1e-12
        safe = np.expand_dims(np.where(cash_only, 1.0, total), axis)
        weights = np.where(np.expand_dims(cash_only, axis), 0.0, scores / safe)
        last = (slice(None),) * (axis % weights.ndim) + (-1,)  # the cash entries
        weights[last] = np.where(cash_only, 1.0, weights[last])
        return weights
    assets = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0, order="C")
    gross = np.expand_dims(seq_sum(np.abs(assets), axis), axis)
    assets = assets / np.where(gross > 1.0, gross, 1.0)
    cash = 1.0 - np.expand_dims(seq_sum(assets, axis), axis)
    return np.concatenate([assets, cash], axis=axis)


def portfolio_return(weights: np.ndarray, returns: np.ndarray, axis: int = -1) -> np.ndarray:
    """``Σ w·r`` over the asset ``axis``, summed left to right (bit for bit the single env's
    arithmetic)."""
    return seq_sum(weights * returns, axis)  # type: ignore[no-any-return]


def _target_weights(values: list[float], allow_short: bool) -> list[float]:
    """``scores_to_weights`` for one action, in Python floats (the single env's fast path)."""
    if not allow_short:
        scores = [x if 0.0 <= x <= 1.0 else (0.0 if x < 0.0 else 1.0) for x in values]
        total = 0.0
        for x in scores:
            total += x
        if total < 1e-12:
            return [0.0] * (len(scores) - 1) + [1.0]
        return [x / total for x in scores]
    assets = [min(max(x, -1.0), 1.0) for x in values]
    gross = abs(assets[0])
    for x in assets[1:]:
        gross += abs(x)
    if gross > 1.0:
        assets = [x / gross for x in assets]
    invested = assets[0]
    for x in assets[1:]:
        invested += x
    return [*assets, 1.0 - invested]


def _clip_unit(x: float) -> float:
    """A score outside [0, 1] clipped into it; ``ValueError`` for NaN or inf."""
    if not math.isfinite(x):
        raise ValueError(x)
    return 0.0 if x < 0.0 else 1.0


def check_portfolio_action(action: Any, shape: tuple[int, ...], space: Any) -> list[float]:
    """The action as Python floats; ``InvalidAction`` for a wrong shape or a NaN/inf entry."""
    array = numeric_action(action, space)
    if array.shape != shape:
        raise InvalidAction(action, space)
    values: list[float] = array.tolist()
    if not all(map(math.isfinite, values)):
        raise InvalidAction(action, space)
    return values


class PortfolioEnv(WindowEnv[dict[str, np.ndarray], np.ndarray]):
    """Allocate wealth across ``n`` assets and cash; rebalance every step.

    Observation: ``{"returns": (lookback, n) log returns, "weights": (n + 1,) drifted weights}``
    (cash last). Action: long-only scores ``(n + 1,)`` normalised to weights, or target asset
    weights ``(n,)`` in [-1, 1] with ``allow_short``. Reward: ``reward_fn`` (default: log growth).

    Args:
        prices: a ``(T, n)`` price history (``(T,)`` is one asset), or a pandas DataFrame.
        data: a ``MarketData`` with a complete panel instead of ``prices``.
        n_assets: number of assets (default 5 when simulating; must agree with the source).
        episode_length: decisions per episode.
        lookback: log returns observed per asset.
        transaction_cost: a proportional rate or a ``CostModel``.
        allow_short: selects the long/short action space.
        mu: annual drifts of the built-in GBM (default 0.06 each).
        sigma: annual volatilities (default ``linspace(0.15, 0.35, n)``).
        corr: correlation matrix (default ``random_correlation(default_rng(0), n)``).
        dt: years per step.
        model: a ``MarketModel`` to simulate instead of GBM.
        reward: a ``RewardFunction`` (copied).
        sampler: ``"random"``, ``"sequential"``, an int or an ``EpisodeSampler``.
        capital: account size in currency.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}
    _chol: np.ndarray | None = None  # Cholesky factor of _chol_of, the corr it was taken of
    _chol_of: Any = None
    n_assets = fixed("Number of assets (fixed at construction).")
    allow_short = fixed("Whether the action space allows shorts (fixed at construction).")

    def __init__(
        self,
        prices: Any = None,
        *,
        data: Any = None,
        n_assets: int | None = None,
        episode_length: int = 252,
        lookback: int = 30,
        transaction_cost: Any = 1e-3,
        allow_short: bool = False,
        mu: Any = None,
        sigma: Any = None,
        corr: Any = None,
        dt: float | None = None,
        model: Any = None,
        reward: Any = None,
        sampler: Any = "random",
        capital: float = 1_000_000.0,
    ) -> None:
        episode_length, lookback = window_args(episode_length, lookback)
        if not isinstance(allow_short, (bool, np.bool_)):
            raise ValueError(f"allow_short must be a bool, got {type(allow_short).__name__}.")
        self._check_model(model)
        history = load_history(
            prices,
            data,
            model,
            env="Portfolio-v0",
            single_asset=False,
            window=lookback + episode_length + 1,
            lookback=lookback,
            episode_length=episode_length,
        )
        implied = (
            history.data.n_assets
            if history is not None
            else (int(model.n_assets) if model is not None else None)
        )
        if n_assets is not None:
            n_assets = check_int("n_assets", n_assets)
            if implied is not None and n_assets != implied:
                source = "price history" if history is not None else "model"
                raise ValueError(
                    f"n_assets={n_assets} disagrees with the {source}, which has {implied} "
                    "assets; leave n_assets out to follow it."
                )
        given = [
            name for name, v in (("mu", mu), ("sigma", sigma), ("corr", corr)) if v is not None
        ]
        refuse_unused_gbm(given, price_source(prices, data, model), env="Portfolio-v0")
        self._gbm_given = tuple(given)
        n = implied if implied is not None else (n_assets or _DEFAULT_ASSETS)
        self._n_assets = n
        self._allow_short = bool(allow_short)
        self._mu = check_per_asset("mu", 0.06 if mu is None else mu, n)
        self._sigma = check_per_asset(
            "sigma", np.linspace(0.15, 0.35, n) if sigma is None else sigma, n, "ge0"
        )
        self._corr = check_correlation(
            random_correlation(np.random.default_rng(0), n) if corr is None else corr, n
        )
        self._setup_window(
            env="Portfolio-v0",
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
        self._weights = self._cash_weights()
        self._action_shape = (n,) if self._allow_short else (n + 1,)
        self.observation_space = portfolio_observation_space(lookback, n, self._allow_short)
        self.action_space = portfolio_action_space(n, self._allow_short)

    def _asset_count(self) -> int | None:
        return getattr(self, "_n_assets", None)  # None while __init__ reads it off the model

    def _cash_weights(self) -> list[float]:
        return [0.0] * self._n_assets + [1.0]

    # -- parameters -------------------------------------------------------------------------

    @property
    def mu(self) -> float | np.ndarray:
        """Annual drift(s) of the built-in GBM."""
        return self._mu

    @mu.setter
    def mu(self, value: Any) -> None:
        self._check_builtin_gbm("mu")
        self._mu = check_per_asset("mu", value, self._n_assets)
        self._gbm_set("mu")

    @property
    def sigma(self) -> float | np.ndarray:
        """Annual volatilities of the built-in GBM."""
        return self._sigma

    @sigma.setter
    def sigma(self, value: Any) -> None:
        self._check_builtin_gbm("sigma")
        self._sigma = check_per_asset("sigma", value, self._n_assets, "ge0")
        self._gbm_set("sigma")

    @property
    def corr(self) -> np.ndarray:
        """Correlation matrix of the built-in GBM's shocks."""
        return self._corr

    @corr.setter
    def corr(self, value: Any) -> None:
        self._check_builtin_gbm("corr")
        self._corr = check_correlation(value, self._n_assets)
        self._gbm_set("corr")

    # -- state ----------------------------------------------------------------------------

    @property
    def weights(self) -> np.ndarray:
        """Current drifted weights ``(n + 1,)``, cash last (a copy)."""
        return np.array(self._weights)

    @property
    def portfolio_value(self) -> float:
        """Account value relative to the episode start (same as ``equity``)."""
        return self._equity

    @property
    def price(self) -> np.ndarray:
        """Current prices ``(n,)`` (at the decision row)."""
        self._require_episode("price")
        return np.array(self._closes[self._lookback + self._t])

    def action_to_weights(self, action: Any) -> np.ndarray:
        """The target weights ``(n + 1,)`` an action means (cash last)."""
        values = check_portfolio_action(action, self._action_shape, self.action_space)
        return np.array(_target_weights(values, self._allow_short))

    # -- episode ------------------------------------------------------------------------------

    def _simulate_path(self) -> np.ndarray:
        if self._model is not None:
            return self._model_path()
        self._episode_gbm = (self._mu, self._sigma, self._dt)  # what its errors name
        n = self._n_assets
        corr = self._corr
        if self._chol_of is not corr:  # corr is checked when set: factor it once per value
            self._chol = None if corr is None else np.linalg.cholesky(corr)
            self._chol_of = corr
        return gbm_path(
            self.rng,
            self._window - 1,
            n,
            s0=np.full(n, 100.0),
            mu=np.broadcast_to(np.asarray(self._mu, np.float64), (n,)),
            sigma=np.broadcast_to(np.asarray(self._sigma, np.float64), (n,)),
            dt=self._dt,
            chol=self._chol,
        )

    def _equity_values(self, gbm: tuple[Any, Any, Any] | None = None) -> tuple[str, str]:
        """What drives the equity and what to change, as its overflow error names them: the
        market (``gbm``: the built-in GBM's ``(mu, sigma, dt)`` an episode simulated with; by
        default the running episode's). No parameter sets its leverage."""
        market, source = market_values(self, gbm)
        return market, equity_remedy(source)

    def _observation(self) -> dict[str, np.ndarray]:
        assert self._log_returns32 is not None
        t = self._t
        return {
            "returns": self._log_returns32[t : t + self._lookback].copy(),
            "weights": np.array(self._weights, dtype=np.float32),
        }

    def _info(self, cost: float, turnover: float, asset_returns: list[float]) -> dict[str, Any]:
        return {
            "portfolio_value": self._equity,
            "equity": self._equity,
            "weights": np.array(self._weights),
            "turnover": turnover,
            "cost": cost,
            "asset_returns": np.array(asset_returns),
            "timestamp": self._timestamp(self._t),
            "dt": self._dt,
        }

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[dict[str, np.ndarray]]:
        """Start an episode: a new window (or simulated path), all in cash, value 1."""
        self._reset_window(seed, options)
        assert self._path is not None
        self._closes: list[list[float]] = self._path.tolist()
        self._weights = self._cash_weights()
        info = self._info(0.0, 0.0, [0.0] * self._n_assets)
        return ResetResult(self._observation(), info)

    def step(self, action: np.ndarray) -> StepResult[dict[str, np.ndarray]]:
        """Rebalance to the action's target weights and hold them for one period."""
        if self._done or not self._started:
            self._check_can_step()
        if (
            type(action) is np.ndarray
            and action.shape == self._action_shape
            and action.dtype.kind in "fiu"
        ):
            values = action.tolist()
        else:
            values = check_portfolio_action(action, self._action_shape, self.action_space)
        if self._allow_short:
            target = _target_weights(
                check_portfolio_action(values, self._action_shape, self.action_space), True
            )
        else:  # _target_weights(values, False), inlined: this is the hot path
            scores: list[float] = []
            total = 0.0
            for x in values:
                if not 0.0 <= x <= 1.0:
                    try:
                        x = _clip_unit(x)
                    except ValueError:
                        raise InvalidAction(action, self.action_space) from None
                scores.append(x)
                total += x
            target = [x / total for x in scores] if total >= 1e-12 else self._cash_weights()
        n = self._n_assets
        current = self._weights
        lookback = self._lookback
        i = lookback + self._t
        closes = self._closes
        before, after = closes[i], closes[i + 1]
        # Python floats, summed left to right: the native env's seq_sum gives the same bits.
        turnover = gain = grown_total = 0.0
        r: list[float] = []
        grown: list[float] = []
        for weight, held_weight, a, b in zip(target, current, before, after):  # n assets
            asset_return = b / a - 1.0
            r.append(asset_return)
            trade = weight - held_weight
            turnover += trade if trade >= 0.0 else -trade
            gain += weight * asset_return
            drifted = weight * (1.0 + asset_return)
            grown.append(drifted)
            grown_total += drifted
        cost_model = self._cost_model
        if type(cost_model) is ProportionalCost and type(cost_model.rate) is float:
            cost = cost_model.rate * turnover  # what the model computes, without numpy
        else:
            trades = np.array(target[:n]) - np.array(current[:n])
            cost = float(priced_at(cost_model, trades, self._cost_context(), self._decision))
        held = 1.0 + gain
        growth = 0.0 if cost >= 1.0 else (1.0 - cost) * held
        equity_before = self._equity
        equity = equity_before * growth
        if not 0.0 < equity < math.inf:  # a wipe-out, or equity beyond float64 (refused)
            equity, growth = equity_out_of_range(self, equity, growth)
        if growth > 0:
            cash = target[n]
            grown.append(cash)
            grown_total += cash
            self._weights = [x / grown_total for x in grown]
        else:
            self._weights = self._cash_weights()
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

        terminated = not growth > 0
        truncated = not terminated and t >= self._episode_length
        self._elapsed_steps = t
        self._done = terminated or truncated
        weights = np.array(self._weights)
        times = self._times
        info = {
            "portfolio_value": equity,
            "equity": equity,
            "weights": weights,
            "turnover": turnover,
            "cost": cost,
            "asset_returns": np.array(r),
            "timestamp": t if times is None else times[lookback + t],
            "dt": self._dt,
        }
        assert self._log_returns32 is not None
        observation = {
            "returns": self._log_returns32[t : t + lookback].copy(),
            "weights": weights.astype(np.float32),
        }
        return StepResult(observation, reward, terminated, truncated, info)
