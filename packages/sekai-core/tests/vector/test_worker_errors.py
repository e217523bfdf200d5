"""VecEnvWorkerError[Cls]: a worker's exception raised in the parent with its class kept."""

from __future__ import annotations

import collections
import pickle
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.error import VecEnvWorkerError
from sekai.vector._contract.errors import (
    ErrorInfo,
    describe,
    noted,
    unreadable_command,
    worker_error,
    worker_error_class,
)


def _described(exc: BaseException) -> ErrorInfo:
    try:
        raise exc
    except BaseException as raised:
        return describe(raised)


class NeedsArguments(Exception):
    """Cannot be instantiated the way VecEnvWorkerError is."""

    def __new__(cls, a: Any, b: Any) -> NeedsArguments:
        return super().__new__(cls)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bad value"),
        KeyError("missing"),
        OSError(2, "no such file"),
        sekai.ResetRequired(),
        sekai.InvalidAction(7, sekai.Discrete(2), index=1),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_the_error_derives_from_the_original_class_and_keeps_its_attributes(
    exc: Exception,
) -> None:
    error = worker_error(_described(exc), 3, worker=1)
    assert isinstance(error, VecEnvWorkerError)
    assert isinstance(error, type(exc))
    assert type(error).__name__ == f"VecEnvWorkerError[{type(exc).__name__}]"
    assert (error.rank, error.exc_type, error.worker, error.ranks) == (
        3,
        type(exc).__name__,
        1,
        (3,),
    )
    assert str(error).startswith(f"Sub-env 3 raised {type(exc).__name__}: {exc}\n\n")
    assert "Worker traceback:\nTraceback (most recent call last):" in str(error)
    if isinstance(exc, sekai.InvalidAction):
        assert (error.action, error.index) == (7, 1)  # type: ignore[attr-defined]


BUILT_IN_FIELDS = [
    (
        FileNotFoundError(2, "No such file", "/data/prices.csv"),
        {"errno": 2, "strerror": "No such file", "filename": "/data/prices.csv"},
    ),
    (StopIteration(5), {"value": 5}),
    (ImportError("no module", name="pricing", path="/p"), {"name": "pricing", "path": "/p"}),
    (
        sekai.MissingDependency("m", package="gymnasium", extra="gymnasium"),
        {"package": "gymnasium", "extra": "gymnasium"},
    ),
]


@pytest.mark.parametrize(("exc", "fields"), BUILT_IN_FIELDS, ids=lambda x: type(x).__name__)
def test_fields_built_in_exceptions_keep_outside_their_dict_cross_too(
    exc: Exception, fields: dict[str, Any]
) -> None:
    error = worker_error(_described(exc), 0)
    copy = pickle.loads(pickle.dumps(error))
    for name, value in fields.items():
        assert getattr(error, name) == value and getattr(copy, name) == value


class QuoteError(Exception):
    """Keeps attributes named as VecEnvWorkerError's own (a common ``self.message``)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"quote failed: {message}")
        self.message = message
        self.rank = 99
        self.venue = "XNYS"


def test_the_originals_attributes_never_replace_the_errors_own() -> None:
    error = worker_error(_described(QuoteError("stale")), 2, worker=0)
    assert (error.message, error.rank, error.ranks, error.worker) == (
        "quote failed: stale",
        2,
        (2,),
        0,
    )
    assert error.venue == "XNYS"  # type: ignore[attr-defined]  # the others are kept
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.rank, copy.venue) == ("quote failed: stale", 2, "XNYS")  # type: ignore[attr-defined]


def test_one_subclass_is_created_per_class() -> None:
    assert worker_error_class(ValueError) is worker_error_class(ValueError)
    assert worker_error_class(ValueError) is not worker_error_class(KeyError)


@pytest.mark.parametrize(
    "cls", [None, int, KeyboardInterrupt, VecEnvWorkerError, NeedsArguments], ids=str
)
def test_classes_that_cannot_be_combined_give_a_plain_vec_env_worker_error(cls: Any) -> None:
    assert worker_error_class(cls) is VecEnvWorkerError


def test_a_class_the_parent_cannot_unpickle_gives_a_plain_vec_env_worker_error() -> None:
    info = _described(ValueError("x"))._replace(cls=b"not a pickle")
    error = worker_error(info, 0)
    assert type(error) is VecEnvWorkerError
    assert (error.exc_type, error.message) == ("ValueError", "x")


@pytest.mark.parametrize("exc", [ValueError("v"), sekai.InvalidAction(1, sekai.Discrete(1))])
def test_the_error_pickles_to_the_same_class_and_attributes(exc: Exception) -> None:
    error = worker_error(_described(exc), 2, worker=0, ranks=[2, 3])
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert (copy.rank, copy.exc_type, copy.remote_traceback, copy.worker, copy.ranks) == (
        2,
        error.exc_type,
        error.remote_traceback,
        0,
        (2, 3),
    )
    assert vars(copy) == vars(error)


@pytest.mark.parametrize("cls", [None, ValueError], ids=["plain", "combined"])
def test_the_error_pickles_with_its_notes(cls: type[Exception] | None) -> None:
    # A dead worker's error carries its exit status as a note (vector.md, "Which sub-env
    # failed"); it must survive a trip to another process.
    error = worker_error_class(cls)(1, "EOFError", "worker process exited unexpectedly")
    noted(error, ["The worker process exited with code 3."])
    error.extra = "kept"  # type: ignore[attr-defined]
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert getattr(copy, "__notes__", None) == ["The worker process exited with code 3."]
    assert copy.extra == "kept"  # type: ignore[attr-defined]
    assert str(copy) == str(error)


def test_an_error_of_a_class_pickle_cannot_name_pickles_as_a_plain_vec_env_worker_error() -> None:
    # A class defined at run time in the worker comes to the parent by value (cloudpickle): the
    # parent's error derives from it, but pickle cannot name it, so a copy is a plain
    # VecEnvWorkerError with the same fields, and an attribute pickle cannot carry is left out.
    class LocalError(Exception):
        pass

    class Detail:
        pass

    exc = LocalError("boom")
    exc.code = 7  # type: ignore[attr-defined]
    exc.detail = Detail()  # type: ignore[attr-defined]
    error = worker_error(_described(exc), 1, worker=0, ranks=[1, 2])
    assert isinstance(error, LocalError)
    noted(error, ["a note"])
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is VecEnvWorkerError
    assert (copy.rank, copy.exc_type, copy.message, copy.worker, copy.ranks) == (
        1,
        "LocalError",
        "boom",
        0,
        (1, 2),
    )
    assert copy.remote_traceback == error.remote_traceback and str(copy) == str(error)
    assert copy.code == 7  # type: ignore[attr-defined]
    assert not hasattr(copy, "detail")
    assert getattr(copy, "__notes__", None) == ["a note"]
    plain = worker_error_class(None)(0, "EOFError", "gone")
    plain.detail = Detail()  # type: ignore[attr-defined]
    assert not hasattr(pickle.loads(pickle.dumps(plain)), "detail")


def test_a_worker_running_several_sub_envs_is_named_with_them() -> None:
    error = worker_error(_described(EOFError("gone")), 4, worker=2, ranks=[4, 5, 6])
    assert str(error).startswith("Worker 2 (sub-envs 4-6) raised EOFError: gone")


def test_describe_survives_a_broken_str_and_unpicklable_state() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    exc = Broken()
    exc.lock = threading.Lock()  # type: ignore[attr-defined]  # not picklable at all
    info = describe(exc, "while stepping")
    assert info.message == "while stepping: <Broken with an unprintable message>"
    assert info.state is None
    exc.code = 7  # type: ignore[attr-defined]  # picklable: kept without the lock
    assert pickle.loads(describe(exc).state) == {"code": 7}  # type: ignore[arg-type]
    assert info.cls is not None  # a local class: pickled by value with cloudpickle


def test_the_object_an_attribute_lookup_failed_on_does_not_travel() -> None:
    # AttributeError.obj is usually the env itself, with all its data
    class Env:
        data = b"x" * 10_000_000

    try:
        Env().typo  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        info = describe(exc)
    assert info.state is None or len(info.state) < 1000
    error = worker_error(info, 0)
    assert error.name == "typo" and error.obj is None  # type: ignore[attr-defined]


def _missing_module() -> Any:
    raise ModuleNotFoundError("No module named 'simulators'")


class _Elsewhere:
    """Pickles fine; unpickling it fails, as for a class whose module the worker lacks."""

    def __init__(self) -> None:
        self.state = {"rows": [1, 2], "table": np.arange(3)}

    def __reduce__(self) -> Any:
        return (_missing_module, ())


class _Plain:
    def __init__(self) -> None:
        self.items = [_Elsewhere(), {"k": np.float32(1)}]


_Config = collections.namedtuple("_Config", "lr gamma")


class _Level(int):
    """Pickled with its constructor's arguments, as a namedtuple is."""


@pytest.mark.parametrize(
    ("argument", "positioned", "expected"),
    [
        (([1, 3], [_Elsewhere(), _Plain()]), True, [1, 3]),
        (([2], "name", (_Plain(), _Elsewhere()), {"k": _Plain}), True, [2]),
        (([1], "name", (_Config(0.1, 0.9), _Level(3), _Elsewhere()), {}), True, [1]),
        ((None, [_Elsewhere()]), True, [0, 1, 2, 3]),  # every sub-env of the slice
        ([(None, _Elsewhere())] * 4, False, [0, 1, 2, 3]),  # reset: no positions
    ],
    ids=["step", "call", "constructor-arguments", "all", "reset"],
)
def test_a_command_the_worker_cannot_unpickle_fails_the_sub_envs_it_was_for(
    argument: Any, positioned: bool, expected: list[int]
) -> None:
    payload = pickle.dumps(argument)
    with pytest.raises(ModuleNotFoundError) as caught:
        pickle.loads(payload)
    errors = unreadable_command(payload, caught.value, "step", 4, positioned=positioned)
    assert [index for index, _ in errors] == expected
    message = "the command step() cannot be unpickled in the worker: No module named 'simulators'"
    assert {info.message for _, info in errors} == {message}


def test_an_unreadable_command_with_a_broken_payload_fails_every_sub_env() -> None:
    errors = unreadable_command(b"\x80\x05garbage", ValueError("bad"), "call", 2, positioned=True)
    assert [index for index, _ in errors] == [0, 1]


_NOTE_SCRIPT = """
import sys
from sekai.vector._contract.errors import describe

error = ValueError("bad action")
error.__notes__ = ["hint: the sub-env's own note"]  # add_note() from Python 3.11 on
try:
    raise error
except ValueError as raised:
    info = describe(raised)
assert "exceptiongroup" not in sys.modules or sys.version_info < (3, 11)
print(info.traceback)
"""


def test_the_worker_traceback_keeps_the_notes_of_the_sub_envs_error_on_every_python() -> None:
    # A fresh interpreter, as a worker is: nothing has imported the exceptiongroup backport,
    # whose import makes Python 3.10's traceback print notes (pytest imports it there).
    done = subprocess.run(
        [sys.executable, "-c", _NOTE_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("ValueError: bad action\nhint: the sub-env's own note")
