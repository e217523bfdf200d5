"""Bools are not sizes, counts or bounds: every constructor refuses them alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete
from sekai.stats import RunningMeanStd

REFUSED: dict[str, Callable[[], Any]] = {
    "multidiscrete-nvec": lambda: MultiDiscrete([True, 2]),
    "multidiscrete-start": lambda: MultiDiscrete([2, 2], start=[True, 0]),
    "multidiscrete-bool-array": lambda: MultiDiscrete(np.array([True, True])),
    "box-low": lambda: Box(True, 1.0, (2,)),
    "box-high-list": lambda: Box(0.0, [1.0, False]),
    "box-bool-array": lambda: Box(np.zeros(2, bool), 1.0),
    "rms-shape": lambda: RunningMeanStd(shape=True),
    "rms-shape-entry": lambda: RunningMeanStd(shape=(2, True)),
    "discrete": lambda: Discrete(True),
    "multibinary": lambda: MultiBinary([2, True]),
}


@pytest.mark.parametrize("build", REFUSED.values(), ids=REFUSED.keys())
def test_bools_are_refused_with_a_type_error(build: Callable[[], Any]) -> None:
    with pytest.raises(TypeError, match=r"bool|ints"):
        build()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Box(np.array([True, 0.0], dtype=object), 1.0),
            "Box low must be a number or an array of numbers, not bools.",
        ),
        (
            lambda: Box(0.0, np.array([1.0, np.True_], dtype=object)),
            "Box high must be a number or an array of numbers, not bools.",
        ),
        (
            lambda: MultiDiscrete(np.array([True, 3], dtype=object)),
            "MultiDiscrete nvec must hold integers, not bools.",
        ),
    ],
    ids=["box-low", "box-high", "multidiscrete-nvec"],
)
def test_bools_inside_an_object_array_are_refused(build: Callable[[], Any], message: str) -> None:
    # NumPy would read them as 1.0 and 1, silently.
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        build()


@pytest.mark.parametrize(
    ("epsilon", "error"),
    [(float("nan"), ValueError), (-5.0, ValueError), ("1", TypeError)],
)
def test_running_mean_std_epsilon_is_a_finite_positive_count(epsilon: Any, error: type) -> None:
    with pytest.raises(error, match="epsilon"):
        RunningMeanStd(shape=(2,), epsilon=epsilon)
