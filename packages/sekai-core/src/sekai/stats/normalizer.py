"""ObservationNormalizer: per-leaf running statistics for a space, shared by normalisation wrappers.

Used by ``NormalizeObservation`` (one observation per call) and ``VecNormalizeObservation``
(a batch per call, ``batched=True``): every Box leaf, at top level or inside Dict/Tuple, gets
its own statistics; a MaskedBox leaf gets per-feature statistics over its occupied slots and
outputs 0 in empty slots; other leaves pass through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai._args import check_real
from sekai.spaces import Box, Dict, MaskedBox, Space, Tuple
from sekai.stats.running import (
    Describe,
    ExponentialMovingStats,
    RunningMeanStd,
    format_index,
    small_sample,
    update_checked,
    wrapper_state_part,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["NormalizerAttributes", "ObservationNormalizer", "Stats", "non_finite_advice"]

Stats = RunningMeanStd | ExponentialMovingStats

_BOX, _MASKED, _DICT, _TUPLE, _PASS = range(5)


def non_finite_advice(transform: str) -> str:
    """What a normalisation wrapper's error about a value that would make its statistics NaN
    or inf advises."""
    return (
        "Fix the env, or replace or rescale such values before normalising, e.g. with a "
        f"{transform}."
    )


def _describer(path: str, selected: NDArray[np.bool_] | None, batched: bool) -> Describe:
    """Describes an entry of the batch ``source[selected]`` (``selected``: a mask over the
    leading axes of the observation leaf ``source`` at ``path``; None: the whole leaf, as a
    batch of one unless ``batched``) as the entry of the observation it came from."""

    def describe(at: tuple[int, ...], value: float) -> str:
        row, rest = at[0], at[1:]
        if selected is None:
            position: tuple[int, ...] = (row,) if batched else ()
        else:
            position = tuple(int(i) for i in np.argwhere(selected)[row])
        whose = ""
        if batched:  # the first axis is the sub-env's
            whose, position = f"sub-env {position[0]}'s ", position[1:]
        return f"{whose}{path}{format_index(position + rest)} is {value}"

    return describe


class ObservationNormalizer:
    """Normalise observations of ``space`` leaf by leaf with running statistics.

    Args:
        space: the (single, unbatched) observation space.
        stats: ``"running"`` (``RunningMeanStd``) or ``"ewm"`` (``ExponentialMovingStats``).
        halflife: the EWM halflife, in update calls (``"ewm"`` only).
        epsilon: added to the variance before dividing.
        clip: clip normalised values to ``[-clip, clip]`` (``None``: no clipping).
        owner: the name used in error messages.

    Attributes:
        stats: the statistics objects, nested like the space (``None`` for pass-through leaves);
            the wrappers' ``obs_rms``. Assigning it (a structure of the same form, e.g. another
            normaliser's) makes normalisation use those objects.
        epsilon: added to the variance; assignable.
        observation_space: the space of normalised observations (float64 Box/MaskedBox leaves).

    Raises:
        ValueError: bad ``stats``, ``clip`` or ``epsilon``.
        TypeError: the space has no Box or MaskedBox leaf, or ``epsilon`` is not a number.
    """

    def __init__(
        self,
        space: Space[Any],
        *,
        stats: str = "running",
        halflife: float = 1000.0,
        epsilon: float = 1e-8,
        clip: float | None = None,
        owner: str = "NormalizeObservation",
    ) -> None:
        if stats not in ("running", "ewm"):
            raise ValueError(f"stats must be 'running' or 'ewm', got {stats!r}.")
        if clip is not None and not check_real(owner, "clip", clip) > 0:
            raise ValueError(f"clip must be positive, got {clip}.")
        self.epsilon = epsilon
        # Checked whatever the kind, before any leaf is built: a bad value is a mistake even
        # where "running" statistics leave it unused.
        ExponentialMovingStats(halflife=halflife)
        self.kind = stats
        self.halflife = halflife
        self.clip = None if clip is None else float(clip)
        self.owner = owner
        self._has_leaf = False
        self._plan = self._build(space)
        if not self._has_leaf:
            raise TypeError(
                "Observation normalisation needs at least one Box or MaskedBox in the "
                f"observation space, got {space!r}."
            )
        self._stats = self._stats_of(self._plan)
        self.observation_space = self._space_of(self._plan, space)
        # One small Box observation may take the statistics' float path (see normalize()).
        self._small_box = self._plan[0] == _BOX and small_sample(self._plan[1].shape)

    # -- assignable attributes -----------------------------------------------------------
    # Properties: normalize() reads _epsilon and the plan's leaves, so an assignment must
    # reach those (a plain attribute would be ignored).

    @property
    def epsilon(self) -> float:
        """Added to the variance before dividing (finite, > 0)."""
        return self._epsilon

    @epsilon.setter
    def epsilon(self, epsilon: float) -> None:
        if isinstance(epsilon, bool) or not isinstance(
            epsilon, (int, float, np.integer, np.floating)
        ):
            raise TypeError(f"epsilon must be a number, got {type(epsilon).__name__}.")
        if not 0 < epsilon < math.inf:
            raise ValueError(f"epsilon must be finite and > 0, got {epsilon}.")
        self._epsilon = float(epsilon)

    @property
    def stats(self) -> Any:
        """The statistics objects, nested like the space (``None`` for pass-through leaves)."""
        return self._stats

    @stats.setter
    def stats(self, stats: Any) -> None:
        # Checked in full before anything changes: a bad assignment leaves the old statistics.
        self._plan = self._zip(self._plan, stats, f"{self.owner}: obs_rms", self._check_stats)
        self._stats = self._stats_of(self._plan)

    @staticmethod
    def _check_stats(current: Stats, stats: Any, where: str) -> Stats:
        if not isinstance(stats, (RunningMeanStd, ExponentialMovingStats)):
            raise TypeError(
                f"{where} must be a RunningMeanStd or ExponentialMovingStats of shape "
                f"{current.shape}, got {stats!r}."
            )
        if stats.shape != current.shape:
            raise ValueError(f"{where} has shape {stats.shape}, expected {current.shape}.")
        return stats

    # -- construction --------------------------------------------------------------------

    def _new_stats(self, shape: tuple[int, ...]) -> Stats:
        if self.kind == "ewm":
            return ExponentialMovingStats(shape, halflife=self.halflife)
        return RunningMeanStd(shape)

    def _build(self, space: Space[Any]) -> tuple[Any, ...]:
        if isinstance(space, MaskedBox):
            self._has_leaf = True
            return (_MASKED, self._new_stats(tuple(space.element_shape)))
        if isinstance(space, Box):
            self._has_leaf = True
            return (_BOX, self._new_stats(space.shape))
        if isinstance(space, Dict):
            return (_DICT, {key: self._build(sub) for key, sub in space.items()})
        if isinstance(space, Tuple):
            return (_TUPLE, tuple(self._build(sub) for sub in space.spaces))
        return (_PASS, None)

    def _stats_of(self, node: tuple[Any, ...]) -> Any:
        kind, payload = node
        if kind == _DICT:
            return {key: self._stats_of(child) for key, child in payload.items()}
        if kind == _TUPLE:
            return tuple(self._stats_of(child) for child in payload)
        return payload

    def _bounds(self) -> tuple[float, float]:
        if self.clip is None:
            return -np.inf, np.inf
        return -self.clip, self.clip

    def _space_of(self, node: tuple[Any, ...], space: Space[Any]) -> Space[Any]:
        kind, payload = node
        low, high = self._bounds()
        if kind == _BOX:
            return Box(low, high, shape=space.shape, dtype=np.float64)
        if kind == _MASKED:
            assert isinstance(space, MaskedBox)
            return MaskedBox(
                low, high, shape=space.element_shape, max_size=space.max_size, dtype=np.float64
            )
        if kind == _DICT:
            assert isinstance(space, Dict)
            return Dict({key: self._space_of(payload[key], sub) for key, sub in space.items()})
        if kind == _TUPLE:
            assert isinstance(space, Tuple)
            return Tuple([self._space_of(c, s) for c, s in zip(payload, space.spaces)])
        return space

    # -- normalisation -------------------------------------------------------------------

    def normalize(
        self,
        obs: Any,
        *,
        update: bool = True,
        batched: bool = False,
        rows: NDArray[np.bool_] | None = None,
    ) -> Any:
        """Update the statistics with ``obs`` (if ``update``), then return it normalised.

        Args:
            obs: one observation, or with ``batched=True`` a batch (leading axis N, as
                ``concatenate`` builds it).
            update: whether to update the statistics first.
            batched: whether ``obs`` is a batch.
            rows: with ``batched``, the ``(N,)`` mask of the rows that update the statistics
                (None: every row); every row is normalised.

        Raises:
            ValueError: with ``update``, a NaN or infinite value where it would update the
                statistics, or one that would take them past float64's range, naming the
                sub-env (``batched``) and the part of the observation; no statistics are
                changed. Without ``update`` (frozen statistics) nothing is checked: a NaN is
                normalised to NaN.
        """
        payload = self._plan[1]
        if update and not batched and self._small_box and isinstance(payload, RunningMeanStd):
            # One small Box observation: a float path with the same result.
            obs = np.asarray(obs, dtype=np.float64)
            out = payload._update_normalize(obs, self._epsilon)
            if out is not None:
                return self._clipped(out)
        if update:
            parts: list[tuple[Stats, Any, Describe]] = []
            obs = self._updates(self._plan, obs, batched, rows, "observation", parts)
            transform = "VecTransformObservation" if batched else "TransformObservation"
            update_checked(self.owner, parts, non_finite_advice(transform))
        return self._apply(self._plan, obs)

    def _updates(
        self,
        node: tuple[Any, ...],
        obs: Any,
        batched: bool,
        rows: NDArray[np.bool_] | None,
        path: str,
        parts: list[tuple[Stats, Any, Describe]],
    ) -> Any:
        """Append the batch each statistics leaf is updated with to ``parts`` (with what
        describes its entries); return ``obs`` with those leaves in float64, for ``_apply``."""
        kind, payload = node
        if kind == _BOX:
            x = np.asarray(obs, dtype=np.float64)
            if not batched:
                parts.append((payload, x[None], _describer(path, None, batched)))
            else:
                parts.append(
                    (payload, x if rows is None else x[rows], _describer(path, rows, batched))
                )
            return x
        if kind == _MASKED:
            values = np.asarray(obs["values"], dtype=np.float64)
            mask = np.asarray(obs["mask"])
            counted = mask.astype(bool)
            if rows is not None:
                counted &= rows.reshape((-1,) + (1,) * (counted.ndim - 1))
            # (k, *element_shape): the occupied slots, single or batched
            parts.append(
                (payload, values[counted], _describer(f"{path}['values']", counted, batched))
            )
            return {"values": values, "mask": mask}
        if kind == _DICT:
            return {
                key: self._updates(child, obs[key], batched, rows, f"{path}[{key!r}]", parts)
                for key, child in payload.items()
            }
        if kind == _TUPLE:
            return tuple(
                self._updates(child, sub, batched, rows, f"{path}[{i}]", parts)
                for i, (child, sub) in enumerate(zip(payload, obs))
            )
        return obs

    def _apply(self, node: tuple[Any, ...], obs: Any) -> Any:
        kind, payload = node
        if kind == _BOX:
            out = payload.normalize(np.asarray(obs, dtype=np.float64), self._epsilon)
        elif kind == _MASKED:
            values = np.asarray(obs["values"], dtype=np.float64)
            mask = np.asarray(obs["mask"])
            out = payload.normalize(values, self._epsilon)
            out[~mask.astype(bool)] = 0.0
            if self.clip is not None:
                np.clip(out, -self.clip, self.clip, out=out)
            return {"values": out, "mask": mask.copy()}
        elif kind == _DICT:
            return {key: self._apply(child, obs[key]) for key, child in payload.items()}
        elif kind == _TUPLE:
            return tuple(self._apply(c, o) for c, o in zip(payload, obs))
        else:
            return obs
        return self._clipped(out)

    def _clipped(self, out: Any) -> Any:
        """A normalised Box leaf clipped to ``[-clip, clip]`` (in place when it is an array)."""
        if self.clip is not None:
            if isinstance(out, np.ndarray):
                np.clip(out, -self.clip, self.clip, out=out)
            else:  # a shape () leaf normalises to a NumPy scalar, which cannot be written into
                out = np.clip(out, -self.clip, self.clip)
        return out

    # -- checkpointing -------------------------------------------------------------------

    def state_dict(self) -> Any:
        """The statistics' state dicts, nested like the space (``None`` for pass-through)."""
        return self._state_of(self._plan)

    def _state_of(self, node: tuple[Any, ...]) -> Any:
        kind, payload = node
        if kind in (_BOX, _MASKED):
            return payload.state_dict()
        if kind == _DICT:
            return {key: self._state_of(child) for key, child in payload.items()}
        if kind == _TUPLE:
            return [self._state_of(child) for child in payload]
        return None

    def load_state_dict(self, state: Any, where: str = "state") -> None:
        """Restore statistics saved by ``state_dict()`` (the structure must match), all or
        nothing: every part is checked before any is loaded. ``where`` names ``state`` in
        errors, after the owner."""
        loads: list[Callable[[], None]] = []

        def check(current: Stats, value: Any, at: str) -> Stats:
            loads.append(self._checked_leaf_state(current, value, at))
            return current

        self._zip(self._plan, state, f"{self.owner}: {where}", check)
        for load in loads:
            load()

    def load_wrapper_state(self, state: Any) -> None:
        """``load_state_dict`` of the owning wrapper: its ``state_dict()``,
        ``{"obs_rms": <this normaliser's state>}``; errors name the wrapper and the part."""
        self.load_state_dict(wrapper_state_part(self.owner, state, "obs_rms"), "state['obs_rms']")

    @staticmethod
    def _checked_leaf_state(current: Stats, state: Any, where: str) -> Callable[[], None]:
        # Statistics hold at least one of these keys; a dict with none of them is most likely
        # the state of a normaliser of another (Dict or Tuple) space.
        if not isinstance(state, Mapping):  # as the statistics' own load_state_dict says
            raise TypeError(
                f"{where} must be the statistics of a leaf of shape {current.shape} (a dict with "
                f"'mean', 'var' and 'count'), got {type(state).__name__}."
            )
        if not {"mean", "var", "count"} & set(state):
            got = f"a dict with keys {list(state)}"
            raise ValueError(
                f"{where} must be the statistics of a leaf of shape {current.shape} (a dict with "
                f"'mean', 'var' and 'count'), got {got}: the saved state's structure does not "
                "match this wrapper's observation space."
            )
        return current._checked_state(state, where)

    def _zip(
        self,
        node: tuple[Any, ...],
        value: Any,
        where: str,
        leaf: Callable[[Stats, Any, str], Stats],
    ) -> tuple[Any, ...]:
        """Walk ``value``, nested like the space (dicts, tuples or lists, ``None`` for
        pass-through leaves), along ``node``: the plan with each statistics leaf replaced by
        ``leaf(stats, value_there, where)``. A structure that differs raises ValueError."""
        kind, payload = node
        if kind in (_BOX, _MASKED):
            return (kind, leaf(payload, value, where))
        if kind == _DICT:
            if not isinstance(value, dict) or set(value) != set(payload):
                raise ValueError(
                    f"{where} must be a dict with keys {list(payload)}, got {value!r}."
                )
            return (
                kind,
                {
                    key: self._zip(child, value[key], f"{where}[{key!r}]", leaf)
                    for key, child in payload.items()
                },
            )
        if kind == _TUPLE:
            if not isinstance(value, (list, tuple)) or len(value) != len(payload):
                raise ValueError(
                    f"{where} must be a list of {len(payload)} entries, got {value!r}."
                )
            return (
                kind,
                tuple(
                    self._zip(child, sub, f"{where}[{i}]", leaf)
                    for i, (child, sub) in enumerate(zip(payload, value))
                ),
            )
        if value is not None:
            raise ValueError(f"{where} must be None (that part is not normalised), got {value!r}.")
        return node


class NormalizerAttributes:
    """``obs_rms`` and ``epsilon`` for a wrapper normalising with ``self._normalizer``.

    Assigning them (directly or with ``set_attr``) changes what the normaliser uses, as in
    gymnasium's ``eval_env.obs_rms = train_env.obs_rms``; a wrong structure is refused.
    """

    _normalizer: ObservationNormalizer

    @property
    def obs_rms(self) -> Any:
        """The statistics, nested like the space (``None`` for pass-through leaves)."""
        return self._normalizer.stats

    @obs_rms.setter
    def obs_rms(self, stats: Any) -> None:
        self._normalizer.stats = stats

    @property
    def epsilon(self) -> float:
        """Added to the variance before dividing."""
        return self._normalizer.epsilon

    @epsilon.setter
    def epsilon(self, epsilon: float) -> None:
        self._normalizer.epsilon = epsilon
