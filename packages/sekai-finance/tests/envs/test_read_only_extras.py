"""Read-only parameters and the native time limit (finance.md §3.8, §11 rules 2 and 8).

* ``OptimalExecutionVecEnv``'s ``tau`` and ``dt`` are derived (``total_time / n_steps``):
  ``set_attr`` refuses them with the "derived" reason instead of silently storing a value
  the simulation never reads.
* The single Trading/Portfolio envs keep ``transaction_cost`` (it became ``cost_model``),
  ``prices`` and ``data`` fixed: "X is fixed at construction; make a new env".
* ``make_vec(..., max_episode_steps=n)`` on a native env truncates exactly as ``TimeLimit`` does
  on every sub-env of a SyncVecEnv.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
from sekai.finance import MarketData, ProportionalCost


def walk(rows: int, n: int) -> np.ndarray:
    return 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, (rows, n)), axis=0))


# -- derived parameters of the native OptimalExecution env -----------------------------------


@pytest.mark.parametrize("name", ["tau", "dt"])
@pytest.mark.parametrize("value", [0.5, [0.5, 0.5, 0.5]])
def test_optimal_execution_vec_refuses_derived_tau_and_dt(name: str, value: Any) -> None:
    """Catches ``dt`` (the finance-wide name of ``tau``) forwarded as a settable parameter, or a
    set that stores a value the simulation ignores: the error names the derived reason and
    nothing changes."""
    vec = OptimalExecutionVecEnv(3)
    message = rf"OptimalExecutionVecEnv\.{name} is read-only: .*derived .*total_time / n_steps"
    with pytest.raises(AttributeError, match=message):
        vec.set_attr(name, value)
    with pytest.raises(AttributeError, match="derived"):
        setattr(vec, name, 0.5)
    assert vec.get_attr("tau") == [0.2] * 3 and vec.get_attr("dt") == [0.2] * 3
    vec.reset(seed=0)
    infos = vec.step(np.full((3, 1), 0.1, np.float32)).infos
    assert [info["dt"] for info in infos] == [0.2] * 3 and infos[0]["timestamp"] == 0.2


# -- single envs: fixed at construction -----------------------------------------------------

SINGLES = {
    "trading-history": lambda: TradingEnv(walk(80, 1)[:, 0], lookback=5, episode_length=10),
    "trading-data": lambda: TradingEnv(
        data=MarketData(walk(80, 1)[:, 0]), lookback=5, episode_length=10
    ),
    "trading-simulated": lambda: TradingEnv(lookback=5, episode_length=10),
    "portfolio-history": lambda: PortfolioEnv(walk(80, 2), lookback=5, episode_length=10),
    "portfolio-simulated": lambda: PortfolioEnv(n_assets=2, lookback=5, episode_length=10),
}


@pytest.mark.parametrize("make", list(SINGLES))
@pytest.mark.parametrize("name", ["transaction_cost", "prices", "data"])
def test_single_env_history_and_cost_argument_are_fixed(make: str, name: str) -> None:
    """Catches the reference's writable ``transaction_cost`` (a new value that no longer changes
    the cost model) and a history swapped under an env whose windows and spaces were sized for
    the old one; the value and the cost model are unchanged afterwards."""
    env = SINGLES[make]()
    before, cost_model = getattr(env, name), env.cost_model
    replacement = {"transaction_cost": 0.5, "prices": walk(80, 2), "data": MarketData(walk(80, 2))}
    with pytest.raises(AttributeError, match=f"{name} is fixed at construction; make a new env"):
        setattr(env, name, replacement[name])
    assert getattr(env, name) is before and env.cost_model is cost_model
    assert repr(env.cost_model) == repr(ProportionalCost(1e-3))


# -- max_episode_steps on the native envs ---------------------------------------------------


def assert_same(a: Any, b: Any, where: str) -> None:
    np.testing.assert_equal(a.observations, b.observations, err_msg=where)
    assert [list(x) for x in a.infos] == [list(y) for y in b.infos], where
    np.testing.assert_equal(list(a.infos), list(b.infos), err_msg=where)


CASES = {
    # history with sequential windows and sigma = 0: the native envs reproduce sync exactly
    "Portfolio-v0": (
        {"prices": walk(200, 2), "lookback": 5, "episode_length": 30, "sampler": "sequential"},
        np.tile(np.array([0.3, 0.5, 0.2], np.float32), (3, 1)),
    ),
    "OptimalExecution-v0": ({"sigma": 0.0}, np.full((3, 1), 0.05, np.float32)),
}


@pytest.mark.parametrize("env_id", list(CASES))
def test_native_max_episode_steps_truncates_like_time_limit(env_id: str) -> None:
    """Catches ``max_episode_steps`` dropped by the native constructor (no truncation before the
    env's own horizon of 30 / 25 steps), a counter not restarted by the autoreset (no second
    truncation at step 8), truncation reported as termination, and a missing or different
    ``elapsed_steps`` in the infos, final infos included."""
    kw, action = CASES[env_id]
    native = sekai.make_vec(env_id, 3, max_episode_steps=4, **kw)
    sync = sekai.make_vec(env_id, 3, vectorization_mode="sync", max_episode_steps=4, **kw)
    assert type(native).__name__.endswith("VecEnv") and type(native).__name__ != "SyncVecEnv"
    assert native.max_episode_steps == 4
    a, b = native.reset(seed=0), sync.reset(seed=0)
    assert_same(a, b, "reset")
    for step in range(1, 11):
        a, b = native.step(action), sync.step(action)
        assert_same(a, b, f"step {step}")
        np.testing.assert_array_equal(a.rewards, b.rewards)
        assert not a.terminated.any()
        assert a.truncated.tolist() == [step % 4 == 0] * 3 == b.truncated.tolist()
        assert [info["elapsed_steps"] for info in a.infos] == [(step - 1) % 4 + 1] * 3
        if step % 4 == 0:
            assert all(info["final_info"]["elapsed_steps"] == 4 for info in a.infos)
            assert all("elapsed_steps" not in info["reset_info"] for info in a.infos)


def test_native_time_limit_freezes_without_autoreset() -> None:
    """With ``autoreset=False`` a sub-env truncated by the time limit stays done (truncated),
    earns 0 and keeps its observation and state. Catches the counter running on for frozen
    sub-envs, or the limit's truncation forgotten on the next step."""
    vec = sekai.make_vec(
        "OptimalExecution-v0", 2, max_episode_steps=4, vector_kwargs={"autoreset": False}
    )
    vec.reset(seed=0)
    sell = np.full((2, 1), 0.05, np.float32)
    for _ in range(4):
        last = vec.step(sell)
    assert last.truncated.all() and not last.terminated.any()
    inventory = vec.get_attr("inventory")
    later = vec.step(sell)
    assert later.truncated.all() and not later.terminated.any() and not later.rewards.any()
    assert later.infos == [{}, {}] and vec.get_attr("inventory") == inventory
    assert np.array_equal(later.observations, last.observations)
    assert vec.get_attr("elapsed_steps") == [4, 4]


def test_no_elapsed_steps_without_a_time_limit() -> None:
    """The finance IDs are registered without a time limit (§1.1): catches a default
    ``max_episode_steps`` sneaking into the registry or the native constructors."""
    for env_id, action in (("Portfolio-v0", np.ones((2, 6))), ("OptimalExecution-v0", None)):
        vec = sekai.make_vec(env_id, 2)
        assert not hasattr(vec, "max_episode_steps")  # as on the sub-envs of sync
        vec.reset(seed=0)
        step = vec.step(np.full((2, 1), 0.1) if action is None else action)
        assert all("elapsed_steps" not in info for info in step.infos)


def test_a_read_only_state_says_what_it_is_once() -> None:
    # its docstring, "The current mid price (read-only).", without the "(read-only)" the
    # message says itself
    env = sekai.envs.finance.OptimalExecutionEnv()
    with pytest.raises(AttributeError) as info:
        env.mid = 1.0  # type: ignore[misc]
    assert str(info.value) == (
        "OptimalExecutionEnv.mid is read-only (The current mid price): it follows from the env's "
        "parameters or the simulation; set a parameter or reset() instead."
    )
