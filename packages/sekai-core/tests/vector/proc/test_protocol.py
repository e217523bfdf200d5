"""The two forms of ProcVecEnv messages that skip pickling: raw STEP actions and bare STEP
replies (``sekai.vector.proc.protocol``, ``sekai.vector._remote``)."""

from __future__ import annotations

import pickle
from multiprocessing import Pipe
from typing import Any

import numpy as np
import pytest

from sekai.spaces import Box, Dict, Discrete
from sekai.vector._contract.errors import describe
from sekai.vector._remote import decode_actions, encode_reply, encode_slices, read_reply
from sekai.vector.proc import protocol
from sekai.vector.proc.handle import WorkerHandle

SLICES = [(0, 2), (2, 5)]


def _argument(payload: Any) -> Any:
    """What a worker reads from a STEP message carrying ``payload``, as ``Pool`` sends it."""
    data = payload if type(payload) is bytes else pickle.dumps(payload)
    return protocol.argument(protocol.head(1, protocol.STEP) + data, (0, 0))


@pytest.mark.parametrize(
    ("space", "batch"),
    [
        (Discrete(3), np.array([0, 2, 1, 1, 0], dtype=np.int64)),
        (Box(-1, 1, (2, 3), np.float32), np.arange(30, dtype=np.float32).reshape(5, 2, 3)),
        (Discrete(3), np.array([0, 2, 1, 1, 0], dtype=np.int32)),  # the batch's own dtype
    ],
)
def test_raw_step_actions_reach_each_worker_as_its_rows(space: Any, batch: Any) -> None:
    common = protocol.step_common(space, batch)
    assert common is not None
    payloads = protocol.cut(common, SLICES)
    assert all(type(p) is bytes and p[0] == protocol.RAW for p in payloads)
    for (lo, hi), payload, pickled in zip(SLICES, payloads, encode_slices(space, batch, SLICES)):
        positions, actions = _argument(payload)
        assert positions is None
        decoded = decode_actions(space, actions)
        assert decoded.dtype == batch.dtype and decoded.flags.writeable
        np.testing.assert_array_equal(decoded, batch[lo:hi])
        # the same actions as the pickled form gives
        np.testing.assert_array_equal(decoded, decode_actions(space, pickled))


@pytest.mark.parametrize(
    "batch",
    [
        np.array([0, 2, 1, 1, 0], dtype=np.int64),
        np.arange(30, dtype=np.float32).reshape(5, 2, 3)[:, :, ::-1],  # not contiguous
    ],
)
def test_the_whole_batch_for_every_worker_gives_each_its_own_rows(batch: Any) -> None:
    space = Discrete(3) if batch.ndim == 1 else Box(-100, 100, (2, 3), np.float32)
    common = protocol.step_common(space, batch)
    assert common is not None and common[0] == protocol.ALL_ROWS
    message = protocol.head(1, protocol.STEP) + common
    for lo, hi in SLICES:
        positions, actions = protocol.argument(message, (lo, hi - lo))
        assert positions is None
        np.testing.assert_array_equal(decode_actions(space, actions), batch[lo:hi])


def test_actions_that_are_not_one_array_are_pickled() -> None:
    space = Dict({"a": Discrete(2)})
    batch = {"a": np.zeros(5, dtype=np.int64)}
    assert protocol.step_common(space, batch) is None


def test_a_pickled_argument_reads_as_before() -> None:
    assert _argument(("name", [1, 2])) == ("name", [1, 2])


def test_a_step_reply_without_errors_travels_bare() -> None:
    blob = pickle.dumps([{"x": 1}, {"x": 2}])
    reply = encode_reply("step", (blob, None), [])
    assert reply == b"\x00" + blob  # nothing pickled around the infos
    entries, errors = read_reply(memoryview(b"seq-head" + reply)[8:], 0, 0)
    assert entries == (blob, None) and type(entries[0]) is bytes
    assert errors == []


def test_other_replies_are_pickled_and_read_back() -> None:
    blob = pickle.dumps([{}, {}])
    error = describe(ValueError("bad"))
    failed = encode_reply("step", (blob, None), [(1, error)])
    assert failed[:1] == pickle.PROTO
    entries, errors = read_reply(failed, 10, 3)
    assert entries == (blob, None)
    assert [(rank, e.exc_type, e.worker) for rank, e in errors] == [(11, "ValueError", 3)]
    arrays = (blob, (np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), [1, 2]))
    with_arrays = encode_reply("step", arrays, [])  # no shared memory: not bare
    assert with_arrays[:1] == pickle.PROTO
    assert read_reply(with_arrays, 0, 0)[0][1][3] == [1, 2]
    assert read_reply(encode_reply("get_attr", [b"a", None], []), 0, 0) == ([b"a", None], [])


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_actions_of_no_element_travel_as_rows(shape: tuple[int, ...]) -> None:
    # raw bytes could not tell how many rows of no byte each slice holds
    space = Box(-1, 1, shape, np.float32)
    batch = np.zeros((5, *shape), dtype=np.float32)
    assert protocol.step_common(space, batch) is None
    for (lo, hi), encoded in zip(SLICES, encode_slices(space, batch, SLICES)):
        decoded = decode_actions(space, encoded)
        assert np.asarray(decoded).shape == (hi - lo, *shape)


def test_an_unknown_command_is_named_by_its_number() -> None:
    last = len(protocol.NAMES)
    assert protocol.name(last - 1) == protocol.NAMES[-1]
    assert protocol.name(last) == f"command {last}"
    assert protocol.name(-1) == "command -1"


def test_only_a_step_argument_of_bytes_travels_as_it_is() -> None:
    ours, theirs = Pipe()
    with ours, theirs:
        handle = WorkerHandle(0, 0, 1, None, ours)
        argument = bytes((protocol.RAW, 0))  # bytes that read like a raw STEP's start
        for op in (protocol.GET, protocol.CALL):
            message = handle.encode(op, argument, "the argument", None)
            assert protocol.read_head(message) == (1, op)
            assert protocol.argument(message, (0, 1)) == argument
