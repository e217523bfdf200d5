"""What a cost model returns is checked (finance.md §6: the cost as a fraction of equity, shape
``(...)`` for trades of shape ``(..., n)``): real numbers, finite, one per row of trades. A
user model that gets this wrong is refused with a ``ValueError`` naming it, the shape or value
it returned and what was expected, instead of being charged (every native sub-env the cost of
the whole batch, or a NaN equity)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance import CostModel, NoCost, ProportionalCost


class WholeBatch(CostModel):
    """Written for one env: one number for all the rows it is given."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        return np.array(0.001 * np.abs(trades).sum())


class PerAsset(CostModel):
    """Forgets to sum over the assets."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        return 0.001 * np.abs(trades)


class Gap(CostModel):
    """Its input had a gap: NaN in one row."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        cost = np.zeros(trades.shape[:-1])
        cost.reshape(-1)[-1] = np.nan
        return cost


class Label(CostModel):
    """Returns words, not numbers."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        return np.full(trades.shape[:-1], "free")


class Plain(CostModel):
    """A correct model returning Python or NumPy numbers of other kinds than float64."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        total = np.abs(trades).sum(axis=-1)
        if self.kind == "float":
            return float(total)
        if self.kind == "float32":
            return (0.5 * total).astype(np.float32)
        return np.zeros(trades.shape[:-1], dtype=np.int64)


def test_one_number_for_a_batch_is_refused_naming_the_model_and_shapes():
    with pytest.raises(
        ValueError,
        match=r"^WholeBatch\._cost returned a cost of shape \(\) for trades of shape \(4, 2\); "
        r"expected one per row, shape \(4,\)",
    ):
        WholeBatch()(np.full((4, 2), 0.1))


def test_a_cost_per_asset_is_refused_for_one_row_and_for_a_batch():
    with pytest.raises(ValueError, match=r"shape \(3,\) for trades of shape \(3,\); expected one "):
        PerAsset()(np.full(3, 0.1))
    with pytest.raises(ValueError, match=r"shape \(2, 5, 3\) for trades of shape \(2, 5, 3\)"):
        PerAsset()(np.full((2, 5, 3), 0.1))


@pytest.mark.parametrize(("shape", "where"), [((2,), ""), ((3, 2), r" at index \(2,\)")])
def test_a_non_finite_cost_is_refused_naming_the_model_value_and_index(shape, where):
    with pytest.raises(
        ValueError, match=rf"^Gap\._cost returned the cost nan{where}; a cost must be"
    ):
        Gap()(np.full(shape, 0.1))


def test_a_cost_that_is_not_numbers_is_refused():
    with pytest.raises(ValueError, match=r"^Label\._cost returned a cost of dtype <U4 \(ndarray\)"):
        Label()(np.full((2, 2), 0.1))


def test_a_composite_names_the_part_that_returned_a_wrong_cost():
    with pytest.raises(ValueError) as info:
        (ProportionalCost(0.01) + WholeBatch())(np.full((4, 2), 0.1))
    assert str(info.value).startswith(
        "WholeBatch._cost, part 2 of 2 of the CompositeCost ProportionalCost(0.01) + "
        "WholeBatch(), returned a cost of shape () for trades of shape (4, 2); expected one per "
        "row, shape (4,)"
    )


@pytest.mark.parametrize(
    ("kind", "trades", "expected"),
    [("float", [0.25, -0.5], 0.75), ("float32", [[0.5, 0.5]], [0.5]), ("int", [[1.0]], [0.0])],
)
def test_real_numbers_of_the_right_shape_are_accepted_as_float64(kind, trades, expected):
    cost = Plain(kind)(np.array(trades))
    assert np.asarray(cost).dtype == np.float64
    assert np.asarray(cost).tolist() == expected


ACTIONS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], np.float32)


@pytest.mark.parametrize("mode", [None, "sync"])
def test_a_wrong_cost_is_refused_by_every_backend_instead_of_charged(mode):
    vec = sekai.make_vec(
        "Portfolio-v0", 4, n_assets=2, transaction_cost=WholeBatch(), vectorization_mode=mode
    )
    vec.reset(seed=0)
    if mode == "sync":  # one row per sub-env: one number is right there
        costs = [info["cost"] for info in vec.step(ACTIONS).infos]
        assert costs == pytest.approx([0.001, 0.001, 0.0, 0.0])
        return
    with pytest.raises(ValueError, match=r"^WholeBatch\._cost returned a cost of shape \(\)"):
        vec.step(ACTIONS)
    assert vec.get_attr("equity") == [1.0] * 4  # nothing was charged


@pytest.mark.parametrize(("env_id", "action"), [("Trading-v0", 2), ("Market-v0", None)])
def test_a_nan_cost_is_refused_before_it_reaches_the_equity(env_id, action):
    env = sekai.make(env_id, transaction_cost=Gap())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"^Gap\._cost returned the cost nan"):
        env.step(env.action_space.sample() if action is None else action)
    assert env.unwrapped.equity == 1.0


class Doubled(ProportionalCost):
    """A built-in model with a _cost of its own, which forgets to sum over the assets."""

    def _cost(self, trades: np.ndarray, context: dict[str, Any]) -> Any:
        return 2 * self.rate * np.abs(trades)


class Renamed(ProportionalCost):
    """A built-in model under another name, its _cost the built-in one."""


class Twice(Doubled):
    """A user model whose _cost is its parent's (Doubled's)."""


def test_a_subclass_of_a_built_in_model_is_checked_when_it_has_its_own_cost():
    # named by the class that wrote the _cost that ran, not by the built-in's repr
    for model in (Doubled(0.01), Twice(0.01)):
        with pytest.raises(ValueError, match=r"^Doubled\._cost returned a cost of shape \(4, 2\)"):
            model(np.full((4, 2), 0.1))
    assert Renamed(0.01)(np.full((4, 2), 0.1)).tolist() == pytest.approx([0.002] * 4)


def test_a_composite_of_parts_with_the_same_repr_names_the_subclass_and_part_at_fault():
    # Doubled(0.01) shows as ProportionalCost(0.01): the class and the index tell them apart
    model = ProportionalCost(0.01) + Doubled(0.01) + ProportionalCost(0.02)
    with pytest.raises(ValueError) as info:
        model(np.full((4, 2), 0.1))
    assert str(info.value).startswith(
        "Doubled._cost, part 2 of 3 of the CompositeCost ProportionalCost(0.01) + "
        "ProportionalCost(0.01) + ProportionalCost(0.02), returned a cost of shape (4, 2)"
    )
    nested = (ProportionalCost(0.01) + Renamed(0.01)) + (Gap() + NoCost())
    with pytest.raises(
        ValueError, match=r"^Gap\._cost, part 3 of 4 of the CompositeCost .* the cost nan"
    ):
        nested(np.full((4, 2), 0.1))
