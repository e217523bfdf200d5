"""Tests for the shared parameter checks: numbers and the correlation-matrix validation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from sekai.finance.simulators import (
    GARCH,
    GBM,
    BlockBootstrap,
    CointegratedPair,
    Heston,
    ListingProcess,
    MeanReverting,
    MertonJumpDiffusion,
)
from sekai.finance.simulators._checks import (
    as_float,
    check_correlation,
    check_correlation_matrix,
    format_dt,
)


def test_check_correlation_matrix_returns_the_matrix_read_only() -> None:
    matrix = np.array([[1.0, 0.3], [0.3, 1.0]])
    checked = check_correlation_matrix(matrix, 2)
    assert checked is matrix and not checked.flags.writeable


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (np.ones((2, 3)), r"corr must be a square \(n, n\) matrix, got shape \(2, 3\)"),
        (np.eye(3), r"corr must have shape \(2, 2\) \(one row per asset\), got \(3, 3\)"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "corr must be finite"),
        (np.array([[1.0, 0.5], [0.4, 1.0]]), r"corr must be symmetric \(within 1e-8\)"),
        (np.array([[2.0, 0.5], [0.5, 1.0]]), "corr must have a unit diagonal"),
        (np.ones((2, 2)), "corr must be positive definite"),
    ],
)
def test_check_correlation_matrix_names_the_failed_property_and_appends_end(
    matrix: np.ndarray, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}") as plain:
        check_correlation_matrix(matrix, 2)
    assert not str(plain.value).endswith(".")
    with pytest.raises(ValueError, match=f"^{message}") as ended:
        check_correlation_matrix(matrix, 2, end=".")
    assert str(ended.value) == f"{plain.value}."


def test_check_correlation_matrix_accepts_any_square_shape_without_n() -> None:
    assert check_correlation_matrix(np.eye(3)).shape == (3, 3)


def test_check_correlation_passes_none_through_and_names_non_numeric_types() -> None:
    assert check_correlation(None) is None
    with pytest.raises(ValueError, match=r"^corr must be a square matrix of numbers, got str$"):
        check_correlation("x")


HUGE = 10**400  # an int beyond float64


@pytest.mark.parametrize(
    ("build", "name"),
    [
        pytest.param(lambda: as_float("dt", HUGE, "gt0"), "dt", id="as_float"),
        pytest.param(lambda: as_float("rho", -HUGE, "unit"), "rho", id="as_float-unit"),
        pytest.param(lambda: GBM(dt=HUGE), "dt", id="GBM"),
        pytest.param(lambda: GARCH(dt=HUGE), "dt", id="GARCH"),
        pytest.param(lambda: Heston(dt=HUGE), "dt", id="Heston"),
        pytest.param(lambda: MeanReverting(dt=HUGE), "dt", id="MeanReverting"),
        pytest.param(lambda: MertonJumpDiffusion(dt=HUGE), "dt", id="MertonJumpDiffusion"),
        pytest.param(lambda: CointegratedPair(mu=HUGE), "mu", id="CointegratedPair.mu"),
        pytest.param(lambda: CointegratedPair(theta=HUGE), "theta", id="CointegratedPair.theta"),
        pytest.param(lambda: BlockBootstrap(np.zeros((50, 2)), dt=HUGE), "dt", id="BlockBootstrap"),
        pytest.param(
            lambda: ListingProcess(GBM(), listing_rate=HUGE), "listing_rate", id="ListingProcess"
        ),
        pytest.param(
            lambda: ListingProcess(GBM(), initial_listed=HUGE),
            "initial_listed",
            id="ListingProcess.initial_listed",
        ),
    ],
)
def test_a_number_beyond_float64_is_a_value_error_naming_the_parameter(
    build: Callable[[], object], name: str
) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be a finite number"):
        build()


def test_an_int_parameter_takes_a_0d_array_as_its_float_parameters_do() -> None:
    assert GBM(n_assets=np.array(3)).n_assets == 3
    assert type(GBM(n_assets=np.array(3)).n_assets) is int
    with pytest.raises(ValueError, match=r"^n_assets must be an int >= 1, got ndarray"):
        GBM(n_assets=np.array([3]))


def test_as_float_takes_a_0d_array_as_the_number_it_holds() -> None:
    assert as_float("dt", np.array(0.5), "gt0") == 0.5
    assert type(as_float("dt", np.array(2), "gt0")) is float
    assert GBM(dt=np.array(0.5)).dt == 0.5
    with pytest.raises(ValueError, match=r"^dt must be a finite number > 0, got -1\.0$"):
        as_float("dt", np.array(-1.0), "gt0")
    with pytest.raises(ValueError, match=r"^dt must be a finite number > 0, got ndarray"):
        as_float("dt", np.array([0.5]), "gt0")


@pytest.mark.parametrize(
    ("dt", "shown"),
    [
        (1 / 252, "1/252"),
        (0.3, "0.3"),
        (1e-300, "1e-300"),  # 1 / dt is a float far past 2**53: no exact integer to print
        (1e-310, "1e-310"),  # 1 / dt overflows: round(inf) raised OverflowError
        (5e-324, "5e-324"),
    ],
)
def test_format_dt_prints_a_reciprocal_only_of_an_exact_integer(dt, shown) -> None:
    assert format_dt(dt) == shown


def test_a_model_with_a_subnormal_dt_has_a_repr() -> None:
    assert "dt=1e-310" in repr(GBM(dt=1e-310))
