"""Tests for PerAssetModel: the shared set-up of models with per-asset parameters."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GARCH, GBM, Heston, MeanReverting, MertonJumpDiffusion
from sekai.finance.simulators._per_asset import PerAssetModel

_MODELS = (GBM, MertonJumpDiffusion, Heston, MeanReverting, GARCH)


@pytest.mark.parametrize("model_type", _MODELS)
def test_set_per_asset_sets_corr_dt_n_assets_cholesky_and_initial_prices(
    model_type: type[PerAssetModel],
) -> None:
    corr = np.array([[1.0, 0.5], [0.5, 1.0]])
    model = model_type(s0=[10.0, 20.0], corr=corr, dt=0.5)  # type: ignore[call-arg]
    assert isinstance(model, PerAssetModel)
    assert model.n_assets == 2 and model.dt == 0.5
    assert model.corr is not None and np.array_equal(model.corr, corr)
    assert not model.corr.flags.writeable
    assert model._chol is not None and np.allclose(model._chol @ model._chol.T, corr)
    assert model._s0.tolist() == [10.0, 20.0] and not model._s0.flags.writeable


@pytest.mark.parametrize("model_type", _MODELS)
def test_set_per_asset_keeps_scalars_as_floats_and_broadcasts_s0(
    model_type: type[PerAssetModel],
) -> None:
    model = model_type(s0=5.0, n_assets=3)  # type: ignore[call-arg]
    assert model.s0 == 5.0 and isinstance(model.s0, float)  # type: ignore[attr-defined]
    assert model.corr is None and model._chol is None
    assert model._s0.tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("model_type", _MODELS)
def test_set_per_asset_checks_corr_then_n_assets_then_dt(
    model_type: type[PerAssetModel],
) -> None:
    with pytest.raises(ValueError, match="corr must be symmetric"):
        model_type(corr=[[1.0, 0.5], [0.4, 1.0]], n_assets=0, dt=0.0)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="n_assets must be an int >= 1"):
        model_type(n_assets=0, dt=0.0)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="dt must be a finite number > 0"):
        model_type(dt=0.0)  # type: ignore[call-arg]
