"""Portfolio-v0 baselines: the Kelly (Merton) mix, constant mixes and equal weights."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._evaluate import env_attr, is_batch

__all__ = ["ConstantMix", "EqualWeight", "KellyBuyAndHold", "kelly_weights"]


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
    """
    corr_a = np.asarray(corr, dtype=np.float64)
    n = corr_a.shape[0]
    mu_a = np.broadcast_to(np.asarray(mu, dtype=np.float64), (n,))
    sigma_a = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    if not float(max_leverage) > 0:
        raise ValueError(f"max_leverage must be > 0, got {max_leverage!r}.")
    cov = np.outer(sigma_a, sigma_a) * corr_a
    largest = float(np.linalg.eigvalsh(cov).max())
    if largest <= 0:  # no risk: all in the best asset(s) up to the budget
        best = np.zeros(n)
        if mu_a.max() > 0:
            best[np.argmax(mu_a)] = float(max_leverage)
        return best
    step = 1.0 / largest
    w = np.zeros(n)
    y = w.copy()
    momentum = 1.0
    for _ in range(100_000):
        new = _project(y + step * (mu_a - cov @ y), allow_short, float(max_leverage))
        following = (1.0 + np.sqrt(1.0 + 4.0 * momentum**2)) / 2.0
        y = new + (momentum - 1.0) / following * (new - w)
        converged = np.max(np.abs(new - w)) < 1e-15
        w, momentum = new, following
        if converged:
            break
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


class ConstantMix:
    """Hold the asset weights ``weights`` (cash ``1 − Σw``).

    Args:
        weights: target asset weights ``(n,)``.
        rebalance: trade back to the mix every step (True), or enter it once and then send the
            observed drifted weights back as the action, which trades nothing (False).
    """

    def __init__(self, weights: Any, *, rebalance: bool = True) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        if self.weights.ndim != 1 or not np.all(np.isfinite(self.weights)):
            raise ValueError(f"weights must be a finite 1-D array, got {weights!r}.")
        self.rebalance = bool(rebalance)

    def _target(self, env: Any) -> np.ndarray:
        return self.weights

    def _action(self, assets: np.ndarray, allow_short: bool) -> np.ndarray:
        if allow_short:
            return assets
        cash = np.maximum(1.0 - assets.sum(axis=-1, keepdims=True), 0.0)
        return np.concatenate([np.maximum(assets, 0.0), cash], axis=-1)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
        allow_short = bool(env_attr(env, "allow_short"))
        target = self._action(self._target(env), allow_short)
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
    """Enter the env's Kelly mix (``kelly_weights`` of its ``mu``, ``sigma``, ``corr``), then
    let it drift without trading."""

    def __init__(self) -> None:
        super().__init__(np.zeros(1), rebalance=False)
        self._key: tuple[Any, ...] | None = None

    def _target(self, env: Any) -> np.ndarray:
        mu, sigma, corr = (env_attr(env, name) for name in ("mu", "sigma", "corr"))
        key = (mu, sigma, corr, bool(env_attr(env, "allow_short")))
        if self._key is None or any(a is not b for a, b in zip(self._key, key)):
            self.weights = kelly_weights(mu, sigma, corr, allow_short=key[3])
            self._key = key
        return self.weights

    def __repr__(self) -> str:
        return "KellyBuyAndHold()"


class EqualWeight:
    """Equal scores on every asset (and on cash too with ``include_cash=True``), every step.

    Args:
        include_cash: give cash the same score as each asset (``np.ones(n + 1)``).
    """

    def __init__(self, include_cash: bool = False) -> None:
        self.include_cash = bool(include_cash)

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
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
