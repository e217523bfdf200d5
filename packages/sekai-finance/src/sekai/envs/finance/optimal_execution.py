"""OptimalExecution-v0: liquidate a position against impact and price risk (Almgren–Chriss 2000)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core._rng import SeedLike
from sekai.core.result import ResetResult, StepResult
from sekai.envs.finance._common import FinanceEnv
from sekai.envs.finance._session import (
    RewardTerm,
    box_action,
    check_reward_terms,
    param,
    session_options,
)
from sekai.finance._values import real_array
from sekai.spaces import Box

__all__ = [
    "OptimalExecutionEnv",
    "almgren_chriss_actions",
    "almgren_chriss_trajectory",
    "expected_shortfall",
]


# The observation's price move, (mid - s0) / (sigma * sqrt(total_time)), is a float32. The mid
# moves by the permanent impact of everything sold, at most permanent_impact * X0, and by
# Brownian noise, 5 standard deviations of the horizon's at most (as price_floor counts it): 5
# in these units. So |move| <= permanent_impact * X0 / (sigma * sqrt(total_time)) + 5, which
# fits float32 when sigma >= permanent_impact * X0 / (sqrt(total_time) * (_F32_MAX - 5)); a
# positive sigma below that is refused (sigma = 0 observes no move at all).
_F32_MAX = float(np.finfo(np.float32).max)


def _effective_eta(eta: float, gamma: float, tau: float) -> float:
    return eta - 0.5 * gamma * tau


def almgren_chriss_trajectory(
    X0: float,
    total_time: float,
    n_steps: int,
    sigma: float,
    eta: float,
    gamma: float,
    risk_aversion: float,
) -> np.ndarray:
    """Almgren–Chriss optimal holdings ``x_j`` at ``t_j = j tau`` (``j = 0..N``), float64.

    ``x_j = X0 sinh(κ(T - t_j)) / sinh(κT)`` with ``κ = (2/τ) asinh(τ κ̃ / 2)``,
    ``κ̃² = λ σ² / (η - γτ/2)``; a straight line (TWAP) when ``κT < 1e-8``.
    """
    tau = total_time / n_steps
    t = np.arange(n_steps + 1) * tau
    kappa_tilde_sq = risk_aversion * sigma * sigma / _effective_eta(eta, gamma, tau)
    kappa = (2.0 / tau) * math.asinh(0.5 * tau * math.sqrt(kappa_tilde_sq))
    b = kappa * total_time
    if b < 1e-8:
        holdings: np.ndarray = X0 * (1.0 - t / total_time)
    else:
        a = kappa * (total_time - t)
        holdings = X0 * np.exp(a - b) * np.expm1(-2.0 * a) / math.expm1(-2.0 * b)
    holdings[-1] = 0.0
    return holdings


def almgren_chriss_actions(holdings: np.ndarray) -> np.ndarray:
    """Turn a holdings schedule into the env's actions: the fraction of what is left to sell.

    Returns:
        float32 ``(N, 1)``: ``n_j / x_{j-1}`` (1 where nothing is left), clipped to [0, 1],
        the last entry 1.
    """
    before, after = holdings[:-1], holdings[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(before > 0, (before - after) / before, 1.0)
    fraction = np.clip(fraction, 0.0, 1.0)
    fraction[-1] = 1.0
    return fraction.astype(np.float32)[:, None]


def _check_trades(trades: Any, X0: float, n_steps: int | None) -> np.ndarray:
    """``trades`` as a float64 ``(N,)`` schedule that sells ``X0``; raises as
    ``expected_shortfall`` says."""
    n = real_array("trades", trades)
    shape = n.shape
    if n.ndim == 2 and shape[1] == 1:
        n = n[:, 0]
    if n.ndim != 1 or shape[0] == 0 or (n_steps is not None and shape[0] != n_steps):
        wanted = (
            "a schedule of at least one trade, shape (N,) or (N, 1)"
            if n_steps is None
            else f"{n_steps} trades (one per step), shape ({n_steps},) or ({n_steps}, 1)"
        )
        raise ValueError(f"trades must be {wanted}, got shape {shape}.")
    finite = np.isfinite(n)
    if not finite.all():
        step = int(np.argmin(finite))
        raise ValueError(f"trades must be finite numbers, got {float(n[step])!r} at step {step}.")
    # The γX0²/2 term assumes the schedule sells everything. Holdings below 1e-9 X0 count as
    # sold out (the step's own rule), plus the rounding of a float sum of N trades (the trades of
    # almgren_chriss_trajectory() are differences of rounded holdings: as much again).
    dtype = getattr(trades, "dtype", None)
    eps = float(np.finfo(dtype if dtype is not None and dtype.kind == "f" else np.float64).eps)
    total, gross = float(n.sum()), float(np.abs(n).sum())
    if not abs(total - X0) <= 1e-9 * abs(X0) + 2.0 * n.size * eps * gross:
        raise ValueError(
            f"trades must sum to initial_inventory X0={X0!r} (the schedule sells everything: "
            f"the formula's γX0²/2 term assumes it), got {total!r}."
        )
    return n


def expected_shortfall(
    trades: Any,
    X0: float,
    tau: float,
    sigma: float,
    eta: float,
    gamma: float,
    epsilon: float,
    *,
    n_steps: int | None = None,
) -> tuple[float, float]:
    """Mean and variance of the implementation shortfall of a static schedule of trades.

    ``E = γX0²/2 + ε Σ|n| + (η̃/τ) Σ n²`` and ``V = σ² τ Σ_{k=1..N} x_k²`` with
    ``x_k = X0 - cumsum(n)`` and ``η̃ = η - γτ/2``. Trades may be negative (buys).

    Args:
        trades: shares sold per step, shape ``(N,)`` or ``(N, 1)``, summing to ``X0``.
        n_steps: the number of trades the schedule must hold (None: any ``N >= 1``).

    Raises:
        TypeError: ``trades`` is not real numbers (bools, strings, objects).
        ValueError: ``trades`` has the wrong shape or length, is not finite or does not sum to
            ``X0`` (within ``1e-9 X0`` and rounding).
    """
    n = _check_trades(trades, X0, n_steps)
    remaining = X0 - np.cumsum(n)
    mean = (
        0.5 * gamma * X0 * X0
        + epsilon * float(np.abs(n).sum())
        + _effective_eta(eta, gamma, tau) / tau * float(n @ n)
    )
    variance = sigma * sigma * tau * float(remaining @ remaining)
    return float(mean), float(variance)


def _worst_discount(p: Any, total_time: float | None = None, n_steps: int | None = None) -> float:
    """``s0 - price_floor``: ``ε + X0·max(γ, η/τ) + 5σ√T`` (``p``: the env, or its kernel's
    params; ``total_time``, ``n_steps``: other values than ``p``'s, ``τ = T / N``)."""
    horizon = float(p.total_time) if total_time is None else total_time
    tau = float(p.tau) if n_steps is None else horizon / n_steps
    impact = float(p.X0) * max(float(p.gamma), float(p.eta) / tau)
    return float(p.epsilon) + impact + 5.0 * float(p.sigma) * math.sqrt(horizon)


_OTHER_LEVERS = "raise s0, or lower initial_inventory, the impacts or sigma."


def _floor_remedy(p: OptimalExecutionEnv) -> str:
    """What lifts a ``price_floor`` <= 0 above 0. A larger ``tau`` lowers ``η/τ`` only while
    that term binds: fewer ``n_steps`` (same ``total_time``) then help, and are offered with
    the range that works, or as a partial help when none does; a longer ``total_time`` also
    adds noise (``5σ√T``), so it is offered only with a value that lifts the floor above 0.
    Either keeps ``η - γτ/2 > 0``. The parameter levers follow."""
    s0, x0, eta, gamma = float(p._s0), float(p._X0), float(p._eta), float(p._gamma)
    horizon, steps, sigma = float(p._total_time), int(p._n_steps), float(p._sigma)
    binds = eta / p.tau > gamma
    tau_levers: list[str] = []
    partial = ""
    if binds and steps > 1:

        def fits(n: int) -> bool:  # τ = T/n keeps the cost convex and the floor above 0
            return _effective_eta(eta, gamma, horizon / n) > 0 and s0 > _worst_discount(
                p, horizon, n
            )

        # the fewest steps the convexity allows, and the most (< steps) the floor allows
        least = max(1, math.floor(gamma * horizon / (2 * eta)))
        while _effective_eta(eta, gamma, horizon / least) <= 0:
            least += 1
        room = s0 - float(p._epsilon) - 5.0 * sigma * math.sqrt(horizon)  # for X0·η·n/T
        limit = room * horizon / (x0 * eta) if x0 * eta > 0 else math.inf
        # limit may be -inf or NaN (room overflowed): then no n_steps lifts the floor
        most = steps - 1 if limit >= steps else math.ceil(limit) if limit > least else least
        while most > least and not fits(most):
            most -= 1
        if fits(most):
            span = f"n_steps <= {most}" if least == 1 else f"{least} <= n_steps <= {most}"
            tau_levers.append(f"{span} (a larger tau lowers temporary_impact / tau)")
        elif least < steps:
            best = s0 - _worst_discount(p, horizon, least)
            partial = (
                "Fewer n_steps raise it (a larger tau lowers temporary_impact / tau), but "
                f"n_steps={least} only to {best:.6g}; "
            )
    if binds:
        # T minimising X0·η·N/T + 5σ√T, up to where γ takes over from η/τ
        longest = eta * steps / gamma if gamma > 0 else math.inf
        if sigma > 0:
            longest = min(longest, (x0 * eta * steps / (2.5 * sigma)) ** (2.0 / 3.0))
        elif math.isinf(longest) and s0 > float(p._epsilon):
            longest = 2.0 * x0 * eta * steps / (s0 - float(p._epsilon))
        longer = float(f"{longest:.6g}")
        if (
            longer > horizon
            and _effective_eta(eta, gamma, longer / steps) > 0
            and s0 > _worst_discount(p, longer, steps)
        ):
            why = "a larger tau outweighs the added noise" if sigma > 0 else "a larger tau"
            tau_levers.append(f"total_time={longer!r} ({why})")
    if tau_levers:
        return f"Use {' or '.join(tau_levers)}; or {_OTHER_LEVERS}"
    if partial:
        return partial + _OTHER_LEVERS
    return _OTHER_LEVERS[0].upper() + _OTHER_LEVERS[1:]


def reward_values(p: Any) -> dict[str, float]:
    """The parameters ``reward_terms`` reads, by the env's keywords (``p``: the env, or its
    kernel's params)."""
    names = {"initial_inventory": "X0", "s0": "s0", "sigma": "sigma", "tau": "tau"}
    values = {keyword: float(getattr(p, name)) for keyword, name in names.items()}
    return {
        **values,
        "risk_aversion": float(p.risk_aversion),
        "price_floor": values["s0"] - _worst_discount(p),
    }


def reward_terms(p: Any) -> list[RewardTerm]:
    """OptimalExecution-v0's reward ``1e4 (n (P - s0) - λσ²τx²) / (X0 s0)`` at its worst case,
    term by term as the step computes them (``p``: the env, or its kernel's params). Inside the
    price domain a trade's ``|n (P - s0)|`` is at most ``X0 (s0 - price_floor)``, and the risk
    penalty peaks at ``x = X0``."""
    v = reward_values(p)
    x0, s0, sigma, tau = v["initial_inventory"], v["s0"], v["sigma"], v["tau"]
    lam = v["risk_aversion"]
    penalty = lam * (sigma * sigma) * tau * x0 * x0  # sigma**2 would raise OverflowError
    notional = x0 * s0
    cost = x0 * (s0 - v["price_floor"]) + penalty
    risk = "risk_aversion * sigma**2 * tau * initial_inventory**2"
    return [
        RewardTerm("sigma**2", "sigma**2", (sigma, sigma), "sigma"),
        RewardTerm(
            "the arrival value", "initial_inventory * s0", (x0, s0), "initial_inventory or s0"
        ),
        RewardTerm(
            "the risk penalty",
            risk,
            (lam, sigma * sigma, tau, x0, x0),
            "risk_aversion, sigma or initial_inventory",
        ),
        RewardTerm(
            "the reward in basis points",
            f"1e4 * (initial_inventory * (s0 - price_floor) + {risk}) / (initial_inventory * s0)",
            (1e4, cost, 1.0 / notional if notional > 0 else math.inf),
            "risk_aversion, sigma, initial_inventory or the impacts",
        ),
    ]


class OptimalExecutionEnv(FinanceEnv[np.ndarray, np.ndarray]):
    """Sell ``initial_inventory`` shares within ``n_steps`` periods of an arithmetic-Brownian mid.

    Each step the agent sells a fraction of what is left (everything at the last step) at
    ``mid - epsilon - eta * n / tau`` (temporary impact); then the mid moves by
    ``sigma sqrt(tau) Z - gamma n`` (permanent impact). Reward, in basis points of the arrival
    notional: ``1e4 (n (P - s0) - λ σ² τ x²) / (X0 s0)``, so an episode's return is minus the
    realised Almgren–Chriss objective. The episode ends when nothing is left or at the horizon.

    Args:
        initial_inventory: ``X0``, shares to sell (> 0). s0: arrival price (> 0).
        sigma: mid volatility in $ per share per sqrt(day) (>= 0). total_time: ``T`` (> 0).
        n_steps: ``N`` (int >= 1). permanent_impact: ``γ`` (>= 0).
        temporary_impact: ``η`` (> 0, with ``η - γτ/2 > 0``). fixed_cost: ``ε`` per share (>= 0).
        risk_aversion: ``λ`` (>= 0).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 5}

    X0 = param("gt0", doc="Shares to sell (initial_inventory).")
    s0 = param("gt0", doc="Arrival price.")
    sigma = param("ge0", doc="Mid volatility, $ per share per sqrt(day).")
    total_time = param("gt0", doc="Horizon T.")
    n_steps = param(integer=True, doc="Trading periods N.")
    gamma = param("ge0", doc="Permanent impact γ (permanent_impact).")
    eta = param("gt0", doc="Temporary impact η (temporary_impact).")
    epsilon = param("ge0", doc="Fixed cost per share ε: half-spread plus fees (fixed_cost).")
    risk_aversion = param("ge0", doc="Risk aversion λ.")

    def __init__(
        self,
        *,
        initial_inventory: float = 1e6,
        s0: float = 50.0,
        sigma: float = 0.95,
        total_time: float = 5.0,
        n_steps: int = 25,
        permanent_impact: float = 2.5e-7,
        temporary_impact: float = 2.5e-6,
        fixed_cost: float = 0.0625,
        risk_aversion: float = 1e-6,
    ) -> None:
        cls = type(self)
        self._X0 = cls.X0.check(initial_inventory, "initial_inventory")
        self._s0 = cls.s0.check(s0)
        self._sigma = cls.sigma.check(sigma)
        self._total_time = cls.total_time.check(total_time)
        self._n_steps = cls.n_steps.check(n_steps)
        self._gamma = cls.gamma.check(permanent_impact, "permanent_impact")
        self._eta = cls.eta.check(temporary_impact, "temporary_impact")
        self._epsilon = cls.epsilon.check(fixed_cost, "fixed_cost")
        self._risk_aversion = cls.risk_aversion.check(risk_aversion)
        self._check_tau(None)
        self._check_impact("temporary_impact")
        self._check_price_domain(None)
        self._check_reward_range(None)
        self._check_observed_move(None)
        self.observation_space = Box(
            np.array([0.0, 0.0, -np.inf], np.float32),
            np.array([1.0, 1.0, np.inf], np.float32),
            dtype=np.float32,
        )
        self.action_space = Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        self._clear()

    def _check_tau(self, name: str | None) -> None:
        """Refuse a ``total_time`` so small for ``n_steps`` that ``tau`` rounds to 0 in float64
        (``name``: the parameter just set; None: the constructor)."""
        if self.tau > 0:
            return
        head = "the parameters make" if name is None else f"setting {name} makes"
        raise ValueError(
            f"OptimalExecution-v0: {head} tau, the period length total_time / n_steps, round "
            f"to 0.0 in float64 (total_time={self._total_time!r} / n_steps={self._n_steps!r}), "
            "where it must be > 0. Use a larger total_time or fewer n_steps."
        )

    def _check_impact(self, name: str) -> None:
        effective = _effective_eta(self._eta, self._gamma, self.tau)
        if not effective > 0:
            head = (
                "temporary_impact must exceed permanent_impact * tau / 2"
                if name == "temporary_impact"
                else f"setting {name} breaks temporary_impact > permanent_impact * tau / 2"
            )
            raise ValueError(
                f"OptimalExecution-v0: {head} (eta - gamma * tau / 2 > 0 keeps the execution "
                f"cost convex), got eta={self._eta!r}, gamma={self._gamma!r}, tau={self.tau!r}."
            )

    def _check_price_domain(self, name: str | None) -> None:
        """Refuse parameters under which the execution price can reach 0 (see ``price_floor``);
        ``name``: the parameter just set (None: the constructor)."""
        floor = self.price_floor
        if floor > 0:
            return
        head = "the parameters" if name is None else f"setting {name}"
        remedy = _floor_remedy(self)
        raise ValueError(
            f"OptimalExecution-v0: {head} let the execution price reach {floor:.6g} <= 0. The "
            "Almgren-Chriss mid is arithmetic (s0 plus Brownian noise minus impact), so it needs "
            "s0 > fixed_cost + initial_inventory * max(permanent_impact, temporary_impact / tau)"
            " + 5 * sigma * sqrt(total_time): here "
            f"{self._s0!r} <= {self._epsilon!r} + {self._X0!r} * "
            f"max({self._gamma!r}, {self._eta!r} / {self.tau!r}) + 5 * {self._sigma!r} * "
            f"sqrt({self._total_time!r}). {remedy}"
        )

    def _check_reward_range(self, name: str | None) -> None:
        """Refuse parameters whose reward overflows float64 at its worst case (``name``: the
        parameter just set; None: the constructor)."""
        check_reward_terms("OptimalExecution-v0", name, reward_terms(self), reward_values(self))

    def _check_observed_move(self, name: str | None) -> None:
        """Refuse a positive ``sigma`` so small that the observed price move overflows float32
        (the bound above ``_F32_MAX``; ``name``: the parameter just set, None: the
        constructor)."""
        sigma, impact = self._sigma, self._gamma * self._X0
        root = math.sqrt(self._total_time)
        smallest = impact / (root * (_F32_MAX - 5.0))
        if not 0.0 < sigma < smallest:
            return
        scale = sigma * root
        worst = impact / scale + 5.0 if scale > 0 else math.inf
        head = "the parameters make" if name is None else f"setting {name} makes"
        raise ValueError(
            f"OptimalExecution-v0: {head} the observed price move overflow float32: "
            "(mid - s0) / (sigma * sqrt(total_time)) reaches permanent_impact * "
            f"initial_inventory / (sigma * sqrt(total_time)) + 5 = {worst:.4g} on a 5-sigma "
            f"path with sigma={sigma!r}, permanent_impact={self._gamma!r}, initial_inventory="
            f"{self._X0!r}, total_time={self._total_time!r}, above float32's largest value "
            f"{_F32_MAX:.4g}. sigma must be 0 or at least permanent_impact * "
            f"initial_inventory / (sqrt(total_time) * ({_F32_MAX:.4g} - 5)) = {smallest:.6g}: "
            "use a larger sigma (or 0, which observes no move), or lower permanent_impact or "
            "initial_inventory."
        )

    def _parameters_changed(self, name: str) -> None:
        """Re-check ``tau > 0``, ``η - γτ/2 > 0``, the price domain, the reward's range and the
        observed move's after a parameter changed."""
        self._check_tau(name)
        self._check_impact(name)
        self._check_price_domain(name)
        self._check_reward_range(name)
        self._check_observed_move(name)

    def _clear(self) -> None:
        self._inventory = float(self._X0)
        self._mid = float(self._s0)
        self._shortfall = 0.0
        self._sold = 0.0
        self._price = math.nan

    # -- derived state -------------------------------------------------------------------------

    @property
    def tau(self) -> float:
        """Period length ``total_time / n_steps`` (derived, read-only)."""
        return float(self._total_time / self._n_steps)

    @property
    def dt(self) -> float:
        """The step length ``tau`` (the name every finance env uses; read-only)."""
        return self.tau

    @property
    def price_floor(self) -> float:
        """The lowest execution price the parameters allow, short of a 5-sigma path.

        ``s0 - ε - X0·max(γ, η/τ) - 5σ√T``: every share sold at once (temporary impact) or
        the permanent impact of all earlier sales, on a mid 5 standard deviations of the
        horizon's noise down (a Brownian path dips that far with probability ``2Φ(-5)``,
        below 6e-7). The constructor and the setters refuse parameters where it is <= 0.
        """
        return float(self._s0 - _worst_discount(self))

    @property
    def inventory(self) -> float:
        """Shares still to sell (read-only: state of the simulation)."""
        return self._inventory

    @property
    def mid(self) -> float:
        """The current mid price (read-only)."""
        return self._mid

    @property
    def shortfall(self) -> float:
        """Implementation shortfall so far, in $ (read-only)."""
        return self._shortfall

    @property
    def time_remaining(self) -> float:
        """Time left, ``max(N - k, 0) tau``."""
        return float(max(self._n_steps - self._elapsed_steps, 0) * self.tau)

    @property
    def timestamp(self) -> float:
        """Session time of the current decision, ``k tau``."""
        self._require_episode("timestamp")
        return float(self._elapsed_steps * self.tau)

    # -- Almgren–Chriss ------------------------------------------------------------------------

    def almgren_chriss_trajectory(self) -> np.ndarray:
        """Optimal holdings ``x_0 .. x_N`` (float64 ``(N + 1,)``) for the current parameters."""
        return almgren_chriss_trajectory(
            self._X0,
            self._total_time,
            self._n_steps,
            self._sigma,
            self._eta,
            self._gamma,
            self._risk_aversion,
        )

    def almgren_chriss_actions(self) -> np.ndarray:
        """The Almgren–Chriss schedule as actions: float32 ``(N, 1)`` fractions of what is left."""
        return almgren_chriss_actions(self.almgren_chriss_trajectory())

    def expected_shortfall(self, trades: Any) -> tuple[float, float]:
        """``(E, V)``: mean and variance of the shortfall of a static schedule of share trades.

        Raises:
            TypeError: ``trades`` is not real numbers.
            ValueError: ``trades`` is not ``n_steps`` finite trades (shape ``(n_steps,)`` or
                ``(n_steps, 1)``) summing to ``X0``.
        """
        return expected_shortfall(
            trades,
            self._X0,
            self.tau,
            self._sigma,
            self._eta,
            self._gamma,
            self._epsilon,
            n_steps=self._n_steps,
        )

    # -- episode -------------------------------------------------------------------------------

    def _observation(self) -> np.ndarray:
        scale = self._sigma * math.sqrt(self._total_time)
        move = (self._mid - self._s0) / scale if scale > 0 else 0.0
        n = self._n_steps
        # Clipped into the space: X0 or n_steps set lower mid-episode would put the inventory
        # fraction above 1 or the clock past the end.
        held = min(max(self._inventory / self._X0, 0.0), 1.0)
        return np.array([held, max((n - self._elapsed_steps) / n, 0.0), move], np.float32)

    def _info(self) -> dict[str, Any]:
        notional = self._X0 * self._s0
        return {
            "shares_sold": float(self._sold),
            "execution_price": float(self._price),
            "inventory": float(self._inventory),
            "mid_price": float(self._mid),
            "implementation_shortfall": float(self._shortfall),
            "shortfall_bps": float(1e4 * self._shortfall / notional),
            "timestamp": float(self._elapsed_steps * self.tau),
            "dt": self.tau,
        }

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[np.ndarray]:
        """Start with the whole position at the arrival price."""
        session_options(options, type(self).__name__)
        self._set_rng(seed)
        self._begin_episode()
        self._clear()
        return ResetResult(self._observation(), self._info())

    def step(self, action: np.ndarray) -> StepResult[np.ndarray]:
        """Sell the chosen fraction of what is left; reward minus its cost and risk in bps."""
        self._check_can_step()
        fraction = min(max(float(box_action(action, (1,), self.action_space)[0]), 0.0), 1.0)
        tau, x, k = self.tau, self._inventory, self._elapsed_steps
        sold = x if k >= self._n_steps - 1 else fraction * x
        price = self._mid - self._epsilon - self._eta * sold / tau if sold > 0 else self._mid
        x -= sold
        if x < 1e-9 * self._X0:
            x = 0.0
        self._shortfall += sold * (self._s0 - price)
        z = float(self.rng.standard_normal())
        self._mid += self._sigma * math.sqrt(tau) * z - self._gamma * sold
        self._inventory, self._sold, self._price = x, sold, price
        penalty = self._risk_aversion * self._sigma**2 * tau * x * x
        reward = 1e4 * (sold * (price - self._s0) - penalty) / (self._X0 * self._s0)
        terminated = x == 0.0 or k + 1 >= self._n_steps
        self._end_step(terminated, False)
        return StepResult(self._observation(), float(reward), terminated, False, self._info())
