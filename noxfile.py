"""Every task of the sekai monorepo: per-distribution tests, wheels, integration, lint, docs."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import nox

nox.needs_version = ">=2025.2.9"
# uv when it is importable or on PATH (the README installs it next to nox), else virtualenv.
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_external_run = True

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
WHEELHOUSE = ROOT / ".nox" / "_wheelhouse"
PACKS = ("sekai-example-pack", "sekai-broken-pack")
# What the docs pages use beyond the first-party extras: pygame, with which the migration page
# renders gymnasium's own CartPole through GymnasiumRenderer. The dev venv and the docs session
# both install it, so the pages run in the venv the README's first command sets up (all but the
# SB3/MaskablePPO training examples, which only the docs session installs for, and the
# sekai-jax, sekai-torch and sekai-ray pages).
PAGES_NEED = ("gymnasium[classic-control]>=1.0",)
# torch only as this build, the CPU one: PyPI's torch for Linux is the multi-GB CUDA build.
# _install_torch takes the wheel from pip's find-links folders when the machine keeps one
# there, else from the PyTorch CPU index.
TORCH = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ARRAY_API_COMPAT = "array-api-compat>=1.4"


@dataclass(frozen=True)
class Distribution:
    """How one first-party distribution is installed for its own test session."""

    deps: tuple[str, ...] = ()
    """First-party distributions it depends on (installed editable with it)."""
    extras: tuple[str, ...] = ()
    """Its own extras, installed with it."""
    test_first_party: tuple[str, ...] = ()
    """Other first-party distributions its tests use (installed editable too)."""
    test_requires: tuple[str, ...] = ()
    """Third-party packages its tests need beyond the ``test`` dependency group."""


# The one table of guide §9. Heavy packages only where a test suite needs them.
DISTRIBUTIONS: dict[str, Distribution] = {
    # gymnasium: the spaces tests compare reprs, flattening and sampling with gymnasium's.
    "sekai-core": Distribution(extras=("render",), test_requires=("gymnasium>=1.0",)),
    "sekai-classic": Distribution(
        deps=("sekai-core",),
        # gymnasium to compare dynamics; pillow/imageio for RecordFrames of rendered episodes.
        test_requires=("gymnasium>=1.0", "pillow>=9.0", "imageio>=2.28", "imageio-ffmpeg>=0.4.8"),
    ),
    "sekai-finance": Distribution(
        deps=("sekai-core",),
        extras=("pandas",),
        # Market-v0/LimitOrderBook-v0 are checked through the gymnasium and PettingZoo bridges.
        test_first_party=("sekai-compat",),
        # pillow/imageio(-ffmpeg): GIF/MP4 recording and episode-report PNGs.
        # array-api-compat: the kernel tests call the finance kernels on its numpy namespace.
        test_requires=(
            ARRAY_API_COMPAT,
            "gymnasium>=1.0",
            "pettingzoo>=1.24",
            "pillow>=9.0",
            "imageio>=2.28",
            "imageio-ffmpeg>=0.4.8",
        ),
    ),
    "sekai-compat": Distribution(
        deps=("sekai-core",),
        extras=("gymnasium", "pettingzoo"),
        # The bridges are tested on CartPole, Acrobot and Portfolio-v0; SB3 trains through to_sb3.
        test_first_party=("sekai-classic", "sekai-finance"),
        # The migration page's long training runs are checked by the docs session (--slow).
        test_requires=("stable-baselines3>=2.0", "sb3-contrib>=2.0", TORCH),
    ),
    "sekai-cli": Distribution(deps=("sekai-core",), test_first_party=("sekai-classic",)),
}
FIRST_PARTY = tuple(DISTRIBUTIONS)
# sekai-ray is tested only in its own session, the only one that installs Ray (guide §9): it is
# not in DISTRIBUTIONS, so integration, typecheck, docs, bench and dev stay Ray-free.
RAY = "sekai-ray"
# The accelerator modes, likewise each tested only in its own session, the only ones that install
# its library (CPU builds): no other session (integration, typecheck, docs tests) imports them.
JAX_CPU = "jax[cpu]>=0.4.30"
ACCEL: dict[str, str] = {"sekai-jax": JAX_CPU, "sekai-torch": TORCH}

# Which wheels each integration profile installs (guide §9); sekai-ray only in its own session.
PROFILES: dict[str, tuple[str, ...]] = {
    "full": (*FIRST_PARTY, *PACKS),
    "minimal": ("sekai-core", "sekai-cli", *PACKS),
}

# Only 0: pytest's 5 ("no tests were collected") means a session checked nothing (a wrong path,
# a marker that selects nothing, a suite that was deleted), which must fail, not pass.
PYTEST_OK = [0]

# Hypothesis' built-in "ci" profile: derandomized, so a nox run is reproducible; plain `pytest`
# keeps exploring new random examples during development.
HYPOTHESIS_CI = "--hypothesis-profile=ci"

# pytest-xdist: one worker per CPU, and an idle worker takes queued tests from a busy one, so a
# suite does not end waiting on one worker's tail (with --slow the training runs start first).
# Not for sekai-ray, whose tests share one local Ray cluster.
PARALLEL = ("-n", "auto", "--dist", "worksteal")
# One BLAS/torch thread per process in the docs session: its three training runs overlap on the
# workers, and two threads each only contend (measured: 5 min 10 s against 6 min 5 s).
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


def _path(dist: str) -> str:
    """Return the source folder of a first-party distribution or a test pack."""
    if dist in PACKS:
        return str(ROOT / "tests-integration" / "packs" / dist)
    return str(ROOT / "packages" / dist)


def _editable(dist: str, extras: tuple[str, ...] = ()) -> list[str]:
    """Return the pip arguments installing ``dist`` (with ``extras``) in editable mode."""
    suffix = f"[{','.join(extras)}]" if extras else ""
    return ["-e", f"{_path(dist)}{suffix}"]


def _all_editable(*, extras: bool) -> list[str]:
    """Return the pip arguments installing every first-party distribution editable."""
    args: list[str] = []
    for name, dist in DISTRIBUTIONS.items():
        args += _editable(name, dist.extras if extras else ())
    return args


def _groups(*names: str) -> tuple[str, ...]:
    """Return the requirements of the root ``[dependency-groups]`` named."""
    return nox.project.dependency_groups(PYPROJECT, *names)


_ASSERT_EDITABLE = """
import json, sys
from importlib.metadata import distributions

shipped = []
for dist in distributions():
    name = (dist.metadata["Name"] or "").lower()
    if not name.startswith("sekai"):
        continue
    direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
    if not direct_url.get("dir_info", {}).get("editable", False):
        shipped.append(f"{dist.metadata['Name']} {dist.version}")
if shipped:
    sys.exit(
        "non-editable sekai distributions in a test venv (an index release shadowing the "
        "checkout?): " + ", ".join(shipped)
    )
"""


def _uv_binary() -> str | None:
    """The uv executable that ``nox[uv]`` installed next to nox (else one on PATH), or None."""
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def _pip_find_links() -> list[str]:
    """The existing folders of pip's ``find-links`` setting (any scope), in its order."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    )
    folders: list[str] = []
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.rsplit(".", 1)[-1] == "find-links":
            for entry in value.strip().strip("'\"").split():
                if entry.startswith("file:"):  # pip takes file:// URLs as well as paths
                    entry = url2pathname(urlparse(entry).path)
                if Path(entry).is_dir():
                    folders.append(entry)
    return list(dict.fromkeys(folders))


def _local_torch_wheel() -> Path | None:
    """The ``TORCH`` wheel for this interpreter and CPU in pip's find-links folders, if any."""
    version = TORCH.partition("==")[2]
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    for folder in _pip_find_links():
        for wheel in sorted(Path(folder).glob(f"torch-{version}*-{tag}-{tag}-*.whl")):
            # Windows reports "AMD64" where the wheel tag says "amd64"
            if wheel.name.lower().endswith(f"_{platform.machine().lower()}.whl"):
                return wheel
    return None


def _install_torch(session: nox.Session) -> None:
    """Install ``TORCH``'s CPU build, never PyPI's (the multi-GB CUDA one).

    A local wheel in pip's find-links folders (this machine's; no network needed): with uv
    that wheel file (its dependencies from the index), without uv pip, whose configuration
    points at it. No such wheel: pip from the PyTorch CPU index (``TORCH_CPU_INDEX``), which
    also serves torch's dependencies.
    """
    wheel = _local_torch_wheel()
    if wheel is not None and session.venv_backend == "uv":
        session.install(str(wheel))
        return
    session.install("pip")
    if wheel is not None:
        session.run("python", "-m", "pip", "install", "-q", TORCH)
        return
    session.log(f"no local {TORCH} wheel in pip's find-links: installing from {TORCH_CPU_INDEX}")
    session.run("python", "-m", "pip", "install", "-q", "--index-url", TORCH_CPU_INDEX, TORCH)


@nox.session
@nox.parametrize("dist", [*DISTRIBUTIONS, RAY, *ACCEL], ids=[*DISTRIBUTIONS, RAY, *ACCEL])
def tests(session: nox.Session, dist: str) -> None:
    """Run one distribution's tests in a venv holding only it and its declared dependencies."""
    if dist == RAY:
        _tests_ray(session)
        return
    if dist in ACCEL:
        _tests_accel(session, dist)
        return
    spec = DISTRIBUTIONS[dist]
    args: list[str] = []
    for dep in (*spec.deps, *spec.test_first_party):
        args += _editable(dep)
    args += _editable(dist, spec.extras)
    if TORCH in spec.test_requires:
        _install_torch(session)  # first: the installs below then find torch satisfied
    others = [req for req in spec.test_requires if req != TORCH]
    session.install(*args, *others, *_groups("test"))
    # What `pip list --exclude-editable | grep sekai` checks (dagster's tox guard), read from the
    # same direct_url.json pip reads, so it also works in uv venvs that have no pip.
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    session.log("checked: every sekai* distribution in this venv is an editable checkout")
    tests_dir = Path(_path(dist)) / "tests"
    if not tests_dir.is_dir():
        session.error(
            f"{dist} has no tests/ folder ({tests_dir}): this session would check nothing"
        )
    session.run(
        "pytest",
        str(tests_dir.relative_to(ROOT)),
        HYPOTHESIS_CI,
        *PARALLEL,
        *session.posargs,
        success_codes=PYTEST_OK,
    )


# requires-python says ">=3.10" but CI runs 3.11 only: these sessions check the other Pythons
# (`nox -s tests-pythons`, not run by default; an interpreter missing here is skipped).
OTHER_PYTHONS = ["3.10", "3.12", "3.13"]
ACROSS_PYTHONS = ("sekai-core", "sekai-classic", "sekai-finance")


@nox.session(name="tests-pythons", python=OTHER_PYTHONS, default=False)
def tests_pythons(session: nox.Session) -> None:
    """Run sekai-core's, sekai-classic's and sekai-finance's tests on another Python, in one
    venv holding them, their declared dependencies and what their tests need."""
    extras: dict[str, tuple[str, ...]] = {}  # each first-party distribution once, in order
    requires: list[str] = []
    for name in ACROSS_PYTHONS:
        spec = DISTRIBUTIONS[name]
        for dep in (*spec.deps, *spec.test_first_party):
            extras.setdefault(dep, ())
        extras[name] = spec.extras
        requires += [req for req in spec.test_requires if req != TORCH]
    args = [arg for dist, extra in extras.items() for arg in _editable(dist, extra)]
    session.install(*args, *dict.fromkeys(requires), *_groups("test"))
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    for name in ACROSS_PYTHONS:
        session.run(
            "pytest", f"packages/{name}/tests", HYPOTHESIS_CI, *PARALLEL, *session.posargs,
            success_codes=PYTEST_OK,
        )  # fmt: skip


@nox.session(name="tests-pythons-jax", python=OTHER_PYTHONS, default=False)
def tests_pythons_jax(session: nox.Session) -> None:
    """Run sekai-jax's tests and the finance kernels' on another Python, with JAX (CPU).

    The newest JAX that Python takes (on 3.10 an older one). Without torch, whose CPU build only
    the CI Python gets: the tests that need it too skip (the ``accel`` session runs them).
    """
    _install_accel(session, JAX_CPU)
    finance = DISTRIBUTIONS["sekai-finance"]
    session.install(
        *_editable("sekai-core"),
        *_editable("sekai-classic"),
        *_editable("sekai-finance", finance.extras),
        *_editable("sekai-jax"),
        ARRAY_API_COMPAT,  # sekai-torch's dependency in `accel`, needed by the kernel tests
        *_groups("test"),
    )
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    session.run(
        "pytest", "packages/sekai-jax/tests", "packages/sekai-finance/tests/envs/kernels",
        HYPOTHESIS_CI, *PARALLEL, *session.posargs,
        success_codes=PYTEST_OK,
    )  # fmt: skip


def _tests_ray(session: nox.Session) -> None:
    """sekai-ray's tests, with Ray, inside a network namespace that only has loopback."""
    session.install(*_editable("sekai-core"), *_editable(RAY), *_groups("test"))
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    netns = Path(_path(RAY), "tests", "run-in-netns.sh").relative_to(ROOT)
    # The Ray cluster the tests start can reach nothing beyond this machine (issue 14).
    session.run(
        "bash", str(netns), "python", "-m", "pytest", f"packages/{RAY}/tests", HYPOTHESIS_CI,
        *session.posargs,
        external=True,
    )  # fmt: skip


def _install_accel(session: nox.Session, *libraries: str) -> None:
    """Install the accelerator libraries (``JAX_CPU``, ``TORCH``): torch first, as ``tests``."""
    if TORCH in libraries:
        _install_torch(session)
    others = [lib for lib in libraries if lib != TORCH]
    if others:
        session.install(*others)


def _tests_accel(session: nox.Session, dist: str) -> None:
    """sekai-jax's or sekai-torch's tests (on CPU), with its library and the CartPole kernel."""
    _install_accel(session, ACCEL[dist])
    session.install(
        *_editable("sekai-core"), *_editable("sekai-classic"), *_editable(dist), *_groups("test")
    )
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    session.run(
        "pytest", f"packages/{dist}/tests", HYPOTHESIS_CI, *PARALLEL, *session.posargs,
        success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session
def accel(session: nox.Session) -> None:
    """Cross-backend tests of the finance kernels, with JAX and torch (CPU builds) installed.

    Equivalence under the same draws and the baselines' returns on every backend (issue 27),
    and the examples of docs/pages/accelerators.md (the docs session has neither library).
    """
    _install_accel(session, JAX_CPU, TORCH)
    session.install(
        *_editable("sekai-core"),
        *_editable("sekai-classic"),
        *_editable("sekai-finance", DISTRIBUTIONS["sekai-finance"].extras),
        *(arg for dist in ACCEL for arg in _editable(dist)),
        *_groups("test"),
    )
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    session.run(
        "pytest", "packages/sekai-finance/tests/envs/kernels",
        "packages/sekai-jax/tests/test_docs.py", HYPOTHESIS_CI, *PARALLEL, *session.posargs,
        success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every distribution (the meta-distribution and both packs too) into the wheelhouse."""
    session.install("hatchling", "pip")
    if WHEELHOUSE.exists():
        shutil.rmtree(WHEELHOUSE)
    WHEELHOUSE.mkdir(parents=True)
    # sekai-ray is built (its wheel is checked by test_packaging) but installed only by its own
    # tests session: ray is too heavy for the integration venvs.
    sources = [_path(d) for d in FIRST_PARTY] + [str(ROOT / "packages" / "sekai")]
    for extra in (RAY, *ACCEL):  # built for the GPU host and test_packaging, not for integration
        if (ROOT / "packages" / extra / "pyproject.toml").is_file():
            sources.append(str(ROOT / "packages" / extra))
    sources += [_path(p) for p in PACKS if Path(_path(p), "pyproject.toml").is_file()]
    session.run(
        "python", "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--wheel-dir", str(WHEELHOUSE), *sources,
    )  # fmt: skip
    for wheel in sorted(WHEELHOUSE.glob("*.whl")):
        session.log(f"built {wheel.name}")


def _wheel(session: nox.Session, dist: str) -> str:
    """Return the path of ``dist``'s wheel in the wheelhouse, failing when it was not built."""
    stem = dist.replace("-", "_")
    found = sorted(WHEELHOUSE.glob(f"{stem}-*.whl"))
    if len(found) != 1:
        session.error(
            f"expected one wheel of {dist} in {WHEELHOUSE}, found {len(found)}: "
            "run `nox -s wheels` (the integration sessions require it)"
        )
    return str(found[0])


@nox.session(requires=["wheels"])
@nox.parametrize("profile", list(PROFILES), ids=list(PROFILES))
def integration(session: nox.Session, profile: str) -> None:
    """Install built wheels by file name and run the cross-distribution tests of one profile."""
    missing = [p for p in PACKS if not Path(_path(p), "pyproject.toml").is_file()]
    wheel_files = [_wheel(session, d) for d in PROFILES[profile] if d not in missing]
    if missing:
        session.warn(f"packs not written yet, not installed: {', '.join(missing)}")
    session.install(*wheel_files, *_groups("test"))
    session.run(
        "pytest", "tests-integration", "-m", profile, *PARALLEL, *session.posargs,
        env={"SEKAI_INTEGRATION_PROFILE": profile, "SEKAI_WHEELHOUSE": str(WHEELHOUSE)},
        success_codes=PYTEST_OK,
    )  # fmt: skip


@nox.session
def examples_accel(session: nox.Session) -> None:
    """Smoke-run the PPO examples on the accelerated envs (JAX and torch, CPU) and
    ``benchmarks/learning.py --quick``: a few updates each, finite losses (issue 28)."""
    _install_accel(session, JAX_CPU, TORCH)
    dists = ("sekai-core", "sekai-classic", "sekai-finance", *ACCEL)
    args = [arg for dist in dists for arg in _editable(dist)]
    session.install(*args, "flax", "optax", *_groups("test"))
    session.run("python", "-c", _ASSERT_EDITABLE, log=False)
    session.run(
        "pytest", "tests-integration/test_examples_accel.py", "-m", "accel", *PARALLEL,
        *session.posargs,
        env=ONE_THREAD,
    )  # fmt: skip


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff, and the import contracts with import-linter."""
    session.install(*_groups("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # The contracts (root pyproject.toml) span every distribution: join their src trees into one
    # `sekai` package, as installing the wheels does, and check that tree.
    tree = Path(session.create_tmp()) / "import-graph"
    shutil.rmtree(tree, ignore_errors=True)
    for src in sorted(ROOT.glob("packages/*/src/sekai")):
        shutil.copytree(src, tree / "sekai", dirs_exist_ok=True)
    session.run("lint-imports", str(ROOT / "pyproject.toml"), env={"PYTHONPATH": str(tree)})
    # The contracts must catch an upward import: add one to the copy (spaces -> plugins) and
    # require lint-imports to fail on it (exit 1), so a loosened contract fails this session.
    box = tree / "sekai" / "spaces" / "box.py"
    box.write_text(box.read_text() + "\nimport sekai.plugins  # a deliberate upward import\n")
    output = session.run(
        "lint-imports",
        str(ROOT / "pyproject.toml"),
        env={"PYTHONPATH": str(tree)},
        success_codes=[1],
        silent=True,
    )
    if output is None:  # --install-only: nothing ran, so there is nothing to check
        return
    if "sekai.spaces.box -> sekai.plugins" not in str(output):
        session.error(f"lint-imports did not report the deliberate upward import:\n{output}")
    session.log("the contracts reject a deliberate upward import (sekai.spaces -> sekai.plugins)")


def _install_typecheck(session: nox.Session) -> None:
    """Install what mypy checks (every distribution but the Ray and accelerator ones) and mypy."""
    session.install(
        *_all_editable(extras=False), "gymnasium>=1.0", "pettingzoo>=1.24", *_groups("typecheck")
    )


@nox.session
def typecheck(session: nox.Session) -> None:
    """Run mypy --strict (the root configuration) over every distribution's src/."""
    _install_typecheck(session)
    session.run("mypy", *session.posargs)


@nox.session(name="typecheck-pythons", default=False)
def typecheck_pythons(session: nox.Session) -> None:
    """Run mypy as ``typecheck`` does, against the stubs of Python 3.11, 3.12 and 3.13.

    ``typecheck`` checks those of 3.10 only, and NumPy's stubs type some results differently
    from 3.12 on: a ``type: ignore`` needed on 3.10 is then unused (``warn_unused_ignores``).
    """
    _install_typecheck(session)
    configured = PYPROJECT["tool"]["mypy"]["python_version"]  # what `typecheck` checks
    for version in sorted({"3.11", *OTHER_PYTHONS} - {configured}):
        session.run("mypy", "--python-version", version, *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site strictly and run every example of its pages.

    The examples that train models (SB3, a few minutes) run too, as CI requires; pass
    ``nox -s docs -- --fast`` to leave them out while editing pages.
    """
    # The example pack too: env-packs.md, the catalog and examples/env_pack.py show its env.
    pack = _editable("sekai-example-pack")
    session.install(*_all_editable(extras=True), *pack, *PAGES_NEED, *_groups("docs"))
    posargs = [arg for arg in session.posargs if arg != "--fast"]
    if "--fast" not in session.posargs:
        _install_torch(session)
        session.install("stable-baselines3", "sb3-contrib")
        posargs.append("--slow")
    # The tests first: the pages that draw the site's pictures keep them for the build, which
    # then shows the tested run's images instead of running those pages again.
    images = Path(session.create_tmp()) / "docs-images"
    shutil.rmtree(images, ignore_errors=True)
    images.mkdir(parents=True)
    kept = {"SEKAI_DOCS_IMAGES": str(images)}
    session.run(
        "pytest", "tests-integration", "-m", "docs", *PARALLEL, *posargs, env={**ONE_THREAD, **kept}
    )
    session.run(
        "mkdocs", "build", "--strict", "-f", "docs/mkdocs.yml",
        env={"NO_MKDOCS_2_WARNING": "1", **kept},
    )  # fmt: skip


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Run the scripts in benchmarks/ and summarise the import time of ``import sekai``.

    JAX and torch (CPU builds) are installed here too: ``bench_accel.py`` and ``sekai bench``
    report the JAX-CPU and torch-CPU modes next to numpy native. The posargs go to every
    script, each ignoring the options of the others: ``nox -s bench -- --quick`` smoke-runs all.
    """
    _install_accel(session, JAX_CPU, TORCH)
    accel = [arg for dist in ACCEL for arg in _editable(dist)]
    session.install(*_all_editable(extras=False), *accel, *_groups("bench"))
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        # bench_scaling.py's bars are for a 16-core host: here only its 2-core bar (--quick).
        # bench_accel.py picks its CPU table by itself when there is no GPU.
        quick = ["--quick"] if script.name == "bench_scaling.py" else []
        session.run("python", str(script.relative_to(ROOT)), *quick, *session.posargs)
    # Unguarded: a missing `sekai bench` or Portfolio-v0 fails the session instead of skipping.
    for mode in ("native", "sync", "proc", "jax", "torch"):
        session.run("sekai", "bench", "Portfolio-v0", "--num-envs", "16", "--mode", mode)
    output = session.run(
        "python", "-X", "importtime", "-c", "import sekai", silent=True, stderr=subprocess.STDOUT
    )
    if output is not None:  # None under --install-only, where nothing ran
        session.log(_importtime_summary(str(output)))


def _importtime_summary(report: str, top: int = 12) -> str:
    """Summarise ``python -X importtime`` output: the cost of sekai and the slowest imports."""
    rows: list[tuple[int, str]] = []
    for line in report.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        rows.append((int(cumulative), name.strip()))
    sekai_us = next((us for us, name in rows if name == "sekai"), None)
    if sekai_us is None:
        raise ValueError(f"`python -X importtime` reported no import of sekai:\n{report}")
    lines = [
        f"import sekai: {sekai_us / 1000:.1f} ms cumulative; {len(rows)} modules imported in all",
        *(f"  {us / 1000:8.1f} ms  {name}" for us, name in sorted(rows, reverse=True)[:top]),
    ]
    # Issue 2's acceptance: `import sekai` imports no plugin module and none of these.
    unwanted = sorted(
        name
        for _, name in rows
        if name.split(".")[0] in {"gymnasium", "pettingzoo", "cloudpickle"}
        or name.startswith("sekai.envs.")
    )
    if unwanted:
        lines.append(f"  imported by `import sekai` but should not be: {', '.join(unwanted)}")
    return "\n".join(lines)


@nox.session(default=False, venv_backend="none")
def dev(session: nox.Session) -> None:
    """Install every distribution editable into the interpreter running nox, then run sekai.

    With every extra (Pillow, gymnasium, PettingZoo, pandas), ``PAGES_NEED`` and the ``test``
    dependency group: the dev venv is where people try the docs and run a distribution's tests
    (``.venv/bin/python -m pytest packages/sekai-core/tests -q``). The docs pages run in it,
    except what needs more than it holds: the Stable-Baselines3 and MaskablePPO training
    examples of gymnasium-migration.md (torch, stable-baselines3 and sb3-contrib: ``nox -s
    docs``) and the pages of sekai-jax, sekai-torch and sekai-ray (accelerators.md,
    scaling-out.md: their own ``tests(...)`` sessions run them). None of those heavy libraries
    is installed here.
    """
    args = [*_all_editable(extras=True), *PAGES_NEED, *_groups("test")]
    if Path(_path("sekai-example-pack"), "pyproject.toml").is_file():
        args += _editable("sekai-example-pack")
    uv = _uv_binary()
    if uv is not None:  # nox[uv] brings it: the same install, resolved in seconds
        session.run(uv, "pip", "install", "--python", sys.executable, *args, external=True)
    else:
        session.run(sys.executable, "-m", "pip", "install", *args, external=True)
    # The console script next to this interpreter (sekai.exe on Windows), not one on PATH.
    sekai_script = shutil.which("sekai", path=sysconfig.get_path("scripts")) or "sekai"
    # Unguarded: a command or env that is missing or broken fails the session, never a skip.
    for argv in (["list"], ["check", "CartPole-v1"], ["bench", "CartPole-v1", "--steps", "2000"]):
        session.run(sekai_script, *argv, external=True)
    activate = Path(os.path.relpath(sys.prefix)) / "bin" / "activate"
    session.log(f"sekai is installed editable in {sys.prefix}; use it with `source {activate}`")
