"""The call rule of the VecEnvs whose workers run elsewhere (``sekai.vector._attributes.one_call``),
without workers: a call cut short by ``close()`` raises VecEnvClosed from the error that
stopped it, however many one_call methods it passed through."""

from __future__ import annotations

import re
import threading

import pytest

import sekai
from sekai.vector._attributes import one_call


class _Calls:
    """What one_call reads of a RemoteAttributes: its lock, whether close() cut the workers,
    and whether a release waits for the call to unwind."""

    def __init__(self) -> None:
        self._calling = threading.RLock()
        self._cut = False
        self._deferred = False
        self._nests = False

    @one_call
    def inner(self) -> None:
        self._cut = True  # close() killed the workers under the call
        raise sekai.VecEnvWorkerError(0, "EOFError", "the worker's pipe closed")

    @one_call
    def outer(self) -> None:
        self._nests = True  # a call made of others, as set_attr's two rounds
        try:
            self.inner()
        finally:
            self._nests = False

    @one_call
    def _at(self, command: str) -> None:
        """As ProcVecEnv's: one method serving get_attr and call."""

    @one_call
    def _set_attr_at(self) -> None:
        self._at("set_attr")

    @one_call
    def reentered(self) -> None:
        self.inner()  # as a signal handler calling in, not a call made of others


def test_a_cut_call_raises_vec_env_closed_from_the_workers_error_through_nested_calls() -> None:
    # Before: the outer call wrapped the inner one's VecEnvClosed in a second one, so the
    # worker's error was the cause of the cause (RayVecEnv's set_attr, two rounds in one call).
    with pytest.raises(sekai.VecEnvClosed) as raised:
        _Calls().outer()
    assert isinstance(raised.value.__cause__, sekai.VecEnvWorkerError)


def test_a_call_made_inside_a_call_that_does_not_nest_is_refused() -> None:
    calls = _Calls()
    message = (
        "_Calls.inner() was called while another call of it runs in this thread (from a "
        "signal handler or a callback inside that call): its workers answer one call at a "
        "time, and only close() may cut in."
    )
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        calls.reentered()
    assert not calls._cut  # refused before it ran
    assert not calls._calling._is_owned()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("inner", "name"), [("_at", "get_attr"), ("_set_attr_at", "set_attr"), ("inner", "inner")]
)
def test_the_refusal_names_the_public_method_called(inner: str, name: str) -> None:
    calls = _Calls()
    args = ("get_attr",) if inner == "_at" else ()
    with pytest.raises(RuntimeError, match=rf"^_Calls\.{name}\(\) was called while"):
        calls._calling.acquire()
        try:
            getattr(calls, inner)(*args)
        finally:
            calls._calling.release()
