"""A process forked from the owner of a ProcVecEnv (os.fork: a checkpoint writer, a server's
worker) leaves its workers to the owner: its exit does not stop them, and its copy of the
ProcVecEnv refuses every call instead of driving the owner's sub-envs. Each case runs in its
own process (``run_script``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="os.fork and /proc (the scripts' process checks): Linux only"
)

RunScript = Callable[..., Any]


@pytest.mark.parametrize("context", ["fork", "forkserver"])
@pytest.mark.parametrize("exit", ["sys.exit(0)", "pass"], ids=["sys.exit", "end-of-script"])
def test_a_forked_child_that_exits_normally_leaves_the_workers_running(
    run_script: RunScript, context: str, exit: str
) -> None:
    # A normal exit runs multiprocessing's exit hook, which terminates the daemonic children
    # it knows of and joins them: the parent's workers must not be among them.
    done = run_script(f"""
        vec = ProcVecEnv(probes(2), context="{context}")
        vec.reset(seed=0)
        workers = vec.call("pid")
        pid = os.fork()
        if pid == 0:  # e.g. a checkpoint writer
            report(child="done")
            {exit}
        else:
            _, status = os.waitpid(pid, 0)
            result = vec.step([1, 1])
            report(status=status, rewards=result.rewards.tolist(),
                   workers=vec.call("pid") == workers)
            vec.close()
            report(left=wait_gone(workers), segments=segments())  # the fork server stays
    """)
    assert done.code == 0, done.err
    assert done.err == ""  # nor "AssertionError: can only join a child process" from the child
    assert done.lines == [
        {"child": "done"},
        {"status": 0, "rewards": [1.0, 1.0], "workers": True},
        {"left": [], "segments": []},
    ]


def test_a_forked_child_cannot_use_the_parents_proc_vec_env(run_script: RunScript) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(2), context="fork", num_workers=1)
        vec.reset(seed=0)
        vec.step([1, 1])
        owner = os.getpid()
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)  # a child that hangs ends (and the test fails) instead
            calls = {
                "step": lambda: vec.step([1, 1]),
                "reset": lambda: vec.reset(seed=0),
                "get_attr": lambda: vec.get_attr("steps"),
                "set_attr": lambda: vec.set_attr("steps", 0),
                "call": lambda: vec.call("pid"),
                "send": lambda: vec.send([1, 1]),
                "recv": lambda: vec.recv(),
            }
            for name, call in calls.items():
                try:
                    call()
                    report(call=name, error=None)
                except Exception as e:
                    report(call=name, error=type(e).__name__, message=str(e))
            vec.close()  # nothing to release here: the workers are the parent's
            report(closed=vec.closed)
            sys.exit(0)
        os.waitpid(pid, 0)
        # The parent's sub-envs were left as they were: one step each so far.
        report(steps=vec.get_attr("steps"), next=vec.step([1, 1]).observations[:, 1].tolist(),
               owner=owner)
        vec.close()
        report(left=wait_gone(descendants(os.getpid())), segments=segments())
    """)
    assert done.code == 0, done.err
    *refused, closed, parent, end = done.lines
    owner = parent.pop("owner")
    assert [line["call"] for line in refused] == [
        "step",
        "reset",
        "get_attr",
        "set_attr",
        "call",
        "send",
        "recv",
    ]
    for line in refused:
        assert line["error"] == "RuntimeError", line
        assert line["message"].startswith(
            f"This ProcVecEnv belongs to process {owner}, which started its worker processes; "
            "this process ("
        ), line
        assert line["message"].endswith(
            f") was forked from it (os.fork) and cannot use them: they keep serving the "
            f"ProcVecEnv of process {owner}. Build a new ProcVecEnv in this process instead, "
            'with context="spawn" (or "fork"): a forkserver (the default start method) started '
            f"by process {owner} cannot start workers for this one."
        ), line
    assert closed == {"closed": True}
    assert parent == {"steps": [1, 1], "next": [2.0, 2.0]}
    assert end == {"left": [], "segments": []}


def test_a_call_running_in_another_thread_at_the_fork_does_not_block_the_child(
    run_script: RunScript,
) -> None:
    # The child inherits the call lock held by a thread it does not have: its refusal must
    # not wait for that lock.
    done = run_script("""
        vec = ProcVecEnv(probes(2), context="fork")
        vec.reset(seed=0)
        stepping = threading.Thread(target=vec.step, args=([0, BLOCK],))
        stepping.start()
        while not marked("blocked-1-0"):
            time.sleep(0.01)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)  # a child that hangs ends (and the test fails) instead
            try:
                vec.step([0, 0])
            except RuntimeError as e:
                report(child=str(e).split(";")[0].startswith("This ProcVecEnv belongs to"))
            sys.exit(0)
        os.waitpid(pid, 0)
        mark("release")
        stepping.join()
        report(steps=vec.get_attr("steps"))
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [{"child": True}, {"steps": [1, 1]}]
