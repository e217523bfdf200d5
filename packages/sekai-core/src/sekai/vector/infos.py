"""Per-sub-env info dicts: stack_infos, array splitting and lazily built info lists."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.core._autoreset import autoreset_info
from sekai.spaces import Dict, Space, Tuple
from sekai.spaces._kinds import ARRAY_SPACES
from sekai.vector._packing import received, unpack

__all__ = [
    "LazyInfos",
    "PackedInfos",
    "autoreset_info",
    "batch_row",
    "split_value",
    "stack_infos",
]


def stack_infos(infos: Sequence[Mapping[str, Any]]) -> dict[str, NDArray[Any]]:
    """Stack the keys present in every sub-env's info into arrays with a leading sub-env axis.

    Keys follow the first info's order; scalars become a 1-D array, arrays are ``np.stack``ed
    (values whose shapes differ become an object array).

    Example:
        ``stack_infos([{"elapsed_steps": 2}, {"elapsed_steps": 2}])`` is
        ``{'elapsed_steps': array([2, 2])}``.
    """
    if isinstance(infos, Mapping) or not isinstance(infos, Sequence):
        raise TypeError(
            f"stack_infos takes a list of info dicts (one per sub-env), got {type(infos).__name__}."
        )
    for index, info in enumerate(infos):
        if not isinstance(info, Mapping):
            raise TypeError(
                f"stack_infos: infos[{index}] must be a dict, got {type(info).__name__}."
            )
    if not infos:
        return {}
    first, rest = infos[0], infos[1:]
    stacked: dict[str, NDArray[Any]] = {}
    for key in first:
        if not all(key in info for info in rest):
            continue
        values = [info[key] for info in infos]
        try:
            # One np.array call: the same array as np.stack over np.asarray of each value,
            # without a 0-d array per sub-env (about 10x faster for scalars).
            stacked[key] = np.array(values)
        except ValueError:  # shapes differ: keep one object per sub-env
            column = np.empty(len(values), dtype=object)
            column[:] = values
            stacked[key] = column
    return stacked


def _leading(value: Any, n: int) -> bool:
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n


def split_value(value: Any, n: int) -> list[Any]:
    """One entry per sub-env from a value that may carry a leading ``n`` axis.

    A 1-D array becomes Python scalars (datetime64 and timedelta64 stay NumPy), a 2-D or higher
    array gives each sub-env its row, and anything else is repeated ``n`` times.
    """
    if not _leading(value, n):
        return [value] * n
    if value.ndim == 1 and value.dtype.kind not in "mM":
        return value.tolist()  # type: ignore[no-any-return]
    return list(value)


def _cell(value: Any, index: int, n: int) -> Any:
    """``split_value(value, n)[index]`` without splitting the whole value."""
    if not _leading(value, n):
        return value
    item = value[index]
    if value.ndim == 1 and isinstance(item, np.generic) and value.dtype.kind not in "mM":
        return item.item()
    return item


# Spaces whose batches are plain arrays: batch_row indexes them without the ABC isinstance
# checks (their exact types: a subclass, MaskedBox say, may batch otherwise).
_ARRAY_SPACES = frozenset(ARRAY_SPACES)


def batch_row(space: Space[Any], batch: Any, index: int) -> Any:
    """Row ``index`` of a batch of ``space`` (dicts and tuples are walked; arrays indexed)."""
    if type(space) in _ARRAY_SPACES:
        return batch[index]
    if isinstance(space, Dict):
        return {key: batch_row(sub, batch[key], index) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(batch_row(sub, part, index) for sub, part in zip(space.spaces, batch))
    return batch[index]


# What LazyInfos._peek returns when only building the dict tells the value.
_UNKNOWN: Any = object()


class LazyInfos:
    """A list of per-sub-env info dicts that is built only when someone reads it.

    ``at(i)`` builds (and keeps) one dict, so a wrapper can add keys to a few sub-envs;
    ``build()`` builds the list once, reusing the dicts ``at()`` handed out. ``set_item`` and
    ``get`` add and read a key of one dict without building it (where the infos can tell): the
    keys set are kept aside and merged, in order, when the dict is built, so it holds the keys
    and values, in the order, that setting them on the built dict gives.
    """

    __slots__ = ("_built", "_given", "_n", "_pending")

    def __init__(self, n: int) -> None:
        self._n = n
        self._given: dict[int, dict[str, Any]] = {}
        self._pending: dict[int, dict[str, Any]] = {}  # keys set on dicts not built yet
        self._built: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return self._n

    def _index(self, index: int) -> int:
        index = operator.index(index)
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"sub-env index {index} out of range for {self._n} sub-envs")
        return index

    def at(self, index: int) -> dict[str, Any]:
        """The dict of sub-env ``index`` (the same object the built list will hold)."""
        index = self._index(index)
        if self._built is not None:
            return self._built[index]
        info = self._given.get(index)
        if info is None:
            info = self._make_one(index)
            added = self._pending.pop(index, None)
            if added is not None:
                info.update(added)
            self._given[index] = info
        return info

    def get(self, index: int, key: str, default: Any = None) -> Any:
        """``at(index).get(key, default)``, without building that dict where the value is
        known without it (a key ``set_item`` set, or one the subclass reads directly: then an
        equal value, not always the very object the built dict will hold)."""
        index = self._index(index)
        if self._built is None and index not in self._given:
            added = self._pending.get(index)
            if added is not None and key in added:
                return added[key]
            value = self._peek(index, key, default)
            if value is not _UNKNOWN:
                return value
        return self.at(index).get(key, default)

    def set_item(self, index: int, key: str, value: Any) -> None:
        """``at(index)[key] = value``; a dict not built yet gets it when it is built."""
        index = self._index(index)
        info = self._built[index] if self._built is not None else self._given.get(index)
        if info is None:
            self._pending.setdefault(index, {})[key] = value
        else:
            info[key] = value

    def build(self) -> list[dict[str, Any]]:
        """The list of dicts (built on the first call, the same list afterwards)."""
        if self._built is None:
            infos = self._make_all()
            for index, info in self._given.items():
                infos[index] = info
            for index, added in self._pending.items():
                infos[index].update(added)
            self._built = infos
            self._given = {}
            self._pending = {}
        return self._built

    def _make_one(self, index: int) -> dict[str, Any]:
        raise NotImplementedError

    def _make_all(self) -> list[dict[str, Any]]:
        return [self._make_one(i) for i in range(self._n)]

    def _peek(self, index: int, key: str, default: Any) -> Any:
        """``_make_one(index).get(key, default)`` if known without building the dict, else
        ``_UNKNOWN`` (the default: subclasses may read some keys directly)."""
        return _UNKNOWN


class ArrayInfos(LazyInfos):
    """Infos split from a dict of arrays with a leading sub-env axis (native vector envs).

    Args:
        n: number of sub-envs.
        arrays: the env's info arrays (``elapsed_steps`` is added after them when given).
        elapsed: per-sub-env step counts for ``info["elapsed_steps"]``, or None.
        skip: sub-envs whose info is ``{}`` (frozen ones), or None.
        reset: sub-env indices reset by autoreset in this step (sorted, distinct), or None.
        final_observations: the batch observed before that reset (rows = terminal obs).
        observation_space: the single observation space (to take rows of the batch).
        reset_arrays: info arrays of the reset, with a leading ``len(reset)`` axis.
    """

    __slots__ = (
        "_arrays",
        "_elapsed",
        "_final",
        "_positions",
        "_reset",
        "_reset_arrays",
        "_skip",
        "_space",
    )

    def __init__(
        self,
        n: int,
        arrays: Mapping[str, Any],
        *,
        elapsed: NDArray[np.int64] | None = None,
        skip: NDArray[np.bool_] | None = None,
        reset: NDArray[np.intp] | None = None,
        final_observations: Any = None,
        observation_space: Space[Any] | None = None,
        reset_arrays: Mapping[str, Any] | None = None,
    ) -> None:
        self._n = n  # LazyInfos.__init__, inlined: this runs on every native step
        self._given = {}
        self._pending = {}
        self._built = None
        self._arrays = arrays
        self._elapsed = elapsed
        self._skip = skip
        self._reset = reset
        self._final = final_observations
        self._space = observation_space
        self._reset_arrays = reset_arrays if reset_arrays is not None else {}
        self._positions: dict[int, int] | None = None

    def _position(self, index: int) -> int | None:
        """Where sub-env ``index`` is in ``reset`` (None: it was not reset)."""
        positions = self._positions
        if positions is None:
            reset = [] if self._reset is None else self._reset.tolist()
            positions = self._positions = {row: position for position, row in enumerate(reset)}
        return positions.get(index)

    def _plain(self, index: int) -> dict[str, Any]:
        n = self._n
        info = {key: _cell(value, index, n) for key, value in self._arrays.items()}
        if self._elapsed is not None:
            info["elapsed_steps"] = int(self._elapsed[index])
        return info

    def _after_reset(self, index: int, position: int, info: dict[str, Any]) -> dict[str, Any]:
        assert self._reset is not None and self._space is not None
        k = len(self._reset)
        reset_info = {key: _cell(value, position, k) for key, value in self._reset_arrays.items()}
        return autoreset_info(info, batch_row(self._space, self._final, index), reset_info)

    def _make_one(self, index: int) -> dict[str, Any]:
        if self._skip is not None and self._skip[index]:
            return {}
        info = self._plain(index)
        position = self._position(index)
        return info if position is None else self._after_reset(index, position, info)

    def _peek(self, index: int, key: str, default: Any) -> Any:
        # The terminal observation of a reset sub-env, straight from the batch (vector
        # observation wrappers read and replace it); an env's own info key of that name
        # (which autoreset_info would move) is left to the built dict.
        if key != "final_observation" or key in self._arrays:
            return _UNKNOWN
        if self._skip is not None and self._skip[index]:
            return default
        if self._position(index) is None:
            return default
        assert self._space is not None
        return batch_row(self._space, self._final, index)

    def _make_all(self) -> list[dict[str, Any]]:
        n = self._n
        keys = list(self._arrays)
        columns = [split_value(self._arrays[key], n) for key in keys]
        if self._elapsed is not None:
            keys.append("elapsed_steps")
            columns.append(self._elapsed.tolist())
        infos = [dict(zip(keys, row)) for row in zip(*columns)] if keys else [{} for _ in range(n)]
        if self._skip is not None:
            for index in np.flatnonzero(self._skip).tolist():
                infos[index] = {}
        if self._reset is not None:
            for position, index in enumerate(self._reset.tolist()):
                infos[index] = self._after_reset(index, position, infos[index])
        return infos


class PackedInfos(LazyInfos):
    """Infos as workers reply them: one ``_packing.pack()``ed column of dicts per reply.

    The parent keeps the columns as they arrived (keys already stacked into arrays by the
    workers; a deferred column still pickled) and unpacks a column only when someone reads an
    info of it, once.

    Args:
        chunks: ``(rows, packed column)`` per reply, in sub-env order; ``rows`` is the number of
            infos of the column, or the positions to take from it (an index array).
        n: the number of infos in all (None: counted from ``chunks``).
    """

    __slots__ = ("_chunks", "_columns")

    def __init__(self, chunks: Sequence[tuple[Any, Any]], n: int | None = None) -> None:
        if n is None:
            n = sum(rows if isinstance(rows, int) else len(rows) for rows, _ in chunks)
        self._n = n  # LazyInfos.__init__, inlined: this runs on every step
        self._given = {}
        self._pending = {}
        self._built = None
        self._chunks = chunks
        self._columns: dict[int, list[dict[str, Any]]] | None = None  # unpacked, by chunk

    def _column(self, position: int) -> list[dict[str, Any]]:
        columns = self._columns
        if columns is None:
            columns = self._columns = {}
        column = columns.get(position)
        if column is None:
            rows, packed = self._chunks[position]
            infos = unpack(received(packed))
            whole = isinstance(rows, int)
            column = list(infos) if whole else [infos[row] for row in rows.tolist()]
            columns[position] = column
        return column

    def _make_one(self, index: int) -> dict[str, Any]:
        for position, (rows, _) in enumerate(self._chunks):
            size = rows if isinstance(rows, int) else len(rows)
            if index < size:
                return self._column(position)[index]
            index -= size
        raise IndexError(index)  # at() checked the range

    def _make_all(self) -> list[dict[str, Any]]:
        return [info for position in range(len(self._chunks)) for info in self._column(position)]
