"""Regime switching: a hidden Markov chain choosing which GBM drives each step."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sekai.finance._values import real_array
from sekai.finance.simulators._checks import read_only
from sekai.finance.simulators.base import KernelModel
from sekai.finance.simulators.gbm import GBM

__all__ = ["RegimeSwitching", "stationary_distribution"]


def stationary_distribution(transition: np.ndarray) -> np.ndarray:
    """Return a stationary distribution ``pi = pi P`` of a row-stochastic matrix."""
    k = transition.shape[0]
    system = np.vstack([transition.T - np.eye(k), np.ones((1, k))])
    target = np.zeros(k + 1)
    target[-1] = 1.0
    pi = np.linalg.lstsq(system, target, rcond=None)[0]
    pi = np.clip(pi, 0.0, None)
    result: np.ndarray = pi / pi.sum()
    return result


def _check_distribution(name: str, value: object, k: int) -> np.ndarray:
    try:
        array = real_array(name, value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a distribution over the {k} regimes") from exc
    if (
        array.shape != (k,)
        or not np.all(np.isfinite(array))
        or np.any(array < 0.0)
        or abs(array.sum() - 1.0) > 1e-8
    ):
        raise ValueError(
            f"{name} must be a distribution over the {k} regimes (length {k}, non-negative, "
            f"summing to 1), got {array.tolist()!r}"
        )
    return array


class RegimeSwitching(KernelModel):
    """GBM regimes switched by a hidden Markov chain.

    The regime at row ``t`` drives the increment from ``t`` to ``t + 1``; then the next regime is
    drawn from row ``regime`` of ``transition``. State: ``regime`` (a float per row).

    Args:
        regimes: the GBM of each regime; they share ``n_assets``, ``dt`` and ``s0``.
        transition: ``(K, K)`` row-stochastic, non-negative matrix.
        initial: distribution of the first regime; None means the stationary distribution.
    """

    _repr_fields = ("regimes", "transition", "initial")

    regimes: tuple[GBM, ...]
    transition: np.ndarray
    initial: np.ndarray

    def __init__(
        self,
        regimes: Sequence[GBM],
        transition: np.ndarray | Sequence[Sequence[float]],
        *,
        initial: np.ndarray | Sequence[float] | None = None,
    ) -> None:
        models = tuple(regimes)
        if not models or not all(isinstance(m, GBM) for m in models):
            raise ValueError("regimes must be a non-empty sequence of GBM models")
        first = models[0]
        for i, m in enumerate(models[1:], start=1):
            if m.n_assets != first.n_assets:
                raise ValueError(
                    f"regimes must share n_assets: regime 0 has {first.n_assets}, "
                    f"regime {i} has {m.n_assets}"
                )
            if m.dt != first.dt:
                raise ValueError(
                    f"regimes must share dt: regime 0 has {first.dt}, regime {i} has {m.dt}"
                )
            if not np.array_equal(m._s0, first._s0):
                raise ValueError(f"regimes must share s0: regime {i} differs from regime 0")
        k = len(models)
        try:
            matrix = real_array("transition", transition)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"transition must be a ({k}, {k}) matrix of numbers") from exc
        if matrix.shape != (k, k):
            raise ValueError(f"transition must have shape ({k}, {k}), got {matrix.shape}")
        if (
            not np.all(np.isfinite(matrix))
            or np.any(matrix < 0.0)
            or not np.allclose(matrix.sum(axis=1), 1.0, rtol=0.0, atol=1e-8)
        ):
            raise ValueError("transition must be row-stochastic: non-negative rows summing to 1")
        start = (
            stationary_distribution(matrix)
            if initial is None
            else _check_distribution("initial", initial, k)
        )
        cumulative = np.cumsum(matrix, axis=1)
        self._set(
            regimes=models,
            transition=read_only(matrix),
            initial=read_only(start),
            n_assets=first.n_assets,
            dt=first.dt,
            _s0=first._s0,
            _cum=read_only(cumulative),
            _cum0=read_only(np.cumsum(start)),
        )

    _cum: np.ndarray
    _cum0: np.ndarray

    def __repr__(self) -> str:
        return f"RegimeSwitching(regimes={list(self.regimes)!r}, transition=[...], initial=[...])"

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        """``{"regime": ()}``: the index of the regime driving the next step."""
        return {"regime": ()}

    def _draw(self, u: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
        """Invert cumulative probabilities (one row per draw) at uniforms ``u``."""
        index = (u[:, None] >= cumulative).sum(axis=1)
        result: np.ndarray = np.minimum(index, len(self.regimes) - 1)
        return result

    def _init_state(self, rng: np.random.Generator, k: int) -> dict[str, np.ndarray]:
        r = self._draw(rng.random(k), np.broadcast_to(self._cum0, (k, len(self.regimes))))
        return {"regime": r.astype(np.float64), "_r": r}

    def _advance(
        self, rng: np.random.Generator, state: dict[str, np.ndarray], k: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        z = rng.standard_normal((k, self.n_assets))
        r = state["_r"]
        candidates = np.stack([m.log_increments(z) for m in self.regimes])
        log_returns = candidates[r, np.arange(k)]
        r_next = self._draw(rng.random(k), self._cum[r])
        return log_returns, {"regime": r_next.astype(np.float64), "_r": r_next}
