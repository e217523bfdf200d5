"""Arguments of the wrong type name the argument, not a comparison deep inside."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Discrete, Sequence
from sekai.testing.envs import LineEnv


def _line() -> Any:
    return LineEnv()


CASES: list[tuple[str, Callable[[], Any], type, str]] = [
    (
        "gamma-none",
        lambda: sekai.NormalizeReward(_line(), gamma=None),
        TypeError,
        r"^NormalizeReward: gamma must be a number, got NoneType\.$",
    ),
    (
        "epsilon-str",
        lambda: sekai.NormalizeReward(_line(), epsilon="1e-8"),
        TypeError,
        r"^NormalizeReward: epsilon must be a number, got str\.$",
    ),
    (
        "epsilon-inf",
        lambda: sekai.NormalizeReward(_line(), epsilon=np.inf),
        ValueError,
        r"^epsilon must be finite and > 0, got inf\.$",
    ),
    (
        "vec-gamma-none",
        lambda: sekai.VecNormalizeReward(sekai.SyncVecEnv([_line]), gamma=None),
        TypeError,
        r"^VecNormalizeReward: gamma must be a number, got NoneType\.$",
    ),
    (
        "clip-str",
        lambda: sekai.NormalizeObservation(_line(), clip="5"),
        TypeError,
        r"^NormalizeObservation: clip must be a number, got str\.$",
    ),
    (
        "min-reward-array",
        lambda: sekai.ClipReward(_line(), min_reward=np.zeros(2)),
        TypeError,
        r"^ClipReward: min_reward must be a number, got ndarray\.$",
    ),
    (
        "min-reward-list",  # neither refused by its type up front nor taken by float()
        lambda: sekai.ClipReward(_line(), min_reward=[1]),
        TypeError,
        r"^ClipReward: min_reward must be a number, got list\.$",
    ),
    (
        "padding-array",
        lambda: sekai.FrameStackObservation(_line(), 2, padding=np.array(["reset", "zeros"])),
        ValueError,
        r"^padding must be 'reset' or 'zeros', got array",
    ),
    (
        "delay-padding-list",
        lambda: sekai.DelayObservation(_line(), 1, padding=["zeros"]),
        ValueError,
        r"padding must be",
    ),
    (
        "stack-array",
        lambda: Sequence(Discrete(2), 3, stack=np.array([1, 0])),
        TypeError,
        r"^stack must be a bool, got ndarray\.$",
    ),
    (
        "shape-array",
        lambda: Box(0, 1, shape=np.array([[2, 3]])),
        TypeError,
        r"^Box shape entries must be ints, got array",
    ),
    (
        "dtype-typo",
        lambda: Box(0, 1, (2,), dtype="flaot32"),
        TypeError,
        r"^Box dtype must be a NumPy dtype, got 'flaot32' \(",
    ),
    (
        "halflife-unused-negative",
        lambda: sekai.NormalizeObservation(_line(), halflife=-5),
        ValueError,
        r"^halflife must be a finite number > 0, got -5\.$",
    ),
    (
        "dtype-none",
        lambda: sekai.DtypeObservation(_line(), None),
        TypeError,
        r"^DtypeObservation: dtype must be a NumPy dtype or its name, got None\.$",
    ),
    (
        "dtype-unknown-name",
        lambda: sekai.DtypeObservation(_line(), "foo"),
        TypeError,
        r"^DtypeObservation: dtype must be a NumPy dtype or its name, got 'foo'\.$",
    ),
    (
        "normalize-time-str",
        lambda: sekai.TimeAwareObservation(_line(), max_episode_steps=5, normalize_time="no"),
        TypeError,
        r"^TimeAwareObservation: normalize_time must be a bool, got str\.$",
    ),
    (
        "render-order-flag-str",
        lambda: sekai.OrderEnforcing(_line(), disable_render_order_enforcing="yes"),
        TypeError,
        r"^OrderEnforcing: disable_render_order_enforcing must be a bool, got str\.$",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_wrong_types_are_named(build: Callable[[], Any], error: type, says: str) -> None:
    with pytest.raises(error, match=says):
        build()


def test_valid_values_of_other_numeric_types_still_work() -> None:
    assert sekai.NormalizeReward(_line(), gamma=np.float32(0.5), epsilon=1).gamma == 0.5
    assert Box(0, 1, shape=np.array([2, 3])).shape == (2, 3)
    assert Box(0, 1, shape=np.int64(4)).shape == (4,)
    assert Sequence(Discrete(2), 3, stack=np.bool_(True)).stack


def test_numbers_of_any_real_type_are_taken() -> None:
    from decimal import Decimal

    from sekai.stats import RunningMeanStd

    assert sekai.ClipReward(_line(), np.array(-1.0), Decimal("1")).max_reward == 1.0
    assert sekai.NormalizeReward(_line(), gamma=np.array(0.99)).gamma == 0.99
    assert RunningMeanStd(shape=(), epsilon=0).count == 0.0
    with pytest.raises(TypeError, match=r"gamma must be a number, got ndarray"):
        sekai.NormalizeReward(_line(), gamma=np.array([0.9, 0.99]))
    with pytest.raises(TypeError, match=r"gamma must be a number, got complex"):
        sekai.NormalizeReward(_line(), gamma=1j)


def test_a_number_beyond_float64_is_refused_as_too_large_not_made_infinite() -> None:
    from decimal import Decimal

    from sekai.stats import RunningMeanStd

    # float() made the Decimal infinite: ClipReward's bound vanished without a word
    with pytest.raises(
        ValueError,
        match=r"^ClipReward: max_reward must be a number, got Decimal\('1E\+400'\), too large",
    ):
        sekai.ClipReward(_line(), 0.0, Decimal("1e400"))
    with pytest.raises(  # float() raised its bare OverflowError, naming nothing
        ValueError, match=r"^ClipReward: min_reward must be a number, got an int too large for"
    ):
        sekai.ClipReward(_line(), -(10**400), 1.0)
    with pytest.raises(
        ValueError, match=r"^RunningMeanStd: epsilon must be a number, got Decimal\('1E\+400'\)"
    ):
        RunningMeanStd(epsilon=Decimal("1e400"))


@pytest.mark.skipif(
    np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="longdouble is float64 here"
)
def test_a_longdouble_beyond_float64_is_refused_as_too_large_and_an_infinite_one_kept() -> None:
    # float() gives inf for it without an OverflowError: the bound vanished without a word
    with pytest.raises(
        ValueError,
        match=r"^ClipReward: max_reward must be a number, got np\.longdouble\('1e\+400'\)",
    ):
        sekai.ClipReward(_line(), 0.0, np.longdouble("1e400"))
    assert sekai.ClipReward(_line(), 0.0, np.longdouble("inf")).max_reward == np.inf


def test_a_fraction_beyond_float64_is_named_by_its_type_not_its_digits() -> None:
    from fractions import Fraction

    with pytest.raises(
        ValueError, match=r"^ClipReward: max_reward must be a number, got a Fraction too large for"
    ):
        sekai.ClipReward(_line(), 0.0, Fraction(10**400, 3))


def test_a_zero_dimensional_float_array_is_not_a_box_size() -> None:
    with pytest.raises(TypeError, match=r"^Box shape entries must be ints"):
        Box(0, 1, shape=np.array(3.5))
    assert Box(0, 1, shape=np.array(3)).shape == (3,)


def _rescale_action(toy_env: Any, low: Any, high: Any) -> Any:
    return sekai.RescaleAction(toy_env(action_space=Box(-2.0, 2.0, shape=(2,))), low, high)


def _rescale_observation(toy_env: Any, low: Any, high: Any) -> Any:
    return sekai.RescaleObservation(toy_env(), low, high)


class _Unreadable:
    """An array of a library whose dtype NumPy does not know (as torch's bfloat16 tensors)."""

    ndim = 1

    def __array__(self, dtype: object = None, copy: object = None) -> Any:
        raise TypeError("Got unsupported ScalarType BFloat16")


RESCALE_BOUNDS: list[tuple[str, Any, Any, Any, str]] = [
    (
        "numeric-str",
        _rescale_action,
        "-1",
        "1",
        r"^RescaleAction: min_action must be a number, got str\.$",
    ),
    (
        "bools",
        _rescale_action,
        False,
        True,
        r"^RescaleAction: min_action must be a number, got bool\.$",
    ),
    ("word", _rescale_action, "a", 1, r"^RescaleAction: min_action must be a number, got str\.$"),
    (
        "none",
        _rescale_action,
        None,
        1,
        r"^RescaleAction: min_action must be a number, got NoneType\.$",
    ),
    (
        "max-bool",
        _rescale_action,
        0,
        np.True_,
        r"^RescaleAction: max_action must be a number, got bool\.$",
    ),
    (
        "list-of-bools",
        _rescale_action,
        [False, 0.5],
        1.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got bools\.$",
    ),
    (
        "list-with-none",
        _rescale_action,
        [None, 0.0],
        1.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got an array "
        r"holding None\.$",
    ),
    (
        "list-with-an-object",
        _rescale_action,
        [object(), 0.0],
        1.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got an array "
        r"holding objects\.$",
    ),
    (
        "string-array",
        _rescale_action,
        np.array(["0", "0"]),
        1.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got an array of "
        r"dtype <U1\.$",
    ),
    (
        "ragged",
        _rescale_action,
        [0.0, [0.0, 1.0]],
        2.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got a ragged list\.$",
    ),
    (
        "obs-str",
        _rescale_observation,
        "0",
        "1",
        r"^RescaleObservation: min_obs must be a number, got str\.$",
    ),
    (
        "obs-bools",
        _rescale_observation,
        0.0,
        [True, True],
        r"^RescaleObservation: max_obs must be a number or an array of numbers, got bools\.$",
    ),
    (
        "unreadable-array",  # another library's array NumPy cannot view (a torch bfloat16)
        _rescale_action,
        _Unreadable(),
        2.0,
        r"^RescaleAction: min_action must be a number or an array of numbers, got a .*_Unreadable "
        r"NumPy cannot read \(Got unsupported ScalarType BFloat16\)\.$",
    ),
]


@pytest.mark.parametrize(
    ("build", "low", "high", "says"),
    [c[1:] for c in RESCALE_BOUNDS],
    ids=[c[0] for c in RESCALE_BOUNDS],
)
def test_rescale_bounds_that_are_no_numbers_are_named(
    build: Any, low: Any, high: Any, says: str, toy_env: Any
) -> None:
    with pytest.raises(TypeError, match=says):
        build(toy_env, low, high)


def test_rescale_bounds_of_any_real_type_and_arrays_of_them_are_taken(toy_env: Any) -> None:
    from decimal import Decimal

    env = _rescale_action(toy_env, np.float32(-1), [Decimal("0.5"), np.int64(2)])
    assert env.action_space == Box(-1.0, np.array([0.5, 2.0]), shape=(2,))
    env = _rescale_action(toy_env, np.array([-1, 0]), np.array(1.0))
    assert env.action_space == Box(np.array([-1.0, 0.0]), 1.0, shape=(2,))
    assert _rescale_observation(toy_env, (0, 0), 1).observation_space == Box(0.0, 1.0, (2,))
    with pytest.raises(ValueError, match=r"^RescaleAction: max_action must be a number or an arr"):
        _rescale_action(toy_env, 0, [1.0, 10**400])
