"""The shared observation block: which spaces fit, its layout, writing rows, its lifetime."""

from __future__ import annotations

import errno
import os
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import concatenate
from sekai.testing.fixtures import interrupted_once
from sekai.vector.proc.shm import (
    NoRoom,
    SharedBatch,
    create_segment,
    is_fixed_size,
    row_writer,
    write_at,
    write_rows,
)

FIXED = {
    "box": sekai.Box(-1.0, 1.0, shape=(2, 3)),
    "discrete": sekai.Discrete(4, start=-1),
    "multi-discrete": sekai.MultiDiscrete([2, 3]),
    "multi-binary": sekai.MultiBinary((2, 2)),
    "nested": sekai.Dict(
        a=sekai.Box(0, 255, shape=(4,), dtype=np.uint8),
        b=sekai.Tuple([sekai.Discrete(2), sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)]),
    ),
    "empty-box": sekai.Box(0.0, 1.0, shape=(0,)),
}
NOT_FIXED = {
    "sequence": sekai.Sequence(sekai.Discrete(2)),
    "dict-with-sequence": sekai.Dict(a=sekai.Discrete(2), b=sekai.Sequence(sekai.Discrete(2))),
}


@pytest.mark.parametrize("space", FIXED.values(), ids=FIXED)
def test_fixed_size_spaces_are_eligible(space: sekai.Space[Any]) -> None:
    assert is_fixed_size(space)


@pytest.mark.parametrize("space", NOT_FIXED.values(), ids=NOT_FIXED)
def test_spaces_with_a_variable_part_are_not(space: sekai.Space[Any]) -> None:
    assert not is_fixed_size(space)


def _same(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        assert np.array_equal(a, b)


@pytest.mark.parametrize("space", FIXED.values(), ids=FIXED)
def test_rows_written_by_two_attachments_read_back_like_concatenate(
    space: sekai.Space[Any],
) -> None:
    space.seed(0)
    samples = [space.sample() for _ in range(5)]
    block = SharedBatch.create(space, 5)
    try:
        assert block.name.startswith(f"sekai_{os.getpid()}_")
        first = SharedBatch.attach(block.name, space, 5)
        second = SharedBatch.attach(block.name, space, 5)
        write = row_writer(space)
        assert write_rows(write, first.rows(0, 3), samples[:3]) == []
        assert write_rows(write, second.rows(3, 5), samples[3:]) == []
        first.release_attached()
        second.release_attached()
        _same(concatenate(space, samples), block.batch)
    finally:
        block.release()


def test_unlinking_removes_the_name_but_keeps_the_mapping() -> None:
    space = sekai.Box(0.0, 1.0, shape=(3,))
    block = SharedBatch.create(space, 2)
    worker = SharedBatch.attach(block.name, space, 2)
    block.unlink()
    assert not os.path.exists(f"/dev/shm/{block.name}")
    worker.batch[1] = 0.5
    assert block.batch[1].tolist() == [0.5, 0.5, 0.5]
    worker.release_attached()
    block.release()
    block.release()  # a second release does nothing


def test_release_unlinks_a_block_that_was_never_unlinked() -> None:
    block = SharedBatch.create(sekai.Discrete(3), 4)
    name = block.name
    assert os.path.exists(f"/dev/shm/{name}")
    block.release()
    assert not os.path.exists(f"/dev/shm/{name}")
    assert block.batch is None


def test_a_release_that_ctrl_c_cuts_short_in_unlink_is_finished_by_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = SharedBatch.create(sekai.Discrete(3), 4)
    name = block.name
    unlink = interrupted_once(shared_memory.SharedMemory.unlink)
    monkeypatch.setattr(shared_memory.SharedMemory, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        block.release()
    block.release()
    assert not os.path.exists(f"/dev/shm/{name}")


def _refuse(code: int) -> Any:
    def fallocate(fd: int, offset: int, size: int) -> None:
        raise OSError(code, os.strerror(code))

    return fallocate


def _ours() -> set[str]:
    return {name for name in os.listdir("/dev/shm") if name.startswith(f"sekai_{os.getpid()}_")}


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="blocks cannot be reserved here")
def test_a_block_has_its_pages_reserved_when_created() -> None:
    # Unreserved, a tmpfs block gets its pages as they are written: one past the free space
    # of /dev/shm kills the worker writing it with SIGBUS.
    block = SharedBatch.create(sekai.Box(0, 255, shape=(1 << 20,), dtype=np.uint8), 2)
    try:
        assert os.fstat(block._segment._fd).st_blocks * 512 >= 2 << 20  # type: ignore[union-attr]
    finally:
        block.release()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG])
def test_a_block_that_does_not_fit_in_dev_shm_fails_at_creation_and_leaves_no_name(
    monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    monkeypatch.setattr(os, "posix_fallocate", _refuse(code), raising=False)
    before = _ours()
    with pytest.raises(NoRoom) as caught:
        SharedBatch.create(sekai.Box(0, 255, shape=(3 << 20,), dtype=np.uint8), 4)
    assert caught.value.errno == errno.ENOSPC
    assert str(caught.value).startswith(
        "[Errno 28] cannot reserve 12.0 MiB of shared memory for the observations of 4 sub-envs: "
        "/dev/shm has "
    )
    assert " MiB free (of " in str(caught.value)
    assert caught.value.more.startswith("give /dev/shm more room")
    assert _ours() == before


def test_a_block_over_the_memory_limit_names_that_limit_not_dev_shm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A memory cgroup refuses with ENOMEM while /dev/shm may have room to spare.
    monkeypatch.setattr(os, "posix_fallocate", _refuse(errno.ENOMEM), raising=False)
    before = _ours()
    with pytest.raises(NoRoom) as caught:
        SharedBatch.create(sekai.Box(0, 255, shape=(3 << 20,), dtype=np.uint8), 4)
    assert caught.value.errno == errno.ENOMEM
    assert str(caught.value) == (
        "[Errno 12] cannot reserve 12.0 MiB of shared memory for the observations of 4 sub-envs: "
        "the memory limit of this process (cgroup) was reached"
    )
    assert caught.value.more == "raise that memory limit (with Docker: docker run --memory=...)"
    assert _ours() == before


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (24, "24 bytes"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (3 << 20, "3.0 MiB"),
    ],
)
def test_no_room_messages_give_small_sizes_in_bytes_or_kib(
    monkeypatch: pytest.MonkeyPatch, size: int, text: str
) -> None:
    monkeypatch.setattr(os, "posix_fallocate", _refuse(errno.ENOSPC), raising=False)
    with pytest.raises(NoRoom, match=f"cannot reserve {text} of shared memory"):
        create_segment(f"sekai_{os.getpid()}_size_test", size, "a test")


@pytest.mark.parametrize("code", [errno.EINVAL, errno.EOPNOTSUPP])
def test_a_filesystem_that_cannot_reserve_gets_the_block_unreserved(
    monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    monkeypatch.setattr(os, "posix_fallocate", _refuse(code), raising=False)
    block = SharedBatch.create(sekai.Discrete(3), 4)
    block.batch[:] = 2
    assert block.batch.tolist() == [2] * 4
    block.release()


def test_observations_that_do_not_fit_are_reported_by_row_and_the_others_written() -> None:
    space = sekai.Dict(x=sekai.Box(-1.0, 1.0, shape=(2,)), k=sekai.Discrete(3))
    block = SharedBatch.create(space, 4)
    try:
        rows = block.rows(0, 4)
        observations = [
            {"x": np.array([0.1, 0.2]), "k": 1},
            {"x": np.array([0.5]), "k": 2},  # wrong shape
            {"x": np.array([0.3, 0.4], np.float64), "k": 0},
            {"k": 1},  # a missing key
        ]
        errors = write_rows(row_writer(space), rows, observations)
        assert [index for index, _ in errors] == [1, 3]
        assert isinstance(errors[0][1], ValueError)
        assert "does not fit" in str(errors[0][1])
        assert isinstance(errors[1][1], KeyError)
        assert block.batch["x"].dtype == np.float32
        assert block.batch["x"][2].tolist() == pytest.approx([0.3, 0.4])
        assert block.batch["k"][[0, 2]].tolist() == [1, 0]
    finally:
        block.release()


def _addresses(batch: Any) -> list[int]:
    if isinstance(batch, dict):
        return [address for part in batch.values() for address in _addresses(part)]
    if isinstance(batch, tuple):
        return [address for part in batch for address in _addresses(part)]
    return [batch.__array_interface__["data"][0]]


def test_every_part_of_a_block_starts_on_its_own_cache_line() -> None:
    space = sekai.Dict(a=sekai.Discrete(3), b=sekai.Box(0, 255, shape=(3,), dtype=np.uint8))
    block = SharedBatch.create(space, 3)
    try:
        parts = [*_addresses(block.batch), *_addresses(block.flags(0, 3))]
        assert len(set(parts)) == len(parts)
        assert all(address % 64 == 0 for address in parts)
    finally:
        block.release()


def test_an_observation_with_an_extra_axis_of_one_does_not_fit() -> None:
    space = sekai.Box(-1.0, 1.0, shape=(3,))
    block = SharedBatch.create(space, 2)
    try:
        observations = [np.zeros(3), np.ones((1, 3))]  # numpy would broadcast the second
        errors = write_rows(row_writer(space), block.rows(0, 2), observations)
        assert [index for index, _ in errors] == [1]
        assert "does not fit" in str(errors[0][1])
    finally:
        block.release()


def test_observations_of_some_sub_envs_land_in_their_own_rows() -> None:
    space = sekai.Discrete(9)
    block = SharedBatch.create(space, 4)
    try:
        block.batch[:] = 0
        errors = write_at(row_writer(space), block.rows(0, 4), [3, 1, 2], [7, 5, None])
        assert errors == []
        assert block.batch.tolist() == [0, 5, 0, 7]
    finally:
        block.release()


def test_a_block_unlinked_once_is_not_unlinked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    block = SharedBatch.create(sekai.Discrete(3), 2)
    calls: list[str] = []
    real = shared_memory.SharedMemory.unlink

    def unlink(segment: shared_memory.SharedMemory) -> None:
        calls.append(segment.name)
        real(segment)

    monkeypatch.setattr(shared_memory.SharedMemory, "unlink", unlink)
    block.unlink()
    block.unlink()
    block.release()
    assert calls == [block.name]
