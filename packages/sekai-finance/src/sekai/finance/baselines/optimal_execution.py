"""OptimalExecution-v0 baselines: the Almgren–Chriss optimum and TWAP, with exact expectations."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance._values import real_array
from sekai.finance.baselines._checks import check_count, check_number, require_env
from sekai.finance.baselines._env_access import call_batched, is_vector, native_env, read_state
from sekai.finance.baselines._evaluate import BaselinePolicy

__all__ = ["TWAP", "AlmgrenChriss", "expected_return", "schedule_trades", "twap_actions"]


def _template(env: Any) -> Any:
    """The object holding the parameters: a native env's template, else the env itself."""
    return getattr(env, "template", env)


def twap_actions(n_steps: int) -> np.ndarray:
    """TWAP as actions: sell ``1 / (N - k)`` of what is left at step ``k``, float32 ``(N, 1)``."""
    n = check_count("n_steps", n_steps)
    return (1.0 / (n - np.arange(n))).astype(np.float32)[:, None]


def schedule_trades(actions: Any, initial_inventory: float, n_steps: int) -> np.ndarray:
    """Shares sold at each step when the env is fed these fraction actions in order.

    Replays the env's own arithmetic (the last step sells whatever is left), so the trades are
    exactly the ones an episode makes.

    Raises:
        TypeError: ``actions`` that are not real numbers; a non-int ``n_steps``.
        ValueError: fewer than ``n_steps - 1`` actions (the last step sells what is left),
            NaN or infinite actions, ``initial_inventory`` not > 0, ``n_steps`` < 1.
    """
    n_steps = check_count("n_steps", n_steps)
    initial_inventory = check_number("initial_inventory", initial_inventory, "gt0")
    values = real_array("actions", actions).reshape(-1)
    if values.size < n_steps - 1 or not np.all(np.isfinite(values)):
        raise ValueError(
            f"actions must be at least {n_steps - 1} finite fractions (one per step; the last "
            f"step sells what is left), got {values.size}"
            + ("" if np.all(np.isfinite(values)) else " with NaN or inf")
            + "."
        )
    fractions = np.clip(values, 0.0, 1.0)  # float64, as the env takes any action
    trades = np.zeros(n_steps)
    x = float(initial_inventory)
    for k in range(n_steps):
        sold = x if k >= n_steps - 1 else float(fractions[k]) * x
        trades[k] = sold
        x -= sold
        if x < 1e-9 * initial_inventory:
            x = 0.0
        if x == 0.0:
            break
    return trades


def expected_return(env: Any, actions: Any) -> float:
    """Exact expected episode return (bps) of a static schedule of fraction actions.

    The trades do not depend on the prices, so the return's expectation is minus the
    Almgren–Chriss objective ``1e4 (E + λ V) / (X0 s0)`` of those trades.
    """
    params = _template(env)
    x0, n = float(params.X0), int(params.n_steps)
    trades = schedule_trades(actions, x0, n)
    mean, variance = params.expected_shortfall(trades)
    return float(-1e4 * (mean + float(params.risk_aversion) * variance) / (x0 * float(params.s0)))


def _step_index(env: Any) -> Any:
    return read_state(env, "elapsed_steps")


class AlmgrenChriss(BaselinePolicy):
    """Follow the Almgren–Chriss schedule ``env.almgren_chriss_actions()`` step by step.

    It is the exact optimum of ``OptimalExecution-v0``'s expected return: the cost is convex in
    the trades and the price noise has zero mean, so no adaptive policy does better on average.
    """

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """Return the scheduled fraction for the env's current step(s)."""
        require_env(self, env, "OptimalExecution-v0")
        k = np.asarray(_step_index(env))
        native = native_env(env)
        if is_vector(env) and native is None:
            schedules = call_batched(env, "almgren_chriss_actions")  # (num_envs, N, 1)
            rows = np.minimum(k, schedules.shape[1] - 1)
            action: np.ndarray = schedules[np.arange(len(rows)), rows]
            return action
        # A native env's schedule is @shared: one (N, 1) array for every sub-env.
        method = (
            native.almgren_chriss_actions
            if native is not None
            else env.get_attr("almgren_chriss_actions")
        )
        schedule = np.asarray(method())
        result: np.ndarray = schedule[np.minimum(k, schedule.shape[0] - 1)]
        return result

    def __repr__(self) -> str:
        return "AlmgrenChriss()"


class TWAP(BaselinePolicy):
    """Sell evenly over the remaining steps: ``1 / (N - k)`` of what is left at step ``k``."""

    def __call__(self, observation: Any, env: Any) -> np.ndarray:
        """Return ``1 / (N - k)`` for the env's current step(s)."""
        require_env(self, env, "OptimalExecution-v0")
        k = np.asarray(_step_index(env))
        n = np.asarray(read_state(env, "n_steps"))
        left = np.maximum(n - k, 1)
        action: np.ndarray = (1.0 / left).astype(np.float32)[..., None]
        return action

    def __repr__(self) -> str:
        return "TWAP()"
