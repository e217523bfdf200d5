"""ProcVecEnv fault injection: each case runs in its own process with a hard timeout.

Dead and hung workers, env code raising or exiting, unpicklable commands and replies, Ctrl-C,
closing with stubborn workers, a parent killed with SIGKILL, exit without close(), a script
without the __main__ guard, and repeated create/close cycles (no leaked descriptors,
processes or shared-memory blocks). Most scripts use fork (start method irrelevant to the
case); a few use the default forkserver.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import types
from collections.abc import Callable
from typing import Any

import pytest

DIED = "worker process exited unexpectedly"  # as core.md gives it: the status is in a note
# How each fault of ``faulty`` ends its worker, as the error's note says it.
ENDED = {
    "SIGKILL": "The worker process was killed by SIGKILL.",
    "EXIT": "The worker process exited with code 3.",
}
RunScript = Callable[..., Any]


@pytest.mark.parametrize("fault", ["SIGKILL", "EXIT"])
def test_a_worker_dying_mid_step_names_its_sub_env_and_every_later_call_raises(
    run_script: RunScript, fault: str
) -> None:
    done = run_script(f"""
        vec = ProcVecEnv(probes(3), context="fork", num_workers=3)
        vec.reset(seed=0)
        pids = vec.call("pid")
        for call in (lambda: vec.step([0, {fault}, 0]), lambda: vec.step([0, 0, 0]),
                     lambda: vec.get_attr("steps"), lambda: vec.reset()):
            try:
                call()
            except sekai.VecEnvWorkerError as e:
                report(message=str(e), rank=e.rank, exc_type=e.exc_type,
                       traceback=e.remote_traceback, cls=type(e).__name__,
                       notes=getattr(e, "__notes__", []))
        vec.close()
        report(closed=vec.closed, left=wait_gone(pids), segments=segments(),
               closes=[marked(f"closed-{{i}}") for i in range(3)])
    """)
    assert done.code == 0, done.err
    *errors, end = done.lines
    assert len(errors) == 4
    for error in errors:
        assert error == {
            "message": f"Sub-env 1 raised EOFError: {DIED}",
            "rank": 1,
            "exc_type": "EOFError",
            "traceback": "",
            "cls": "VecEnvWorkerError",
            "notes": [ENDED[fault]],
        }
    assert end == {"closed": True, "left": [], "segments": [], "closes": [True, False, True]}
    assert done.err == ""


@pytest.mark.parametrize("killer", ["SIGKILL", "SIGBUS"])  # the OOM killer's, a full /dev/shm's
def test_a_worker_killed_while_idle_is_reported_by_the_next_call_with_its_signal(
    run_script: RunScript, killer: str
) -> None:
    done = run_script(f"""
        vec = ProcVecEnv(probes(2), context="fork")
        vec.reset(seed=0)
        pids = vec.call("pid")
        os.kill(pids[1], signal.{killer})
        try:
            vec.step([0, 0])
        except sekai.VecEnvWorkerError as e:
            report(message=str(e), notes=getattr(e, "__notes__", []))
        vec.close()
        report(left=wait_gone(pids), closes=[marked("closed-0"), marked("closed-1")])
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "message": f"Sub-env 1 raised EOFError: {DIED}",
            "notes": [f"The worker process was killed by {killer}."],
        },
        {"left": [], "closes": [True, False]},
    ]


def test_a_dead_worker_of_several_sub_envs_is_named_with_all_of_them(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(5), context="fork", num_workers=2)
        vec.reset(seed=0)
        pids = vec.call("pid")
        for call in (lambda: vec.step([0, 0, 0, 0, EXIT]), vec.reset, lambda: vec.step([0] * 5)):
            try:
                call()
            except sekai.VecEnvWorkerError as e:
                report(message=str(e), rank=e.rank, ranks=list(e.ranks), worker=e.worker,
                       notes=getattr(e, "__notes__", []))
        vec.close()
        report(left=wait_gone(pids), closes=[marked(f"closed-{i}") for i in range(5)])
    """)
    assert done.code == 0, done.err
    error = {
        "message": f"Worker 1 (sub-envs 3-4) raised EOFError: {DIED}",
        "rank": 3,
        "ranks": [3, 4],
        "worker": 1,
        "notes": [ENDED["EXIT"]],
    }
    assert done.lines == [error] * 3 + [{"left": [], "closes": [True] * 3 + [False] * 2}]


def test_a_worker_dying_in_a_call_of_one_sub_env_is_named_and_every_later_call_raises(
    run_script: RunScript,
) -> None:
    # What the SB3 bridge's indices use: only worker 1 is asked, and it dies answering.
    done = run_script("""
        vec = ProcVecEnv(probes(5), context="fork", num_workers=2)
        vec.reset(seed=0)
        pids = vec.call("pid")
        for call in (lambda: vec._call_at([4], "step", (EXIT,), {}),
                     lambda: vec._get_attr_at([0], "steps"), lambda: vec.step([0] * 5)):
            try:
                call()
            except sekai.VecEnvWorkerError as e:
                report(message=str(e), rank=e.rank, ranks=list(e.ranks), worker=e.worker,
                       notes=getattr(e, "__notes__", []))
        vec.close()
        report(left=wait_gone(pids), closes=[marked(f"closed-{i}") for i in range(5)])
    """)
    assert done.code == 0, done.err
    error = {
        "message": f"Worker 1 (sub-envs 3-4) raised EOFError: {DIED}",
        "rank": 3,
        "ranks": [3, 4],
        "worker": 1,
        "notes": [ENDED["EXIT"]],
    }
    assert done.lines == [error] * 3 + [{"left": [], "closes": [True] * 3 + [False] * 2}]


@pytest.mark.parametrize("num_workers", [1, 3])
def test_a_sub_env_raising_in_step_is_raised_after_the_others_stepped(
    run_script: RunScript, num_workers: int
) -> None:
    done = run_script(f"""
        vec = ProcVecEnv(probes(3), context="fork", num_workers={num_workers})
        vec.reset(seed=0)
        try:
            vec.step([1, RAISE, RAISE])
        except ValueError as e:
            report(cls=type(e).__name__, rank=e.rank, exc_type=e.exc_type, worker=e.worker,
                   traceback="refuses action" in e.remote_traceback, message=e.message)
        report(steps=vec.get_attr("steps"), rewards=vec.step([1, 1, 1]).rewards.tolist())
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "cls": "VecEnvWorkerError[ValueError]",
            "rank": 1,
            "exc_type": "ValueError",
            "worker": 0 if num_workers == 1 else 1,
            "traceback": True,
            "message": "sub-env 1 refuses action 2",
        },
        {"steps": [1, 0, 0], "rewards": [1.0, 1.0, 1.0]},
    ]


def test_a_sub_env_raising_in_reset_requires_a_new_reset(run_script: RunScript) -> None:
    done = run_script("""
        vec = ProcVecEnv(probes(2), context="fork")
        try:
            vec.reset(options=[None, {"raise": True}])
        except KeyError as e:
            report(cls=type(e).__name__, rank=e.rank)
        try:
            vec.step([0, 0])
        except sekai.ResetRequired as e:
            report(cls=type(e).__name__)
        vec.reset()
        report(steps=[info["steps"] for info in vec.step([1, 1]).infos])
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {"cls": "VecEnvWorkerError[KeyError]", "rank": 1},
        {"cls": "ResetRequired"},
        {"steps": [1, 1]},
    ]


def test_a_sub_env_raising_in_close_is_raised_after_everything_is_released(
    run_script: RunScript,
) -> None:
    done = run_script("""
        fns = [lambda: Probe(0), lambda: Probe(1, close="raise"), lambda: Probe(2, close="raise")]
        vec = ProcVecEnv(fns, context="fork", num_workers=2)
        vec.reset(seed=0)
        pids = vec.call("pid")
        try:
            vec.close()
        except OSError as e:
            report(cls=type(e).__name__, rank=e.rank)
        vec.close()  # a no-op
        report(closed=vec.closed, left=wait_gone(pids), segments=segments(),
               closes=[marked(f"closed-{i}") for i in range(3)])
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {"cls": "VecEnvWorkerError[OSError]", "rank": 1},
        {"closed": True, "left": [], "segments": [], "closes": [True, True, True]},
    ]


def test_an_unpicklable_action_fails_before_anything_is_sent(run_script: RunScript) -> None:
    done = run_script("""
        vec = ProcVecEnv([lambda i=i: Loose(i) for i in range(3)], context="fork", num_workers=2)
        vec.reset(seed=0)
        try:
            vec.step([1, 1, threading.Lock()])
        except TypeError as e:
            report(message=str(e))
        report(steps=[info["steps"] for info in vec.step([1, 1, 1]).infos])
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "message": "ProcVecEnv cannot send the action for sub-env 2 to its worker process: "
            "it cannot be pickled (TypeError: cannot pickle '_thread.lock' object)."
        },
        {"steps": [1, 1, 1]},
    ]


def test_messages_that_cannot_be_unpickled_fail_the_call_not_the_workers(
    run_script: RunScript,
) -> None:
    done = run_script("""
        vec = ProcVecEnv([lambda i=i: Loose(i) for i in range(3)], context="fork", num_workers=2)
        vec.reset(seed=0)
        for actions in ([1, 1, Poison()], [1, 1, POISON]):  # in the worker, in the parent
            try:
                vec.step(actions)
            except RuntimeError as e:
                report(message=str(e).splitlines()[0])
        report(steps=[info["steps"] for info in vec.step([1, 1, 1]).infos])
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "message": "Sub-env 2 raised RuntimeError: the command step() cannot be unpickled "
            "in the worker: cannot be rebuilt here"
        },
        {
            "message": "Sub-env 2 raised RuntimeError: the reply cannot be unpickled in the "
            "parent process: cannot be rebuilt here"
        },
        {"steps": [3, 3, 2]},  # the first call never reached sub-env 2, the second did
    ]


def test_a_factory_that_cannot_be_unpickled_in_the_worker_is_named_by_its_sub_env(
    run_script: RunScript,
) -> None:
    done = run_script("""
        class PoisonedFactory(Poison):  # as a factory whose module the worker lacks
            def __call__(self):
                return Probe(1)

        try:
            ProcVecEnv([lambda: Probe(0), PoisonedFactory()], context="fork", num_workers=1)
        except RuntimeError as e:
            report(rank=e.rank, message=str(e).splitlines()[0])
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "rank": 1,
            "message": "Sub-env 1 raised RuntimeError: the env factory cannot be unpickled: "
            "cannot be rebuilt here",
        }
    ]


@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
def test_an_unpicklable_reply_names_the_sub_env_and_the_others_stay_in_step(
    run_script: RunScript, shared_memory: bool | None
) -> None:
    done = run_script(f"""
        vec = ProcVecEnv(probes(3), context="fork", num_workers=1, shared_memory={shared_memory})
        report(shared=vec.shared_memory)
        vec.reset(seed=0)
        try:
            vec.step([1, 1, UNPICKLABLE])
        except TypeError as e:
            report(cls=type(e).__name__, rank=e.rank, message=e.message)
        report(steps=[info["steps"] for info in vec.step([1, 1, 1]).infos])
        vec.close()
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {"shared": shared_memory is None},
        {
            "cls": "VecEnvWorkerError[TypeError]",
            "rank": 2,
            "message": "the result of step() cannot be sent to the parent: "
            "cannot pickle '_thread.lock' object",
        },
        {"steps": [2, 2, 2]},
    ]


_INTERRUPTED = """
    vec = ProcVecEnv(probes(2), context="{context}")
    vec.reset(seed=0)
    pids = vec.call("pid")
    try:
        vec.step([BLOCK, BLOCK])  # no reply is on its way when Ctrl-C lands (see the test)
    except KeyboardInterrupt:
        report(interrupted=True)
    mark("release")
    result = vec.step([0, 1])  # the replies of the interrupted step are dropped
    report(actions=[info["action"] for info in result.infos],
           steps=[info["steps"] for info in result.infos], same_workers=vec.call("pid") == pids)
    vec.close()
"""


@pytest.mark.parametrize(
    ("context", "group"), [("fork", False), ("forkserver", True)], ids=["parent", "group"]
)
def test_ctrl_c_while_waiting_leaves_the_env_usable(
    start_script: Callable[..., Any], context: str, group: bool
) -> None:
    script = start_script(_INTERRUPTED.format(context=context), new_session=group)
    # Both workers busy in their step: a Ctrl-C that landed while the parent read a reply could
    # take its bytes with it (FdChannel: the worker is stopped), which is not what this tests.
    script.wait_mark("blocked-0-0")
    script.wait_mark("blocked-1-0")
    (os.killpg if group else os.kill)(script.process.pid, signal.SIGINT)
    done = script.finish()
    assert done.code == 0, done.err
    assert done.lines == [
        {"interrupted": True},
        {"actions": [0, 1], "steps": [2, 2], "same_workers": True},
    ]


@pytest.mark.parametrize(
    ("mode", "ignore_term"), [("hang", False), ("spin", True)], ids=["hung", "ignores-sigterm"]
)
def test_close_stops_a_stubborn_worker_within_close_timeout_plus_one_second(
    run_script: RunScript, mode: str, ignore_term: bool
) -> None:
    done = run_script(f"""
        fns = [lambda: Probe(0), lambda: Probe(1, close="{mode}", ignore_term={ignore_term})]
        vec = ProcVecEnv(fns, context="fork", close_timeout=1.0)
        vec.reset(seed=0)
        pids = vec.call("pid")
        start = time.monotonic()
        vec.close()
        report(elapsed=time.monotonic() - start, left=wait_gone(pids, 0.0),
               closes=[marked("closed-0"), marked("closed-1")])
    """)
    assert done.code == 0, done.err
    (result,) = done.lines
    assert result["left"] == []
    assert result["closes"] == [True, True]
    assert 1.0 <= result["elapsed"] < 2.0


@pytest.mark.parametrize("timeout", ["step_timeout", "reset_timeout"])
def test_a_worker_that_does_not_answer_in_time_is_stopped_and_named(
    run_script: RunScript, timeout: str
) -> None:
    call = (
        "vec.step([0, 0, SLEEP])"
        if timeout == "step_timeout"
        else ('vec.reset(options=[None, None, {"sleep": True}])')
    )
    done = run_script(f"""
        vec = ProcVecEnv(probes(3), context="fork", num_workers=2, {timeout}=0.5)
        vec.reset(seed=0)
        pids = vec.call("pid")
        for _ in range(2):
            try:
                {call}
            except TimeoutError as e:
                report(message=str(e), cls=type(e).__name__, exc_type=e.exc_type, worker=e.worker)
        vec.close()
        report(left=wait_gone(pids), closes=[marked(f"closed-{{i}}") for i in range(3)])
    """)
    assert done.code == 0, done.err
    name = timeout.split("_")[0]
    error = {
        "message": f"Sub-env 2 raised TimeoutError: worker 1 did not answer {name}() within "
        "0.5 s and was stopped",
        "cls": "VecEnvWorkerError[TimeoutError]",
        "exc_type": "TimeoutError",
        "worker": 1,
    }
    assert done.lines == [error, error, {"left": [], "closes": [True, True, False]}]


@pytest.mark.parametrize("context", ["fork", "forkserver"])
def test_a_parent_killed_with_sigkill_leaves_no_process_and_no_shared_memory(
    start_script: Callable[..., Any], faulty: types.ModuleType, context: str
) -> None:
    script = start_script(f"""
        vec = ProcVecEnv(probes(3), context="{context}", num_workers=2)
        vec.reset(seed=0)
        report(pids=descendants(os.getpid()), workers=vec.call("pid"), segments=segments(),
               shared=vec.shared_memory)
        vec.step([0, 0, SLEEP])  # one worker busy in env code, the other idle
    """)
    started = script.line()
    script.wait_mark("sleeping-2")
    script.process.kill()
    script.process.communicate()
    assert started["shared"] is True
    assert started["segments"] == []  # unlinked as soon as every worker had it mapped
    assert set(started["workers"]) <= set(started["pids"])
    assert faulty.wait_gone(started["pids"]) == []
    assert faulty.segments(script.process.pid) == []


def test_exit_without_close_closes_the_sub_envs_and_leaves_nothing(
    start_script: Callable[..., Any], faulty: types.ModuleType, tmp_path: Any
) -> None:
    script = start_script("""
        vec = ProcVecEnv(probes(3))
        vec.reset(seed=0)
        vec.step([1, 1, 1])
        report(pids=descendants(os.getpid()), workers=vec.call("pid"))
    """)
    done = script.finish()
    assert done.code == 0, done.err
    assert done.err == ""  # no leak warning from multiprocessing's resource tracker
    (started,) = done.lines
    assert faulty.wait_gone(started["pids"]) == []
    assert faulty.segments(script.process.pid) == []
    assert all((tmp_path / "marks" / f"closed-{i}").exists() for i in range(3))


@pytest.mark.parametrize("context", ["forkserver", "spawn"])
def test_a_script_without_the_main_guard_fails_fast(run_script: RunScript, context: str) -> None:
    # With forkserver a worker's exit status comes from the fork server, which a loaded machine
    # may run more than EXIT_WAIT (1 s) after the worker's pipe closed: the note would be left
    # out. The longer wait only bounds a failure; the status comes as soon as it is known.
    done = run_script(
        f"""
import sekai.vector.proc.processes
sekai.vector.proc.processes.EXIT_WAIT = 10.0
vec = ProcVecEnv(probes(2), context="{context}")
vec.reset(seed=0)
report(reached=True)
""",
        guard=False,
    )
    assert done.code != 0
    assert done.lines == []
    assert (
        "VecEnvWorkerError: Sub-env 0 raised EOFError: worker process exited unexpectedly "
        "while starting" in done.err
    )
    assert "\nThe worker process exited with code 1.\n" in done.err  # the note, as printed
    assert (
        "while starting; if the worker printed an error, it is above. With the "
        f"{context} start method every worker re-imports your main module: if your script "
        'creates the ProcVecEnv at import time, put that code under if __name__ == "__main__":'
    ) in done.err


@pytest.mark.parametrize(
    ("context", "death", "note"),
    [
        ("fork", "os._exit(3)", "The worker process exited with code 3."),
        (
            "fork",
            "os.kill(os.getpid(), signal.SIGKILL)",
            "The worker process was killed by SIGKILL.",
        ),
        (
            "forkserver",
            "os.kill(os.getpid(), signal.SIGKILL)",
            "The worker process was killed by SIGKILL.",
        ),
    ],
    ids=["fork-exit", "fork-killed", "forkserver-killed"],
)
def test_a_factory_whose_process_dies_is_not_blamed_on_the_main_guard(
    run_script: RunScript, context: str, death: str, note: str
) -> None:
    # fork never re-imports the main module, and a signal (the out-of-memory killer) is no
    # import error: the message says only what is known, with the exit status as its note.
    done = run_script(f"""
        import sekai.vector.proc.processes
        sekai.vector.proc.processes.EXIT_WAIT = 10.0  # as above: the status may come late
        def load_big_dataset():
            {death}
        try:
            ProcVecEnv([lambda: Probe(0), load_big_dataset], context="{context}")
        except sekai.VecEnvWorkerError as e:
            report(message=str(e), notes=getattr(e, "__notes__", []))
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "message": "Sub-env 1 raised EOFError: worker process exited unexpectedly while "
            "starting; if the worker printed an error, it is above",
            "notes": [note],
        }
    ]


def test_ctrl_c_while_a_factory_hangs_stops_the_workers_without_waiting_out_close_timeout(
    run_script: RunScript,
) -> None:
    # close_timeout=inf: a release that waited for the hung worker would never end (the
    # script would hang); after Ctrl-C it gets the short grace of an interrupted close().
    done = run_script("""
        def connect_to_simulator():
            mark("connecting")
            time.sleep(3600)
        def ctrl_c_once_connecting():
            while not marked("connecting"):
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=ctrl_c_once_connecting, daemon=True).start()
        try:
            ProcVecEnv([lambda: Probe(0), connect_to_simulator], context="fork",
                       close_timeout=float("inf"))
        except KeyboardInterrupt:
            report(interrupted=True, left=wait_gone(descendants(os.getpid())),
                   segments=segments())
    """)
    assert done.code == 0, done.err
    assert done.lines == [{"interrupted": True, "left": [], "segments": []}]


def test_a_failing_factory_closes_the_built_sub_envs_and_stops_every_worker(
    run_script: RunScript,
) -> None:
    done = run_script("""
        fns = [lambda: Probe(0), lambda: Probe(1), lambda: 1 / 0]
        try:
            ProcVecEnv(fns, context="fork", num_workers=2)
        except ZeroDivisionError as e:
            report(message=str(e).splitlines()[0], rank=e.rank)
        report(left=wait_gone(descendants(os.getpid())), segments=segments(),
               closes=[marked(f"closed-{i}") for i in range(3)])
    """)
    assert done.code == 0, done.err
    assert done.lines == [
        {"message": "Sub-env 2 raised ZeroDivisionError: division by zero", "rank": 2},
        {"left": [], "segments": [], "closes": [True, True, False]},
    ]


@pytest.mark.parametrize(("context", "cycles"), [("fork", 50), ("forkserver", 20)])
def test_create_close_cycles_leak_no_descriptor_process_or_segment(
    run_script: RunScript, context: str, cycles: int
) -> None:
    done = run_script(f"""
        def cycle():
            with ProcVecEnv(probes(3), context="{context}", num_workers=2) as vec:
                vec.reset(seed=0)
                vec.step([1, 1, 1])
        def state():
            return [open_fds(), len(descendants(os.getpid())), segments()]
        cycle()
        before = state()
        for _ in range({cycles} - 1):
            cycle()
        report(before=before, after=state())
    """)
    assert done.code == 0, done.err
    (result,) = done.lines
    assert result["after"] == result["before"]
    assert result["after"][2] == []


def test_running_out_of_descriptors_while_starting_says_what_to_do_and_spares_the_fork_server(
    run_script: RunScript,
) -> None:
    # Without the room checked before the fork server's launch, the launch failed half-way:
    # the fork server died of it (printing an EOFError), and with it the exit status of the
    # workers it had started for other ProcVecEnvs, which then looked dead.
    done = run_script("""
        import multiprocessing, resource
        first = ProcVecEnv(probes(2), context="forkserver")
        first.reset(seed=0)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 40, hard))
        try:
            ProcVecEnv(probes(32), context="forkserver")
        except OSError as e:
            report(errno=e.errno, message=str(e), limit=highest + 40)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        workers = len(multiprocessing.active_children())
        time.sleep(0.2)  # the first's workers are looked at every 50 ms between calls
        report(workers=workers, steps=len(first.step([0, 0]).rewards))
        first.close()
    """)
    assert done.code == 0, done.err
    failed, after = done.lines
    assert failed["errno"] == errno.EMFILE
    assert re.fullmatch(
        r"\[Errno 24\] ProcVecEnv ran out of file descriptors after starting \d+ of its 32 "
        r"worker processes: each holds a few in this process, which may open \d+ "
        r"\(ulimit -n\)\. Pass num_workers= to run several sub-envs per worker \(about the "
        r"number of cores, \d+ here, is best\), or raise that limit \(ulimit -n, or "
        r"resource\.setrlimit\(RLIMIT_NOFILE, \.\.\.\)\)\.",
        failed["message"],
    )
    assert f"may open {failed['limit']} " in failed["message"]
    assert after == {"workers": 2, "steps": 2}  # the second's workers are stopped


def test_running_out_of_descriptors_with_fork_leaks_none_whatever_the_limit(
    run_script: RunScript,
) -> None:
    # A fork's launch opens two pipes: where the second could not be opened, the first leaked
    # (two descriptors per failed construction, so each retry started with fewer).
    done = run_script("""
        import errno, resource
        ProcVecEnv(probes(1), context="fork").close()  # starts the resource tracker (its pipe)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        before = sorted(os.listdir("/proc/self/fd"))
        highest = max(int(fd) for fd in before)
        failed = 0
        for room in range(1, 40):  # every point of the starts the limit can cut
            resource.setrlimit(resource.RLIMIT_NOFILE, (highest + room, hard))
            try:
                ProcVecEnv(probes(8), context="fork").close()
            except OSError as e:
                failed += e.errno == errno.EMFILE
            finally:
                resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        report(failed=failed, leaked=sorted(set(os.listdir("/proc/self/fd")) - set(before)))
    """)
    assert done.code == 0, done.err
    (result,) = done.lines
    assert result["failed"] > 5
    assert result["leaked"] == []
    assert done.err == ""


def test_the_pages_fragile_env_example_prints_what_it_says(run_script: RunScript) -> None:
    done = run_script(
        """
class FragileEnv(sekai.Env):
    def __init__(self):
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32), {})

    def step(self, action):
        if action == 1:
            raise ValueError("action 1 is not supported")
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, False, {})


if __name__ == "__main__":
    with sekai.ProcVecEnv([FragileEnv] * 2) as vec:
        vec.reset(seed=0)
        try:
            vec.step(np.array([0, 1]))
        except sekai.VecEnvWorkerError as e:
            print(e.rank, e.exc_type)  # 1 ValueError
            # e.remote_traceback holds the worker's formatted traceback
        print(vec.step(np.array([0, 0])).rewards)  # [0. 0.]
        print(vec.context, vec.num_workers, vec.shared_memory)
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.out.splitlines() == ["1 ValueError", "[0. 0.]", "forkserver 2 True"]
    assert done.err == ""
