"""Market-v0 baselines: a volatility filter (regime detection) and the privileged regime oracle."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._checks import check_number, observation_entry, require_env
from sekai.finance.baselines._evaluate import BaselinePolicy, env_attr, is_batch

__all__ = ["RegimeOracle", "VolatilityFilter", "equal_weight_action"]


def equal_weight_action(mask: np.ndarray, allow_short: bool) -> np.ndarray:
    """Equal weight over the tradable slots (``mask`` ``(..., S)``), no cash.

    Long-only: score 1 on every tradable slot and 0 on cash (shape ``(..., S + 1)``); with
    shorts: weight ``1 / n`` on each of the ``n`` tradable slots (shape ``(..., S)``).
    """
    tradable = np.asarray(mask, dtype=np.float32)
    if allow_short:
        count = np.maximum(tradable.sum(axis=-1, keepdims=True), 1.0)
        return (tradable / count).astype(np.float32)  # type: ignore[no-any-return]
    cash = np.zeros((*tradable.shape[:-1], 1), np.float32)
    return np.concatenate([tradable, cash], axis=-1)


def cash_action(shape: tuple[int, ...], allow_short: bool) -> np.ndarray:
    """All cash: zero weights (with shorts) or a score only on cash (long-only)."""
    action = np.zeros(shape, np.float32)
    if not allow_short:
        action[..., -1] = 1.0
    return action


def _select(hold: np.ndarray, mask: np.ndarray, allow_short: bool) -> np.ndarray:
    """Equal weight where ``hold`` is True, cash elsewhere (batched over leading axes)."""
    invest = equal_weight_action(mask, allow_short)
    cash = cash_action(invest.shape, allow_short)
    action: np.ndarray = np.where(np.asarray(hold)[..., None], invest, cash)
    return action


class VolatilityFilter(BaselinePolicy):
    """Equal weight in quiet markets, cash when the equal-weight portfolio is volatile.

    From the observation: the equal-weight portfolio's return in each of the ``lookback`` rows
    is the mean over tradable slots of ``return × availability``; when the standard deviation of
    those returns exceeds ``threshold`` the policy holds cash, otherwise it holds the tradable
    assets in equal weights. On ``Market-v0``'s default market (calm ≈ 0.005, stressed ≈ 0.02
    per day) this detects the hidden stress regime from returns alone.

    Args:
        threshold: daily standard deviation above which the policy holds cash.
    """

    def __init__(self, threshold: float = 0.012) -> None:
        self.threshold = check_number("threshold", threshold, "ge0")

    def volatility(self, observation: Any) -> np.ndarray:
        """Std of the equal-weight portfolio's returns over the lookback (batched like obs)."""
        assets = observation_entry(self, observation, "assets")
        values = np.asarray(assets["values"], dtype=np.float64)  # (..., S, L, F)
        mask = np.asarray(assets["mask"], dtype=np.float64)  # (..., S)
        contribution = values[..., 0] * values[..., 1] * mask[..., None]
        count = np.maximum(mask.sum(axis=-1), 1.0)[..., None]
        portfolio = contribution.sum(axis=-2) / count  # (..., L)
        return portfolio.std(axis=-1)  # type: ignore[no-any-return]

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
        require_env(self, env, "Market-v0")
        allow_short = bool(env_attr(env, "allow_short"))
        mask = np.asarray(observation_entry(self, observation, "assets")["mask"])
        return _select(self.volatility(observation) <= self.threshold, mask, allow_short)

    def __repr__(self) -> str:
        return f"VolatilityFilter(threshold={self.threshold!r})"


class RegimeOracle(BaselinePolicy):
    """Equal weight while the hidden regime is calm (0), cash otherwise: an upper reference.

    Reads the regime that drives the coming period from the observation's ``"market"`` entry
    when the env observes it (``exogenous=("regime",)``, a legal policy), else from the env's
    ``latent_state`` (privileged information no policy could use). A market without a regime
    (a GBM, a replayed history) is a ``ValueError``.
    """

    def _regime(self, observation: Any, env: Any) -> np.ndarray:
        exogenous = tuple(env_attr(env, "exogenous"))
        if "regime" in exogenous and "market" in observation:
            column = 0
            for name in exogenous[: exogenous.index("regime")]:
                column += 1 if name == "regime" else _width(env, name)
            return np.asarray(observation["market"])[..., -1, column]
        states = env.get_attr("latent_state")
        state = states[0] if is_batch(env) else states
        if "regime" not in state:
            raise ValueError(
                f"{self!r} needs the market's regime: a Market-v0 simulating a regime-switching "
                "market (the default model, default_market(), or another RegimeSwitching "
                "model), or one observing a 'regime' series with exogenous=('regime',); this "
                f"env has none (its latent state holds {sorted(state)})."
            )
        if is_batch(env):
            return np.array([float(s["regime"]) for s in states])
        return np.asarray(float(state["regime"]))

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """The action for one env, or a batch for a vector env."""
        require_env(self, env, "Market-v0")
        allow_short = bool(env_attr(env, "allow_short"))
        mask = np.asarray(observation_entry(self, observation, "assets")["mask"])
        return _select(self._regime(observation, env) == 0, mask, allow_short)

    def __repr__(self) -> str:
        return "RegimeOracle()"


def _width(env: Any, name: str) -> int:
    data = env_attr(env, "data")
    if data is not None:
        return int(data.exogenous_width(name))
    shape = env_attr(env, "model").state_spec()[name]
    return int(np.prod(shape, dtype=np.int64))
