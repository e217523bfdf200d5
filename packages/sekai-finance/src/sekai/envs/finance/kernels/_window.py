"""The market and the accounting shared by the Trading and Portfolio kernels.

Every sub-env's market runs in one of two modes, fixed when the kernel is built:

* simulated: the env's built-in GBM (``gbm_terms``, as the native env steps it), one
  ``(n,)`` normal draw per sub-env and step, ``(lookback, n)`` at reset for the first window;
* replayed: the env's ``MarketData`` history, held in ``params`` (so on the device), each
  episode a window whose start is drawn uniformly (the ``"random"`` sampler; from three
  uniforms, ``window_position``, so in any float dtype and for any number of windows below
  2**31, where one float32 uniform times the count skips or doubles windows beyond 2**23 or
  2**24 of them). The infos give
  each decision's history row (``history_row``), whose timestamp ``host_info`` looks up on the
  host: float32 holds no timestamp exactly, nor does JAX without x64 hold an int64.

The state holds the observed log returns as a ``(num_envs, lookback, n)`` window, shifted by one
row a step (the observation itself, built without touching the history).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from sekai.envs.finance._common import check_per_asset, check_real
from sekai.envs.finance._helpers import (
    check_correlation,
    check_equity_range,
    check_gbm_range,
    gbm_terms,
)
from sekai.envs.finance.kernels._rewards import KernelCost, KernelReward
from sekai.envs.finance.kernels._support import (
    at_least,
    at_most,
    dtype_name,
    env_float,
    float_dtype,
    int_dtype,
    merge_state,
    untraceable,
)
from sekai.envs.finance.vector._base import HISTORY, SHAPE
from sekai.finance.sampling import RandomStart, first_valid_window
from sekai.vector.kernel import ArrayKernel, Draw

__all__ = ["START_BITS", "WindowKernel", "WindowParams", "position_uniforms", "window_position"]

Array = Any
State = Mapping[str, Array]


@dataclass(frozen=True)
class WindowParams:
    """Parameters of a window env's kernel (float arrays are float64 until a driver converts).

    ``set_attr`` on a kernel-driven env replaces a field (``dataclasses.replace``): the fields
    are checked as the env checks them (``mu``, ``sigma``, ``s0`` and a per-asset
    ``cost_rate`` broadcast from one number) and the GBM's per-step terms are derived again.

    Attributes:
        dt: years per step.
        mu, sigma, s0: ``(n,)`` annual drifts, volatilities and first prices of the GBM
            (0-d where the env takes one number each: ``numbers``).
        corr: ``(n, n)`` correlation matrix of the GBM's shocks, or None (independent).
        cost_rate: the proportional cost rate, ``>= 0`` (a float, or ``(n,)`` per asset).
        prices: ``(T, n)`` history prices (None when simulating).
        log_returns: ``(T - 1, n)`` history log returns (None when simulating).
        first: the first window start whose decisions are past the warm-up rows.
        n_positions: how many window starts there are from ``first``.
        lookback_rows: ``arange(lookback)`` (replay: a window's rows from its start), or None.
        drift, vol, chol_t, log_s0: derived: the GBM's per-step drift ``(mu - sigma²/2) dt``
            and volatility ``sigma sqrt(dt)``, the volatility-scaled transposed Cholesky
            factor of ``corr`` (None without), ``log(s0)``.
    """

    dt: Array
    mu: Array
    sigma: Array
    s0: Array
    corr: Array | None
    cost_rate: Array
    prices: Array | None = None
    log_returns: Array | None = None
    first: int = 0
    n_positions: int = 0
    lookback_rows: Array | None = None
    drift: Array = field(init=False)
    vol: Array = field(init=False)
    chol_t: Array | None = field(init=False)
    log_s0: Array = field(init=False)
    # The number of assets where the env fixes it (Trading-v0's one), else None: as many as
    # s0 holds (Portfolio-v0's s0 is no parameter). s0 is then checked against it as mu is:
    # an s0 of another length is the field named, where counting it made mu the one blamed.
    fixed_assets: ClassVar[int | None] = None
    # The env takes one number for mu, sigma and s0 (Trading-v0): they are float64 0-d arrays,
    # checked as the env checks a number (a list, even of one number, is refused as it refuses
    # it), and their derived terms 0-d too; else ``(n,)`` arrays, a number broadcast.
    numbers: ClassVar[bool] = False

    def __post_init__(self) -> None:
        n = int(np.size(self.s0)) if self.fixed_assets is None else self.fixed_assets
        dt = check_real("dt", self.dt, "gt0")
        check = _number if self.numbers else _per_asset
        mu = check("mu", self.mu, n)
        sigma = check("sigma", self.sigma, n, "ge0")
        s0 = check("s0", self.s0, n, "gt0")
        corr = None if self.corr is None else np.array(check_correlation(self.corr, n))
        cost_rate = check_per_asset("cost_rate", self.cost_rate, n, "ge0")
        drift, vol, chol_t, log_s0 = gbm_terms(mu, sigma, s0, corr, dt, n)
        if self.numbers:
            drift, vol, log_s0 = (np.array(term.reshape(())) for term in (drift, vol, log_s0))
        checked = {
            "dt": np.asarray(dt),
            "mu": mu,
            "sigma": sigma,
            "s0": s0,
            "corr": corr,
            "cost_rate": cost_rate,
            "drift": drift,
            "vol": vol,
            "chol_t": chol_t,
            "log_s0": log_s0,
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def derive(self, xp: Any) -> dict[str, Array]:
        """The derived fields computed again from the others with ``xp`` (traceable), for
        params whose fields were replaced without ``__init__`` (the functional API's)."""
        vol = self.sigma * self.dt**0.5
        chol_t = None if self.corr is None else xp.linalg.cholesky(self.corr).T * vol
        drift = (self.mu - 0.5 * self.sigma**2) * self.dt
        return {"drift": drift, "vol": vol, "chol_t": chol_t, "log_s0": xp.log(self.s0)}


def _per_asset(name: str, value: Any, n: int, bound: str | None = None) -> np.ndarray:
    """``value`` checked as the env checks it, as a writable float64 ``(n,)`` array."""
    return np.array(np.broadcast_to(check_per_asset(name, value, n, bound), (n,)), np.float64)


def _number(name: str, value: Any, n: int, bound: str | None = None) -> np.ndarray:
    """``value`` checked as an env taking one number checks it, as a float64 0-d array."""
    return np.array(check_real(name, value, bound), np.float64)


# The bits of a window start that each of its uniform draws gives, most significant first: 31
# in all, so that an int32 holds them. Each is exact and uniform from any backend's uniform in
# any float dtype: the coarsest, torch's float16, is a multiple of 2**-11.
START_BITS = (11, 10, 10)


def window_position(xp: Any, u: Array, n_positions: int, integer: Any) -> Array:
    """Window positions in ``[0, n_positions)`` from uniforms ``u`` ``(num_envs, 3)``: the
    leading ``START_BITS`` of each make a uniform 31-bit integer (exactly, in ``integer``),
    taken modulo ``n_positions``, so each position's probability is within 2**-31 of the
    others' for any ``n_positions`` below 2**31."""
    x: Array = 0
    for column, bits in enumerate(START_BITS):
        top = float(2**bits - 1)  # a uniform rounded up to 1.0 (a float64 one in float32)
        digit = xp.astype(at_most(xp, xp.floor(u[:, column] * float(2**bits)), top), integer)
        x = x * 2**bits + digit
    return x % n_positions


def position_uniforms(positions: Any) -> np.ndarray:
    """Uniforms ``(len(positions), 3)`` that ``window_position`` maps to ``positions`` (each
    the middle of its digit's interval), to replay chosen window starts."""
    x = np.asarray(positions, np.int64)
    columns, shift = [], sum(START_BITS)
    for bits in START_BITS:
        shift -= bits
        columns.append((((x >> shift) & (2**bits - 1)) + 0.5) / 2**bits)
    return np.stack(columns, axis=-1)


P = TypeVar("P", bound=WindowParams)
# The built-in GBM's parameters, which set_attr may change only while the kernel simulates it.
_GBM_FIELDS = frozenset({"mu", "sigma", "s0", "corr"})
# The parameters the env holds as floats (one number given is reported as its float).
_FLOATS = frozenset({"dt", "mu", "sigma", "s0"})
# Settings of the env that get_attr reports as the env holds them (read-only here: a kernel
# traces its reward and cost once, its positions fix the action space, and its prices are
# held in the kernel's own layout).
_ENV_SETTINGS = frozenset({"reward_fn", "cost_model", "positions", "prices"})
# Why set_attr refuses the settings the native vector envs change but a kernel fixes when built.
_TRACED = "the array kernel traced it when the env was built, so it cannot change"
_FIXED = {
    "reward_fn": f"{_TRACED}; build a new env with the new one as its `reward` argument",
    "cost_model": (
        f"{_TRACED}; set `cost_rate` to change a proportional cost's rate, or build a new env "
        "with the new cost model as its `transaction_cost` argument"
    ),
    "capital": f"{_TRACED}; build a new env with the new `capital` argument",
}


class WindowKernel(ArrayKernel[P]):
    """Base of the Trading and Portfolio kernels: built from the env's keyword arguments.

    Subclasses name the env (``env_class``, ``env_id``), give the GBM parameters
    (``_gbm_parameters``) and build their params from ``_window_params``.
    """

    env_class: ClassVar[type[Any]]
    env_id: ClassVar[str]
    read_only: ClassVar[Mapping[str, str]] = {
        "lookback": SHAPE,
        "episode_length": SHAPE,
        "prices": HISTORY,
        "data": HISTORY,
        "transaction_cost": (
            "it became `cost_rate` when the env was built; set `cost_rate` instead"
        ),
        **_FIXED,
    }

    def __init__(self, **kwargs: Any) -> None:
        env = self.env_class(**kwargs)  # checks every argument exactly as the env does
        self.env = env
        if env.model is not None:
            raise untraceable(
                self.env_id,
                "model",
                env.model,
                "a MarketModel simulates its paths with Python code at every reset; the kernel "
                "simulates the built-in GBM or replays prices=/data=",
            )
        history = env._history
        if history is not None and type(env.sampler) is not RandomStart:
            raise untraceable(
                self.env_id,
                "sampler",
                env.sampler,
                "the kernel draws every window start uniformly (sampler='random')",
            )
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.lookback: int = env.lookback
        self.episode_length: int = env.episode_length
        self.n_assets: int = self._n_assets()
        self.replay = history is not None
        if self.replay:
            self.unused = _GBM_FIELDS & (self.settable or _GBM_FIELDS)
        # The history's own timestamps (numbers or datetime64), looked up by host_info.
        self.history_timestamps = None if history is None else history.timestamps
        self.reward = KernelReward(env.reward_fn, self.env_id)
        self.cost = KernelCost(env.cost_model, self.env_id)
        # The GBM parameters the env holds as one number, which the params broadcast per asset.
        held = {name: getattr(env, name, None) for name in ("mu", "sigma", "s0")}
        self._numbers = {name for name, v in held.items() if v is not None and np.ndim(v) == 0}

    def _n_assets(self) -> int:
        raise NotImplementedError

    def setting(self, name: str) -> Any:
        """The env's read-only settings (``lookback``, ``prices``, ...) and its reward and cost
        functions, read from the env the kernel was built from."""
        if name in self.read_only or name in _ENV_SETTINGS:
            return getattr(self.env, name)
        raise AttributeError(name)

    def check_set(self, name: str, value: Any) -> None:
        """The env's rule: a replayed history leaves the built-in GBM's parameters unused."""
        if name in self.unused:
            self.env._check_builtin_gbm(name)

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        """``(mu, sigma, s0, corr)`` of the env's built-in GBM."""
        raise NotImplementedError

    def check_params(self, xp: Any, params: P, float_dtype: Any) -> None:
        """A simulated market whose price can leave ``float_dtype``'s range within an episode
        (its lookback and its decisions) is refused, with the native envs' words
        (``check_gbm_range``): the kernel would step prices of 0 or infinity. So is one under
        which the account's equity may pass the dtype's largest number within the episode's
        decisions (``check_equity_range``), where the native envs refuse the step that takes
        it there: the kernel cannot check its equity without a host sync per step."""
        if self.replay:
            return
        names = ["mu", "sigma", *(["s0"] if "s0" in (self.settable or ()) else []), "dt"]
        values = {name: self.host_param(name, np.asarray(getattr(params, name))) for name in names}
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        info = xp.finfo(float_dtype)
        dtype, largest = dtype_name(float_dtype), float(info.max)
        check_gbm_range(
            self.env_class.__name__,
            (params.mu, params.sigma, params.s0, params.dt),
            self.lookback + self.episode_length,
            shown=shown,
            dtype=dtype,
            smallest=float(info.smallest_normal),
            largest=largest,
        )
        holdings, held = self._equity_growth(params)
        gbm = ", ".join(f"{name}={values[name]!r}" for name in ("mu", "sigma", "dt"))
        check_equity_range(
            self.env_class.__name__,
            holdings,
            params.dt,
            self.episode_length,
            shown=f"{held}, {gbm}" if held else gbm,
            remedy=self.env._equity_values()[1],  # the native envs' advice
            dtype=dtype,
            largest=largest,
        )

    def _equity_growth(self, params: P) -> tuple[tuple[np.ndarray, np.ndarray], str]:
        """The yearly ``(drift, variance)`` of the log equity held at each extreme holding
        the env allows: every holding's pair lies on or below their upper concave hull
        (``check_equity_range``'s); and the parameter that sets the holdings as an error
        shows it (empty when none does)."""
        raise NotImplementedError

    def _window_params(self) -> dict[str, Any]:
        """The ``WindowParams`` fields of the env (a subclass adds its own)."""
        env = self.env
        mu, sigma, s0, corr = self._gbm_parameters()
        fields: dict[str, Any] = {
            "dt": float(env.dt),
            "mu": mu,
            "sigma": sigma,
            "s0": s0,
            "corr": corr,
            "cost_rate": self.cost.rate,
        }
        history = env._history
        if history is not None:
            first = first_valid_window(
                history.n_starts, lookback=self.lookback, warmup=history.warmup
            )
            fields.update(
                prices=np.asarray(history.prices, np.float64),  # read-only: not copied
                log_returns=np.asarray(history.log_returns, np.float64),
                first=first,
                n_positions=history.n_starts - first,
                lookback_rows=np.arange(self.lookback),
            )
        return fields

    # -- draws ----------------------------------------------------------------------------------

    def reset_draws(self, params: P) -> tuple[Draw, ...]:
        """The uniforms of a window position (replay: ``window_position``), or the first
        window's normals (simulation)."""
        if self.replay:
            return (Draw("u", "uniform", (len(START_BITS),)),)
        return (Draw("z", "normal", (self.lookback, self.n_assets)),)

    def step_draws(self, params: P) -> tuple[Draw, ...]:
        """Nothing (replay), or one step's normals (simulation)."""
        if self.replay:
            return ()
        return (Draw("z", "normal", (self.n_assets,)),)

    # -- the market ---------------------------------------------------------------------------

    def _increments(self, xp: Any, params: P, z: Array) -> Array:
        """Standard normals ``z`` ``(..., n)`` made GBM log-price increments."""
        if params.chol_t is None:
            return z * params.vol + params.drift
        return xp.matmul(z, params.chol_t) + params.drift

    def market_reset(
        self, xp: Any, params: P, draws: Mapping[str, Array], mask: Array, state: State | None
    ) -> dict[str, Array]:
        """The market part of a reset: ``t``, ``start``, ``price``, ``window`` and the account's
        ``equity`` and reward state, merged into ``state`` where ``mask``."""
        lookback = self.lookback
        dtype = float_dtype(params.drift)
        integer = int_dtype(xp, dtype)
        n_envs = mask.shape[0]
        if self.replay:
            assert params.prices is not None and params.log_returns is not None
            start = params.first + window_position(xp, draws["u"], params.n_positions, integer)
            rows = xp.reshape(start, (n_envs, 1)) + xp.reshape(params.lookback_rows, (1, lookback))
            window = xp.reshape(
                xp.take(params.log_returns, xp.reshape(rows, (-1,)), axis=0),
                (n_envs, lookback, self.n_assets),
            )
            price = xp.take(params.prices, start + lookback, axis=0)
        else:
            window = self._increments(xp, params, draws["z"])
            price = xp.exp(params.log_s0 + xp.sum(window, axis=1))
            start = xp.zeros_like(mask, dtype=integer)
        # *_like of the driver's arrays: new arrays on its device (torch: CPU otherwise).
        equity = xp.ones_like(mask, dtype=dtype)
        fresh = {
            "t": xp.zeros_like(mask, dtype=integer),
            "start": start,
            "price": price,
            "window": window,
            "equity": equity,
            **self.reward.initial_state(xp, equity),
        }
        return merge_state(xp, mask, fresh, state)

    def market_step(self, xp: Any, params: P, state: State, draws: Mapping[str, Array]) -> Any:
        """One period of every sub-env's market: ``(r, price_after, window)``, ``r`` the simple
        returns ``(num_envs, n)`` and ``window`` the observed log returns after the period."""
        if self.replay:
            assert params.prices is not None and params.log_returns is not None
            # A finished sub-env stepped again (a frozen one) stays inside its window.
            t = at_most(xp, state["t"], self.episode_length - 1)
            row = state["start"] + self.lookback + t
            before = xp.take(params.prices, row, axis=0)
            after = xp.take(params.prices, row + 1, axis=0)
            log_returns = xp.take(params.log_returns, row, axis=0)
            r = after / before - 1.0
        else:
            log_returns = self._increments(xp, params, draws["z"])
            growth = xp.exp(log_returns)
            after = state["price"] * growth
            r = growth - 1.0
        window = xp.concat([state["window"][:, 1:, :], log_returns[:, None, :]], axis=1)
        return r, after, window

    def timestamp_info(self, xp: Any, state: State, t: Array) -> dict[str, Array]:
        """The info entry for the time of decision ``t`` of every sub-env: ``timestamp``, ``t``
        itself, when simulating; with a history, ``history_row``, the decision's row, whose
        timestamp :meth:`host_info` looks up."""
        if not self.replay:
            return {"timestamp": t}
        return {"history_row": state["start"] + self.lookback + at_most(xp, t, self.episode_length)}

    def host_param(self, name: str, value: Any) -> Any:
        """The GBM parameters the env holds as one number as that number (a float, as ``dt``),
        and ``positions`` and ``prices`` as the env holds them (a tuple, the history given),
        as it reports them."""
        if name in self._numbers and isinstance(value, np.ndarray) and value.size:
            return value.flat[0].item()
        if name in _FLOATS:  # a number set_attr was given, as the float the env holds
            return env_float(value)
        if name in _ENV_SETTINGS:
            return getattr(self.env, name)
        return super().host_param(name, value)

    def host_info(self, params: P, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """The infos with ``history_row`` replaced by ``timestamp``, the history's timestamp of
        that row: exactly the native env's, in the history's own dtype."""
        timestamps = self.history_timestamps
        if timestamps is None or "history_row" not in info:
            return info
        reported: dict[str, Any] = {}
        for key, value in info.items():
            if key == "history_row":
                key, value = "timestamp", timestamps[value]
            reported[key] = value
        return reported

    # -- the account ----------------------------------------------------------------------------

    @staticmethod
    def net_growth(xp: Any, cost: Array, held: Array, equity: Array) -> Array:
        """Equity growth of the period: held growth after costs, 0 where costs take it all, and
        at most 0 where it would take ``equity`` (before the period) to 0 (an underflow): a
        wipe-out, as the native envs' ``_settle`` books it."""
        growth = xp.where(cost >= 1.0, 0.0, (1.0 - cost) * held)
        return xp.where(equity * growth > 0.0, growth, at_most(xp, growth, 0.0))

    def book(
        self,
        xp: Any,
        state: State,
        growth: Array,
        *,
        turnover: Array,
        cost: Array,
        terminated: Array,
    ) -> tuple[Array, dict[str, Array], Array]:
        """Book the period: ``(rewards, account state, truncated)``; the account state holds
        ``equity``, ``t`` and the reward state."""
        equity_before = state["equity"]
        equity = at_least(xp, equity_before * growth, 0.0)
        t = state["t"] + 1
        rewards, reward_state = self.reward(
            xp,
            state,
            growth,
            equity=equity,
            previous_equity=equity_before,
            turnover=turnover,
            cost=cost,
        )
        truncated = (t >= self.episode_length) & ~terminated
        return rewards, {"equity": equity, "t": t, **reward_state}, truncated
