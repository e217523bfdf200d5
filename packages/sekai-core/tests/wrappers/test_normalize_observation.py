"""NormalizeObservation: running/ewm stats, clip, Dict and MaskedBox leaves, freezing, errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import ExponentialMovingStats, RunningMeanStd
from sekai.utils._equal import structurally_equal
from sekai.wrappers import NormalizeObservation


def _walk(values: list[Any]) -> Any:
    it = iter(values)
    return lambda env: next(it)


def test_first_observation_normalises_to_zero_and_space_is_float64(toy_env: Any) -> None:
    env = NormalizeObservation(toy_env())
    assert repr(env.observation_space) == "Box(-inf, inf, (2,), float64)"
    obs = env.reset(seed=0).observation
    assert obs.dtype == np.float64
    np.testing.assert_array_equal(obs, [0.0, 0.0])
    assert isinstance(env.obs_rms, RunningMeanStd)
    assert env.update_running_mean is True


def test_running_stats_update_before_normalising(toy_env: Any) -> None:
    xs = [np.array([v, 2 * v], dtype=np.float32) for v in (1.0, 3.0, 8.0)]
    env = NormalizeObservation(toy_env(obs_fn=_walk(xs)), epsilon=1e-3)
    env.reset(seed=0)
    env.step(0)
    out = env.step(0).observation
    data = np.stack(xs).astype(np.float64)
    np.testing.assert_allclose(out, (data[-1] - data.mean(0)) / np.sqrt(data.var(0) + 1e-3))
    np.testing.assert_allclose(env.obs_rms.mean, data.mean(0))


def test_frozen_stats_do_not_change(toy_env: Any) -> None:
    env = NormalizeObservation(toy_env())
    env.reset(seed=0)
    env.step(0)
    env.update_running_mean = False
    before = env.obs_rms.state_dict()
    env.step(0)
    after = env.obs_rms.state_dict()
    np.testing.assert_array_equal(before["mean"], after["mean"])
    assert before["count"] == after["count"]


def test_clip_bounds_values_and_space(toy_env: Any) -> None:
    xs = [np.array([0.0, 0.0], np.float32)] * 20 + [np.array([100.0, -100.0], np.float32)]
    env = NormalizeObservation(toy_env(length=100, obs_fn=_walk(xs)), clip=2.0)
    assert repr(env.observation_space) == "Box(-2.0, 2.0, (2,), float64)"
    env.reset(seed=0)
    for _ in range(19):
        env.step(0)
    np.testing.assert_array_equal(env.step(0).observation, [2.0, -2.0])


def test_ewm_stats_follow_halflife(toy_env: Any) -> None:
    env = NormalizeObservation(toy_env(length=100), stats="ewm", halflife=3)
    assert isinstance(env.obs_rms, ExponentialMovingStats)
    assert env.obs_rms.halflife == 3
    env.reset(seed=0)
    env.step(0)
    assert env.obs_rms.count == 2


def test_dict_space_normalises_box_leaves_and_passes_others(toy_env: Any) -> None:
    space = sekai.Dict(
        a=sekai.Box(-5.0, 5.0, shape=(2,)),
        k=sekai.Discrete(3),
        t=sekai.Tuple([sekai.Box(0.0, 1.0, shape=()), sekai.MultiBinary(2)]),
    )
    env = NormalizeObservation(toy_env(observation_space=space))
    assert repr(env.observation_space) == (
        "Dict({a: Box(-inf, inf, (2,), float64), k: Discrete(3), "
        "t: Tuple(Box(-inf, inf, (), float64), MultiBinary(2))})"
    )
    assert isinstance(env.obs_rms["a"], RunningMeanStd)
    assert env.obs_rms["k"] is None
    assert isinstance(env.obs_rms["t"][0], RunningMeanStd) and env.obs_rms["t"][1] is None
    obs = env.reset(seed=0).observation
    np.testing.assert_array_equal(obs["a"], [0.0, 0.0])
    assert obs["k"] in space["k"]
    assert obs in env.observation_space


def test_masked_box_stats_use_occupied_slots_only(toy_env: Any) -> None:
    space = sekai.MaskedBox(-10.0, 10.0, shape=(1,), max_size=3)
    first = space.pack(np.array([[1.0], [3.0]]), slots=[0, 2])
    second = space.pack(np.array([[5.0]]), slots=[1])
    env = NormalizeObservation(toy_env(observation_space=space, obs_fn=_walk([first, second])))
    assert repr(env.observation_space) == "MaskedBox(-inf, inf, (1,), max_size=3, float64)"
    obs = env.reset(seed=0).observation
    np.testing.assert_allclose(obs["values"][:, 0], [-1.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_array_equal(obs["mask"], [1, 0, 1])
    obs = env.step(0).observation
    np.testing.assert_allclose(env.obs_rms.mean, [3.0])
    np.testing.assert_allclose(obs["values"][:, 0], [0.0, 2.0 / np.sqrt(8.0 / 3.0), 0.0], atol=1e-6)
    assert obs in env.observation_space


def test_clip_bounds_masked_box_values_and_space(toy_env: Any) -> None:
    space = sekai.MaskedBox(-100.0, 100.0, shape=(1,), max_size=3)
    calm = space.pack(np.array([[0.0], [0.0]]), slots=[0, 2])
    spike = space.pack(np.array([[100.0], [-100.0]]), slots=[0, 2])
    env = NormalizeObservation(
        toy_env(length=100, observation_space=space, obs_fn=_walk([calm] * 20 + [spike])),
        clip=2.0,
    )
    assert repr(env.observation_space) == "MaskedBox(-2.0, 2.0, (1,), max_size=3, float64)"
    env.reset(seed=0)
    for _ in range(19):
        env.step(0)
    obs = env.step(0).observation
    np.testing.assert_array_equal(obs["values"][:, 0], [2.0, 0.0, -2.0])
    assert obs in env.observation_space


def test_state_dict_round_trip(toy_env: Any) -> None:
    env = NormalizeObservation(toy_env())
    env.reset(seed=0)
    env.step(0)
    state = env.state_dict()
    other = NormalizeObservation(toy_env())
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.obs_rms.mean, env.obs_rms.mean)
    assert other.obs_rms.count == env.obs_rms.count


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_load_state_dict_of_another_state_names_the_wrapper_and_the_missing_key(
    toy_env: Any, vector: bool
) -> None:
    env = (
        sekai.VecNormalizeObservation(sekai.SyncVecEnv([toy_env] * 2))
        if vector
        else NormalizeObservation(toy_env())
    )
    owner = type(env).__name__
    with pytest.raises(KeyError) as missing:
        env.load_state_dict({})
    assert missing.value.args[0] == (
        f"{owner}: state is missing 'obs_rms' (state_dict() returns {{'obs_rms': ...}}), got "
        "an empty dict."
    )
    with pytest.raises(KeyError) as other:
        env.load_state_dict({"return_rms": {}})
    assert other.value.args[0].endswith("got a dict with keys ['return_rms'].")
    with pytest.raises(TypeError) as not_a_dict:
        env.load_state_dict(None)
    assert not_a_dict.value.args[0] == (
        f"{owner}: state must be the dict state_dict() returns ({{'obs_rms': ...}}), got NoneType."
    )


def test_load_state_dict_refuses_the_statistics_of_the_other_kind(toy_env: Any) -> None:
    env = NormalizeObservation(toy_env(), stats="ewm", halflife=10)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(
        ValueError,
        match=r"^NormalizeObservation: state\['obs_rms'\]: RunningMeanStd cannot load .* "
        r"stats='running'",
    ):
        NormalizeObservation(toy_env()).load_state_dict(env.state_dict())
    with pytest.raises(
        ValueError,
        match=r"^NormalizeObservation: state\['obs_rms'\]: ExponentialMovingStats cannot load "
        r".* stats='ewm'",
    ):
        env.load_state_dict(NormalizeObservation(toy_env()).state_dict())


def test_load_state_dict_of_a_dict_space_into_a_box_one_says_the_structure_differs(
    toy_env: Any,
) -> None:
    saved = NormalizeObservation(
        toy_env(observation_space=sekai.Dict(a=sekai.Box(-1.0, 1.0, shape=(2,))))
    ).state_dict()
    message = (
        "NormalizeObservation: state['obs_rms'] must be the statistics of a leaf of shape (2,) "
        "(a dict with 'mean', 'var' and 'count'), got a dict with keys ['a']: the saved state's "
        "structure does not match this wrapper's observation space."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        NormalizeObservation(toy_env()).load_state_dict(saved)


@pytest.mark.parametrize("part", [None, [1.0], "stats"])
def test_load_state_dict_of_statistics_that_are_no_dict_is_a_type_error(
    toy_env: Any, part: Any
) -> None:
    # As the reward normaliser's and the statistics' own load_state_dict.
    message = (
        "NormalizeObservation: state['obs_rms'] must be the statistics of a leaf of shape (2,) "
        f"(a dict with 'mean', 'var' and 'count'), got {type(part).__name__}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        NormalizeObservation(toy_env()).load_state_dict({"obs_rms": part})


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
@pytest.mark.parametrize(
    ("space", "spoil", "message"),
    [
        (
            sekai.Dict(price=sekai.Box(-9.0, 9.0, shape=(3,)), cash=sekai.Box(-9.0, 9.0, (1,))),
            lambda state: state["cash"].update(mean=np.zeros(2)),  # a slightly different env's
            r"state\['obs_rms'\]\['cash'\]\['mean'\] has shape \(2,\), expected \(1,\) \(the shape "
            r"of one sample\)\.",
        ),
        (
            sekai.Tuple(
                [sekai.Box(-9.0, 9.0, (3,)), sekai.Discrete(2), sekai.Box(-9.0, 9.0, (1,))]
            ),
            lambda state: state[2].update(count=-1),
            r"state\['obs_rms'\]\[2\]\['count'\] must be finite and >= 0, got -1\.0\.",
        ),
    ],
    ids=["dict", "tuple"],
)
def test_load_state_dict_is_all_or_nothing_and_names_the_failing_part(
    toy_env: Any, vector: bool, space: sekai.Space[Any], spoil: Any, message: str
) -> None:
    def build() -> Any:
        if vector:
            return sekai.VecNormalizeObservation(
                sekai.SyncVecEnv([lambda: toy_env(observation_space=space, length=100)] * 2)
            )
        return NormalizeObservation(toy_env(observation_space=space, length=100))

    old = build()
    old.reset(seed=0)
    for _ in range(9):
        old.step(np.zeros(2, dtype=np.int64) if vector else 0)
    checkpoint = old.state_dict()
    spoil(checkpoint["obs_rms"])
    new = build()
    before = new.state_dict()
    with pytest.raises(ValueError, match=rf"^{type(new).__name__}: {message}$"):
        new.load_state_dict(checkpoint)
    # No part was loaded: the parts before the failing one keep their statistics too.
    assert structurally_equal(new.state_dict(), before)


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_a_dict_space_with_an_extra_key_is_refused_by_load_state_dict_and_obs_rms(
    toy_env: Any, vector: bool
) -> None:
    # The statistics of an env whose Dict observation has one more key: nothing is half-loaded.
    narrow = sekai.Dict(a=sekai.Box(-9.0, 9.0, shape=(2,)))
    wide = sekai.Dict(a=sekai.Box(-9.0, 9.0, shape=(2,)), b=sekai.Box(-9.0, 9.0, shape=(3,)))

    def build(space: sekai.Space[Any]) -> Any:
        if vector:
            return sekai.VecNormalizeObservation(
                sekai.SyncVecEnv([lambda: toy_env(observation_space=space, length=100)] * 2)
            )
        return NormalizeObservation(toy_env(observation_space=space, length=100))

    old = build(wide)
    old.reset(seed=0)
    old.step(np.zeros(2, dtype=np.int64) if vector else 0)
    checkpoint = old.state_dict()
    new = build(narrow)
    before = new.state_dict()
    owner = type(new).__name__
    message = f"{owner}: state['obs_rms'] must be a dict with keys ['a'], got "
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        new.load_state_dict(checkpoint)
    assert structurally_equal(new.state_dict(), before)

    kept = new.obs_rms["a"]
    stats = {"a": RunningMeanStd(shape=(2,)), "extra": None}
    message = f"{owner}: obs_rms must be a dict with keys ['a'], got {stats!r}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        new.obs_rms = stats
    assert new.obs_rms["a"] is kept and set(new.obs_rms) == {"a"}


def test_rejects_unknown_stats(toy_env: Any) -> None:
    with pytest.raises(ValueError, match=r"^stats must be 'running' or 'ewm', got 'foo'\.$"):
        NormalizeObservation(toy_env(), stats="foo")


def test_rejects_non_positive_clip(toy_env: Any) -> None:
    with pytest.raises(ValueError, match=r"^clip must be positive, got 0\.$"):
        NormalizeObservation(toy_env(), clip=0)


def test_rejects_space_without_box(toy_env: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"needs at least one Box or MaskedBox in the observation space, got Discrete\(3\)\.$",
    ):
        NormalizeObservation(toy_env(observation_space=sekai.Discrete(3)))


def test_rejects_bad_halflife(toy_env: Any) -> None:
    with pytest.raises(ValueError, match="halflife"):
        NormalizeObservation(toy_env(), stats="ewm", halflife=0)


def test_obs_rms_set_through_the_stack_is_used(toy_env: Any) -> None:
    # gymnasium's evaluation idiom: normalise with the training run's statistics.
    train = NormalizeObservation(toy_env(length=100))
    train.reset(seed=0)
    for _ in range(4):
        train.step(0)
    train.update_running_mean = False
    evaluation = sekai.TimeLimit(NormalizeObservation(toy_env(length=100)), 50)
    evaluation.set_attr("update_running_mean", False)
    evaluation.set_attr("obs_rms", train.obs_rms)
    assert evaluation.get_attr("obs_rms") is train.obs_rms
    np.testing.assert_array_equal(
        evaluation.reset(seed=0).observation, train.reset(seed=0).observation
    )
    np.testing.assert_array_equal(evaluation.step(0).observation, train.step(0).observation)


def test_nested_obs_rms_assignment_is_used_and_checked_against_the_space(toy_env: Any) -> None:
    space = sekai.Dict(
        a=sekai.Box(-5.0, 5.0, shape=(2,)),
        k=sekai.Discrete(3),
        t=sekai.Tuple([sekai.Box(0.0, 1.0, shape=()), sekai.MultiBinary(2)]),
    )
    raw = {
        "a": np.array([3.0, -1.0], np.float32),
        "k": 1,
        "t": (np.float32(0.5), np.array([1, 0], np.int8)),
    }
    env = NormalizeObservation(toy_env(observation_space=space, obs_fn=lambda e: raw))
    env.update_running_mean = False
    a = RunningMeanStd(shape=(2,))
    a.update(np.array([[1.0, 1.0], [3.0, 3.0]]))
    t0 = ExponentialMovingStats(shape=(), halflife=5)
    t0.update(np.array([2.0]))
    env.obs_rms = {"a": a, "k": None, "t": [t0, None]}
    assert env.obs_rms["a"] is a and env.obs_rms["t"][0] is t0
    obs = env.reset(seed=0).observation
    np.testing.assert_allclose(obs["a"], a.normalize(raw["a"], 1e-8))
    np.testing.assert_allclose(obs["t"][0], t0.normalize(0.5, 1e-8))

    prefix = "NormalizeObservation: obs_rms"
    with pytest.raises(
        ValueError, match=re.escape(f"{prefix} must be a dict with keys ['a', 'k', 't']")
    ):
        env.obs_rms = {"a": a}
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"{prefix}['t'][0] must be a RunningMeanStd or ExponentialMovingStats of shape (), "
            "got 0.5."
        ),
    ):
        env.obs_rms = {"a": a, "k": None, "t": [0.5, None]}
    with pytest.raises(ValueError, match=re.escape(f"{prefix}['a'] has shape (), expected (2,).")):
        env.obs_rms = {"a": t0, "k": None, "t": [t0, None]}
    with pytest.raises(ValueError, match=re.escape(f"{prefix}['k'] must be None")):
        env.obs_rms = {"a": a, "k": a, "t": [t0, None]}
    with pytest.raises(ValueError, match=re.escape(f"{prefix}['t'] must be a list of 2 entries")):
        env.obs_rms = {"a": a, "k": None, "t": [t0]}
    assert env.obs_rms["a"] is a and env.obs_rms["t"][0] is t0  # failed assignments change nothing


class _ScalarEnv(sekai.Env[Any, int]):
    """One float in a shape () Box, alone and inside a Dict."""

    def __init__(self) -> None:
        leaf = sekai.Box(-10.0, 10.0, shape=(), dtype=np.float32)
        self.observation_space = sekai.Dict({"x": leaf, "y": leaf})
        self.action_space = sekai.Discrete(2)

    def _obs(self) -> Any:
        return {"x": np.float32(self.rng.uniform(-10, 10)), "y": np.float32(-10.0)}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(self._obs(), {})

    def step(self, action: int) -> sekai.StepResult[Any]:
        return sekai.StepResult(self._obs(), 0.0, False, False, {})


def test_clip_of_a_scalar_box_leaf() -> None:
    env = NormalizeObservation(_ScalarEnv(), clip=0.5)
    assert env.reset(seed=0).observation["x"] == 0.0
    for _ in range(20):
        obs = env.step(0).observation
        assert obs in env.observation_space
        assert abs(obs["x"]) <= 0.5


_ADVICE = "Fix the env, or replace or rescale such values before normalising, e.g. with a "
_POISON = (
    r"\. A NaN or infinite value would make the statistics NaN for good, and everything "
    r"normalised with them, so nothing was updated\. "
)


def _glitch(bad: float | None, at_step: int) -> Any:
    """Observations {price: [t, t, t], cash: [t]}; ``bad`` in cash at step ``at_step``."""

    def obs(env: Any) -> Any:
        cash = bad if bad is not None and env.t == at_step else float(env.t)
        return {"price": np.full(3, env.t, np.float32), "cash": np.array([cash], np.float32)}

    return obs


_PRICE_CASH = sekai.Dict(price=sekai.Box(-9.0, 9.0, (3,)), cash=sekai.Box(-9.0, 9.0, (1,)))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_observation_is_refused_before_any_statistics_change(
    toy_env: Any, bad: float
) -> None:
    env = NormalizeObservation(
        toy_env(observation_space=_PRICE_CASH, length=100, obs_fn=_glitch(bad, 2))
    )
    env.reset(seed=0)
    env.step(0)
    before = env.state_dict()
    message = rf"^NormalizeObservation: observation\['cash'\]\[0\] is {bad}{_POISON}"
    with pytest.raises(ValueError, match=message + re.escape(_ADVICE + "TransformObservation.")):
        env.step(0)
    # 'price' comes first and was finite: it is not updated either.
    assert structurally_equal(env.state_dict(), before)
    obs = env.step(0).observation  # the statistics are still usable
    assert np.isfinite(obs["cash"]).all() and np.isfinite(env.obs_rms["cash"].var).all()


def test_a_non_finite_observation_of_one_sub_env_is_refused_naming_it(toy_env: Any) -> None:
    def make(index: int) -> Any:
        bad = float("nan") if index == 1 else None
        return lambda: toy_env(observation_space=_PRICE_CASH, length=100, obs_fn=_glitch(bad, 2))

    vec = sekai.VecNormalizeObservation(sekai.SyncVecEnv([make(0), make(1)]))
    vec.reset(seed=0)
    vec.step(np.zeros(2, dtype=np.int64))
    before = vec.state_dict()
    message = rf"^VecNormalizeObservation: sub-env 1's observation\['cash'\]\[0\] is nan{_POISON}"
    with pytest.raises(ValueError, match=message + re.escape(_ADVICE + "VecTransformObservation.")):
        vec.step(np.zeros(2, dtype=np.int64))
    assert structurally_equal(vec.state_dict(), before)
    # sub-env 0 was healthy and stays so: the next step normalises both to finite values
    assert np.isfinite(vec.step(np.zeros(2, dtype=np.int64)).observations["cash"]).all()


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_frozen_statistics_normalise_a_non_finite_observation_without_checking(
    toy_env: Any, vector: bool
) -> None:
    # Frozen statistics only transform: NaN in, NaN out (for that value only).
    def make() -> Any:
        return toy_env(observation_space=_PRICE_CASH, length=100, obs_fn=_glitch(np.nan, 1))

    if vector:
        env: Any = sekai.VecNormalizeObservation(sekai.SyncVecEnv([make] * 2))
    else:
        env = NormalizeObservation(make())
    env.reset(seed=0)
    env.update_running_mean = False
    before = env.state_dict()
    result = env.step(np.zeros(2, dtype=np.int64) if vector else 0)
    obs = result.observations if vector else result.observation
    assert np.isnan(obs["cash"]).all() and np.isfinite(obs["price"]).all()
    assert structurally_equal(env.state_dict(), before)


_PRICE_CASH_64 = sekai.Dict(
    price=sekai.Box(-np.inf, np.inf, (3,), np.float64),
    cash=sekai.Box(-np.inf, np.inf, (1,), np.float64),
)


def _far_cash(far: bool) -> Any:
    """Float64 observations {price: [t, t, t], cash: [t]}, cash 1e300 at step 2 if ``far``."""

    def obs(env: Any) -> Any:
        cash = 1e300 if far and env.t == 2 else float(env.t)
        return {"price": np.full(3, float(env.t)), "cash": np.array([cash])}

    return obs


_OVERFLOW = (
    r", which would take the statistics' variance past float64's range for good, and everything "
    r"normalised with them, so nothing was updated\. "
)


@pytest.mark.parametrize("stats", ["running", "ewm"])
def test_a_finite_observation_that_would_overflow_the_statistics_is_refused(
    toy_env: Any, stats: str
) -> None:
    # 1e300 from a mean near 1: the square of the difference is past float64's range, and the
    # variance would stay inf (every later observation normalised to 0) for good.
    env = NormalizeObservation(
        toy_env(observation_space=_PRICE_CASH_64, length=100, obs_fn=_far_cash(True)),
        stats=stats,
    )
    env.reset(seed=0)
    env.step(0)
    before = env.state_dict()
    message = rf"^NormalizeObservation: observation\['cash'\]\[0\] is 1e\+300{_OVERFLOW}"
    with pytest.raises(ValueError, match=message + re.escape(_ADVICE + "TransformObservation.")):
        env.step(0)
    # 'price' comes first and was in range: it is not updated either.
    assert structurally_equal(env.state_dict(), before)
    NormalizeObservation(toy_env(observation_space=_PRICE_CASH_64), stats=stats).load_state_dict(
        before
    )
    obs = env.step(0).observation  # the statistics are still usable
    assert obs["cash"][0] > 0 and np.isfinite(env.obs_rms["cash"].var).all()


def test_a_finite_observation_of_one_sub_env_that_would_overflow_is_refused_naming_it(
    toy_env: Any,
) -> None:
    def make(index: int) -> Any:
        return lambda: toy_env(
            observation_space=_PRICE_CASH_64, length=100, obs_fn=_far_cash(index == 1)
        )

    vec = sekai.VecNormalizeObservation(sekai.SyncVecEnv([make(0), make(1)]))
    vec.reset(seed=0)
    vec.step(np.zeros(2, dtype=np.int64))
    before = vec.state_dict()
    message = (
        rf"^VecNormalizeObservation: sub-env 1's observation\['cash'\]\[0\] is 1e\+300{_OVERFLOW}"
    )
    with pytest.raises(ValueError, match=message + re.escape(_ADVICE + "VecTransformObservation.")):
        vec.step(np.zeros(2, dtype=np.int64))
    assert structurally_equal(vec.state_dict(), before)
    assert np.isfinite(vec.step(np.zeros(2, dtype=np.int64)).observations["cash"]).all()
