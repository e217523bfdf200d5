"""The messages between a ProcVecEnv and its workers.

A command is ``seq`` and ``op`` (``HEAD`` bytes) then the pickled argument; its reply is the same
``seq`` (8 bytes) then the pickled ``(entries, errors)``: the same bytes whether they travel
through the worker's pipe or its mailbox (``mail``). Both sides read the numbers without
unpickling anything, so a message that cannot be unpickled is still answered and matched:

- ``seq`` numbers the commands of one worker; the parent drops a reply whose ``seq`` is not the
  one it waits for (the reply of a call interrupted in the parent, e.g. by Ctrl-C).
- ``entries`` holds one entry per sub-env of the worker (None where it failed), or None;
- ``errors`` is None or a list of ``(local index, ErrorInfo)``.

The entries of each operation:

=========  =========================================  ===========================================
op         argument                                   entry of a sub-env
=========  =========================================  ===========================================
INIT       (cloudpickled factories, autoreset, first  reply ``entries`` is (observation_space,
           sub-env index)                             action_space, metadata, [resets_itself])
ATTACH     (block name, observation space, num_envs)  None
RESET      (seeds, options), one per sub-env          (info,) or (info, observation)
STEP       (positions or None: all, encoded actions)  one reply for the slice: (packed infos,
                                                      None or (rewards, terminated, truncated,
                                                      packed observations))
GET        (positions or None: all, name)             the value (None where not asked)
SET        (positions or None: all, name, values),    None
           one value per position
CALL       (positions or None: all, name, args,       the value (None where not asked)
           kwargs)
CLOSE      None                                       None
=========  =========================================  ===========================================

GET, SET and CALL for some sub-envs (the SB3 bridge's ``indices``) go only to the workers that
run them, through their pipes; the others get no command.

Observations travel in the entries only without shared memory; with it, a STEP's rewards and
flags are in shared memory too. STEP's encoding is ``sekai.vector._batches``' and ``_remote``'s,
shared with RayVecEnv's actors.

Two forms skip pickling where a step of every sub-env would spend most of its time on it:

- a STEP of every sub-env whose actions are an array travels raw (``step_common``):
  ``ALL_ROWS``, the length of a header (1 byte), the header (the pickled dtype and row shape,
  the same on every step), then the whole batch's bytes, the same argument for every worker,
  each reading its own rows; or, with ``RAW`` first, only the worker's rows (``cut``);
- its reply, when nothing failed and the rest is in shared memory, travels bare: ``BARE`` then
  the infos' bytes (``sekai.vector._remote.encode_reply``).
"""

from __future__ import annotations

import functools
import math
import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.spaces import Space
from sekai.vector._remote import raw_slices

__all__ = [
    "ALL_ROWS",
    "ATTACH",
    "CALL",
    "CLOSE",
    "GET",
    "HEAD",
    "INIT",
    "NAMES",
    "RAW",
    "RESET",
    "SET",
    "STEP",
    "argument",
    "cut",
    "head",
    "name",
    "read_head",
    "step_common",
]

INIT, ATTACH, RESET, STEP, GET, SET, CALL, CLOSE = range(8)

NAMES = ("init", "attach", "reset", "step", "get_attr", "set_attr", "call", "close")

HEAD = 9  # bytes: seq (8, little-endian, signed), then op (1)


def name(op: int) -> str:
    """The name of command ``op`` (for messages)."""
    return NAMES[op] if 0 <= op < len(NAMES) else f"command {op}"


def head(seq: int, op: int) -> bytes:
    """The first ``HEAD`` bytes of a command."""
    return seq.to_bytes(8, "little", signed=True) + bytes((op,))


def read_head(message: bytes | memoryview) -> tuple[int, int]:
    """``(seq, op)`` of a command."""
    return int.from_bytes(message[:8], "little", signed=True), message[8]


RAW = 0  # the first byte of a raw STEP argument; a pickle's is PROTO (0x80)
ALL_ROWS = 1  # the first byte of a raw STEP argument holding every sub-env's row


@functools.lru_cache(maxsize=64)
def _header(form: int, dtype: str, shape: tuple[int, ...]) -> bytes | None:
    """``form``, the header's length and the header of raw actions (None: too long for a
    byte)."""
    header = pickle.dumps((dtype, shape), pickle.HIGHEST_PROTOCOL)
    return bytes((form, len(header))) + header if len(header) < 256 else None


@functools.lru_cache(maxsize=64)
def _read_header(header: bytes) -> tuple[str, tuple[int, ...], int]:
    """The dtype, row shape and bytes per row of raw actions."""
    dtype, shape = pickle.loads(header)
    return dtype, shape, np.dtype(dtype).itemsize * math.prod(shape)


def step_common(space: Space[Any], batch: Any) -> bytes | None:
    """The STEP argument of every worker alike for a step of every sub-env: the whole batch's
    raw bytes (``ALL_ROWS``), or None where the actions do not travel raw."""
    raw = raw_slices(space, batch, [(0, len(batch))])
    if raw is None:
        return None
    dtype, shape, (data,) = raw
    prefix = _header(ALL_ROWS, dtype, shape)
    return None if prefix is None else prefix + data


def cut(common: bytes, slices: Sequence[tuple[int, int]]) -> list[bytes]:
    """Every worker's own STEP argument (``RAW``: its rows only) cut from the common one of
    ``step_common``, for when it cannot go to every worker alike."""
    length = common[1]
    header = common[2 : 2 + length]
    size = _read_header(header)[2]
    prefix = bytes((RAW, length)) + header
    start = 2 + length
    return [prefix + common[start + lo * size : start + hi * size] for lo, hi in slices]


def argument(message: bytes | memoryview, rows: tuple[int, int]) -> Any:
    """The argument of a command (after its ``HEAD``) to the worker whose sub-envs are
    ``rows`` (first, count): unpickled, or a raw STEP's ``(None, (dtype, row shape, bytes of
    its rows))``.

    Raises:
        Exception: whatever unpickling raises (e.g. a class this process cannot import).
    """
    view = memoryview(message)[HEAD:]
    form = view[0]
    if form != RAW and form != ALL_ROWS:
        return pickle.loads(view)
    length = view[1]
    dtype, shape, size = _read_header(bytes(view[2 : 2 + length]))
    data = view[2 + length :]
    if form == ALL_ROWS:
        first, count = rows
        data = data[first * size : (first + count) * size]
    return None, (dtype, shape, data)
