"""Plugin discovery: load every ``sekai`` entry point in isolation and record the outcome."""

from __future__ import annotations

import importlib
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sekai._providers import (
    PROVIDERS,
    RESERVED_PLUGIN_NAMES,
    install_command,
    is_first_party,
    normalize_distribution,
    provider_of_env,
    reserved_for,
)
from sekai._version import __version__
from sekai.plugins import PluginFailure, PluginInfo, PluginReport
from sekai.plugins._registrars import BackendRegistrar, EnvRegistrar, PluginRecord
from sekai.registry._report import WRONG_ENTRY_POINT, mode_clash_sentence
from sekai.registry.ids import NAMESPACE_RE

if TYPE_CHECKING:
    import pluggy

    from sekai._metadata import EntryPoint
    from sekai.plugins import FailureStage
    from sekai.registry.registry import EnvRegistry

__all__ = [
    "DISABLE_ENV_VAR",
    "EntryPointRecord",
    "PluginHost",
    "default_host",
    "scan_entry_points",
]

DISABLE_ENV_VAR = "SEKAI_DISABLE_PLUGINS"
_ABSENT = object()
# The name of an entry point whose line in entry_points.txt has no "name =" (unreadable).
NAMELESS = "?"


@dataclass(frozen=True)
class EntryPointRecord:
    """One plugin to load: its name, the distribution declaring it, and how to import it.

    ``problem`` says why the plugin cannot be loaded at all (its distribution's metadata is
    unreadable); discovery then records it as failed without calling ``load``. ``value`` is the
    entry point's ``module:attr``, which discovery then imports itself instead of calling
    ``load``, to tell a wrong entry point from a broken module.
    """

    name: str
    distribution: str
    version: str
    load: Callable[[], object]
    problem: str | None = None
    value: str | None = None


def scan_entry_points() -> list[EntryPointRecord]:
    """Read the ``sekai`` entry-point group (one metadata scan; nothing is imported).

    A distribution whose metadata cannot be read (a malformed ``entry_points.txt``, no
    ``Name``) must not hide the others' plugins: such a distribution is skipped, or, when it
    declares a ``[sekai]`` group, its plugins are returned with the ``problem`` named.
    """
    from sekai import _metadata

    try:
        return [_record(ep) for ep in _metadata.entry_points(group="sekai")]
    except Exception:  # one unreadable distribution fails the one-call scan: read each alone
        return _scan_each_distribution()


def _record(ep: EntryPoint) -> EntryPointRecord:
    dist = ep.dist
    if dist is None:
        return EntryPointRecord(ep.name, "unknown", "unknown", ep.load, value=ep.value)
    name, version = dist.name, dist.version
    if not name or not version:  # None on Python 3.12+ and older backports for bad METADATA
        raise ValueError("a distribution's METADATA has no Name or Version")
    return EntryPointRecord(ep.name, name, version, ep.load, value=ep.value)


def _scan_each_distribution() -> list[EntryPointRecord]:
    from sekai import _metadata

    records: list[EntryPointRecord] = []
    seen: set[str] = set()
    for dist in _metadata.distributions():
        try:
            # get(): a missing field is None everywhere (indexing raises KeyError in the
            # backport, but gives None with a DeprecationWarning in the 3.12+ stdlib).
            name, version = dist.metadata.get("Name"), dist.metadata.get("Version")
            if not name or not version:
                raise ValueError(f"its METADATA has no {'Name' if not name else 'Version'}")
            entry_points = dist.entry_points.select(group="sekai")
        except Exception as exc:
            records.extend(_unreadable(dist, exc))
            continue
        key = normalize_distribution(name)
        if key in seen:  # the first on sys.path wins, as importlib.metadata.entry_points() does
            continue
        seen.add(key)
        records.extend(
            EntryPointRecord(ep.name, name, version, ep.load, value=ep.value) for ep in entry_points
        )
    return records


def _unreadable(dist: object, exc: Exception) -> list[EntryPointRecord]:
    """Records for the ``[sekai]`` entry points of a distribution whose metadata is unreadable."""
    try:
        text = dist.read_text("entry_points.txt") or ""  # type: ignore[attr-defined]
    except Exception:
        text = ""
    names: list[str] = []
    declares = in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_group = line == "[sekai]"
            declares = declares or in_group
        elif in_group and line and not line.startswith(("#", ";")):
            names.append(line.partition("=")[0].strip() if "=" in line else NAMELESS)
    if not declares:
        return []  # it declares no sekai plugin: not ours to report
    where = getattr(dist, "_path", None)
    problem = (
        f"{type(exc).__name__}: the metadata of the distribution at {where} cannot be read "
        f"({exc}); repair or reinstall that distribution"
    )
    label, version = _field(dist, "Name"), _field(dist, "Version")

    def load() -> object:
        raise RuntimeError(problem)

    return [EntryPointRecord(name, label, version, load, problem) for name in names or [NAMELESS]]


def _field(dist: object, key: str) -> str:
    """A field of a distribution's metadata, or ``"unknown"`` where it cannot be read."""
    try:
        return str(dist.metadata.get(key) or "unknown")  # type: ignore[attr-defined]
    except Exception:
        return "unknown"


def _load_plugin(record: EntryPointRecord) -> object:
    """The plugin object of ``record``: its module imported, then its attribute looked up, as
    ``EntryPoint.load`` does, but naming the entry point when its module or attribute does not
    exist (pytest's missing-or-broken test: a ``ModuleNotFoundError`` for another module is a
    missing dependency, any other error the module's own code)."""
    from sekai import _metadata

    match = None if record.value is None else _metadata.EntryPoint.pattern.match(record.value)
    if match is None:
        return record.load()
    module_name, attrs = match.group("module"), match.group("attr") or ""
    try:
        plugin: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != module_name and not module_name.startswith(f"{missing}."):
            raise  # a module it imports
        raise ModuleNotFoundError(
            f"No module named {missing!r}: {WRONG_ENTRY_POINT} a module that does not exist "
            f"({record.name} = {record.value})",
            name=missing,
        ) from None
    where = module_name
    for attr in filter(None, attrs.split(".")):
        found = getattr(plugin, attr, _ABSENT)
        if found is _ABSENT:
            raise AttributeError(
                f"{where!r} has no attribute {attr!r}: {WRONG_ENTRY_POINT} an attribute that "
                f"does not exist ({record.name} = {record.value})"
            )
        plugin, where = found, f"{where}.{attr}"
    return plugin


def _error_text(exc: BaseException) -> str:
    """``Type: message notes`` on one line (a failure is one row of ``sekai list --plugins``)."""
    text = " ".join([str(exc), *getattr(exc, "__notes__", ())])
    return f"{type(exc).__name__}: {' '.join(text.split())}"


def _parse_disabled(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


class PluginHost:
    """Discovers plugins for one registry and remembers which loaded and which failed.

    Args:
        registry: the registry the plugins fill.
        entry_points: the plugins to load; None scans the installed ``sekai`` entry points.
        disabled: a ``SEKAI_DISABLE_PLUGINS`` value; None reads the environment variable.
        is_installed: tells whether a distribution is installed; None asks package metadata.
    """

    def __init__(
        self,
        registry: EnvRegistry,
        *,
        entry_points: Iterable[EntryPointRecord] | None = None,
        disabled: str | None = None,
        is_installed: Callable[[str], bool] | None = None,
    ) -> None:
        self._registry = registry
        self._entry_points = None if entry_points is None else list(entry_points)
        self._disabled = disabled
        self._is_installed = is_installed
        self._installed: dict[str, bool] = {}
        self._loaded: list[PluginRecord] = []
        self._failures: list[PluginFailure] = []
        self._env_registrar = EnvRegistrar(registry)
        self._loading: PluginRecord | None = None
        self._importing = False  # whether the plugin loading is being imported (or its hook runs)
        self._plugin_names: frozenset[str] = frozenset()
        self._backend_registrar = BackendRegistrar(registry)

    @property
    def failures(self) -> tuple[PluginFailure, ...]:
        """Every skipped plugin (failed, clashing or disabled), in discovery order."""
        return tuple(self._failures)

    @property
    def loading(self) -> str | None:
        """The plugin being imported or registered now (``plugin 'acme' (acme-envs 1.2.0)``)."""
        return self._loading.label if self._loading is not None else None

    def loading_own(self, env_id: str) -> str | None:
        """When ``env_id`` belongs to the plugin being loaded (its namespace, or its first-party
        distribution's IDs): what of that plugin runs now (``"its import"``, or ``"its
        sekai_register_envs hook"``); else None."""
        plugin = self._loading
        if plugin is None:
            return None
        provider = provider_of_env(env_id)
        if provider is not None:
            own = normalize_distribution(provider.distribution) == normalize_distribution(
                plugin.distribution
            )
        else:
            own = "/" in env_id and env_id.partition("/")[0] == plugin.name
        if not own:
            return None
        return "its import" if self._importing else "its sekai_register_envs hook"

    def owner_of(self, env_id: str) -> str | None:
        """Who ``env_id`` belongs to while plugins load, if anyone: a first-party
        distribution's ID, or an ID in the namespace of a plugin being discovered."""
        provider = provider_of_env(env_id)
        if provider is not None:
            return provider.distribution
        namespace = env_id.partition("/")[0] if "/" in env_id else None
        if namespace is not None and namespace in self._plugin_names:
            return f"plugin {namespace!r}"
        return None

    @property
    def mode_clashes(self) -> dict[str, list[str]]:
        """The vectorization modes several plugins register (so none provides), with their
        plugins' labels."""
        return {
            mode: [r.label for r in records]
            for mode, records in self._backend_registrar.clashes.items()
        }

    def is_installed(self, distribution: str) -> bool:
        """Whether ``distribution`` is installed (cached)."""
        name = normalize_distribution(distribution)
        if name not in self._installed:
            if self._is_installed is not None:
                self._installed[name] = self._is_installed(name)
            else:
                from sekai._metadata import installed_version

                self._installed[name] = installed_version(name) is not None
        return self._installed[name]

    def report(self) -> PluginReport:
        """The outcome of discovery, with each plugin's currently registered IDs."""
        from sekai._metadata import missing_requirements

        specs = self._registry.all_specs()
        plugins = tuple(
            PluginInfo(
                record.name,
                record.distribution,
                record.version,
                envs=tuple(s.id for s in specs if s.source == record.source),
                backends=tuple(record.backends),
                missing=missing_requirements(record.distribution),
            )
            for record in self._loaded
        )
        missing = tuple(
            p.distribution
            for p in PROVIDERS
            if p.distribution != "sekai-core" and not self.is_installed(p.distribution)
        )
        return PluginReport(plugins, tuple(self._failures), missing)

    # -- loading --------------------------------------------------------------------------

    def load(self) -> list[str]:
        """Load core's built-in plugin, then every entry point, each in isolation.

        Returns:
            The ``PluginLoadWarning`` messages to emit, which the caller does only once the
            registry is complete.
        """
        import pluggy

        from sekai.plugins import hookspecs

        pm = pluggy.PluginManager("sekai")
        pm.add_hookspecs(hookspecs)
        pm.hook.sekai_register_envs.call_historic(kwargs={"registry": self._env_registrar})
        pm.hook.sekai_register_vector_backends.call_historic(
            kwargs={"registry": self._backend_registrar}
        )
        core = PluginRecord("core", "sekai-core", __version__, first_party=True)
        try:
            # Registered directly, as pytest registers its default plugins (backends are strings).
            from sekai.plugins import _builtin
        except Exception as exc:
            self._fail(core, "import", _error_text(exc))
        else:
            self._register(pm, _builtin, core)

        scanning = self._entry_points is None
        records = scan_entry_points() if self._entry_points is None else self._entry_points
        # sekai's own plugins first, so that a hook may look their specs up (registry.md).
        records = sorted(
            records,
            key=lambda r: (
                not is_first_party(r.distribution),
                normalize_distribution(r.distribution),
                r.name,
            ),
        )
        selected = self._select(records)
        self._plugin_names = frozenset(r.name for r in selected) | RESERVED_PLUGIN_NAMES
        for record in selected:
            first_party = is_first_party(record.distribution)
            plugin = PluginRecord(record.name, record.distribution, record.version, first_party)
            if record.problem is not None:
                self._fail(plugin, "import", record.problem)
                continue
            # A third-party plugin's env IDs start with its entry-point name: a namespace.
            if not first_party and not NAMESPACE_RE.fullmatch(record.name):
                self._fail(plugin, "register", _bad_namespace(record))
                continue
            self._loading, self._importing = plugin, True
            try:
                module = _load_plugin(record)
            except (Exception, SystemExit) as exc:  # any error of the plugin's import-time code
                self._fail(plugin, "import", _error_text(exc))
                continue
            else:
                self._importing = False
                self._register(pm, module, plugin)
            finally:
                self._loading, self._importing = None, False

        messages = [
            f"sekai {f.label} failed to load and was skipped: {f.error.rstrip('.')}. "
            + (
                f"Set {DISABLE_ENV_VAR}={f.name} to silence this."
                if f.name != NAMELESS  # an entry point with no name cannot be disabled by it
                else "Repair or reinstall that distribution to silence this."
            )
            for f in self._failures
            if f.stage != "disabled"
        ]
        messages.extend(
            mode_clash_sentence(mode, [r.label for r in records])
            for mode, records in self._backend_registrar.clashes.items()
        )
        if scanning:
            messages.extend(_foreign_sekai_distribution())
        return messages

    def _select(self, records: list[EntryPointRecord]) -> list[EntryPointRecord]:
        """Drop disabled plugins and clashing names, recording why."""
        value = os.environ.get(DISABLE_ENV_VAR, "") if self._disabled is None else self._disabled
        disabled = _parse_disabled(value)
        active = []
        for record in records:
            if "*" in disabled or record.name in disabled:
                self._fail(
                    PluginRecord(record.name, record.distribution, record.version, False),
                    "disabled",
                    f"disabled by {DISABLE_ENV_VAR}",
                )
            else:
                active.append(record)
        by_name: dict[str, list[EntryPointRecord]] = defaultdict(list)
        for record in active:
            by_name[record.name].append(record)
        skipped: dict[int, str] = {}
        for name, group in by_name.items():
            first = [r for r in group if is_first_party(r.distribution)]
            third = [r for r in group if not is_first_party(r.distribution)]
            for record in third:
                reserved = reserved_for(name)
                if reserved is not None:
                    skipped[id(record)] = (
                        f"ValueError: plugin name {name!r} is {reserved}; "
                        f"{record.distribution} must use another entry-point name"
                    )
                elif len(group) > 1:
                    others = ", ".join(
                        f"{r.distribution} {r.version}" for r in group if r is not record
                    )
                    skipped[id(record)] = (
                        f"ValueError: plugin name {name!r} is also used by {others}; "
                        "both were skipped"
                    )
            if len(first) > 1:  # only a broken installation can get here
                for record in first[1:]:
                    skipped[id(record)] = (
                        f"ValueError: plugin name {name!r} is also used by {first[0].distribution}"
                    )
        selected = []
        for record in active:
            reason = skipped.get(id(record))
            if reason is None:
                selected.append(record)
            else:
                self._fail(
                    PluginRecord(record.name, record.distribution, record.version, False),
                    "clash",
                    reason,
                )
        return selected

    def _register(self, pm: pluggy.PluginManager, plugin: object, record: PluginRecord) -> None:
        """Register one plugin object with its registrations attributed to ``record``."""
        import pluggy

        self._env_registrar.current = record
        self._backend_registrar.current = record
        stage: FailureStage | None = None
        error = ""
        try:
            other = pm.get_name(plugin)
            if other is not None:
                raise ValueError(f"the same plugin object is already loaded as plugin {other!r}")
            pm.register(plugin, name=record.name)
            pm.check_pending()
            if not pm.get_hookcallers(plugin):
                raise pluggy.PluginValidationError(plugin, _no_hooks(plugin))
        except pluggy.PluginValidationError as exc:
            stage, error = "hooks", _error_text(exc)
        except (Exception, SystemExit) as exc:  # a hook's sys.exit() must not end discovery
            stage, error = "register", _error_text(exc)
        finally:
            self._env_registrar.current = None
            self._backend_registrar.current = None
        if stage is None:
            self._loaded.append(record)
            return
        for env_id in record.envs:
            self._registry.remove(env_id)
        self._backend_registrar.remove(record)
        if pm.get_plugin(record.name) is plugin:
            pm.unregister(name=record.name)
        self._fail(record, stage, error)

    def _fail(self, record: PluginRecord, stage: FailureStage, error: str) -> None:
        self._failures.append(
            PluginFailure(record.name, record.distribution, record.version, stage, error)
        )


def _bad_namespace(record: EntryPointRecord) -> str:
    return (
        f"ValueError: plugin name {record.name!r} of {record.distribution} cannot be the "
        f"namespace of its env IDs ('{record.name}/Name-v0'): an entry-point name in the "
        "'sekai' group may hold only letters, digits, '_' and '-'; rename the entry point"
    )


def _no_hooks(plugin: object) -> str:
    """Why a loaded plugin object gave pluggy no hook implementation (it registered nothing)."""
    name = getattr(plugin, "__name__", "")
    if callable(plugin) and name.startswith("sekai_"):
        return (
            f"the entry point names the function {name}; name its module instead "
            "('module.path', without ':attr')"
        )
    unmarked = sorted(n for n in dir(plugin) if n.startswith("sekai_register_"))
    if unmarked:
        return (
            f"{', '.join(unmarked)} is not marked as a hook: decorate it with "
            "@sekai.plugins.hookimpl"
        )
    return (
        f"the entry point gave {type(plugin).__name__} {plugin!r}, which implements no sekai "
        "hook (sekai_register_envs, sekai_register_vector_backends)"
    )


def _foreign_sekai_distribution() -> list[str]:
    """A warning if a ``sekai`` distribution with modules (not our meta-package) is installed."""
    from sekai import _metadata

    try:
        dist = _metadata.distribution("sekai")
    except _metadata.PackageNotFoundError:
        return []
    files = dist.files or []
    if not any(str(f).startswith("sekai/") and str(f).endswith(".py") for f in files):
        return []
    return [
        f"The installed 'sekai' distribution ({dist.version}) ships modules that overwrite "
        "sekai-core's files; it is an unrelated old package, not sekai's meta-distribution. "
        f"Fix it with: pip uninstall sekai && {install_command('sekai-core')} --force-reinstall"
    ]


def default_host(registry: EnvRegistry) -> PluginHost:
    """The host of the default registry: installed entry points and SEKAI_DISABLE_PLUGINS."""
    return PluginHost(registry)
