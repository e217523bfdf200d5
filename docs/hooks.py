"""mkdocs hooks: the generated catalog page, images made by page examples, and API sources.

Nothing this module makes is committed; every build makes it afresh:

- ``catalog.md`` is written from the registry of the interpreter running mkdocs (``make()`` of
  every registered ID gives its spaces), so it lists exactly what is installed.
- A page that shows an image from ``generated/`` (``![...](generated/name.png)``) is run as one
  script, as ``tests-integration/test_docs_examples.py`` runs it, in a temporary directory; the
  files its examples write under ``generated/`` become part of the site. So every picture comes
  from a tested example, and a failing example fails the build. With ``SEKAI_DOCS_IMAGES`` set
  (``nox -s docs``), the images come from there instead: the docs tests, run first, keep each
  passing page's ``generated/`` files in ``$SEKAI_DOCS_IMAGES/<page>/`` (a page they did not
  run, e.g. under ``-k``, is run here). ``SEKAI_DOCS_NO_EXAMPLES=1`` skips running the pages
  (images become notes), for a quick ``mkdocs serve`` while editing text.
- The API reference pages (``reference/*.md``) list every public name of each package's
  ``__all__`` (resolved to the module defining it) for mkdocstrings. mkdocstrings (griffe) reads
  source files, not imported modules, and cannot merge the ``sekai/`` folders of several
  distributions (a pkgutil-style namespace), so it reads one merged copy of every
  distribution's ``src/sekai`` tree.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]
PAGES = Path(__file__).resolve().parent / "pages"
DOCS_TEST = ROOT / "tests-integration" / "test_docs_examples.py"
GENERATED = "generated"
CATALOG = "catalog.md"
IMAGES_ENV = "SEKAI_DOCS_IMAGES"  # where the docs tests keep passing pages' images
PAGE_TIMEOUT = 600.0  # seconds; a page's examples normally take a few seconds

_IMAGE = re.compile(rf"!\[(?P<alt>[^\]]*)\]\({GENERATED}/[^)]+\)")

log = logging.getLogger(f"mkdocs.hooks.{__name__}")
_scratch: list[Path] = []
_skipped: set[str] = set()  # pages whose examples this build did not run


# --- API sources for mkdocstrings ----------------------------------------------------------


@event_priority(100)  # before mkdocstrings' own on_config, which creates the python handler
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Point mkdocstrings at one merged copy of every distribution's ``sekai`` package."""
    merged = _scratch_dir("sekai-api-src-")
    for src in sorted(ROOT.glob("packages/*/src/sekai")):
        shutil.copytree(src, merged / "sekai", dirs_exist_ok=True, ignore=_ignore_caches)
    plugin = config.plugins.get("mkdocstrings")
    if plugin is not None:
        python = plugin.config["handlers"].setdefault("python", {})
        python["paths"] = [str(merged)]
        # An absolute path: griffe resolves extension files against the working directory.
        options = python.setdefault("options", {})
        options["extensions"] = [f"{ROOT / 'docs' / 'griffe_descriptors.py'}:DescriptorDocs"]
    return config


def _ignore_caches(_folder: str, names: list[str]) -> list[str]:
    return [name for name in names if name == "__pycache__"]


# --- catalog and generated images ------------------------------------------------------------


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated catalog page and the images written by pages' examples."""
    files.append(File.generated(config, CATALOG, content=catalog_markdown()))
    for uri, content in reference_pages().items():
        files.append(File.generated(config, uri, content=content))
    _skipped.clear()
    skip = os.environ.get("SEKAI_DOCS_NO_EXAMPLES", "") not in ("", "0")
    drawing = [p for p in sorted(PAGES.glob("*.md")) if f"]({GENERATED}/" in p.read_text("utf-8")]
    if skip:
        _skipped.update(page.name for page in drawing)
        return files
    kept = Path(os.environ[IMAGES_ENV]) if os.environ.get(IMAGES_ENV) else None
    to_run = []
    for page in drawing:
        images = _kept_images(kept, page) if kept is not None else []
        if kept is not None and not images:
            log.info("%s: no images kept in %s; running its examples", page.name, kept)
        if not images:
            to_run.append(page)
        for uri, path in images:
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    if to_run:
        # Each page runs in its own interpreter, so the pages run side by side, one per CPU.
        _docs_test()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for images in pool.map(_run_page_for_images, to_run):
                for uri, path in images:
                    files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def _kept_images(kept: Path, page: Path) -> list[tuple[str, Path]]:
    """The images the docs tests' passing run of ``page`` kept in ``kept / page.stem``."""
    folder = kept / page.stem
    images = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return [(f"{GENERATED}/{p.relative_to(folder).as_posix()}", p) for p in images]


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    """Replace the images of a page whose examples this build skipped by a note saying so."""
    if page.file.src_uri not in _skipped:
        return markdown
    note = '!!! note "Picture not drawn"\n    The example above draws it; this build skipped it.'
    return _IMAGE.sub(note, markdown)


def on_shutdown() -> None:
    """Remove the temporary folders of this build."""
    while _scratch:
        shutil.rmtree(_scratch.pop(), ignore_errors=True)


def _scratch_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    _scratch.append(path)
    return path


@functools.cache  # once per build, before the pages run in threads
def _docs_test() -> ModuleType:
    """Import the docs test module, whose page-to-script conversion the build reuses."""
    spec = importlib.util.spec_from_file_location("_sekai_docs_examples", DOCS_TEST)
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise PluginError(f"cannot import {DOCS_TEST}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def _run_page_for_images(page: Path) -> list[tuple[str, Path]]:
    """Run a page's examples in a scratch folder and return the images they wrote."""
    docs_test = _docs_test()
    blocks = docs_test.extract_blocks(page.read_text(encoding="utf-8"), f"docs/pages/{page.name}")
    script = docs_test.build_script(blocks, include_slow=False)
    workdir = _scratch_dir(f"sekai-docs-{page.stem}-")
    path = workdir / f"docs_{page.stem.replace('-', '_')}.py"
    path.write_text(script.text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SEKAI_DOCS_RECORD"}
    try:
        done = subprocess.run(
            [sys.executable, str(path)], cwd=workdir, env=env, capture_output=True,
            text=True, timeout=PAGE_TIMEOUT, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise PluginError(
            f"{page.name}: its examples did not finish in {PAGE_TIMEOUT:.0f} s"
        ) from exc
    if done.returncode != 0:
        tail = "\n".join(done.stderr.splitlines()[-20:])
        raise PluginError(f"{page.name}: its examples failed, so its images are missing:\n{tail}")
    written = workdir / GENERATED
    images = sorted(p for p in written.rglob("*") if p.is_file()) if written.is_dir() else []
    if not images:
        raise PluginError(f"{page.name} shows images from {GENERATED}/ but its examples wrote none")
    return [(f"{GENERATED}/{p.relative_to(written).as_posix()}", p) for p in images]


# --- the catalog -------------------------------------------------------------------------------

_CATALOG_INTRO = """\
# Environment catalog

Every environment registered when this site was built, generated from the registry
(`sekai.all_specs()`): the spaces are those of `sekai.make(id)` with default arguments.
`sekai list` prints the same IDs for your own installation, and `sekai info ID` the details of
one.

An ID with a native vector version is built as that class by `sekai.make_vec(id, n)` (see
[Vector environments](vector.md#native-vector-environments)); the `classic/` IDs are the
classic-control environments registered a second time with their native vector versions.
Environment packs that were installed when the site was built (such as the repository's example
pack, see [Writing an env pack](env-packs.md)) are listed under their own distribution.
"""


def catalog_markdown() -> str:
    """Return the catalog page: a summary table, then one section per registered ID."""
    import sekai

    # By distribution, then as `sekai.pprint_registry()` does: IDs without a namespace first.
    specs = sorted(
        sekai.all_specs(), key=lambda s: (_distribution(s), s.namespace is not None, s.id.lower())
    )
    described = [(spec, _describe(spec)) for spec in specs]
    lines = [
        _CATALOG_INTRO,
        "| ID | Observation | Action | Max steps | Native vec | Distribution |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for spec, info in described:
        lines.append(
            f"| [`{spec.id}`](#{_anchor(spec.id)}) | {info['obs_short']} | {info['act_short']} "
            f"| {_steps(spec)} | {'yes' if spec.vector_entry_point else 'no'} | "
            f"`{_distribution(spec)}` |"
        )
    current = None
    for spec, info in described:
        if _distribution(spec) != current:
            current = _distribution(spec)
            lines += ["", f"## {current}", ""]
        lines += _section(spec, info)
    return "\n".join(lines) + "\n"


def _section(spec: Any, info: dict[str, str]) -> list[str]:
    rows = [
        ("Entry point", f"`{spec.entry_point}`"),
        ("Native vector", f"`{spec.vector_entry_point}`" if spec.vector_entry_point else "none"),
        ("Observation space", f"`{info['obs']}`"),
        ("Action space", f"`{info['act']}`"),
        ("Max episode steps", _steps(spec)),
        ("Reward threshold", "–" if spec.reward_threshold is None else str(spec.reward_threshold)),
        ("Provided by", _provider(spec)),
    ]
    if spec.kwargs:
        rows.append(("Registered kwargs", f"`{spec.kwargs!r}`"))
    if spec.additional_wrappers:
        names = ", ".join(f"`{w.name}`" for w in spec.additional_wrappers)
        rows.append(("Additional wrappers", names))
    out = ["", f"### {spec.id} {{#{_anchor(spec.id)}}}", ""]
    if info["summary"]:
        out += [info["summary"], ""]
    out += ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    return out


def _describe(spec: Any) -> dict[str, str]:
    """Make the env once and read its spaces and the first line of its class docstring."""
    import sekai

    try:
        env = sekai.make(spec.id)
    except Exception as exc:
        raise PluginError(f"catalog: sekai.make({spec.id!r}) failed: {exc!r}") from exc
    try:
        obs, act = env.observation_space, env.action_space
        doc = textwrap.dedent(type(env.unwrapped).__doc__ or "").strip()
        summary = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        return {
            "obs": repr(obs),
            "act": repr(act),
            "obs_short": _short(obs),
            "act_short": _short(act),
            "summary": summary,
        }
    finally:
        env.close()


def _short(space: Any) -> str:
    """A table-sized description of a space: its class, and its shape or keys."""
    from sekai.spaces import Box, Dict, MaskedBox, Tuple

    name = type(space).__name__
    if isinstance(space, MaskedBox):
        return f"`MaskedBox(max_size={space.max_size})`"
    if isinstance(space, Dict):
        return f"`Dict({', '.join(str(k) for k in space.spaces)})`"
    if isinstance(space, Tuple):
        return f"`Tuple({', '.join(type(s).__name__ for s in space.spaces)})`"
    if isinstance(space, Box):
        return f"`Box{tuple(space.shape)}`".replace(",)", ")")
    text = repr(space)
    return f"`{text}`" if len(text) <= 30 else f"`{name}`"


def _steps(spec: Any) -> str:
    return "–" if spec.max_episode_steps is None else str(spec.max_episode_steps)


def _distribution(spec: Any) -> str:
    return spec.source.distribution if spec.source is not None else "runtime"


def _provider(spec: Any) -> str:
    if spec.source is None:
        return "registered at runtime"
    return f"`{spec.source.distribution}` {spec.source.version} (plugin `{spec.source.plugin}`)"


def _anchor(env_id: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in env_id.lower())


# --- the API reference ---------------------------------------------------------------------

# page -> (title, introduction, [(section title, package, names or None for its __all__)]).
REFERENCE: dict[str, tuple[str, str, list[tuple[str, str, list[str] | None]]]] = {
    "reference/env.md": (
        "Environments and results",
        "The environment base classes, their result objects and the seeding helpers "
        "(all also importable from `sekai`).",
        [
            ("Environments", "sekai", ["Env", "MultiAgentEnv"]),
            ("Results", "sekai", ["ResetResult", "StepResult", "MAResetResult", "MAStepResult"]),
            ("Seeding", "sekai", ["np_random", "make_seed_sequence"]),
        ],
    ),
    "reference/spaces.md": (
        "Spaces",
        "`sekai.spaces` (the spaces are also importable from `sekai`). See [Spaces](../spaces.md).",
        [("", "sekai.spaces", None)],
    ),
    "reference/wrappers.md": (
        "Wrappers",
        "The base classes (`sekai`) and the 23 built-in wrappers (`sekai.wrappers`, also `sekai`). "
        "See [Wrappers](../wrappers.md).",
        [
            (
                "Base classes",
                "sekai",
                ["Wrapper", "ObservationWrapper", "RewardWrapper", "ActionWrapper"],
            ),
            ("Built-in wrappers", "sekai.wrappers", None),
        ],
    ),
    "reference/vector.md": (
        "Vector environments",
        "`sekai.vector` (also importable from `sekai`). See [Vector environments](../vector.md).",
        [("", "sekai.vector", None)],
    ),
    "reference/registry.md": (
        "Registry and plugins",
        "`sekai.registry` and `sekai.plugins`. See [Registry and plugins](../registry.md).",
        [("Registry", "sekai.registry", None), ("Plugins", "sekai.plugins", None)],
    ),
    "reference/stats.md": (
        "Episode statistics",
        "`sekai.stats` (also importable from `sekai`). See [Episode statistics](../statistics.md).",
        [("", "sekai.stats", None)],
    ),
    "reference/rendering.md": (
        "Rendering",
        "`sekai.rendering`.",
        [("", "sekai.rendering", None)],
    ),
    "reference/utils.md": (
        "Checking and testing",
        "`sekai.utils` and `sekai.testing`. See [Checking an environment](../check-env.md).",
        [("sekai.utils", "sekai.utils", None), ("sekai.testing", "sekai.testing", None)],
    ),
    "reference/errors.md": (
        "Errors",
        "`sekai.error` (every exception is also importable from `sekai`).",
        [("", "sekai.error", None)],
    ),
    "reference/classic.md": (
        "Classic control",
        "`sekai.envs.classic_control` (distribution `sekai-classic`).",
        [("", "sekai.envs.classic_control", None)],
    ),
    "reference/finance.md": (
        "Finance",
        "The environments (`sekai.envs.finance`), the toolkit (`sekai.finance`) and the baselines "
        "(`sekai.finance.baselines`) of the distribution `sekai-finance`. See "
        "[Finance environments](../finance.md).",
        [
            ("Environments", "sekai.envs.finance", None),
            ("Toolkit", "sekai.finance", None),
            ("Baselines", "sekai.finance.baselines", None),
        ],
    ),
    "reference/compat.md": (
        "Bridges (sekai.compat)",
        "`sekai.compat` (distribution `sekai-compat`). See "
        "[Migrating from gymnasium](../gymnasium-migration.md).",
        [("", "sekai.compat", None)],
    ),
    "reference/cli.md": (
        "Command line",
        "`sekai.cli` (distribution `sekai-cli`). See [Command line](../cli.md).",
        [("", "sekai.cli", None)],
    ),
}


def reference_pages() -> dict[str, str]:
    """Return the API reference pages: one mkdocstrings block per public name."""
    pages = {}
    index = [
        "# API reference",
        "",
        "Generated from the docstrings of the installed distributions.",
        "",
    ]
    for uri, (title, intro, sections) in REFERENCE.items():
        lines = [f"# {title}", "", intro, ""]
        for heading, package, names in sections:
            if heading:
                lines += [f"## {heading}", ""]
            level = 3 if heading else 2
            for name in names if names is not None else _public_names(package):
                target = _defining_path(package, name)
                if target is None:
                    log.info(f"reference: {package}.{name} is not importable yet; left out")
                    continue
                lines += [f"::: {target}", "    options:", f"      heading_level: {level}", ""]
        pages[uri] = "\n".join(lines)
        index.append(f"- [{title}]({uri.removeprefix('reference/')})")
    pages["reference/index.md"] = "\n".join(index) + "\n"
    return pages


def _public_names(package: str) -> list[str]:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n for n, v in vars(module).items() if not n.startswith("_") and _is_api(v, package)
        ]
    return sorted(names, key=lambda n: (not n[:1].isupper(), n.lower()))


def _is_api(value: object, package: str) -> bool:
    return getattr(value, "__module__", None) == package and callable(value)


def _defining_path(package: str, name: str) -> str | None:
    """``module.name`` where ``package.name`` is defined, or None if its module does not exist."""
    module = importlib.import_module(package)
    try:
        value = getattr(module, name)
    except ImportError:  # an optional library (MissingDependency is an ImportError) is missing
        value = None
    defined_in = getattr(value, "__module__", None) if value is not None else None
    if defined_in is None or not hasattr(value, "__qualname__"):
        tables = (getattr(module, "_LAZY", {}), getattr(module, "_NEEDS_LIBRARY", {}))
        entry = next((t[name] for t in tables if name in t), None)
        defined_in = entry[0] if isinstance(entry, tuple) else entry
        if defined_in is None and value is not None:
            return f"{package}.{name}"  # a constant or alias: document it where it is exported
    if defined_in is None or importlib.util.find_spec(defined_in) is None:
        return None
    qualname = getattr(value, "__qualname__", name) if value is not None else name
    return f"{defined_in}.{qualname}"
