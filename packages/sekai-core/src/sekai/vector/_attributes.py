"""``get_attr``, ``set_attr`` and ``call`` of the backends whose sub-envs are separate envs
(SyncVecEnv, AsyncVecEnv, ProcVecEnv, RayVecEnv): the public methods act on every sub-env
through the hooks that also reach some of them (``env_ids``); those whose sub-envs run
elsewhere send one command each, only to the workers that run the sub-envs asked for."""

from __future__ import annotations

import abc
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sekai.error import VecEnvClosed
from sekai.vector._contract.subenv import CHECKED_NAMES
from sekai.vector.vec_env import VecEnv

__all__ = ["Argument", "RemoteAttributes", "SubEnvAttributes", "one_call"]

# Builds a worker's argument from its positions (None: all of its slice) and the indices of
# its sub-envs among those asked for.
Argument = Callable[[list[int] | None, Sequence[int]], Any]


_Method = TypeVar("_Method", bound=Callable[..., Any])


def one_call(method: _Method) -> _Method:
    """``method`` of a ``RemoteAttributes`` holding its call lock: one call at a time uses the
    workers, and a ``close()`` from another thread can wait for it. The call raises
    VecEnvClosed only where ``close()`` killed the workers under it (``_cut``): an error it
    raised by itself while ``close()`` waited is its own."""

    @functools.wraps(method)
    def call(self: RemoteAttributes, *args: Any, **kwargs: Any) -> Any:
        if not self._nests and self._calling._is_owned():  # type: ignore[attr-defined]
            # A signal handler or a callback inside a call of this thread: it would take the
            # replies the call waits for. Only close() may cut in (a timeout guard).
            # _at(command, ...) serves get_attr and call; _set_attr_at is set_attr
            name = args[0] if method.__name__ == "_at" and args else method.__name__
            name = name.lstrip("_").removesuffix("_at")
            raise RuntimeError(
                f"{type(self).__name__}.{name}() was called while another call of it runs in "
                "this thread (from a signal handler or a callback inside that call): its "
                "workers answer one call at a time, and only close() may cut in."
            )
        try:
            with self._calling:
                try:
                    return method(self, *args, **kwargs)
                except VecEnvClosed:  # from a one_call method within: its cause is the error
                    raise
                except Exception as error:
                    if self._cut:
                        raise VecEnvClosed() from error
                    raise
        finally:
            # close() ran inside this call (a signal handler): release once the outermost unwinds
            if self._deferred and not self._calling._is_owned():  # type: ignore[attr-defined]
                self._deferred = False
                self._release_deferred()

    return call  # type: ignore[return-value]


class SubEnvAttributes(VecEnv):
    """``get_attr``, ``set_attr`` and ``call`` through ``_get_attr_at``, ``_set_attr_at`` and
    ``_call_at`` for every sub-env (``env_ids=None``), which a subclass implements."""

    def get_attr(self, name: str) -> list[Any]:
        return self._get_attr_at(None, name)

    def set_attr(self, name: str, values: Any) -> None:
        self._set_attr_at(None, name, self._per_env_values(name, values))

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        return self._call_at(None, name, args, kwargs)


class RemoteAttributes(SubEnvAttributes):
    """The attribute hooks of a VecEnv whose workers answer ``get_attr``, ``set_attr`` and
    ``call`` commands; a subclass sends them in ``_at``.

    Such a VecEnv owns its workers (``_workers`` names them), so it refuses to be copied or
    pickled: a copy would share them, and closing it (or collecting it) would stop them.

    Its calls that use the workers hold ``_calling`` (``one_call``), so a ``close()`` from
    another thread (a watchdog, a stop button) can wait for the call in progress; a subclass
    makes the lock in its constructor.
    """

    _workers = "worker processes"
    _calling: threading.RLock  # reentrant: close() from a signal handler within a call
    _cut = False  # close() killed the workers under the call in progress
    _deferred = False  # ... from within that call: it releases what is left as it unwinds
    _nests = False  # a call made of others (set_attr's two rounds) is running them

    @abc.abstractmethod
    def _release_deferred(self) -> None:
        """Release what ``close()`` from within a call left for the call as it unwinds."""

    @abc.abstractmethod
    def _cut_short(self) -> None:
        """Kill the workers under the call in progress, which ends it (it raises
        VecEnvClosed: set ``_cut``)."""

    def _wait_for_call(self, timeout: float | None) -> None:
        """Take the call lock for ``close()`` (the caller releases it) once the call of another
        thread ends, or, after ``timeout`` seconds (None: no limit), once ``_cut_short()``
        ended it. Ctrl-C while waiting cuts the call short at once and releases what it held
        (``_release_deferred``) before it propagates."""
        try:
            if not self._calling.acquire(timeout=-1 if timeout is None else timeout):
                self._cut_short()
                self._calling.acquire()
        except BaseException:
            self._cut_short()
            with self._calling:
                self._release_deferred()  # killed workers close no sub-env: no close errors
            raise

    def __reduce_ex__(self, protocol: Any) -> Any:
        # pickle, cloudpickle, copy.copy and copy.deepcopy all start here: raising before any
        # state is read leaves no half-built copy whose __del__ or pipes would hit the workers.
        name = type(self).__name__
        raise TypeError(
            f"{name} owns {self._workers} and cannot be copied or pickled (a copy would share "
            f"them, and closing it would stop them); build another {name} with the same "
            "factories instead."
        )

    def _get_attr_at(self, env_ids: Sequence[int] | None, name: str) -> list[Any]:
        return self._at("get_attr", env_ids, lambda positions, _: (positions, name), "the name")

    @one_call  # both rounds in one call
    def _set_attr_at(self, env_ids: Sequence[int] | None, name: str, values: list[Any]) -> None:
        def argument(apply: bool) -> Argument:
            return lambda positions, at: (positions, name, [values[i] for i in at], apply)

        what = f"the value of {name!r}"
        self._nests = True
        try:
            if name in CHECKED_NAMES:  # every worker checks its values before any sets them
                self._at("set_attr", env_ids, argument(False), what, values)
            self._at("set_attr", env_ids, argument(True), what, values)
        finally:
            self._nests = False

    def _call_at(
        self,
        env_ids: Sequence[int] | None,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> list[Any]:
        what = f"the arguments of call({name!r})"
        return self._at("call", env_ids, lambda p, _: (p, name, args, kwargs), what)

    @abc.abstractmethod
    def _at(
        self,
        command: str,
        env_ids: Sequence[int] | None,
        argument: Argument,
        what: str,
        values: list[Any] | None = None,
    ) -> list[Any]:
        """Send ``command`` (``"get_attr"``, ``"set_attr"`` or ``"call"``) for the sub-envs
        ``env_ids`` (None: all) to the workers that run them, each with ``argument(positions,
        at)``; ``what`` names the argument in a pickling error, ``values`` (one per sub-env
        asked) lets that error name the sub-env. Returns their values, in ``env_ids`` order."""
