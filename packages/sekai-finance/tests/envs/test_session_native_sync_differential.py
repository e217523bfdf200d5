"""Differential property test: native MarketMakingVecEnv / OptimalExecutionVecEnv against a
SyncVecEnv of the single envs, in configurations without randomness (finance.md §1.3, §1.4,
§3.4-§3.7, §11, §12.3, §12.4; core.md §14).

The native session envs draw their randomness from one generator for all sub-envs (§11.4), so
the two backends can only be compared draw-free:

* ``OptimalExecution-v0`` with ``sigma = 0``: the mid moves only by permanent impact;
* ``MarketMaking-v0`` with ``sigma = 0`` and every quote's fill probability exactly 0.0 or
  1.0 in float64 (``u < 1.0`` always holds and ``u < 0.0`` never does for ``u`` in [0, 1)):
  a huge ``fill_intensity`` makes near quotes certain, a large ``fill_decay`` makes far quotes
  impossible (``exp(-k δ)`` underflows to 0). The actions are drawn per step for the current
  parameters and every one is checked -- with a margin, on a plateau of the probability --
  through ``fill_probability`` of both backends before it is used.

Hypothesis draws the env's construction keywords, ``num_envs``, ``autoreset``,
``max_episode_steps`` and a sequence of operations applied to both backends with the same
objects: steps with random actions (out-of-range values, ``-0.0``, 0 and 1 fractions, float32 /
float64 arrays or nested lists, occasionally an invalid batch; NaN for frozen sub-envs, which
is not checked), resets with seeds and options (``{}``, ``{"start": None}``, per-sub-env lists,
a refused ``{"start": t}`` or unknown key), ``set_attr`` of shared parameters (values the env
accepts and values it refuses, one value or a list repeating it) and ``call`` of the policy
helpers. After every operation both must agree exactly (no tolerance): observations, rewards,
terminated, truncated, every info key, its order, type, dtype and value (``final_observation`` /
``final_info`` / ``reset_info`` and ``elapsed_steps`` included), ``frozen``, the per-sub-env
state and every parameter read with ``get_attr``, and the exception (class and message) when
an operation fails.

A failing example prints the ``Scenario``; ``replay(scenario)`` re-runs it outside pytest.
"""

from __future__ import annotations

import dataclasses
import math
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
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.vector import MarketMakingVecEnv, OptimalExecutionVecEnv

MM = "MarketMaking-v0"
OE = "OptimalExecution-v0"
STATE = {MM: MarketMakingVecEnv.state_names, OE: OptimalExecutionVecEnv.state_names}
PARAMETERS = {  # read with get_attr after every operation (read-only ones included)
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
    ),
}
# Shared parameters set_attr may change, with values the env accepts (sigma stays 0: no draws
# may matter) and values it refuses (the same error on both; nothing is set).
SETTABLE = {
    MM: {
        "s0": ([50.0, 0.0, -0.0, -3.0, 1e5, 7], [math.nan, math.inf, "1.0"]),
        "sigma": ([0.0, 0], [-1.0, math.nan]),
        "total_time": ([0.05, 1.0, 7.5], [0.0, -2.0]),
        "n_steps": ([1, 2, 3, 12], [0, 2.0, True]),
        "A": ([1e10, 1e12, 1e15], [0.0, -1.0]),
        "k": ([0.5, 1.5, 1e3, 1e5], [0.0, math.inf]),
        "risk_aversion": ([0.0, 0.3, 4.0], [-0.1]),
        "max_inventory": ([1, 2, 5, 30], [0, -3]),  # may also break order_size <= it
        "order_size": ([1, 2, 4], [0]),  # may exceed max_inventory: refused
        "terminal_penalty": ([0.0, 0.25, 2.0], [-1.0]),
    },
    OE: {
        "X0": ([1.0, 500.0, 1e6, 3], [0.0, -5.0]),
        "s0": ([1.0, 50.0, 1234.5], [0.0, math.nan]),
        "sigma": ([0.0], [-1.0]),
        "total_time": ([0.5, 5.0, 40.0], [0.0]),  # a longer tau may break eta > gamma tau / 2
        "n_steps": ([1, 2, 5, 12], [0, False]),  # a shorter one too
        "gamma": ([0.0, 1e-7, 1e-3, 0.2], [-1e-3]),
        "eta": ([1e-6, 1e-3, 0.1, 2.0], [0.0]),
        "epsilon": ([0.0, 0.0625, 2.0], [-1.0]),
        "risk_aversion": ([0.0, 1e-6, 0.5], [math.nan, -1.0]),
    },
}
CALLS = {
    MM: ("avellaneda_stoikov_action", "optimal_quotes", "fill_probability", "quote_table"),
    OE: ("almgren_chriss_trajectory", "almgren_chriss_actions", "expected_shortfall"),
}
OPTIONS = {  # reset option specs -> the options of one sub-env
    "none": None,
    "empty": {},
    "start_none": {"start": None},
    "start": {"start": 3},  # a session env has no history: refused
    "unknown": {"inventory": 5},  # refused
}
# A fill probability counts as exactly 0 or 1 only on a plateau: the same at offsets this much
# (relatively) nearer and farther, so array and scalar evaluations cannot round apart.
MARGIN = 1e-6


# -- the scenario ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Everything one example does; its repr is a reproducer (``replay(Scenario(...))``)."""

    env_id: str
    num_envs: int
    params: tuple[tuple[str, Any], ...]  # the single env's constructor keywords
    autoreset: bool
    max_episode_steps: int | None
    reset_seed: int | None
    first_options: Any  # an options spec (see build_options)
    ops: tuple[Any, ...]
    action_seed: int
    action_dtype: str  # "float32" | "float64" | "list"


def build_options(spec: Any) -> Any:
    if spec is None:
        return None
    if spec[0] == "all":
        return OPTIONS[spec[1]]
    return [OPTIONS[kind] for kind in spec[1]]


@st.composite
def mm_params(draw: Any) -> tuple[tuple[str, Any], ...]:
    max_inventory = draw(st.integers(1, 20))
    certain = draw(st.booleans())  # moderate decay: (nearly) every quote fills
    if certain:
        k = draw(st.sampled_from([0.05, 0.5, 1.5, 3.0]))
        max_offset = draw(st.sampled_from([0.0, 0.3, 1.0, 5.0]))
    else:  # steep decay: quotes beyond ~745 / k never fill
        k = draw(st.sampled_from([300.0, 1e3, 1e4, 1e6]))
        max_offset = draw(st.sampled_from([3.0, 5.0, 10.0]))
    params = {
        "s0": draw(
            st.one_of(
                st.sampled_from([100.0, 0.0, -0.0, -5.5, 1e6]),  # -0.0: stored as 0.0
                st.floats(-1e4, 1e4, allow_nan=False),
            )
        ),
        "sigma": draw(st.sampled_from([0.0, 0])),
        "total_time": draw(st.sampled_from([0.01, 0.37, 1.0, 10.0])),
        "n_steps": draw(st.integers(1, 10)),
        "fill_intensity": draw(st.sampled_from([1e10, 1e12, 1e15, 1e300])),
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
    n_steps = draw(st.integers(1, 10))
    tau = total_time / n_steps
    gamma = draw(st.sampled_from([0.0, 2.5e-7, 1e-4, 0.05, 0.3]))
    boundary = 0.5 * gamma * tau
    eta = draw(
        st.one_of(
            st.sampled_from([2.5e-6, 1e-3, 0.2]),
            st.floats(1.0001, 10.0).map(lambda m: boundary * m),  # just above the bound
        )
    )
    assume(eta > 0 and eta - boundary > 0)
    x0 = draw(st.one_of(st.sampled_from([1e6, 1.0, 7, 123.5]), st.floats(0.5, 1e7)))
    fixed_cost = draw(st.sampled_from([0.0, 0.0625, 1.0, 100.0]))
    # s0 above the price floor (the env refuses a price that can reach 0), by a margin that
    # goes down to just above it
    floor = fixed_cost + x0 * max(gamma, eta / tau)
    margin = draw(st.one_of(st.sampled_from([50.0, 1.0, 3]), st.floats(0.01, 1e3)))
    params = {
        "initial_inventory": x0,
        "s0": floor + margin,
        "sigma": draw(st.sampled_from([0.0, 0])),
        "total_time": total_time,
        "n_steps": n_steps,
        "permanent_impact": gamma,
        "temporary_impact": eta,
        "fixed_cost": fixed_cost,
        "risk_aversion": draw(st.sampled_from([0.0, 1e-6, 1e-2, 1.0])),
    }
    return tuple(params.items())


@st.composite
def option_specs(draw: Any, num_envs: int, *, allow_invalid: bool) -> Any:
    kinds = ["none", "empty", "start_none"] + (["start", "unknown"] if allow_invalid else [])
    one = st.sampled_from(kinds + ["none"] * 3)  # mostly valid
    how = draw(st.sampled_from(["all", "each", "absent"]))
    if how == "absent":
        return None
    if how == "all":
        return ("all", draw(one))
    return ("each", tuple(draw(one) for _ in range(num_envs)))


@st.composite
def scenarios(draw: Any, env_id: str) -> Scenario:
    num_envs = draw(st.integers(1, 5))
    params = draw(mm_params() if env_id == MM else oe_params())
    ops: list[Any] = []
    settable = SETTABLE[env_id]
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["step"] * 10 + ["reset", "set", "set", "call"]))
        if kind == "step":
            ops.append(("step",))
        elif kind == "reset":
            seed = draw(st.one_of(st.none(), st.integers(0, 100)))
            ops.append(("reset", seed, draw(option_specs(num_envs, allow_invalid=True))))
        elif kind == "set":
            name = draw(st.sampled_from(sorted(settable)))
            good, bad = settable[name]
            value = draw(st.sampled_from(bad if draw(st.integers(0, 7)) == 0 else good))
            ops.append(("set", name, value, draw(st.booleans())))
        else:
            ops.append(("call", draw(st.sampled_from(CALLS[env_id]))))
    return Scenario(
        env_id=env_id,
        num_envs=num_envs,
        params=params,
        autoreset=draw(st.booleans()),
        max_episode_steps=draw(st.one_of(st.none(), st.integers(1, 12))),
        reset_seed=draw(st.one_of(st.none(), st.integers(0, 100))),
        first_options=draw(option_specs(num_envs, allow_invalid=False)),
        ops=tuple(ops),
        action_seed=draw(st.integers(0, 2**16)),
        action_dtype=draw(st.sampled_from(["float32", "float64", "list"])),
    )


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
    if isinstance(a, np.generic):
        return same(np.asarray(a), np.asarray(b))
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


def attempt(fn: Any) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:
        return False, exc


def check_outcome(what: str, native: tuple[bool, Any], sync: tuple[bool, Any]) -> bool:
    """Both succeeded (returns True; a list value is compared here, results by the caller) or
    both raised the same exception, class and message (returns False)."""
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


def check_state(what: str, sc: Scenario, native: Any, sync: Any) -> None:
    check_same(f"{what}: frozen", native.frozen, sync.frozen)
    for name in STATE[sc.env_id] + PARAMETERS[sc.env_id]:
        outcome = [attempt(lambda v=v, n=name: v.get_attr(n)) for v in (native, sync)]
        check_outcome(f"{what}: get_attr({name!r})", *outcome)


# -- running a scenario -------------------------------------------------------------------------


def make_pair(sc: Scenario) -> tuple[Any, Any]:
    kwargs = dict(sc.params)
    if sc.max_episode_steps is not None:
        kwargs["max_episode_steps"] = sc.max_episode_steps
    pair = tuple(
        sekai.make_vec(
            sc.env_id,
            sc.num_envs,
            vectorization_mode=mode,
            vector_kwargs={"autoreset": sc.autoreset},
            **kwargs,
        )
        for mode in ("native", "sync")
    )
    assert type(pair[0]).__name__ == sc.env_id.split("-")[0] + "VecEnv"
    assert type(pair[1]).__name__ == "SyncVecEnv"
    return pair


def certain_or_impossible(env: Any, offsets: np.ndarray) -> np.ndarray:
    """Which (clipped) offsets fill with probability exactly 1.0 or exactly 0.0, also a
    relative ``MARGIN`` nearer and farther (a plateau of the probability)."""
    clipped = np.clip(offsets.astype(np.float64), 0.0, env.max_offset)
    p = np.asarray(env.fill_probability(clipped))
    near = np.asarray(env.fill_probability(clipped * (1.0 - MARGIN)))
    far = np.asarray(env.fill_probability(clipped * (1.0 + MARGIN) + 1e-300))
    return ((p == 0.0) | (p == 1.0)) & (near == p) & (far == p)


def quote_offsets(native: Any, rng: np.random.Generator) -> np.ndarray:
    """Bid and ask distances for every sub-env whose fills are certain or impossible under the
    current parameters: uniform draws, the bounds, beyond them, ``-0.0``."""
    tpl = native.template
    top = tpl.max_offset
    n = native.num_envs
    never = 760.0 / tpl.k  # exp(-k δ) underflows to 0 beyond ~745.1 / k
    out = np.zeros((n, 2))
    for i in range(n):
        for side in range(2):
            for _ in range(30):
                mode = rng.integers(0, 4)
                if mode == 0:
                    value = rng.uniform(-1.0, top + 1.0)
                elif mode == 1:
                    value = rng.choice([0.0, -0.0, -1.5, top, top + 2.0, 1e-9, 0.5 * top])
                elif mode == 2 and never < top:
                    value = rng.uniform(never, top + 1.0)
                else:
                    value = rng.uniform(0.0, min(top, 1e-3) + 1e-12)
                if certain_or_impossible(tpl, np.array([value]))[0]:
                    out[i, side] = value
                    break
            else:
                out[i, side] = 0.0
    return out


def draw_actions(sc: Scenario, native: Any, rng: np.random.Generator) -> Any:
    n = sc.num_envs
    frozen = native.frozen
    if sc.env_id == MM:
        actions = quote_offsets(native, rng)
    else:
        actions = rng.uniform(-0.5, 1.5, (n, 1))
        special = rng.random((n, 1)) < 0.5
        picks = rng.choice([0.0, -0.0, 1.0, 0.5, 1e-12, 1 - 1e-7, -2.0, 3.0, 0.999], (n, 1))
        actions = np.where(special, picks, actions)
    if frozen.any() and rng.random() < 0.5:
        actions[frozen] = np.nan  # not checked: a frozen sub-env ignores it
    if rng.random() < 0.04:  # an invalid batch: both refuse it before stepping anything
        if rng.random() < 0.5 and (~frozen).any():
            actions[rng.choice(np.flatnonzero(~frozen)), 0] = rng.choice([np.nan, np.inf])
        else:
            actions = np.zeros((n, actions.shape[1] + 1))
    if sc.action_dtype == "list":
        return actions.tolist()
    return actions.astype(sc.action_dtype)


def checked_quotes(sc: Scenario, native: Any, sync: Any, actions: Any) -> None:
    """Every quote a sub-env that is not frozen will use fills with probability exactly 0.0
    or 1.0 on both backends (else the test could not be draw-free)."""
    batch = np.asarray(actions, dtype=np.float64)
    if batch.shape != (sc.num_envs, 2) or not np.isfinite(batch[~native.frozen]).all():
        return  # an invalid batch: refused before anything is drawn
    live = batch[~native.frozen]
    clipped = np.clip(live, 0.0, native.template.max_offset)
    p_native = native.call("fill_probability", clipped)
    p_sync = sync.call("fill_probability", clipped)
    check_same("fill_probability of the quotes", p_native, p_sync)
    assert np.all((p_native[0] == 0.0) | (p_native[0] == 1.0)), p_native[0]
    assert certain_or_impossible(native.template, live).all(), live


def call_args(sc: Scenario, native: Any, name: str) -> tuple[Any, ...]:
    tpl = native.template
    if name == "fill_probability":
        return (np.array([0.0, tpl.max_offset, 0.5 * tpl.max_offset]),)
    if name == "expected_shortfall":  # TWAP; sometimes one step short (refused)
        steps = tpl.n_steps if sc.action_seed % 3 else tpl.n_steps + 1
        return (np.full(steps, tpl.X0 / steps),)
    return ()


def compare_calls(what: str, name: str, native: list[Any], sync: list[Any]) -> None:
    if name == "quote_table":  # an object: compare its quotes for every (t, inventory)
        assert len(native) == len(sync), what
        for mine, theirs in zip(native, sync):
            check_same(what, dict(vars(mine)), dict(vars(theirs)))
        return
    check_same(what, native, sync)


def copied(actions: Any) -> Any:
    """A fresh copy for each backend (neither may see what the other did to its batch)."""
    if isinstance(actions, np.ndarray):
        return actions.copy()
    return [list(row) for row in actions]


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
        options = build_options(sc.first_options)
        outcome = [
            attempt(lambda v=v: v.reset(seed=sc.reset_seed, options=options))
            for v in (native, sync)
        ]
        assert outcome[0][0], f"first reset failed: {outcome[0][1]!r}"
        check_outcome("reset", *outcome)
        check_result("reset", outcome[0][1], outcome[1][1])
        check_state("reset", sc, native, sync)
        for k, op in enumerate(sc.ops):
            what = f"op {k} {op}"
            say(what)
            if op[0] == "step":
                actions = draw_actions(sc, native, rng)
                say(f"  actions {actions!r}")
                if sc.env_id == MM:
                    checked_quotes(sc, native, sync, actions)
                outcome = [
                    attempt(lambda v=v, a=actions: v.step(copied(a))) for v in (native, sync)
                ]
            elif op[0] == "reset":
                options = build_options(op[2])
                say(f"  options {options!r}")
                outcome = [
                    attempt(lambda v=v, s=op[1], o=options: v.reset(seed=s, options=o))
                    for v in (native, sync)
                ]
            elif op[0] == "set":
                _, name, value, as_list = op
                given = [value] * sc.num_envs if as_list else value
                outcome = [
                    attempt(lambda v=v, n=name, g=given: v.set_attr(n, g)) for v in (native, sync)
                ]
            else:
                name = op[1]
                args = call_args(sc, native, name)
                outcome = [
                    attempt(lambda v=v, n=name, a=args: v.call(n, *a)) for v in (native, sync)
                ]
                if outcome[0][0] and outcome[1][0]:
                    compare_calls(what, name, outcome[0][1], outcome[1][1])
                    outcome = [(True, None), (True, None)]
            if check_outcome(what, *outcome) and op[0] in ("step", "reset"):
                check_result(what, outcome[0][1], outcome[1][1])
            check_state(what, sc, native, sync)
    finally:
        native.close()
        sync.close()


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(scenarios(MM))
def test_market_making_native_matches_sync_exactly(scenario: Scenario) -> None:
    replay(scenario)


@SETTINGS
@given(scenarios(OE))
def test_optimal_execution_native_matches_sync_exactly(scenario: Scenario) -> None:
    replay(scenario)


# -- the premises of the draw-free comparison ----------------------------------------------------


def test_fill_probability_is_exactly_one_or_zero_where_the_scenarios_quote() -> None:
    """A huge intensity makes every quote within ``max_offset`` certain; a steep decay makes
    quotes beyond ~745 / k impossible, in float64, as scalars and as arrays."""
    certain = MarketMakingEnv(sigma=0.0, fill_intensity=1e12, total_time=0.01, n_steps=10)
    offsets = np.linspace(0.0, certain.max_offset, 101)
    assert np.all(certain.fill_probability(offsets) == 1.0)
    assert all(certain.fill_probability(float(x)) == 1.0 for x in offsets)
    steep = MarketMakingEnv(sigma=0.0, fill_intensity=1e15, fill_decay=1e3, max_offset=3.0)
    far = np.linspace(0.76, 3.0, 101)
    assert np.all(steep.fill_probability(far) == 0.0)
    assert all(steep.fill_probability(float(x)) == 0.0 for x in far)
    assert steep.fill_probability(0.0) == 1.0 and steep.fill_probability(0.02) == 1.0
    # no plateau in between: such offsets are never drawn
    assert 0.0 < steep.fill_probability(0.04) < 1.0
    assert not certain_or_impossible(steep, np.array([0.04]))[0]


def test_optimal_execution_without_volatility_needs_no_draws() -> None:
    """sigma = 0: two seeds give the same episode (the check the comparison rests on)."""
    runs = []
    for seed in (0, 1):
        env = OptimalExecutionEnv(sigma=0.0, n_steps=4)
        env.reset(seed=seed)
        runs.append([env.step(np.array([0.3], np.float32)).info for _ in range(4)])
    assert runs[0] == runs[1]


# -- the divergences the property tests found, as minimal examples -------------------------------


def test_a_refused_start_option_reads_the_same_on_both_backends() -> None:
    """``options={"start": t}`` on a session env (no price history) is refused with the same
    ValueError on every backend (finance.md §3.4; core.md §14 rule 9: one exception for the
    same input). The native envs named themselves ("MarketMakingVecEnv simulates a trading
    session ...") where the single env, and so a SyncVecEnv, says "MarketMakingEnv ..."; every
    other refusal (unknown option keys, parameters, actions) already reads the same."""
    for env_id, params in ((MM, {"sigma": 0.0}), (OE, {"sigma": 0.0})):
        for options in ({"start": 3}, [None, {"start": 0}]):
            native, sync = (
                sekai.make_vec(env_id, 2, vectorization_mode=mode, **params)
                for mode in ("native", "sync")
            )
            native.reset(seed=0)
            sync.reset(seed=0)
            outcome = [attempt(lambda v=v, o=options: v.reset(options=o)) for v in (native, sync)]
            assert not outcome[0][0] and isinstance(outcome[0][1], ValueError)
            check_outcome(f"{env_id} reset(options={options!r})", *outcome)
            native.close()
            sync.close()
