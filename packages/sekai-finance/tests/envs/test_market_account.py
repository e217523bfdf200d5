"""Market-v0's single-account fast path agrees with sekai.finance.account's batched functions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from sekai.envs.finance._market_account import project_one, settle_one
from sekai.finance.account import AccountConfig, project_weights, settle

configs = st.builds(
    AccountConfig,
    allow_short=st.booleans(),
    max_leverage=st.floats(0.1, 3.0),
    cash_rate=st.floats(-0.05, 0.1),
    margin_rate=st.one_of(st.none(), st.floats(0.0, 0.2)),
    borrow_rate=st.floats(0.0, 0.2),
)
values = st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(configs, values, st.data())
def test_project_one_matches_project_weights(
    config: AccountConfig, scores: list[float], data: st.DataObject
) -> None:
    tradable = data.draw(st.lists(st.booleans(), min_size=len(scores), max_size=len(scores)))
    cash = None if config.allow_short else data.draw(st.floats(-1.0, 2.0))
    expected = project_weights(np.array(scores), np.array(tradable), config, cash_score=cash)
    assert np.allclose(project_one(scores, tradable, config, cash), expected, atol=1e-12)


@settings(max_examples=300, deadline=None)
@given(configs, values, st.data())
def test_settle_one_matches_settle(
    config: AccountConfig, weights: list[float], data: st.DataObject
) -> None:
    n = len(weights)
    returns = data.draw(
        st.lists(st.one_of(st.floats(-0.9, 0.9), st.just(float("nan"))), min_size=n, max_size=n)
    )
    cost = data.draw(st.floats(0.0, 1.2))
    dt = data.draw(st.floats(1e-3, 1.0))
    growth, drifted, financing, wiped = settle_one(
        weights, returns, cost=cost, dt=dt, config=config
    )
    want = settle(np.array(weights), np.array(returns), cost=cost, dt=dt, config=config)
    assert np.isclose(growth, float(want.growth), atol=1e-12)
    assert np.isclose(financing, float(want.financing), atol=1e-12)
    assert wiped == bool(want.wiped_out)
    if not wiped and abs(1.0 + np.nansum(np.array(weights) * np.array(returns)) + financing) > 1e-6:
        assert np.allclose(drifted, want.drifted, rtol=1e-9, atol=1e-9)
