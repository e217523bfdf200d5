"""OptimalExecution-v0's price domain (finance.md §12.4; issue 30).

The Almgren–Chriss mid is arithmetic: s0 plus Brownian noise minus impact. With
``initial_inventory=1e7`` a block sale (or simply holding until the last step, which sells
everything) executed at a negative price; with ``sigma=30`` the mid itself wandered below 0.
The env now refuses, at construction and when a parameter is set, parameters whose
``price_floor`` ``s0 - ε - X0·max(γ, η/τ) - 5σ√T`` is not positive.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sekai.envs.finance._session import param
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.vector import OptimalExecutionVecEnv

NOISE = 5 * 0.95 * math.sqrt(5.0)  # 5 sigma sqrt(T) of the defaults


@pytest.mark.parametrize(
    ("kwargs", "floor"),
    [
        ({"initial_inventory": 1e7}, 50 - 0.0625 - 1e7 * 2.5e-6 / 0.2 - NOISE),
        ({"sigma": 30.0}, 50 - 0.0625 - 1e6 * 2.5e-6 / 0.2 - 5 * 30 * math.sqrt(5.0)),
        # permanent impact above temporary_impact / tau: all earlier sales move the mid
        ({"permanent_impact": 6e-5, "temporary_impact": 1e-5}, 50 - 0.0625 - 60 - NOISE),
    ],
    ids=["inventory", "sigma", "permanent"],
)
def test_parameters_that_let_the_price_reach_zero_are_refused(kwargs, floor) -> None:
    with pytest.raises(ValueError, match="execution price reach") as info:
        OptimalExecutionEnv(**kwargs)
    message = str(info.value)
    assert f"reach {floor:.6g} <= 0" in message
    assert "s0 > fixed_cost + initial_inventory * max(permanent_impact" in message


def test_a_price_floor_of_exactly_zero_is_refused() -> None:
    # s0 = initial_inventory * temporary_impact / tau, no noise and no fixed cost: 50 - 50 = 0
    with pytest.raises(ValueError, match=re.escape("let the execution price reach 0 <= 0. ")):
        OptimalExecutionEnv(
            s0=50.0,
            initial_inventory=1e6,
            temporary_impact=1e-5,
            permanent_impact=0.0,
            total_time=5.0,
            n_steps=25,
            sigma=0.0,
            fixed_cost=0.0,
        )


OTHER = "raise s0, or lower initial_inventory, the impacts or sigma."
OTHER_LEVERS = "Raise s0, or lower initial_inventory, the impacts or sigma."
STEPS = "(a larger tau lowers temporary_impact / tau)"
LONGER = "(a larger tau outweighs the added noise)"


def advice(kwargs: dict[str, float]) -> str:
    """The refusal's last sentence: the levers it offers."""
    with pytest.raises(ValueError, match="execution price reach") as info:
        OptimalExecutionEnv(**kwargs)
    head = f"sqrt({kwargs.get('total_time', 5.0)!r}). "
    message = str(info.value)
    assert head in message
    return message.split(head, 1)[1]


@pytest.mark.parametrize(
    ("kwargs", "levers"),
    [
        # a finer grid of the defaults: temporary_impact / tau binds; fewer steps lift the
        # floor, and so does a longer session, whose larger tau outweighs its added noise
        ({"n_steps": 100}, f"Use n_steps <= 78 {STEPS} or total_time=22.2938 {LONGER}; or {OTHER}"),
        (
            {"total_time": 1.0, "n_steps": 78},
            f"Use n_steps <= 18 {STEPS} or total_time=18.8907 {LONGER}; or {OTHER}",
        ),
        (
            {"initial_inventory": 1e7},
            f"Use n_steps <= 7 {STEPS} or total_time=41.0655 {LONGER}; or {OTHER}",
        ),
        # fewer than 3 steps would break temporary_impact > permanent_impact * tau / 2
        (
            {"initial_inventory": 4e6, "permanent_impact": 2.5e-6},
            f"Use 3 <= n_steps <= 19 {STEPS} or total_time=22.2938 {LONGER}; or {OTHER}",
        ),
        # one step already: only a longer session lifts it (and without noise, by more)
        ({"n_steps": 1, "total_time": 0.05}, f"Use total_time=1.03479 {LONGER}; or {OTHER}"),
        (
            {"n_steps": 1, "total_time": 0.04, "sigma": 0.0},
            f"Use total_time=10.0 (a larger tau); or {OTHER}",
        ),
        # the noise 5 * sigma * sqrt(total_time) alone exceeds s0: fewer steps only help, and
        # a longer session would lower the floor further, so it is not offered
        (
            {"sigma": 15.0},
            f"Fewer n_steps raise it {STEPS}, but n_steps=1 only to -118.268; {OTHER}",
        ),
        ({"sigma": 15.0, "n_steps": 1}, OTHER_LEVERS),
        # permanent_impact binds: a larger tau would not help
        ({"permanent_impact": 6e-5, "temporary_impact": 1e-5}, OTHER_LEVERS),
        ({"sigma": 30.0, "permanent_impact": 2e-5}, OTHER_LEVERS),
    ],
    ids=[
        "n_steps",
        "day_of_5_minutes",
        "inventory",
        "convexity",
        "one_step",
        "one_step_no_noise",
        "noise",
        "noise_one_step",
        "permanent",
        "sigma",
    ],
)
def test_the_refusal_offers_the_tau_levers_that_lift_the_floor(kwargs, levers) -> None:
    assert advice(kwargs) == levers


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_steps": 100},
        {"total_time": 1.0, "n_steps": 78},
        {"initial_inventory": 1e7},
        {"initial_inventory": 4e6, "permanent_impact": 2.5e-6},
        {"n_steps": 1, "total_time": 0.05},
        {"sigma": 15.0},
        {"sigma": 15.0, "total_time": 1.0},
    ],
)
def test_every_tau_lever_offered_works_at_its_bounds(kwargs) -> None:
    text = advice(kwargs)
    span = re.search(r"(?:(\d+) <= )?n_steps <= (\d+)", text)
    if span:
        least, most = int(span.group(1) or 1), int(span.group(2))
        for n in (least, most):
            assert OptimalExecutionEnv(**{**kwargs, "n_steps": n}).price_floor > 0
        for n in (least - 1, most + 1):
            if n >= 1:
                with pytest.raises(ValueError):
                    OptimalExecutionEnv(**{**kwargs, "n_steps": n})
    longer = re.search(r"total_time=([0-9.e+-]+) ", text)
    if longer:
        horizon = float(longer.group(1))
        assert horizon > kwargs.get("total_time", 5.0)
        assert OptimalExecutionEnv(**{**kwargs, "total_time": horizon}).price_floor > 0
    partial = re.search(r"n_steps=1 only to (\S+);", text)
    if partial:
        # fewer steps help, but even one leaves the floor <= 0, as the message says
        with pytest.raises(ValueError, match=f"reach {re.escape(partial.group(1))} <= 0"):
            OptimalExecutionEnv(**{**kwargs, "n_steps": 1})
    assert span or longer or partial


def test_a_longer_session_is_not_offered_where_its_noise_lowers_the_floor() -> None:
    # 5 * 15 * sqrt(T) outgrows what a larger tau saves: a longer session lowers the floor
    text = advice({"sigma": 15.0})
    assert "total_time" not in text
    floors = []
    for horizon in (5.0, 10.0):
        with pytest.raises(ValueError) as info:
            OptimalExecutionEnv(sigma=15.0, total_time=horizon)
        floors.append(float(re.search(r"reach (\S+) <= 0", str(info.value)).group(1)))
    assert floors[1] < floors[0]


def test_fewer_steps_is_the_lever_when_setting_n_steps_is_refused() -> None:
    levers = f"Use n_steps <= 78 {STEPS} or total_time=22.2938 {LONGER}; or {OTHER}"
    assert OptimalExecutionEnv(n_steps=78).price_floor > 0  # the lever offered works
    env = OptimalExecutionEnv()
    with pytest.raises(ValueError, match="setting n_steps let the execution price") as info:
        env.n_steps = 100
    assert str(info.value).endswith(levers) and env.n_steps == 25
    vec = OptimalExecutionVecEnv(2)
    with pytest.raises(ValueError, match="setting n_steps let the execution price") as info:
        vec.set_attr("n_steps", 100)
    assert str(info.value).endswith(levers)
    vec.close()


def test_the_default_parameters_are_well_inside_the_domain() -> None:
    env = OptimalExecutionEnv()
    expected = 50.0 - 0.0625 - 1e6 * (2.5e-6 / 0.2) - 5 * 0.95 * math.sqrt(5.0)
    assert env.price_floor == pytest.approx(expected, rel=1e-12)
    assert env.price_floor > 25.0


def test_holding_until_the_end_just_inside_the_domain_sells_at_a_positive_price() -> None:
    """The worst policy for the price (sell nothing, then everything at the last step) on a
    parameter set whose floor is barely positive (sigma 0: the floor is exact)."""
    env = OptimalExecutionEnv(initial_inventory=3.95e6, sigma=0.0, n_steps=25)
    assert 0 < env.price_floor < 1.0
    env.reset(seed=0)
    for _ in range(25):
        result = env.step(np.array([0.0], dtype=np.float32))
    assert result.terminated and result.info["shares_sold"] == 3.95e6
    assert result.info["execution_price"] == pytest.approx(env.price_floor, abs=1e-9)
    assert result.info["execution_price"] > 0


@pytest.mark.parametrize(("name", "value"), [("X0", 1e7), ("sigma", 30.0), ("s0", 10.0)])
def test_setting_a_parameter_out_of_the_domain_is_refused_and_undone(name, value) -> None:
    env = OptimalExecutionEnv()
    before = getattr(env, name)
    with pytest.raises(ValueError, match=f"setting {name} let the execution price reach"):
        setattr(env, name, value)
    assert getattr(env, name) == before
    vec = OptimalExecutionVecEnv(2)
    with pytest.raises(ValueError, match=f"setting {name} let the execution price reach"):
        vec.set_attr(name, value)
    assert vec.get_attr(name) == [before, before]
    vec.close()


@pytest.mark.parametrize(
    ("kwargs", "term"),
    [
        # the reward was -inf, silently
        (
            {"risk_aversion": 1e300},
            r"risk_aversion=1e\+300 make the risk penalty overflow float64: risk_aversion",
        ),
        # sigma**2 raised OverflowError in step()
        (
            {"sigma": 1e160, "s0": 1e170},
            r"sigma=1e\+160 makes sigma\*\*2 overflow float64: sigma\*\*2 reaches inf",
        ),
        # X0 s0 overflows: 1e4 (n (P - s0) - penalty) / (X0 s0) was NaN
        (
            {"initial_inventory": 1e200, "s0": 1e200, "temporary_impact": 1e-300},
            r"initial_inventory=1e\+200, s0=1e\+200 make the arrival value overflow float64: "
            r"initial_inventory \* s0 reaches inf",
        ),
    ],
    ids=["risk_aversion", "sigma", "notional"],
)
def test_parameters_whose_reward_overflows_are_refused_naming_the_term(kwargs, term) -> None:
    kwargs = {"permanent_impact": 0.0, **kwargs}
    message = rf"^OptimalExecution-v0: .*{term}.*, above float64's largest"
    with pytest.raises(ValueError, match=message):
        OptimalExecutionEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        OptimalExecutionVecEnv(2, **kwargs)


def test_an_arrival_value_inside_float64_is_accepted_with_finite_rewards() -> None:
    # X0 s0 = 1e305: 1e4 X0 s0 overflows, but a trade's cost is X0 (s0 - price_floor) at most
    env = OptimalExecutionEnv(s0=1e299)
    env.reset(seed=0)
    rewards = [env.step(np.array([0.3], np.float32)).reward for _ in range(25)]
    assert np.isfinite(rewards).all()
    with pytest.raises(ValueError, match="the arrival value overflow float64"):
        OptimalExecutionEnv(s0=1e303)


def test_setting_a_parameter_so_the_reward_overflows_is_refused_and_undone() -> None:
    env = OptimalExecutionEnv()
    with pytest.raises(ValueError, match="setting risk_aversion makes the risk penalty"):
        env.risk_aversion = 1e300
    assert env.risk_aversion == 1e-6
    vec = OptimalExecutionVecEnv(2)
    with pytest.raises(ValueError, match="setting risk_aversion makes the risk penalty"):
        vec.set_attr("risk_aversion", 1e300)
    assert vec.get_attr("risk_aversion") == [1e-6, 1e-6]
    vec.close()


def test_a_risk_penalty_just_inside_float64_gives_finite_rewards() -> None:
    # λσ²τX0² = 1e304 at x = X0 (the most left after a trade), times the reward's 1e4: 1e308
    lam = 1e304 / (0.95**2 * 0.2 * 1e12)
    env = OptimalExecutionEnv(risk_aversion=lam)
    env.reset(seed=0)
    reward = env.step(np.array([0.0], np.float32)).reward
    assert math.isfinite(reward) and reward == pytest.approx(-1e308 / 5e7, rel=1e-9)
    message = r"the reward in basis points overflow float64: 1e4 \* \(initial_inventory"
    with pytest.raises(ValueError, match=message):
        OptimalExecutionEnv(risk_aversion=lam * 2)


@pytest.mark.parametrize(
    ("kwargs", "reach"),
    [({"sigma": 1e308}, "-inf"), ({"fixed_cost": 1e308}, "-1e+308")],
    ids=["sigma", "fixed_cost"],
)
def test_a_floor_that_overflows_is_refused_with_the_domain_error(kwargs, reach) -> None:
    # 5 sigma sqrt(T) (or s0 - fixed_cost) overflowed while the advice was built: OverflowError
    message = rf"the parameters let the execution price reach {re.escape(reach)} <= 0"
    with pytest.raises(ValueError, match=message) as info:
        OptimalExecutionEnv(**kwargs)
    assert str(info.value).endswith(OTHER)
    with pytest.raises(ValueError, match=message):
        OptimalExecutionVecEnv(2, **kwargs)


@pytest.mark.parametrize(("name", "value"), [("sigma", 1e308), ("epsilon", 1e308)])
def test_setting_a_floor_that_overflows_is_refused_and_undone(name, value) -> None:
    env = OptimalExecutionEnv()
    before = getattr(env, name)
    with pytest.raises(ValueError, match=f"setting {name} let the execution price reach"):
        env.set_attr(name, value)
    assert env.get_attr(name) == before
    env.reset(seed=0)
    assert math.isfinite(env.step(np.array([0.5], np.float32)).reward)
    vec = OptimalExecutionVecEnv(2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=f"setting {name} let the execution price reach"):
        vec.set_attr(name, value)
    assert vec.get_attr(name) == [before, before]
    assert np.isfinite(vec.step(np.full((2, 1), 0.5, np.float32)).rewards).all()
    vec.close()


class _Checked:
    """A parameter whose cross-check fails with something other than a refusal."""

    level = param("ge0")

    def __init__(self) -> None:
        self._level = 1.0

    def _parameters_changed(self, name: str) -> None:
        if self._level > 10:
            raise OverflowError(f"{name} overflowed a check")


def test_a_parameter_set_whose_check_fails_in_any_way_keeps_the_old_value() -> None:
    holder = _Checked()
    with pytest.raises(OverflowError, match="level overflowed"):
        holder.level = 20.0
    assert holder.level == 1.0
    holder.level = 5.0
    assert holder.level == 5.0


TAU_ZERO = (
    r"OptimalExecution-v0: {head} tau, the period length total_time / n_steps, round to 0\.0 in "
    r"float64 \(total_time={total_time} / n_steps={n_steps}\), where it must be > 0\. Use a "
    r"larger total_time or fewer n_steps\."
)


def test_a_total_time_whose_tau_rounds_to_zero_is_refused() -> None:
    # tau = 5e-324 / 25 rounded to 0.0: the price floor divided by it (ZeroDivisionError)
    built = TAU_ZERO.format(head="the parameters make", total_time="5e-324", n_steps=25)
    with pytest.raises(ValueError, match=f"^{built}$"):
        OptimalExecutionEnv(total_time=5e-324)
    with pytest.raises(ValueError, match=f"^{built}$"):
        OptimalExecutionVecEnv(2, total_time=5e-324)
    env = OptimalExecutionEnv()
    set_time = TAU_ZERO.format(head="setting total_time makes", total_time="5e-324", n_steps=25)
    with pytest.raises(ValueError, match=f"^{set_time}$"):
        env.total_time = 5e-324
    assert env.total_time == 5.0
    env = OptimalExecutionEnv(
        total_time=1e-320, initial_inventory=1.0, temporary_impact=1e-320, permanent_impact=0.0
    )
    set_steps = TAU_ZERO.format(head="setting n_steps makes", total_time="1e-320", n_steps=10**10)
    with pytest.raises(ValueError, match=f"^{set_steps}$"):
        env.n_steps = 10**10
    assert env.n_steps == 25
    vec = OptimalExecutionVecEnv(2)
    with pytest.raises(ValueError, match=f"^{set_time}$"):
        vec.set_attr("total_time", 5e-324)
    assert vec.get_attr("total_time") == [5.0, 5.0]
    vec.close()


# The smallest positive sigma whose observed price move, at most permanent_impact * X0 /
# (sigma * sqrt(T)) + 5 in units of the horizon's noise, fits float32, at the defaults.
SMALLEST_SIGMA = 2.5e-7 * 1e6 / (math.sqrt(5.0) * (float(np.finfo(np.float32).max) - 5.0))
MOVE_OVERFLOWS = "make the observed price move overflow float32"


def _all_observations(env, fraction: float) -> list[np.ndarray]:
    """Every observation of an episode selling ``fraction`` of what is left each step."""
    observations = [env.reset(seed=0).observation]
    result = None
    while result is None or not result.done:
        result = env.step(np.array([fraction], np.float32))
        observations.append(result.observation)
    return observations


def test_a_sigma_so_small_the_observed_move_overflows_float32_is_refused() -> None:
    # sigma=1e-40 observed -inf: the permanent impact of the sale over sigma * sqrt(T)
    message = (
        rf"^OptimalExecution-v0: the parameters {MOVE_OVERFLOWS}: .* = 1\.118e\+39 on a "
        r"5-sigma path with sigma=1e-40, permanent_impact=2\.5e-07, initial_inventory=1000000\.0,"
        r" total_time=5\.0, above float32's largest value 3\.403e\+38\. sigma must be 0 or at "
        rf"least .* = {SMALLEST_SIGMA:.6g}: use a larger sigma"
    )
    with pytest.raises(ValueError, match=message):
        OptimalExecutionEnv(sigma=1e-40)
    with pytest.raises(ValueError, match=message):
        OptimalExecutionVecEnv(2, sigma=1e-40)
    with pytest.raises(ValueError, match=MOVE_OVERFLOWS):
        OptimalExecutionEnv(sigma=SMALLEST_SIGMA * (1 - 1e-9))


@pytest.mark.parametrize("fraction", [1.0, 0.3])
def test_the_smallest_sigma_observes_finite_moves(fraction: float) -> None:
    env = OptimalExecutionEnv(sigma=SMALLEST_SIGMA)
    observations = np.array(_all_observations(env, fraction))
    assert np.isfinite(observations).all() and observations[-1, 2] < -1e38
    assert all(env.observation_space.contains(obs) for obs in observations)
    vec = OptimalExecutionVecEnv(2, sigma=SMALLEST_SIGMA)
    vec.reset(seed=0)
    for _ in range(25):
        assert np.isfinite(vec.step(np.full((2, 1), fraction, np.float32)).observations).all()
    # sigma=0 observes no move; without permanent impact any positive sigma is observable
    for kwargs in ({"sigma": 0.0}, {"sigma": 1e-300, "permanent_impact": 0.0}):
        observations = np.array(_all_observations(OptimalExecutionEnv(**kwargs), fraction))
        assert np.isfinite(observations).all()


@pytest.mark.parametrize(("name", "value"), [("sigma", 1e-40), ("gamma", 1e-5), ("X0", 4e7)])
def test_setting_a_parameter_so_the_observed_move_overflows_is_refused_and_undone(
    name: str, value: float
) -> None:
    kwargs = {"sigma": 1e-39, "s0": 1e3}  # room for the larger impacts in the price domain
    env = OptimalExecutionEnv(**kwargs)
    before = getattr(env, name)
    refused = rf"^OptimalExecution-v0: setting {name} makes the observed price move overflow"
    with pytest.raises(ValueError, match=refused):
        setattr(env, name, value)
    assert getattr(env, name) == before
    vec = OptimalExecutionVecEnv(2, **kwargs)
    with pytest.raises(ValueError, match=refused):
        vec.set_attr(name, value)
    assert vec.get_attr(name) == [before, before]
    vec.close()
