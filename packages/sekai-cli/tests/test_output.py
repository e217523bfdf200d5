"""Tables, colour and progress of ``sekai.cli._output`` (the pieces every command prints with)."""

from __future__ import annotations

import io

import pytest

from sekai.cli._output import (
    RED,
    Output,
    Progress,
    StdoutClosed,
    format_table,
    plural,
    wants_colour,
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_table_pads_columns_two_spaces_apart_without_trailing_spaces() -> None:
    lines = format_table(
        ["ID", "MAX STEPS", "ENTRY"], [["a", "5", "x"], ["long-id", "-", "yy"]], "lrl"
    )
    assert lines == [
        "ID       MAX STEPS  ENTRY",
        "a                5  x",
        "long-id          -  yy",
    ]


def test_table_colour_wraps_text_only_so_columns_stay_aligned() -> None:
    plain = format_table(["A", "B"], [["x", "1"]], "lr")
    coloured = format_table(["A", "B"], [["x", "1"]], "lr", styles=[[RED, RED]], colour=True)
    assert coloured[1] == "\x1b[31mx\x1b[0m  \x1b[31m1\x1b[0m"
    assert [line.replace("\x1b[31m", "").replace("\x1b[0m", "") for line in coloured] == plain


def test_table_ignores_styles_without_colour() -> None:
    assert format_table(["A"], [["x"]], "l", styles=[[RED]], header_style=RED) == ["A", "x"]


@pytest.mark.parametrize(("count", "text"), [(0, "0 errors"), (1, "1 error"), (2, "2 errors")])
def test_plural_adds_an_s_unless_one(count: int, text: str) -> None:
    assert plural(count, "error") == text


def test_colour_wanted_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    assert wants_colour(_Terminal())
    assert not wants_colour(io.StringIO())


@pytest.mark.parametrize(("name", "value"), [("NO_COLOR", "1"), ("NO_COLOR", ""), ("TERM", "dumb")])
def test_no_color_or_a_dumb_terminal_disable_colour(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv(name, value)
    assert not wants_colour(_Terminal())


def test_output_errors_and_warnings_go_to_stderr() -> None:
    out = Output(io.StringIO(), io.StringIO())
    out.print("result")
    out.error("bad")
    out.warning("careful")
    assert out.stdout.getvalue() == "result\n"
    assert out.stderr.getvalue() == "error: bad\nwarning: careful\n"


def test_output_turns_a_broken_stdout_pipe_into_stdout_closed() -> None:
    out = Output(_ClosedPipe(), io.StringIO())
    with pytest.raises(StdoutClosed):
        out.print("x")
    with pytest.raises(StdoutClosed):
        out.flush()


def test_output_ignores_a_broken_stderr_pipe() -> None:
    Output(io.StringIO(), _ClosedPipe()).error("nobody listens")


def test_progress_draws_nothing_when_disabled() -> None:
    stream = io.StringIO()
    with Progress(10, "job", stream, enabled=False) as progress:
        progress.update(5)
        progress.update(10)
    assert stream.getvalue() == ""


def test_progress_redraws_in_place_throttled_and_erases_itself() -> None:
    stream = io.StringIO()
    with Progress(10, "job", stream, enabled=True, width=4, interval=3600.0) as progress:
        progress.update(2)
        progress.update(5)  # within the interval: skipped
        progress.update(10)  # the end is always drawn
    assert stream.getvalue() == (
        "\rjob [#---]  20% 2/10\x1b[K\rjob [####] 100% 10/10\x1b[K\r\x1b[K"
    )
