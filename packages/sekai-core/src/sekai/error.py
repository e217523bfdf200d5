"""sekai's exception hierarchy and warning categories."""

from __future__ import annotations

import pickle
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sekai.plugins import PluginFailure

__all__ = [
    "AsyncCallPending",
    "EnvAlreadyRegistered",
    "EnvNotFound",
    "InvalidAction",
    "InvalidObservation",
    "LookAheadError",
    "MissingDependency",
    "PluginLoadWarning",
    "ResetRequired",
    "SekaiError",
    "SharedMemoryWarning",
    "SpaceMismatch",
    "VecEnvClosed",
    "VecEnvWorkerError",
    "WipeOutWarning",
]

_LIST_HINT = "Use sekai.all_specs() or `sekai list` to see registered environments."
_RESET_REQUIRED = (
    "reset() must be called before the first call to step(). See Env.reset() for usage."
)
_ASYNC_CALL_PENDING = (
    "A previous async call is still pending. Await the previous result before making another call."
)


_Error = TypeVar("_Error", bound=BaseException)


def _noted(error: _Error, notes: Iterable[str]) -> _Error:
    """``error`` with ``notes`` added, printed under its traceback on every Python.

    Python 3.10 has no ``add_note``: the notes go to ``__notes__``, which 3.10's own traceback
    printing ignores; importing the ``exceptiongroup`` backport (a dependency there) makes it
    print them as 3.11 does.
    """
    for note in notes:
        if sys.version_info >= (3, 11):
            error.add_note(note)
        else:
            import exceptiongroup  # noqa: F401  # its import patches traceback (3.10 only)

            error.__notes__ = [*getattr(error, "__notes__", []), note]  # type: ignore[attr-defined]
    return error


def _picklable(obj: Any) -> bool:
    """Whether ``pickle`` itself pickles ``obj``: not a class or function it cannot name by
    reference (one defined inside a function, or rebuilt by cloudpickle from a worker), nor an
    object holding one. What an error carries is left out when it is not, so the error always
    pickles."""
    try:
        pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except Exception:
        return False
    return True


def _formatted(exc: BaseException) -> str:
    """``exc``'s traceback as Python prints it, its notes included on every Python (3.10's
    ``traceback`` leaves out ``__notes__``; the ``exceptiongroup`` backport's does not)."""
    if sys.version_info < (3, 11):
        from exceptiongroup import format_exception

        return "".join(format_exception(type(exc), exc, exc.__traceback__))
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class SekaiError(Exception):
    """Base class of every error sekai raises itself."""


class EnvNotFound(SekaiError):
    """An environment ID is not in the registry.

    Attributes:
        id: the ID that was asked for.
        suggestions: close registered IDs, best first.
        provider: the first-party distribution that would provide the ID, if it is not installed.
        failures: plugin failures (``sekai.plugins.PluginFailure``) for the ID's namespace.
    """

    def __init__(
        self,
        id: str,
        suggestions: Sequence[str] = (),
        *,
        provider: str | None = None,
        failures: Sequence[PluginFailure] = (),
        hint: str | None = None,
    ) -> None:
        self.id = id
        self.suggestions = tuple(suggestions)
        self.provider = provider
        self.failures = tuple(failures)
        self.hint = hint
        parts = [f"Environment {id!r} not found in registry."]
        if self.suggestions:
            parts.append("Did you mean: " + ", ".join(repr(s) for s in self.suggestions) + "?")
        if hint:
            parts.append(hint)
        parts.append(_LIST_HINT)
        super().__init__(" ".join(parts))

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_env_not_found,
            (self.id, self.suggestions, self.provider, self.failures, self.hint),
        )


def _rebuild_env_not_found(
    id: str,
    suggestions: tuple[str, ...],
    provider: str | None,
    failures: tuple[Any, ...],
    hint: str | None,
) -> EnvNotFound:
    return EnvNotFound(id, suggestions, provider=provider, failures=failures, hint=hint)


class EnvAlreadyRegistered(SekaiError):
    """An environment ID is registered twice.

    Attributes:
        id: the ID.
        owner: the sentence naming the plugin that provides it (None for a runtime
            registration), added as a note: printed under the traceback, not part of
            ``str(error)``, which is the spec's exact text.
    """

    def __init__(self, id: str, owner: str | None = None) -> None:
        self.id = id
        self.owner = owner
        super().__init__(f"Environment {id!r} is already registered.")
        if owner:
            _noted(self, [owner])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.id, self.owner))


class InvalidAction(SekaiError):
    """An action is not a member of the action space.

    Attributes:
        action: the rejected action.
        space: the action space.
        index: the sub-env index when a VecEnv rejected it, else None.
        agent: the agent whose action it is when a multi-agent env rejected it, else None.
    """

    def __init__(
        self, action: Any, space: Any, *, index: int | None = None, agent: Any = None
    ) -> None:
        self.action = action
        self.space = space
        self.index = index
        self.agent = agent
        where = f" (sub-env {index})" if index is not None else ""
        whose = f" (agent {agent!r})" if agent is not None else ""
        super().__init__(f"Action {action!r} is not valid for space {space!r}{where}{whose}.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_invalid_action, (self.action, self.space, self.index, self.agent))


def _rebuild_invalid_action(
    action: Any, space: Any, index: int | None, agent: Any = None
) -> InvalidAction:
    return InvalidAction(action, space, index=index, agent=agent)


class InvalidObservation(SekaiError):
    """Reserved: an observation does not fit the observation space (raised by nothing yet).

    The VecEnvs refuse a sub-env's observation that does not fit with a ``ValueError`` naming
    the sub-env; this class is kept exported for compatibility.

    Attributes:
        obs: the rejected observation.
        space: the observation space.
    """

    def __init__(self, obs: Any, space: Any) -> None:
        self.obs = obs
        self.space = space
        super().__init__(f"Observation {obs!r} is not valid for space {space!r}.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.obs, self.space))


class ResetRequired(SekaiError):
    """step() (or rendering) was called before reset(), or after the episode ended."""

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        super().__init__(message if message is not None else _RESET_REQUIRED)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))


class AsyncCallPending(SekaiError):
    """An async call was started while another async call of the same VecEnv was running (or
    the VecEnv was closed, copied or pickled then)."""

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        super().__init__(message if message is not None else _ASYNC_CALL_PENDING)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))


class SpaceMismatch(SekaiError):
    """Reserved: two spaces that must agree do not (raised by nothing yet)."""


class VecEnvClosed(SekaiError):
    """A VecEnv was used after close()."""

    def __init__(self) -> None:
        super().__init__("This VecEnv has been closed.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), ())


class VecEnvWorkerError(SekaiError):
    """A sub-env of an out-of-process VecEnv raised, or its worker died.

    Attributes:
        rank: index of the failing sub-env (the first affected one when a worker died).
        exc_type: the class name of the original exception.
        message: the original exception's message.
        remote_traceback: the worker's formatted traceback ("" when the worker died).
        worker: the worker index, when known.
        ranks: every sub-env index affected.
    """

    def __init__(
        self,
        rank: int,
        exc_type: str,
        message: str,
        remote_traceback: str = "",
        *,
        worker: int | None = None,
        ranks: Sequence[int] | None = None,
    ) -> None:
        self.rank = rank
        self.exc_type = exc_type
        self.message = message
        self.remote_traceback = remote_traceback
        self.worker = worker
        self.ranks = tuple(ranks) if ranks is not None else (rank,)
        if worker is not None and len(self.ranks) > 1:
            head = (
                f"Worker {worker} (sub-envs {self.ranks[0]}-{self.ranks[-1]}) "
                f"raised {exc_type}: {message}"
            )
        else:
            head = f"Sub-env {rank} raised {exc_type}: {message}"
        if remote_traceback:
            head += "\n\nWorker traceback:\n" + remote_traceback
        Exception.__init__(self, head)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # What was set after the constructor (the exit-status note in __notes__) travels too,
        # but for what pickle cannot carry.
        state = {
            k: v for k, v in vars(self).items() if k not in _WORKER_ERROR_FIELDS and _picklable(v)
        }
        return (
            _rebuild_worker_error,
            (
                self.rank,
                self.exc_type,
                self.message,
                self.remote_traceback,
                self.worker,
                self.ranks,
            ),
            state or None,
        )


# The attributes VecEnvWorkerError's constructor sets.
_WORKER_ERROR_FIELDS = frozenset(
    {"rank", "exc_type", "message", "remote_traceback", "worker", "ranks"}
)


def _rebuild_worker_error(
    rank: int,
    exc_type: str,
    message: str,
    remote_traceback: str,
    worker: int | None,
    ranks: tuple[int, ...],
) -> VecEnvWorkerError:
    return VecEnvWorkerError(rank, exc_type, message, remote_traceback, worker=worker, ranks=ranks)


class MissingDependency(SekaiError, ImportError):
    """An optional dependency is not installed; the message names the pip command."""

    def __init__(self, message: str, *, package: str, extra: str | None = None) -> None:
        self.package = package
        self.extra = extra
        SekaiError.__init__(self, message)
        self.msg = message
        self.name = package

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_missing_dependency, (str(self.args[0]), self.package, self.extra))


def _rebuild_missing_dependency(message: str, package: str, extra: str | None) -> MissingDependency:
    return MissingDependency(message, package=package, extra=extra)


class LookAheadError(SekaiError):
    """A finance feature transform used data from the future."""


class PluginLoadWarning(UserWarning):
    """A sekai plugin failed to load during discovery and was skipped."""


class WipeOutWarning(UserWarning):
    """Finance env parameters let one ordinary step wipe out the account (equity 0, the
    episode ends), e.g. a position of 10x equity or more, which a 10 % move takes to zero."""


class SharedMemoryWarning(UserWarning):
    """ProcVecEnv found no room in /dev/shm for a shared-memory block and passes what it would
    hold through its pipes instead (slower, same results)."""
