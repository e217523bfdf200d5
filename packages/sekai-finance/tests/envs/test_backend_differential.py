"""Differential property test: SyncVecEnv, AsyncVecEnv and ProcVecEnv of the finance envs must
behave identically (core.md §3, §11 "Exception classes across backends", §14 rules 1-9; vector
and async pages; finance.md §1, §3.4, §4.3, §11).

``sekai.make_vec(env_id, n, vectorization_mode=m)`` builds the same ``make()``d sub-envs on
every backend, and sub-env ``i`` gets the same seed on every backend (core.md clarification 4:
``make_seed_sequence(seed, num_envs)[i]``; a list's entries as they are). So once the first
reset is seeded, even the random configurations are comparable draw for draw: simulated
prices (GBM), ``sampler="random"``, ``MarketMaking-v0`` with a volatile mid and random fills,
``OptimalExecution-v0`` with ``sigma > 0``; autoresets and ``reset(seed=None)`` continue each
sub-env's own stream. (With an unseeded first reset they differ, by OS entropy -- not tested.)
The draw-free configurations of the native differential tests (price histories with fixed
starts; ``sigma = 0`` with fills certain or impossible) are drawn too.

Hypothesis draws ``Trading-v0`` / ``Portfolio-v0`` (a price history, a ``MarketData`` with
numeric, float or dated timestamps, warm-up rows and fields, or simulated prices; costs,
rewards, samplers) and ``MarketMaking-v0`` / ``OptimalExecution-v0`` parameters, ``num_envs``
1..3, ``autoreset``, ``max_episode_steps``, per-env ``wrappers=`` (``AutoReset`` outermost
included: rule 7), ProcVecEnv's ``num_workers`` / ``shared_memory``, an optional ``step()``
before the first reset, and a sequence of operations applied to all three backends: steps
(numeric arrays of several dtypes or nested lists, out-of-bounds values, invalid values for
frozen sub-envs, sometimes through ``async_step()``), invalid batches (wrong length or shape,
an invalid value for a live sub-env), resets with seeds (int, list, invalid) and options (one
dict, per-sub-env lists, valid and refused starts, unknown keys, a list of the wrong length;
sometimes through ``async_reset()``), ``set_attr`` (accepted, refused and read-only parameters;
per-sub-env lists in which some sub-envs refuse their value; samplers whose start the next
reset refuses, so that an autoreset inside ``step()`` fails in one sub-env; a new name with a
list per sub-env, a tuple, an array or a list of another length: rule 6) and ``call`` (with
positional or keyword arguments). Finally every VecEnv is closed twice and refuses ``step()``
and ``reset()`` with VecEnvClosed.

After every operation the async and proc backends must agree exactly with the sync one:
observations, rewards, flags, every info key, its order, type, dtype and value
(``final_observation`` / ``final_info`` / ``reset_info`` / ``elapsed_steps`` included), the
``frozen`` mask, every state name (and, after ``set_attr``, every parameter) read with
``get_attr``, and the outcome of a failure. A failure must be the same exception class with the
same message on the in-process backends, raised by the same sub-env (rule 9: the lowest index);
ProcVecEnv raises errors of the VecEnv itself (rules 1, 2, 5; seeds; VecEnvClosed) unchanged,
and a sub-env's error as ``VecEnvWorkerError[Cls]`` deriving from both ``VecEnvWorkerError``
and the sub-env's class (one such class per ``Cls``), with ``exc_type`` its name, ``message``
its message, ``rank`` / ``ranks`` the lowest failing sub-env, its attributes, ``str()`` "Sub-env
{rank} raised {exc_type}: {message}" plus the worker traceback, and a pickle round trip that
keeps all of it (core.md §11).

A failing example prints the ``Scenario``; ``replay(scenario)`` re-runs it outside pytest.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import math
import pickle
import traceback
from typing import Any

import numpy as np
from hypothesis import (
    HealthCheck,
    assume,
    currently_in_test_context,
    given,
    note,
    settings,
    strategies as st,
)

import sekai
from sekai.envs.finance.vector import (
    MarketMakingVecEnv,
    OptimalExecutionVecEnv,
    PortfolioVecEnv,
    TradingVecEnv,
)
from sekai.finance import (
    DifferentialSharpe,
    DrawdownPenalty,
    FixedCost,
    FixedStart,
    LogReturn,
    MarketData,
    MeanVariance,
    ProfitAndLoss,
    ProportionalCost,
    SequentialStart,
    SimpleReturn,
    SpreadCost,
    SquareRootImpact,
    Time,
    TurnoverPenalty,
)

TR, PF, MM, OE = "Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"
WINDOW = (TR, PF)
MODES = ("sync", "async", "proc")
TAG = "backend_diff_tag"  # no env has it: set_attr creates it on every sub-env
# OrderEnforcing's, NormalizeReward's, RecordEpisodeStatistics' state (when wrapped)
WRAPPER_STATE = ("has_reset", "return_rms", "episode_stats")
CLOCK_FIELDS = ("elapsed_time", "start_time", "end_time")  # time.monotonic(): never the same
STATE = {  # the per-sub-env state each env exposes, plus the test's own tag
    TR: (*TradingVecEnv.state_names, TAG),
    PF: (*PortfolioVecEnv.state_names, TAG),
    MM: (*MarketMakingVecEnv.state_names, TAG),
    OE: (*OptimalExecutionVecEnv.state_names, TAG),
}
_WINDOW_PARAMETERS = (
    "cost_model",
    "reward_fn",
    "capital",
    "dt",
    "sampler",
    "mu",
    "sigma",
    "lookback",
    "episode_length",
    "metadata",
    "max_episode_steps",
)
PARAMETERS = {  # read after every set_attr and at the end (read-only ones included)
    TR: (*_WINDOW_PARAMETERS, "positions", "s0"),
    PF: (*_WINDOW_PARAMETERS, "n_assets", "allow_short", "corr"),
    MM: (
        "s0",
        "sigma",
        "total_time",
        "n_steps",
        "A",
        "k",
        "risk_aversion",
        "max_inventory",
        "order_size",
        "terminal_penalty",
        "max_offset",
        "dt",
        "metadata",
        "max_episode_steps",
    ),
    OE: (
        "X0",
        "s0",
        "sigma",
        "total_time",
        "n_steps",
        "gamma",
        "eta",
        "epsilon",
        "risk_aversion",
        "tau",
        "dt",
        "metadata",
        "max_episode_steps",
    ),
}
# Session-env parameters set_attr may change: values the env accepts, values it refuses.
SESSION_SETTABLE = {
    MM: {
        "s0": ([50.0, 0.0, -0.0, -3.0, 1e5, 7], [math.nan, math.inf, "1.0"]),
        "sigma": ([0.0, 0, 0.5, 3.0], [-1.0, math.nan]),
        "total_time": ([0.05, 1.0, 7.5], [0.0, -2.0]),
        "n_steps": ([1, 2, 3, 12], [0, 2.0, True]),
        "A": ([5.0, 140.0, 1e12], [0.0, -1.0]),
        "k": ([0.5, 1.5, 1e3], [0.0, math.inf]),
        "risk_aversion": ([0.0, 0.3, 4.0], [-0.1]),
        "max_inventory": ([1, 2, 5, 30], [0, -3]),
        "order_size": ([1, 2, 4], [0]),
        "terminal_penalty": ([0.0, 0.25, 2.0], [-1.0]),
        "max_offset": ([], [1.0]),  # read-only (fixes the action bounds)
    },
    OE: {
        "X0": ([1.0, 500.0, 1e6, 3], [0.0, -5.0]),
        "s0": ([1.0, 50.0, 1234.5], [0.0, math.nan]),
        "sigma": ([0.0, 0.3, 0.95], [-1.0]),
        "total_time": ([0.5, 5.0, 40.0], [0.0]),
        "n_steps": ([1, 2, 5, 12], [0, False]),
        "gamma": ([0.0, 1e-7, 1e-3, 0.2], [-1e-3]),
        "eta": ([1e-6, 1e-3, 0.1, 2.0], [0.0]),
        "epsilon": ([0.0, 0.0625, 2.0], [-1.0]),
        "risk_aversion": ([0.0, 1e-6, 0.5], [math.nan, -1.0]),
        "tau": ([], [0.1]),  # read-only
    },
}
CALLS = {
    TR: ("price", "timestamp", "no_such_method"),
    PF: ("action_to_weights", "price", "no_such_method"),
    MM: (
        "avellaneda_stoikov_action",
        "optimal_quotes",
        "fill_probability",
        "quote_table",
        "no_such_method",
    ),
    OE: (
        "almgren_chriss_trajectory",
        "almgren_chriss_actions",
        "expected_shortfall",
        "no_such_method",
    ),
}
OPTIONS = {  # reset option specs -> the options of one sub-env
    "none": None,
    "empty": {},
    "start_none": {"start": None},
    "start3": {"start": 3},  # refused without a price history
    "unknown": {"inventory": 5},  # refused: an unknown key
}
TRADING_POSITIONS = ((-1.0, 0.0, 1.0), (-3.0, 0.0, 3.0), (0.0, 1.0), (-2.0, -0.5, 0.0, 0.5, 2.0))
# Per-env wrappers make_vec applies to every sub-env (sent to the workers by reference).
WRAPPERS = {
    "stats": sekai.RecordEpisodeStatistics,  # EpisodeStats: compared without their clock times
    "order": sekai.OrderEnforcing,
    "norm_reward": functools.partial(sekai.NormalizeReward, gamma=0.9),
    "clip_reward": functools.partial(sekai.ClipReward, min_reward=-1e-3, max_reward=1e-3),
    "repeat": functools.partial(sekai.ActionRepeat, repeat=2),
    "sticky": functools.partial(sekai.StickyAction, repeat_action_probability=0.3),
    "delay_obs": functools.partial(sekai.DelayObservation, delay=1),
    "flatten": sekai.FlattenObservation,
    "autoreset": sekai.AutoReset,  # always the outermost: such sub-envs never freeze (rule 7)
}


# -- the scenario ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class History:
    """A Trading/Portfolio price source: a history (``prices``/``data``) or ``simulated``."""

    source: str  # "prices" | "data" | "simulated"
    rows: int
    n_assets: int
    price_seed: int
    volatility: float
    timestamps: str  # "index" | "float" | "dates" (data only)
    warmup: int
    fields: tuple[str, ...]
    lookback: int
    episode_length: int

    @property
    def lo(self) -> int:
        """First valid first-decision row."""
        return max(self.lookback, self.warmup)

    @property
    def hi(self) -> int:
        """Last valid first-decision row."""
        return self.rows - self.episode_length - 1

    @property
    def windows(self) -> int:
        """Sampler positions (windows whose decisions avoid the warm-up rows)."""
        return self.hi - self.lo + 1


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Everything one example does; its repr is a reproducer (``replay(Scenario(...))``)."""

    env_id: str
    num_envs: int
    history: History | None  # Trading/Portfolio only
    params: tuple[tuple[str, Any], ...]  # further constructor keywords (plain values)
    cost: Any  # Trading/Portfolio: a cost spec (see build_cost) or None
    reward: Any  # Trading/Portfolio: a reward spec (see build_reward) or None
    sampler: Any  # Trading/Portfolio with a history: a sampler spec, or None
    autoreset: bool
    max_episode_steps: int | None
    wrappers: tuple[str, ...]  # keys of WRAPPERS, innermost first
    num_workers: int | None  # ProcVecEnv
    shared_memory: bool | None  # ProcVecEnv
    early_step: bool  # step() before the first reset (ResetRequired from the VecEnv)
    reset_seed: Any  # an int or a tuple of ints: the first reset is seeded
    first_options: Any  # an options spec (see build_options)
    ops: tuple[Any, ...]
    action_seed: int
    action_dtype: str  # "int" (Trading) | "float32" | "float64" | "list"


def history_arrays(h: History) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray | None]:
    """Prices ``(T, n)``, data fields and timestamps (None: the default row numbers)."""
    rng = np.random.default_rng(h.price_seed)
    steps = rng.normal(0.0, h.volatility, (h.rows, h.n_assets))
    prices = 100.0 * np.exp(np.cumsum(steps, axis=0))
    fields = {}
    if "spread" in h.fields:
        fields["spread"] = np.abs(rng.normal(0.002, 0.002, prices.shape))
    if "volume" in h.fields:
        fields["volume"] = rng.uniform(0.0, 5e4, prices.shape)
    times: np.ndarray | None = None
    if h.timestamps == "float":
        times = 1000.0 + np.cumsum(rng.uniform(0.25, 2.0, h.rows))
    elif h.timestamps == "dates":
        times = np.datetime64("2020-01-01") + np.arange(h.rows) * np.timedelta64(1, "D")
    return prices, fields, times


def history_kwargs(sc: Scenario) -> dict[str, Any]:
    h = sc.history
    assert h is not None
    if h.source == "simulated":
        return {"n_assets": h.n_assets} if sc.env_id == PF else {}
    prices, fields, times = history_arrays(h)
    if h.source == "data":
        one = prices[:, 0] if sc.env_id == TR else prices
        return {"data": MarketData(one, fields=fields or None, timestamps=times, warmup=h.warmup)}
    return {"prices": prices[:, 0] if sc.env_id == TR else prices}


def as_model(cost: Any) -> Any:
    return ProportionalCost(cost) if isinstance(cost, (int, float)) else cost


def build_cost(spec: Any, n_assets: int) -> Any:
    kind = spec[0]
    if kind == "rate":
        return spec[1]
    if kind == "proportional":
        return ProportionalCost(spec[1])
    if kind == "per_asset":
        return ProportionalCost([spec[1] * (1 + k) for k in range(n_assets)])
    if kind == "fixed":
        return FixedCost(spec[1])
    if kind == "half_spread":
        return SpreadCost(half_spread=spec[1])
    if kind == "data_spread":
        return SpreadCost(fallback_spread=0.001)
    if kind == "impact":
        return SquareRootImpact(spec[1], fallback_volatility=0.01)
    if kind == "sum":
        first, second = (as_model(build_cost(part, n_assets)) for part in spec[1:])
        return first + second
    raise AssertionError(spec)


def build_reward(spec: Any) -> Any:
    if spec is None:
        return None
    return {
        "log": lambda: LogReturn(),
        "simple": lambda: SimpleReturn(),
        "pnl": lambda: ProfitAndLoss(),
        "mean_variance": lambda: MeanVariance(2.0),
        "drawdown": lambda: DrawdownPenalty(),
        "sharpe": lambda: DifferentialSharpe(0.3),
        "mix": lambda: LogReturn() - 0.5 * DrawdownPenalty() + 0.1 * DifferentialSharpe(0.2),
        "mix2": lambda: (
            0.5 * DifferentialSharpe(0.05) - DrawdownPenalty() - 1e-3 * TurnoverPenalty() + 0.25
        ),
    }[spec]()


def build_sampler(spec: Any) -> Any:
    kind = spec[0]
    if kind in ("sequential", "random"):
        return kind
    if kind == "seq":
        return SequentialStart(start=spec[1], stride=spec[2])
    if kind == "fixed":
        return FixedStart(spec[1])
    if kind == "int":
        return spec[1]
    raise AssertionError(spec)


def build_start(h: History, form: str, row: int) -> Any:
    _, _, times = history_arrays(h)
    if form == "int":
        return row
    if form == "negative":
        return row - h.rows
    if form == "numpy":
        return np.int32(row)
    if form == "time":  # by value: the timestamp of the row
        if times is None:
            return Time(row)
        if times.dtype.kind == "M":
            return str(times[row])  # a date string
        return Time(float(times[row]))
    raise AssertionError(form)


def build_item(sc: Scenario, item: Any) -> Any:
    if item[0] == "opt":
        return OPTIONS[item[1]]
    assert sc.history is not None
    return {"start": build_start(sc.history, item[1], item[2])}


def build_options(sc: Scenario, spec: Any) -> Any:
    if spec is None:
        return None
    if spec[0] == "all":
        return build_item(sc, spec[1])
    if spec[0] == "badlen":  # rule 5: a list of another length -> ValueError from the VecEnv
        return [None] * (sc.num_envs + 1)
    return [build_item(sc, item) for item in spec[1]]


def build_seed(sc: Scenario, spec: Any) -> Any:
    if spec is None or isinstance(spec, int):
        return spec
    if spec == ("badlen",):  # ValueError from the VecEnv
        return [0] * (sc.num_envs + 1)
    if spec == ("bool",):  # TypeError from the VecEnv
        return True
    if spec[0] == "list":
        return list(spec[1])
    return list(spec)  # the first reset's tuple of ints


# -- strategies -----------------------------------------------------------------------------------

COSTS_ANY = st.one_of(
    st.tuples(st.just("rate"), st.sampled_from([0, 0.0, 1e-3, 0.05, 0.5, 0.99])),
    st.tuples(st.just("proportional"), st.sampled_from([0.0, 2e-3, 0.4])),
    st.tuples(st.just("per_asset"), st.sampled_from([1e-3, 0.3])),
    st.tuples(st.just("fixed"), st.sampled_from([0.0, 5.0, 2e4])),
    st.tuples(st.just("half_spread"), st.sampled_from([0.0, 1e-3, 0.2])),
)
REWARDS = st.sampled_from(
    [None, "log", "simple", "pnl", "mean_variance", "drawdown", "sharpe", "mix", "mix2"]
)
SET_REWARDS = st.sampled_from(
    ["log", "simple", "pnl", "mean_variance", "drawdown", "sharpe", "mix", "mix2"]
)
FORMS = ("int", "negative", "numpy", "time")


@st.composite
def cost_specs(draw: Any, fields: tuple[str, ...], lookback: int) -> Any:
    options = [COSTS_ANY]
    if "spread" in fields:
        options.append(st.just(("data_spread",)))
    if "volume" in fields and lookback >= 2:  # volatility needs lookback >= 2
        options.append(st.tuples(st.just("impact"), st.sampled_from([0.1, 0.5, 3.0])))
    one = st.one_of(*options)
    if draw(st.integers(0, 4)) == 0:
        return ("sum", draw(one), draw(one))
    return draw(one)


@st.composite
def sampler_specs(draw: Any, windows: int, *, stateful: bool = True, beyond: bool = False) -> Any:
    if beyond and draw(st.booleans()):
        # accepted by set_attr (only fixed starts are checked then), refused by the next
        # reset: an autoreset inside step() fails in this sub-env (rule 9 in step())
        return ("seq", windows + draw(st.integers(0, 3)), None)
    kinds = ["random", "fixed", "int"] + (["sequential", "seq"] if stateful else [])
    kind = draw(st.sampled_from(kinds))
    if kind in ("sequential", "random"):
        return (kind,)
    if kind == "seq":
        return (
            "seq",
            draw(st.integers(0, windows - 1)),
            draw(st.one_of(st.none(), st.integers(1, 5))),
        )
    return (kind, draw(st.integers(0, windows - 1)))


@st.composite
def histories(draw: Any, env_id: str) -> History:
    lookback = draw(st.integers(1, 5))
    episode_length = draw(st.integers(1, 6))
    window = lookback + episode_length + 1
    rows = window + draw(st.integers(0, 10))
    source = draw(st.sampled_from(["prices", "data", "simulated"]))
    n_starts = rows - window + 1
    if source == "data":
        timestamps = draw(st.sampled_from(["index", "float", "dates"]))
        warmup = draw(st.integers(0, lookback + n_starts - 1))
        fields = tuple(f for f in ("spread", "volume") if draw(st.booleans()))
    else:
        timestamps, warmup, fields = "index", 0, ()
    return History(
        source=source,
        rows=rows,
        n_assets=1 if env_id == TR else draw(st.integers(1, 3)),
        price_seed=draw(st.integers(0, 2**16)),
        volatility=draw(st.sampled_from([0.01, 0.1, 0.5])),
        timestamps=timestamps,
        warmup=warmup,
        fields=fields,
        lookback=lookback,
        episode_length=episode_length,
    )


@st.composite
def mm_params(draw: Any) -> tuple[tuple[str, Any], ...]:
    max_inventory = draw(st.integers(1, 20))
    kind = draw(st.sampled_from(["certain", "steep", "random"]))
    if kind == "certain":  # sigma 0 and every near quote fills (test_session_native_...)
        k, a = draw(st.sampled_from([0.05, 0.5, 1.5, 3.0])), draw(st.sampled_from([1e10, 1e15]))
        max_offset = draw(st.sampled_from([0.0, 0.3, 1.0, 5.0]))
    elif kind == "steep":  # sigma 0 and far quotes never fill
        k, a = draw(st.sampled_from([300.0, 1e3, 1e4])), draw(st.sampled_from([1e12, 1e300]))
        max_offset = draw(st.sampled_from([3.0, 5.0, 10.0]))
    else:  # random fills: comparable because every backend seeds sub-env i alike
        k, a = draw(st.sampled_from([0.5, 1.5, 4.0])), draw(st.sampled_from([5.0, 140.0, 1e3]))
        max_offset = draw(st.sampled_from([1.0, 5.0]))
    sigma = (
        draw(st.sampled_from([0.0, 0]))
        if kind != "random"
        else draw(st.sampled_from([0.0, 0.5, 2.0, 10.0]))
    )
    params = {
        "s0": draw(st.sampled_from([100.0, 0.0, -0.0, -5.5, 1e6, 17.25])),
        "sigma": sigma,
        "total_time": draw(st.sampled_from([0.01, 0.37, 1.0, 10.0])),
        "n_steps": draw(st.integers(1, 8)),
        "fill_intensity": a,
        "fill_decay": k,
        "risk_aversion": draw(st.sampled_from([0.0, 0.1, 5.0])),
        "max_inventory": max_inventory,
        "order_size": draw(st.integers(1, max_inventory)),
        "max_offset": max_offset,
        "terminal_penalty": draw(st.sampled_from([0.0, 0.5, 3.0])),
    }
    return tuple(params.items())


@st.composite
def oe_params(draw: Any) -> tuple[tuple[str, Any], ...]:
    total_time = draw(st.sampled_from([0.1, 1.0, 5.0, 7.25]))
    n_steps = draw(st.integers(1, 8))
    tau = total_time / n_steps
    gamma = draw(st.sampled_from([0.0, 2.5e-7, 1e-4, 0.05, 0.3]))
    boundary = 0.5 * gamma * tau
    eta = draw(
        st.one_of(
            st.sampled_from([2.5e-6, 1e-3, 0.2]),
            st.floats(1.0001, 10.0).map(lambda m: boundary * m),
        )
    )
    assume(eta > 0 and eta - boundary > 0)
    x0 = draw(st.sampled_from([1e6, 1.0, 7, 123.5]))
    sigma = draw(st.sampled_from([0.0, 0, 0.3, 0.95, 5.0]))
    fixed_cost = draw(st.sampled_from([0.0, 0.0625, 1.0, 100.0]))
    # s0 above the price floor: the env refuses parameters that let the price reach 0
    floor = fixed_cost + x0 * max(gamma, eta / tau) + 5 * sigma * math.sqrt(total_time)
    params = {
        "initial_inventory": x0,
        "s0": floor + draw(st.sampled_from([50.0, 1.0, 3, 812.5])),
        "sigma": sigma,
        "total_time": total_time,
        "n_steps": n_steps,
        "permanent_impact": gamma,
        "temporary_impact": eta,
        "fixed_cost": fixed_cost,
        "risk_aversion": draw(st.sampled_from([0.0, 1e-6, 1e-2, 1.0])),
    }
    return tuple(params.items())


@st.composite
def option_items(draw: Any, env_id: str, h: History | None, allow_invalid: bool) -> Any:
    if h is not None and h.source != "simulated" and draw(st.integers(0, 2)) > 0:
        if allow_invalid and draw(st.integers(0, 5)) == 0:  # rule 9: the others still reset
            bad = [h.hi + 1] + ([h.lo - 1] if h.lo > 0 else [])
            return ("start", "int", draw(st.sampled_from(bad)))
        return ("start", draw(st.sampled_from(FORMS)), draw(st.integers(h.lo, h.hi)))
    kinds = ["none", "none", "empty", "start_none"]
    if allow_invalid and draw(st.integers(0, 5)) == 0:
        kinds = ["unknown"] + (["start3"] if h is None or h.source == "simulated" else [])
    return ("opt", draw(st.sampled_from(kinds)))


@st.composite
def option_specs(
    draw: Any, env_id: str, num_envs: int, h: History | None, *, allow_invalid: bool
) -> Any:
    how = draw(st.sampled_from(["all", "each", "each", "absent"]))
    if how == "absent":
        return None
    if allow_invalid and draw(st.integers(0, 24)) == 0:
        return ("badlen",)
    if how == "all":
        return ("all", draw(option_items(env_id, h, allow_invalid)))
    return ("each", tuple(draw(option_items(env_id, h, allow_invalid)) for _ in range(num_envs)))


@st.composite
def seed_specs(draw: Any, num_envs: int) -> Any:
    kind = draw(st.sampled_from(["none", "none", "int", "list", "bad"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(0, 100))
    if kind == "bad":
        return draw(st.sampled_from([("badlen",), ("bool",)]))
    entries = tuple(draw(st.one_of(st.none(), st.integers(0, 100))) for _ in range(num_envs))
    return ("list", entries)


MIXED_WINDOW = {  # plain values accepted and refused by Trading/Portfolio setters
    "capital": ([1e3, 1e9], [-1.0, 0.0]),
    "dt": ([1 / 252, 0.5], [0.0, -1.0]),
    "mu": ([0.0, 0.1], [math.nan]),
    "sigma": ([0.0, 0.2], [-1.0]),
    "s0": ([1.0, 50.0], [0.0]),
}


@st.composite
def mixed_values(draw: Any, good: list[Any], bad: list[Any], num_envs: int) -> Any:
    """A list of one value per sub-env in which the sub-envs ``bad_at`` get a refused value:
    the others are still set, the lowest refusing sub-env's error is raised (rule 9)."""
    values = tuple(draw(st.sampled_from(good)) for _ in range(num_envs))
    bad_at = tuple(sorted(draw(st.sets(st.integers(0, num_envs - 1), min_size=1))))
    return ("mixed", values, bad_at, draw(st.sampled_from(bad)))


@st.composite
def set_ops(draw: Any, env_id: str, h: History | None, num_envs: int) -> Any:
    as_list = draw(st.booleans())
    if draw(st.integers(0, 5)) == 0:  # a name no env has: rule 6 decides what each gets
        return (
            "set",
            TAG,
            ("tag", draw(st.sampled_from(["per_env", "tuple", "array", "long", "str"]))),
            False,
        )
    if env_id in SESSION_SETTABLE:
        name = draw(st.sampled_from(sorted(SESSION_SETTABLE[env_id])))
        good, bad = SESSION_SETTABLE[env_id][name]
        if good and bad and draw(st.integers(0, 5)) == 0:  # one sub-env refuses (rule 9)
            return ("set", name, draw(mixed_values(good, bad, num_envs)), True)
        value = draw(st.sampled_from(bad if not good or draw(st.integers(0, 6)) == 0 else good))
        return ("set", name, ("value", value), as_list)
    assert h is not None
    names = ["cost_model", "reward_fn", "capital", "dt", "lookback", "transaction_cost"]
    if h.source == "simulated":
        names += ["mu", "sigma"] + (["s0"] if env_id == TR else [])
    else:
        names += ["sampler", "sampler"]
    name = draw(st.sampled_from(names))
    if name in MIXED_WINDOW and draw(st.integers(0, 5)) == 0:  # one sub-env refuses (rule 9)
        return ("set", name, draw(mixed_values(*MIXED_WINDOW[name], num_envs)), True)
    if name in ("lookback", "transaction_cost") or draw(st.integers(0, 8)) == 0:
        return ("set", name, ("bad",), as_list)  # read-only, or a value the env refuses
    if name == "cost_model":
        spec: Any = ("cost", draw(cost_specs(h.fields, h.lookback)))
    elif name == "reward_fn":
        spec = ("reward", draw(SET_REWARDS))
    elif name == "capital":
        spec = ("value", draw(st.sampled_from([1e3, 1e6, 1e9])))
    elif name == "dt":
        spec = ("value", draw(st.sampled_from([1 / 252, 1 / 12, 0.5])))
    elif name == "mu":
        spec = ("value", draw(st.sampled_from([0.0, 0.1, -0.3])))
    elif name == "sigma":
        spec = ("value", draw(st.sampled_from([0.0, 0.2, 1.0])))
    elif name == "s0":
        spec = ("value", draw(st.sampled_from([1.0, 50.0, 1e4])))
    elif draw(st.booleans()):  # one object per sub-env: a stateful sampler never shared
        spec = (
            "samplers",
            tuple(draw(sampler_specs(h.windows, beyond=True)) for _ in range(num_envs)),
        )
        as_list = True
    else:  # one value for all: stateless samplers and names (each env builds its own)
        spec = ("sampler", draw(sampler_specs(h.windows, stateful=False)))
    return ("set", name, spec, as_list)


@st.composite
def scenarios(draw: Any, env_id: str) -> Scenario:
    num_envs = draw(st.integers(1, 3))
    history: History | None = None
    params: dict[str, Any] = {}
    cost = reward = sampler = None
    if env_id in WINDOW:
        history = draw(histories(env_id))
        if env_id == TR:
            params["positions"] = draw(st.sampled_from(TRADING_POSITIONS))
        else:
            params["allow_short"] = draw(st.booleans())
        if history.source == "simulated":
            params["sigma"] = draw(st.sampled_from([0.0, 0.2, 1.0]))
        else:
            sampler = draw(sampler_specs(history.windows))
        cost = draw(st.one_of(st.none(), cost_specs(history.fields, history.lookback)))
        reward = draw(REWARDS)
        dtypes = (
            ["int", "float32", "float64", "list"]
            if env_id == TR
            else ["float32", "float64", "list"]
        )
    else:
        params = dict(draw(mm_params() if env_id == MM else oe_params()))
        dtypes = ["float32", "float64", "list"]
    ops: list[Any] = []
    for _ in range(draw(st.integers(1, 22))):
        kind = draw(st.sampled_from(["step"] * 9 + ["bad", "reset", "reset", "set", "set", "call"]))
        if kind == "step":
            ops.append(("step", draw(st.integers(0, 4)) == 0))
        elif kind == "bad":
            ops.append(("bad", draw(st.sampled_from(["length", "shape", "value", "value"]))))
        elif kind == "reset":
            seed = draw(seed_specs(num_envs))
            options = draw(option_specs(env_id, num_envs, history, allow_invalid=True))
            ops.append(("reset", seed, options, draw(st.integers(0, 4)) == 0))
        elif kind == "set":
            ops.append(draw(set_ops(env_id, history, num_envs)))
        else:
            ops.append(("call", draw(st.sampled_from(CALLS[env_id]))))
    wrappers: tuple[str, ...] = ()
    if draw(st.integers(0, 2)) == 0:
        inner = sorted(k for k in WRAPPERS if k != "autoreset")
        wrappers = tuple(draw(st.lists(st.sampled_from(inner), max_size=2, unique=True)))
        if draw(st.booleans()):
            wrappers += ("autoreset",)
    first_seed = draw(
        st.one_of(
            st.integers(0, 100),
            st.tuples(*[st.integers(0, 100)] * num_envs),
        )
    )
    return Scenario(
        env_id=env_id,
        num_envs=num_envs,
        history=history,
        params=tuple(params.items()),
        cost=cost,
        reward=reward,
        sampler=sampler,
        autoreset=draw(st.booleans()),
        max_episode_steps=draw(st.one_of(st.none(), st.integers(1, 8))),
        wrappers=wrappers,
        num_workers=draw(st.one_of(st.none(), st.integers(1, num_envs))),
        shared_memory=draw(st.sampled_from([None, True, False])),
        early_step=draw(st.integers(0, 4)) == 0,
        reset_seed=first_seed,
        first_options=draw(option_specs(env_id, num_envs, history, allow_invalid=False)),
        ops=tuple(ops),
        action_seed=draw(st.integers(0, 2**16)),
        action_dtype=draw(st.sampled_from(dtypes)),
    )


# -- comparing ----------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Exactly equal: same types, dtypes, shapes, values, key order and signs of zeros; other
    objects (cost models, rewards, samplers, quote tables) by type and attributes."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            type(a) is dict
            and type(b) is dict
            and list(a) == list(b)
            and all(same(a[k], b[k]) for k in a)
        )
    if isinstance(a, (list, tuple)) and not isinstance(a, np.ndarray):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(same(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
        equal = np.array_equal(a, b, equal_nan=a.dtype.kind in "fcmM")
        return bool(equal) and (
            a.dtype.kind != "f" or np.array_equal(np.signbit(a), np.signbit(b))  # -0.0
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, sekai.EpisodeStats):
        fields = [f.name for f in dataclasses.fields(a) if f.name not in CLOCK_FIELDS]
        return all(same(getattr(a, f), getattr(b, f)) for f in fields)
    if isinstance(a, float):
        return (a == b and np.signbit(a) == np.signbit(b)) or (a != a and b != b)
    if isinstance(a, np.generic):
        return same(np.asarray(a), np.asarray(b))
    if isinstance(a, (bool, int, str, bytes, type(None))):
        return bool(a == b)
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return same(dict(vars(a)), dict(vars(b)))
    try:
        return bool(a == b)
    except Exception:
        return repr(a) == repr(b)


def describe(a: Any) -> str:
    if isinstance(a, np.ndarray):
        values = a.tolist() if a.dtype.kind == "f" and a.size <= 16 else a  # every digit
        return f"ndarray[{a.dtype}{a.shape}] {values!r}"
    return f"{type(a).__name__} {a!r}"


def check_same(what: str, mode: str, ref: Any, got: Any) -> None:
    assert same(ref, got), f"{what}:\n  sync:  {describe(ref)}\n  {mode}: {describe(got)}"


def check_infos(what: str, mode: str, ref: list[dict[str, Any]], got: list[dict[str, Any]]) -> None:
    assert type(got) is list and len(got) == len(ref), f"{what}: {mode} infos {got!r}"
    for i, (mine, theirs) in enumerate(zip(ref, got)):
        assert type(theirs) is dict, f"{what}: {mode} infos[{i}] is a {type(theirs).__name__}"
        assert list(mine) == list(theirs), (
            f"{what}: infos[{i}] keys differ:\n  sync:  {list(mine)}\n  {mode}: {list(theirs)}"
        )
        for key in mine:
            if isinstance(mine[key], dict):
                check_infos(f"{what} infos[{i}][{key!r}]", mode, [mine[key]], [theirs[key]])
            else:
                check_same(f"{what}: infos[{i}][{key!r}]", mode, mine[key], theirs[key])
    for name, infos in (("sync", ref), (mode, got)):
        ids = [id(info) for info in infos]
        assert len(set(ids)) == len(ids), f"{what}: {name} infos share dicts"


def check_result(what: str, mode: str, ref: Any, got: Any) -> None:
    assert type(got) is type(ref), f"{what}: {mode} returned {type(got).__name__}"
    check_same(f"{what}: observations", mode, ref.observations, got.observations)
    if hasattr(ref, "rewards"):
        check_same(f"{what}: rewards", mode, ref.rewards, got.rewards)
        check_same(f"{what}: terminated", mode, ref.terminated, got.terminated)
        check_same(f"{what}: truncated", mode, ref.truncated, got.truncated)
    check_infos(what, mode, ref.infos, got.infos)


def attempt(fn: Any) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:
        return False, exc


def failing_sub_env(exc: BaseException, vec: Any) -> int | None:
    """The index of the sub-env (of an in-process VecEnv) whose call raised ``exc``: the first
    traceback frame running a method of one of its layers (``vec.envs``, each iterated through
    its wrapper stack); None when the VecEnv itself raised it, before dispatching (rules 1, 2,
    5, seeds, VecEnvClosed)."""
    owner = {id(layer): index for index, env in enumerate(vec.envs) for layer in env}
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        index = owner.get(id(frame.f_locals.get("self")))
        if index is not None:
            return index
    return None


_WORKER_CLASSES: dict[type, type] = {}  # sub-env class -> the VecEnvWorkerError[...] seen


def check_error(
    what: str, mode: str, ref: Exception, ref_vec: Any, got: Exception, vec: Any
) -> None:
    """``got`` (from ``mode``) is the failure core.md §11 defines for the sync failure ``ref``."""
    index = failing_sub_env(ref, ref_vec)
    cls = type(ref)
    if mode == "async" or index is None:  # in-process, or raised by the VecEnv itself
        assert type(got) is cls and str(got) == str(ref), (
            f"{what}: different errors:\n  sync:  {ref!r}\n  {mode}: {got!r}"
        )
        if mode == "async":
            assert failing_sub_env(got, vec) == index, f"{what}: another sub-env failed"
        return
    assert isinstance(got, sekai.VecEnvWorkerError) and isinstance(got, cls), (
        f"{what}: sync raised {ref!r} in sub-env {index}, {mode} raised {got!r}"
    )
    assert type(got).__name__ == f"VecEnvWorkerError[{cls.__name__}]", type(got)
    assert type(got).__bases__ == (sekai.VecEnvWorkerError, cls), type(got).__mro__
    assert _WORKER_CLASSES.setdefault(cls, type(got)) is type(got), "one subclass per class"
    assert got.exc_type == cls.__name__, (what, got.exc_type)
    assert got.message == str(ref), f"{what}:\n  sync:  {str(ref)!r}\n  proc:  {got.message!r}"
    assert got.rank == index and tuple(got.ranks) == (index,), (what, index, got.rank, got.ranks)
    assert got.remote_traceback and str(ref) in got.remote_traceback, got.remote_traceback
    expected = f"Sub-env {index} raised {cls.__name__}: {ref}\n\nWorker traceback:\n"
    assert str(got) == expected + got.remote_traceback, f"{what}: str {str(got)!r}"
    for key, value in vars(ref).items():  # the original's attributes come along
        if key == "__notes__":  # but not the note naming the sub-env: proc's message does
            value = [note for note in value if not note.startswith("raised by sub-env")]
            # the autoreset's note is in the worker traceback of proc's message
            autoreset = [note for note in value if note.startswith("raised by the same-step")]
            assert all(note in str(got) for note in autoreset), f"{what}: {autoreset}, {got}"
            value = [note for note in value if note not in autoreset] or None
        assert same(value, getattr(got, key, None)), f"{what}: attribute {key!r}"
    clone = pickle.loads(pickle.dumps(got))  # SekaiErrors cross process boundaries
    assert type(clone) is type(got) and str(clone) == str(got), f"{what}: {clone!r}"
    assert (clone.rank, clone.exc_type, clone.ranks) == (got.rank, got.exc_type, got.ranks)


def check_outcomes(
    what: str, outcomes: dict[str, tuple[bool, Any]], vecs: dict[str, Any], *, result: bool
) -> bool:
    """Every backend succeeded (results compared when ``result``, list values always) or
    every backend failed as the sync one did. Returns whether they succeeded."""
    ok_ref, ref = outcomes["sync"]
    for mode in MODES[1:]:
        ok, got = outcomes[mode]
        assert ok == ok_ref, (
            f"{what}: only {mode if ok_ref else 'sync'} raised {got if ok_ref else ref!r}"
        )
        if not ok:
            check_error(what, mode, ref, vecs["sync"], got, vecs[mode])
        elif result:
            check_result(what, mode, ref, got)
        elif isinstance(ref, list):
            check_same(what, mode, ref, got)
    return ok_ref


def read_all(what: str, vecs: dict[str, Any], names: tuple[str, ...]) -> None:
    for name in names:
        outcomes = {m: attempt(lambda v=v, n=name: v.get_attr(n)) for m, v in vecs.items()}
        check_outcomes(f"{what}: get_attr({name!r})", outcomes, vecs, result=False)


def check_state(what: str, sc: Scenario, vecs: dict[str, Any], *, parameters: bool) -> None:
    for mode in MODES[1:]:
        check_same(f"{what}: frozen", mode, vecs["sync"].frozen, vecs[mode].frozen)
    names = STATE[sc.env_id] + (WRAPPER_STATE if sc.wrappers else ())
    read_all(what, vecs, names + (PARAMETERS[sc.env_id] if parameters else ()))


def check_held(what: str, held: dict[str, tuple[Any, Any]]) -> None:
    """The last result each backend returned is unchanged by the next operation: no
    observation buffer (shared memory included), reward array or info is reused."""
    for mode, (result, snapshot) in held.items():
        check_result(f"{what}: the previous result of {mode}", mode, snapshot, result)


# -- running a scenario -------------------------------------------------------------------------


def make_vec(sc: Scenario, mode: str) -> Any:
    kwargs: dict[str, Any] = dict(sc.params)
    if sc.history is not None:
        kwargs.update(history_kwargs(sc))
        kwargs["lookback"] = sc.history.lookback
        kwargs["episode_length"] = sc.history.episode_length
        if sc.cost is not None:
            kwargs["transaction_cost"] = build_cost(sc.cost, sc.history.n_assets)
        reward = build_reward(sc.reward)
        if reward is not None:
            kwargs["reward"] = reward
        if sc.sampler is not None:
            kwargs["sampler"] = build_sampler(sc.sampler)
    if sc.max_episode_steps is not None:
        kwargs["max_episode_steps"] = sc.max_episode_steps
    vector_kwargs: dict[str, Any] = {"autoreset": sc.autoreset}
    if mode == "proc":
        vector_kwargs.update(num_workers=sc.num_workers, shared_memory=sc.shared_memory)
    vec = sekai.make_vec(
        sc.env_id,
        sc.num_envs,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        wrappers=[WRAPPERS[name] for name in sc.wrappers],
        **kwargs,
    )
    expected = {"sync": "SyncVecEnv", "async": "AsyncVecEnv", "proc": "ProcVecEnv"}[mode]
    assert type(vec).__name__ == expected, vec
    return vec


def draw_actions(sc: Scenario, ref: Any, rng: np.random.Generator) -> np.ndarray:
    """A valid batch (finite, in range for the sub-envs that are not frozen)."""
    n = sc.num_envs
    frozen = ref.frozen
    if sc.env_id == TR:
        k = ref.action_space.n
        actions = rng.integers(0, k, n)
        if rng.random() < 0.3:  # the extremes: wipe-outs with leverage and costs
            actions = np.where(rng.random(n) < 0.5, 0, k - 1)
        if sc.action_dtype != "int":
            actions = actions.astype(np.float64)  # float arrays of integral values: accepted
        if frozen.any() and rng.random() < 0.5:  # not checked: a frozen sub-env ignores it
            actions = actions.astype(np.float64)
            actions[frozen] = rng.choice([k + 3, -1, 0.5])
        return actions
    width = ref.action_space.shape[0]
    if sc.env_id == PF:
        short = bool(ref.get_attr("allow_short")[0])
        low, high = (-3.0, 3.0) if short else (-0.5, 1.5)
        actions = rng.uniform(low, high, (n, width))
        mode = rng.integers(0, 6)
        if mode == 1:
            actions[rng.random((n, width)) < 0.4] = -0.0
        elif mode == 2:
            actions[rng.integers(0, n)] = 0.0
        elif mode == 3:
            actions *= rng.choice([1e-13, 1e6, 1e30])
        elif mode == 4:
            actions = np.round(actions)
    elif sc.env_id == MM:
        top = float(ref.action_space.high[0])
        actions = rng.uniform(-1.0, top + 1.0, (n, 2))
        special = rng.random((n, 2)) < 0.4
        picks = rng.choice([0.0, -0.0, -1.5, top, top + 2.0, 1e-9, 0.5 * top], (n, 2))
        actions = np.where(special, picks, actions)
    else:
        actions = rng.uniform(-0.5, 1.5, (n, 1))
        special = rng.random((n, 1)) < 0.5
        picks = rng.choice([0.0, -0.0, 1.0, 0.5, 1e-12, 1 - 1e-7, -2.0, 3.0, 0.999], (n, 1))
        actions = np.where(special, picks, actions)
    if frozen.any() and rng.random() < 0.5:
        actions[frozen] = np.nan  # not checked: a frozen sub-env ignores it
    return actions


def bad_actions(sc: Scenario, ref: Any, rng: np.random.Generator, kind: str) -> np.ndarray:
    """A batch the VecEnv refuses before stepping anything (rule 2), unless ``kind`` is
    ``"value"`` and every sub-env is frozen (their values are not checked)."""
    actions = draw_actions(sc, ref, rng).astype(np.float64)
    if kind == "length":
        return np.concatenate([actions, actions[:1]])
    if kind == "shape":
        if actions.ndim == 1:
            return np.stack([actions, actions], axis=1)
        return np.concatenate([actions, actions[:, :1]], axis=1)
    live = np.flatnonzero(~ref.frozen)
    if live.size:
        i = int(rng.choice(live))
        if sc.env_id == TR:
            actions[i] = rng.choice([ref.action_space.n, -1, 0.5, np.nan])
        else:
            actions[i, int(rng.integers(0, actions.shape[1]))] = rng.choice(
                [np.nan, np.inf, -np.inf]
            )
    return actions


def typed(sc: Scenario, actions: np.ndarray) -> Any:
    if sc.action_dtype == "list":
        return actions.tolist()
    if (
        sc.action_dtype == "int"
        and np.all(np.isfinite(actions))
        and np.all(actions == np.round(actions))
    ):
        return actions.astype(np.int64)
    return actions.astype(np.float64 if sc.action_dtype in ("int", "float64") else np.float32)


def copied(actions: Any) -> Any:
    """A fresh copy for each backend (none may see what another did to its batch)."""
    if isinstance(actions, np.ndarray):
        return actions.copy()
    return [list(row) if isinstance(row, list) else row for row in actions]


BAD_WINDOW_VALUES = {  # refused by the single env (or read-only)
    "capital": lambda sc: -1.0,
    "dt": lambda sc: 0.0,
    "reward_fn": lambda sc: 0.5,
    "cost_model": lambda sc: ProportionalCost([1e-3] * (sc.history.n_assets + 1)),
    "sampler": lambda sc: FixedStart(sc.history.windows),
    "mu": lambda sc: math.nan,
    "sigma": lambda sc: -1.0,
    "s0": lambda sc: 0.0,
    "lookback": lambda sc: 3,
    "transaction_cost": lambda sc: 0.01,
}


def setting(sc: Scenario, name: str, spec: Any, as_list: bool) -> Any:
    """The value ``set_attr(name, ...)`` gets (built anew for each backend)."""
    kind = spec[0]
    n = sc.num_envs
    if kind == "tag":  # rule 6: only a list of exactly num_envs items is per sub-env
        return {
            "per_env": lambda: [10 * i for i in range(n)],
            "tuple": lambda: (1, 2, 3)[:n],
            "array": lambda: np.arange(n),
            "long": lambda: list(range(n + 1)),
            "str": lambda: "x",
        }[spec[1]]()
    if kind == "samplers":
        return [build_sampler(one) for one in spec[1]]
    if kind == "mixed":
        _, values, bad_at, bad = spec
        return [bad if i in bad_at else value for i, value in enumerate(values)]
    if kind == "bad":
        value = BAD_WINDOW_VALUES[name](sc)
    elif kind == "cost":
        assert sc.history is not None
        value = build_cost(spec[1], sc.history.n_assets)
    elif kind == "reward":
        value = build_reward(spec[1])
    elif kind == "sampler":
        value = build_sampler(spec[1])
    else:
        value = spec[1]
    return [value] * n if as_list else value


KEYWORDS = {
    "action_to_weights": "action",
    "fill_probability": "offset",
    "expected_shortfall": "trades",
}


def call_args(
    sc: Scenario, ref: Any, name: str, rng: np.random.Generator
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments for ``call(name, ...)``."""
    if name == "action_to_weights":
        arg: Any = rng.uniform(-1.0, 2.0, ref.action_space.shape)
    elif name == "fill_probability":
        top = float(ref.action_space.high[0])
        arg = np.array([0.0, top, 0.5 * top])
    elif name == "expected_shortfall":  # TWAP; sometimes one step short (refused)
        steps = int(ref.get_attr("n_steps")[0]) + int(rng.integers(0, 2))
        arg = np.full(steps, float(ref.get_attr("X0")[0]) / steps)
    else:
        return (), {}
    if rng.random() < 0.5:
        return (), {KEYWORDS[name]: arg}
    return (arg,), {}


def replay(sc: Scenario) -> list[str]:
    """Run ``sc`` on every backend and check they agree after every operation; returns the
    log (each operation, its arguments and the sync outcome)."""
    log: list[str] = []
    try:
        run(sc, log)
    except AssertionError as exc:
        if currently_in_test_context():  # hypothesis prints the scenario and its notes
            raise
        raise AssertionError(f"{exc}\n{sc!r}\n" + "\n".join(log)) from None
    return log


def each(vecs: dict[str, Any], fn: Any) -> dict[str, tuple[bool, Any]]:
    return {mode: attempt(lambda v=vec, m=mode: fn(v, m)) for mode, vec in vecs.items()}


def run(sc: Scenario, log: list[str]) -> None:
    def say(line: str) -> None:
        log.append(line)
        if currently_in_test_context():
            note(line)

    vecs: dict[str, Any] = {}
    loop = asyncio.new_event_loop()  # drives async_step() / async_reset() of every backend
    try:
        for mode in MODES:
            vecs[mode] = make_vec(sc, mode)
        ref = vecs["sync"]
        proc = vecs["proc"]
        assert proc.num_workers == min(sc.num_workers or sc.num_envs, sc.num_envs)
        assert proc.shared_memory is (sc.shared_memory is not False)  # fixed-size spaces
        for mode in MODES[1:]:
            vec = vecs[mode]
            assert vec.observation_space == ref.observation_space
            assert vec.action_space == ref.action_space
            assert vec.batch_observation_space == ref.batch_observation_space
            assert vec.batch_action_space == ref.batch_action_space
            assert vec.metadata == ref.metadata and vec.autoreset is ref.autoreset
            assert repr(vec.spec) == repr(ref.spec) and vec.spec.id == sc.env_id
            assert len(vec) == sc.num_envs and vec.unwrapped is vec
        rng = np.random.default_rng(sc.action_seed)
        if sc.early_step:  # rule 1: ResetRequired from the VecEnv, on every backend
            actions = typed(sc, draw_actions(sc, ref, rng))
            outcome = each(vecs, lambda v, m: v.step(copied(actions)))
            assert not outcome["sync"][0] and isinstance(outcome["sync"][1], sekai.ResetRequired)
            check_outcomes("step before reset", outcome, vecs, result=True)
        check_state("before reset", sc, vecs, parameters=True)
        seed = build_seed(sc, sc.reset_seed)
        options = build_options(sc, sc.first_options)
        say(f"reset(seed={seed!r}, options={options!r})")
        outcome = each(vecs, lambda v, m: v.reset(seed=seed, options=options))
        assert outcome["sync"][0], f"first reset failed: {outcome['sync'][1]!r}"
        check_outcomes("reset", outcome, vecs, result=True)
        held = {mode: (got, copy.deepcopy(got)) for mode, (_, got) in outcome.items()}
        check_state("reset", sc, vecs, parameters=False)
        for k, op in enumerate(sc.ops):
            what = f"op {k} {op}"
            say(what)
            result = op[0] in ("step", "bad", "reset")
            if op[0] in ("step", "bad"):
                raw = (
                    draw_actions(sc, ref, rng)
                    if op[0] == "step"
                    else bad_actions(sc, ref, rng, op[1])
                )
                actions = typed(sc, raw)
                via_async = op[0] == "step" and op[1]
                say(f"  actions {actions!r}" + (" (async_step)" if via_async else ""))
                if via_async:
                    outcome = each(
                        vecs,
                        lambda v, m, a=actions: loop.run_until_complete(v.async_step(copied(a))),
                    )
                else:
                    outcome = each(vecs, lambda v, m, a=actions: v.step(copied(a)))
            elif op[0] == "reset":
                _, seed_spec, options_spec, via_async = op
                seed = build_seed(sc, seed_spec)
                options = build_options(sc, options_spec)
                say(f"  seed {seed!r}, options {options!r}")
                if via_async:
                    outcome = each(
                        vecs,
                        lambda v, m, s=seed, o=options: loop.run_until_complete(
                            v.async_reset(seed=s, options=o)
                        ),
                    )
                else:
                    outcome = each(vecs, lambda v, m, s=seed, o=options: v.reset(seed=s, options=o))
            elif op[0] == "set":
                _, name, spec, as_list = op
                values = {mode: setting(sc, name, spec, as_list) for mode in MODES}
                if spec[0] not in ("samplers", "sampler"):  # the very same object (envs copy)
                    values = dict.fromkeys(MODES, values["sync"])
                outcome = each(vecs, lambda v, m, n=name, x=values: v.set_attr(n, x[m]))
            else:
                name = op[1]
                args, kwargs = call_args(sc, ref, name, rng)
                say(f"  args {args!r} {kwargs!r}")
                outcome = each(vecs, lambda v, m, n=name, a=args, k=kwargs: v.call(n, *a, **k))
            ok, value = outcome["sync"]
            say(f"  -> {'ok' if ok else f'{type(value).__name__}: {value}'}")
            check_outcomes(what, outcome, vecs, result=result)
            check_held(what, held)
            if ok and result:
                held = {mode: (got, copy.deepcopy(got)) for mode, (_, got) in outcome.items()}
            check_state(what, sc, vecs, parameters=op[0] == "set")
        check_state("end", sc, vecs, parameters=True)
        actions = typed(sc, draw_actions(sc, ref, rng))
        for vec in vecs.values():
            vec.close()
            vec.close()  # a no-op
        for what, fn in (
            ("step after close", lambda v, m: v.step(copied(actions))),
            ("reset after close", lambda v, m: v.reset(seed=0)),
        ):
            outcome = each(vecs, fn)
            assert isinstance(outcome["sync"][1], sekai.VecEnvClosed), outcome["sync"]
            check_outcomes(what, outcome, vecs, result=True)
    finally:
        loop.close()
        errors = []
        for vec in vecs.values():
            try:
                vec.close()
            except Exception as exc:  # close every env, then report
                errors.append(exc)
        assert all(vec.closed for vec in vecs.values())
        if errors:
            raise errors[0]


SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(scenarios(TR))
def test_trading_backends_match_exactly(scenario: Scenario) -> None:
    replay(scenario)


@SETTINGS
@given(scenarios(PF))
def test_portfolio_backends_match_exactly(scenario: Scenario) -> None:
    replay(scenario)


@SETTINGS
@given(scenarios(MM))
def test_market_making_backends_match_exactly(scenario: Scenario) -> None:
    replay(scenario)


@SETTINGS
@given(scenarios(OE))
def test_optimal_execution_backends_match_exactly(scenario: Scenario) -> None:
    replay(scenario)


# -- the premises, as deterministic examples ------------------------------------------------------


def _scenario(env_id: str, **changes: Any) -> Scenario:
    base = Scenario(
        env_id=env_id,
        num_envs=3,
        history=None,
        params=(),
        cost=None,
        reward=None,
        sampler=None,
        autoreset=True,
        max_episode_steps=None,
        wrappers=(),
        num_workers=None,
        shared_memory=None,
        early_step=False,
        reset_seed=7,
        first_options=None,
        ops=(
            *(("step", False),) * 6,
            ("reset", None, None, False),  # every sub-env continues its own stream
            *(("step", False),) * 3,
            ("reset", ("list", (None, 3, None)), None, True),
            *(("step", True),) * 3,
        ),
        action_seed=0,
        action_dtype="float64",
    )
    return dataclasses.replace(base, **changes)


def test_seeded_random_configurations_match_across_backends() -> None:
    """Sub-env i draws from the same seed on every backend (core.md clarification 4), so with
    a seeded first reset simulated prices, random samplers, random fills and a volatile mid
    agree exactly, also across autoresets and ``reset(seed=None)``."""
    simulated = History("simulated", 8, 2, 0, 0.01, "index", 0, (), 3, 4)
    history = History("prices", 30, 2, 5, 0.1, "index", 0, (), 3, 4)
    scenarios_ = [
        _scenario(
            TR,
            history=dataclasses.replace(simulated, n_assets=1),
            params=(("positions", (-1.0, 0.0, 1.0)), ("sigma", 1.0)),
        ),
        _scenario(
            PF,
            history=history,
            sampler=("random",),
            params=(("allow_short", True),),
            wrappers=("stats", "norm_reward", "autoreset"),  # EpisodeStats in the infos
        ),
        _scenario(MM, params=(("sigma", 2.0), ("n_steps", 4), ("total_time", 1.0))),
        _scenario(OE, params=(("sigma", 0.95), ("n_steps", 4)), autoreset=False),
    ]
    for sc in scenarios_:
        replay(sc)
    # ... and they are random: other seeds give other steps
    for sc in scenarios_:
        one = dataclasses.replace(sc, num_envs=1)
        firsts = []
        for seed in (7, 8, 9, 10):
            vec = make_vec(one, "sync")
            try:
                vec.reset(seed=seed)
                actions = typed(one, draw_actions(one, vec, np.random.default_rng(0)))
                step = vec.step(actions)
                firsts.append((step.observations, step.infos))  # MarketMaking: the mid in info
            finally:
                vec.close()
        assert not all(same(firsts[0], other) for other in firsts[1:]), sc.env_id


def test_a_refused_start_resets_the_other_sub_envs_on_every_backend() -> None:
    """Rule 9 with a refused ``{"start": t}`` (finance.md §4.3): the other sub-envs are reset,
    the refusing ones keep their episode, the lowest refusing sub-env's error is raised (as a
    ``VecEnvWorkerError[ValueError]`` of rank 1 by ProcVecEnv), and the VecEnv itself then
    requires a reset (ResetRequired from the parent, never wrapped)."""
    history = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 40)))
    messages = []
    for mode in MODES:
        vec = sekai.make_vec(
            TR,
            3,
            vectorization_mode=mode,
            prices=history,
            lookback=3,
            episode_length=5,
            vector_kwargs={"autoreset": False},
        )
        try:
            vec.reset(seed=0, options={"start": 10})
            vec.step(np.ones(3, int))
            try:
                vec.reset(options=[{"start": 4}, {"start": 99}, {"start": 2}])  # rows 3..34
            except ValueError as exc:
                error: Exception = exc
            else:
                raise AssertionError(f"{mode}: the refused starts were accepted")
            if mode == "proc":
                assert isinstance(error, sekai.VecEnvWorkerError)
                assert (error.rank, error.exc_type) == (1, "ValueError")
                messages.append(error.message)
            else:
                assert type(error) is ValueError
                messages.append(str(error))
            assert vec.get_attr("timestamp") == [4, 11, 11], mode
            assert vec.get_attr("elapsed_steps") == [0, 1, 1], mode
            try:
                vec.step(np.ones(3, int))
            except sekai.ResetRequired as exc:
                assert not isinstance(exc, sekai.VecEnvWorkerError), mode
            else:
                raise AssertionError(f"{mode}: stepped after a failed reset")
            assert [i["timestamp"] for i in vec.reset(options={"start": 5}).infos] == [5, 5, 5]
        finally:
            vec.close()
    assert len(set(messages)) == 1 and "row 99" in messages[0], messages


def test_a_sub_env_failing_inside_step_leaves_every_backend_alike() -> None:
    """A sampler set per sub-env whose start lies beyond the history is accepted, then refused
    by the autoreset inside ``step()``: rule 9 in ``step()`` (the other sub-envs complete the
    step; sub-env 1's ValueError is raised, by ProcVecEnv as ``VecEnvWorkerError[ValueError]``
    of rank 1 whether or not sub-env 1 shares a worker), and every later step reports that the
    episode of sub-env 1 is over (its ResetRequired) until a reset; the next autoreset fails
    again."""
    history = History("prices", 12, 1, 3, 0.1, "index", 0, (), 2, 2)  # 8 windows
    samplers = (("seq", 0, None), ("seq", 8, None), ("seq", 9, None))
    ops = (
        ("set", "sampler", ("samplers", samplers), True),
        *(("step", False),) * 3,
        ("reset", None, ("each", tuple(("start", "int", t) for t in (3, 5, 9))), False),
        *(("step", False),) * 2,
    )
    for workers in (None, 2, 1):
        sc = _scenario(
            TR,
            history=history,
            params=(("positions", (-1.0, 0.0, 1.0)),),
            sampler=("sequential",),
            num_workers=workers,
            ops=ops,
            action_dtype="int",
        )
        log = replay(sc)
        outcomes = [line for line in log if line.startswith("  -> ")]
        assert outcomes[2].startswith("  -> ValueError: start 8 is beyond"), log
        assert outcomes[3].startswith("  -> ResetRequired: The episode is over"), log
        assert outcomes[4:6] == ["  -> ok"] * 2, log  # the reset, then a step
        assert outcomes[6].startswith("  -> ValueError: start 8 is beyond"), log  # the autoreset
