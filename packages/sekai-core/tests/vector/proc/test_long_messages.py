"""Commands longer than a pipe holds, sent while a worker writes a reply longer than its pipe
holds (to a ``send()``): neither side may wait for the other to read. Each test runs in a
script of its own (see conftest.py), whose hard timeout turns a deadlock into a failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

RunScript = Callable[..., Any]

# A sub-env whose step infos are 8 MB and whose reset info says how long its options were.
_BULKY = """
class Bulky(sekai.Env):
    def __init__(self, rank=0):
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(2,))
        self.action_space = sekai.Discrete(2)
        self.rank = rank
    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        size = 0 if options is None else len(options["blob"])
        return sekai.ResetResult(np.array([self.rank, 0], np.float32), {"size": size})
    def step(self, action):
        if action == 1:
            while not marked("release"):
                time.sleep(0.01)
        obs = np.array([self.rank, 1], np.float32)
        return sekai.StepResult(obs, 1.0, False, False, {"blob": np.ones(1 << 20)})
    def pid(self):
        return os.getpid()

vec = ProcVecEnv([lambda i=i: Bulky(i) for i in range(4)], context="fork", num_workers=2)
vec.reset(seed=0)
blob = {"blob": np.ones(1 << 18)}  # 2 MB of options for every sub-env
"""

# A sub-env whose actions are 2 MB, whose step infos are 8 MB, and whose step never ends when
# the action's first element is 1 (a hung sub-env).
_WIDE = """
class Wide(sekai.Env):
    def __init__(self):
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(2,))
        self.action_space = sekai.Box(0, 1, shape=(1 << 18,), dtype=np.float64)
    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32), {})
    def step(self, action):
        while action[0] == 1:
            time.sleep(0.01)
        info = {"sum": float(action.sum()), "blob": np.ones(1 << 20)}
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, False, info)
"""


def test_reset_with_long_options_while_workers_write_long_replies_to_send(
    run_script: RunScript,
) -> None:
    done = run_script(
        _BULKY
        + """
vec.send([0, 0, 0, 0])
report(sizes=[info["size"] for info in vec.reset(options=blob).infos])
vec.send([0, 0, 0, 0])
report(blobs=[len(info["blob"]) for info in vec.recv(batch_size=4).infos])
vec.close()
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [{"sizes": [1 << 18] * 4}, {"blobs": [1 << 20] * 4}]


def test_a_reply_read_while_another_workers_pipe_is_full_answers_the_call(
    run_script: RunScript,
) -> None:
    # Worker 0 takes its options and answers while worker 1 still writes its step's reply and
    # the parent waits to write worker 1's options: that answer must not be lost.
    done = run_script(
        _BULKY
        + """
vec.send([0], [2])
report(sizes=[info["size"] for info in vec.reset(options=blob).infos])
report(steps=len(vec.step([0, 0, 0, 0]).infos))
vec.close()
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [{"sizes": [1 << 18] * 4}, {"steps": 4}]


def test_a_long_send_to_a_worker_writing_a_long_reply_keeps_both_results(
    run_script: RunScript,
) -> None:
    done = run_script(
        _WIDE
        + """
vec = ProcVecEnv([Wide, Wide], context="fork", num_workers=1)
vec.reset(seed=0)
vec.send(np.full((1, 1 << 18), 0.5), [0])
vec.send(np.full((1, 1 << 18), 0.25), [1])
result = vec.recv(batch_size=2)
report(sums=sorted(info["sum"] for info in result.infos))
vec.close()
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [{"sums": [65536.0, 131072.0]}]


# Sub-env 0's step infos are 8 MB (the others' empty); actions are SIZE float64s.
_FILLER = """
class Filler(sekai.Env):
    def __init__(self, rank=0):
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(2,))
        self.action_space = sekai.Box(0, 1, shape=(SIZE,), dtype=np.float64)
        self.rank = rank
    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32), {})
    def step(self, action):
        info = {"blob": np.ones(1 << 20)} if self.rank == 0 else {}
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, False, info)
"""


@pytest.mark.parametrize(
    ("size", "count"),
    [(440, 96), (26500, 2)],
    ids=["short-commands-pile-up", "a-long-one-fits-whole"],
)
def test_no_write_waits_on_a_pipe_full_while_its_worker_writes_a_long_reply(
    run_script: RunScript, size: int, count: int
) -> None:
    # Sub-env 0's worker writes an 8 MB reply nobody reads; meanwhile the parent fills its pipe
    # with short commands (95 of 3.5 KB), or with one of 212 KB that the pipe takes whole
    # without a wait. Neither the sends nor close() may wait on the full pipe.
    done = run_script(
        _FILLER.replace("SIZE", str(size))
        + f"""
vec = ProcVecEnv([lambda i=i: Filler(i) for i in range({count})], context="fork", num_workers=1)
vec.reset(seed=0)
vec.send(np.full((1, {size}), 0.5), [0])
time.sleep(0.3)
for rank in range(1, {count}):
    vec.send(np.full((1, {size}), 0.5), [rank])
report(sent=True)
start = time.monotonic()
vec.close()
report(closed=time.monotonic() - start < 5.0)
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [{"sent": True}, {"closed": True}]


@pytest.mark.parametrize(
    ("fault", "raised", "message"),
    [
        ("pids[2], signal.SIGKILL", "VecEnvWorkerError", "worker process exited unexpectedly"),
        (
            "os.getpid(), signal.SIGINT",
            "KeyboardInterrupt",
            "worker process stopped: a command to it was cut short",
        ),
    ],
    ids=["worker-killed", "ctrl-c"],
)
def test_a_fault_while_waiting_to_write_a_long_command_fails_the_call_not_hangs_it(
    run_script: RunScript, fault: str, raised: str, message: str
) -> None:
    # The worker killed, or the wait interrupted: that worker is dead for every later call.
    done = run_script(
        _BULKY
        + f"""
pids = vec.call("pid")
vec.send([0, 0, 1, 1])  # worker 1 steps until released: it reads no command meanwhile
threading.Timer(1.0, os.kill, ({fault})).start()
try:
    vec.reset(options=blob)
except (KeyboardInterrupt, sekai.VecEnvWorkerError) as e:
    report(raised=type(e).__name__)
try:
    vec.reset()
except sekai.VecEnvWorkerError as e:
    report(rank=e.rank, worker=e.worker, message=e.message)
vec.close()
report(left=wait_gone(pids))
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {"raised": raised},
        {"rank": 2, "worker": 1, "message": message},
        {"left": []},
    ]


def test_a_worker_that_reads_no_long_command_in_time_is_stopped_at_the_timeout(
    run_script: RunScript,
) -> None:
    # The timeout counts from the start of the call, the wait for the pipe included.
    done = run_script(
        _BULKY.replace("num_workers=2)", "num_workers=2, reset_timeout=1.0)")
        + """
pids = vec.call("pid")
vec.send([0, 0, 1, 1])  # worker 1 steps until released: it reads no command meanwhile
start = time.monotonic()
try:
    vec.reset(options=blob)
except sekai.VecEnvWorkerError as e:
    report(rank=e.rank, worker=e.worker, exc_type=e.exc_type, timeout=isinstance(e, TimeoutError))
report(waited=time.monotonic() - start < 5, left=wait_gone(pids[2:]))
vec.close()
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {"rank": 2, "worker": 1, "exc_type": "TimeoutError", "timeout": True},
        {"waited": True, "left": []},
    ]


def test_send_stops_a_worker_that_reads_no_long_action_within_the_step_timeout(
    run_script: RunScript,
) -> None:
    done = run_script(
        _WIDE
        + """
vec = ProcVecEnv([Wide, Wide], context="fork", num_workers=1, step_timeout=1.0)
vec.reset(seed=0)
vec.send(np.ones((1, 1 << 18)), [0])
vec.send(np.zeros((1, 1 << 18)), [1])  # returns once the worker is stopped
try:
    vec.recv(batch_size=2)
except sekai.VecEnvWorkerError as e:
    report(rank=e.rank, exc_type=e.exc_type, message=e.message)
vec.close()
""",
        guard=False,
    )
    assert done.code == 0, done.err
    assert done.lines == [
        {
            "rank": 0,
            "exc_type": "TimeoutError",
            "message": "worker 0 did not answer step() within 1 s and was stopped",
        }
    ]
