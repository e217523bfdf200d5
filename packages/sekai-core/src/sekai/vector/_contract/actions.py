"""Batched action checks before dispatch (core.md §14 rule 2) and the split into per-env actions."""

from __future__ import annotations

import abc
import contextlib
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._box_actions import bad_box_rows, bools_as_numbers
from sekai.error import InvalidAction
from sekai.spaces import Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple
from sekai.spaces._explain import short_repr
from sekai.spaces._kinds import ARRAY_SPACES

__all__ = ["ActionChecker", "ignored_action"]

BoolArray = NDArray[np.bool_]

_SMALL_BATCH = 256  # up to this many sub-envs, Python checks Discrete actions faster than NumPy
_SMALL_SET = 1024  # Discrete spaces up to this size check small batches against a set of actions
_INT64 = np.dtype(np.int64)
_MAX = np.maximum.reduce  # the ufunc itself: ndarray.max() adds a Python-level wrapper call


def ignored_action(space: Space[Any]) -> Any:
    """What the ignored action of a frozen sub-env becomes before the batch is converted (and,
    on a device, indexed with): any valid value will do, so the lowest of Discrete and
    MultiDiscrete, 0 for MultiBinary; None for Box, whose values convert whatever they are."""
    if isinstance(space, (Discrete, MultiDiscrete)):
        return space.start
    return 0 if isinstance(space, MultiBinary) else None


class _Node(abc.ABC):
    """Checks and splits the batch of one (sub-)space."""

    def __init__(self, space: Space[Any], num_envs: int, path: str) -> None:
        self.space = space
        self.num_envs = num_envs
        self.path = path

    def _where(self) -> str:
        return f"actions{self.path}" if self.path else "actions"

    @abc.abstractmethod
    def normalize(self, batch: Any) -> Any:
        """The batch in canonical form; ValueError for a wrong structure or shape."""

    @abc.abstractmethod
    def bad_rows(self, batch: Any) -> BoolArray | None:
        """Rows (sub-envs) whose values are invalid, or None when every row is valid."""

    def repair(self, batch: Any, bad: BoolArray) -> Any:
        """Make rows ``bad`` (frozen sub-envs, not checked) harmless to convert; default: as is."""
        return batch

    @abc.abstractmethod
    def row(self, batch: Any, index: int) -> Any:
        """Sub-env ``index``'s action."""

    @abc.abstractmethod
    def split(self, batch: Any) -> list[Any]:
        """Every sub-env's action, in order: one per row of ``batch``, or ``num_envs`` when no
        part of it has rows to count (an empty Tuple or Dict, whose every sub-env gets one)."""


class _ArrayNode(_Node):
    """Box, Discrete, MultiDiscrete and MultiBinary: one array ``(num_envs, *shape)``."""

    def __init__(self, space: Space[Any], num_envs: int, path: str) -> None:
        super().__init__(space, num_envs, path)
        self.shape = (num_envs, *tuple(space.shape or ()))
        self.dtype: np.dtype[Any] = np.dtype(space.dtype)  # an array space has one
        self.low: Any = None
        self.high: Any = None
        self.scalar = isinstance(space, Discrete)
        # The dtype kinds of an entry that may be valid: bools are MultiBinary's and Box's.
        self.kinds = "biuf"
        if isinstance(space, Discrete):
            self.kind, self.kinds = "int", "iuf"
            self.low, self.high = space.start, space.start + space.n - 1
        elif isinstance(space, MultiDiscrete):
            self.kind, self.kinds = "int", "iuf"
            self.low, self.high = space.start, space.start + space.nvec - 1
        elif isinstance(space, MultiBinary):
            self.kind = "binary"
        else:
            self.kind = "box"

    def normalize(self, batch: Any) -> NDArray[Any]:
        try:
            array = np.asarray(batch)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"{self._where()} must form an array of shape {self.shape} for "
                f"{self.space!r}; got a ragged or non-numeric batch ({exc})."
            ) from exc
        if array.shape != self.shape:
            got = f"shape {array.shape}"
            if array.ndim == 0:  # NumPy made no array of it: say what it is
                got = _kind_of(batch)
            raise ValueError(
                f"{self._where()} must have shape {self.shape} ({self.num_envs} sub-envs, "
                f"action space {self.space!r}), got {got}."
            )
        if array.dtype.kind not in "biufO" and not isinstance(batch, np.ndarray):
            # A str among numbers made every entry a str: keep the entries as given, so that
            # the check finds the sub-env at fault and names the action it was given.
            with contextlib.suppress(ValueError, TypeError):
                given = np.array(batch, dtype=object)
                if given.shape == self.shape:
                    return given
        return array

    def _bad(self, array: NDArray[Any]) -> BoolArray | None:
        """Element-wise invalid entries of a Discrete, MultiDiscrete or MultiBinary batch, or
        None if all are valid (checked cheaply first)."""
        kind = array.dtype.kind
        if self.kind == "binary":
            if kind == "b":
                return None
            if kind in "iuf":
                bad = (array != 0) & (array != 1)
                return bad if bad.any() else None
            return np.ones(array.shape, dtype=bool)
        if kind in "iu":
            if array.size == 0:
                return None
            if self.scalar and array.dtype == np.int64:
                # One reduction: v is in [low, high] iff (v - low) mod 2**64 <= high - low.
                shifted = array if self.low == 0 else array - np.int64(self.low)
                if shifted.view(np.uint64).max() <= self.high - self.low:
                    return None
            bad = (array < self.low) | (array > self.high)
            return bad if bad.any() else None
        if kind == "f":
            with np.errstate(invalid="ignore"):
                bad = (array != np.floor(array)) | ~(array >= self.low) | ~(array <= self.high)
            return bad if bad.any() else None
        return np.ones(array.shape, dtype=bool)

    def bad_rows(self, batch: NDArray[Any]) -> BoolArray | None:
        not_numbers: BoolArray | None = None
        if batch.dtype == object:  # the entries as given: each one checked
            batch, not_numbers = _as_numbers(batch, self.kinds)
        # Box: the single envs' rule, row by row.
        rows = bad_box_rows(batch) if self.kind == "box" else self._by_row(self._bad(batch))
        entries = self._by_row(not_numbers)
        if entries is None or not entries.any():
            return rows
        return entries if rows is None else rows | entries

    def _by_row(self, bad: BoolArray | None) -> BoolArray | None:
        """The sub-envs with a bad entry in ``bad`` (element-wise), or None."""
        if bad is None:
            return None
        return np.asarray(bad.reshape(self.num_envs, -1).any(axis=1), dtype=bool)

    def repair(self, batch: NDArray[Any], bad: BoolArray) -> NDArray[Any]:
        fill = ignored_action(self.space)
        if fill is None and batch.dtype == object:
            fill = 0  # a Box's ignored action need only become a number with the others
        if fill is None or not bad.any():
            return batch
        fixed: NDArray[Any] = batch.copy()
        fixed[bad] = fill
        return fixed

    def cast(self, batch: NDArray[Any]) -> NDArray[Any]:
        """Integral floats for Discrete/MultiDiscrete/MultiBinary become the space's dtype, and
        so do other integer dtypes for Discrete/MultiDiscrete: native envs compute with the
        actions (``actions - 1`` wraps around in uint8). Entries kept as given (an object
        batch, all numbers by now) become one array first; a Box's bools become its integers
        (an integer Box) or float64 (``bools_as_numbers``)."""
        if batch.dtype == object:
            batch = np.asarray(batch.tolist())
        if self.kind == "box":
            return bools_as_numbers(batch, self.dtype)
        kind = batch.dtype.kind
        if kind == "f" or (self.kind == "int" and kind in "iu" and batch.dtype != self.dtype):
            cast: NDArray[Any] = batch.astype(self.dtype)
            return cast
        return batch

    def row(self, batch: NDArray[Any], index: int) -> Any:
        value = batch[index]
        if isinstance(value, np.ndarray) and value.dtype == object:
            return value.tolist()  # entries as given: a list of them, as they were passed
        return value.item() if isinstance(value, np.generic) else value

    def split(self, batch: NDArray[Any]) -> list[Any]:
        if self.scalar:  # Discrete: Python ints, which envs handle fastest
            return batch.tolist()  # type: ignore[no-any-return]
        return list(batch)


class _DictNode(_Node):
    """A Dict space: a dict of batches with exactly its keys, or a list of per-env dicts."""

    def __init__(self, space: Dict, num_envs: int, path: str) -> None:
        super().__init__(space, num_envs, path)
        self.children = {
            key: _node(sub, num_envs, f"{path}[{key!r}]") for key, sub in space.spaces.items()
        }

    def normalize(self, batch: Any) -> dict[Any, Any]:
        keys = list(self.children)
        if (
            isinstance(batch, (list, tuple))
            and len(batch) == self.num_envs
            and all(isinstance(action, Mapping) for action in batch)
        ):
            bad = [i for i, action in enumerate(batch) if set(action) != set(keys)]
            if bad:
                raise ValueError(
                    f"{self._where()}[{bad[0]}] has keys {sorted(map(str, batch[bad[0]]))}, "
                    f"expected {sorted(map(str, keys))}."
                )
            batch = {key: [action[key] for action in batch] for key in keys}
        if not isinstance(batch, Mapping):
            raise ValueError(
                f"{self._where()} must be a dict of batches with keys {keys} (or a list of "
                f"{self.num_envs} dicts) for {self.space!r}, got {_kind_of(batch)}."
            )
        if set(batch) != set(keys):
            raise ValueError(
                f"{self._where()} must have exactly the keys {keys}, got {list(batch)}."
            )
        return {key: node.normalize(batch[key]) for key, node in self.children.items()}

    def bad_rows(self, batch: dict[Any, Any]) -> BoolArray | None:
        result: BoolArray | None = None
        for key, node in self.children.items():
            rows = node.bad_rows(batch[key])
            if rows is not None:
                result = rows if result is None else result | rows
        return result

    def repair(self, batch: dict[Any, Any], bad: BoolArray) -> dict[Any, Any]:
        return {key: node.repair(batch[key], bad) for key, node in self.children.items()}

    def cast(self, batch: dict[Any, Any]) -> dict[Any, Any]:
        return {key: _cast(node, batch[key]) for key, node in self.children.items()}

    def row(self, batch: dict[Any, Any], index: int) -> dict[Any, Any]:
        return {key: node.row(batch[key], index) for key, node in self.children.items()}

    def split(self, batch: dict[Any, Any]) -> list[Any]:
        if not self.children:  # Dict(): no column to count the rows, each sub-env gets {}
            return [{} for _ in range(self.num_envs)]
        keys = list(self.children)
        columns = [node.split(batch[key]) for key, node in self.children.items()]
        return [dict(zip(keys, values)) for values in zip(*columns)]


class _TupleNode(_Node):
    """A Tuple space: a tuple of batches, or a list of per-env tuples."""

    def __init__(self, space: Tuple, num_envs: int, path: str) -> None:
        super().__init__(space, num_envs, path)
        self.children = [_node(sub, num_envs, f"{path}[{i}]") for i, sub in enumerate(space.spaces)]

    def normalize(self, batch: Any) -> tuple[Any, ...]:
        width = len(self.children)
        if isinstance(batch, list):
            if len(batch) != self.num_envs:
                raise ValueError(
                    f"{self._where()} is a list of {len(batch)} per-env actions, "
                    f"expected {self.num_envs}."
                )
            if any(not isinstance(a, (tuple, list)) or len(a) != width for a in batch):
                raise ValueError(
                    f"every per-env action in {self._where()} must be a tuple of {width} parts."
                )
            batch = tuple([action[i] for action in batch] for i in range(width))
        if not isinstance(batch, tuple) or len(batch) != width:
            raise ValueError(
                f"{self._where()} must be a tuple of {width} batches (or a list of "
                f"{self.num_envs} tuples) for {self.space!r}, got {_kind_of(batch)}."
            )
        return tuple(node.normalize(part) for node, part in zip(self.children, batch))

    def bad_rows(self, batch: tuple[Any, ...]) -> BoolArray | None:
        result: BoolArray | None = None
        for node, part in zip(self.children, batch):
            rows = node.bad_rows(part)
            if rows is not None:
                result = rows if result is None else result | rows
        return result

    def repair(self, batch: tuple[Any, ...], bad: BoolArray) -> tuple[Any, ...]:
        return tuple(node.repair(part, bad) for node, part in zip(self.children, batch))

    def cast(self, batch: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(_cast(node, part) for node, part in zip(self.children, batch))

    def row(self, batch: tuple[Any, ...], index: int) -> tuple[Any, ...]:
        return tuple(node.row(part, index) for node, part in zip(self.children, batch))

    def split(self, batch: tuple[Any, ...]) -> list[Any]:
        if not self.children:  # Tuple(()): no column to count the rows, each sub-env gets ()
            return [()] * self.num_envs
        columns = [node.split(part) for node, part in zip(self.children, batch)]
        return list(zip(*columns))


class _OpaqueNode(_Node):
    """Any other space (Sequence, custom): one entry per sub-env, values not checked."""

    def normalize(self, batch: Any) -> Any:
        try:
            length = len(batch)
        except TypeError:
            length = None
        if length != self.num_envs:
            raise ValueError(
                f"{self._where()} must hold one action per sub-env ({self.num_envs}) for "
                f"{self.space!r}, got {type(batch).__name__}"
                + (f" of length {length}." if length is not None else ".")
            )
        return batch

    def bad_rows(self, batch: Any) -> BoolArray | None:
        return None

    def row(self, batch: Any, index: int) -> Any:
        return batch[index]

    def split(self, batch: Any) -> list[Any]:
        return list(batch)


def _node(space: Space[Any], num_envs: int, path: str) -> _Node:
    if isinstance(space, ARRAY_SPACES):
        return _ArrayNode(space, num_envs, path)
    if isinstance(space, Dict):
        return _DictNode(space, num_envs, path)
    if isinstance(space, Tuple):
        return _TupleNode(space, num_envs, path)
    return _OpaqueNode(space, num_envs, path)


def _as_numbers(entries: NDArray[Any], kinds: str) -> tuple[NDArray[Any], BoolArray]:
    """A batch of entries as given (an object array) as an array of numbers, and which entries
    are no single number of a dtype kind in ``kinds`` (those are 0 in the numbers; all are bad
    when the numbers make no array of one numeric dtype)."""
    bad = np.zeros(entries.shape, dtype=bool)
    values = entries.copy()
    for index, entry in np.ndenumerate(entries):
        number = np.asarray(entry)
        if number.shape != () or number.dtype.kind not in kinds:
            bad[index] = True
            values[index] = 0
    try:
        numbers = np.asarray(values.tolist())
    except (ValueError, TypeError, OverflowError):  # ints beyond 64 bits of both signs
        return np.zeros(entries.shape), np.ones(entries.shape, dtype=bool)
    if numbers.shape != entries.shape or numbers.dtype.kind not in "biuf":
        return np.zeros(entries.shape), np.ones(entries.shape, dtype=bool)
    return numbers, bad


def _cast(node: _Node, batch: Any) -> Any:
    cast = getattr(node, "cast", None)
    return cast(batch) if cast is not None else batch


class ActionChecker:
    """Checks a batch of actions for one action space before any sub-env is stepped.

    Structure (batch length, per-env shape, Dict keys) → ``ValueError``; values of the sub-envs
    that are not frozen (Discrete/MultiDiscrete/MultiBinary parts integral and in range, Box
    parts real numbers, bools included, and finite) → ``InvalidAction`` naming the first bad
    sub-env and the action it was given.
    """

    def __init__(self, space: Space[Any], num_envs: int) -> None:
        self.space = space
        self.num_envs = num_envs
        self._root = _node(space, num_envs, "")
        # Discrete: per-env actions are Python ints, checked in Python when the batch is small.
        self._int_range: tuple[int, int] | None = None
        self._int_values: frozenset[int] | None = None
        if isinstance(space, Discrete) and num_envs <= _SMALL_BATCH:
            self._int_range = (space.start, space.start + space.n - 1)
            if space.n <= _SMALL_SET:  # one membership pass in C instead of min() and max()
                self._int_values = frozenset(range(int(space.start), int(space.start + space.n)))
        # Discrete: an int64 batch is checked with one reduction (``check``'s fast path).
        self._int64_span: tuple[tuple[int], int, int] | None = None
        if isinstance(space, Discrete):
            self._int64_span = ((num_envs,), space.start, space.n - 1)

    def check(self, actions: Any, frozen: BoolArray | None = None) -> Any:
        """The checked batch in canonical form (arrays; dicts/tuples of arrays).

        Args:
            actions: a batch shaped like the batched action space, or a list of per-env actions.
            frozen: sub-envs whose actions are ignored and so not checked, or None.

        Raises:
            ValueError: wrong batch structure, length or shape.
            sekai.InvalidAction: an invalid value for a sub-env that is not frozen.
        """
        fast = self._int64_span
        if fast is not None and type(actions) is np.ndarray and actions.dtype == _INT64:
            shape, low, span = fast
            if actions.shape == shape:
                # v is in [low, low + span] iff (v - low) mod 2**64 <= span: one reduction.
                shifted = actions if low == 0 else actions - np.int64(low)
                if _MAX(shifted.view(np.uint64)) <= span:
                    return actions
        root = self._root
        batch = root.normalize(actions)
        bad = root.bad_rows(batch)
        if bad is not None:
            checked = bad if frozen is None else bad & ~frozen
            if checked.any():
                index = int(np.flatnonzero(checked)[0])
                raise InvalidAction(root.row(batch, index), self.space, index=index)
            batch = root.repair(batch, bad)
        return _cast(root, batch)

    def split(self, batch: Any) -> list[Any]:
        """Per-env actions of a batch returned by ``check()``."""
        return self._root.split(batch)

    def row(self, batch: Any, index: int) -> Any:
        """Sub-env ``index``'s action in a batch returned by ``check()``."""
        return self._root.row(batch, index)

    def per_env(self, actions: Any, frozen: BoolArray | None = None) -> list[Any]:
        """``split(check(actions, frozen))``, with a fast path for small Discrete batches."""
        bounds = self._int_range
        if bounds is not None:
            values: Any = None
            if type(actions) is np.ndarray:
                if actions.dtype.kind in "iu" and actions.shape == (self.num_envs,):
                    values = actions.tolist()
            elif (
                type(actions) is list
                and len(actions) == self.num_envs
                and all(type(v) is int for v in actions)
            ):
                values = list(actions)
            if values is not None:
                allowed = self._int_values
                if (
                    allowed.issuperset(values)
                    if allowed is not None
                    else min(values) >= bounds[0] and max(values) <= bounds[1]
                ):
                    return values  # type: ignore[no-any-return]
        return self._root.split(self.check(actions, frozen))


def _kind_of(batch: Any) -> str:
    """What a batch of the wrong structure is: None, a str, bytes or number with its value
    (``str 'ab'``), anything else by its type, with its length when it has one (a list of 3
    for 2 sub-envs)."""
    if batch is None:
        return "None"
    if isinstance(batch, (str, bytes, numbers.Number)):
        value = batch.item() if isinstance(batch, np.generic) else batch
        return f"{type(batch).__name__} {short_repr(value, 60)}"
    try:
        return f"{type(batch).__name__} of length {len(batch)}"
    except TypeError:
        return type(batch).__name__
