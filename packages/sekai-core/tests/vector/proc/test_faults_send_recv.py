"""Faults between ProcVecEnv.send() and recv(), each in a script of its own (see conftest.py):
a worker dying, a sub-env raising in a partial batch, Ctrl-C while recv() waits."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import pytest

DIED = "worker process exited unexpectedly"
ENDED = {
    "SIGKILL": "The worker process was killed by SIGKILL.",
    "EXIT": "The worker process exited with code 3.",
}
RunScript = Callable[..., Any]


@pytest.mark.parametrize(
    "sent", ["[0, {fault}, 0], [0, 1, 2]", "[{fault}], [1]"], ids=["all", "alone"]
)
@pytest.mark.parametrize("fault", ["SIGKILL", "EXIT"])
def test_a_worker_dying_between_send_and_recv_is_raised_by_recv_and_every_later_call(
    run_script: RunScript, fault: str, sent: str
) -> None:
    done = run_script(f"""
        vec = ProcVecEnv(probes(3), context="fork", num_workers=3)
        vec.reset(seed=0)
        pids = vec.call("pid")
        vec.send({sent.format(fault=fault)})
        try:
            while True:  # the live workers' results may come first
                vec.recv(batch_size=1)
        except sekai.VecEnvWorkerError as e:
            report(message=str(e), rank=e.rank, exc_type=e.exc_type, cls=type(e).__name__,
                   notes=getattr(e, "__notes__", []))
        for call in (lambda: vec.recv(batch_size=1), lambda: vec.send([0], [0]),
                     lambda: vec.step([0, 0, 0]), lambda: vec.reset()):
            try:
                call()
            except sekai.VecEnvWorkerError as e:
                report(message=str(e), rank=e.rank, exc_type=e.exc_type, cls=type(e).__name__,
                   notes=getattr(e, "__notes__", []))
        vec.close()
        report(left=wait_gone(pids), segments=segments())
    """)
    assert done.code == 0, done.err
    *errors, end = done.lines
    expected = {
        "message": f"Sub-env 1 raised EOFError: {DIED}",
        "rank": 1,
        "exc_type": "EOFError",
        "cls": "VecEnvWorkerError",
        "notes": [ENDED[fault]],
    }
    assert errors == [expected] * 5
    assert end == {"left": [], "segments": []}


def test_a_sub_env_raising_in_a_partial_batch_is_raised_and_the_others_come_next(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(4), context="fork", num_workers=1)
        vec.reset(seed=0)
        vec.send([1, RAISE, 1], [3, 1, 0])
        try:
            vec.recv(batch_size=3)
        except ValueError as e:
            report(cls=type(e).__name__, rank=e.rank, message=e.message)
        rest = vec.recv(batch_size=2)
        report(env_ids=rest.env_ids.tolist(), steps=[info["steps"] for info in rest.infos])
        vec.send([1, 1], [1, 2])  # the failed sub-env is no longer in flight
        report(env_ids=sorted(vec.recv(batch_size=2).env_ids.tolist()))
        report(steps=vec.get_attr("steps"))
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "cls": "VecEnvWorkerError[ValueError]",
            "rank": 1,
            "message": "sub-env 1 refuses action 2",
        },
        {"env_ids": [3, 0], "steps": [1, 1]},
        {"env_ids": [1, 2]},
        {"steps": [1, 1, 1, 1]},
    ]


def test_two_sub_envs_raising_in_one_reply_are_each_raised_by_a_recv(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(4), context="fork", num_workers=1)  # one reply for all
        vec.reset(seed=0)
        vec.send([RAISE, 1, RAISE, 1])
        for _ in range(2):
            try:
                vec.recv(batch_size=2)
            except ValueError as e:
                report(rank=e.rank)
        report(env_ids=sorted(vec.recv(batch_size=2).env_ids.tolist()))
        vec.send([1, 1], [0, 2])  # both failed sub-envs were reported: they can be sent again
        report(env_ids=sorted(vec.recv(batch_size=2).env_ids.tolist()))
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [{"rank": 0}, {"rank": 2}, {"env_ids": [1, 3]}, {"env_ids": [0, 2]}]


def test_a_failure_recv_has_not_reported_yet_keeps_its_sub_env_from_being_stepped_again(
    run_script: RunScript,
) -> None:
    """Its error would otherwise be raised later, against a new and valid step."""
    done = run_script("""
        vec = ProcVecEnv(probes(3), context="fork", num_workers=1)  # one reply for all
        vec.reset(seed=0)
        vec.send([RAISE, RAISE], [0, 1])
        try:
            vec.recv(batch_size=1)
        except ValueError as e:
            report(rank=e.rank)  # sub-env 1's failure waits: nothing is in flight
        for name, call in (("send", lambda: vec.send([1], [1])),
                           ("step", lambda: vec.step([1, 1, 1])),
                           ("get_attr", lambda: vec.get_attr("steps"))):
            try:
                call()
            except Exception as e:
                report(call=name, cls=type(e).__name__, message=str(e))
        vec.send([1, 1], [0, 2])  # those reported or stepped fine can go again
        try:
            vec.recv(batch_size=2)  # sub-env 1's failure first, before any new result
        except ValueError as e:
            report(rank=e.rank)
        vec.send([1], [1])
        report(env_ids=sorted(vec.recv(batch_size=3).env_ids.tolist()))
        report(steps=vec.get_attr("steps"))
        vec.close()
    """)
    assert done.code == 0, done.err
    unreported = "have failures in steps sent with send() that recv() has not reported yet"
    assert done.lines == [
        {"rank": 0},
        {
            "call": "send",
            "cls": "ValueError",
            "message": "sub-envs [1] have a failure recv() has not reported yet: call recv() "
            "to receive it first.",
        },
        {
            "call": "step",
            "cls": "RuntimeError",
            "message": f"ProcVecEnv.step() cannot run while sub-envs [1] {unreported}: call "
            "recv() until it raised them all, or reset() (which drops them).",
        },
        {
            "call": "get_attr",
            "cls": "RuntimeError",
            "message": f"ProcVecEnv.get_attr() cannot run while sub-envs [1] {unreported}: "
            "call recv() until it raised them all, or reset() (which drops them).",
        },
        {"rank": 1},
        {"env_ids": [0, 1, 2]},
        {"steps": [1, 1, 1]},
    ]


def test_reset_drops_the_failures_recv_has_not_reported_yet(run_script: RunScript) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(2), context="fork", num_workers=1)
        vec.reset(seed=0)
        vec.send([RAISE, RAISE])
        try:
            vec.recv(batch_size=1)
        except ValueError as e:
            report(rank=e.rank)
        vec.reset(seed=0)
        report(steps=[info["steps"] for info in vec.step([1, 1]).infos])
        vec.send([1, 1])
        report(env_ids=sorted(vec.recv().env_ids.tolist()))
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [{"rank": 0}, {"steps": [1, 1]}, {"env_ids": [0, 1]}]


def test_an_action_the_worker_cannot_unpickle_is_raised_for_the_sub_env_it_was_for(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv([lambda i=i: Loose(i) for i in range(2)], context="fork", num_workers=1)
        vec.reset(seed=0)
        vec.send([Poison()], env_ids=[1])  # to the worker of sub-envs 0 and 1
        try:
            vec.recv(1)
        except RuntimeError as e:
            report(rank=e.rank, message=str(e).splitlines()[0])
        vec.send([1], env_ids=[1])  # it is no longer in flight: it can be sent again
        report(env_ids=vec.recv(1).env_ids.tolist())
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "rank": 1,
            "message": "Sub-env 1 raised RuntimeError: the command step() cannot be unpickled "
            "in the worker: cannot be rebuilt here",
        },
        {"env_ids": [1]},
    ]


def test_a_sub_env_whose_error_was_raised_can_be_sent_while_the_others_of_its_reply_wait(
    run_script: RunScript,
) -> None:
    """The worker cannot unpickle its command: the reply is lost whole, with an error for
    each of its sub-envs."""
    done = run_script("""
        vec = ProcVecEnv([lambda i=i: Loose(i) for i in range(2)], context="fork", num_workers=1)
        vec.reset(seed=0)
        vec.send([1, Poison()])  # one command for sub-envs 0 and 1
        for call in (lambda: vec.recv(1), lambda: vec.send([1], env_ids=[0]),
                     lambda: vec.send([1], env_ids=[1]), lambda: vec.recv(1)):
            try:
                call()
            except Exception as e:
                report(cls=type(e).__name__, message=str(e).splitlines()[0])
        report(env_ids=vec.recv(1).env_ids.tolist())
        vec.close()
    """)
    assert done.code == 0, done.err
    unpickled = "RuntimeError: the command step() cannot be unpickled in the worker"
    assert done.lines == [
        {
            "cls": "VecEnvWorkerError[RuntimeError]",
            "message": f"Sub-env 0 raised {unpickled}: cannot be rebuilt here",
        },
        {
            "cls": "ValueError",
            "message": "sub-envs [1] have a failure recv() has not reported yet: call recv() "
            "to receive it first.",
        },
        {
            "cls": "VecEnvWorkerError[RuntimeError]",
            "message": f"Sub-env 1 raised {unpickled}: cannot be rebuilt here",
        },
        {"env_ids": [0]},
    ]


def test_a_dead_worker_is_raised_before_the_sends_still_in_flight_are_mentioned(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(2), context="fork", num_workers=2)
        vec.reset(seed=0)
        vec.send([0, SIGKILL])
        try:
            vec.recv(batch_size=2)  # sub-env 0's result may have arrived or not: it stays
        except sekai.VecEnvWorkerError as e:
            report(recv=str(e), notes=getattr(e, "__notes__", []))
        for name, call in (("get_attr", lambda: vec.get_attr("steps")),
                           ("set_attr", lambda: vec.set_attr("steps", 0)),
                           ("call", lambda: vec.call("pid")), ("step", lambda: vec.step([0, 0]))):
            try:
                call()
            except Exception as e:
                report(call=name, cls=type(e).__name__, message=str(e),
                       notes=getattr(e, "__notes__", []))
        vec.close()
    """)
    assert done.code == 0, done.err
    death = f"Sub-env 1 raised EOFError: {DIED}"
    notes = [ENDED["SIGKILL"]]
    assert done.lines == [
        {"recv": death, "notes": notes},
        *(
            {"call": name, "cls": "VecEnvWorkerError", "message": death, "notes": notes}
            for name in ("get_attr", "set_attr", "call", "step")
        ),
    ]


_INTERRUPTED_RECV = """
    vec = ProcVecEnv(probes(2), context="{context}", num_workers=2)
    vec.reset(seed=0)
    pids = vec.call("pid")
    vec.send([0, BLOCK])
    first = vec.recv(batch_size=1)
    try:
        mark("receiving")  # inside the try: a Ctrl-C from here on is the second recv()'s
        vec.recv(batch_size=1)
    except KeyboardInterrupt:
        report(interrupted=True, first=first.env_ids.tolist())
    mark("release")
    late = vec.recv(batch_size=1)  # the interrupted recv() lost nothing
    report(env_ids=late.env_ids.tolist(), action=late.infos[0]["action"])
    vec.send([1, 1])
    result = vec.recv()
    report(steps=sorted(info["steps"] for info in result.infos),
           same_workers=vec.call("pid") == pids)
    vec.close()
"""


@pytest.mark.parametrize(
    ("context", "group"), [("fork", False), ("forkserver", True)], ids=["parent", "group"]
)
def test_ctrl_c_while_recv_waits_leaves_the_results_to_the_next_recv(
    start_script: Callable[..., Any], context: str, group: bool
) -> None:
    script = start_script(_INTERRUPTED_RECV.format(context=context), new_session=group)
    script.wait_mark("blocked-1-0")
    script.wait_mark("receiving")  # the first recv() is done: the signal hits the second
    (os.killpg if group else os.kill)(script.process.pid, signal.SIGINT)
    done = script.finish()
    assert done.code == 0, done.err
    assert done.lines == [
        {"interrupted": True, "first": [0]},
        {"env_ids": [1], "action": 5},
        {"steps": [2, 2], "same_workers": True},
    ]
