"""``sekai new-pack NAME``: write a complete, installable env pack to start from."""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from pathlib import Path

from sekai._version import __version__
from sekai.cli._args import UsageError
from sekai.cli._output import Output
from sekai.cli._pack_template import files, requirements

__all__ = ["add_parser", "pack_names", "run", "write_pack"]

_EXAMPLES = """\
examples:
  sekai new-pack sekai-mazes                  ./sekai-mazes: package sekai_mazes, IDs mazes/...
  sekai new-pack sekai-mazes --native         with a native vector env too
  sekai new-pack my-envs --namespace mine     IDs mine/...

then:
  pip install -e ./sekai-mazes && pytest sekai-mazes && sekai list --plugins
"""

# PEP 508 distribution names, and the name at the start of a requirement.
_DIST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_REQUIRED = re.compile(r"[A-Za-z0-9._-]+")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``new-pack`` subcommand."""
    parser = subparsers.add_parser(
        "new-pack",
        help="write a new env pack (pyproject, plugin, one env, tests) to start from",
        description=(
            "Write a complete, installable env pack into ./NAME: a pyproject.toml with the\n"
            "`sekai` entry point, the plugin module, one environment (NAMESPACE/Walk-v0), a\n"
            "README and tests using sekai.testing's conformance checks. As generated,\n"
            "`pip install -e ./NAME && pytest NAME` passes."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "name", metavar="NAME", help="the distribution and folder name, e.g. sekai-mazes"
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help=(
            "the plugin name and ID namespace (default: the distribution name without its "
            "sekai- prefix (or sekai_, sekai., in any case), in lower case, with '.' turned "
            "into '-')"
        ),
    )
    parser.add_argument(
        "--native", action="store_true", help="also write the env's native vector version"
    )
    parser.set_defaults(run=run)


def pack_names(name: str, namespace: str | None) -> tuple[str, str, str]:
    """``(distribution, import package, namespace)`` for ``sekai new-pack NAME``.

    Raises:
        UsageError: a name pip or the registry would refuse, a namespace sekai reserves or that
            starts with '-' (the command line reads it as an option), or an import package that
            Python's standard library or one of the pack's requirements already has.
    """
    from sekai._providers import is_first_party, reserved_for
    from sekai.registry.ids import NAMESPACE_RE

    if not _DIST.match(name):
        raise UsageError(
            f"NAME must be a distribution name (letters, digits, '-', '_', '.'), got {name!r}; "
            "for example sekai-mazes"
        )
    if is_first_party(name) or name.lower() == "sekai":
        raise UsageError(f"{name} is one of sekai's own distributions; choose another NAME")
    package = _import_name(name)
    if not package.isidentifier() or keyword.iskeyword(package):
        raise UsageError(f"NAME {name!r} gives the import package {package!r}, not a valid one")
    taken = _taken_by(package)
    if taken is not None:
        raise UsageError(
            f"NAME {name!r} gives the import package {package!r}, {taken}; choose another "
            f"NAME, for example sekai-{name}"
        )
    given = namespace is not None
    if namespace is None:
        # The distribution name without its 'sekai-' prefix, lower-cased and '.' read as '-' as
        # pip reads names: a distribution name is case-insensitive, a namespace is not.
        namespace = re.sub(r"^sekai[-_.]", "", name, flags=re.IGNORECASE).lower()
        namespace = namespace.replace(".", "-")
    if NAMESPACE_RE.fullmatch(namespace) is None or namespace.startswith("-"):
        problem = (
            f"must match {NAMESPACE_RE.pattern} and not start with '-' (the command line would "
            f"read it as an option), got {namespace!r}"
        )
        if given:
            raise UsageError(f"--namespace {problem}")
        raise UsageError(
            f"the namespace derived from NAME {name!r} {problem}; pass one with --namespace"
        )
    reserved = reserved_for(namespace)
    if reserved is not None:
        raise UsageError(
            f"the namespace {namespace!r} is {reserved}; pass another one with --namespace"
        )
    return name, package, namespace


def _import_name(distribution: str) -> str:
    """The import package named after ``distribution``: lower case, runs of '-' and '.' -> '_'."""
    return re.sub(r"[-.]+", "_", distribution).lower()


def _core_requirement() -> str:
    """The written pack's requirement on sekai-core: the minor version it was tested against."""
    major, minor = __version__.split(".")[:2]
    return f"sekai-core~={major}.{minor}.0"


def _taken_by(package: str) -> str | None:
    """Why the pack may not have the import package ``package``, or None when it may: a module
    of the standard library would always be imported instead of it, and a requirement of the
    pack of the same name would be replaced by the pack when it is installed."""
    if package in sys.stdlib_module_names or package == "test":  # its test suite is left out
        return "a module of Python's standard library, which would always be imported instead"
    for kind, required in requirements(_core_requirement()).items():
        for requirement in required:
            match = _REQUIRED.match(requirement)
            if match is not None and _import_name(match.group()) == package:
                return (
                    f"the name of {match.group()}, one of the pack's {kind} requirements, which "
                    "installing the pack would replace"
                )
    return None


def write_pack(folder: Path, *, namespace: str | None = None, native: bool = False) -> list[Path]:
    """Write the pack named ``folder.name`` into ``folder`` (which must not exist yet).

    Returns:
        The files written, in order.
    """
    if folder.name in ("", ".."):  # '.', '..', '/': an existing folder with no usable name
        raise UsageError(
            f"NAME is the new folder to write the pack into, named after the distribution, "
            f"got {folder.as_posix()!r}; for example sekai-mazes"
        )
    dist, package, namespace = pack_names(folder.name, namespace)
    if folder.exists():
        raise UsageError(f"{folder} already exists; choose another NAME or remove it")
    written = []
    texts = files(
        dist=dist, package=package, namespace=namespace, core=_core_requirement(), native=native
    )
    for relative, text in texts.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def run(args: argparse.Namespace, out: Output) -> int:
    """Write the pack and say what to run next."""
    folder = Path(args.name)
    written = write_pack(folder, namespace=args.namespace, native=args.native)
    _, _, namespace = pack_names(folder.name, args.namespace)
    lines = [f"wrote {path.as_posix()}" for path in written]
    lines += [
        "",
        f"{namespace}/Walk-v0 is registered by the plugin {namespace!r}. Next:",
        f"  pip install -e {_path_arg(folder)}",
        f"  pytest {folder.as_posix()}",
        "  sekai list --plugins",
    ]
    out.lines(lines)
    return 0


def _path_arg(folder: Path) -> str:
    """``folder`` as pip reads a local path: relative ones need ``./`` (else a package name)."""
    return folder.as_posix() if folder.is_absolute() else f"./{folder.as_posix()}"
