"""ProcVecEnv.close() from another thread while a call runs (a watchdog, a GUI's stop button):
it waits for the call, up to close_timeout, then kills the workers under it, and the call
raises VecEnvClosed, never an internal error of the pipes or the shared memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

RunScript = Callable[..., Any]

_STEPPER = """
    vec = ProcVecEnv(probes(2), context="fork", num_workers=2, shared_memory={shared},
                     close_timeout={close_timeout})
    vec.reset(seed=0)
    pids = vec.call("pid")
    got = {{}}

    def stepper():
        try:
            got["steps"] = [info["steps"] for info in {call}]
        except Exception as e:
            got["error"] = type(e).__name__
            got["cause"] = type(e.__cause__).__name__

    thread = threading.Thread(target=stepper)
    thread.start()
    while not (marked("blocked-0-0") or marked("sleeping-0")):
        time.sleep(0.01)
"""
_CALLS = {
    "step": "vec.step([{action}, 0]).infos",
    "call": '[r.info for r in vec.call("step", {action})]',  # by name: no timeout of its own
    # an async call runs the sync one under the call lock: close() waits for it or cuts it too
    "async_step": '__import__("asyncio").run(vec.async_step([{action}, 0])).infos',
}


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "pickled"])
@pytest.mark.parametrize("call", list(_CALLS))
def test_close_from_another_thread_waits_for_the_call_in_progress(
    run_script: RunScript, call: str, shared: bool
) -> None:
    stepper = _STEPPER.format(
        shared=shared, close_timeout=30.0, call=_CALLS[call].format(action="BLOCK")
    )
    done = run_script(
        stepper
        + """
    closer = threading.Thread(target=vec.close)
    closer.start()
    while not vec.closed:  # close() has begun
        time.sleep(0.01)
    closer.join(0.2)
    waited = closer.is_alive()  # it cannot end before the call it waits for
    mark("release")
    thread.join()
    closer.join()
    report(got=got, waited=waited, left=wait_gone(pids), segments=segments(),
           closes=[marked("closed-0"), marked("closed-1")])
"""
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "got": {"steps": [1, 1]},
            "waited": True,
            "left": [],
            "segments": [],
            "closes": [True, True],  # the call ended: the sub-envs closed as usual
        }
    ]
    assert done.err == ""


@pytest.mark.parametrize("call", list(_CALLS))
def test_a_call_still_running_after_close_timeout_raises_vec_env_closed(
    run_script: RunScript, call: str
) -> None:
    stepper = _STEPPER.format(
        shared=None, close_timeout=0.5, call=_CALLS[call].format(action="SLEEP")
    )
    done = run_script(
        stepper
        + """
    start = time.monotonic()
    vec.close()  # the sub-env sleeps forever: its worker is killed after close_timeout
    elapsed = time.monotonic() - start
    thread.join()
    report(got=got, elapsed=elapsed, closed=vec.closed, left=wait_gone(pids),
           segments=segments())
    try:
        vec.step([0, 0])
    except sekai.VecEnvClosed:
        report(after="VecEnvClosed")
"""
    )
    assert done.code == 0, done.err
    result, after = done.lines
    assert result.pop("got") == {"error": "VecEnvClosed", "cause": "VecEnvWorkerError"}
    assert 0.5 <= result.pop("elapsed") < 5.0
    assert result == {"closed": True, "left": [], "segments": []}
    assert after == {"after": "VecEnvClosed"}
    assert done.err == ""


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "pickled"])
def test_ctrl_c_while_close_waits_for_a_call_still_releases_everything(
    run_script: RunScript, shared: bool
) -> None:
    stepper = _STEPPER.format(
        shared=shared, close_timeout=30.0, call=_CALLS["step"].format(action="SLEEP")
    )
    done = run_script(
        """
    class Watched(type(threading.RLock())):  # the call lock: marks when close() waits on it
        def acquire(self, blocking=True, timeout=-1):
            if timeout > 0:
                mark("waiting")
            return super().acquire(blocking, timeout)
"""
        + stepper.replace("vec.reset(seed=0)", "vec.reset(seed=0)\n    vec._calling = Watched()")
        + """
    def interrupt():
        while not marked("waiting"):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt).start()
    try:
        vec.close()  # the sub-env sleeps forever: Ctrl-C ends the wait
    except KeyboardInterrupt:
        report(close="KeyboardInterrupt")
    thread.join(20)
    report(got=got, ended=not thread.is_alive(), closed=vec.closed, pool=vec._pool is None,
           left=wait_gone(pids), segments=segments())
"""
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {"close": "KeyboardInterrupt"},
        {
            "got": {"error": "VecEnvClosed", "cause": "VecEnvWorkerError"},
            "ended": True,
            "closed": True,
            "pool": True,
            "left": [],
            "segments": [],
        },
    ]
    assert done.err == ""


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "pickled"])
@pytest.mark.parametrize("call", list(_CALLS))
def test_close_from_a_signal_handler_inside_the_call_raises_vec_env_closed(
    run_script: RunScript, call: str, shared: bool
) -> None:
    # The handler runs in the thread inside the call: close() kills the workers at once and the
    # call releases the pipes and the shared memory only as it unwinds, not under itself.
    done = run_script(
        f"""
    vec = ProcVecEnv(probes(2), context="fork", num_workers=2, shared_memory={shared},
                     close_timeout=30.0)
    vec.reset(seed=0)
    pids = vec.call("pid")
    signal.signal(signal.SIGUSR1, lambda *_: vec.close())

    def guard():
        while not marked("sleeping-0"):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR1)

    threading.Thread(target=guard).start()
    try:
        {_CALLS[call].format(action="SLEEP")}
    except Exception as e:
        report(error=type(e).__name__, cause=type(e.__cause__).__name__)
    report(closed=vec.closed, pool=vec._pool is None, left=wait_gone(pids),
           segments=segments())
"""
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {"error": "VecEnvClosed", "cause": "VecEnvWorkerError"},
        {"closed": True, "pool": True, "left": [], "segments": []},
    ]
    assert done.err == ""


@pytest.mark.parametrize("inner", ["vec.step([0, 0])", "vec.reset(seed=1)", "vec.set_attr('x', 1)"])
def test_a_call_from_a_signal_handler_inside_a_call_is_refused_not_mixed_into_it(
    run_script: RunScript, inner: str
) -> None:
    # Only close() may cut in: another call would take the replies the outer call waits for
    # (its result was the inner call's, or the reset's observations with the step's rewards).
    done = run_script(
        f"""
    vec = ProcVecEnv(probes(2), context="fork", num_workers=2)
    vec.reset(seed=0)
    refused = []

    def handler(*_):
        try:
            {inner}
        except RuntimeError as e:
            refused.append(str(e))
        mark("release")

    signal.signal(signal.SIGUSR1, handler)

    def guard():
        while not marked("blocked-0-0"):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR1)

    threading.Thread(target=guard).start()
    infos = vec.step([BLOCK, 0]).infos
    report(refused=refused, actions=[i["action"] for i in infos], steps=vec.get_attr("steps"))
    vec.close()
"""
    )
    assert done.code == 0, done.err
    name = inner.split("(")[0].removeprefix("vec.")
    message = (
        f"ProcVecEnv.{name}() was called while another call of it runs in this thread (from a "
        "signal handler or a callback inside that call): its workers answer one call at a time, "
        "and only close() may cut in."
    )
    assert done.lines == [{"refused": [message], "actions": [5, 0], "steps": [1, 1]}]
