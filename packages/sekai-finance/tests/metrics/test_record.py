"""RecordPerformance."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance.metrics import PnLSummary, RecordPerformance, VecRecordPerformance
from sekai.vector import SyncVecEnv


class Ledger(sekai.Env[np.ndarray, int]):
    """A tiny env whose equity follows a fixed list."""

    def __init__(
        self,
        equities: list[float],
        key: str = "equity",
        dt: float | None = None,
        costed: tuple[int, ...] | None = None,
        start: float | None = None,
    ) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (1,))
        self.action_space = sekai.Discrete(2)
        self.equities = equities
        self.key = key
        self.dt = dt
        self.costed = costed  # the steps whose info has turnover and cost (None: every one)
        self.start = start  # the reset info's value (None: 1.0 for equity, 0.0 for wealth)

    def _info(self, value: Any) -> dict[str, Any]:
        info: dict[str, Any] = {self.key: value}
        if self.costed is None or getattr(self, "t", 0) in self.costed:
            info.update(turnover=0.5, cost=0.001)
        if self.dt is not None:
            info["dt"] = self.dt
        return info

    def reset(self, *, seed=None, options=None):
        self.t = 0
        start = self.start
        if start is None:
            start = 1.0 if self.key == "equity" else 0.0
        return sekai.ResetResult(np.zeros(1, np.float32), self._info(start))

    def step(self, action):
        self.t += 1
        done = self.t >= len(self.equities)
        return sekai.StepResult(
            np.zeros(1, np.float32), 0.0, False, done, self._info(self.equities[self.t - 1])
        )


def run(env: sekai.Env, steps: int) -> dict[str, Any]:
    env.reset()
    info: dict[str, Any] = {}
    for _ in range(steps):
        info = env.step(0).info
    return info


def test_equity_mode_attaches_summary_at_the_end():
    env = RecordPerformance(Ledger([1.1, 0.99, 1.2]))
    info = run(env, 3)
    summary = info["performance"]
    assert summary.total_return == pytest.approx(0.2)
    assert env.last_returns == pytest.approx([0.1, 0.99 / 1.1 - 1, 1.2 / 0.99 - 1])
    assert summary.mean_turnover == 0.5 and summary.total_cost == pytest.approx(0.003)
    assert env.summary()["total_return"] == pytest.approx(0.2)


def test_wipe_out_records_minus_one_then_zeros():
    env = RecordPerformance(Ledger([0.5, 0.0, 0.0]))
    run(env, 3)
    assert env.last_returns.tolist() == [-0.5, -1.0, 0.0]


def test_pnl_mode_records_increments():
    env = RecordPerformance(Ledger([2.0, 1.0, 4.0], key="wealth"), pnl_key="wealth")
    info = run(env, 3)
    assert isinstance(info["performance"], PnLSummary)
    assert env.last_returns.tolist() == [2.0, -1.0, 3.0]


def test_periods_per_year_defaults_to_one_over_dt():
    env = RecordPerformance(Ledger([1.1, 1.21], dt=0.5))
    summary = run(env, 2)["performance"]
    assert summary.annualized_return == pytest.approx(1.1**2 - 1)


@pytest.mark.parametrize(
    ("dt", "error", "message"),
    [
        (0.0, ValueError, "info['dt'] must be > 0 (years per step) to annualise, got 0.0"),
        (-0.5, ValueError, "info['dt'] must be > 0 (years per step) to annualise, got -0.5"),
        (float("nan"), ValueError, "info['dt'] must be finite, got nan"),
        ("1/252", TypeError, "info['dt'] must be a number (one per step), got str"),
    ],
)
def test_a_dt_that_cannot_annualise_is_refused_not_replaced_by_252(
    dt: Any, error: type[Exception], message: str
) -> None:
    env = RecordPerformance(Ledger([1.1], dt=dt))
    with pytest.raises(error, match=re.escape(message)):
        env.reset()


def test_an_explicit_periods_per_year_ignores_the_infos_dt():
    env = RecordPerformance(Ledger([1.1, 1.21], dt=0.0), periods_per_year=2.0)
    summary = run(env, 2)["performance"]
    assert summary.annualized_return == pytest.approx(1.1**2 - 1)


def test_mid_episode_reset_discards_the_unfinished_episode():
    env = RecordPerformance(Ledger([1.1, 1.2, 1.3]))
    env.reset()
    env.step(0)
    run(env, 3)
    assert len(env.summaries) == 1 and env.last_returns.size == 3


def test_around_autoreset_reads_final_and_reset_infos():
    env = RecordPerformance(sekai.AutoReset(Ledger([1.1, 1.21])))
    env.reset()
    env.step(0)
    info = env.step(0).info
    assert info["performance"].total_return == pytest.approx(0.21)
    env.step(0)
    info = env.step(0).info
    assert len(env.summaries) == 2 and info["performance"].n_periods == 2


def test_around_autoreset_the_next_episode_starts_from_the_reset_equity():
    env = RecordPerformance(sekai.AutoReset(Ledger([2.2, 2.42], start=2.0)))
    env.reset()
    for _ in range(4):
        env.step(0)
    assert len(env.summaries) == 2
    assert env.last_returns == pytest.approx([0.1, 0.1])  # 2.0 -> 2.2, not 1.0 -> 2.2


def test_vector_sub_envs_start_from_their_reset_equity_and_annualise_with_their_dt():
    vec = VecRecordPerformance(
        SyncVecEnv(
            [
                lambda: Ledger([2.2, 2.42], dt=0.5, start=2.0),
                lambda: Ledger([1.1, 1.21, 1.331], dt=0.25, start=1.0),
            ]
        )
    )
    vec.reset()
    for _ in range(3):
        vec.step(np.array([0, 0]))
    assert vec.last_env_index == 1 and vec.last_periods_per_year == 4.0
    for _ in range(2):  # sub-env 0's second episode, after its autoreset
        vec.step(np.array([0, 0]))
    assert vec.last_env_index == 0 and vec.last_periods_per_year == 2.0
    assert vec.last_returns == pytest.approx([0.1, 0.1])  # from the reset equity 2.0


def test_turnover_and_cost_at_some_steps_only_are_refused_not_summarised_in_part():
    # A summary of part of the periods would pair, say, 2 turnovers with 3 returns silently.
    with pytest.raises(KeyError, match=r"no 'turnover' at step 3 .* turnover_key=None"):
        run(RecordPerformance(Ledger([1.1, 0.99, 1.2], costed=(0, 1, 2))), 3)
    with pytest.raises(
        ValueError, match=r"'turnover'\] appeared at step 2 of the episode but step 1 had none"
    ):
        run(RecordPerformance(Ledger([1.1, 0.99, 1.2], costed=(2, 3))), 2)
    env = RecordPerformance(Ledger([1.1, 0.99, 1.2], costed=(0, 1, 2)), turnover_key=None)
    with pytest.raises(KeyError, match=r"no 'cost' at step 3 .* cost_key=None"):
        run(env, 3)
    summary = run(RecordPerformance(Ledger([1.1, 0.99], costed=())), 2)["performance"]
    assert summary.mean_turnover is None and summary.total_cost is None  # never reported


def test_missing_key_and_bad_values():
    with pytest.raises(KeyError, match="available keys"):
        run(RecordPerformance(Ledger([1.1], key="value")), 1)
    with pytest.raises(ValueError):
        run(RecordPerformance(Ledger([np.nan])), 1)
    with pytest.raises(TypeError):
        run(RecordPerformance(Ledger(["x"])), 1)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        RecordPerformance(Ledger([1.0]), equity_key=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RecordPerformance(Ledger([1.0]), deque_size=0)


@pytest.mark.parametrize("env_id", ["MarketMaking-v0", "LimitOrderBook-v0"])
def test_missing_equity_beside_a_wealth_points_to_pnl_mode(env_id: str) -> None:
    # Market making has no equity to compound: its info reports a cumulative wealth from 0.
    env = RecordPerformance(sekai.make(env_id))
    env.reset(seed=0)
    with pytest.raises(KeyError, match=r"no 'equity'.*pass pnl_key='wealth'.*P&L mode"):
        env.step(env.action_space.sample())


def test_missing_equity_without_a_wealth_names_both_keys_to_pass() -> None:
    env = RecordPerformance(sekai.make("OptimalExecution-v0"))
    env.reset(seed=0)
    with pytest.raises(KeyError, match=r"no 'equity'.*'shortfall_bps'.*equity_key=.*pnl_key="):
        env.step(np.array([0.5], np.float32))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"periods_per_year": np.inf}, ValueError, "periods_per_year must be a finite number > 0"),
        ({"periods_per_year": "252"}, TypeError, "periods_per_year must be a finite number > 0"),
        ({"risk_free": np.nan}, ValueError, "risk_free must be a finite number"),
        ({"risk_free": True}, TypeError, "risk_free must be a finite number, got bool"),
        ({"risk_free": None}, TypeError, "risk_free must be a finite number, got NoneType"),
        ({"deque_size": "3"}, TypeError, "deque_size must be a positive int, got str"),
        ({"deque_size": 2.0}, TypeError, "deque_size must be a positive int, got float"),
    ],
)
def test_settings_are_checked_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        RecordPerformance(Ledger([1.0]), **kwargs)


def test_a_risk_free_rate_is_refused_in_pnl_mode_rather_than_ignored():
    # pnl_summary has no rate: a session's P&L in money has no capital to earn one on.
    with pytest.raises(ValueError, match=r"risk_free=0\.02 applies to returns.*pnl_key='wealth'"):
        RecordPerformance(sekai.make("MarketMaking-v0"), pnl_key="wealth", risk_free=0.02)
    env = RecordPerformance(sekai.make("MarketMaking-v0", n_steps=3), pnl_key="wealth")
    assert env.risk_free == 0.0  # the default stays accepted
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(np.array([1.0, 1.0], np.float32))
    assert isinstance(result.info["performance"], PnLSummary)


def test_async_path_records_too():
    import asyncio

    env = RecordPerformance(Ledger([1.1]))

    async def go():
        await env.async_reset()
        return await env.async_step(0)

    assert asyncio.run(go()).info["performance"].total_return == pytest.approx(0.1)


def test_an_info_key_holding_an_array_is_a_type_error_naming_it():
    wrapped = RecordPerformance(sekai.make("Portfolio-v0"), equity_key="weights")
    with pytest.raises(TypeError, match=r"info\['weights'\] must be a number.*shape \(6,\)"):
        wrapped.reset(seed=0)


@pytest.mark.parametrize(
    ("equity", "got"),
    [(np.array([True]), "ndarray of dtype bool"), (np.array(["1.0"]), "ndarray of dtype <U3")],
)
def test_a_one_entry_array_that_is_no_number_is_named_by_its_dtype(equity: Any, got: str) -> None:
    # a one-entry numeric array is taken: its shape is not what is wrong
    run(RecordPerformance(Ledger([np.array([1.1])])), 1)  # type: ignore[list-item]
    message = rf"^info\['equity'\] must be a number \(one per step\), got {got}\.$"
    with pytest.raises(TypeError, match=message):
        run(RecordPerformance(Ledger([equity])), 1)
