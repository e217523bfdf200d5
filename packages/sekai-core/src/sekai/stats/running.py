"""Running statistics: RunningMeanStd (all-time) and ExponentialMovingStats (recency-weighted)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sekai._args import check_real, type_name
from sekai.stats._moments import Moments, in_range, out_of_range, pooled

__all__ = ["ExponentialMovingStats", "RunningMeanStd"]

Float64Array = NDArray[np.float64]


def _as_shape(shape: int | tuple[int, ...], owner: str) -> tuple[int, ...]:
    """``shape`` as a tuple of ints >= 0 (bools refused: ``True`` is not a size)."""
    entries: tuple[Any, ...]
    try:
        entries = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    except TypeError:
        entries = (None,)  # not iterable: reported below
    for entry in entries:
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
            raise TypeError(f"{owner}: shape must be an int or a tuple of ints, got {shape!r}.")
        if entry < 0:
            raise ValueError(f"{owner}: shape entries must be >= 0, got {shape!r}.")
    return tuple(int(entry) for entry in entries)


def _batch_shape_text(shape: tuple[int, ...]) -> str:
    """The shape of a batch of samples of ``shape`` as text: ``(N, 4)``, ``(N,)``."""
    return f"({', '.join(['N', *map(str, shape)])}{',' if not shape else ''})"


def _as_batch(batch: ArrayLike, shape: tuple[int, ...], owner: str) -> Float64Array | None:
    """``batch`` as a float64 array ``(N, *shape)``, N > 0; None when it is ``(0, *shape)``
    (an empty batch of another shape is refused as a full one is)."""
    arr = np.asarray(batch, dtype=np.float64)
    if arr.shape[1:] != shape or arr.ndim != len(shape) + 1:
        raise ValueError(
            f"{owner}.update() expects a batch of shape {_batch_shape_text(shape)}, got "
            f"{arr.shape}. "
            "Add a leading batch axis for a single sample (x[None])."
        )
    return arr if arr.shape[0] else None


def wrapper_state_part(owner: str, state: Any, key: str) -> Any:
    """``state[key]``, what the ``load_state_dict`` of the normalising wrapper ``owner`` loads
    (its ``state_dict()`` is ``{key: ...}``); another state raises naming the wrapper and key."""
    if not isinstance(state, Mapping):
        raise TypeError(
            f"{owner}: state must be the dict state_dict() returns ({{{key!r}: ...}}), got "
            f"{type_name(state)}."
        )
    if key not in state:
        got = f"a dict with keys {list(state)}" if state else "an empty dict"
        raise KeyError(
            f"{owner}: state is missing {key!r} (state_dict() returns {{{key!r}: ...}}), got {got}."
        )
    return state[key]


# Up to this many entries, a Python loop over the floats beats NumPy's isfinite-then-all.
_SMALL = 32


def small_sample(shape: tuple[int, ...]) -> bool:
    """Whether one sample of ``shape`` may take ``RunningMeanStd``'s float path (it has at
    most ``_SMALL`` entries, and is no scalar): a caller can tell once, before converting
    every sample, that a larger one never does."""
    return bool(shape) and math.prod(shape) <= _SMALL


_FLOAT64 = np.dtype(np.float64)


def _float_array(values: list[float], shape: tuple[int, ...]) -> Float64Array:
    """The flat ``values`` as a float64 array of ``shape``."""
    arr = np.array(values, dtype=np.float64)
    return arr if len(shape) == 1 else arr.reshape(shape)


def all_finite(arr: NDArray[Any]) -> bool:
    """Whether every entry of the float array ``arr`` is finite (kept cheap for a row: a
    statistics update's check, an observation's)."""
    if arr.size <= _SMALL:
        return all(map(math.isfinite, arr.ravel().tolist()))
    return bool(np.isfinite(arr).all())


def format_index(index: tuple[int, ...]) -> str:
    """``[1, 2]`` for ``(1, 2)``; ``""`` for ``()``."""
    return f"[{', '.join(map(str, index))}]" if index else ""


# Describes, for the index of an entry of a batch and its value, what it was.
Describe = Callable[[tuple[int, ...], float], str]


def update_checked(
    owner: str, parts: Iterable[tuple[_MomentStats, ArrayLike, Describe]], advice: str
) -> None:
    """Update each statistics object with its batch ``(N, *shape)``, all or nothing.

    Every batch is checked before any statistics change: its shape, that its entries are
    finite (one vectorised test per batch), and that the statistics it makes are (samples
    far enough apart overflow the variance). Either failure, which would leave the statistics
    NaN or inf for good, raises a ValueError that starts with ``owner``, says what the entry
    was (``describe(index, value)``: ``"sub-env 1's observation['price'][0] is nan"``) and
    ends with ``advice``.
    """
    staged: list[tuple[_MomentStats, Moments]] = []
    for stats, batch, describe in parts:
        arr = _as_batch(batch, stats.shape, stats._name)
        if arr is None:
            continue
        if not all_finite(arr):
            at = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
            raise ValueError(
                f"{owner}: {describe(at, float(arr[at]))}. A NaN or infinite value would make "
                "the statistics NaN for good, and everything normalised with them, so nothing "
                f"was updated. {advice}"
            )
        moments = stats._after_batch(arr)
        if moments is None:
            at, moment = out_of_range(stats, arr)
            raise ValueError(
                f"{owner}: {describe(at, float(arr[at]))}, which would take the statistics' "
                f"{moment} past float64's range for good, and everything normalised with them, "
                f"so nothing was updated. {advice}"
            )
        staged.append((stats, moments))
    for stats, moments in staged:
        stats._store(moments)


def _describe_batch_entry(at: tuple[int, ...], value: float) -> str:
    return f"batch{format_index(at)} is {value}"


# A variance this far below 0, relative to max(1, mean^2), is round-off and read as 0.
_VAR_ROUNDING = 1e-12


def _checked_count(count: float, label: str) -> float:
    """A number of samples (or a sum of weights): finite and >= 0."""
    if not (math.isfinite(count) and count >= 0):
        raise ValueError(f"{label} must be finite and >= 0, got {count}.")
    return count


class _MomentStats:
    """What both running statistics share: shape, stored moments, batch updates, normalising."""

    _name: ClassVar[str]  # the public class name, for error messages
    _kind: ClassVar[str]  # the normalisers' ``stats=`` for this class
    _own_keys: ClassVar[tuple[str, ...]]  # the state_dict keys only this class writes

    def __init__(self, shape: int | tuple[int, ...]) -> None:
        self.shape = _as_shape(shape, self._name)
        self.mean: Float64Array = np.zeros(self.shape, dtype=np.float64)
        self.var: Float64Array = np.ones(self.shape, dtype=np.float64)

    @property
    def std(self) -> Float64Array:
        """``sqrt(var)``."""
        return np.sqrt(self.var)

    def update(self, batch: ArrayLike) -> None:
        """Add a batch of samples of shape ``(N, *shape)`` (axis 0); a ``(0, *shape)`` batch
        adds nothing.

        ``ExponentialMovingStats`` counts the whole batch as one step.

        Raises:
            ValueError: a batch of another shape, with a NaN or infinite entry, or one that
                would take the mean or variance past float64's range (the statistics are
                unchanged).
        """
        update_checked(
            f"{self._name}.update()",
            [(self, batch, _describe_batch_entry)],
            "Replace, rescale or drop such samples before updating.",
        )

    def update_from_moments(self, mean: ArrayLike, var: ArrayLike, count: float) -> None:
        """Add the moments of ``count`` samples: ``mean`` and ``var`` of the statistics' shape
        (a scalar, or anything else that broadcasts to it unchanged, is broadcast), finite,
        ``var >= 0`` (a variance below 0 by round-off, at most ``1e-12 * max(1, mean**2)``, as
        ``E[x^2] - E[x]^2`` leaves on a constant feature, is taken as 0); ``count`` finite
        and ``>= 0`` (0: nothing is added).

        Raises:
            TypeError: moments or a count that are not numbers.
            ValueError: moments of another shape, NaN or infinite moments, a negative
                variance, a negative or non-finite count, moments that would take the
                statistics past float64's range; the statistics are unchanged.
        """
        where = f"{self._name}.update_from_moments()"
        count = _checked_count(check_real(where, "count", count), f"{where}: count")
        mean, var = self._checked_moments(mean, var, lambda key: f"{where}: {key}", broadcast=True)
        if count > 0 and not self._combine(mean, var, count):
            at, moment = out_of_range(self, None, mean, var, count)
            index = format_index(at)
            raise ValueError(
                f"{where}: mean{index} = {mean[at]}, var{index} = {var[at]} and count = {count} "
                f"would take the statistics' {moment} past float64's range, so nothing was added."
            )

    def _after_batch(self, arr: Float64Array) -> Moments | None:
        """The statistics with a checked, non-empty batch ``(N, *shape)`` added, not stored;
        None where they would leave float64's range."""
        return in_range(self, arr)

    def _combine(self, mean: Float64Array | float, var: Float64Array | float, count: float) -> bool:
        """Add checked moments of ``count > 0`` samples (floats for shape ``()``); False, with
        nothing changed, where the statistics would leave float64's range."""
        moments = in_range(self, None, mean, var, count)
        if moments is None:
            return False
        self._store(moments)
        return True

    def _moments_with(self, mean: Any, var: Any, count: float) -> Moments:
        """The statistics with the moments of ``count > 0`` samples added, not stored (no
        check: ``in_range`` calls it)."""
        raise NotImplementedError

    def _store(self, moments: Moments) -> None:
        """Store what ``_moments_with`` made."""
        raise NotImplementedError

    def _checked_moments(
        self, mean: Any, var: Any, label: Callable[[str], str], *, broadcast: bool
    ) -> tuple[Float64Array, Float64Array]:
        """``mean`` and ``var`` as float64 arrays of the statistics' shape, checked: finite, and
        ``var >= 0``. ``label(key)`` names them in errors; with ``broadcast``, arrays that
        broadcast to the shape unchanged (a scalar) are accepted and broadcast."""
        checked: list[Float64Array] = []
        for key, value in (("mean", mean), ("var", var)):
            try:
                arr = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise TypeError(
                    f"{label(key)} must be a number or an array of numbers, got "
                    f"{type(value).__name__}."
                ) from error
            if arr.shape != self.shape:
                try:
                    fits = broadcast and np.broadcast_shapes(arr.shape, self.shape) == self.shape
                except ValueError:  # shapes that do not broadcast at all
                    fits = False
                if not fits:
                    raise ValueError(
                        f"{label(key)} has shape {arr.shape}, expected {self.shape} (the shape "
                        "of one sample)."
                    )
            if key == "mean":
                valid = np.isfinite(arr)
            else:  # var = E[x^2] - E[x]^2 leaves round-off below 0 on a constant feature
                with np.errstate(over="ignore", under="ignore"):
                    floor = -_VAR_ROUNDING * np.maximum(1.0, checked[0] ** 2)
                if arr.shape != floor.shape:  # a var to broadcast: the lowest floor for all
                    floor = floor.min(initial=-_VAR_ROUNDING)
                valid = np.isfinite(arr) & (arr >= floor)
            if not bool(valid.all()):
                at = tuple(int(i) for i in np.argwhere(~valid)[0])
                rule = "finite" if key == "mean" else "finite and >= 0"
                entry = f" at index {at}" if at else ""
                raise ValueError(f"{label(key)} must be {rule}, got {arr[at]}{entry}.")
            checked.append(np.array(np.broadcast_to(arr, self.shape), dtype=np.float64))
        np.maximum(checked[1], 0.0, out=checked[1])  # the round-off below 0 is clipped to 0
        return checked[0], checked[1]

    def normalize(self, x: ArrayLike, epsilon: float = 1e-8) -> Float64Array:
        """``(x - mean) / sqrt(var + epsilon)`` in float64; ``x`` may be one sample or a batch."""
        arr = np.asarray(x, dtype=np.float64)
        try:
            return (arr - self.mean) / np.sqrt(self.var + epsilon)
        except ValueError:  # NumPy's broadcast error names neither the method nor the shape
            shape = self.mean.shape
            raise ValueError(
                f"{self._name}.normalize() expects one sample of shape {shape} or a batch of "
                f"shape {_batch_shape_text(shape)}, got {arr.shape}."
            ) from None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()`` (shapes must match). The state is
        checked in full first: a refused one changes nothing."""
        self._checked_state(state)()

    def _checked_state(self, state: Any, where: str | None = None) -> Callable[[], None]:
        """Check a ``state_dict()`` in full and return the call that loads it (which cannot
        fail), so that several statistics can be loaded all or nothing.

        Args:
            state: the saved state.
            where: what to call the state in errors (None: ``"<class> state_dict"``).
        """
        raise NotImplementedError

    def _checked_moment_state(
        self, state: Any, where: str | None
    ) -> tuple[Float64Array, Float64Array, float, str]:
        """The checked ``mean``, ``var`` and ``count`` of a state, and the state's name in
        errors."""
        name = f"{self._name} state_dict" if where is None else where
        if not isinstance(state, Mapping):
            raise TypeError(
                f"{name} must be the dict state_dict() returns (with 'mean', 'var' and "
                f"'count'), got {type_name(state)}."
            )
        for other in _CLASSES:
            found = [key for key in other._own_keys if key in state]
            if found and not isinstance(self, other):
                # Same moments, other meaning: all-time counts against decayed weights.
                raise ValueError(
                    f"{'' if where is None else f'{where}: '}{self._name} cannot load a "
                    f"state_dict of {other._name} statistics (it has "
                    f"{', '.join(map(repr, found))}): these are {self._name} (a normaliser "
                    f"built with stats={self._kind!r}); load it into {other._name} "
                    f"(stats={other._kind!r})."
                )
        for key in ("mean", "var", "count"):
            if key not in state:
                raise KeyError(f"{name} is missing {key!r}.")
        mean, var = self._checked_moments(
            state["mean"], state["var"], lambda key: f"{name}[{key!r}]", broadcast=False
        )
        count = _checked_count(check_real(name, "count", state["count"]), f"{name}['count']")
        return mean, var, count, name


class RunningMeanStd(_MomentStats):
    """Mean and variance of every sample seen so far (parallel/Welford combination of batches).

    The first non-empty batch sets the mean, variance and count outright (the ``epsilon``
    prior only keeps the statistics defined before any data); later batches are combined with
    the stored moments weighted by their counts, so the statistics equal those of all samples
    seen. Computation is in float64.

    Args:
        shape: the shape of one sample (``()`` for scalars).
        epsilon: the initial count, so the statistics are defined before any update.
    """

    _name = "RunningMeanStd"
    _kind = "running"
    _own_keys = ("epsilon", "seen")

    def __init__(self, shape: int | tuple[int, ...] = (), epsilon: float = 1e-4) -> None:
        super().__init__(shape)
        self.epsilon = check_real(self._name, "epsilon", epsilon)
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon}.")
        self.count: float = self.epsilon
        # Not ``count <= epsilon``: with an epsilon of 1 or more, real counts reach it.
        self._seen = False

    def _moments_with(self, mean: Any, var: Any, count: float) -> Moments:
        """The moments of ``count`` samples combined with the stored ones."""
        if not self._seen:  # nothing seen yet: take the batch as it is
            # (the epsilon prior is dropped once data arrives)
            return np.array(mean, dtype=np.float64), np.array(var, dtype=np.float64), float(count)
        return pooled(self.mean, self.var, self.count, mean, var, count)

    def _store(self, moments: Moments) -> None:
        self.mean, self.var, self.count = moments
        self._seen = True

    def _combine(self, mean: Float64Array | float, var: Float64Array | float, count: float) -> bool:
        old_mean, old_var = self.mean, self.var
        if not (
            type(mean) is float
            and type(var) is float
            and type(old_mean) is np.float64  # scalar statistics, after their second update
            and type(old_var) is np.float64
            and self._seen
            and not self.shape
        ):
            return super()._combine(mean, var, count)
        # A scalar (NormalizeReward's return, every step) on Python floats: the same bits as
        # NumPy's scalars, and an overflow shows in the result, without NumPy's error state.
        new_mean, new_var, total = pooled(
            float(old_mean), float(old_var), self.count, mean, var, count
        )
        if not (math.isfinite(new_mean) and math.isfinite(new_var)):
            return False
        self._store((np.float64(new_mean), np.float64(new_var), total))
        return True

    # One small sample, the common case (one observation per step), takes the operations of
    # pooled() and normalize() element by element on Python floats: the same IEEE float64
    # arithmetic, so the same bits, without a dozen NumPy calls on a few entries.

    def _after_batch(self, arr: Float64Array) -> Moments | None:
        if len(arr) == 1 and arr.size <= _SMALL:  # larger ones never take the float path
            update = self._sample_update(arr[0])
            if update is not None:
                return self._sample_moments(*update[:2])
        return super()._after_batch(arr)

    def _update_normalize(self, sample: Float64Array, epsilon: float) -> Float64Array | None:
        """``update(sample[None])`` then ``normalize(sample, epsilon)`` for one float64
        ``sample``, on Python floats; None, with nothing changed, where that path does not
        apply (the caller takes the general one, which raises for a non-finite sample)."""
        update = self._sample_update(sample, epsilon)
        if update is None:
            return None
        self._store(self._sample_moments(*update[:2]))
        return _float_array(update[2], self.shape)

    def _sample_update(
        self, sample: Float64Array, epsilon: float | None = None
    ) -> tuple[list[float], list[float], list[float]] | None:
        """The flat mean and variance ``pooled`` makes of the stored moments and one
        ``sample``, and (given ``epsilon``) the sample normalised with them. None where the
        float path does not apply: no sample seen yet, shape ``()``, more than ``_SMALL``
        entries, a sample or moments that are not float64 arrays of the statistics' shape, or
        a result that is not finite (a non-finite sample makes a non-finite mean, and
        samples too far apart an infinite variance: NumPy's path refuses both)."""
        mean, var, shape = self.mean, self.var, self.shape
        if not (
            self._seen
            and shape
            and sample.shape == shape
            and sample.size <= _SMALL
            and type(mean) is np.ndarray
            and type(var) is np.ndarray
            and mean.dtype == _FLOAT64
            and var.dtype == _FLOAT64
            and mean.shape == shape
            and var.shape == shape
        ):
            return None
        n = self.count
        total = n + 1
        weight, step = n * 1 / total, 1 / total
        means: list[float] = []
        variances: list[float] = []
        normalized: list[float] = []
        rows = zip(sample.ravel().tolist(), mean.ravel().tolist(), var.ravel().tolist())
        try:
            for x, old_mean, old_var in rows:
                delta = x - old_mean
                means.append(old_mean + delta * step)
                # + 0.0: the sample's own variance times its count, which pooled() adds too
                # (it turns a -0.0 into 0.0)
                variances.append((old_var * n + 0.0 + delta * delta * weight) / total)
                if epsilon is not None:
                    normalized.append((x - means[-1]) / math.sqrt(variances[-1] + epsilon))
        except ValueError:  # a negative variance assigned by hand: NumPy's sqrt makes it NaN
            return None
        if not all(map(math.isfinite, means + variances + normalized)):
            return None
        return means, variances, normalized

    def _sample_moments(self, means: list[float], variances: list[float]) -> Moments:
        """The statistics ``_sample_update`` made (one sample more), to store."""
        count = float(self.count + 1)
        return _float_array(means, self.shape), _float_array(variances, self.shape), count

    def state_dict(self) -> dict[str, Any]:
        """A copy of the statistics (``mean``, ``var``, ``count``, ``epsilon``, and ``seen``:
        whether any sample has been added)."""
        return {
            "mean": self.mean.copy(),
            "var": self.var.copy(),
            "count": self.count,
            "epsilon": self.epsilon,
            "seen": self._seen,
        }

    def _checked_state(self, state: Any, where: str | None = None) -> Callable[[], None]:
        mean, var, count, name = self._checked_moment_state(state, where)
        epsilon = check_real(name, "epsilon", state.get("epsilon", self.epsilon))
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"{name}['epsilon'] must be finite and >= 0, got {epsilon}.")
        seen = bool(state.get("seen", count > epsilon))

        def load() -> None:
            self.mean, self.var, self.count, self.epsilon, self._seen = (
                mean,
                var,
                count,
                epsilon,
                seen,
            )

        return load

    def __repr__(self) -> str:
        return f"RunningMeanStd(shape={self.shape}, count={self.count!r})"


def _halflife(halflife: Any) -> float:
    """A checked halflife (a finite number > 0), an int kept an int."""
    if isinstance(halflife, bool) or not isinstance(
        halflife, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"halflife must be a number, got {type(halflife).__name__}.")
    if not halflife > 0 or not np.isfinite(halflife):
        raise ValueError(f"halflife must be a finite number > 0, got {halflife}.")
    return int(halflife) if isinstance(halflife, (int, np.integer)) else float(halflife)


class ExponentialMovingStats(_MomentStats):
    """Exponentially weighted mean and variance, bias-corrected, for non-stationary inputs.

    Each ``update()`` call is one step: a sample seen ``halflife`` calls ago weighs half as much
    as the newest one. A batch contributes its mean and variance as one step. Weights are
    normalised by their sum, so the first update sets the moments outright.

    Args:
        shape: the shape of one sample (``()`` for scalars).
        halflife: the number of update calls after which a sample's weight halves (> 0).
    """

    _name = "ExponentialMovingStats"
    _kind = "ewm"
    _own_keys = ("weight", "halflife")

    def __init__(self, shape: int | tuple[int, ...] = (), halflife: float = 1000.0) -> None:
        self.halflife: float = _halflife(halflife)
        super().__init__(shape)
        self._decay = 0.5 ** (1.0 / float(halflife))
        self.count: int = 0
        self._weight = 0.0  # sum of the current (decayed) weights

    def _moments_with(self, mean: Any, var: Any, count: float) -> Moments:
        """The statistics with one step whose samples have this mean and variance added."""
        old_weight = self._decay * self._weight
        weight = old_weight + 1.0
        new_mean = self.mean + (mean - self.mean) / weight
        old_dev = self.mean - new_mean
        new_dev = mean - new_mean
        new_var = (old_weight * (self.var + old_dev * old_dev) + (var + new_dev * new_dev)) / weight
        shape = self.shape
        return (
            np.array(new_mean, dtype=np.float64).reshape(shape),
            np.array(new_var, dtype=np.float64).reshape(shape),
            weight,
        )

    def _store(self, moments: Moments) -> None:
        self.mean, self.var, self._weight = moments
        self.count += 1

    def state_dict(self) -> dict[str, Any]:
        """A copy of the statistics (``mean``, ``var``, ``count``, ``weight``, ``halflife``)."""
        return {
            "mean": self.mean.copy(),
            "var": self.var.copy(),
            "count": self.count,
            "weight": self._weight,
            "halflife": self.halflife,
        }

    def _checked_state(self, state: Any, where: str | None = None) -> Callable[[], None]:
        mean, var, count, name = self._checked_moment_state(state, where)
        steps = int(count)
        halflife = _halflife(state["halflife"]) if "halflife" in state else self.halflife
        decay = 0.5 ** (1.0 / float(halflife))
        # Without a stored weight, treat the moments as the sum of `count` decayed steps.
        default_weight = (1.0 - decay**steps) / (1.0 - decay)
        weight = check_real(name, "weight", state.get("weight", default_weight))
        weight = _checked_count(weight, f"{name}['weight']")

        def load() -> None:
            self.mean, self.var, self.count, self._weight = mean, var, steps, weight
            self.halflife, self._decay = halflife, decay

        return load

    def __repr__(self) -> str:
        return (
            f"ExponentialMovingStats(shape={self.shape}, halflife={self.halflife}, "
            f"count={self.count})"
        )


_CLASSES: tuple[type[_MomentStats], ...] = (RunningMeanStd, ExponentialMovingStats)
