"""The async routing rule: a sync override is never skipped by the async path, and a wrapper's
async override never by the sync path."""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from sekai.error import _noted

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# (sync method, async method) pairs that the rule keeps consistent.
ROUTED_PAIRS: tuple[tuple[str, str], ...] = (("reset", "async_reset"), ("step", "async_step"))


def call_sync(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call a sync env method from a coroutine (the default async methods, the routing rule).

    A sync method that drives its own coroutine with ``asyncio.run()`` fails here, inside the
    running loop, before the coroutine ever starts. The error is the user's to see; the
    coroutine ``asyncio.run()`` refused is closed (``refused_by_asyncio_run``).
    """
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        refused_by_asyncio_run(exc)
        raise


def refused_by_asyncio_run(exc: RuntimeError) -> bool:
    """Whether ``exc`` is ``asyncio.run()`` refusing to start (it was called inside a running
    event loop); the coroutine it refused is then closed, or Python would also warn, whenever
    it is collected and pointing at whatever line runs then, that it "was never awaited"."""
    runners = sys.modules.get("asyncio.runners")  # not imported: no asyncio.run() failed
    run_code = getattr(getattr(runners, "run", None), "__code__", None)
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if run_code is None or tb is None or tb.tb_frame.f_code is not run_code:
        return False  # raised elsewhere (by a coroutine that asyncio.run() ran, too)
    refused = tb.tb_frame.f_locals.get("main")
    if inspect.iscoroutine(refused) and inspect.getcoroutinestate(refused) == inspect.CORO_CREATED:
        refused.close()
    return True


def awaitable(
    value: Awaitable[T], env: object, method: str, index: int | None = None
) -> Awaitable[T]:
    """``value``, what ``env.<method>()`` (``async_reset``, ``async_step``) returned, checked to
    be awaitable before it is awaited: a plain ``def`` where an ``async def`` belongs would
    give Python's "object StepResult can't be used in 'await' expression".

    Args:
        value: what the method returned.
        env: the env whose method it is.
        method: the method's name.
        index: the sub-env index, when a VecEnv awaits it.

    Raises:
        TypeError: ``value`` cannot be awaited; naming the sub-env, the method and its class.
    """
    if type(value) is types.CoroutineType or inspect.isawaitable(value):
        return value  # the common case first: a coroutine
    fn = getattr(env, method, None)  # a bound method: its function's name
    name = getattr(fn, "__qualname__", None) or f"{type(env).__qualname__}.{method}"
    from sekai.core.result import ResetResult, StepResult
    from sekai.spaces._explain import described  # only on this path: `import sekai` stays light

    if isinstance(value, (ResetResult, StepResult)):  # the usual mistake: a plain def
        got = f"a sekai.{type(value).__name__}"
    else:
        got = "None" if value is None else described(value)
    rule = f"must be an async def (sync code goes in {method.removeprefix('async_')}())."
    if index is None:
        raise TypeError(f"{name}() returned {got}, not an awaitable: it {rule}")
    raise TypeError(
        f"Sub-env {index} returned {got} from {method}(), not an awaitable: {name}() {rule}"
    )


def _defining_class(cls: type, name: str) -> type | None:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def _make_router(
    cls: type,
    sync_owner: type,
    sync_name: str,
    async_name: str,
    guard: Callable[[Callable[..., Any]], Callable[..., Any]] | None,
) -> Callable[..., Coroutine[Any, Any, Any]]:
    sync_fn = sync_owner.__dict__[sync_name]
    if guard is not None:
        sync_fn = guard(sync_fn)

    @functools.wraps(sync_fn)
    async def routed(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call_sync(sync_fn, self, *args, **kwargs)
        except RuntimeError as exc:
            # A note, not a new message: the user docs print the original one.
            if "running event loop" in str(exc):
                note = (
                    f"{cls.__qualname__} overrides {sync_name}() but not {async_name}(), so its "
                    f"{async_name}() runs {sync_name}() inside the running event loop: override "
                    f"{async_name}() in {cls.__qualname__} too."
                )
                _noted(exc, [note])
            raise

    routed.__name__ = async_name
    routed.__qualname__ = f"{cls.__qualname__}.{async_name}"
    routed.__doc__ = f"Runs {sync_owner.__qualname__}.{sync_name}() (async routing rule)."
    routed._sekai_routed = True  # type: ignore[attr-defined]
    return routed


def install_async_routes(
    cls: type, guard: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None
) -> None:
    """Give ``cls`` async methods that run its most-derived sync overrides (see core.md §1),
    through ``guard`` when given (a VecEnv's: one async call at a time).

    For each pair, if the class defining the sync method is more derived than the one defining
    the async method, the async method becomes a coroutine calling that class's own sync
    function (not ``self.step``), so a subclass that overrides both and chains to ``super()``
    does not run the step logic twice. The other way round, an async override below a
    wrapper's sync method (one that is, or overrides, a method marked :func:`passes_inward`) is
    a ``TypeError``.
    """
    mro = cls.__mro__
    for sync_name, async_name in ROUTED_PAIRS:
        sync_owner = _defining_class(cls, sync_name)
        async_owner = _defining_class(cls, async_name)
        if sync_owner is None or async_owner is None:
            continue
        if mro.index(sync_owner) < mro.index(async_owner):
            routed = _make_router(cls, sync_owner, sync_name, async_name, guard)
            setattr(cls, async_name, routed)
        elif mro.index(async_owner) < mro.index(sync_owner):
            _refuse_skipped_override(cls, async_owner, sync_owner, sync_name, async_name)


def passes_inward(fn: F) -> F:
    """Mark a wrapper base's sync method that only passes the call inward (``Wrapper.step``).

    A subclass that overrides the async method but inherits such a sync one, or a concrete
    wrapper's override of it, is refused: its sync callers would skip its logic. An env's
    inherited sync method is its own logic (an async-native subclass of a sync env may add
    awaits), and an abstract one is ABC's to refuse.
    """
    fn._sekai_passes_inward = True  # type: ignore[attr-defined]
    return fn


def _refuse_skipped_override(
    cls: type, async_owner: type, sync_owner: type, sync_name: str, async_name: str
) -> None:
    # A wrapper's sync method (one overriding, at any depth, a method marked passes_inward):
    # a concrete wrapper's step() lacks the logic of an async_step() added below it, too.
    if not any(
        getattr(base.__dict__.get(sync_name), "_sekai_passes_inward", False)
        for base in sync_owner.__mro__
    ):
        return
    subject = cls.__qualname__
    if async_owner is not cls:  # a mixin's async method, above the sync one in the MRO
        subject += f" (through {async_owner.__qualname__})"
    raise TypeError(
        f"{subject} overrides {async_name}() but not {sync_name}(), so {sync_name}() would be "
        f"{sync_owner.__qualname__}.{sync_name}(), which does not run that logic: sync "
        "callers (a plain loop, SyncVecEnv, ProcVecEnv) would get other results than async ones."
        f" Override {sync_name}() too, sharing the logic with {async_name}() "
        f"through a helper, or running the coroutine with asyncio.run(self.{async_name}(...))."
    )


def shut_down_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close ``loop`` as ``asyncio.run`` closes its own: the tasks sub-envs left on it (a feed's
    reader) are cancelled and run their ``finally`` blocks, async generators are finalised."""
    import asyncio  # here: `import sekai` does not import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread: the private one can run here
        _finish(loop)
        return
    # close() from a coroutine (a web handler, a notebook cell): asyncio runs one loop per
    # thread, so the private loop finishes in a helper thread. It closes the loop itself, so a
    # Ctrl-C that cuts the join short leaves it to end on its own.
    import threading

    failure: list[BaseException] = []

    def finish() -> None:
        try:
            _finish(loop)
        except BaseException as exc:  # the caller's to see
            failure.append(exc)

    helper = threading.Thread(target=finish, name="sekai-loop-shutdown", daemon=True)
    try:
        helper.start()
    except BaseException:
        loop.close()
        raise
    helper.join()
    if failure:
        raise failure[0]


def _finish(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks of the idle ``loop``, run it until they end, finalise its generators,
    close it."""
    import asyncio

    try:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
