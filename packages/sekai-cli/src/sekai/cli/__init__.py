"""The ``sekai`` command line: list, info, check and bench environments; start an env pack.

``main(argv)`` is the console script ``sekai`` and ``python -m sekai``; ``build_parser()``
returns its argparse parser. Exit status: 0 success, 1 ``check`` found problems (or
``list --strict`` found a failed plugin), 2 usage errors and errors building or running an env.
"""

from __future__ import annotations

import argparse
import contextlib
import dis
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, TextIO

from sekai._version import __version__
from sekai.cli import _bench, _check, _info, _list, _new_pack
from sekai.cli._args import UsageError
from sekai.cli._output import Output, StdoutClosed

__all__ = ["build_parser", "main"]

_EXAMPLES = """\
examples:
  sekai list                                  registered environments
  sekai list --plugins                        plugins, distributions, what is missing
  sekai info CartPole-v1                      spec, spaces and wrappers of one env
  sekai check CartPole-v1                     run check_env on it
  sekai bench Portfolio-v0 --num-envs 16      env steps per second
  sekai -m my_envs check mine/Drift-v0        envs registered by your own module
  sekai new-pack sekai-mazes --native         start an env pack of your own

Run `sekai COMMAND --help` for a command's options.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``sekai`` (prog ``sekai``, one subparser per command)."""
    parser = argparse.ArgumentParser(
        prog="sekai",
        description="Inspect, check and benchmark sekai environments.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sekai {__version__}")
    parser.add_argument(
        "-m",
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help=(
            "import MODULE first so the envs it registers exist (repeatable; the current "
            "directory is on the import path)"
        ),
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, title="commands"
    )
    for command in (_list, _info, _check, _bench, _new_pack):
        command.add_parser(subparsers)
    return parser


def _import_modules(names: Sequence[str]) -> None:
    """Import the ``-m`` modules, with the current directory on ``sys.path``."""
    if not names:
        return
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    for name in names:
        if name.endswith(".py") or os.sep in name or "/" in name:
            stem = os.path.splitext(os.path.basename(name))[0]
            raise UsageError(
                f"-m takes a module name, not a file: use -m {stem} (the current directory is "
                "on the import path)"
            )
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise UsageError(f"could not import {name}: {exc}") from exc
        except Exception as exc:
            raise UsageError(f"could not import {name}: {type(exc).__name__}: {exc}") from exc


_WORKER_TRACEBACK = "\n\nWorker traceback:\n"


def _raised_by_registry(exc: BaseException) -> bool:
    """Whether the registry itself rejected the request (a bad ID, mode or argument): a
    ``raise`` statement of ``sekai.registry`` code threw it."""
    if not isinstance(exc, (ValueError, TypeError)) or exc.__traceback__ is None:
        return False
    tb: TracebackType = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    if not tb.tb_frame.f_globals.get("__name__", "").startswith("sekai.registry"):
        return False
    # An error of C code the registry called (an abstract env class, a builtin refusing its
    # arguments) also ends in a registry frame, at the call: that is the env's error.
    return any(
        instruction.offset == tb.tb_lasti and instruction.opname == "RAISE_VARARGS"
        for instruction in dis.get_instructions(tb.tb_frame.f_code)
    )


def _describe_error(exc: BaseException) -> str:
    """The text after ``error:``.

    sekai's own errors, import errors and the registry's rejections of an argument are
    usage problems whose message says it all; anything else (an env's constructor or step
    failing) is shown with its type, ``ValueError: bad step``.
    """
    from sekai.error import SekaiError

    if isinstance(exc, (SekaiError, ImportError, UsageError)) or _raised_by_registry(exc):
        # A worker's traceback (VecEnvWorkerError) is for debugging, not for this one line.
        return str(exc).split(_WORKER_TRACEBACK, 1)[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def _plugin_warnings(out: Output) -> Iterator[None]:
    """Keep ``PluginLoadWarning`` from showing as a Python warning.

    A failed plugin is summarised by ``sekai list`` (and named by ``EnvNotFound``), so that
    warning is dropped; any other ``PluginLoadWarning`` becomes a ``warning:`` line.
    """
    from sekai.error import PluginLoadWarning

    with warnings.catch_warnings():
        # Even under -W error: discovery must finish and the CLI reports failures itself.
        warnings.simplefilter("always", PluginLoadWarning)
        show = warnings.showwarning

        def showwarning(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if not issubclass(category, PluginLoadWarning):
                show(message, category, filename, lineno, file, line)
            elif not str(message).startswith("sekai plugin "):
                out.warning(str(message))

        warnings.showwarning = showwarning
        yield


def _quiet_broken_pipe(code: int) -> int:
    """After the reader of stdout went away: silence the rest, and return ``code``, the
    command's own status (0 for ``sekai list | head``, still 1 for a failed ``check``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # AttributeError: no sys.stdout at all
        pass
    return code


def _exit_code(exc: SystemExit) -> int:
    code: Any = exc.code
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sekai`` command line.

    Args:
        argv: the arguments without the program name; None reads ``sys.argv[1:]``.

    Returns:
        The exit status: 0 success, 1 problems found (``check``, ``list --strict``), 2 usage
        errors, sekai errors and errors raised by an env.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or argparse's usage error (2)
        try:
            if sys.stdout is not None:  # None when the caller closed it (`sekai --version >&-`)
                sys.stdout.flush()
        except BrokenPipeError:
            return _quiet_broken_pipe(_exit_code(exc))
        return _exit_code(exc)
    except BrokenPipeError:  # `sekai --help | head -1`
        return _quiet_broken_pipe(0)
    out = Output(sys.stdout, sys.stderr)
    with _plugin_warnings(out):
        try:
            _import_modules(args.imports)
            out.exit_code = args.run(args, out)
            out.flush()
        except StdoutClosed:
            return _quiet_broken_pipe(out.exit_code)
        except KeyboardInterrupt:
            out.error("interrupted")
            return 130
        except Exception as exc:
            try:
                out.flush()  # what was printed before the failure comes first
            except StdoutClosed:
                _quiet_broken_pipe(2)
            out.error(_describe_error(exc))
            return 2
    return out.exit_code
