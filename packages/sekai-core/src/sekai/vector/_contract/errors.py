"""Sub-env exceptions across the process boundary: VecEnvWorkerError[Cls] (core.md §11).

A worker describes an exception as plain data (``describe``): its class name, message,
formatted traceback, and separately pickled class and attributes. The parent turns that into a
``VecEnvWorkerError`` whose class also derives from the original class when it can
(``worker_error``), so ``except ValueError`` or ``except sekai.ResetRequired`` catch the same
failures as with SyncVecEnv, and ``except sekai.VecEnvWorkerError`` catches every worker failure.
"""

from __future__ import annotations

import contextlib
import io
import pickle
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

from sekai.error import (
    _WORKER_ERROR_FIELDS as _OWN,
    VecEnvWorkerError,
    _formatted,
    _noted as noted,  # the remote backends' name for it
    _picklable,
)

__all__ = [
    "ErrorInfo",
    "describe",
    "dumps",
    "noted",
    "unpicklable_detail",
    "unreadable_command",
    "worker_error",
    "worker_error_class",
]


class ErrorInfo(NamedTuple):
    """A sub-env's exception as a worker reports it (picklable whatever the exception)."""

    exc_type: str
    message: str
    traceback: str
    cls: bytes | None  # the pickled class, or None when it cannot be pickled
    state: bytes | None  # the pickled attributes (e.g. InvalidAction.index, OSError.errno)


def unpicklable_detail(factory: Any, dumps: Any) -> str:
    """``" (the keyword argument 'x' of make_vec('Id-v0'))"`` when an env factory can name the
    part of it that ``dumps`` cannot pickle (``make_vec``'s factories can), else ``""``."""
    describe = getattr(factory, "unpicklable_part", None)
    part = describe(dumps) if callable(describe) else None
    return f" ({part})" if part else ""


def dumps(obj: Any) -> bytes:
    """``pickle.dumps``, falling back to cloudpickle (classes and functions by value).

    Raises:
        Exception: whatever cloudpickle raises when neither can pickle ``obj``.
    """
    try:
        return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except Exception:  # e.g. a class defined in __main__: cloudpickle sends it by value
        import cloudpickle

        return cloudpickle.dumps(obj, pickle.HIGHEST_PROTOCOL)  # type: ignore[no-any-return]


def _try_dumps(obj: Any) -> bytes | None:
    try:
        return dumps(obj)
    except Exception:
        return None


def describe(exc: BaseException, context: str = "") -> ErrorInfo:
    """Describe ``exc`` for the parent; ``context`` (if given) prefixes the message."""
    cls = type(exc)
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not lose the error itself
        message = f"<{cls.__name__} with an unprintable message>"
    if context:
        message = f"{context}: {message}"
    formatted = _formatted(exc)
    state = _attributes(exc)
    return ErrorInfo(
        cls.__name__, message, formatted, _try_dumps(cls), _state_dumps(state) if state else None
    )


def unreadable_command(
    payload: Any, exc: Exception, command: str, count: int, *, positioned: bool
) -> list[tuple[int, ErrorInfo]]:
    """The errors of a command a worker cannot unpickle (``exc``, e.g. a class its node cannot
    import), by the sub-envs of its slice it was for: those its argument's positions name
    (``positioned``: the argument is ``(positions or None: all, ...)``), else all ``count``.

    The positions are read again with every class and function of the argument left out,
    which fails for nothing but a broken payload (then: all of them).
    """
    info = describe(exc, f"the command {command}() cannot be unpickled in the worker")
    positions = _positions(payload) if positioned else None
    return [(index, info) for index in positions or range(max(count, 1))]


class _Anything(type):
    """The class of ``_Stub``: calling it, or anything found on it, gives it back."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls

    def __getattr__(cls, name: str) -> Any:  # __setstate__, extend, append...
        return cls

    def __setitem__(cls, key: Any, value: Any) -> None:
        pass


class _Stub(metaclass=_Anything):
    """What every class or function of an unreadable argument unpickles to; an instance of it
    (made by ``cls.__new__``) takes whatever the pickle does with it too."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # A namedtuple or an int subclass is rebuilt with its constructor's arguments.
        return object.__new__(cls)

    def __getattr__(self, name: str) -> Any:
        return _Stub

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class _Lenient(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return _Stub


def _positions(payload: Any) -> list[int] | None:
    """The positions of a ``(positions or None, ...)`` argument that cannot be unpickled."""
    try:
        positions = _Lenient(io.BytesIO(payload)).load()[0]
        return None if positions is None else [int(p) for p in positions]
    except Exception:
        return None


def _attributes(exc: BaseException) -> dict[str, Any]:
    """``exc.__dict__`` plus the small fields built-in exceptions keep outside it
    (``OSError.errno``, ``StopIteration.value``, ``ImportError.name``...), so the parent's
    error has them too. Not ``AttributeError.obj`` or ``UnicodeError.object``: the object a
    lookup failed on is often the env itself, which would travel whole."""
    state = dict(getattr(exc, "__dict__", None) or {})
    for name in _BUILT_IN_FIELDS:
        if name not in state and isinstance(exc, _BUILT_IN_FIELDS[name]):
            with contextlib.suppress(AttributeError):  # e.g. an unset characters_written
                state[name] = getattr(exc, name)
    return state


_BUILT_IN_FIELDS: dict[str, type | tuple[type, ...]] = {
    "errno": OSError,
    "strerror": OSError,
    "filename": (OSError, SyntaxError),
    "filename2": OSError,
    "value": (StopIteration, StopAsyncIteration),
    "code": SystemExit,
    "name": (ImportError, AttributeError, NameError),
    "path": ImportError,
    "encoding": UnicodeError,
    "start": UnicodeError,
    "end": UnicodeError,
    "reason": UnicodeError,
    "msg": SyntaxError,
    "lineno": SyntaxError,
    "offset": SyntaxError,
    "text": SyntaxError,
}


def _state_dumps(state: dict[str, Any]) -> bytes | None:
    """The attributes pickled, leaving out only those that cannot be pickled."""
    blob = _try_dumps(state)
    if blob is None:
        kept = {k: v for k, v in state.items() if _try_dumps(v) is not None}
        blob = _try_dumps(kept) if kept else None
    return blob


# One subclass per exception class, kept only while the class lives.
_SUBCLASSES: weakref.WeakKeyDictionary[type, type[VecEnvWorkerError]] = weakref.WeakKeyDictionary()


def worker_error_class(cls: type | None) -> type[VecEnvWorkerError]:
    """``VecEnvWorkerError[cls]``: a subclass of both, created once per class.

    Plain ``VecEnvWorkerError`` when ``cls`` is None, not an Exception class, already a
    VecEnvWorkerError, or cannot be combined with it (a layout conflict).
    """
    if (
        not isinstance(cls, type)
        or not issubclass(cls, Exception)
        or issubclass(cls, VecEnvWorkerError)
    ):
        return VecEnvWorkerError
    try:
        return _SUBCLASSES[cls]
    except (KeyError, TypeError):
        pass
    try:
        sub: type[VecEnvWorkerError] = type(
            f"VecEnvWorkerError[{cls.__name__}]",
            (VecEnvWorkerError, cls),
            {
                "__module__": VecEnvWorkerError.__module__,
                "__reduce__": _reduce,
                "_original_class": cls,
                "__doc__": f"A VecEnvWorkerError for a {cls.__name__} raised in a worker.",
            },
        )
        sub(0, cls.__name__, "")  # some classes cannot be instantiated this way
    except Exception:
        sub = VecEnvWorkerError
    with contextlib.suppress(TypeError):  # not weak-referenceable: built again next time
        _SUBCLASSES[cls] = sub
    return sub


def _reduce(self: VecEnvWorkerError) -> tuple[Any, ...]:
    # A class pickle cannot name (defined at run time in the worker, rebuilt here by value)
    # rebuilds a plain VecEnvWorkerError, as when the parent could not unpickle it (core.md §11).
    cls = getattr(type(self), "_original_class", None)
    state = {k: v for k, v in _attributes(self).items() if k not in _OWN and _picklable(v)}
    notes = getattr(self, "__notes__", None)  # not copied by _restore, which skips dunders
    return (
        _rebuild,
        (
            cls if _picklable(cls) else None,
            self.rank,
            self.exc_type,
            self.message,
            self.remote_traceback,
            self.worker,
            self.ranks,
            state,
        ),
        {"__notes__": list(notes)} if notes else None,
    )


def _rebuild(
    cls: type | None,
    rank: int,
    exc_type: str,
    message: str,
    remote_traceback: str,
    worker: int | None,
    ranks: Sequence[int],
    state: dict[str, Any],
) -> VecEnvWorkerError:
    error = worker_error_class(cls)(
        rank, exc_type, message, remote_traceback, worker=worker, ranks=ranks
    )
    _restore(error, state)
    return error


def _restore(error: VecEnvWorkerError, state: Any) -> None:
    """Copy the original exception's attributes, never over VecEnvWorkerError's own."""
    if isinstance(state, dict):
        for key, value in state.items():
            if isinstance(key, str) and key not in _OWN and not key.startswith("__"):
                with contextlib.suppress(Exception):  # e.g. a read-only attribute: skip it
                    setattr(error, key, value)


def _loads(blob: bytes | None) -> Any:
    if blob is None:
        return None
    try:
        return pickle.loads(blob)
    except Exception:  # e.g. a class that only exists in the worker
        return None


def worker_error(
    info: ErrorInfo, rank: int, *, worker: int | None = None, ranks: Sequence[int] | None = None
) -> VecEnvWorkerError:
    """The exception the parent raises for ``info``, reported by sub-env ``rank``."""
    cls = _loads(info.cls)
    error = worker_error_class(cls)(
        rank, info.exc_type, info.message, info.traceback, worker=worker, ranks=ranks
    )
    _restore(error, _loads(info.state))
    return error
