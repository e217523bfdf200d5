"""Market-v0's episode data: one window of a (possibly incomplete) panel, ready to observe."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sekai.finance.data import MarketData

__all__ = ["MarketEpisode", "exogenous_width"]


def exogenous_width(
    names: Sequence[str], data: MarketData | None, state_spec: Mapping[str, Any] | None
) -> int:
    """Total width of the named market-wide series; ``KeyError`` naming an unknown one."""
    width = 0
    for name in names:
        if data is not None:
            if name not in data.exogenous:
                raise KeyError(
                    f"no exogenous series {name!r} in the data; available: "
                    f"{sorted(data.exogenous)}."
                )
            width += data.exogenous_width(name)
        else:
            spec = dict(state_spec or {})
            if name not in spec:
                raise KeyError(
                    f"the model has no state {name!r} to observe; its state: {sorted(spec)}."
                )
            width += int(np.prod(spec[name], dtype=np.int64))
    return width


class MarketEpisode:
    """The rows of one episode window and the per-asset observation tensor built from them.

    Attributes:
        prices: ``(window, n)`` float64, NaN where an asset is not listed.
        listed: ``(window, n)`` bool.
        price_rows, listed_rows: the same as nested Python lists (read per step).
        log_returns: ``(window, n)`` float64; row ``j`` is the return from ``j - 1`` to ``j``
            (NaN where undefined, always in row 0).
        per_asset: ``(n, window, F)`` float32: per row ``[log return (0 if undefined),
            availability, features (NaN -> 0)...]``.
        market: ``(window, E)`` float32 market-wide series, or None.
        state: latent state rows ``{name: (window, ...)}`` (empty for history).
        times: decision timestamps per row (None in simulation: the step index is used).
        start: the window's first row in the data (None in simulation).
    """

    def __init__(
        self,
        prices: np.ndarray,
        listed: np.ndarray,
        *,
        features: Sequence[np.ndarray] = (),
        market: Sequence[np.ndarray] = (),
        state: Mapping[str, np.ndarray] | None = None,
        times: list[Any] | None = None,
        start: int | None = None,
    ) -> None:
        self.prices = prices
        self.listed = listed
        self.price_rows: list[list[float]] = prices.tolist()  # Python rows for the step's loop
        self.listed_rows: list[list[bool]] = listed.tolist()
        window, n = prices.shape
        log_returns = np.full((window, n), np.nan)
        defined = listed[1:] & listed[:-1]
        safe_now = np.where(defined, prices[1:], 1.0)
        safe_before = np.where(defined, prices[:-1], 1.0)
        log_returns[1:] = np.where(defined, np.log(safe_now / safe_before), np.nan)
        self.log_returns = log_returns
        per_asset = np.zeros((n, window, 2 + len(features)), np.float32)
        per_asset[:, 1:, 0] = np.where(defined, log_returns[1:], 0.0).T
        per_asset[:, 1:, 1] = defined.T
        for k, values in enumerate(features):
            per_asset[:, :, 2 + k] = np.nan_to_num(values, nan=0.0).T
        self.per_asset = per_asset
        self.market = (
            np.nan_to_num(np.concatenate([m.reshape(window, -1) for m in market], axis=1)).astype(
                np.float32
            )
            if market
            else None
        )
        self.state = dict(state or {})
        self.times = times
        self.start = start

    @classmethod
    def from_history(
        cls,
        data: MarketData,
        start: int,
        window: int,
        features: Sequence[str],
        exogenous: Sequence[str],
    ) -> MarketEpisode:
        """Rows ``[start, start + window)`` of ``data``."""
        rows = slice(start, start + window)
        stamps = data.timestamps[rows]
        times = list(stamps) if stamps.dtype.kind == "M" else stamps.tolist()
        return cls(
            data.prices[rows],
            data.mask[rows],
            features=[data.field(name)[rows] for name in features],
            market=[data.exogenous_series(name)[rows] for name in exogenous],
            times=times,
            start=start,
        )

    @classmethod
    def from_simulation(
        cls, simulation: Any, window: int, exogenous: Sequence[str]
    ) -> MarketEpisode:
        """A simulated path of ``window`` rows (``model.simulate(rng, window - 1)``)."""
        prices = np.asarray(simulation.prices, dtype=np.float64).reshape(window, -1)
        mask = simulation.mask
        listed = np.isfinite(prices) if mask is None else np.asarray(mask) & np.isfinite(prices)
        state = {name: np.asarray(v) for name, v in simulation.state.items()}
        return cls(
            np.where(listed, prices, np.nan),
            listed,
            market=[state[name] for name in exogenous],
            state=state,
        )

    def volatility(self, row: int, lookback: int) -> np.ndarray:
        """Per-asset std (ddof 0) of the available log returns observed at ``row``.

        NaN for assets with fewer than 2 available returns.
        """
        window = self.log_returns[row - lookback + 1 : row + 1]
        available = np.isfinite(window)
        count = available.sum(axis=0)
        values = np.where(available, window, 0.0)
        safe = np.maximum(count, 1)
        mean = values.sum(axis=0) / safe
        spread = np.where(available, values - mean, 0.0)
        std = np.sqrt((spread * spread).sum(axis=0) / safe)
        result: np.ndarray = np.where(count >= 2, std, np.nan)
        return result
