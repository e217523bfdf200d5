"""Differential property test: native TradingVecEnv / PortfolioVecEnv against a SyncVecEnv of
the single envs, on a price history with deterministic windows (finance.md §1.2-§1.4, §3.4,
§4.3, §11, §12.1, §12.2; core.md §14).

Hypothesis draws a whole scenario -- the history (raw ``prices=`` or a ``MarketData`` with
numeric, float or dated timestamps, warm-up rows and ``spread``/``volume`` fields), the env's
construction keywords (lookback, episode length, positions / assets / shorts, cost model,
stateful reward, sampler, autoreset, ``max_episode_steps``), the first reset's per-sub-env
start options and a sequence of operations: steps with random actions (out-of-range Box
scores, ``-0.0``, all-zero rows, wipe-out extremes; invalid actions for frozen sub-envs, which
are not checked), resets with options (sometimes an invalid start) and ``set_attr`` of shared
parameters (``cost_model``, ``reward_fn``, ``capital``, ``dt``, ``sampler``), applied to both
backends with the very same objects. After every operation both backends must agree exactly
(no tolerance): observations, rewards, terminated, truncated, every info key, its order, type,
dtype and value (``final_observation`` / ``final_info`` / ``reset_info`` and ``elapsed_steps``
included), ``frozen``, the per-sub-env state read with ``get_attr`` and the exception (class
and message) when an operation fails.

A failing example prints the ``Scenario``; ``replay(scenario)`` re-runs it outside pytest.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import (
    HealthCheck,
    currently_in_test_context,
    given,
    note,
    settings,
    strategies as st,
)

import sekai
from sekai.envs.finance.vector import PortfolioVecEnv, TradingVecEnv
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

TRADING_POSITIONS = ((-1.0, 0.0, 1.0), (-3.0, 0.0, 3.0), (0.0, 1.0), (-2.0, -0.5, 0.0, 0.5, 2.0))
STATE = {"Trading-v0": TradingVecEnv.state_names, "Portfolio-v0": PortfolioVecEnv.state_names}
PARAMETERS = ("cost_model", "reward_fn", "capital", "dt", "sampler")


# -- the scenario ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Everything one example does; its repr is a reproducer (``replay(Scenario(...))``)."""

    env_id: str
    num_envs: int
    lookback: int
    episode_length: int
    n_assets: int  # history columns (1 for Trading)
    allow_short: bool  # Portfolio only
    positions: tuple[float, ...]  # Trading only
    rows: int
    price_seed: int
    volatility: float
    source: str  # "prices" | "prices2d" (Trading (T, 1)) | "data"
    timestamps: str  # "index" | "float" | "dates" (data only)
    warmup: int
    fields: tuple[str, ...]  # data fields besides prices
    autoreset: bool
    max_episode_steps: int | None
    cost: Any  # a cost spec (see build_cost), or None for the default
    reward: Any  # a reward spec (see build_reward), or None for the default
    sampler: Any  # a sampler spec (see build_sampler)
    reset_seed: int | None
    first_options: Any  # an options spec (see build_options)
    ops: tuple[Any, ...]
    action_seed: int
    action_dtype: str

    @property
    def lo(self) -> int:
        """First valid first-decision row."""
        return max(self.lookback, self.warmup)

    @property
    def hi(self) -> int:
        """Last valid first-decision row."""
        return self.rows - self.episode_length - 1


def n_valid(sc: Scenario) -> int:
    """Number of windows whose decisions avoid the warm-up rows (a sampler's positions)."""
    return sc.hi - sc.lo + 1


def history_arrays(sc: Scenario) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray | None]:
    """Prices ``(T, n)``, data fields and timestamps (None: the default row numbers)."""
    rng = np.random.default_rng(sc.price_seed)
    steps = rng.normal(0.0, sc.volatility, (sc.rows, sc.n_assets))
    prices = 100.0 * np.exp(np.cumsum(steps, axis=0))
    fields = {}
    if "spread" in sc.fields:
        fields["spread"] = np.abs(rng.normal(0.002, 0.002, prices.shape))
    if "volume" in sc.fields:
        fields["volume"] = rng.uniform(0.0, 5e4, prices.shape)  # zeros allowed: full impact
    times: np.ndarray | None = None
    if sc.timestamps == "float":
        times = 1000.0 + np.cumsum(rng.uniform(0.25, 2.0, sc.rows))
    elif sc.timestamps == "dates":
        times = np.datetime64("2020-01-01") + np.arange(sc.rows) * np.timedelta64(1, "D")
    return prices, fields, times


def history_kwargs(sc: Scenario) -> dict[str, Any]:
    prices, fields, times = history_arrays(sc)
    if sc.source == "data":
        data = MarketData(
            prices[:, 0] if sc.env_id == "Trading-v0" and sc.n_assets == 1 else prices,
            fields=fields or None,
            timestamps=times,
            warmup=sc.warmup,
        )
        return {"data": data}
    if sc.env_id == "Trading-v0":
        return {"prices": prices if sc.source == "prices2d" else prices[:, 0]}
    one_d = sc.n_assets == 1 and sc.price_seed % 2 == 0  # a (T,) array is one asset too
    return {"prices": prices[:, 0] if one_d else prices}


BAD_VALUES = {  # refused by the single env's setter (and so by the native env's template)
    "capital": lambda n, windows: -1.0,
    "dt": lambda n, windows: 0.0,
    "reward_fn": lambda n, windows: 0.5,  # not a RewardFunction
    "cost_model": lambda n, windows: ProportionalCost([1e-3] * (n + 1)),  # one rate too many
    "sampler": lambda n, windows: FixedStart(windows),  # beyond the last window
}


def as_model(cost: Any) -> Any:
    return ProportionalCost(cost) if isinstance(cost, (int, float)) else cost


def build_cost(spec: Any, n_assets: int) -> Any:
    kind = spec[0]
    if kind == "rate":  # a plain number: transaction_cost=x
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
    if kind == "sequential":
        return "sequential"
    if kind == "random":
        return "random"
    if kind == "seq":
        return SequentialStart(start=spec[1], stride=spec[2])
    if kind == "fixed":
        return FixedStart(spec[1])
    if kind == "int":
        return spec[1]
    raise AssertionError(spec)


def build_start(sc: Scenario, form: str, row: int) -> Any:
    _, _, times = history_arrays(sc)
    if form == "int":
        return row
    if form == "negative":
        return row - sc.rows
    if form == "numpy":
        return np.int32(row)
    if form == "time":  # by value: the timestamp of the row (numeric axes)
        if times is None:
            return Time(row)
        if times.dtype.kind == "M":
            return str(times[row])  # a date string
        return Time(float(times[row]))
    if form == "between":  # a timestamp just before the row: the decision falls on the row
        if times is None or times.dtype.kind != "f" or row == 0:
            return row
        return float(times[row] - 0.1)
    raise AssertionError(form)


def build_options(sc: Scenario, spec: Any) -> Any:
    if spec is None:
        return None
    if spec[0] == "all":
        return {"start": build_start(sc, spec[1], spec[2])}
    return [None if item is None else {"start": build_start(sc, *item)} for item in spec[1]]


# -- strategies -----------------------------------------------------------------------------------

COSTS_ANY = st.one_of(
    st.tuples(st.just("rate"), st.sampled_from([0, 0.0, 1e-3, 0.05, 0.5, 0.99])),
    st.tuples(st.just("proportional"), st.sampled_from([0.0, 2e-3, 0.4])),
    st.tuples(st.just("per_asset"), st.sampled_from([1e-3, 0.3])),
    st.tuples(st.just("fixed"), st.sampled_from([0.0, 5.0, 2e4])),
    st.tuples(st.just("half_spread"), st.sampled_from([0.0, 1e-3, 0.2])),
)


@st.composite
def cost_specs(draw: Any, fields: tuple[str, ...], lookback: int) -> Any:
    options = [COSTS_ANY]
    if "spread" in fields:
        options.append(st.just(("data_spread",)))
    if "volume" in fields and lookback >= 2:  # volatility needs lookback >= 2 (§6.1)
        options.append(st.tuples(st.just("impact"), st.sampled_from([0.1, 0.5, 3.0])))
    one = st.one_of(*options)
    if draw(st.integers(0, 4)) == 0:
        return ("sum", draw(one), draw(one))
    return draw(one)


REWARDS = st.sampled_from(
    [None, "log", "simple", "pnl", "mean_variance", "drawdown", "sharpe", "mix", "mix2"]
)
SET_REWARDS = st.sampled_from(
    ["log", "simple", "pnl", "mean_variance", "drawdown", "sharpe", "mix", "mix2"]
)
FORMS = ("int", "negative", "numpy", "time", "between")


@st.composite
def starts(draw: Any, sc: Scenario, allow_invalid: bool) -> tuple[str, int]:
    if allow_invalid and draw(st.integers(0, 14)) == 0:
        bad = [sc.hi + 1]
        if sc.lo > 0:
            bad.append(sc.lo - 1)
        return ("int", draw(st.sampled_from(bad)))
    return (draw(st.sampled_from(FORMS)), draw(st.integers(sc.lo, sc.hi)))


@st.composite
def option_specs(draw: Any, sc: Scenario, *, full: bool, allow_invalid: bool) -> Any:
    kind = draw(st.sampled_from(["all", "each", "each"] + ([] if full else ["none"])))
    if kind == "none":
        return None
    if kind == "all":
        return ("all", *draw(starts(sc, allow_invalid)))
    items = []
    for _ in range(sc.num_envs):
        if not full and draw(st.integers(0, 3)) == 0:
            items.append(None)  # this sub-env's sampler picks the window
        else:
            items.append(draw(starts(sc, allow_invalid)))
    return ("each", tuple(items))


@st.composite
def sampler_specs(draw: Any, n_valid: int, *, deterministic: bool) -> Any:
    kinds = ["sequential", "seq", "fixed", "int"] + ([] if deterministic else ["random"])
    kind = draw(st.sampled_from(kinds))
    if kind in ("sequential", "random"):
        return (kind,)
    if kind == "seq":
        stride = draw(st.one_of(st.none(), st.integers(1, 5)))
        return ("seq", draw(st.integers(0, n_valid - 1)), stride)
    return (kind, draw(st.integers(0, n_valid - 1)))


@st.composite
def scenarios(draw: Any, env_id: str) -> Scenario:
    trading = env_id == "Trading-v0"
    num_envs = draw(st.integers(1, 5))
    lookback = draw(st.integers(1, 6))
    episode_length = draw(st.integers(1, 8))
    n_assets = 1 if trading else draw(st.integers(1, 3))
    window = lookback + episode_length + 1
    rows = window + draw(st.integers(0, 12))
    source = draw(st.sampled_from(["prices", "data"] + (["prices2d"] if trading else [])))
    n_starts = rows - window + 1
    if source == "data":
        timestamps = draw(st.sampled_from(["index", "float", "dates"]))
        # warm-up rows: decisions only at rows >= warmup, and at least one window must fit
        warmup = draw(st.integers(0, lookback + n_starts - 1))
        fields = tuple(f for f in ("spread", "volume") if draw(st.booleans()))
    else:
        timestamps, warmup, fields = "index", 0, ()
    windows = n_starts - max(0, warmup - lookback)  # sampler positions
    autoreset = draw(st.booleans())
    sampler = draw(sampler_specs(windows, deterministic=autoreset))
    full = sampler == ("random",)  # every reset must then place every sub-env
    base = Scenario(
        env_id=env_id,
        num_envs=num_envs,
        lookback=lookback,
        episode_length=episode_length,
        n_assets=n_assets,
        allow_short=False if trading else draw(st.booleans()),
        positions=draw(st.sampled_from(TRADING_POSITIONS)) if trading else (),
        rows=rows,
        price_seed=draw(st.integers(0, 2**16)),
        volatility=draw(st.sampled_from([0.01, 0.1, 0.5])),
        source=source,
        timestamps=timestamps,
        warmup=warmup,
        fields=fields,
        autoreset=autoreset,
        max_episode_steps=draw(st.one_of(st.none(), st.integers(1, 10))),
        cost=draw(st.one_of(st.none(), cost_specs(fields, lookback))),
        reward=draw(REWARDS),
        sampler=sampler,
        reset_seed=draw(st.one_of(st.none(), st.integers(0, 100))),
        first_options=None,
        ops=(),
        action_seed=draw(st.integers(0, 2**16)),
        action_dtype=draw(st.sampled_from(["float32", "float64", "int"])),
    )
    first = draw(option_specs(base, full=full, allow_invalid=False))
    ops = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["step"] * 8 + ["reset", "set"]))
        if kind == "step":
            ops.append(("step",))
        elif kind == "reset":
            seed = draw(st.one_of(st.none(), st.integers(0, 100)))
            ops.append(("reset", seed, draw(option_specs(base, full=full, allow_invalid=True))))
        else:
            name = draw(st.sampled_from(["cost_model", "reward_fn", "capital", "dt", "sampler"]))
            if draw(st.integers(0, 9)) == 0:  # a value the env refuses: both raise, nothing set
                ops.append(("set", name, ("bad",), draw(st.booleans())))
                continue
            if name == "cost_model":
                value: Any = draw(cost_specs(fields, lookback))
            elif name == "reward_fn":
                value = draw(SET_REWARDS)
            elif name == "capital":
                value = draw(st.sampled_from([1e3, 1e6, 1e9]))
            elif name == "dt":
                value = draw(st.sampled_from([1 / 252, 1 / 12, 0.5]))
            elif full:  # a random sampler stays random: its draws are not the same (§11.4)
                continue
            elif draw(st.booleans()):  # samplers may differ per sub-env (one lane each)
                value = (
                    "each",
                    *(draw(sampler_specs(windows, deterministic=True)) for _ in range(num_envs)),
                )
            else:
                value = draw(sampler_specs(windows, deterministic=True))
            ops.append(("set", name, value, draw(st.booleans())))
    return dataclasses.replace(base, first_options=first, ops=tuple(ops))


# -- comparing ----------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Exactly equal: same types, dtypes, shapes, values, key order and signs of zeros."""
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
        equal = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        return bool(equal) and (
            a.dtype.kind != "f" or np.array_equal(np.signbit(a), np.signbit(b))  # -0.0
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a == b and np.signbit(a) == np.signbit(b)) or (a != a and b != b)
    return bool(a == b)


def describe(a: Any) -> str:
    if isinstance(a, np.ndarray):
        values = a.tolist() if a.dtype.kind == "f" and a.size <= 16 else a  # every digit
        return f"ndarray[{a.dtype}{a.shape}] {values!r}"
    return f"{type(a).__name__} {a!r}"


def check_same(what: str, a: Any, b: Any) -> None:
    assert same(a, b), f"{what}:\n  native: {describe(a)}\n  sync:   {describe(b)}"


def check_infos(what: str, native: list[dict[str, Any]], sync: list[dict[str, Any]]) -> None:
    assert type(native) is list and type(sync) is list, what
    assert len(native) == len(sync), what
    for i, (mine, theirs) in enumerate(zip(native, sync)):
        assert type(mine) is dict and type(theirs) is dict, f"{what}: infos[{i}] not dicts"
        assert list(mine) == list(theirs), (
            f"{what}: infos[{i}] keys differ:\n  native: {list(mine)}\n  sync:   {list(theirs)}"
        )
        for key in mine:
            if isinstance(mine[key], dict):
                check_infos(f"{what} infos[{i}][{key!r}]", [mine[key]], [theirs[key]])
            else:
                check_same(f"{what}: infos[{i}][{key!r}]", mine[key], theirs[key])
    ids = [id(info) for info in native]
    assert len(set(ids)) == len(ids), f"{what}: native infos share dicts"


def check_result(what: str, native: Any, sync: Any) -> None:
    check_same(f"{what}: observations", native.observations, sync.observations)
    if hasattr(sync, "rewards"):
        check_same(f"{what}: rewards", native.rewards, sync.rewards)
        check_same(f"{what}: terminated", native.terminated, sync.terminated)
        check_same(f"{what}: truncated", native.truncated, sync.truncated)
    check_infos(what, native.infos, sync.infos)


def check_state(what: str, env_id: str, native: Any, sync: Any) -> None:
    check_same(f"{what}: frozen", native.frozen, sync.frozen)
    for name in STATE[env_id]:
        outcome = [attempt(lambda v=v, n=name: v.get_attr(n)) for v in (native, sync)]
        check_outcome(f"{what}: get_attr({name!r})", *outcome)
    for name in PARAMETERS:
        mine, theirs = native.get_attr(name), sync.get_attr(name)
        assert [repr(v) for v in mine] == [repr(v) for v in theirs], f"{what}: {name}"


def attempt(fn: Any) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:
        return False, exc


def check_outcome(what: str, native: tuple[bool, Any], sync: tuple[bool, Any]) -> bool:
    """Both succeeded (returns True, values compared by the caller unless a list) or both
    raised the same exception (returns False)."""
    (ok_n, value_n), (ok_s, value_s) = native, sync
    assert ok_n == ok_s, (
        f"{what}: only {'sync' if ok_n else 'native'} raised {value_s if ok_n else value_n!r}"
    )
    if not ok_n:
        assert type(value_n) is type(value_s) and str(value_n) == str(value_s), (
            f"{what}: different errors:\n  native: {value_n!r}\n  sync:   {value_s!r}"
        )
        return False
    if isinstance(value_n, list):
        check_same(what, value_n, value_s)
    return True


# -- running a scenario -------------------------------------------------------------------------


def make_pair(sc: Scenario) -> tuple[Any, Any]:
    kwargs: dict[str, Any] = {
        **history_kwargs(sc),
        "lookback": sc.lookback,
        "episode_length": sc.episode_length,
    }
    if sc.env_id == "Trading-v0":
        kwargs["positions"] = sc.positions
    else:
        kwargs["allow_short"] = sc.allow_short
    if sc.cost is not None:
        kwargs["transaction_cost"] = build_cost(sc.cost, sc.n_assets)
    reward = build_reward(sc.reward)
    if reward is not None:
        kwargs["reward"] = reward  # one object for both backends: each env stores a copy
    if sc.max_episode_steps is not None:
        kwargs["max_episode_steps"] = sc.max_episode_steps
    vector_kwargs = {"autoreset": sc.autoreset}
    pair = tuple(
        sekai.make_vec(
            sc.env_id,
            sc.num_envs,
            vectorization_mode=mode,
            vector_kwargs=vector_kwargs,
            sampler=build_sampler(sc.sampler),  # one each: a sampler may keep state
            **kwargs,
        )
        for mode in ("native", "sync")
    )
    assert type(pair[0]).__name__ == sc.env_id.split("-")[0] + "VecEnv"
    assert type(pair[1]).__name__ == "SyncVecEnv"
    return pair


def draw_actions(sc: Scenario, space: Any, rng: np.random.Generator, frozen: np.ndarray) -> Any:
    n = sc.num_envs
    if sc.env_id == "Trading-v0":
        k = len(sc.positions)
        actions = rng.integers(0, k, n)
        if rng.random() < 0.3:  # the extremes: wipe-outs with leverage and costs
            actions = np.where(rng.random(n) < 0.5, 0, k - 1)
        if sc.action_dtype != "int":  # float arrays of integral values are accepted
            actions = actions.astype(sc.action_dtype)
        if frozen.any() and rng.random() < 0.5:  # not checked: a frozen sub-env ignores it
            actions = actions.astype(np.float64)
            actions[frozen] = rng.choice([k + 3, -1, 0.5])
        return actions
    width = space.shape[1]
    low, high = (-3.0, 3.0) if sc.allow_short else (-0.5, 1.5)
    actions = rng.uniform(low, high, (n, width))
    mode = rng.integers(0, 6)
    if mode == 1:
        actions[rng.random((n, width)) < 0.4] = -0.0  # the sign of a zero weight is observed
    elif mode == 2:
        actions[rng.integers(0, n)] = 0.0  # all zero: all cash
    elif mode == 3:
        actions *= rng.choice([1e-13, 1e6, 1e30])  # near-zero totals and huge scores
    elif mode == 4:
        actions = np.round(actions)  # corners: all in one asset, full shorts
    dtype = np.float32 if sc.action_dtype == "float32" else np.float64
    actions = actions.astype(dtype)
    if frozen.any() and rng.random() < 0.5:
        actions[frozen] = np.nan  # not checked: a frozen sub-env ignores it
    return actions


def setting(sc: Scenario, name: str, spec: Any, as_list: bool) -> Any:
    """The value ``set_attr(name, ...)`` gets for ``spec``."""
    if spec == ("bad",):
        value = BAD_VALUES[name](sc.n_assets, n_valid(sc))
    elif name == "cost_model":
        value = build_cost(spec, sc.n_assets)
    elif name == "reward_fn":
        value = build_reward(spec)
    elif name == "sampler" and spec[0] == "each":  # a list: one sampler per sub-env
        return [build_sampler(one) for one in spec[1:]]
    elif name == "sampler":
        value = build_sampler(spec)
    else:
        value = spec
    return [value] * sc.num_envs if as_list else value


def replay(sc: Scenario) -> None:
    """Run ``sc`` on both backends and check they agree after every operation."""
    log: list[str] = []
    try:
        run(sc, log)
    except AssertionError as exc:
        if currently_in_test_context():  # hypothesis prints the scenario and its notes
            raise
        raise AssertionError(f"{exc}\n{sc!r}\n" + "\n".join(log)) from None


def run(sc: Scenario, log: list[str]) -> None:
    def say(line: str) -> None:
        log.append(line)
        if currently_in_test_context():
            note(line)

    native, sync = make_pair(sc)
    rng = np.random.default_rng(sc.action_seed)
    try:
        assert native.observation_space == sync.observation_space
        assert native.action_space == sync.action_space
        assert native.batch_action_space == sync.batch_action_space
        options = build_options(sc, sc.first_options)
        outcome = [
            attempt(lambda v=v: v.reset(seed=sc.reset_seed, options=options))
            for v in (native, sync)
        ]
        assert outcome[0][0], f"first reset failed: {outcome[0][1]!r}"
        check_outcome("reset", *outcome)
        check_result("reset", outcome[0][1], outcome[1][1])
        check_state("reset", sc.env_id, native, sync)
        for k, op in enumerate(sc.ops):
            what = f"op {k} {op}"
            say(what)
            if op[0] == "step":
                actions = draw_actions(sc, native.batch_action_space, rng, native.frozen)
                say(f"  actions {actions!r}")
                outcome = [attempt(lambda v=v, a=actions: v.step(a.copy())) for v in (native, sync)]
            elif op[0] == "reset":
                options = build_options(sc, op[2])
                say(f"  options {options!r}")
                outcome = [
                    attempt(lambda v=v, s=op[1], o=options: v.reset(seed=s, options=o))
                    for v in (native, sync)
                ]
            else:
                _, name, spec, as_list = op
                values = [setting(sc, name, spec, as_list) for _ in range(2)]
                if name != "sampler":  # the very same object for both (envs store copies)
                    values[1] = values[0]
                outcome = [
                    attempt(lambda v=v, x=x, n=name: v.set_attr(n, x))
                    for v, x in zip((native, sync), values)
                ]
            if check_outcome(what, *outcome) and op[0] != "set":
                check_result(what, outcome[0][1], outcome[1][1])
            check_state(what, sc.env_id, native, sync)
    finally:
        native.close()
        sync.close()


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(scenarios("Trading-v0"))
def test_trading_native_matches_sync_exactly(scenario: Scenario) -> None:
    replay(scenario)


@SETTINGS
@given(scenarios("Portfolio-v0"))
def test_portfolio_native_matches_sync_exactly(scenario: Scenario) -> None:
    replay(scenario)


# -- the divergences the property tests found, as minimal examples -------------------------------

SMALL = {
    "num_envs": 1,
    "lookback": 1,
    "episode_length": 1,
    "n_assets": 1,
    "allow_short": False,
    "positions": (),
    "rows": 3,
    "price_seed": 0,
    "volatility": 0.01,
    "source": "prices",
    "timestamps": "index",
    "warmup": 0,
    "fields": (),
    "autoreset": False,
    "max_episode_steps": None,
    "cost": None,
    "reward": None,
    "sampler": ("sequential",),
    "reset_seed": None,
    "first_options": ("all", "int", 1),
    "ops": (("step",),),
    "action_seed": 0,
    "action_dtype": "float32",
}


def test_portfolio_asset_returns_with_one_asset_or_one_sub_env_match_sync():
    """``info["asset_returns"]`` is the period's simple return r on both backends (§12.2);
    with one asset or one sub-env (``r.T`` already contiguous) the native env gave 1 + r."""
    replay(Scenario(env_id="Portfolio-v0", **SMALL))
    replay(Scenario(env_id="Portfolio-v0", **{**SMALL, "num_envs": 3}))
    replay(Scenario(env_id="Portfolio-v0", **{**SMALL, "n_assets": 3, "rows": 4}))


def test_portfolio_with_eight_weights_in_one_sub_env_matches_sync():
    """Eight or more weights (``n_assets >= 7``) in a single sub-env: the native sums must
    still run left to right as the single env's (§12.2 "bit for bit")."""
    wide = {**SMALL, "n_assets": 7, "rows": 4, "first_options": ("all", "int", 2)}
    replay(Scenario(env_id="Portfolio-v0", **wide))  # the action's scores are ~1e6


def test_elapsed_steps_after_a_failed_reset_match_sync():
    """A reset whose start option is refused leaves the sub-env as it was on both backends
    (core.md §14 rule 9; finance.md §11.6): ``get_attr("elapsed_steps")`` too, with
    ``max_episode_steps``."""
    ops = (("step",), ("reset", None, ("all", "int", 2)))  # row 2: beyond the last decision
    replay(
        Scenario(
            env_id="Trading-v0",
            **{**SMALL, "positions": (-1.0, 0.0, 1.0), "max_episode_steps": 1, "ops": ops},
        )
    )
