"""``sekai list``: the registered environments, or the plugins that provide them."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from sekai._metadata import pip_install
from sekai._providers import install_command
from sekai.cli._args import UsageError
from sekai.cli._output import BOLD, CYAN, DIM, GREEN, RED, YELLOW, Output, format_table

if TYPE_CHECKING:
    from sekai.plugins import PluginFailure, PluginInfo, PluginReport
    from sekai.registry.spec import EnvSpec

__all__ = ["add_parser", "failure_note", "run", "spec_json"]

_EXAMPLES = """\
examples:
  sekai list                      every registered environment
  sekai list --namespace classic  only the IDs of one namespace ('' = no namespace)
  sekai list --plugins            which plugin and distribution provides what
  sekai list --json | jq '.[].id' the same data for scripts
  sekai list --strict             exit 1 if a plugin failed to load (for CI)
"""

NATIVE_SUFFIX = "  [native vec]"
KERNEL_SUFFIX = "  [kernel]"  # the jax and torch modes can run it


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``list`` subcommand."""
    parser = subparsers.add_parser(
        "list",
        help="list the registered environments",
        description="List the registered environments, sorted by ID.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        default=None,
        help="only IDs in namespace NS ('' lists the IDs without a namespace)",
    )
    parser.add_argument(
        "--plugins",
        action="store_true",
        help="show the plugins (distribution, version, env count, status) instead",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 when a plugin failed to load"
    )
    parser.set_defaults(run=run)


def _entry(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else repr(value)


def failed_plugins(report: PluginReport) -> list[PluginFailure]:
    """The plugins that failed to load (a plugin disabled on purpose has not failed)."""
    return [f for f in report.failures if f.stage != "disabled"]


def failure_note(failures: list[PluginFailure]) -> str:
    """``1 plugin failed to load (broken: sekai-broken-pack 0.1.0); see sekai list --plugins``."""
    named = ", ".join(f"{f.name}: {f.distribution} {f.version}" for f in failures)
    noun = "plugin" if len(failures) == 1 else "plugins"
    return f"{len(failures)} {noun} failed to load ({named}); see sekai list --plugins"


def _selected(specs: list[EnvSpec], namespace: str | None) -> list[EnvSpec]:
    if namespace is not None:
        wanted = namespace or None
        specs = [s for s in specs if s.namespace == wanted]
    return sorted(specs, key=lambda s: s.id)


def spec_json(spec: EnvSpec) -> dict[str, Any]:
    source = spec.source
    return {
        "id": spec.id,
        "max_episode_steps": spec.max_episode_steps,
        "entry_point": _entry(spec.entry_point),
        "vector_entry_point": _entry(spec.vector_entry_point),
        "native_vec": spec.vector_entry_point is not None,
        "kernel_entry_point": _entry(spec.kernel_entry_point),
        "plugin": source.plugin if source else None,
        "distribution": source.distribution if source else None,
        "version": source.version if source else None,
    }


def _spec_table(specs: list[EnvSpec], out: Output) -> list[str]:
    rows = []
    for spec in specs:
        steps = "-" if spec.max_episode_steps is None else str(spec.max_episode_steps)
        entry = _entry(spec.entry_point) or "-"
        if spec.vector_entry_point is not None:  # a string: nothing is imported to know this
            entry += NATIVE_SUFFIX
        if spec.kernel_entry_point is not None:
            entry += KERNEL_SUFFIX
        rows.append([spec.id, steps, entry])
    lines = format_table(
        ["ID", "MAX STEPS", "ENTRY POINT"], rows, "lrl", header_style=BOLD, colour=out.colour
    )
    if out.colour:
        for suffix in (KERNEL_SUFFIX, NATIVE_SUFFIX):
            tag = out.style(suffix.strip(), CYAN)
            lines = [line.replace(suffix, "  " + tag) for line in lines]
    return lines


def _status(failure: PluginFailure) -> str:
    if failure.stage == "disabled":
        return "disabled by SEKAI_DISABLE_PLUGINS"
    return f"failed ({failure.stage}): {failure.error}"


def _missing(info: PluginInfo) -> str:
    """What a plugin whose dependencies are not installed lacks, and the command adding them."""
    verb = "are" if len(info.missing) > 1 else "is"
    return f"{' and '.join(info.missing)} {verb} not installed: {pip_install(*info.missing)}"


def _plugin_rows(report: PluginReport) -> list[dict[str, Any]]:
    """One JSON object per row of the ``--plugins`` table."""
    rows: list[dict[str, Any]] = []
    for info in report.plugins:
        rows.append(
            {
                "plugin": info.name,
                "distribution": info.distribution,
                "version": info.version,
                "envs": list(info.envs),
                "status": "missing dependency" if info.missing else "ok",
                "error": _missing(info) if info.missing else None,
                "backends": list(info.backends),
            }
        )
    for failure in report.failures:
        status = "disabled" if failure.stage == "disabled" else f"failed ({failure.stage})"
        rows.append(
            {
                "plugin": failure.name,
                "distribution": failure.distribution,
                "version": failure.version,
                "envs": [],
                "status": status,
                "error": None if failure.stage == "disabled" else failure.error,
                "backends": [],
            }
        )
    for distribution in report.missing:
        rows.append(
            {
                "plugin": None,
                "distribution": distribution,
                "version": None,
                "envs": None,
                "status": "not installed",
                "error": None,
                "backends": None,
            }
        )
    return rows


def _plugin_table(report: PluginReport, out: Output) -> list[str]:
    rows: list[list[str]] = []
    styles: list[list[str | None]] = []
    for info in report.plugins:
        status = f"missing {' and '.join(info.missing)}" if info.missing else "ok"
        if info.backends:
            status += f" (vector backends: {', '.join(info.backends)})"
        if info.missing:
            status += f": {pip_install(*info.missing)}"
        rows.append([info.name, info.distribution, info.version, str(len(info.envs)), status])
        styles.append([None, None, None, None, YELLOW if info.missing else GREEN])
    for failure in report.failures:
        rows.append([failure.name, failure.distribution, failure.version, "0", _status(failure)])
        styles.append([None, None, None, None, DIM if failure.stage == "disabled" else RED])
    for distribution in report.missing:
        rows.append(
            ["-", distribution, "-", "-", f"not installed: {install_command(distribution)}"]
        )
        styles.append([None, None, None, None, YELLOW])
    return format_table(
        ["PLUGIN", "DISTRIBUTION", "VERSION", "ENVS", "STATUS"],
        rows,
        "lllrl",
        styles=styles,
        header_style=BOLD,
        colour=out.colour,
    )


def run(args: argparse.Namespace, out: Output) -> int:
    """Print the environment table (or the plugin view); 1 with ``--strict`` if a plugin failed."""
    from sekai.plugins import report as plugin_report
    from sekai.registry import all_specs

    if args.plugins and args.namespace is not None:
        raise UsageError("--namespace applies to the environment table, not to --plugins")
    specs = all_specs()
    report = plugin_report()
    failed = failed_plugins(report)
    out.exit_code = 1 if args.strict and failed else 0
    if args.plugins:
        if args.json:
            out.print(json.dumps(_plugin_rows(report), indent=2))
        else:
            out.lines(_plugin_table(report, out))
    else:
        selected = _selected(specs, args.namespace)
        if args.json:
            out.print(json.dumps([spec_json(s) for s in selected], indent=2))
        elif selected:
            out.lines(_spec_table(selected, out))
        elif args.namespace is None:
            out.print("No environments registered.")
        elif args.namespace == "":
            out.print("No environments without a namespace.")
        else:
            out.print(f"No environments in namespace {args.namespace!r}.")
        if failed:
            out.flush()  # keep the note after the table when both go to one terminal
            out.warning(failure_note(failed))
    return out.exit_code
