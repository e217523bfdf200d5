"""Cost models."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.costs import (
    CompositeCost,
    CostModel,
    FixedCost,
    NoCost,
    ProportionalCost,
    SpreadCost,
    SquareRootImpact,
    as_cost_model,
)


def test_no_cost_is_zero_per_batch_row():
    assert NoCost()(np.ones((3, 2))).tolist() == [0.0, 0.0, 0.0]


def test_proportional_cost_scalar_and_per_asset():
    assert ProportionalCost(0.001)([0.5, -0.25]) == pytest.approx(0.00075)
    cost = ProportionalCost([0.001, 0.01])([[0.5, -0.25], [0.0, 1.0]])
    assert cost == pytest.approx([0.0030, 0.01])


def test_fixed_cost_counts_traded_assets_over_equity():
    assert FixedCost(5.0)([[0.1, 0.0, 1e-7]], equity=[1e6]).tolist() == [5e-06]
    assert FixedCost(5.0)([0.1], equity=0.0) == 0.0


def test_square_root_impact_matches_the_worked_number():
    cost = SquareRootImpact(0.5)([0.5], equity=1e6, volatility=[0.02], volume=[1e7])
    assert cost == pytest.approx(0.5 * 0.02 * np.sqrt(0.05) * 0.5)


def test_square_root_impact_without_volume_costs_the_whole_trade():
    cost = SquareRootImpact(0.5)(
        [0.5, 0.2], equity=1e6, volatility=[0.02, 0.02], volume=[0.0, np.nan]
    )
    assert cost == pytest.approx(0.7)


def test_spread_cost_fixed_and_from_data():
    assert SpreadCost(half_spread=0.0002)([1.0, -1.0]) == pytest.approx(0.0004)
    assert SpreadCost()([1.0, 1.0], spread=[0.002, 0.004]) == pytest.approx(0.003)


def test_missing_spread_uses_the_row_median():
    cost = SpreadCost()([1.0, 1.0, 1.0], spread=[0.002, np.nan, 0.004])
    assert cost == pytest.approx(0.5 * (0.002 + 0.003 + 0.004))


def test_row_without_valid_input_uses_fallback_or_refuses():
    assert SpreadCost(fallback_spread=0.01)([1.0], spread=[np.nan]) == pytest.approx(0.005)
    with pytest.raises(ValueError, match="fallback_spread"):
        SpreadCost()([1.0], spread=[np.nan])
    assert SpreadCost()([0.0], spread=[np.nan]) == 0.0  # nothing traded: nothing to price


def test_missing_required_input_names_it():
    with pytest.raises(ValueError, match="equity"):
        FixedCost(1.0)([0.5])


@pytest.mark.parametrize(
    "build",
    [
        lambda: ProportionalCost(-0.1),
        lambda: ProportionalCost(np.inf),
        lambda: FixedCost(-1.0),
        lambda: SquareRootImpact(-0.5),
        lambda: SpreadCost(half_spread=0.1, fallback_spread=0.1),
    ],
)
def test_invalid_parameters_are_refused(build):
    with pytest.raises(ValueError):
        build()


def test_scalar_only_parameters_refuse_arrays():
    with pytest.raises(TypeError):
        FixedCost([1.0])  # type: ignore[arg-type]


def test_composition_flattens_sums_and_reprs():
    combo = SpreadCost(half_spread=0.0002) + FixedCost(1.0)
    assert repr(combo) == "SpreadCost(half_spread=0.0002) + FixedCost(1.0)"
    nested = combo + ProportionalCost(0.001)
    assert isinstance(nested, CompositeCost) and len(nested.models) == 3
    assert nested.requires == frozenset({"equity"})
    value = nested([0.5], equity=1e6)
    assert value == pytest.approx(0.0002 * 0.5 + 1e-6 + 0.0005)


def test_composite_fallbacks_need_every_reader_to_have_one():
    both = SquareRootImpact(0.5, fallback_volatility=0.01) + SquareRootImpact(0.1)
    assert "volatility" not in both.fallbacks
    assert "volatility" in (SquareRootImpact(0.5, fallback_volatility=0.01) + NoCost()).fallbacks


def test_reprs():
    assert repr(NoCost()) == "NoCost()"
    assert repr(ProportionalCost(0.001)) == "ProportionalCost(0.001)"
    assert repr(ProportionalCost([0.001, 0.002])) == "ProportionalCost([0.001, 0.002])"
    assert repr(SpreadCost()) == "SpreadCost(half_spread=from data)"
    assert repr(FixedCost(5.0)) == "FixedCost(5.0)"
    assert repr(SquareRootImpact(0.3)) == "SquareRootImpact(0.3)"


def test_as_cost_model():
    model = FixedCost(1.0)
    assert as_cost_model(model) is model
    assert as_cost_model(0.002) == ProportionalCost(0.002)
    with pytest.raises(ValueError, match="finite and non-negative"):
        as_cost_model(-0.1)
    with pytest.raises(TypeError):
        as_cost_model(True)
    with pytest.raises(TypeError):
        as_cost_model("0.1")


@pytest.mark.parametrize(
    "model", [NoCost(), ProportionalCost(0.001), SpreadCost(0.001), FixedCost(1.0)]
)
def test_trades_must_have_an_asset_axis_and_be_finite(model: CostModel) -> None:
    context = {"equity": 1e6} if "equity" in model.requires else {}
    with pytest.raises(ValueError, match=r"trades must have shape \(\.\.\., n\).*scalar 0\.5"):
        model(0.5, **context)
    with pytest.raises(ValueError, match=r"trades must be finite, got nan at index \(1, 0\)"):
        model([[0.1, 0.1], [float("nan"), 0.1]], **context)
    with pytest.raises(ValueError, match="trades must be finite, got inf"):
        model(np.array([np.inf, 0.1]), **context)


def test_context_of_the_wrong_shape_is_named() -> None:
    with pytest.raises(
        ValueError, match=r"spread must broadcast to shape \(2,\).*got shape \(3,\)"
    ):
        SpreadCost()([0.5, -0.25], spread=[0.1, 0.2, 0.3])
    with pytest.raises(
        ValueError, match=r"equity must broadcast to shape \(2,\).*got shape \(3,\)"
    ):
        FixedCost(1.0)(np.array([[0.5, 0.1], [0.2, 0.1]]), equity=[1, 2, 3])
    with pytest.raises(ValueError, match=r"volume must broadcast to shape \(1,\)"):
        SquareRootImpact()([0.5], equity=1e6, volatility=[0.02], volume=[1e7, 2])
    with pytest.raises(TypeError, match="equity must be real numbers"):
        FixedCost(1.0)([0.5], equity="1e6")
