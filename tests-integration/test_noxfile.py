"""The nox sessions fail when they check nothing (issue 30).

``noxfile.py`` is loaded with a stand-in ``nox`` module (the integration venvs do not install
nox) and its sessions are called with a fake session that records what they would run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test dependency group installs tomli below 3.11
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

pytestmark = pytest.mark.full

REPO_ROOT = Path(__file__).resolve().parents[1]


class SessionError(Exception):
    """What ``session.error()`` raises (nox aborts the session with a failure)."""


class FakeSession:
    """Records ``run`` / ``install`` calls; ``error`` raises, as it fails a real session."""

    posargs: list[str] = []  # noqa: RUF012 - read only
    bin_paths: list[str] = []  # noqa: RUF012 - read only
    venv_backend = "uv"

    def __init__(self) -> None:
        self.runs: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.warnings: list[str] = []

    def run(self, *args: str, **kwargs: Any) -> str:
        self.runs.append((args, kwargs))
        return ""

    def install(self, *args: str, **kwargs: Any) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        raise SessionError(message)


def _decorator(*args: Any, **kwargs: Any) -> Any:
    """``@nox.session`` / ``@nox.session(...)`` / ``@nox.parametrize(...)``: keep the function."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


@pytest.fixture
def noxfile(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``noxfile.py`` loaded with a stand-in ``nox`` module."""
    nox = types.ModuleType("nox")
    nox.options = types.SimpleNamespace()  # type: ignore[attr-defined]
    nox.session = _decorator  # type: ignore[attr-defined]
    nox.parametrize = _decorator  # type: ignore[attr-defined]
    nox.Session = FakeSession  # type: ignore[attr-defined]
    nox.project = types.SimpleNamespace(  # type: ignore[attr-defined]
        load_toml=lambda path: tomllib.loads(Path(path).read_text()),
        dependency_groups=lambda pyproject, *names: tuple(
            req for name in names for req in pyproject["dependency-groups"][name]
        ),
    )
    monkeypatch.setitem(sys.modules, "nox", nox)
    spec = importlib.util.spec_from_file_location("noxfile_under_test", REPO_ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _pytest_runs(session: FakeSession) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    return [(args, kw) for args, kw in session.runs if args and args[0] == "pytest"]


def test_a_distribution_test_session_fails_when_pytest_collects_nothing(noxfile: Any) -> None:
    for dist in noxfile.DISTRIBUTIONS:
        session = FakeSession()
        noxfile.tests(session, dist)
        ((_, kwargs),) = _pytest_runs(session)
        # nox fails a session when the exit code is not in success_codes (default [0]).
        assert 5 not in kwargs.get("success_codes", [0]), dist


@pytest.mark.parametrize("profile", ["full", "minimal"])
def test_an_integration_session_fails_when_its_marker_selects_nothing(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    monkeypatch.setattr(noxfile, "_wheel", lambda session, dist: f"{dist}.whl")
    session = FakeSession()
    noxfile.integration(session, profile)
    ((_, kwargs),) = _pytest_runs(session)
    assert 5 not in kwargs.get("success_codes", [0])


def test_a_distribution_without_a_tests_folder_fails_its_session(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(noxfile, "ROOT", tmp_path)  # packages/sekai-cli/tests does not exist
    with pytest.raises(SessionError, match="sekai-cli has no tests/ folder"):
        noxfile.tests(FakeSession(), "sekai-cli")


def _failing_probe(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(args, 1, "", "ModuleNotFoundError: sekai.cli\n")


def _sekai_commands(session: FakeSession, is_sekai: Callable[[str], bool]) -> list[list[str]]:
    return [list(args[1:]) for args, _ in session.runs if args and is_sekai(args[0])]


def test_dev_runs_sekai_list_check_and_bench_without_a_way_to_skip_them(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever a probe of the command line would say, the commands run: a broken or missing
    # command then fails the session instead of being skipped with a warning.
    monkeypatch.setattr(noxfile.subprocess, "run", _failing_probe)
    session = FakeSession()
    noxfile.dev(session)
    commands = _sekai_commands(session, lambda exe: Path(exe).stem == "sekai")
    assert commands == [
        ["list"],
        ["check", "CartPole-v1"],
        ["bench", "CartPole-v1", "--steps", "2000"],
    ]
    assert session.warnings == []


def test_dev_installs_the_test_group_for_the_readme_quick_loop_and_no_heavy_library(
    noxfile: Any,
) -> None:
    # README: `.venv/bin/python -m pytest packages/sekai-core/tests -q` runs in the dev venv.
    session = FakeSession()
    noxfile.dev(session)
    installs = [args for args, _ in session.runs if "install" in args]
    assert len(installs) == 1, session.runs
    (install,) = installs
    test_group = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["dependency-groups"]
    missing = [req for req in test_group["test"] if req not in install]
    assert not missing, f"the dev venv lacks the test group's {missing}"
    # The training and accelerator pages need more; the dev venv stays without those.
    heavy = ("torch", "stable-baselines3", "sb3-contrib", "jax", "ray")
    assert not [arg for arg in install if re.split(r"[\[<>=!~;@ ]", arg)[0] in heavy], install


def test_bench_runs_sekai_bench_in_every_mode_without_a_way_to_skip_it(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(noxfile.subprocess, "run", _failing_probe)
    session = ImportTimeSession()
    noxfile.bench(session)
    commands = _sekai_commands(session, lambda exe: exe == "sekai")
    assert commands == [
        ["bench", "Portfolio-v0", "--num-envs", "16", "--mode", mode]
        for mode in ("native", "sync", "proc", "jax", "torch")
    ]
    assert session.warnings == []
    assert session.logs[-1].startswith("import sekai: 2.0 ms cumulative; 2 modules imported")


class ImportTimeSession(FakeSession):
    """Answers ``python -X importtime`` with a report of two imports, and keeps its logs."""

    REPORT = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:      1000 |       1000 | numpy\n"
        "import time:      1000 |       2000 | sekai\n"
    )

    def __init__(self, report: str = REPORT) -> None:
        super().__init__()
        self.report = report
        self.logs: list[str] = []

    def run(self, *args: str, **kwargs: Any) -> str:
        super().run(*args, **kwargs)
        return self.report if "importtime" in args else ""

    def log(self, message: str) -> None:
        self.logs.append(message)


class InstallOnlySession(ImportTimeSession):
    """``nox --install-only``: nothing runs, and ``run`` returns None."""

    tmp = "."

    def run(self, *args: str, **kwargs: Any) -> None:  # type: ignore[override]
        super().run(*args, **kwargs)
        return None

    def create_tmp(self) -> str:
        return self.tmp


def test_bench_fails_when_importtime_reports_no_import_of_sekai(noxfile: Any) -> None:
    # A summary of 0.0 ms would hide that `import sekai` did not run at all.
    session = ImportTimeSession(report=ImportTimeSession.REPORT.replace("sekai", "sekaj"))
    with pytest.raises(ValueError, match="reported no import of sekai"):
        noxfile.bench(session)


def test_bench_and_lint_install_only_run_and_summarise_nothing(
    noxfile: Any, tmp_path: Path
) -> None:
    bench = InstallOnlySession()
    noxfile.bench(bench)
    assert not [line for line in bench.logs if line.startswith("import sekai")]
    lint = InstallOnlySession()
    lint.tmp = str(tmp_path)
    noxfile.lint(lint)  # the upward-import check has no output to read: not an error
    assert [args[0] for args, _ in lint.runs] == ["ruff", "ruff", "lint-imports", "lint-imports"]


def _pip_installs(session: FakeSession) -> list[tuple[str, ...]]:
    return [args for args, _ in session.runs if args[:4] == ("python", "-m", "pip", "install")]


def test_torch_without_a_local_wheel_comes_from_the_pytorch_cpu_index(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PyPI's torch for Linux is the multi-GB CUDA build: never a plain `pip install torch`.
    monkeypatch.setattr(noxfile, "_local_torch_wheel", lambda: None)
    session = FakeSession()
    noxfile._install_torch(session)
    ((*options, requirement),) = [args[4:] for args in _pip_installs(session)]
    assert requirement == noxfile.TORCH and "--index-url" in options, options
    assert options[options.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"


def test_torch_with_a_local_wheel_is_that_wheel(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    monkeypatch.setattr(noxfile, "_local_torch_wheel", lambda: wheel)
    installed: list[tuple[str, ...]] = []
    session = FakeSession()
    monkeypatch.setattr(session, "install", lambda *args, **kwargs: installed.append(args))
    noxfile._install_torch(session)  # uv: the wheel file itself, no index
    assert installed == [(str(wheel),)] and _pip_installs(session) == []


# -- the bench session's scripts -------------------------------------------------------------


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``benchmarks/<name>.py`` as a module (importing its siblings, as when run as a script)."""
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_takes_quick_and_ignores_the_options_of_the_others() -> None:
    # `nox -s bench -- --quick` passes its posargs to every bench_*.py: a script that parsed
    # strictly would stop the session at an option of another script.
    scripts = sorted((REPO_ROOT / "benchmarks").glob("bench_*.py"))
    assert scripts
    for script in scripts:
        calls = {
            node.func.attr
            for node in ast.walk(ast.parse(script.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        }
        assert "parse_known_args" in calls and "parse_args" not in calls, script.name
        assert '"--quick"' in script.read_text(), script.name


# Options that count something: a value below 1 divided by zero or printed made-up figures.
COUNT_OPTIONS = {
    "--steps", "--repeats", "--number", "--repeat", "--chunk", "--rounds",
    "--num-envs", "--sync-envs", "--native-envs", "--recv-workers",
}  # fmt: skip


def test_every_benchmark_checks_its_counts_with_the_shared_argument_type() -> None:
    scripts = sorted((REPO_ROOT / "benchmarks").glob("bench_*.py"))
    checked = 0
    for script in scripts:
        for node in ast.walk(ast.parse(script.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument" or not node.args:
                continue
            option = node.args[0]
            if not (isinstance(option, ast.Constant) and option.value in COUNT_OPTIONS):
                continue
            kinds = {k.arg: k.value for k in node.keywords}
            kind = kinds.get("type")
            assert isinstance(kind, ast.Name) and kind.id == "positive_int", (
                f"{script.name} {option.value}"
            )
            checked += 1
    assert checked >= 15


@pytest.mark.parametrize("value", ["0", "-5", "1.5"])
@pytest.mark.parametrize(
    ("script", "option"), [("bench_vector.py", "--steps"), ("bench_lob.py", "--repeats")]
)
def test_a_benchmark_rejects_a_count_below_one_with_a_usage_error(
    script: str, option: str, value: str
) -> None:
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / script), option, value],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    expected = f"must be >= 1, got {value}"
    if "." in value:
        expected = f"expected an integer, got {value!r}"
    assert f"argument {option}: {expected}" in run.stderr
    assert "Traceback" not in run.stderr


def test_performance_page_names_only_what_bench_spaces_times() -> None:
    page = (REPO_ROOT / "docs" / "pages" / "performance.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `bench_spaces.py` |"))
    described = row.split("|")[2]
    source = (REPO_ROOT / "benchmarks" / "bench_spaces.py").read_text()
    named = re.findall(r"`([a-z_]+)`", described)
    assert named, row
    for name in named:
        assert f".{name}(" in source or f".{name}," in source, name  # a case calls it
    # The script has no case that batches spaces: the page may not claim one.
    assert "batch" not in source.lower()
    assert "batching" not in described.replace("no batching", "")


def test_bench_lob_replays_the_recorded_stream_into_the_recorded_book(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench_lob = _benchmark("bench_lob", monkeypatch)
    stream = bench_lob.record_stream(200)
    assert stream.initial == 60  # the initial book's orders open the stream
    assert stream.events == len(stream.messages) - 60 > 0
    replay = bench_lob.replay(stream)
    assert replay() > 0  # raises when the replayed book is not the recorded one
    assert replay() > 0  # and again on a fresh book: each run starts empty


def test_bench_lob_times_the_inventory_skew_trajectory_without_the_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench_lob = _benchmark("bench_lob", monkeypatch)
    calls: list[int] = []
    policy_call = bench_lob.InventorySkew.__call__

    def counted(self: Any, observation: Any, env: Any) -> Any:
        calls.append(1)
        return policy_call(self, observation, env)

    monkeypatch.setattr(bench_lob.InventorySkew, "__call__", counted)
    steps = 400  # past the end of a session: the replay resets where the policy's run did
    actions = bench_lob.skew_actions(bench_lob.LimitOrderBookEnv(), steps)
    assert len(actions) == len(calls) == steps
    run = bench_lob.env_steps(bench_lob.LimitOrderBookEnv(), actions)
    assert run() > 0 and len(calls) == steps  # the timed run calls no policy
    # The replay is the policy's own trajectory: at every step it picks the recorded action.
    env, policy = bench_lob.LimitOrderBookEnv(), bench_lob.InventorySkew()
    result, ends = env.reset(seed=0), 0
    for action in actions:
        assert policy(result.observation, env).tolist() == action.tolist()
        result = env.step(action)
        if result.terminated:
            result, ends = env.reset(), ends + 1
    assert ends >= 1


def test_bench_lob_keeps_the_warm_up_round_out_of_its_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench_lob = _benchmark("bench_lob", monkeypatch)
    rates = iter([1.0, 50.0, 40.0])  # the first call (warm-up) is the slow one
    best = bench_lob.best_rates({"row": lambda: next(rates)}, 1)
    assert best == {"row": 50.0}


@pytest.mark.docs  # run by the docs session, which has gymnasium (the full profile has not)
def test_bench_classic_sync_row_counts_only_physics_steps_on_both_sides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bench_classic.py compares with gymnasium's same-step autoreset (AutoresetMode, 1.1)
    pytest.importorskip("gymnasium", minversion="1.1")
    bench_classic = _benchmark("bench_classic", monkeypatch)
    ours, theirs = bench_classic.sync_pair(4)
    ours.reset(seed=0)
    theirs.reset(seed=0)
    batches = np.random.default_rng(0).integers(0, 2, size=(300, 4))
    ended = 0
    for batch in batches:
        # CartPole pays 1.0 for every physics step: a reset-only call (gymnasium's default
        # next-step autoreset) pays 0.0 and would be counted as an env step all the same.
        _, reward, terminated, truncated, _ = theirs.step(batch)
        assert reward.tolist() == [1.0] * 4
        assert ours.step(batch).rewards.tolist() == [1.0] * 4
        ended += int(np.sum(terminated | truncated))
    assert ended > 4  # episodes ended and were reset on the way
    ours.close()
    theirs.close()


def test_bench_accel_judges_each_torch_size_by_its_best_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # what the module sets
    bench_accel = _benchmark("bench_accel", monkeypatch)
    torch = bench_accel.TORCH_PORTFOLIO
    huge, small = (str(2**22), str(2**14))
    rates = {
        (f"{torch}, eager", huge): 1e8,
        (f"{torch}, cuda_graph", huge): 6e8,
        (f"{torch}, compile", huge): 3e8,
        (f"{torch}, eager", small): 4e7,
        (f"JAX Portfolio-v0, vec.step() {bench_accel.FIXED}", small): 9e9,  # another row
    }
    assert bench_accel.best_torch_modes(rates, quick=False) == [
        (huge, "cuda_graph", 6e8, 5e8),
        (small, "eager", 4e7, 5e7),
    ]
    assert bench_accel.best_torch_modes({}, quick=False) == [
        (huge, "", None, 5e8),
        (small, "", None, 5e7),
    ]


def test_bench_accel_cpu_table_compares_numpy_with_kernel_rows_on_the_same_inputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench_accel = _benchmark("bench_accel", monkeypatch)
    fixed, like_numpy = bench_accel.FIXED, bench_accel.LIKE_NUMPY
    labels = [what for what, *_ in bench_accel.cpu_rows(quick=True)]
    for what in labels:
        if "vec.step()" in what:  # every row says what it steps
            assert (fixed in what) != (like_numpy in what), what
    for env_id in ("Portfolio-v0", "CartPole-v1"):
        same_work = {what.split()[0] for what in labels if env_id in what and like_numpy in what}
        assert same_work == {"numpy", "JAX-CPU", "torch-CPU"}, env_id
        assert not any(what.startswith("numpy") and fixed in what for what in labels)

    import sekai
    from sekai.spaces import Box

    made: list[Any] = []

    class Recording:
        def __init__(self, env_id: str, n: int, **kwargs: Any) -> None:
            self.kwargs = kwargs.get("vector_kwargs") or {}
            self.batch_action_space = Box(-1.0, 1.0, shape=(n, 6))
            self.unwrapped, self.actions = self, []
            made.append(self)

        def reset(self, seed: int) -> None:
            pass

        def step(self, action: Any) -> None:
            self.actions.append(np.asarray(action).tolist())

    monkeypatch.setattr(sekai, "make_vec", Recording)
    monkeypatch.setattr(bench_accel, "MIN_TIME_S", 0.0)
    bench_accel.numpy_native("Portfolio-v0", 4, 5)
    bench_accel.jax_vec_step("Portfolio-v0", 4, 5, like_numpy=True)
    native, kernel = made
    assert kernel.kwargs == {"check_actions": True} and "check_actions" not in native.kwargs
    assert kernel.actions == native.actions and len(native.actions) == 20


class _FakeVec:
    def __init__(self, workers: int | None) -> None:
        self.workers = workers

    def close(self) -> None:
        pass


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
def test_bench_scaling_judges_only_the_bars_of_the_host_it_runs_for(
    monkeypatch: pytest.MonkeyPatch, quick: bool
) -> None:
    # Before: --quick (2 cores) printed met / NOT MET for the 16-core bars, and the full run
    # judged the 2-core bar.
    bench_scaling = _benchmark("bench_scaling", monkeypatch)
    rates = {None: 100.0, 2: 200.0, 16: 1300.0}  # every bar met

    def stepper(vec: _FakeVec) -> Any:
        timer = bench_scaling.Timer(lambda i: None, 64)
        timer.rate, timer.parent_us = rates[vec.workers], 1.0
        return timer

    monkeypatch.setattr(bench_scaling, "make", lambda env_id, n, workers: _FakeVec(workers))
    monkeypatch.setattr(bench_scaling, "stepper", stepper)
    monkeypatch.setattr(bench_scaling, "race", lambda timers, rounds: None)
    monkeypatch.setattr(bench_scaling.proc_pool, "USE_MAIL", False)
    table = bench_scaling.Table(float("inf"), cores=2 if quick else 16)
    bench_scaling.scaling(table, "LimitOrderBook-v0", [2, 16], 1)
    verdicts = {what: verdict for what, _, bar, verdict in table.rows if bar}
    two_core = verdicts["LimitOrderBook-v0 x64, proc 2 workers vs sync"]
    sixteen_core = [
        verdicts["LimitOrderBook-v0 x64, proc 16 workers vs sync"],
        verdicts["LimitOrderBook-v0 x64, proc 16 workers: parent CPU per sub-env step"],
    ]
    if quick:
        assert (two_core, sixteen_core) == ("met", ["not judged here"] * 2)
    else:
        assert (two_core, sixteen_core) == ("not judged here", ["met", "met"])


def test_bench_scaling_reports_the_hosts_own_ceiling_as_many_processes_against_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The 2-core bar read alone said NOT MET on a host whose two vCPUs give 1.5x to any two
    # processes: the row beside it says what the host allows.
    bench_scaling = _benchmark("bench_scaling", monkeypatch)
    from concurrent.futures import ThreadPoolExecutor

    units: list[int] = []

    def race(timers: dict[str, Any], rounds: int) -> None:
        for name, timer in timers.items():
            timer.call(0)
            units.append(timer.per_call)
            timer.rate = {"one": 100.0, "all": 170.0}[name]

    monkeypatch.setattr(bench_scaling, "ProcessPoolExecutor", ThreadPoolExecutor)
    monkeypatch.setattr(bench_scaling, "SPIN", 10)
    monkeypatch.setattr(bench_scaling, "race", race)
    table = bench_scaling.Table(float("inf"), cores=2)
    bench_scaling.host_ceiling(table, 2, 1)
    assert table.rows == [
        ("this host: 2 processes of pure-Python work vs 1 (the ceiling of row 1)", "1.70x", "", "")
    ]
    assert units == [1, 2]  # one loop alone, then two at once


def test_bench_ray_reports_env_steps_per_second(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: its "steps/s" were VecEnv calls per second (8 sub-envs each), where every other
    # benchmark counts env steps.
    bench_ray = _benchmark("bench_ray", monkeypatch)
    cluster: Any = types.ModuleType("sekai.ray._cluster")  # no Ray needed: nothing is timed
    cluster.connect = lambda address: types.SimpleNamespace(shutdown=lambda: None)
    monkeypatch.setitem(sys.modules, "sekai.ray._cluster", cluster)
    monkeypatch.setattr(bench_ray, "_installed", lambda module: True)
    monkeypatch.setattr(bench_ray, "_loopback_only", lambda: True)
    per_call = {"sync": 0.008, "proc": 0.004, "ray": 0.005}  # seconds per VecEnv call
    monkeypatch.setattr(bench_ray, "_measure", lambda *args: per_call)
    assert bench_ray.main(["--json"]) == 0
    cpu = json.loads(capsys.readouterr().out)["cpu_bound"]
    assert cpu["num_envs"] == 8
    assert cpu["env_steps_per_s"] == pytest.approx({"sync": 1000.0, "proc": 2000.0, "ray": 1600.0})
    assert cpu["ms_per_call"] == pytest.approx({"sync": 8.0, "proc": 4.0, "ray": 5.0})
    assert bench_ray.main([]) == 0
    text = capsys.readouterr().out
    assert "  sync    1000.0 steps/s     8.00 ms/call  x1.00" in text
    assert "  proc    2000.0 steps/s     4.00 ms/call  x2.00" in text
