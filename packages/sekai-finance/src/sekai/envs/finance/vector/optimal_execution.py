"""OptimalExecutionVecEnv: OptimalExecution-v0 for many sub-envs at once, with array operations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.vector._base import SessionVecEnv, param, read_only, state
from sekai.vector.native import shared

__all__ = ["OptimalExecutionVecEnv"]

_DERIVED = "it is derived from the other parameters (total_time / n_steps)"


class OptimalExecutionVecEnv(SessionVecEnv):
    """``num_envs`` liquidations simulated together (see ``OptimalExecutionEnv``).

    Parameters are shared and live on ``self.template``; state has one entry per sub-env.
    Actions: ``(num_envs, 1)`` fractions of the remaining inventory. One normal per sub-env and
    step is drawn from ``self.rng``; with ``sigma = 0`` the sub-envs reproduce the single env
    exactly.

    Args:
        num_envs: number of sub-envs.
        autoreset: reset finished sub-envs in the same step (default); False freezes them.
        max_episode_steps: truncate every sub-env after this many steps.
        **kwargs: ``OptimalExecutionEnv``'s keyword arguments.
    """

    single_env = OptimalExecutionEnv
    state_names = ("inventory", "mid", "shortfall", "elapsed_steps", "time_remaining", "timestamp")

    X0 = param("Shares to sell.")
    s0 = param("Arrival price.")
    sigma = param("Mid volatility.")
    total_time = param("Horizon T.")
    n_steps = param("Trading periods N.")
    gamma = param("Permanent impact γ.")
    eta = param("Temporary impact η.")
    epsilon = param("Fixed cost per share ε.")
    risk_aversion = param("Risk aversion λ.")
    tau = read_only(_DERIVED, "Period length total_time / n_steps.")
    dt = read_only(_DERIVED, "The step length tau (the name every finance env uses).")

    template: OptimalExecutionEnv

    _inventory: np.ndarray
    _mid: np.ndarray
    _shortfall: np.ndarray

    def _allocate_state(self) -> None:
        super()._allocate_state()
        n = self.num_envs
        self._inventory = np.full(n, float(self.template.X0))
        self._mid = np.full(n, float(self.template.s0))
        self._shortfall = np.zeros(n)
        # The largest X0 and n_steps the current episodes began or stepped with: while the
        # parameters stay at least that large, the observation cannot leave its space.
        self._x0_ceiling = float(self.template.X0)
        self._steps_ceiling = int(self.template.n_steps)

    # -- state (one value per sub-env; copies) -------------------------------------------------

    inventory = state("_inventory", "Shares left to sell in every sub-env.")
    mid = state("_mid", "Mid price of every sub-env.")
    shortfall = state("_shortfall", "Cumulative implementation shortfall ($) of every sub-env.")

    # -- Almgren–Chriss (the same for every sub-env) -------------------------------------------

    @shared
    def almgren_chriss_trajectory(self) -> np.ndarray:
        """Optimal holdings ``x_0 .. x_N`` for the current parameters."""
        return self.template.almgren_chriss_trajectory()

    @shared
    def almgren_chriss_actions(self) -> np.ndarray:
        """The Almgren–Chriss schedule as actions, float32 ``(N, 1)``."""
        return self.template.almgren_chriss_actions()

    @shared
    def expected_shortfall(self, trades: Any) -> tuple[float, float]:
        """``(E, V)`` of a static schedule of share trades; ``TypeError``/``ValueError`` as
        ``OptimalExecutionEnv.expected_shortfall`` (``n_steps`` trades summing to ``X0``)."""
        return self.template.expected_shortfall(trades)

    # -- NativeVecEnv hooks --------------------------------------------------------------------

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self.restart_sessions(indices)
        tpl = self.template
        x0, n_steps = float(tpl.X0), int(tpl.n_steps)
        if len(indices) < self.num_envs:  # other episodes go on with what they began with
            x0, n_steps = max(x0, self._x0_ceiling), max(n_steps, self._steps_ceiling)
        self._x0_ceiling, self._steps_ceiling = x0, n_steps
        # Fresh arrays: infos handed out earlier may still refer to the old ones.
        self._inventory = self.replace_rows(self._inventory, indices, float(tpl.X0))
        self._mid = self.replace_rows(self._mid, indices, float(tpl.s0))
        self._shortfall = self.replace_rows(self._shortfall, indices, 0.0)

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        # Every value is the same for the sub-envs just reset: scalars are repeated for each.
        tpl = self.template
        return {
            "shares_sold": 0.0,
            "execution_price": math.nan,
            "inventory": float(tpl.X0),
            "mid_price": float(tpl.s0),
            "implementation_shortfall": 0.0,
            "shortfall_bps": 0.0,
            "timestamp": 0.0,
            "dt": tpl.tau,
        }

    def _fresh_observation(self) -> np.ndarray:
        return np.array([1.0, 1.0, 0.0], np.float32)

    def _build_observation(self) -> np.ndarray:
        p = self.template.__dict__  # the validated parameters (plain dict reads: a hot path)
        n_steps = p["_n_steps"]
        scale = p["_sigma"] * math.sqrt(p["_total_time"])
        obs = np.empty((self.num_envs, 3), np.float32)
        obs[:, 0] = self._inventory / p["_X0"]
        obs[:, 1] = (n_steps - self._t) / n_steps
        if p["_X0"] < self._x0_ceiling or n_steps < self._steps_ceiling:
            # Lowered mid-episode, X0 or n_steps would put the held fraction above 1 or the
            # clock past the end: into the space, as the single env clips.
            np.clip(obs[:, :2], 0.0, 1.0, out=obs[:, :2])
        if scale > 0:
            obs[:, 2] = (self._mid - p["_s0"]) / scale
        else:
            obs[:, 2] = 0.0
        return obs

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        p = self.template.__dict__  # the validated parameters (plain dict reads: a hot path)
        n_steps, x0, s0, sigma = p["_n_steps"], p["_X0"], p["_s0"], p["_sigma"]
        tau = p["_total_time"] / n_steps
        x, mid, t = self._inventory, self._mid, self._t
        if n_steps > self._steps_ceiling:  # raised mid-episode: the clock may run that far
            self._steps_ceiling = n_steps
        # Same operations in the same order as OptimalExecutionEnv.step (bit-identical results).
        fraction = np.clip(actions[:, 0], 0.0, 1.0)
        sold = np.where(t >= n_steps - 1, x, fraction * x)
        price = np.where(sold > 0, mid - p["_epsilon"] - p["_eta"] * sold / tau, mid)
        left = x - sold
        left[left < 1e-9 * x0] = 0.0
        shortfall = self._shortfall + sold * (s0 - price)
        z = self.rng.standard_normal(self.num_envs)
        new_mid = mid + (sigma * math.sqrt(tau) * z - p["_gamma"] * sold)
        penalty = p["_risk_aversion"] * sigma**2 * tau * left * left
        rewards = 1e4 * (sold * (price - s0) - penalty) / (x0 * s0)
        new_t = t + 1
        terminated = (left == 0.0) | (new_t >= n_steps)
        frozen = self.frozen_mask()
        if frozen is not None:
            keep = self.keep_frozen
            left, new_mid, shortfall = (
                keep(frozen, left, x),
                keep(frozen, new_mid, mid),
                keep(frozen, shortfall, self._shortfall),
            )
            new_t = keep(frozen, new_t, t)
        self._inventory, self._mid, self._shortfall, self._t = left, new_mid, shortfall, new_t
        infos = {
            "shares_sold": sold,
            "execution_price": price,
            "inventory": left,
            "mid_price": new_mid,
            "implementation_shortfall": shortfall,
            "shortfall_bps": 1e4 * shortfall / (x0 * s0),
            "timestamp": new_t * tau,
            "dt": tau,
        }
        self._observation_ready()
        return rewards, terminated, np.zeros(self.num_envs, np.bool_), infos
