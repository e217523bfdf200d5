"""One small sample at a time (NormalizeObservation's every step): RunningMeanStd's updates and
the normalised observations equal, bit for bit and warning for warning, the rule computed
straight on NumPy arrays, over long streams with resets and edge values."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import RunningMeanStd
from sekai.wrappers import NormalizeObservation

Warned = list[tuple[type[Warning], str]]


class _Reference:
    """RunningMeanStd fed one sample at a time, straight from its rule on NumPy arrays: the
    first sample sets the moments (variance 0, count 1); each later one is a batch of one (its
    mean the sample, its variance 0, its count 1) combined with the stored moments weighted by
    their counts. ``normalized`` is ``(x - mean) / sqrt(var + epsilon)``, then clipped."""

    def __init__(self, mean: Any = None, var: Any = None, count: float = 0.0) -> None:
        self.mean, self.var, self.count = mean, var, count

    def add(self, x: Any) -> None:
        if self.mean is None:
            self.mean, self.var, self.count = x.copy(), np.zeros(x.shape), 1.0
            return
        total = self.count + 1
        delta = x - self.mean
        m2 = self.var * self.count + np.zeros(x.shape) * 1 + delta * delta * (self.count / total)
        self.mean = self.mean + delta * (1 / total)
        self.var = m2 / total
        self.count = float(total)

    def normalized(self, x: Any, epsilon: float, clip: float | None) -> Any:
        out = (x - self.mean) / np.sqrt(self.var + epsilon)
        if clip is not None:
            out = np.clip(out, -clip, clip)
        return out


def _same(got: Any, expected: Any) -> None:
    """The same type, dtype, shape and bits (signed zeros and NaNs included)."""
    assert type(got) is type(expected)
    got, expected = np.asarray(got), np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    if got.dtype == np.longdouble:  # stored with padding bytes: compare the values and signs
        assert np.array_equal(got, expected) and np.array_equal(
            np.signbit(got), np.signbit(expected)
        )
    else:
        assert got.tobytes() == expected.tobytes(), (got, expected)


def _same_stats(stats: RunningMeanStd, reference: _Reference) -> None:
    _same(stats.mean, reference.mean)
    _same(stats.var, reference.var)
    assert stats.count == reference.count
    assert str(stats.count) == str(reference.count)  # -0.0 and 0.0 alike


def _recorded(call: Any) -> tuple[Any, Warned]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


def _stream(shape: tuple[int, ...], dtype: Any, steps: int, seed: int) -> list[Any]:
    """Samples of ``shape``: features of very different scales and offsets, a constant one,
    and rows of edge values (signed zeros, float32's bounds, the dtype's tiniest
    subnormals)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    scale = np.resize([1.0, 100.0, 1e-3, 5.0, 1e-6], size)
    offset = np.resize([0.0, 3.0, 1e4, -7.0, 0.0], size)
    bound, tiny = float(np.finfo(np.float32).max), float(np.finfo(dtype).smallest_subnormal)
    special = [
        np.full(size, -0.0),
        np.zeros(size),
        np.resize([bound, -bound, -0.0, tiny], size),
        np.resize([tiny, -tiny, 0.0, -0.0], size),
    ]
    rows = []
    for t in range(steps):
        row = special[t % 40 // 10] if t % 10 == 3 else rng.normal(size=size) * scale + offset
        row = np.array(row)
        if size > 1:
            row[-1] = 1.5  # a constant feature: its variance stays exactly 0
        rows.append(row.astype(dtype).reshape(shape))
    return rows


def _env(toy_env: Any, samples: list[Any], dtype: Any = np.float64, **kwargs: Any) -> Any:
    it: Iterator[Any] = iter(samples)
    space = sekai.Box(-np.inf, np.inf, shape=samples[0].shape, dtype=dtype)
    env = toy_env(observation_space=space, length=7, obs_fn=lambda env: next(it))
    return NormalizeObservation(env, **kwargs)


def _run(env: Any, count: int) -> Iterator[tuple[Any, Warned]]:
    """Each observation ``env`` returns (resets included) and the warnings on the way."""
    yield _recorded(lambda: env.reset(seed=0).observation)
    for _ in range(count - 1):
        result, warned = _recorded(lambda: env.step(0))
        yield result.observation, warned
        if result.terminated:
            yield _recorded(lambda: env.reset().observation)


def _expected(reference: _Reference, x: Any, epsilon: float, clip: float | None) -> Any:
    def step() -> Any:
        reference.add(np.asarray(x, dtype=np.float64))
        return reference.normalized(np.asarray(x, dtype=np.float64), epsilon, clip)

    return _recorded(step)


@pytest.mark.parametrize(
    ("shape", "dtype", "epsilon", "clip"),
    [
        ((4,), np.float32, 1e-8, None),
        ((4,), np.float64, 1e-8, None),
        ((3,), np.float64, 1e-3, 1.5),
        ((2, 3), np.float32, 1e-8, 3.0),
        ((32,), np.float64, 1e-8, None),
        ((33,), np.float64, 1e-8, None),  # more than a row's worth: NumPy's path
        ((5, 7), np.float32, 1e-8, 2.0),
        ((1,), np.float64, 0.5, None),
        ((), np.float64, 1e-8, 0.5),  # shape (): NumPy scalars
    ],
)
def test_normalised_observations_and_statistics_follow_the_rule_bit_for_bit(
    toy_env: Any, shape: tuple[int, ...], dtype: Any, epsilon: float, clip: float | None
) -> None:
    samples = _stream(shape, dtype, 1500, seed=len(shape) + int(epsilon * 10))
    env = _env(toy_env, samples, dtype, epsilon=epsilon, clip=clip)
    reference = _Reference()
    for x, (got, warned) in zip(samples, _run(env, 1200)):
        expected, expected_warned = _expected(reference, x, epsilon, clip)
        _same(got, expected)
        assert warned == expected_warned
        _same_stats(env.obs_rms, reference)


def test_dict_leaves_updated_one_sample_at_a_time_follow_the_rule(toy_env: Any) -> None:
    a, b = _stream((3,), np.float64, 500, seed=1), _stream((2, 2), np.float32, 500, seed=2)
    samples = [{"a": x, "b": y} for x, y in zip(a, b)]
    it = iter(samples)
    space = sekai.Dict(
        a=sekai.Box(-np.inf, np.inf, (3,)), b=sekai.Box(-np.inf, np.inf, (2, 2), np.float32)
    )
    env = NormalizeObservation(
        toy_env(observation_space=space, length=7, obs_fn=lambda e: next(it))
    )
    references = {"a": _Reference(), "b": _Reference()}
    for sample, (got, _) in zip(samples, _run(env, 400)):
        for key, reference in references.items():
            expected, _ = _expected(reference, sample[key], 1e-8, None)
            _same(got[key], expected)
            _same_stats(env.obs_rms[key], reference)


def test_update_with_one_row_follows_the_rule() -> None:
    stats, reference = RunningMeanStd((5,)), _Reference()
    for x in _stream((5,), np.float64, 400, seed=3):
        stats.update(x[None])
        reference.add(x)
        _same_stats(stats, reference)


_REFUSED = (
    r"^NormalizeObservation: observation\[1\] is {}\. A NaN or infinite value would make the "
    r"statistics NaN for good, and everything normalised with them, so nothing was updated\."
)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_observation_is_refused_and_the_stream_goes_on_as_the_rule_says(
    toy_env: Any, bad: float
) -> None:
    samples = _stream((4,), np.float64, 300, seed=4)
    for t in (0, 5, 6, 100):  # the first observation, then later ones, twice in a row
        samples[t] = samples[t].copy()
        samples[t][1] = bad
    env, reference = _env(toy_env, samples), _Reference()
    refused = _REFUSED.format(re.escape(str(bad)))
    with pytest.raises(ValueError, match=refused):
        env.reset(seed=0)
    assert env.obs_rms.count == 1e-4  # nothing seen yet
    _same(env.reset(seed=0).observation, _expected(reference, samples[1], 1e-8, None)[0])
    for x in samples[2:]:
        if not np.isfinite(x).all():
            with pytest.raises(ValueError, match=refused):
                env.step(0)
        else:
            got, warned = _recorded(lambda: env.step(0).observation)
            expected, expected_warned = _expected(reference, x, 1e-8, None)
            _same(got, expected)
            assert warned == expected_warned
        _same_stats(env.obs_rms, reference)


def test_statistics_that_would_overflow_are_refused_and_the_stream_goes_on_as_the_rule_says(
    toy_env: Any,
) -> None:
    # Finite samples far enough apart: the squares of their deltas, 4e600, overflow float64.
    samples = _stream((4,), np.float64, 40, seed=5)
    samples[10] = np.array([1e300, -1e300, 1e-300, 1.5])
    samples[11] = np.array([-1e300, 1e300, 0.0, 1.5])
    env, reference = _env(toy_env, samples), _Reference()
    refused = (
        r"^NormalizeObservation: observation\[0\] is {}, which would take the statistics' "
        r"variance past float64's range for good, and everything normalised with them, so "
        r"nothing was updated\. Fix the env, or replace or rescale such values before "
        r"normalising, e\.g\. with a TransformObservation\.$"
    )
    _same(env.reset(seed=0).observation, _expected(reference, samples[0], 1e-8, None)[0])
    for x in samples[1:30]:
        if abs(x[0]) == 1e300:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # refused without NumPy's overflow warnings
                with pytest.raises(ValueError, match=refused.format(re.escape(str(x[0])))):
                    env.step(0)
        else:
            got, warned = _recorded(lambda: env.step(0).observation)
            expected, expected_warned = _expected(reference, x, 1e-8, None)
            _same(got, expected)
            assert warned == expected_warned
        _same_stats(env.obs_rms, reference)
    assert reference.count == 28 and np.isfinite(reference.var).all()


@pytest.mark.parametrize(
    "state",
    [
        {"mean": [1.0, -0.0, 0.0, 2.0], "var": [0.0, 0.0, 4.0, 1.0], "count": 0.0, "seen": True},
        {"mean": [1.0, -0.0, 0.0, 2.0], "var": [0.0, 0.0, 4.0, 1.0], "count": -0.0, "seen": True},
        {"mean": [0.5, 0.0, 3.0, 2.0], "var": [1.0, 0.0, 9.0, 1e-300], "count": 1e300},
    ],
    ids=["count-0", "count-minus-0", "count-1e300"],
)
def test_loaded_statistics_go_on_as_the_rule_says(toy_env: Any, state: dict[str, Any]) -> None:
    samples = _stream((4,), np.float64, 200, seed=6)
    env = _env(toy_env, samples)
    env.obs_rms.load_state_dict(
        {**state, "mean": np.array(state["mean"]), "var": np.array(state["var"])}
    )
    reference = _Reference(env.obs_rms.mean.copy(), env.obs_rms.var.copy(), env.obs_rms.count)
    for x, (got, warned) in zip(samples, _run(env, 150)):
        expected, expected_warned = _expected(reference, x, 1e-8, None)
        _same(got, expected)
        assert warned == expected_warned
        _same_stats(env.obs_rms, reference)


@pytest.mark.parametrize(
    ("mean", "var"),
    [
        (np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.1, 2, 3, 1], np.float32)),
        (np.array([0.1, 2.0, 3.0, 4.0], np.longdouble), np.ones(4)),
        (np.zeros(4), np.array([-1.0, 0.0, 1.0, -4.0])),  # a negative variance: NaN, warned
        (np.arange(8.0)[::2], np.ones(8)[1::2]),  # views with strides
        (np.zeros(4), np.ones((1, 4))),  # a variance that broadcasts: (1, 4) observations
        ([0.0, 1.0, 2.0, 3.0], np.ones(4)),  # a list
    ],
    # NumPy computes var * count in float32, the mean in long double
    ids=["float32-var", "longdouble-mean", "negative-var", "strided", "broadcast-var", "list-mean"],
)
def test_moments_assigned_by_hand_are_used_as_numpy_uses_them(
    toy_env: Any, mean: Any, var: Any
) -> None:
    samples = _stream((4,), np.float64, 30, seed=7)
    env = _env(toy_env, samples)
    env.reset(seed=0)
    env.obs_rms.mean, env.obs_rms.var, env.obs_rms.count = mean, var, 3.0
    reference = _Reference(np.copy(mean), np.copy(var), 3.0)
    for x in samples[1:20]:
        got, warned = _recorded(lambda: env.step(0).observation)
        expected, expected_warned = _expected(reference, x, 1e-8, None)
        _same(got, expected)
        assert warned == expected_warned
        _same_stats(env.obs_rms, reference)


def test_moments_of_another_shape_assigned_by_hand_broadcast_as_numpy_makes_them(
    toy_env: Any,
) -> None:
    # The float path declines them: NumPy's arithmetic broadcasts, as it always did.
    samples = _stream((4,), np.float64, 5, seed=7)
    env = _env(toy_env, samples)
    env.reset(seed=0)
    env.obs_rms.mean = np.zeros((1, 4))
    rms = env.obs_rms
    before = (rms.mean.copy(), rms.var.copy(), rms.count)
    got = env.step(0).observation
    mean, var, count = before
    delta = samples[1] - mean
    total = count + 1
    new_mean = mean + delta / total
    new_var = (var * count + delta**2 * count / total) / total
    assert got.shape == (1, 4)
    np.testing.assert_allclose(got, (samples[1] - new_mean) / np.sqrt(new_var + 1e-8))


def test_one_small_sample_is_combined_without_numpy(
    toy_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The streams above would pass through NumPy's path alone: check they took the other.
    combined: list[int] = []
    combine = RunningMeanStd._moments_with

    def counted(self: RunningMeanStd, *args: Any) -> Any:
        combined.append(1)
        return combine(self, *args)

    monkeypatch.setattr(RunningMeanStd, "_moments_with", counted)
    env = _env(toy_env, _stream((4,), np.float32, 50, seed=8), np.float32)
    for _ in _run(env, 40):
        pass
    stats = RunningMeanStd((2, 3))
    for x in _stream((2, 3), np.float64, 10, seed=9):
        stats.update(x[None])
    assert len(combined) == 2  # each first sample, which sets the moments outright


def test_a_larger_sample_goes_straight_to_numpys_path(
    toy_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether an observation is small is known from its space: one of more than 32 entries
    # is not first converted and looked over for the float path.
    tried: list[tuple[int, ...]] = []
    sample_update = RunningMeanStd._sample_update

    def counted(self: RunningMeanStd, sample: Any, epsilon: float | None = None) -> Any:
        tried.append(sample.shape)
        return sample_update(self, sample, epsilon)

    monkeypatch.setattr(RunningMeanStd, "_sample_update", counted)
    for shape in [(33,), (5, 7)]:
        samples = _stream(shape, np.float64, 30, seed=10)
        env = _env(toy_env, samples)
        reference = _Reference()
        for x, (got, _) in zip(samples, _run(env, 20)):
            _same(got, _expected(reference, x, 1e-8, None)[0])
        stats = RunningMeanStd(shape)
        for x in samples[:5]:
            stats.update(x[None])
    assert tried == []
