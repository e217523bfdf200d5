"""Run every ```python block of docs/pages/*.md and compare what it prints with its comments.

Each page becomes one script (its blocks in order, tabbed ``=== "gymnasium"`` blocks included),
run in a subprocess from a real file, so ``if __name__ == "__main__":`` is true and ProcVecEnv's
forkserver workers can import it. A ``print(...)  # text`` statement must print ``text``: exact
after whitespace normalisation; ``# ~ text`` compares only the non-numeric skeleton; ``# a | b``
lists successive executions of the same print; ``~`` is only for timings and training results.
Nothing else may be printed: a print without such a comment, a line of stdout that no print of
the page made, or any stderr, fails the page. An HTML comment ``<!-- docs-test: slow -->`` before
a block marks it as training models (run only with ``--slow``); ``<!-- docs-test: skip: why -->``
keeps a block out of the script (e.g. top-level ``await``). Every page must pass, and every
example line of the user's own pages (the contract, ``shared/spec/user-docs``, copied into
``tests-integration/contract``) must be in a block that runs.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import tokenize
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Venv

pytestmark = pytest.mark.docs

PAGES_DIR = Path(__file__).resolve().parents[1] / "docs" / "pages"
FAST_TIMEOUT = 240.0  # seconds per page; below the root pytest-timeout of 300
SLOW_TIMEOUT = 1800.0

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)")
_MARKER = re.compile(
    r"^\s*<!--\s*docs-test:\s*(?P<kind>slow|skip)\s*(?::\s*(?P<why>.*?))?\s*-->\s*$"
)
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w])|"
    r"(?<![\w.])[-+]?(?:inf|nan)\b"
)


@dataclass(frozen=True)
class Block:
    """One ```python block of a page."""

    page: str
    line: int  # markdown line of the block's first code line (1-based)
    code: str
    slow: bool = False
    skip: str | None = None


@dataclass(frozen=True)
class Expected:
    """One expected output: its text and whether numbers are free."""

    text: str
    approximate: bool

    def matches(self, printed: str) -> bool:
        """Tell whether ``printed`` is this output (exactly, or up to numbers if approximate)."""
        if self.approximate:
            return skeleton(self.text) == skeleton(printed)
        return normalise(self.text) == normalise(printed)


@dataclass(frozen=True)
class Expectation:
    """The trailing comment of one print statement."""

    line: int  # script line range of the print statement
    end_line: int
    comment: str
    outputs: tuple[Expected, ...]


@dataclass
class Script:
    """A page turned into one Python file, with the map back to markdown lines."""

    text: str
    origin: dict[int, tuple[str, int]] = field(default_factory=dict)  # script line -> (page, line)

    def where(self, line: int) -> str:
        """Return ``page:line`` of a script line, or ``script:line`` for the prelude."""
        page, md_line = self.origin.get(line, ("script", line))
        return f"{page}:{md_line}"


def normalise(text: str) -> str:
    """Collapse every run of whitespace (newlines included) into one space."""
    return " ".join(text.split())


def skeleton(text: str) -> str:
    """Replace every number in ``text`` by ``#``: what an approximate comparison looks at."""
    return _NUMBER.sub("#", normalise(text))


def parse_comment(comment: str) -> tuple[Expected, ...]:
    """Parse ``# text``, ``# ~ text`` or ``# a | b | c`` into the outputs it promises."""
    body = comment.lstrip("#").strip()
    every_approximate = body.startswith("~")
    if every_approximate:
        body = body[1:].strip()
    outputs = []
    for part in body.split(" | "):
        approximate = every_approximate or part.strip().startswith("~")
        outputs.append(Expected(part.strip().lstrip("~").strip(), approximate))
    return tuple(outputs)


def extract_blocks(markdown: str, page: str) -> list[Block]:
    """Return the ```python blocks of a page in order, dedented to their fence's indentation."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    marker: re.Match[str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        found = _MARKER.match(line)
        if found:
            marker = found
            index += 1
            continue
        fence = _FENCE.match(line)
        if not fence:
            if marker and line.strip():
                raise ValueError(f"{page}:{index + 1}: a docs-test marker must precede a block")
            index += 1
            continue
        indent, chars, lang = fence["indent"], fence["fence"], fence["lang"]
        end = index + 1
        while end < len(lines) and not (
            lines[end].startswith(indent) and lines[end].strip().startswith(chars)
        ):
            end += 1
        if end == len(lines):
            raise ValueError(f"{page}:{index + 1}: code block is never closed")
        body = lines[index + 1 : end]
        if lang == "python":
            stray = [
                n for n, text in enumerate(body) if text.strip() and not text.startswith(indent)
            ]
            if stray:
                where = index + 2 + stray[0]
                raise ValueError(f"{page}:{where}: line indented less than its code fence")
            code = "\n".join(text[len(indent) :] for text in body) + "\n"
            slow = bool(marker and marker["kind"] == "slow")
            skip = (
                (marker["why"] or "no reason given")
                if marker and marker["kind"] == "skip"
                else None
            )
            blocks.append(Block(page, index + 2, code, slow=slow, skip=skip))
        elif marker:
            raise ValueError(f"{page}:{index + 1}: a docs-test marker must precede a python block")
        marker = None
        index = end + 1
    if marker:
        raise ValueError(f"{page}: a docs-test marker at the end of the page marks no block")
    return blocks


# Shadows print() in the page's module only: records (line, text) of every print the page's own
# code makes in the main process to a JSON-lines file. Its copies in the forkserver and in
# workers print nothing: their output would interleave with the main process's at random, and a
# reader of the page sees each print once.
_PRELUDE = """\
import builtins as _docs_builtins, io as _docs_io, json as _docs_json
import os as _docs_os, sys as _docs_sys
_DOCS_RECORD = _docs_os.environ.get("SEKAI_DOCS_RECORD")
_DOCS_MAIN = __name__ == "__main__"
_DOCS_PID = _docs_os.getpid()
def print(*args, **kwargs):
    if _DOCS_RECORD and kwargs.get("file") is None:
        if not (_DOCS_MAIN and _docs_os.getpid() == _DOCS_PID):
            return
        buffer = _docs_io.StringIO()
        _docs_builtins.print(*args, **{**kwargs, "file": buffer})
        with open(_DOCS_RECORD, "a", encoding="utf-8") as record:
            line = _docs_sys._getframe(1).f_lineno
            record.write(_docs_json.dumps([line, buffer.getvalue()]) + "\\n")
    _docs_builtins.print(*args, **kwargs)
"""


def build_script(blocks: list[Block], *, include_slow: bool) -> Script:
    """Join the runnable blocks into one script after the recording prelude."""
    lines = _PRELUDE.splitlines()
    script = Script("")
    for block in blocks:
        if block.skip is not None or (block.slow and not include_slow):
            continue
        lines.append(f"# --- {block.page}:{block.line} ---")
        for offset, code_line in enumerate(block.code.splitlines()):
            lines.append(code_line)
            script.origin[len(lines)] = (block.page, block.line + offset)
    script.text = "\n".join(lines) + "\n"
    return script


def find_expectations(script: Script) -> dict[int, Expectation]:
    """Map every line of each commented ``print(...)`` statement to its expectation."""
    tree = ast.parse(script.text)
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(script.text).readline)
        if token.type == tokenize.COMMENT
    }
    found: dict[int, Expectation] = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "print"
        ):
            continue
        end = node.end_lineno or node.lineno
        comment = comments.get(end) or comments.get(node.lineno)
        if comment is None:
            continue
        expectation = Expectation(node.lineno, end, comment, parse_comment(comment))
        for line in range(node.lineno, end + 1):
            found[line] = expectation
    return found


@dataclass(frozen=True, order=True)
class Problem:
    """One difference between the page and what it printed, in execution order."""

    order: float  # index of the offending print among all recorded prints; inf if never printed
    message: str


def compare(script: Script, records: list[tuple[int, str]]) -> list[Problem]:
    """Compare recorded prints with the comments of their statements; first problem first."""
    expectations = find_expectations(script)
    printed: dict[Expectation, list[tuple[int, str]]] = {e: [] for e in expectations.values()}
    source = script.text.splitlines()
    problems: list[Problem] = []
    unshown: set[int] = set()
    for order, (line, text) in enumerate(records):
        if line in expectations:
            printed[expectations[line]].append((order, text.rstrip("\n")))
        elif line not in unshown:  # a reader would see output the page does not show
            unshown.add(line)
            problems.append(
                Problem(
                    order,
                    f"{script.where(line)}: {source[line - 1].strip()}\n  printed "
                    f"{normalise(text)!r}, but no comment on the statement says what it prints",
                )
            )
    for exp, runs in printed.items():
        head = f"{script.where(exp.line)}: {source[exp.line - 1].strip()}"
        problems += _check_runs(head, exp, runs)
    return sorted(problems)


def _check_runs(head: str, exp: Expectation, runs: list[tuple[int, str]]) -> list[Problem]:
    """Check the successive outputs of one print statement against its comment."""
    outputs = exp.outputs
    if not runs:
        return [Problem(float("inf"), f"{head}\n  this print never ran")]
    if len(outputs) > 1 and len(runs) == 1:
        # "a | b" printed once is the literal text "a | b", not two outputs.
        body = exp.comment.lstrip("#").strip()
        whole = Expected(body.lstrip("~").strip(), body.startswith("~"))
        if whole.matches(runs[0][1]):
            return []
    count_error = f"{head}\n  ran {len(runs)} times; the comment lists {len(outputs)} outputs"
    problems: list[Problem] = []
    for count, (order, text) in enumerate(runs):
        if len(outputs) > 1 and count >= len(outputs):
            return [*problems, Problem(order, count_error)]
        want = outputs[count] if len(outputs) > 1 else outputs[0]
        if not want.matches(text):
            how = "numbers free" if want.approximate else "exact"
            nth = f" (run {count + 1} of {len(runs)})" if len(runs) > 1 else ""
            problems.append(
                Problem(
                    order,
                    f"{head}{nth}\n  expected ({how}): {want.text}\n"
                    f"  printed:           {normalise(text)}",
                )
            )
    if len(outputs) > 1 and len(runs) < len(outputs):
        problems.append(Problem(runs[-1][0] + 0.5, count_error))
    return problems


def _read_records(path: Path) -> list[tuple[int, str]]:
    """The ``(line, text)`` prints recorded in ``path`` (none if the file is absent)."""
    if not path.exists():
        return []
    return [
        (int(line), str(text))
        for line, text in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def stray_output(stdout: str, stderr: str, records: list[tuple[int, str]]) -> list[str]:
    """Lines of stdout that no print of the page made, then every line of stderr."""
    own = Counter(line for _, text in records for line in text.splitlines())
    stray = []
    for line in stdout.splitlines():
        if own[line] > 0:
            own[line] -= 1
        elif line.strip():
            stray.append(line)
    return stray + [f"stderr: {line}" for line in stderr.splitlines() if line.strip()]


def _map_traceback(text: str, script: Script, path: Path) -> str:
    """Point traceback lines of the script at the markdown lines they came from."""

    def repl(match: re.Match[str]) -> str:
        return f'File "{script.where(int(match["line"]))}"'

    return re.sub(rf'File "{re.escape(str(path))}", line (?P<line>\d+)', repl, text)


def run_page(
    blocks: list[Block],
    workdir: Path,
    *,
    include_slow: bool,
    timeout: float,
    interpreter: str | Path = sys.executable,
) -> str:
    """Run a page's script and return a report of its problems ('' when everything matched).

    ``interpreter`` is the Python that runs it: this venv's by default, or another venv's.
    """
    script = build_script(blocks, include_slow=include_slow)
    try:
        compile(script.text, "page", "exec")
    except SyntaxError as exc:
        return f"{script.where(exc.lineno or 0)}: the page's code does not compile: {exc.msg}"
    name = re.sub(r"\W", "_", Path(blocks[0].page).stem) if blocks else "page"
    path = workdir / f"docs_{name}.py"
    path.write_text(script.text, encoding="utf-8")
    record = workdir / f"docs_{name}.jsonl"
    record.unlink(missing_ok=True)
    # Headless: SDL's video probe (pygame, under gymnasium's rgb_array rendering) would complain
    # on stderr about a display server that frames drawn off-screen do not need.
    env = {"SDL_VIDEODRIVER": "dummy", **os.environ, "SEKAI_DOCS_RECORD": str(record)}
    process = subprocess.Popen(
        [str(interpreter), str(path)], cwd=workdir, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    failure = ""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # workers and the forkserver too
        stdout, stderr = process.communicate()
        failure = f"the page did not finish within {timeout:.0f} s"
    else:
        if process.returncode != 0:
            failure = f"the page exited with status {process.returncode}"
    records = _read_records(record)
    problems = compare(script, records)
    if failure:
        problems = [p for p in problems if p.order != float("inf")]
    stray = [] if failure else stray_output(stdout, stderr, records)
    if not problems and not failure and not stray:
        return ""
    parts = []
    if stray:
        lines = "\n".join(f"    {line}" for line in stray[:10])
        parts.append(
            "the page printed what it does not show (a library's print or warning: show it on "
            f"the page or silence it in the example):\n{lines}"
        )
    if problems:
        first = problems[0]
        earlier = [normalise(text) for _, text in records[: int(min(first.order, len(records)))]]
        context = "\n".join(f"    {text}" for text in earlier[-3:]) or "    (nothing)"
        parts.append(f"first mismatch: {first.message}\n  printed just before:\n{context}")
        if len(problems) > 1:
            others = "\n".join(p.message for p in problems[1:6])
            parts.append(f"{len(problems) - 1} more mismatch(es):\n{others}")
    if failure:
        tail = "\n".join(_map_traceback(stderr, script, path).splitlines()[-25:])
        parts.append(f"{failure}; end of its stderr:\n{tail}")
    parts.append(f"script: {path}\nend of its stdout:\n" + "\n".join(stdout.splitlines()[-10:]))
    return "\n\n".join(parts)


def _pages() -> list[Path]:
    return sorted(PAGES_DIR.glob("*.md"))


def _page_blocks(page: Path) -> list[Block]:
    return extract_blocks(page.read_text(encoding="utf-8"), f"docs/pages/{page.name}")


def _runnable(*, slow: bool) -> list[object]:
    """Parameters for the pages with something to run (only pages with slow blocks if ``slow``)."""
    params: list[object] = []
    for page in _pages():
        try:
            blocks = _page_blocks(page)
        except ValueError:  # reported by test_page_turns_into_a_valid_script
            blocks = [Block(page.name, 0, "", slow=True)]
        if not any(b.skip is None for b in blocks) or (slow and not any(b.slow for b in blocks)):
            continue
        marks = [pytest.mark.slow, pytest.mark.timeout(SLOW_TIMEOUT + 60)] if slow else []
        params.append(pytest.param(page, marks=marks, id=page.stem))
    return params


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.stem)
def test_page_turns_into_a_valid_script(page: Path) -> None:
    blocks = _page_blocks(page)
    script = build_script(blocks, include_slow=True)
    compile(script.text, str(page), "exec")  # a SyntaxError names the script line
    for expectation in find_expectations(script).values():
        assert all(o.text for o in expectation.outputs), script.where(expectation.line)
    assert all(b.skip != "no reason given" for b in blocks), "say why a block is skipped"
    for block in (b for b in blocks if b.skip is not None):
        # Not run here, but still Python: some run nowhere (top-level await, a Ray cluster).
        compile(block.code, f"{block.page}:{block.line}", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


# What may differ from run to run: a duration or a rate. Seeded figures never do, so a page
# compares them exactly; training runs (slow blocks) vary with the platform's floating point.
_TIMING = re.compile(r"\d\s*(?:ms|s|µs|ns|steps/s|times sync)\b")


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.stem)
def test_approximate_outputs_are_only_timings_or_training_results(page: Path) -> None:
    loose = []
    for block in _page_blocks(page):
        if block.slow or block.skip is not None:
            continue
        script = build_script([block], include_slow=True)
        for expectation in set(find_expectations(script).values()):
            for output in expectation.outputs:
                if output.approximate and not _TIMING.search(output.text):
                    loose.append(f"{script.where(expectation.line)}: ~ {output.text}")
    assert not loose, "seeded outputs must be compared exactly (drop the ~):\n" + "\n".join(loose)


# The user's own pages, the contract: nothing runs them, so each must have its examples in the
# docs page named here, in blocks this module runs. CONTRACT_DIR holds a copy of them (the
# originals, shared/spec/user-docs, live outside the repository, so a clean clone lacks them);
# the copy is compared with the originals wherever they are beside or in the checkout.
CONTRACT_DIR = Path(__file__).resolve().parent / "contract"
CONTRACT_PAGES = {
    "quickstart.txt": "quickstart.md",
    "async-environments.txt": "async.md",
    "vector-environments.txt": "vector.md",
    "gymnasium-migration.txt": "gymnasium-migration.md",
}
NOT_CONTRACT = {"reference-gymnasium-vector-tutorial.txt"}  # gymnasium's tutorial: background
# Contract lines a page shows otherwise, and why.
CONTRACT_DEVIATIONS = {
    ("async-environments.txt", "result = await env.async_step(action)"): (
        "the two signatures the page opens with: a top-level await of an undefined action, "
        "in a block marked skip"
    ),
    ("gymnasium-migration.txt", "check_env(Drift()) # raises on failure"): (
        "the gymnasium tab passes skip_render_check=True: gymnasium's checker otherwise warns "
        "on stderr that Drift has no spec to re-create it in other render modes"
    ),
}
_KEYWORD = re.compile(r"(?:import|from|return|raise|assert|del|with|async|await)\b")


def _user_docs(root: Path) -> Path | None:
    """The folder of the original contract pages: ``shared/`` beside the checkout, or inside
    it; None where neither has it."""
    for base in (root.parent, root):
        folder = base / "shared" / "spec" / "user-docs"
        if folder.is_dir():
            return folder
    return None


def test_the_contract_copy_is_the_users_pages_as_they_are() -> None:
    originals = _user_docs(PAGES_DIR.parents[1])
    if originals is None:
        pytest.skip("the user's pages (shared/spec/user-docs) are not beside this checkout")
    copies = sorted(p.name for p in CONTRACT_DIR.glob("*.txt"))
    assert copies == sorted(p.name for p in originals.glob("*.txt"))
    stale = [
        name
        for name in copies
        if (CONTRACT_DIR / name).read_bytes() != (originals / name).read_bytes()
    ]
    assert not stale, f"copy these from {originals} into {CONTRACT_DIR}: {stale}"


def contract_code_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a rendered contract page that are Python statements (its examples' code).

    The rendering drops the code fences (and, on some pages, the indentation), so a line is
    code when it parses alone (a block header with a body added) and is more than a bare
    name, constant or list of names, which prose also parses as.
    """
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.strip()
        if not code or not (_KEYWORD.match(code) or set(code) & set("()[]{}=:")):
            continue
        for candidate in (code, code + "\n    pass"):
            try:
                ast.parse(candidate)
            except SyntaxError:
                continue
            found.append((number, code))
            break
    return found


def test_contract_code_lines_are_the_statements_of_a_rendered_page() -> None:
    page = """Run an episode

result = env.reset(seed=42)
print(result.observation)  # [ 0.0273956 ]
while not result.done:
import numpy as np
Same-step, not next-step
sekai.make() takes no render_mode; any keyword argument goes to the environment's
Description
"""
    assert contract_code_lines(page) == [
        (3, "result = env.reset(seed=42)"),
        (4, "print(result.observation)  # [ 0.0273956 ]"),
        (5, "while not result.done:"),
        (6, "import numpy as np"),
    ]


def test_every_example_line_of_the_contract_is_run_by_its_docs_page() -> None:
    folder = CONTRACT_DIR
    assert {p.name for p in folder.glob("*.txt")} == set(CONTRACT_PAGES) | NOT_CONTRACT
    squeeze = re.compile(r"\s+")
    missing, used = [], set()
    for contract, page in CONTRACT_PAGES.items():
        blocks = _page_blocks(PAGES_DIR / page)
        run = squeeze.sub("", "\n".join(b.code for b in blocks if b.skip is None))
        for number, code in contract_code_lines((folder / contract).read_text(encoding="utf-8")):
            if squeeze.sub("", code) in run:
                continue
            if (contract, code) in CONTRACT_DEVIATIONS:
                used.add((contract, code))
                continue
            missing.append(f"{contract}:{number}: {code}")
    assert not missing, "contract lines no docs page runs (copy them in as written):\n" + (
        "\n".join(missing)
    )
    assert used == set(CONTRACT_DEVIATIONS), "a listed deviation is gone: drop it from the list"


# Where a passing page's pictures go for the site build (``nox -s docs`` sets it and builds the
# site after the tests), so the build shows the tested run's images instead of running the
# drawing pages a second time.
IMAGES_ENV = "SEKAI_DOCS_IMAGES"


def keep_images(page: Path, workdir: Path) -> None:
    """Copy the ``generated/`` files a page wrote to ``$SEKAI_DOCS_IMAGES/<page stem>/``."""
    target = os.environ.get(IMAGES_ENV)
    written = workdir / "generated"
    if target and written.is_dir():
        shutil.copytree(written, Path(target) / page.stem, dirs_exist_ok=True)


# The README's first command: every page runs in the venv it sets up (with this interpreter).
README_DEV_SETUP = (
    'python3.11 -m venv .venv && .venv/bin/python -m pip install "nox[uv]>=2025.2.9" && '
    ".venv/bin/python -m nox -s dev"
)
# A page's run, plus for the first page of a worker the wait for that venv's build.
DEV_VENV_TIMEOUT = 1500.0


@pytest.fixture(scope="session")
def readme_dev_venv(make_venv: Callable[..., Venv], run_tmp_path: Path, repo_root: Path) -> Venv:
    """The venv the README's first command sets up: python -m venv, nox[uv], ``nox -s dev``.

    Built once per run: the pytest-xdist workers share it, and the first to need it builds it
    (with ``--slow`` the other worker is training meanwhile).
    """
    from filelock import FileLock  # the docs group's: the integration venvs collect this module

    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    assert README_DEV_SETUP in readme, "the README's setup changed: follow it here too"
    folder = run_tmp_path / "readme-dev"
    with FileLock(run_tmp_path / "readme-dev.lock"):
        built = (folder / "built").is_file()
        if not built:
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build on another worker left
            folder.mkdir()
        venv = make_venv("readme-dev", pip=True, root=folder / "venv")  # reused once built
        if not built:
            venv.run(venv.python, "-m", "pip", "install", "-q", "nox[uv]>=2025.2.9", cwd=repo_root)
            envdir = folder / "nox-envs"  # nothing of nox's in the checkout
            venv.run(venv.python, "-m", "nox", "-s", "dev", "--envdir", envdir, cwd=repo_root)
            (folder / "built").touch()
    return venv


@pytest.mark.timeout(DEV_VENV_TIMEOUT)
@pytest.mark.parametrize("page", _runnable(slow=False))
def test_page_examples_print_what_their_comments_say_in_the_readme_dev_venv(
    page: Path, tmp_path: Path, readme_dev_venv: Venv
) -> None:
    report = run_page(
        _page_blocks(page), tmp_path, include_slow=False, timeout=FAST_TIMEOUT,
        interpreter=readme_dev_venv.python,
    )  # fmt: skip
    assert not report, report
    keep_images(page, tmp_path)


# What the training runs must reach, beyond the words a ``~`` comparison checks: the figures
# move with the platform's floating point, within these bounds. Each pattern must match exactly
# one print of the slow pages, so a reworded page fails here instead of going unchecked.
TRAINED: dict[str, tuple[re.Pattern[str], Callable[[re.Match[str]], bool]]] = {
    # gymnasium-migration.md, PPO on CartPole: "a mean return near the maximum of 500"
    "mean return above 450 (the page: ~493.5)": (
        re.compile(r"PPO mean return over 10 episodes: (?P<mean>[\d.]+)"),
        lambda m: float(m["mean"]) > 450,
    ),
    # gymnasium-migration.md, PPO on Portfolio-v0: equal weight involves no training (exact);
    # PPO within 0.02 of the page's +0.0075, three standard errors of a 50-episode mean.
    "equal weight +0.0086 exactly, PPO within 0.02 of +0.0075": (
        re.compile(r"PPO (?P<ppo>[-+][\d.]+), equal weight (?P<equal>[-+][\d.]+)"),
        lambda m: m["equal"] == "+0.0086" and abs(float(m["ppo"]) - 0.0075) < 0.02,
    ),
}


def trained_figures(records: list[tuple[int, str]]) -> list[str]:
    """The figures of ``TRAINED`` that the recorded prints miss (each must print once)."""
    missing = []
    for claim, (pattern, holds) in TRAINED.items():
        found = [m for _, text in records if (m := pattern.fullmatch(text.strip()))]
        if len(found) != 1 or not holds(found[0]):
            printed = [m.group(0) for m in found] or "nothing that matches"
            missing.append(f"{claim}: printed {printed}")
    return missing


@pytest.mark.parametrize("page", _runnable(slow=True))
def test_page_examples_including_training_print_what_their_comments_say(
    page: Path, tmp_path: Path
) -> None:
    report = run_page(_page_blocks(page), tmp_path, include_slow=True, timeout=SLOW_TIMEOUT)
    assert not report, report
    records = _read_records(next(tmp_path.glob("docs_*.jsonl")))
    assert not trained_figures(records), trained_figures(records)


def test_trained_figures_check_the_bounds_and_that_each_prints_once() -> None:
    good = [
        (1, "PPO mean return over 10 episodes: 493.5"),
        (2, "PPO +0.0075, equal weight +0.0086"),
    ]
    assert trained_figures(good) == []
    assert trained_figures([(1, "PPO mean return over 10 episodes: 312.0"), good[1]]) == [
        "mean return above 450 (the page: ~493.5): printed ['PPO mean return over 10 episodes: "
        "312.0']"
    ]
    assert len(trained_figures([good[0], (2, "PPO +0.0075, equal weight +0.0087")])) == 1
    assert len(trained_figures([good[0], (2, "PPO +0.0400, equal weight +0.0086")])) == 1
    assert len(trained_figures(good + good)) == 2
    assert len(trained_figures([])) == 2


def test_every_training_result_a_page_shows_has_bounds_the_page_meets() -> None:
    # A ``~`` output frees every number: in a slow block only a TRAINED bound checks the figure,
    # so each needs one, and the figure the page shows must be within it.
    unbounded = []
    for page in _pages():
        for block in (b for b in _page_blocks(page) if b.slow and b.skip is None):
            script = build_script([block], include_slow=True)
            for expectation in set(find_expectations(script).values()):
                for output in (o for o in expectation.outputs if o.approximate):
                    shown = [
                        holds(match)
                        for pattern, holds in TRAINED.values()
                        if (match := pattern.fullmatch(output.text))
                    ]
                    if shown != [True]:
                        unbounded.append(f"{script.where(expectation.line)}: ~ {output.text}")
    assert not unbounded, "training results without a TRAINED bound they meet:\n" + "\n".join(
        unbounded
    )


# --- the engine itself ------------------------------------------------------------------------


def test_keep_images_hands_a_pages_pictures_to_the_site_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    (run / "generated" / "sub").mkdir(parents=True)
    (run / "generated" / "sub" / "chart.png").write_bytes(b"png")
    monkeypatch.delenv(IMAGES_ENV, raising=False)
    keep_images(Path("docs/pages/rendering.md"), run)  # not asked for: nothing is kept
    assert not (tmp_path / "kept").exists()
    monkeypatch.setenv(IMAGES_ENV, str(tmp_path / "kept"))
    keep_images(Path("docs/pages/rendering.md"), run)
    assert (tmp_path / "kept" / "rendering" / "sub" / "chart.png").read_bytes() == b"png"


_TABBED = """\
Intro.

=== "sekai"

    ```python
    x = 1
    if x:
        print(x)  # 1
    ```

<!-- docs-test: slow -->
```python
print("slow")  # slow
```

<!-- docs-test: skip: top-level await -->
```python
await thing()
```

```bash
echo not python
```
"""


def test_extract_blocks_dedents_tabbed_blocks_and_keeps_markdown_lines() -> None:
    blocks = extract_blocks(_TABBED, "p.md")
    assert [(b.line, b.slow, b.skip) for b in blocks] == [
        (6, False, None),
        (13, True, None),
        (18, False, "top-level await"),
    ]
    assert blocks[0].code == "x = 1\nif x:\n    print(x)  # 1\n"


def test_extract_blocks_rejects_a_line_indented_less_than_its_fence() -> None:
    with pytest.raises(ValueError, match=r"p\.md:3: line indented less"):
        extract_blocks("    ```python\n    a = 1\nb = 2\n    ```\n", "p.md")


def test_extract_blocks_rejects_an_unclosed_block_and_a_dangling_marker() -> None:
    with pytest.raises(ValueError, match="never closed"):
        extract_blocks("```python\nx = 1\n", "p.md")
    with pytest.raises(ValueError, match="marker must precede"):
        extract_blocks("<!-- docs-test: slow -->\ntext\n```python\nx = 1\n```\n", "p.md")


def test_build_script_maps_lines_back_and_drops_slow_and_skipped_blocks() -> None:
    script = build_script(extract_blocks(_TABBED, "p.md"), include_slow=False)
    assert "slow" not in script.text and "await" not in script.text
    line = script.text.splitlines().index("    print(x)  # 1") + 1
    assert script.where(line) == "p.md:8"


@pytest.mark.parametrize(
    ("comment", "outputs"),
    [
        ("# Discrete(2)", (Expected("Discrete(2)", False),)),
        ("# ~ 21 ms per step", (Expected("21 ms per step", True),)),
        ("# 18.0 18 | 16.0 16", (Expected("18.0 18", False), Expected("16.0 16", False))),
        ("# ~ 1 s | 2 s", (Expected("1 s", True), Expected("2 s", True))),
        ("# a | ~ 2 s", (Expected("a", False), Expected("2 s", True))),
    ],
)
def test_parse_comment_reads_exact_approximate_and_successive_outputs(
    comment: str, outputs: tuple[Expected, ...]
) -> None:
    assert parse_comment(comment) == outputs


def test_exact_comparison_ignores_only_whitespace() -> None:
    assert Expected("[ 0.5  -1.  ]", False).matches("[ 0.5 -1. ]\n")
    assert not Expected("[0.5, -1.0]", False).matches("[0.5, -1.00]")


def test_approximate_comparison_frees_every_number_but_not_the_words() -> None:
    want = Expected("PPO +0.0075, equal weight +0.0086; 1,010,000 steps, 1e-3, -inf", True)
    assert want.matches("PPO -0.0012, equal weight +1.5; 95,000 steps, 2.5E+4, nan")
    assert not want.matches("PPO +0.0075, equal weights +0.0086; 1,010,000 steps, 1e-3, -inf")
    assert skeleton("Sub-env 1 of x2") == "Sub-env # of x2"


def _script(code: str) -> Script:
    return build_script([Block("p.md", 1, textwrap.dedent(code))], include_slow=True)


def _line_of(script: Script, needle: str) -> int:
    return next(n for n, text in enumerate(script.text.splitlines(), 1) if needle in text)


def test_compare_accepts_matching_outputs_and_successive_runs() -> None:
    script = _script("""\
        print(1)  # 1
        for i in range(3):
            print(i, "x")  # 0 x | 1 x | 2 x
        print("a | b")  # a | b
    """)
    first, loop, pipe = (_line_of(script, s) for s in ("print(1)", "print(i", '"a | b"'))
    records = [(first, "1\n"), (loop, "0 x\n"), (loop, "1 x\n"), (loop, "2 x\n"), (pipe, "a | b\n")]
    assert compare(script, records) == []


def test_compare_reports_a_print_whose_statement_has_no_comment_once() -> None:
    # The page would print a line its reader is never shown: every print says what it prints.
    script = _script("""\
        print(1)  # 1
        for i in range(3):
            print(i)
    """)
    first, loop = _line_of(script, "print(1)"), _line_of(script, "print(i)")
    problems = compare(script, [(first, "1\n"), (loop, "0\n"), (loop, "1\n"), (loop, "2\n")])
    assert [p.message for p in problems] == [
        "p.md:3: print(i)\n  printed '0', but no comment on the statement says what it prints"
    ]


def test_compare_reports_the_first_mismatch_in_execution_order_with_its_markdown_line() -> None:
    script = _script("""\
        print(2)  # 2
        print(1)  # 1
    """)
    two, one = _line_of(script, "print(2)"), _line_of(script, "print(1)")
    problems = compare(script, [(two, "3\n"), (one, "0\n")])
    assert [p.message.splitlines()[0] for p in problems] == [
        "p.md:1: print(2)  # 2",
        "p.md:2: print(1)  # 1",
    ]
    assert (
        "expected (exact): 2" in problems[0].message
        and "printed:           3" in problems[0].message
    )


def test_compare_reports_wrong_run_counts_and_prints_that_never_ran() -> None:
    script = _script("""\
        for i in range(2):
            print(i)  # 0 | 1 | 2
        print("never")  # never
    """)
    loop = _line_of(script, "print(i)")
    messages = [p.message for p in compare(script, [(loop, "0"), (loop, "1")])]
    assert "ran 2 times; the comment lists 3 outputs" in messages[0]
    assert "this print never ran" in messages[1]


def test_run_page_passes_a_page_whose_workers_import_it(tmp_path: Path) -> None:
    page = """\
```python
import multiprocessing

def square(x):
    print("in a worker")
    return x * x

if __name__ == "__main__":
    with multiprocessing.get_context("forkserver").Pool(1) as pool:
        print(pool.map(square, [1, 2, 3]))  # [1, 4, 9]
for n in range(2):
    print(f"{n / 3:.3f} s")  # ~ 0.5 s | ~ 1.5 s
```
"""
    assert run_page(extract_blocks(page, "p.md"), tmp_path, include_slow=False, timeout=60) == ""


def test_run_page_reports_code_that_does_not_compile_at_its_markdown_line(tmp_path: Path) -> None:
    page = "```python\nx = 1\nif x:\nprint(x)\n```\n"
    report = run_page(extract_blocks(page, "p.md"), tmp_path, include_slow=False, timeout=60)
    assert report.startswith("p.md:4: the page's code does not compile")


def test_run_page_reports_a_mismatch_and_a_crash_at_their_markdown_lines(tmp_path: Path) -> None:
    page = "Text.\n\n```python\nprint('a')  # a\nprint('b')  # c\nraise SystemExit(3)\n```\n"
    report = run_page(extract_blocks(page, "p.md"), tmp_path, include_slow=False, timeout=60)
    assert "first mismatch: p.md:5: print('b')  # c" in report
    assert "printed just before:\n    a" in report
    assert "the page exited with status 3" in report


def test_run_page_reports_output_the_page_does_not_print_itself(tmp_path: Path) -> None:
    page = (
        "```python\nimport sys, warnings\nprint('a')  # a\nsys.stdout.write('library chatter\\n')\n"
        "warnings.warn('careful')\n```\n"
    )
    report = run_page(extract_blocks(page, "p.md"), tmp_path, include_slow=False, timeout=60)
    assert "the page printed what it does not show" in report
    assert "    library chatter" in report and "stderr: " in report and "careful" in report
