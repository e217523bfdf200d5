"""``sekai.testing.kernels`` without the accelerator distributions installed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from sekai.plugins._host import PluginHost
from sekai.testing import registry_sandbox
from sekai.testing.kernels import assert_kernel_equivalent
from sekai.vector.kernel_check import KStepKernel


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_missing_backend_names_the_distribution_to_install(
    monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    # Before: the jax backend imported jax first and failed with a bare ModuleNotFoundError.
    monkeypatch.setitem(sys.modules, backend, None)  # the library is absent, too
    monkeypatch.setattr(PluginHost, "is_installed", lambda self, distribution: False)
    with (
        registry_sandbox(),
        pytest.raises(
            ValueError,
            match=rf"^Unknown vectorization_mode '{backend}'; .* It is provided by "
            rf"sekai-{backend}, which is not installed: ",
        ),
    ):
        assert_kernel_equivalent(lambda: KStepKernel([2, 3]), backends=(backend,), num_envs=2)


class _Offset(KStepKernel):
    """KStepKernel whose observations are shifted by ``offset``."""

    def __init__(self, offset: float) -> None:
        super().__init__([2, 3])
        self.offset = offset

    def reset(self, xp: Any, params: Any, draws: Any, mask: Any, state: Any) -> Any:
        new, obs, info = super().reset(xp, params, draws, mask, state)
        return new, obs + self.offset, info

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        new, obs, *rest = super().step(xp, params, state, action, draws)
        return (new, obs + self.offset, *rest)


def _shifted() -> Callable[[], _Offset]:
    """Builds the reference kernel first, then ones shifted by 1e-4 (a backend's rounding)."""
    built: list[_Offset] = []

    def make() -> _Offset:
        built.append(_Offset(1e-4 if built else 0.0))
        return built[-1]

    return make


def test_assert_kernel_equivalent_takes_the_tolerances_of_float_arrays() -> None:
    # Before, the tolerance was fixed per dtype (float32: 1e-5), so a kernel subtracting
    # large terms could not pass in float32.
    run = {"backends": ("numpy",), "dtypes": ("float32",), "num_envs": 2, "steps": 4}
    with pytest.raises(AssertionError, match=r"rtol=1e-05, atol=1e-05"):
        assert_kernel_equivalent(_shifted(), **run)  # type: ignore[arg-type]
    assert_kernel_equivalent(_shifted(), atol=1e-3, **run)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match=r"rtol=0, atol=1e-05"):
        assert_kernel_equivalent(_shifted(), rtol=0.0, **run)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1e-3, float("nan"), "1e-3", True])
def test_a_tolerance_that_is_no_number_at_least_0_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match=rf"^atol must be a number >= 0 or None, got {bad!r}\.$"):
        assert_kernel_equivalent(lambda: KStepKernel([2, 3]), backends=("numpy",), atol=bad)


class _Extra(KStepKernel):
    """KStepKernel whose steps also report an info ``extra`` (a backend adding a key)."""

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        *head, info = super().step(xp, params, state, action, draws)
        return (*head, {**info, "extra": state["t"]})


class _LateReward(KStepKernel):
    """KStepKernel whose rewards are off by ``offset`` from each episode's second step on (a
    backend differing only later)."""

    def __init__(self, offset: float) -> None:
        super().__init__([2, 3])
        self.offset = offset

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        new, obs, reward, *rest = super().step(xp, params, state, action, draws)
        return (new, obs, xp.where(new["t"] >= 2, reward + self.offset, reward), *rest)


def _reference_then(first: Callable[[], Any], others: Callable[[], Any]) -> Callable[[], Any]:
    """Builds ``first()`` for the numpy reference run, then ``others()`` for each backend."""
    built: list[Any] = []

    def make() -> Any:
        built.append(others() if built else first())
        return built[-1]

    return make


def test_assert_kernel_equivalent_fails_on_a_backend_that_records_another_key() -> None:
    make = _reference_then(lambda: KStepKernel([2, 3]), lambda: _Extra([2, 3]))
    with pytest.raises(AssertionError, match=r"'info\.extra'"):
        assert_kernel_equivalent(make, backends=("numpy",), dtypes=("float64",), num_envs=2)


def test_assert_kernel_equivalent_compares_every_step_not_only_the_reset() -> None:
    make = _reference_then(lambda: _LateReward(0.0), lambda: _LateReward(1e-3))
    # The series of step results start with the first step: index 1 is the second one.
    with pytest.raises(AssertionError, match=r"numpy float64: reward at step 1"):
        assert_kernel_equivalent(make, backends=("numpy",), dtypes=("float64",), num_envs=2)


class _Flag(KStepKernel):
    """KStepKernel whose steps report an info ``late``, True from step ``since`` on."""

    def __init__(self, since: int) -> None:
        super().__init__([50, 50])
        self.since = since

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        *head, info = super().step(xp, params, state, action, draws)
        return (*head, {**info, "late": head[0]["t"] >= self.since})


def test_bools_are_compared_exactly_whatever_the_tolerance_of_floats() -> None:
    # An atol large enough for a kernel's floats must not let a flag differ.
    make = _reference_then(lambda: _Flag(2), lambda: _Flag(3))
    with pytest.raises(AssertionError, match=r"numpy float64: info\.late at step 1"):
        assert_kernel_equivalent(
            make, backends=("numpy",), dtypes=("float64",), num_envs=2, steps=4, atol=10.0
        )
