"""Portfolio-v0 baselines: the Kelly (Merton) mix, constant mixes and equal weights."""

from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any

import numpy as np

from sekai.envs.finance._helpers import check_correlation
from sekai.finance._values import real_array
from sekai.finance.baselines._checks import (
    check_flag,
    check_number,
    per_asset,
    real_vector,
    require_env,
)
from sekai.finance.baselines._evaluate import BaselinePolicy, env_attr, is_batch

__all__ = ["ConstantMix", "EqualWeight", "KellyBuyAndHold", "kelly_weights"]

_MAX_ITERATIONS = 100_000  # of kelly_weights' solver
_TOLERANCE = 1e-15  # the largest weight change of a converged iteration


def _simplex(v: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection onto ``{w >= 0, Σw = total}``."""
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - total
    ranks = np.arange(1, v.size + 1)
    positive = u - excess / ranks > 0
    rho = ranks[positive][-1]
    return np.maximum(v - excess[positive][-1] / rho, 0.0)  # type: ignore[no-any-return]


def _project(v: np.ndarray, allow_short: bool, leverage: float) -> np.ndarray:
    if not allow_short:
        w = np.maximum(v, 0.0)
        return w if w.sum() <= leverage else _simplex(v, leverage)
    if np.abs(v).sum() <= leverage:
        return v
    return np.sign(v) * _simplex(np.abs(v), leverage)  # type: ignore[no-any-return]


def kelly_weights(
    mu: Any, sigma: Any, corr: Any, *, allow_short: bool = False, max_leverage: float = 1.0
) -> np.ndarray:
    """The growth-optimal constant mix: ``argmax μᵀw − ½wᵀΣw`` under the action's constraints.

    Long-only: ``w >= 0, Σw <= max_leverage``; with ``allow_short``: ``Σ|w| <= max_leverage``.
    ``Σ = diag(σ)·corr·diag(σ)``. Solved by accelerated projected gradient (FISTA).

    Args:
        mu: expected returns, a number or one per asset.
        sigma: volatilities (>= 0), a number or one per asset.
        corr: the ``(n, n)`` correlation matrix, which sets ``n`` (``np.eye(n)``: independent
            assets; a Portfolio-v0 env's is ``env.get_attr("corr")``).
        allow_short: allow negative weights.
        max_leverage: the gross budget, > 0.

    Raises:
        TypeError: an argument that is not numbers (bools included), ``corr=None``, or an
            ``allow_short`` that is not a bool.
        ValueError: non-finite numbers, ``sigma < 0``, ``max_leverage <= 0``, lengths that
            disagree with ``corr``, or ``corr`` not a correlation matrix.

    Warns:
        RuntimeWarning: the solver stopped after 100,000 iterations without converging (the
            mix returned is feasible but may not be optimal).
    """
    if corr is None:
        raise TypeError(
            "corr must be an (n, n) correlation matrix, got None; pass np.eye(n) for "
            "independent assets (a Portfolio-v0 env's is env.get_attr('corr'))."
        )
    corr_a = check_correlation(real_array("corr", corr))
    n = corr_a.shape[0]
    if np.ndim(mu) == 1 and np.ndim(sigma) == 1 and len(mu) == len(sigma) != n:
        raise ValueError(  # mu and sigma agree: corr is the odd one out
            f"corr is {n}x{n} but mu and sigma give {len(mu)} assets; corr must be the "
            f"({len(mu)}, {len(mu)}) correlation matrix of those assets."
        )
    mu_a = per_asset("mu", mu, n)
    sigma_a = per_asset("sigma", sigma, n, "ge0")
    short = check_flag("allow_short", allow_short)
    leverage = check_number("max_leverage", max_leverage, "gt0")
    cov = np.outer(sigma_a, sigma_a) * corr_a
    largest = float(np.linalg.eigvalsh(cov).max())
    if largest <= 0:  # no risk: the whole budget on the best asset, if it gains anything
        best = np.zeros(n)
        gain = np.abs(mu_a) if short else mu_a
        i = int(np.argmax(gain))
        if gain[i] > 0:
            best[i] = leverage * np.sign(mu_a[i])
        return best
    step = 1.0 / largest
    w = np.zeros(n)
    y = w.copy()
    momentum = 1.0
    change = np.inf
    for _ in range(_MAX_ITERATIONS):
        new = _project(y + step * (mu_a - cov @ y), short, leverage)
        following = (1.0 + np.sqrt(1.0 + 4.0 * momentum**2)) / 2.0
        y = new + (momentum - 1.0) / following * (new - w)
        change = float(np.max(np.abs(new - w)))
        w, momentum = new, following
        if change < _TOLERANCE:
            return w
    warnings.warn(
        f"kelly_weights did not converge in {_MAX_ITERATIONS:,} iterations (the last one "
        f"moved a weight by {change:.1e}); the weights returned may not be optimal.",
        RuntimeWarning,
        stacklevel=2,
    )
    return w


def _n_assets(env: Any) -> int:
    return int(env_attr(env, "n_assets"))


def _current_weights(env: Any, observation: Any) -> np.ndarray:
    """The exact float64 drifted weights (the observation holds float32 copies)."""
    if is_batch(env):
        state = getattr(env.unwrapped, "weights", None)
        if isinstance(state, np.ndarray) and state.shape[0] == env.num_envs:
            return state
        return np.stack([np.asarray(w) for w in env.get_attr("weights")])
    return np.asarray(env.get_attr("weights"), dtype=np.float64)


class ConstantMix(BaselinePolicy):
    """Hold the asset weights ``weights`` (cash ``1 − Σw``).

    Args:
        weights: target asset weights ``(n,)``, finite, with a gross ``Σ|w| <= 1``; negative
            (short) weights need an env made with ``allow_short=True``.
        rebalance: trade back to the mix every step (True), or enter it once and then send the
            observed drifted weights back as the action, which trades nothing (False). Those
            actions are float64, the weights exactly as held (float32 would round them into
            small trades); the action space contains them.
    """

    def __init__(self, weights: Any, *, rebalance: bool = True) -> None:
        self.weights = real_vector("weights", weights)
        gross = float(np.abs(self.weights).sum())
        if gross > 1.0 + 1e-9:
            raise ValueError(
                f"weights must have a gross sum(|w|) <= 1 (the rest is cash), got {gross!r} "
                f"for {self.weights.tolist()}."
            )
        self.rebalance = check_flag("rebalance", rebalance)

    def _target(self, env: Any) -> np.ndarray:
        return self.weights

    def _check_fits(self, assets: np.ndarray, env: Any, allow_short: bool) -> None:
        fitted = self.__dict__.get("_fitted")  # (weights, env) checked last: once per pair
        if fitted is not None and fitted[0] is assets and fitted[1]() is env:
            return
        n = _n_assets(env)
        if assets.size != n:
            raise ValueError(f"{self!r} holds {assets.size} asset weights; the env has {n} assets.")
        if not allow_short and np.any(assets < 0):
            raise ValueError(
                f"{self!r} has short (negative) weights, but the env is long-only: make it "
                "with allow_short=True."
            )
        with contextlib.suppress(TypeError):  # an env without weak references: every call
            self.__dict__["_fitted"] = (assets, weakref.ref(env))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_fitted", None)  # a weak reference: not picklable, and only a cache
        return state

    def _action(self, assets: np.ndarray, allow_short: bool) -> np.ndarray:
        if allow_short:
            return assets
        cash = np.maximum(1.0 - assets.sum(axis=-1, keepdims=True), 0.0)
        return np.concatenate([np.maximum(assets, 0.0), cash], axis=-1)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
        require_env(self, env, "Portfolio-v0")
        allow_short = bool(env_attr(env, "allow_short"))
        assets = self._target(env)
        self._check_fits(assets, env, allow_short)
        target = self._action(assets, allow_short)
        if is_batch(env):
            target = np.tile(target, (env.num_envs, 1))
        if self.rebalance:
            return target.astype(np.float32)
        current = _current_weights(env, observation)
        held = current[..., :-1] if allow_short else current
        entering = np.all(np.abs(current[..., :-1]) < 1e-12, axis=-1, keepdims=True)
        return np.where(entering, target, held)

    def __repr__(self) -> str:
        return f"ConstantMix({self.weights.tolist()}, rebalance={self.rebalance})"


class KellyBuyAndHold(ConstantMix):
    """Enter the env's Kelly mix (``kelly_weights`` of its GBM's ``mu``, ``sigma``, ``corr``),
    then let it drift without trading.

    The GBM is the env's built-in one, or its ``model=`` when that is a ``GBM``. Any other
    market (another model, or a replayed ``prices=``/``data=`` history) has no Kelly mix to
    read: estimate the parameters and use
    ``ConstantMix(kelly_weights(mu, sigma, corr), rebalance=False)``.
    """

    def __init__(self) -> None:
        super().__init__(np.zeros(1), rebalance=False)
        self._key: tuple[Any, ...] | None = None

    def _market(self, env: Any) -> tuple[Any, Any, Any]:
        """``(mu, sigma, corr)`` of the GBM the env simulates (``corr`` None: independent
        assets); ``ValueError`` for another market."""
        if env_attr(env, "data") is not None:
            raise ValueError(
                f"{self!r} needs the GBM parameters of a simulated market, but the env replays "
                "a price history (prices=/data=); estimate mu, sigma and corr from it and use "
                "ConstantMix(kelly_weights(mu, sigma, corr), rebalance=False)."
            )
        model = env_attr(env, "model")
        if model is None:
            return env_attr(env, "mu"), env_attr(env, "sigma"), env_attr(env, "corr")
        from sekai.finance.simulators import GBM

        if not isinstance(model, GBM):
            raise ValueError(
                f"{self!r} needs the parameters of a GBM market, but the env simulates "
                f"model={model!r}; use ConstantMix(kelly_weights(mu, sigma, corr), "
                "rebalance=False) with that model's parameters."
            )
        return model.mu, model.sigma, model.corr

    def _target(self, env: Any) -> np.ndarray:
        mu, sigma, corr = self._market(env)
        key = (mu, sigma, corr, bool(env_attr(env, "allow_short")))
        if self._key is None or any(a is not b for a, b in zip(self._key, key)):
            if corr is None:
                corr = np.eye(_n_assets(env))
            self.weights = kelly_weights(mu, sigma, corr, allow_short=key[3])
            self._key = key
        return self.weights

    def __repr__(self) -> str:
        return "KellyBuyAndHold()"


class EqualWeight(BaselinePolicy):
    """Equal scores on every asset (and on cash too with ``include_cash=True``), every step.

    Args:
        include_cash: give cash the same score as each asset (``np.ones(n + 1)``).
    """

    def __init__(self, include_cash: bool = False) -> None:
        self.include_cash = check_flag("include_cash", include_cash)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
        require_env(self, env, "Portfolio-v0")
        n = _n_assets(env)
        if bool(env_attr(env, "allow_short")):
            share = 1.0 / (n + 1) if self.include_cash else 1.0 / n
            action = np.full(n, share, dtype=np.float32)
        else:
            action = np.ones(n + 1, dtype=np.float32)
            action[-1] = 1.0 if self.include_cash else 0.0
        if is_batch(env):
            return np.tile(action, (env.num_envs, 1))
        return action

    def __repr__(self) -> str:
        return f"EqualWeight(include_cash={self.include_cash})"
