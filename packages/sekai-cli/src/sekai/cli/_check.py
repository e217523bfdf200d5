"""``sekai check ID``: run check_env on a fresh env and report what it found."""

from __future__ import annotations

import argparse
from typing import Any

from sekai.cli._args import UsageError, positive_int
from sekai.cli._env_module import NATIVE_MODES, import_env_modules
from sekai.cli._output import GREEN, RED, YELLOW, Output, plural

__all__ = ["add_parser", "run", "summary"]

_EXAMPLES = """\
examples:
  sekai check CartPole-v1
  sekai check Portfolio-v0 --steps 2000 --determinism
  sekai -m my_envs check mine/Drift-v0 --strict   exit 1 on warnings too (for CI)
  sekai check CartPole-v1 --mode jax               the kernel, run by sekai-jax

exit status: 0 no ERROR (warnings allowed unless --strict), 1 ERRORs found (or any
issue with --strict), 2 the env could not be built, run or closed.
"""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check",
        help="check an environment against the Env contract (check_env)",
        description=(
            "Build ENV_ID with make(), run sekai.check_env on it and print every issue found,\n"
            "then a summary line."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("env_id", metavar="ENV_ID", help="a registered ID, e.g. CartPole-v1")
    parser.add_argument(
        "--steps",
        type=positive_int,
        default=500,
        metavar="N",
        help="random steps to take (default: 500)",
    )
    parser.add_argument(
        "--determinism",
        action="store_true",
        help="also compare two rollouts with the same seed and actions",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 on warnings too, not only errors"
    )
    parser.add_argument(
        "--mode",
        metavar="MODE",
        help=(
            "check the env's array kernel in a kernel vectorization mode (jax, torch): shapes, "
            "dtypes, autoreset, masked reset and determinism of "
            "make_vec(ENV_ID, N, vectorization_mode=MODE)"
        ),
    )
    parser.add_argument(
        "--num-envs",
        type=positive_int,
        default=None,
        metavar="N",
        help="sub-envs for --mode (default: 8)",
    )
    parser.set_defaults(run=run)


def summary(env_id: str, issues: list[str]) -> str:
    """The last line: ``ID: all checks passed.`` or ``ID: 0 errors, 1 warning.``."""
    if not issues:
        return f"{env_id}: all checks passed."
    errors = sum(1 for issue in issues if issue.startswith("ERROR"))
    return f"{env_id}: {plural(errors, 'error')}, {plural(len(issues) - errors, 'warning')}."


def _check_mode(args: argparse.Namespace, out: Output) -> list[str]:
    """The kernel contract checks of ``args.env_id`` in vectorization mode ``args.mode``."""
    from sekai.registry import make_vec
    from sekai.vector.kernel_check import check_kernel_vec_env

    def build() -> Any:
        num_envs = 8 if args.num_envs is None else args.num_envs
        return make_vec(args.env_id, num_envs, vectorization_mode=args.mode)

    build().close()  # an env without a kernel, or a missing mode, fails here with its message
    with out.status(f"checking {args.env_id} in mode {args.mode} ({args.steps:,} steps)..."):
        return check_kernel_vec_env(build, n_steps=args.steps)


def run(args: argparse.Namespace, out: Output) -> int:
    """Check ``args.env_id``; 1 on ERRORs (on any issue with ``--strict``), else 0.

    The issues are printed before the env is closed: a ``close()`` that raises is reported
    after them (``error: ...``, exit status 2) instead of replacing them.
    """
    if args.num_envs is not None and args.mode is None:
        raise UsageError("--num-envs applies to --mode only")
    # Names the env and entry point of a module that fails.
    import_env_modules(args.env_id, vector=args.mode in NATIVE_MODES)
    if args.mode is not None:
        return _report(args, _check_mode(args, out), out)
    from sekai.registry import make
    from sekai.utils.checker import check_env

    env = make(args.env_id)
    try:
        with out.status(f"checking {args.env_id} ({args.steps:,} steps)..."):
            issues = check_env(env, n_steps=args.steps, check_determinism=args.determinism)
        return _report(args, issues, out)
    finally:
        env.close()


def _report(args: argparse.Namespace, issues: list[str], out: Output) -> int:
    """Print ``issues`` and the summary line; the exit status they give."""
    errors = any(issue.startswith("ERROR") for issue in issues)
    out.exit_code = 1 if errors or (args.strict and issues) else 0
    for issue in issues:
        level, sep, rest = issue.partition(":")
        code = RED if level == "ERROR" else YELLOW if level == "WARNING" else None
        out.print(f"{out.style(level, code)}{sep}{rest}" if sep else issue)
    line = summary(args.env_id, issues)
    out.print(out.style(line, GREEN if not issues else RED if errors else YELLOW))
    return out.exit_code
