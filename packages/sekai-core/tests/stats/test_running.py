"""RunningMeanStd and ExponentialMovingStats."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import ExponentialMovingStats, RunningMeanStd
from sekai.utils._equal import structurally_equal


def test_running_mean_std_initial_state_and_repr() -> None:
    rms = RunningMeanStd(shape=(4,))
    assert repr(rms) == "RunningMeanStd(shape=(4,), count=0.0001)"
    np.testing.assert_array_equal(rms.mean, np.zeros(4))
    np.testing.assert_array_equal(rms.var, np.ones(4))
    assert sekai.RunningMeanStd is RunningMeanStd


def test_running_mean_std_matches_all_samples_in_any_batching() -> None:
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(101, 3))
    rms = RunningMeanStd(shape=(3,))
    for chunk in np.array_split(data, [1, 2, 10, 40, 41]):
        rms.update(chunk)
    np.testing.assert_allclose(rms.mean, data.mean(0))
    np.testing.assert_allclose(rms.var, data.var(0))
    np.testing.assert_allclose(rms.std, data.std(0))
    assert rms.count == 101


def test_first_batch_sets_mean_outright() -> None:
    rms = RunningMeanStd(shape=(2,))
    rms.update(np.array([[5.0, -1.0]]))
    np.testing.assert_array_equal(rms.mean, [5.0, -1.0])
    np.testing.assert_array_equal(rms.normalize([5.0, -1.0]), [0.0, 0.0])


def test_empty_batch_is_ignored() -> None:
    rms = RunningMeanStd(shape=(2,))
    rms.update(np.zeros((0, 2)))
    assert rms.count == 0.0001


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize("batch", [np.zeros((5, 0)), np.zeros((0, 3)), np.zeros((0,)), []])
def test_an_empty_batch_of_another_shape_is_refused_as_a_full_one_is(
    cls: type[RunningMeanStd | ExponentialMovingStats], batch: Any
) -> None:
    # (5, 0): five samples of shape (0,); (0, 3): no samples, but of shape (3,), not (2,)
    stats = cls(shape=(2,))
    before = stats.state_dict()
    message = f"{cls.__name__}.update() expects a batch of shape (N, 2), got {np.shape(batch)}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        stats.update(batch)
    assert structurally_equal(stats.state_dict(), before)


def test_scalar_shape_and_normalize_batch() -> None:
    rms = RunningMeanStd()
    rms.update([1.0, 2.0, 3.0])
    out = rms.normalize(np.array([2.0, 3.0]), epsilon=0.0)
    np.testing.assert_allclose(out, [0.0, 1.0 / np.sqrt(2.0 / 3.0)])
    assert out.dtype == np.float64


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
def test_normalize_names_the_shapes_it_takes(cls: Any) -> None:
    stats = cls(shape=(2,)) if cls is RunningMeanStd else cls(shape=(2,), halflife=3.0)
    stats.update(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert stats.normalize(np.zeros((3, 2))).shape == (3, 2)
    assert stats.normalize(np.zeros((4, 3, 2))).shape == (4, 3, 2)
    # what broadcasts against the statistics keeps working (a scalar, or a batch of shape (N,)
    # for one-entry statistics)
    one = cls(shape=(1,)) if cls is RunningMeanStd else cls(shape=(1,), halflife=3.0)
    one.update(np.array([[1.0], [3.0]]))
    np.testing.assert_array_equal(one.normalize(2.0), one.normalize(np.array([2.0])))
    assert one.normalize(np.zeros(5)).shape == (5,)
    for bad in (np.zeros(3), np.zeros((2, 3)), np.zeros((4, 1, 3))):
        shape = np.shape(bad)
        message = (
            f"{cls.__name__}.normalize() expects one sample of shape (2,) or a batch of shape "
            f"(N, 2), got {shape}."
        )
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            stats.normalize(bad)


def test_update_from_moments_combines_like_update() -> None:
    data = np.random.default_rng(1).normal(size=(20, 2))
    a, b = RunningMeanStd(shape=(2,)), RunningMeanStd(shape=(2,))
    a.update(data[:5])
    a.update(data[5:])
    b.update_from_moments(data[:5].mean(0), data[:5].var(0), 5)
    b.update_from_moments(data[5:].mean(0), data[5:].var(0), 15)
    np.testing.assert_allclose(a.mean, b.mean)
    np.testing.assert_allclose(a.var, b.var)


@pytest.mark.parametrize(
    ("shape", "batch", "expected"),
    [((3,), np.zeros(3), "(N, 3)"), ((2, 3), np.zeros((2, 3)), "(N, 2, 3)"), ((), 5.0, "(N,)")],
)
def test_wrong_batch_shape_raises_naming_the_batch_shape(
    shape: tuple[int, ...], batch: Any, expected: str
) -> None:
    got = np.shape(batch)
    with pytest.raises(ValueError) as info:
        RunningMeanStd(shape=shape).update(batch)
    assert str(info.value) == (
        f"RunningMeanStd.update() expects a batch of shape {expected}, got {got}. "
        "Add a leading batch axis for a single sample (x[None])."
    )


def test_state_dict_round_trip_and_shape_check() -> None:
    rms = RunningMeanStd(shape=(2,))
    rms.update(np.arange(6.0).reshape(3, 2))
    state = rms.state_dict()
    state["mean"][0] = 99.0  # a copy
    assert rms.mean[0] != 99.0
    other = RunningMeanStd(shape=(2,))
    other.load_state_dict(rms.state_dict())
    np.testing.assert_array_equal(other.mean, rms.mean)
    np.testing.assert_array_equal(other.var, rms.var)
    assert other.count == rms.count
    with pytest.raises(ValueError, match="has shape"):
        RunningMeanStd(shape=(3,)).load_state_dict(rms.state_dict())


@pytest.mark.parametrize("epsilon", [1e-4, 1.0, 3.0])
def test_every_batch_counts_whatever_the_epsilon_prior(epsilon: float) -> None:
    rms = RunningMeanStd(epsilon=epsilon)
    for batch in ([1.0], [3.0], [5.0, 7.0]):
        rms.update(batch)
    assert rms.mean == pytest.approx(4.0)
    assert rms.var == pytest.approx(5.0)
    assert rms.count == pytest.approx(4.0)
    # a checkpoint taken after one sample, with epsilon 1, still counts that sample
    one = RunningMeanStd(epsilon=1.0)
    one.update([1.0])
    restored = RunningMeanStd(epsilon=1.0)
    restored.load_state_dict(one.state_dict())
    restored.update([3.0])
    assert restored.mean == pytest.approx(2.0) and restored.count == pytest.approx(2.0)


def test_ewm_repr_and_first_update_sets_moments() -> None:
    ewm = ExponentialMovingStats(shape=(2,), halflife=10)
    ewm.update(np.array([[1.0, 2.0], [3.0, 2.0]]))
    assert repr(ewm) == "ExponentialMovingStats(shape=(2,), halflife=10, count=1)"
    np.testing.assert_allclose(ewm.mean, [2.0, 2.0])
    np.testing.assert_allclose(ewm.var, [1.0, 0.0])
    assert (
        repr(ExponentialMovingStats())
        == "ExponentialMovingStats(shape=(), halflife=1000.0, count=0)"
    )


def test_ewm_weights_halve_after_halflife_calls() -> None:
    ewm = ExponentialMovingStats(halflife=1)
    ewm.update([0.0])
    ewm.update([3.0])
    # weights 0.5 and 1 -> mean = 3 * 1 / 1.5
    assert float(ewm.mean) == pytest.approx(2.0)
    assert float(ewm.var) == pytest.approx((0.5 * 4.0 + 1.0 * 1.0) / 1.5)


def test_ewm_tracks_a_level_shift_faster_than_running_stats() -> None:
    ewm, rms = ExponentialMovingStats(halflife=5), RunningMeanStd()
    for value in [0.0] * 100 + [10.0] * 30:
        ewm.update([value])
        rms.update([value])
    assert float(ewm.mean) > 9.0 > float(rms.mean)


def test_ewm_state_dict_round_trip() -> None:
    ewm = ExponentialMovingStats(shape=(1,), halflife=3)
    for v in range(5):
        ewm.update([[float(v)]])
    other = ExponentialMovingStats(shape=(1,), halflife=3)
    other.load_state_dict(ewm.state_dict())
    ewm.update([[10.0]])
    other.update([[10.0]])
    np.testing.assert_allclose(other.mean, ewm.mean)
    np.testing.assert_allclose(other.var, ewm.var)
    assert other.count == ewm.count == 6


def test_a_state_dict_of_the_other_kind_of_statistics_is_refused_naming_both() -> None:
    # Both hold mean, var and count, so it loaded: recency weights counted as all-time samples.
    rms, ewm = RunningMeanStd(shape=(2,)), ExponentialMovingStats(shape=(2,), halflife=10)
    for stats in (rms, ewm):
        stats.update(np.arange(6.0).reshape(3, 2))
    saved = {"running": rms.state_dict(), "ewm": ewm.state_dict()}
    with pytest.raises(
        ValueError,
        match=r"^RunningMeanStd cannot load a state_dict of ExponentialMovingStats statistics "
        r"\(it has 'weight', 'halflife'\): these are RunningMeanStd \(a normaliser built with "
        r"stats='running'\); load it into ExponentialMovingStats \(stats='ewm'\)\.$",
    ):
        rms.load_state_dict(saved["ewm"])
    with pytest.raises(
        ValueError,
        match=r"^ExponentialMovingStats cannot load a state_dict of RunningMeanStd statistics "
        r"\(it has 'epsilon', 'seen'\): .* load it into RunningMeanStd \(stats='running'\)\.$",
    ):
        ewm.load_state_dict(saved["running"])
    # Refused before anything was loaded.
    assert rms.state_dict()["count"] == 3 and ewm.state_dict()["weight"] == saved["ewm"]["weight"]


@pytest.mark.parametrize("bad", [0, -1.0, float("inf")])
def test_ewm_rejects_non_positive_halflife(bad: float) -> None:
    with pytest.raises(ValueError, match="halflife must be"):
        ExponentialMovingStats(halflife=bad)
    state = ExponentialMovingStats(halflife=3).state_dict()
    state["halflife"] = bad
    with pytest.raises(ValueError, match=r"^halflife must be a finite number > 0, got "):
        ExponentialMovingStats(halflife=3).load_state_dict(state)


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize("first", [True, False], ids=["first-call", "later-call"])
def test_update_from_moments_refuses_moments_of_another_shape(
    cls: type[RunningMeanStd | ExponentialMovingStats], first: bool
) -> None:
    stats = cls(shape=(2,))
    if not first:
        stats.update(np.array([[1.0, 2.0], [3.0, 4.0]]))
    before = stats.state_dict()
    per_env_means = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])  # not reduced over envs
    with pytest.raises(
        ValueError,
        match=rf"^{cls.__name__}\.update_from_moments\(\): mean has shape \(3, 2\), expected "
        r"\(2,\) \(the shape of one sample\)\.$",
    ):
        stats.update_from_moments(per_env_means, np.ones((3, 2)), 3)
    with pytest.raises(ValueError, match=r"var has shape \(3,\), expected \(2,\)"):
        stats.update_from_moments(np.zeros(2), np.ones(3), 3)
    assert structurally_equal(stats.state_dict(), before)
    assert stats.mean.shape == stats.var.shape == (2,)
    # A scalar is broadcast to the statistics' shape, as before.
    stats.update_from_moments(np.array([5.0, 6.0]), 0.0, 1)
    assert stats.var.shape == (2,)


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize(
    ("mean", "var", "count", "message"),
    [
        (0.0, -1.0, 3, r"var must be finite and >= 0, got -1\.0\."),
        (0.0, np.nan, 3, r"var must be finite and >= 0, got nan\."),
        (0.0, [1.0, np.inf], 3, r"var must be finite and >= 0, got inf at index \(1,\)\."),
        (np.nan, 1.0, 3, r"mean must be finite, got nan\."),
        (0.0, 1.0, np.nan, r"count must be finite and >= 0, got nan\."),
        (0.0, 1.0, -3, r"count must be finite and >= 0, got -3\.0\."),
        (0.0, 1.0, np.inf, r"count must be finite and >= 0, got inf\."),
    ],
)
def test_update_from_moments_refuses_invalid_moments_naming_the_argument(
    cls: type[RunningMeanStd | ExponentialMovingStats],
    mean: Any,
    var: Any,
    count: float,
    message: str,
) -> None:
    for first in (True, False):
        stats = cls(shape=(2,))
        if not first:
            stats.update(np.array([[1.0, 2.0], [3.0, 4.0]]))
        before = stats.state_dict()
        with pytest.raises(
            ValueError, match=rf"^{cls.__name__}\.update_from_moments\(\): {message}$"
        ):
            stats.update_from_moments(mean, var, count)
        assert structurally_equal(stats.state_dict(), before)


def test_update_from_moments_refuses_what_is_not_a_number() -> None:
    with pytest.raises(
        TypeError,
        match=r"^RunningMeanStd\.update_from_moments\(\): count must be a number, got str\.$",
    ):
        RunningMeanStd().update_from_moments(0.0, 1.0, "3")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError,
        match=r"^RunningMeanStd\.update_from_moments\(\): mean must be a number or an array of "
        r"numbers, got str\.$",
    ):
        RunningMeanStd().update_from_moments("zero", 1.0, 3)


def test_update_from_moments_with_zero_count_adds_nothing() -> None:
    rms = RunningMeanStd(shape=(2,))
    rms.update_from_moments(np.ones(2), np.ones(2), 0)
    assert rms.count == 1e-4
    np.testing.assert_array_equal(rms.mean, np.zeros(2))


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "var",
            np.array([1.0, -1.0]),
            r"\['var'\] must be finite and >= 0, got -1\.0 at index \(1,\)\.",
        ),
        (
            "var",
            np.array([np.nan, 1.0]),
            r"\['var'\] must be finite and >= 0, got nan at index \(0,\)\.",
        ),
        ("mean", np.array([np.inf, 1.0]), r"\['mean'\] must be finite, got inf at index \(0,\)\."),
        ("count", -3, r"\['count'\] must be finite and >= 0, got -3\.0\."),
        ("count", np.nan, r"\['count'\] must be finite and >= 0, got nan\."),
    ],
)
def test_load_state_dict_refuses_invalid_moments_naming_the_key(
    cls: type[RunningMeanStd | ExponentialMovingStats], key: str, value: Any, message: str
) -> None:
    saved = cls(shape=(2,))
    saved.update(np.array([[1.0, 2.0], [3.0, 4.0]]))
    state = saved.state_dict()
    state[key] = value
    target = cls(shape=(2,))
    before = target.state_dict()
    with pytest.raises(ValueError, match=rf"^{cls.__name__} state_dict{message}$"):
        target.load_state_dict(state)
    assert structurally_equal(target.state_dict(), before)  # checked in full, then loaded


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize(
    ("state", "got"),
    [
        (None, "NoneType"),  # e.g. a checkpoint without the statistics' entry
        (5, "int"),
        ("mean var count", "str"),
        (["mean", "var", "count"], "list"),
        (np.zeros(3), "numpy.ndarray"),
    ],
)
def test_load_state_dict_refuses_what_is_not_a_dict_naming_its_type(
    cls: type[RunningMeanStd | ExponentialMovingStats], state: Any, got: str
) -> None:
    target = cls(shape=(2,))
    before = target.state_dict()
    message = (
        f"{cls.__name__} state_dict must be the dict state_dict() returns (with 'mean', 'var' "
        f"and 'count'), got {got}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        target.load_state_dict(state)
    assert structurally_equal(target.state_dict(), before)


def test_load_state_dict_refuses_a_bad_epsilon_or_weight() -> None:
    state = RunningMeanStd().state_dict()
    state["epsilon"] = -1.0
    with pytest.raises(
        ValueError,
        match=r"^RunningMeanStd state_dict\['epsilon'\] must be finite and >= 0, got -1\.0\.$",
    ):
        RunningMeanStd().load_state_dict(state)
    ewm_state = ExponentialMovingStats().state_dict()
    ewm_state["weight"] = np.nan
    with pytest.raises(
        ValueError,
        match=r"^ExponentialMovingStats state_dict\['weight'\] must be finite and >= 0, got nan\.$",
    ):
        ExponentialMovingStats().load_state_dict(ewm_state)


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
def test_update_refuses_a_batch_with_a_non_finite_entry(
    cls: type[RunningMeanStd | ExponentialMovingStats],
) -> None:
    stats = cls(shape=(2,))
    stats.update(np.array([[1.0, 2.0]]))
    before = stats.state_dict()
    with pytest.raises(
        ValueError,
        match=rf"^{cls.__name__}\.update\(\): batch\[1, 0\] is -inf\. A NaN or infinite value "
        r"would make the statistics NaN for good, and everything normalised with them, so "
        r"nothing was updated\. Replace, rescale or drop such samples before updating\.$",
    ):
        stats.update(np.array([[1.0, 2.0], [-np.inf, np.nan]]))
    assert structurally_equal(stats.state_dict(), before)


@pytest.mark.parametrize("rows", [1, 3, 50])
def test_a_non_finite_entry_is_found_in_small_and_large_batches(rows: int) -> None:
    stats = RunningMeanStd(shape=(4,))
    batch = np.ones((rows, 4))
    batch[rows - 1, 2] = np.nan
    with pytest.raises(ValueError, match=rf"batch\[{rows - 1}, 2\] is nan\."):
        stats.update(batch)
    assert not stats._seen


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
def test_a_variance_below_zero_by_round_off_is_taken_as_zero(
    cls: type[RunningMeanStd | ExponentialMovingStats],
) -> None:
    # E[x^2] - E[x]^2 of features constant at 0.3, from two workers' reduced sums.
    mean = np.full(3, 0.3)
    var = np.array([-2.220446049250313e-16, -2.220446049250313e-16, 0.0])
    stats = cls(shape=(3,))
    stats.update_from_moments(mean, var, 10)
    assert stats.var.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(
        ValueError, match=r"var must be finite and >= 0, got -1e-06 at index \(1,\)\."
    ):
        cls(shape=(3,)).update_from_moments(mean, [0.0, -1e-6, 0.0], 10)
    state = stats.state_dict()
    state["var"] = np.array([0.0, -1e-17, 0.0])
    stats.load_state_dict(state)
    assert stats.var.tolist() == [0.0, 0.0, 0.0]


_OVERFLOW = (
    r", which would take the statistics' {} past float64's range for good, and everything "
    r"normalised with them, so nothing was updated\. Replace, rescale or drop such samples "
    r"before updating\.$"
)


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
@pytest.mark.parametrize(
    ("first", "batch", "entry", "moment"),
    [
        # one sample about 1.3e154 from the mean: the square of its delta overflows
        ([[0.0, 1.0]], [[0.0, 2e154]], r"batch\[0, 1\] is 2e\+154", "variance"),
        # a first batch whose own variance overflows: the sample farthest from the prior is named
        (None, [[1.0, 0.0], [2.0, -1e155], [3.0, 1e155]], r"batch\[1, 1\] is -1e\+155", "variance"),
        # a batch whose mean overflows: its sum is past float64's range
        (None, [[1.5e308, 0.0], [1.5e308, 0.0]], r"batch\[0, 0\] is 1\.5e\+308", "mean"),
        # in a batch of several, the sample farthest from the stored mean
        ([[1e154, 0.0]], [[1e154, 0.0], [-1e154, 0.0]], r"batch\[1, 0\] is -1e\+154", "variance"),
    ],
    ids=["one-sample", "first-batch", "batch-mean", "farthest-sample"],
)
def test_update_refuses_finite_samples_that_would_overflow_the_statistics(
    cls: type[RunningMeanStd | ExponentialMovingStats],
    first: Any,
    batch: Any,
    entry: str,
    moment: str,
) -> None:
    stats = cls(shape=(2,))
    if first is not None:
        stats.update(np.array(first))
    before = stats.state_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused without NumPy's overflow warnings
        with pytest.raises(
            ValueError, match=rf"^{cls.__name__}\.update\(\): {entry}{_OVERFLOW.format(moment)}"
        ):
            stats.update(np.array(batch))
    assert structurally_equal(stats.state_dict(), before)
    cls(shape=(2,)).load_state_dict(stats.state_dict())  # still a state that loads
    stats.update(np.array([[1.0, 1.0], [3.0, 3.0]]))  # and statistics that go on
    assert np.isfinite(stats.mean).all() and np.isfinite(stats.var).all()


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
def test_samples_that_underflow_are_taken_when_numpy_is_set_to_raise(
    cls: type[RunningMeanStd | ExponentialMovingStats],
) -> None:
    stats = cls(shape=(40,))
    stats.update(np.zeros((1, 40)))
    with np.errstate(all="raise"):  # a common debugging setting: underflow is harmless here
        stats.update(np.full((1, 40), 1e-200))
        stats.update_from_moments(np.full(40, 1e-200), np.zeros(40), 2)
    assert np.all(stats.mean > 0) and np.isfinite(stats.var).all()


def test_a_scalar_sample_that_would_overflow_the_statistics_is_refused() -> None:
    stats = RunningMeanStd()
    stats.update(np.array([1.0]))
    with pytest.raises(ValueError, match=r"^RunningMeanStd\.update\(\): batch\[0\] is 1e\+300, "):
        stats.update(np.array([1e300]))
    assert (float(stats.mean), float(stats.var), stats.count) == (1.0, 0.0, 1.0)


@pytest.mark.parametrize("cls", [RunningMeanStd, ExponentialMovingStats])
def test_update_from_moments_refuses_moments_that_would_overflow_the_statistics(
    cls: type[RunningMeanStd | ExponentialMovingStats],
) -> None:
    stats = cls(shape=(2,))
    stats.update(np.array([[1.0, 2.0]]))
    before = stats.state_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError,
            match=rf"^{cls.__name__}\.update_from_moments\(\): mean\[1\] = 1e\+300, var\[1\] = "
            r"0\.0 and count = 3\.0 would take the statistics' variance past float64's range, "
            r"so nothing was added\.$",
        ):
            stats.update_from_moments(np.array([1.0, 1e300]), np.zeros(2), 3)
    assert structurally_equal(stats.state_dict(), before)
