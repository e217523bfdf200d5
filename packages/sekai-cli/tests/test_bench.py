"""``sekai bench ID``: the bench line, backends, --compare, --json, pre-sampled actions, errors."""

from __future__ import annotations

import io
import itertools
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from sekai.cli._bench import bench, compare
from sekai.cli._output import Output
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_check import KStepKernel
from sekai.vector.kernel_vec_env import KernelVecEnv

RATE = r"[0-9][0-9,]*"


def _line(env_id: str, label: str, total: str) -> re.Pattern[str]:
    """The bench line format: ``{id} [{label}]: {total:,} env steps in {secs:.2f}s = ...``."""
    return re.compile(
        rf"{re.escape(env_id)} \[{re.escape(label)}\]: {total} env steps in "
        rf"[0-9]+\.[0-9]{{2}}s = {RATE} steps/s"
    )


def test_single_env_line_counts_calls_as_env_steps(sekai_cli) -> None:
    done = sekai_cli("bench", "CartPole-v1", "--steps", "2000")
    assert done.returncode == 0, done.stderr
    assert _line("CartPole-v1", "single env", "2,000").fullmatch(done.stdout.rstrip("\n"))
    assert done.stderr == ""


def test_single_env_is_reset_when_an_episode_ends(sekai_cli, my_envs: str) -> None:
    # Line episodes end within a few steps; stepping on after the end would raise.
    done = sekai_cli("-m", my_envs, "bench", "mine/Line-v0", "--steps", "500")
    assert done.returncode == 0, done.stderr
    assert _line("mine/Line-v0", "single env", "500").fullmatch(done.stdout.rstrip("\n"))


def test_single_env_is_reset_when_an_episode_is_truncated(sekai_cli, my_envs: str) -> None:
    # core.md: "resets on done", truncated included; this env raises on a step after it.
    done = sekai_cli("-m", my_envs, "bench", "mine/Truncated-v0", "--steps", "500")
    assert done.returncode == 0, done.stderr
    assert _line("mine/Truncated-v0", "single env", "500").fullmatch(done.stdout.rstrip("\n"))


@pytest.mark.parametrize(
    ("mode", "label"),
    [("sync", "SyncVecEnv x3"), ("async", "AsyncVecEnv x3"), ("native", "LineVecEnv x3")],
)
def test_vector_modes_label_the_vec_env_class_and_multiply_env_steps(
    sekai_cli, my_envs: str, mode: str, label: str
) -> None:
    args = ("-m", my_envs, "bench", "mine/Line-v0", "--steps", "200", "--num-envs", "3")
    done = sekai_cli(*args, "--mode", mode)
    assert done.returncode == 0, done.stderr
    assert _line("mine/Line-v0", label, "600").fullmatch(done.stdout.rstrip("\n"))


@pytest.mark.parametrize(
    ("args", "label", "total"),
    [((), "single env", "20"), (("--num-envs", "2", "--mode", "sync"), "SyncVecEnv x2", "40")],
    ids=["single", "sync"],
)
def test_a_failing_close_is_reported_after_the_results_with_exit_2(
    sekai_cli, my_envs: str, args: tuple[str, ...], label: str, total: str
) -> None:
    done = sekai_cli("-m", my_envs, "bench", "mine/CloseFails-v0", "--steps", "20", *args)
    assert done.returncode == 2
    assert _line("mine/CloseFails-v0", label, total).fullmatch(done.stdout.rstrip("\n"))
    assert done.stderr.startswith("error: ") and "close failed" in done.stderr


def test_auto_mode_uses_the_native_env_when_registered(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "bench", "mine/Line-v0", "--steps", "10", "--num-envs", "2")
    assert "[LineVecEnv x2]" in done.stdout
    done = sekai_cli("bench", "CartPole-v1", "--steps", "10", "--num-envs", "2")
    assert "[SyncVecEnv x2]" in done.stdout


@pytest.mark.parametrize(
    ("mode_args", "expected"),
    [
        (("--mode", "sync"), [("sync", "single env")]),
        (("--compare", "sync", "native"), [("sync", "single env"), ("native", "LineVecEnv x1")]),
    ],
    ids=["mode", "compare"],
)
def test_num_envs_1_with_sync_mode_times_a_single_env(
    sekai_cli, my_envs: str, mode_args: tuple[str, ...], expected: list[tuple[str, str]]
) -> None:
    args = ("-m", my_envs, "bench", "mine/Line-v0", "--steps", "20", "--num-envs", "1")
    done = sekai_cli(*args, *mode_args, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    entries = data if isinstance(data, list) else [data]
    assert [(entry["mode"], entry["label"]) for entry in entries] == expected


def test_num_envs_1_with_native_mode_is_a_vec_env(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "bench", "mine/Line-v0", "--steps", "10", "--mode", "native")
    assert "[LineVecEnv x1]" in done.stdout


def test_json_prints_one_object(sekai_cli, my_envs: str) -> None:
    args = ("-m", my_envs, "bench", "mine/Line-v0", "--steps", "50", "--num-envs", "4")
    done = sekai_cli(*args, "--mode", "sync", "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    seconds, rate = data.pop("seconds"), data.pop("steps_per_second")
    assert data == {
        "id": "mine/Line-v0",
        "label": "SyncVecEnv x4",
        "mode": "sync",
        "num_envs": 4,
        "num_workers": None,
        "calls": 50,
        "env_steps": 200,
    }
    assert seconds > 0
    assert rate == pytest.approx(200 / seconds)


def test_compare_prints_each_line_then_a_table_of_ratios(sekai_cli, my_envs: str) -> None:
    args = ("-m", my_envs, "bench", "mine/Line-v0", "--steps", "100", "--num-envs", "2")
    done = sekai_cli(*args, "--compare", "native", "sync", "async")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert _line("mine/Line-v0", "LineVecEnv x2", "200").fullmatch(lines[0])
    assert _line("mine/Line-v0", "SyncVecEnv x2", "200").fullmatch(lines[1])
    assert _line("mine/Line-v0", "AsyncVecEnv x2", "200").fullmatch(lines[2])
    assert lines[3] == ""
    assert lines[4].split() == ["MODE", "BACKEND", "STEPS/S", "RATIO"]
    rows = [line.split() for line in lines[5:]]
    assert [row[:2] for row in rows] == [
        ["native", "LineVecEnv"],
        ["sync", "SyncVecEnv"],
        ["async", "AsyncVecEnv"],
    ]
    assert rows[0][3] == "1.00x"
    rates = [float(row[2].replace(",", "")) for row in rows]
    for row, rate in zip(rows[1:], rates[1:]):
        assert float(row[3].rstrip("x")) == pytest.approx(rate / rates[0], abs=0.01)
    # STEPS/S and RATIO are right-aligned under their headers.
    assert len({len(line) for line in lines[4:]}) == 1


def test_compare_json_is_a_list_with_ratios(sekai_cli, my_envs: str) -> None:
    args = ("-m", my_envs, "bench", "mine/Line-v0", "--steps", "20", "--num-envs", "2")
    done = sekai_cli(*args, "--compare", "sync", "native", "--json")
    data = json.loads(done.stdout)
    assert [d["mode"] for d in data] == ["sync", "native"]
    assert [d["label"] for d in data] == ["SyncVecEnv x2", "LineVecEnv x2"]
    assert data[0]["ratio"] == 1.0
    assert data[1]["ratio"] == pytest.approx(
        data[1]["steps_per_second"] / data[0]["steps_per_second"]
    )


def test_compare_and_mode_exclude_each_other(sekai_cli) -> None:
    done = sekai_cli("bench", "CartPole-v1", "--mode", "sync", "--compare", "sync", "async")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--workers", "2"),
        ("--mode", "sync", "--workers", "2"),
        ("--compare", "sync", "async", "--workers", "2"),
    ],
)
def test_workers_without_proc_is_a_usage_error(sekai_cli, args: tuple[str, ...]) -> None:
    done = sekai_cli("bench", "CartPole-v1", "--num-envs", "2", *args)
    assert done.returncode == 2
    assert done.stderr == "error: --workers applies to --mode proc only\n"
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--steps", "0"), ("--num-envs", "0"), ("--workers", "0"), ("--seed", "-1")],
)
def test_out_of_range_numbers_are_usage_errors(sekai_cli, flag: str, value: str) -> None:
    done = sekai_cli("bench", "CartPole-v1", flag, value)
    assert done.returncode == 2
    assert f"argument {flag}" in done.stderr


def test_an_unknown_mode_prints_the_make_vec_message(sekai_cli) -> None:
    done = sekai_cli("bench", "CartPole-v1", "--num-envs", "2", "--mode", "foo")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: Unknown vectorization_mode 'foo'; expected one of ['native', 'sync', 'async', "
        "'proc'"
    )


def test_native_mode_without_a_native_env_names_its_classic_twin(sekai_cli) -> None:
    done = sekai_cli("bench", "CartPole-v1", "--num-envs", "2", "--mode", "native")
    assert done.returncode == 2
    assert done.stderr == (
        "error: CartPole-v1 has no native vector implementation (vector_entry_point); "
        "classic/CartPole-v1 has one (the same env registered with its native vector version, "
        "docs/pages/registry.md#native-twins); use vectorization_mode='sync', 'async' or "
        "'proc'.\n"
    )
    twin = sekai_cli("bench", "classic/CartPole-v1", "--mode", "native", "--steps", "200")
    assert twin.returncode == 0, twin.stderr


@pytest.mark.parametrize(
    ("modes", "error"),
    [
        (("sync", "async", "foo"), "error: Unknown vectorization_mode 'foo'; expected one of "),
        (("sync", "native"), "error: CartPole-v1 has no native vector implementation "),
    ],
    ids=["unknown", "no-native-env"],
)
def test_compare_refuses_a_bad_mode_before_timing_the_first(
    sekai_cli, modes: tuple[str, ...], error: str
) -> None:
    # Before: each mode was checked when its turn came, after the runs before it.
    args = ("bench", "CartPole-v1", "--num-envs", "2", "--steps", "50")
    done = sekai_cli(*args, "--compare", *modes)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(error)


@pytest.mark.parametrize("num_envs", ["1", "2"])
def test_an_exception_in_step_is_shown_with_its_type(
    sekai_cli, my_envs: str, num_envs: str
) -> None:
    done = sekai_cli("-m", my_envs, "bench", "mine/StepFails-v0", "--num-envs", num_envs)
    assert done.returncode == 2
    assert done.stderr == "error: RuntimeError: boom at step\n"


def test_a_worker_error_is_one_line_without_the_worker_traceback(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "bench", "mine/WorkerErr-v0")
    assert done.returncode == 2
    assert done.stderr == "error: Sub-env 0 raised RuntimeError: boom\n"


CTRL_C_ENVS = """
import asyncio
import signal

import numpy as np

import sekai

# As in a terminal's foreground job, where Ctrl-C is Python's KeyboardInterrupt: a job that a
# script starts in the background inherits SIGINT ignored, and the presses would do nothing.
signal.signal(signal.SIGINT, signal.default_int_handler)

pressed = False


class CtrlC(sekai.Env):
    \"\"\"At the 50th step of the first sub-env, Ctrl-C is pressed ``presses`` times while the
    event loop runs; a step then in progress never ends when pressed twice (it ignores
    cancellation), as a stuck sub-env's.\"\"\"

    def __init__(self, presses):
        self.presses, self.steps = presses, 0
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action):
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 0.0, False, False, {})

    async def async_step(self, action):
        global pressed
        self.steps += 1
        if self.steps == 50 and not pressed:
            pressed = True
            for _ in range(self.presses):
                asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)
            while self.presses == 2:
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    pass
        await asyncio.sleep(0)
        return self.step(action)


sekai.register("mine/CtrlC1-v0", CtrlC, kwargs={"presses": 1})
sekai.register("mine/CtrlC2-v0", CtrlC, kwargs={"presses": 2})
"""


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_during_an_async_bench_exits_130_with_one_line(
    sekai_cli, tmp_path: Path, presses: int
) -> None:
    (tmp_path / "ctrl_c_envs.py").write_text(CTRL_C_ENVS)
    args = ("--mode", "async", "--num-envs", "2", "--steps", "100000")
    done = sekai_cli("-m", "ctrl_c_envs", "bench", f"mine/CtrlC{presses}-v0", *args, timeout=120)
    assert (done.returncode, done.stderr) == (130, "error: interrupted\n")


def _recorded(sekai_cli, tmp_path: Path, *args: str) -> list[str]:
    done = sekai_cli("-m", "my_envs", "bench", "mine/Recorder-v0", *args)
    assert done.returncode == 0, done.stderr
    return (tmp_path / "actions.txt").read_text().split()


def test_actions_come_from_a_pool_sampled_with_the_seed(
    sekai_cli, my_envs: str, tmp_path: Path
) -> None:
    actions = _recorded(sekai_cli, tmp_path, "--steps", "300", "--seed", "3")
    # 30 warm-up calls, then 300 timed ones, all drawn in turn from a pool of 100 actions.
    assert len(actions) == 330
    assert actions[100:] == actions[:230]
    assert set(actions[:100]) == {"0", "1"}
    assert _recorded(sekai_cli, tmp_path, "--steps", "300", "--seed", "3") == actions
    assert _recorded(sekai_cli, tmp_path, "--steps", "300", "--seed", "4") != actions


def test_a_short_run_uses_a_pool_of_steps_actions(sekai_cli, my_envs: str, tmp_path: Path) -> None:
    actions = _recorded(sekai_cli, tmp_path, "--steps", "40", "--seed", "0")
    assert len(actions) == 44  # 4 warm-up calls
    assert actions[40:] == actions[:4]


def test_progress_bar_only_on_a_terminal_stderr(sekai_cli, terminal_cli) -> None:
    code, out, err = terminal_cli("bench", "CartPole-v1", "--steps", "3000", stream="stderr")
    assert code == 0
    assert _line("CartPole-v1", "single env", "3,000").fullmatch(out.rstrip("\n"))
    assert "\r" in err
    assert "100% 3,000/3,000" in err
    assert err.endswith("\r\x1b[K")  # the bar is erased at the end
    assert sekai_cli("bench", "CartPole-v1", "--steps", "3000").stderr == ""


# -- proc -------------------------------------------------------------------------------------


def test_proc_mode_passes_workers_to_the_proc_backend(sekai_cli) -> None:
    args = ("bench", "CartPole-v1", "--steps", "50", "--num-envs", "4")
    done = sekai_cli(*args, "--mode", "proc", "--workers", "2", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["label"], data["mode"], data["num_workers"]) == ("ProcVecEnv x4", "proc", 2)
    assert data["env_steps"] == 200


def test_json_reports_the_workers_that_ran(sekai_cli) -> None:
    # more workers than sub-envs run one per sub-env; no --workers runs the default
    args = ("bench", "CartPole-v1", "--steps", "20", "--num-envs", "2", "--mode", "proc")
    for extra in (("--workers", "3"), ()):
        done = sekai_cli(*args, *extra, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["num_workers"] == 2


def test_compare_applies_workers_to_its_proc_entry_only(sekai_cli) -> None:
    args = ("bench", "CartPole-v1", "--steps", "50", "--num-envs", "2")
    done = sekai_cli(*args, "--compare", "sync", "proc", "--workers", "1", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(d["label"], d["num_workers"]) for d in data] == [
        ("SyncVecEnv x2", None),
        ("ProcVecEnv x2", 1),
    ]


def test_proc_mode_runs_envs_registered_by_an_imported_module(sekai_cli, my_envs: str) -> None:
    args = ("-m", my_envs, "bench", "mine/Plain-v0", "--steps", "20", "--num-envs", "2")
    done = sekai_cli(*args, "--mode", "proc")
    assert done.returncode == 0, done.stderr
    assert _line("mine/Plain-v0", "ProcVecEnv x2", "40").fullmatch(done.stdout.rstrip("\n"))


def test_proc_worker_errors_are_one_line(sekai_cli, my_envs: str) -> None:
    args = ("-m", my_envs, "bench", "mine/StepFails-v0", "--num-envs", "2", "--mode", "proc")
    done = sekai_cli(*args)
    assert done.returncode == 2
    assert done.stderr == "error: Sub-env 0 raised RuntimeError: boom at step\n"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.00x"),
        (12.345, "12.35x"),
        (0.25, "0.25x"),
        (0.013714, "0.0137x"),
        (0.0057, "0.0057x"),
    ],
)
def test_ratios_below_a_tenth_keep_three_significant_digits(value: float, text: str) -> None:
    from sekai.cli._bench import _ratio

    assert _ratio(value) == text


# -- timing, in process --------------------------------------------------------------------------


def _quiet() -> Output:
    """An Output on string buffers: no terminal, so no progress bar."""
    return Output(io.StringIO(), io.StringIO())


class _SlowDevice(NumpyBackend):
    """numpy, as a device whose calls return before their work is done would look: the work
    shows up in ``synchronize()``."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    def synchronize(self, values: Any) -> None:
        self.waits += 1
        time.sleep(0.2)


def test_the_clock_waits_for_the_device_to_finish_the_timed_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before: the clock stopped when the last step() returned, while JAX (or CUDA) was still
    # running the steps it counted.
    import sekai.registry

    backend = _SlowDevice()

    def make_vec(env_id: str, num_envs: int, **kwargs: Any) -> KernelVecEnv:
        return KernelVecEnv(KStepKernel([3] * num_envs), num_envs, backend=backend)

    monkeypatch.setattr(sekai.registry, "make_vec", make_vec)
    result = bench("k", "fake", num_envs=2, workers=None, steps=10, seed=0, out=_quiet())
    assert backend.waits == 2  # after the (untimed) warm-up, and at the end of the timed calls
    assert 0.2 <= result.seconds < 0.4


def test_compare_times_the_modes_in_turn_chunk_by_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: each mode ran all its calls before the next was built, so a load spike on the
    # machine during one mode's run showed up as a ratio.
    import sekai.registry

    real = sekai.registry.make_vec
    stepped: list[str] = []

    def make_vec(env_id: str, num_envs: int, *, vectorization_mode: str, **kwargs: Any) -> Any:
        vec = real(env_id, num_envs, vectorization_mode=vectorization_mode, **kwargs)
        step = vec.step

        def recorded(actions: Any) -> Any:
            stepped.append(vectorization_mode)
            return step(actions)

        vec.step = recorded
        return vec

    monkeypatch.setattr(sekai.registry, "make_vec", make_vec)
    results = compare(
        "CartPole-v1",
        ["sync", "async"],
        num_envs=2,
        workers=None,
        steps=300,
        seed=0,
        out=_quiet(),
    )
    # Each mode warms up just before its first chunk (30 calls), then 100 rounds of 3 calls
    # each, the order reversed every round: sync async, async sync, sync async, ...
    runs = [(mode, len(list(calls))) for mode, calls in itertools.groupby(stepped)]
    assert runs[:3] == [("sync", 33), ("async", 36), ("sync", 6)]
    assert runs[-1] == ("sync", 3)
    assert len(runs) == 101
    assert stepped.count("sync") == stepped.count("async") == 330
    assert [(r.mode, r.calls, r.env_steps) for r in results] == [
        ("sync", 300, 600),
        ("async", 300, 600),
    ]
