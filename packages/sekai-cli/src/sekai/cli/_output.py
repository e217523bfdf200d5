"""Terminal output for people: aligned tables, colour on terminals only, a stderr progress bar."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

__all__ = [
    "BOLD",
    "CYAN",
    "DIM",
    "GREEN",
    "RED",
    "YELLOW",
    "Output",
    "Progress",
    "StdoutClosed",
    "TransientStatus",
    "format_table",
    "plural",
    "wants_colour",
]

BOLD = "1"
DIM = "2"
RED = "31"
GREEN = "32"
YELLOW = "33"
CYAN = "36"


def wants_colour(stream: TextIO) -> bool:
    """Whether to colour ``stream``: a terminal, ``NO_COLOR`` unset and ``TERM`` not ``dumb``."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:
        return False


def plural(count: int, noun: str) -> str:
    """``1 warning``, ``0 errors``: the count and the noun, pluralised with an ``s``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    *,
    styles: Sequence[Sequence[str | None]] | None = None,
    header_style: str | None = None,
    colour: bool = False,
) -> list[str]:
    """Lay out a table: columns two spaces apart, each as wide as its widest cell.

    Widths come from the plain text, so colour codes never misalign a column; the last
    column is not padded, so no line ends in spaces.

    Args:
        header: the column titles (they set each column's minimum width).
        rows: the cells, one sequence of strings per row.
        align: one character per column, ``"l"`` (left) or ``"r"`` (right).
        styles: per row and column, an SGR code (``RED``...) or None; used only with ``colour``.
        header_style: an SGR code for the header line; used only with ``colour``.
        colour: whether to emit ANSI colour codes.

    Returns:
        The lines, header first.
    """
    widths = [len(title) for title in header]
    for row in rows:
        for col, cell in enumerate(row):
            widths[col] = max(widths[col], len(cell))
    last = len(header) - 1

    def layout(cells: Sequence[str], codes: Sequence[str | None]) -> str:
        parts = []
        for col, cell in enumerate(cells):
            if align[col] == "r":
                text = cell.rjust(widths[col])
            elif col == last:
                text = cell
            else:
                text = cell.ljust(widths[col])
            code = codes[col] if col < len(codes) else None
            if colour and code:
                # Style the text only, so padding spaces stay plain.
                stripped = text.strip(" ")
                start = text.index(stripped) if stripped else 0
                end = start + len(stripped)
                text = f"{text[:start]}\x1b[{code}m{stripped}\x1b[0m{text[end:]}"
            parts.append(text)
        return "  ".join(parts)

    lines = [layout(header, [header_style] * len(header))]
    for index, row in enumerate(rows):
        lines.append(layout(row, styles[index] if styles is not None else ()))
    return lines


class StdoutClosed(Exception):
    """The reader of stdout went away (``sekai list | head -1``)."""


def _or_devnull(stream: TextIO | None) -> TextIO:
    """``stream``, or a sink when Python has none (its descriptor is closed: ``sekai list >&-``)."""
    return stream if stream is not None else open(os.devnull, "w", encoding="utf-8")


class Output:
    """Where the CLI writes: results to stdout, notes, errors and progress to stderr.

    Args:
        stdout: the stream for results (tables, JSON, reports).
        stderr: the stream for notes, errors and progress bars.
    """

    def __init__(self, stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        # The command's exit status, set by a command that fails before it prints its report
        # (a ``check`` that found errors): kept when stdout closes under that report.
        self.exit_code = 0
        self.stdout = _or_devnull(stdout if stdout is not None else sys.stdout)
        self.stderr = _or_devnull(stderr if stderr is not None else sys.stderr)
        self.colour = wants_colour(self.stdout)
        self.colour_err = wants_colour(self.stderr)

    def style(self, text: str, code: str | None, *, err: bool = False) -> str:
        """``text`` wrapped in an SGR colour code when that stream is coloured."""
        if code is None or not (self.colour_err if err else self.colour):
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def print(self, text: str = "") -> None:
        """Write one line of results to stdout."""
        self._write(text + "\n")

    def lines(self, lines: Sequence[str]) -> None:
        """Write several lines of results to stdout."""
        if lines:
            self._write("\n".join(lines) + "\n")

    def flush(self) -> None:
        """Flush stdout (results appear now, e.g. each bench line as its run ends).

        Raises:
            StdoutClosed: the reader of stdout went away.
        """
        try:
            self.stdout.flush()
        except BrokenPipeError:
            raise StdoutClosed from None

    def _write(self, text: str) -> None:
        try:
            self.stdout.write(text)
        except BrokenPipeError:
            raise StdoutClosed from None

    def error(self, message: str) -> None:
        """``error: message`` on stderr."""
        self._note(f"{self.style('error:', RED, err=True)} {message}\n")

    def warning(self, message: str) -> None:
        """``warning: message`` on stderr."""
        self._note(f"{self.style('warning:', YELLOW, err=True)} {message}\n")

    def _note(self, text: str) -> None:
        try:
            self.stderr.write(text)
            self.stderr.flush()
        except (BrokenPipeError, ValueError):  # nobody reads stderr any more
            pass

    def progress(self, total: int, label: str) -> Progress:
        """A progress bar on stderr, drawn only when stderr is a terminal."""
        return Progress(total, label, self.stderr, enabled=_is_terminal(self.stderr))

    def status(self, text: str) -> TransientStatus:
        """A one-line status on stderr (terminals only), erased when the context exits."""
        return TransientStatus(text, self.stderr, enabled=_is_terminal(self.stderr))


class TransientStatus:
    """A status line shown while a long call runs, then erased (a terminal stderr only)."""

    def __init__(self, text: str, stream: TextIO, *, enabled: bool) -> None:
        self._text = text
        self._stream = stream
        self._enabled = enabled

    def __enter__(self) -> TransientStatus:
        if self._enabled:
            self._stream.write(self._text)
            self._stream.flush()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._enabled:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


class Progress:
    """A one-line progress bar redrawn in place with ``\\r``; silent unless ``enabled``.

    Args:
        total: the amount of work (e.g. env calls).
        label: what is running, shown before the bar.
        stream: where to draw (stderr).
        enabled: draw at all (the caller passes "stderr is a terminal").
        width: the number of cells of the bar.
        interval: the least number of seconds between two redraws (the last is always drawn).
    """

    def __init__(
        self,
        total: int,
        label: str,
        stream: TextIO,
        *,
        enabled: bool,
        width: int = 30,
        interval: float = 0.1,
    ) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self._stream = stream
        self._width = width
        self._shown = False
        self._interval = interval
        self._last = float("-inf")

    def update(self, done: int) -> None:
        """Redraw the bar with ``done`` units finished."""
        if not self.enabled:
            return
        now = time.monotonic()
        if done < self.total and now - self._last < self._interval:
            return
        self._last = now
        fraction = min(max(done / self.total, 0.0), 1.0)
        filled = round(fraction * self._width)
        bar = "#" * filled + "-" * (self._width - filled)
        self._stream.write(f"\r{self.label} [{bar}] {fraction:4.0%} {done:,}/{self.total:,}\x1b[K")
        self._stream.flush()
        self._shown = True

    def close(self) -> None:
        """Erase the bar, leaving the line free for the result."""
        if self.enabled and self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
