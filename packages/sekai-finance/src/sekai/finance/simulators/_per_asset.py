"""PerAssetModel: the set-up shared by the models with per-asset parameters and a correlation."""

from __future__ import annotations

import numpy as np

from sekai.finance.simulators._checks import (
    as_float,
    broadcast,
    check_correlation,
    cholesky,
    public,
    resolve_n_assets,
)
from sekai.finance.simulators.base import KernelModel

__all__ = ["PerAssetModel"]


class PerAssetModel(KernelModel):
    """A kernel model whose parameters are scalars or per-asset arrays, with ``corr`` and ``dt``.

    Subclasses validate their parameters with ``per_asset`` and hand them to
    ``_set_per_asset``, which checks ``corr``, ``n_assets`` and ``dt`` in that order.
    """

    corr: np.ndarray | None
    _chol: np.ndarray | None

    def _set_per_asset(
        self, arrays: dict[str, np.ndarray], corr: object, dt: object, n_assets: object
    ) -> tuple[dict[str, np.ndarray], float]:
        """Validate ``corr``, ``n_assets`` and ``dt``; set the fields every such model has.

        Sets each entry of ``arrays`` as users passed it (``public``), ``corr``, ``dt``,
        ``n_assets``, ``_chol`` and ``_s0`` (from ``arrays["s0"]``).

        Args:
            arrays: the validated parameters by name (``per_asset`` results), ``"s0"`` included.
            corr: the correlation argument (None for independent assets).
            dt: years per step.
            n_assets: the number of assets, or None to infer it.

        Returns:
            The parameters broadcast to read-only ``(n_assets,)`` arrays, and ``dt`` as a float.
        """
        corr_a = check_correlation(corr)
        n = resolve_n_assets(n_assets, arrays, corr_a)
        step = as_float("dt", dt, "gt0")
        full = {name: broadcast(value, n) for name, value in arrays.items()}
        self._set(
            **{name: public(value) for name, value in arrays.items()},
            corr=corr_a,
            dt=step,
            n_assets=n,
            _chol=cholesky(corr_a),
            _s0=full["s0"],
        )
        return full, step
