"""sekai.testing.docs: the check for docs examples that need an optional library."""

from __future__ import annotations

from pathlib import Path

import pytest

import sekai
from sekai.testing.docs import assert_marked_examples_print

MARK = "<!-- needs: demo -->"


def _page(tmp_path: Path, *blocks: str) -> Path:
    text = "\n\n".join(f"{MARK}\n```python\n{code}\n```" for code in blocks)
    page = tmp_path / "page.md"
    page.write_text(f"# Demo\n\n{text}\n", encoding="utf-8")
    return page


def test_marked_blocks_run_as_one_script_and_print_what_they_say(tmp_path: Path) -> None:
    page = _page(tmp_path, "x = [1, 2]\nprint(x)  # [1, 2]", 'print(*x, sep=", ")  # 1, 2')
    assert_marked_examples_print(page, MARK, min_blocks=2)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('print(1, 2, sep=",")  # 1 2', "page.md:5"),
        ("print(1)  # 2", "page.md:5"),
        ("print(1)", "a commented print did not run"),
        ('import warnings\nwarnings.warn("careful")\nprint(1)  # 1', "warnings: \\['careful'\\]"),
        ('import sys\nsys.stderr.write("oops")\nprint(1)  # 1', "output on stderr: 'oops'"),
        ('import sys\nprint("oops", file=sys.stderr)\nprint(1)  # 1', "output on stderr"),
    ],
)
def test_wrong_or_stray_output_fails(tmp_path: Path, code: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        assert_marked_examples_print(_page(tmp_path, code), MARK, min_blocks=1)


def test_too_few_marked_blocks_fail(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="1 marked blocks"):
        assert_marked_examples_print(_page(tmp_path, "print(1)  # 1"), MARK, min_blocks=2)


def test_a_librarys_deprecation_warning_is_hidden_as_from_a_reader(tmp_path: Path) -> None:
    library = tmp_path / "deprecating_lib.py"
    library.write_text(
        "import warnings\n"
        "def old():\n"
        "    warnings.warn('old', DeprecationWarning, stacklevel=1)\n"
        "    return 1\n"
    )
    code = (
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
        "import deprecating_lib\nprint(deprecating_lib.old())  # 1"
    )
    assert_marked_examples_print(_page(tmp_path, code), MARK, min_blocks=1)


def test_a_librarys_own_print_is_stray_output(tmp_path: Path) -> None:
    code = "import sys\nsys.stdout.write('noise\\n')\nprint(1)  # 1"
    with pytest.raises(AssertionError, match=r"stray output: 'noise\\n'"):
        assert_marked_examples_print(_page(tmp_path, code), MARK, min_blocks=1)


def test_the_pages_own_deprecation_warning_fails_as_a_reader_would_see_it(
    tmp_path: Path,
) -> None:
    code = "import warnings\nwarnings.warn('gone soon', DeprecationWarning)\nprint(1)  # 1"
    with pytest.raises(AssertionError, match=r"warnings: \['gone soon'\]"):
        assert_marked_examples_print(_page(tmp_path, code), MARK, min_blocks=1)


@pytest.mark.parametrize(
    ("last_line", "error"),
    [
        ("print(1)  # 1", None),
        ("print(1)  # 2", r"page\.md:7"),  # prints otherwise than its comment says
        ("raise RuntimeError('page broke')", r"page broke"),  # raises while it runs
    ],
)
def test_the_ids_a_page_registers_are_deregistered_whether_it_passes_or_not(
    tmp_path: Path, sekai_registry: object, last_line: str, error: str | None
) -> None:
    code = (
        f"import sekai\nsekai.register('demo/Line-v0', 'sekai.testing.envs:LineEnv')\n{last_line}"
    )
    page = _page(tmp_path, code)
    if error is None:
        assert_marked_examples_print(page, MARK, min_blocks=1, registered=["demo/Line-v0"])
    else:
        with pytest.raises(Exception, match=error):
            assert_marked_examples_print(page, MARK, min_blocks=1, registered=["demo/Line-v0"])
    assert "demo/Line-v0" not in {spec.id for spec in sekai.all_specs()}
