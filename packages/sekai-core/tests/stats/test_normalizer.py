"""ObservationNormalizer: the per-leaf statistics shared by the normalisation wrappers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import batch_space, concatenate
from sekai.stats import ExponentialMovingStats, RunningMeanStd
from sekai.stats.normalizer import ObservationNormalizer
from sekai.testing.envs import Drift
from sekai.utils._equal import structurally_equal


def test_batched_box_updates_with_whole_batch() -> None:
    norm = ObservationNormalizer(sekai.Box(-10.0, 10.0, shape=(2,)))
    batch = np.array([[1.0, 2.0], [3.0, 6.0]])
    out = norm.normalize(batch, batched=True)
    np.testing.assert_allclose(norm.stats.mean, [2.0, 4.0])
    np.testing.assert_allclose(out, [[-1.0, -1.0], [1.0, 1.0]], atol=1e-6)
    assert out.shape == (2, 2) and out.dtype == np.float64


def test_batched_dict_with_masked_box_matches_single_updates_in_count() -> None:
    masked = sekai.MaskedBox(-5.0, 5.0, shape=(1,), max_size=2)
    space = sekai.Dict(m=masked, k=sekai.Discrete(2))
    items = [
        {"m": masked.pack(np.array([[1.0]])), "k": 0},
        {"m": masked.pack(np.array([[3.0], [5.0]])), "k": 1},
    ]
    batch = concatenate(space, items)
    norm = ObservationNormalizer(space)
    out = norm.normalize(batch, batched=True)
    assert isinstance(norm.stats["m"], RunningMeanStd) and norm.stats["k"] is None
    np.testing.assert_allclose(norm.stats["m"].mean, [3.0])
    assert norm.stats["m"].count == 3
    assert out["m"]["values"].shape == (2, 2, 1)
    assert out["m"]["values"][0, 1, 0] == 0.0  # empty slot
    np.testing.assert_array_equal(out["k"], batch["k"])
    assert out in batch_space(norm.observation_space, 2)


def test_rows_pick_the_batch_rows_that_update_every_leaf() -> None:
    masked = sekai.MaskedBox(-5.0, 5.0, shape=(1,), max_size=2)
    space = sekai.Tuple([sekai.Box(-10.0, 10.0, shape=(2,)), masked])
    items = [
        (np.array([1.0, 2.0]), masked.pack(np.array([[1.0]]))),
        (np.array([7.0, 9.0]), masked.pack(np.array([[3.0], [5.0]]))),
        (np.array([3.0, 6.0]), masked.pack(np.array([[2.0]]))),
    ]
    batch = concatenate(space, items)
    norm = ObservationNormalizer(space)
    out = norm.normalize(batch, batched=True, rows=np.array([True, False, True]))
    box, slots = norm.stats
    np.testing.assert_allclose(box.mean, [2.0, 4.0])
    assert box.count == pytest.approx(2)
    np.testing.assert_allclose(slots.mean, [1.5])  # rows 0 and 2: one occupied slot each
    assert slots.count == pytest.approx(2)
    assert out[0].shape == (3, 2)  # every row is normalised, the skipped one too
    norm.normalize(batch, batched=True, rows=np.zeros(3, dtype=bool))
    assert box.count == pytest.approx(2)  # no row: no update


def test_ewm_counts_one_step_per_call() -> None:
    norm = ObservationNormalizer(sekai.Box(0.0, 1.0, shape=(3,)), stats="ewm", halflife=4)
    norm.normalize(np.zeros((8, 3)), batched=True)
    assert isinstance(norm.stats, ExponentialMovingStats) and norm.stats.count == 1


def test_update_false_leaves_stats() -> None:
    norm = ObservationNormalizer(sekai.Box(0.0, 1.0, shape=(1,)))
    norm.normalize(np.array([0.5]), update=False)
    assert norm.stats.count == pytest.approx(1e-4)


def test_state_dict_nested_round_trip_and_structure_check() -> None:
    space = sekai.Tuple([sekai.Box(0.0, 1.0, shape=(1,)), sekai.Discrete(2)])
    norm = ObservationNormalizer(space)
    norm.normalize((np.array([0.5]), 1))
    state = norm.state_dict()
    assert state[1] is None
    other = ObservationNormalizer(space)
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.stats[0].mean, [0.5])
    with pytest.raises(ValueError, match="list of 2 entries"):
        other.load_state_dict([state[0]])


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf")])
@pytest.mark.parametrize(
    "build",
    [
        lambda eps: sekai.NormalizeObservation(Drift(), epsilon=eps),
        lambda eps: sekai.VecNormalizeObservation(sekai.SyncVecEnv([Drift] * 2), epsilon=eps),
    ],
)
def test_epsilon_must_be_finite_and_positive(build: Any, epsilon: float) -> None:
    with pytest.raises(ValueError, match=r"^epsilon must be finite and > 0, got "):
        build(epsilon)


def test_epsilon_must_be_a_number() -> None:
    with pytest.raises(TypeError, match=r"^epsilon must be a number, got str\.$"):
        ObservationNormalizer(sekai.Box(0.0, 1.0, shape=(1,)), epsilon="1e-8")  # type: ignore[arg-type]


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_assigned_obs_rms_and_epsilon_are_the_ones_used(vector: bool) -> None:
    def make() -> Any:
        return sekai.SyncVecEnv([Drift] * 2) if vector else Drift()

    def first_obs(env: Any) -> Any:
        result = env.reset(seed=5)
        return result.observations if vector else result.observation

    wrap = sekai.VecNormalizeObservation if vector else sekai.NormalizeObservation
    env = wrap(make())
    trained = RunningMeanStd(shape=(1,))
    trained.update(np.array([[3.0], [5.0]]))  # mean 4, var 1
    env.update_running_mean = False
    env.obs_rms = trained
    env.epsilon = 3.0
    assert env.obs_rms is trained and env.epsilon == 3.0
    np.testing.assert_allclose(first_obs(env), (first_obs(make()) - 4.0) / 2.0)
    assert trained.count == 2  # frozen: the assigned statistics are not updated


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_obs_rms_and_epsilon_of_the_wrong_kind_are_refused(vector: bool) -> None:
    env = (
        sekai.VecNormalizeObservation(sekai.SyncVecEnv([Drift] * 2))
        if vector
        else sekai.NormalizeObservation(Drift())
    )
    owner = type(env).__name__
    before = env.obs_rms
    with pytest.raises(
        ValueError, match=rf"^{owner}: obs_rms has shape \(2,\), expected \(1,\)\.$"
    ):
        env.obs_rms = RunningMeanStd(shape=(2,))
    with pytest.raises(TypeError, match=rf"^{owner}: obs_rms must be a RunningMeanStd or "):
        env.obs_rms = {"x": before}
    with pytest.raises(ValueError, match=r"^epsilon must be finite and > 0, got 0\.0\.$"):
        env.epsilon = 0.0
    assert env.obs_rms is before and env.epsilon == 1e-8


def test_a_non_finite_value_names_the_sub_env_the_leaf_and_the_slot() -> None:
    masked = sekai.MaskedBox(-5.0, 5.0, shape=(2,), max_size=3)
    space = sekai.Dict(m=masked, t=sekai.Tuple([sekai.Box(-9.0, 9.0, shape=()), sekai.Discrete(2)]))
    items = [{"m": masked.pack(np.ones((2, 2))), "t": (1.0, 0)} for _ in range(3)]
    batch = concatenate(space, items)
    norm = ObservationNormalizer(space, owner="VecNormalizeObservation")
    before = norm.state_dict()
    batch["m"]["values"][2, 1, 0] = np.nan  # sub-env 2, occupied slot 1, feature 0
    with pytest.raises(
        ValueError,
        match=r"^VecNormalizeObservation: sub-env 2's observation\['m'\]\['values'\]\[1, 0\] is "
        r"nan\. .* e\.g\. with a VecTransformObservation\.$",
    ):
        norm.normalize(batch, batched=True)
    assert structurally_equal(norm.state_dict(), before)
    # A row that does not update the statistics (a frozen sub-env) is not checked: its
    # value is normalised to NaN, and the statistics take the other rows.
    out = norm.normalize(batch, batched=True, rows=np.array([True, True, False]))
    assert np.isnan(out["m"]["values"][2, 1, 0]) and norm.stats["m"].count == 4
    batch["t"][0][1] = np.inf
    with pytest.raises(
        ValueError, match=r"^VecNormalizeObservation: sub-env 1's observation\['t'\]\[0\] is inf\. "
    ):
        norm.normalize(batch, batched=True, rows=np.array([True, True, False]))


def test_a_non_finite_value_in_an_empty_slot_is_ignored() -> None:
    masked = sekai.MaskedBox(-5.0, 5.0, shape=(1,), max_size=2)
    norm = ObservationNormalizer(masked)
    obs = masked.pack(np.array([[1.0]]))
    obs["values"][1, 0] = np.nan  # an empty slot: not part of the observation's data
    out = norm.normalize(obs)
    assert out["values"][1, 0] == 0.0 and norm.stats.count == 1
    obs["values"][0, 0] = np.inf
    with pytest.raises(
        ValueError,
        match=r"^NormalizeObservation: observation\['values'\]\[0, 0\] is inf\. .* e\.g\. with a "
        r"TransformObservation\.$",
    ):
        norm.normalize(obs)
