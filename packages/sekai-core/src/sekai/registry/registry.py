"""EnvRegistry: environment specs and vectorization modes, filled by plugins on first use."""

from __future__ import annotations

import os
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sekai._warnings import caller_stacklevel
from sekai.error import EnvAlreadyRegistered, EnvNotFound, PluginLoadWarning
from sekai.registry._report import env_hint, format_registry, mode_hint, owner_sentence, suggest
from sekai.registry.ids import parse_env_id
from sekai.registry.provenance import PluginReport
from sekai.registry.spec import _RENAME_CHECKS, EntryPoint, EnvSpec, SpecSource, WrapperSpec

if TYPE_CHECKING:
    from sekai.plugins._host import PluginHost

__all__ = ["EnvRegistry", "HostFactory"]

HostFactory = Callable[["EnvRegistry"], "PluginHost"]

# Core's modes come first in listings, in this order; plugin modes follow, sorted.
_CORE_MODES = ("sync", "async", "proc")
_NAMESPACE_RE = re.compile(r"[a-zA-Z0-9_-]+")
_Backend = tuple[EntryPoint, SpecSource | None]
# The specs, backends and namespace loaders before discovery.
_Snapshot = tuple[dict[str, EnvSpec], dict[str, _Backend], dict[str, Callable[[], object]]]
# Plugin discovery's key among the running loaders (no namespace can be spelled so).
_DISCOVERY = "<plugin discovery>"


class _Loading:
    """A namespace loader (or plugin discovery) running in ``thread``; ``done`` is set once it
    has returned or raised."""

    __slots__ = ("added", "done", "loader", "thread")

    def __init__(self, loader: Callable[..., object]) -> None:
        self.loader = loader
        self.thread = threading.get_ident()
        self.done = threading.Event()
        self.added: dict[str, EnvSpec] = {}  # its namespace's IDs registered while it runs


class EnvRegistry:
    """A registry of environment specs and vector backends.

    Plugins are discovered once, by the first operation that reads or changes the registry
    (never at import): ``host_factory(registry)`` builds the plugin host that loads them. A
    registry without a host factory discovers nothing. Every change takes a reentrant lock for a
    short step; a lookup that finds its ID takes none. Discovery and namespace loaders run
    without it, so that they may register from other threads; other threads' operations wait
    for discovery, and their lookups of a missing ID for its namespace's loader.

    Args:
        host_factory: builds the ``sekai.plugins._host.PluginHost`` for this registry.
    """

    # How long an operation waits for another thread's discovery or namespace loader before
    # raising TimeoutError: that one may be waiting for this thread, and would never end.
    _wait_timeout: float = 120.0

    def __init__(self, host_factory: HostFactory | None = None) -> None:
        self._specs: dict[str, EnvSpec] = {}
        self._loaders: dict[str, Callable[[], object]] = {}
        self._backends: dict[str, _Backend] = {}
        self._host_factory = host_factory
        self._host: PluginHost | None = None
        self._lock = threading.RLock()
        self._discovered = host_factory is None
        # What to restore if discovery fails, or the process forks while another thread runs it.
        self._before_discovery: _Snapshot = ({}, {}, {})
        self._loading: dict[str, _Loading] = {}  # by namespace, and discovery by _DISCOVERY
        self._waiting: dict[int, str] = {}  # thread -> the key of the loading it waits for
        _LIVE.add(self)

    # -- discovery ------------------------------------------------------------------------

    def ensure_discovered(self) -> None:
        """Load the plugins if no registry operation has done so yet.

        Warns ``PluginLoadWarning`` once per failed plugin, after every plugin was processed,
        so that turning the warning into an error still leaves a complete registry.
        """
        if self._discovered:
            return
        me = threading.get_ident()
        while True:
            with self._lock:
                if self._discovered or self._host_factory is None:
                    return
                running = self._loading.get(_DISCOVERY)
                if running is None:
                    running = self._loading[_DISCOVERY] = _Loading(self._host_factory)
                    self._before_discovery = (
                        dict(self._specs),
                        dict(self._backends),
                        dict(self._loaders),
                    )
                    break
                # A plugin calling sekai.register() while it is being loaded comes back here.
                if self._waits_for(running.thread, me):
                    return
                self._waiting[me] = _DISCOVERY
            self._wait(_DISCOVERY, running, me)  # then discover here if it failed there
        # Without the lock, so that a plugin's hook may register from other threads.
        failed = True
        try:
            host = self._host_factory(self)
            self._host = host
            messages = host.load()
            failed = False
        finally:
            with self._lock:
                del self._loading[_DISCOVERY]
                if failed:
                    self._undo_discovery()
                self._discovered = not failed
                self._before_discovery = ({}, {}, {})
            running.done.set()
        stacklevel = caller_stacklevel()
        for message in messages:
            warnings.warn(PluginLoadWarning(message), stacklevel=stacklevel)

    def _undo_discovery(self) -> None:
        """Nothing half-loaded stays behind: the next registry operation discovers again. The
        namespace loaders that ran meanwhile (a plugin's hook looked one of their IDs up) are
        kept again, as their IDs go with the rest: the next lookup runs them again."""
        self._specs, self._backends, loaders = self._before_discovery
        for namespace, loader in loaders.items():
            if namespace not in self._loading:  # a running one puts itself back if it fails
                self._loaders.setdefault(namespace, loader)
        self._host = None

    def _refuse_while_loading(self, call: str, env_id: object) -> None:
        """Refuse a runtime change made while a plugin is imported or its hooks run.

        Such a call (a plugin's import-time code, or a library it imports, calling
        ``sekai.register()``) would escape the plugin's namespace, its attribution and the
        removal of a failed plugin's registrations. Only a runtime namespace loader that a hook
        looked up registers, in its own namespace, as at any other time.
        """
        if _DISCOVERY not in self._loading or self._host is None:
            return  # only discovery's own thread gets here while discovery runs
        text = env_id if isinstance(env_id, str) else ""
        if "/" in text and text.partition("/")[0] in self._loading:
            return  # the runtime loader of that namespace
        owner = self._host.owner_of(text) if text else None
        loading = self._host.loading
        if loading is None and owner is None:
            return  # between plugins: sekai's own code
        during = self._host.loading_own(text) if text else None
        if during is not None:  # the gym habit: the plugin registers its own IDs itself
            # A plugin's hook can only register: it removes nothing while it loads.
            removes = "removes none of them while it loads and " if "deregister" in call else ""
            raise RuntimeError(
                f"{loading} called {call} for {env_id!r} during {during}: a plugin {removes}"
                "registers its environments with the registry argument of its "
                "sekai_register_envs hook instead (registry.register(...)), which credits them "
                "to it and removes them if it fails."
            )
        belongs = f", but {env_id!r} belongs to {owner}" if owner is not None else ""
        raise RuntimeError(
            f"{call} of {env_id!r} was called while {loading or 'a plugin'} was being "
            f"loaded{belongs}. A plugin registers its environments with the registry argument "
            "of its sekai_register_envs hook (registry.register(...)), in its own namespace."
        )

    @property
    def host(self) -> PluginHost | None:
        """The plugin host, once discovery has run (None for a registry without plugins)."""
        return self._host

    def plugin_report(self) -> PluginReport:
        """What discovery loaded, skipped, and which first-party distributions are missing."""
        self.ensure_discovered()
        if self._host is None:
            return PluginReport((), (), ())
        return self._host.report()

    # -- specs ----------------------------------------------------------------------------

    def add(self, spec: EnvSpec) -> EnvSpec:
        """Store ``spec`` as is (no discovery; plugin registrars use this).

        Raises:
            EnvAlreadyRegistered: the ID is taken; when a plugin provides it, an exception
                note names the plugin (``str(error)`` is the spec's exact text).
        """
        with self._lock:  # the check and the store are one step for other threads
            existing = self._specs.get(spec.id)
            if existing is not None:
                raise EnvAlreadyRegistered(spec.id, owner_sentence(existing))
            self._specs[spec.id] = spec
            if self._loading and spec.namespace in self._loading:  # for a failed loader's undo
                self._loading[spec.namespace].added[spec.id] = spec
        return spec

    def remove(self, env_id: str) -> EnvSpec | None:
        """Drop ``env_id`` without discovery or errors; returns the removed spec, if any."""
        with self._lock:
            return self._specs.pop(env_id, None)

    def register(
        self,
        id: str,
        entry_point: EntryPoint | None,
        *,
        reward_threshold: float | None = None,
        nondeterministic: bool = False,
        max_episode_steps: int | None = None,
        kwargs: Mapping[str, Any] | None = None,
        additional_wrappers: Iterable[WrapperSpec] = (),
        vector_entry_point: EntryPoint | None = None,
        kernel_entry_point: EntryPoint | None = None,
    ) -> EnvSpec:
        """Register an environment at runtime (see ``sekai.register``)."""
        self.ensure_discovered()
        self._refuse_while_loading("sekai.register()", id)
        if entry_point is None:
            raise TypeError(
                "entry_point must be a callable or a 'module.path:ClassName' string, got None."
            )
        spec = EnvSpec(
            id=id,
            entry_point=entry_point,
            reward_threshold=reward_threshold,
            nondeterministic=nondeterministic,
            max_episode_steps=max_episode_steps,
            kwargs=kwargs if kwargs is not None else {},  # type: ignore[arg-type]  # checked there
            additional_wrappers=additional_wrappers,  # type: ignore[arg-type]  # checked there
            vector_entry_point=vector_entry_point,
            kernel_entry_point=kernel_entry_point,
        )
        return self.add(spec)

    def deregister(self, env_id: str) -> None:
        """Remove ``env_id``, running its namespace's loader first if needed (as ``spec()``).

        Raises:
            EnvNotFound: it is not registered.
            ValueError: ``env_id`` is not a valid ID.
        """
        self.ensure_discovered()
        self._refuse_while_loading("sekai.deregister()", env_id)
        if not isinstance(env_id, str):
            parse_env_id(env_id)  # the TypeError naming what was given (a dict key otherwise)
        if self.remove(env_id) is None:
            # Not loaded yet, or unknown: spec() runs the loader, or raises what it raises.
            self.spec(env_id)
            self.remove(env_id)

    def spec(self, env_id: str) -> EnvSpec:
        """The spec of ``env_id``, running its namespace's loader first if needed.

        Raises:
            EnvNotFound: not registered (with suggestions and a hint naming what to install).
            ValueError: ``env_id`` is not a valid ID.
        """
        self.ensure_discovered()
        if not isinstance(env_id, str):
            parse_env_id(env_id)  # the TypeError naming what was given (a dict key otherwise)
        found = self._specs.get(env_id)  # a hit takes no lock
        if found is not None:
            return found
        namespace = parse_env_id(env_id).namespace
        if namespace is not None:
            self._load(namespace, env_id)
            found = self._specs.get(env_id)
            if found is not None:
                return found
        raise self.not_found(env_id)

    def _load(self, namespace: str, env_id: str) -> None:
        """Run ``namespace``'s loader if it has not run and ``env_id`` is missing, or wait for
        the thread running it and look again (a loader that failed there runs here)."""
        me = threading.get_ident()
        while True:
            with self._lock:
                if env_id in self._specs:
                    return
                running = self._loading.get(namespace)
                if running is None:
                    loader = self._loaders.pop(namespace, None)
                    if loader is None:
                        return
                    running = self._loading[namespace] = _Loading(loader)
                    break
                if self._waits_for(running.thread, me):
                    return  # its own loader, or one waiting on it: waiting would never end
                self._waiting[me] = namespace
            self._wait(namespace, running, me, env_id)
        # Without the lock, so the loader may register from other threads, and out of
        # ``_loaders``, so a lookup inside it does not run it again.
        failed = True
        try:
            running.loader()
            failed = False
        finally:
            with self._lock:
                del self._loading[namespace]
                if failed:
                    self._undo_load(namespace, running)
            running.done.set()

    def _wait(self, key: str, running: _Loading, me: int, env_id: str | None = None) -> None:
        """Wait for ``running``, which ``self._waiting`` says ``me`` waits for.

        Raises:
            TimeoutError: it still runs after ``_wait_timeout`` seconds. It may be waiting for
                this thread, which the cycle check cannot see (a helper thread it started).
        """
        try:
            finished = running.done.wait(self._wait_timeout)
        finally:
            with self._lock:
                del self._waiting[me]
        if not finished:
            raise TimeoutError(self._stuck_message(key, running, env_id))

    def _stuck_message(self, key: str, running: _Loading, env_id: str | None) -> str:
        waited = f"{self._wait_timeout:g} s"
        if key == _DISCOVERY:
            host = self._host
            now = f" (it is loading {host.loading})" if host and host.loading else ""
            return (
                f"This registry operation waited {waited} for the plugin discovery that "
                f"another thread runs{now}. If a plugin's hook waits for this thread (a "
                "thread pool it started), neither can go on: that thread registers through "
                "the hook's registry argument (registry.register(...)), not with sekai's "
                "registry functions, which wait for discovery."
            )
        loader = running.loader
        module = getattr(loader, "__module__", None)
        qualname = getattr(loader, "__qualname__", None)
        name = f"{module}.{qualname}" if module and qualname else repr(loader)
        return (
            f"Looking up {env_id!r} waited {waited} for the loader {name} of namespace "
            f"{key!r}, which another thread runs. If that loader waits for this thread (a "
            "helper thread or thread pool it started), neither can go on: register the IDs "
            "that thread looks up before it starts, or look them up in the loader's thread."
        )

    def _waits_for(self, thread: int, me: int) -> bool:
        """Whether ``thread`` is ``me`` or waits, through the loaders it waits for, for ``me``."""
        for _ in range(len(self._waiting) + 1):  # the chain ends, or returns to ``me``
            if thread == me:
                return True
            waited = self._waiting.get(thread)
            running = self._loading.get(waited) if waited is not None else None
            if running is None:
                return False
            thread = running.thread
        return False

    def _undo_load(self, namespace: str, running: _Loading) -> None:
        """Remove the IDs of ``namespace`` registered while its loader ran (other namespaces'
        IDs stay) and keep the loader for the next lookup, unless it was replaced meanwhile."""
        for env_id, spec in running.added.items():
            if self._specs.get(env_id) is spec:
                del self._specs[env_id]
        self._loaders.setdefault(namespace, running.loader)

    def _after_fork_in_child(self) -> None:
        """Only the forking thread lives on: other threads' discovery and loaders start over
        at the child's next lookup, and their lock is not held here."""
        self._lock = threading.RLock()
        me = threading.get_ident()
        for key, running in list(self._loading.items()):
            if running.thread == me:
                running.done = threading.Event()  # its lock may be held by a parent thread
                continue
            del self._loading[key]
            if key == _DISCOVERY:
                self._undo_discovery()
            else:
                self._undo_load(key, running)
        self._waiting.clear()

    def all_specs(self) -> list[EnvSpec]:
        """Every registered spec, in registration order."""
        self.ensure_discovered()
        return list(self._specs.values())

    def register_namespace(self, namespace: str, loader: Callable[[], object]) -> None:
        """Run ``loader()`` the first time ``spec()``/``make()`` misses an ID in ``namespace``.

        The loader is dropped only after it succeeds, so a failed import can be retried. A
        second call for the same namespace replaces a loader that has not run yet. A lookup from
        another thread while the loader runs waits for it (TimeoutError after ``_wait_timeout``
        seconds: the loader may be waiting for that thread); the loader's own thread does not.
        """
        if not isinstance(namespace, str) or _NAMESPACE_RE.fullmatch(namespace) is None:
            raise ValueError(
                f"Invalid namespace {namespace!r}: expected letters, digits, '_' or '-' "
                "(the part of an ID before '/')."
            )
        if not callable(loader):
            raise TypeError(
                f"loader must be a zero-argument callable, got {type(loader).__name__}."
            )
        with self._lock:
            self._loaders[namespace] = loader

    def format(self) -> str:
        """The ``pprint_registry()`` text."""
        return format_registry(self.all_specs())

    def not_found(self, env_id: str) -> EnvNotFound:
        """The ``EnvNotFound`` for ``env_id``, with suggestions and the install/plugin hint."""
        provider, failures, hint = env_hint(env_id, self._host)
        host = self._host
        if provider is None and _DISCOVERY in self._loading and host and host.loading:
            # A plugin looked it up: those loading after it have not registered theirs yet.
            partial = (
                f"The registry is incomplete while plugins load: {host.loading} looked it up "
                "while being loaded, when only sekai's own environments are sure to be there."
            )
            hint = f"{hint} {partial}" if hint else partial
        with self._lock:  # the suggestions read every ID: no register() may change them then
            suggestions = suggest(env_id, self._specs)
        return EnvNotFound(env_id, suggestions, provider=provider, failures=failures, hint=hint)

    # -- vector backends ------------------------------------------------------------------

    def add_backend(self, mode: str, entry_point: EntryPoint, source: SpecSource | None) -> None:
        """Store a vectorization mode (no discovery; the backend registrar uses this).

        Raises:
            ValueError: the mode is already provided.
        """
        with self._lock:
            existing = self._backends.get(mode)
            if existing is not None:
                owner = existing[1]
                by = (
                    f" by plugin {owner.plugin!r} ({owner.distribution} {owner.version})"
                    if owner
                    else ""
                )
                raise ValueError(f"Vectorization mode {mode!r} is already provided{by}.")
            self._backends[mode] = (entry_point, source)

    def remove_backend(self, mode: str) -> None:
        """Drop a vectorization mode (no discovery, no error if absent)."""
        with self._lock:
            self._backends.pop(mode, None)

    def vectorization_modes(self) -> list[str]:
        """``native``, core's modes, then plugin modes sorted: the list errors show."""
        self.ensure_discovered()
        core = [m for m in _CORE_MODES if m in self._backends]
        others = sorted(m for m in self._backends if m not in _CORE_MODES)
        return ["native", *core, *others]

    def backend(self, mode: str) -> EntryPoint:
        """The backend entry point of a registered (non-native) vectorization mode.

        Raises:
            ValueError: ``Unknown vectorization_mode ...``, listing every mode (and naming the
                distribution to install for a first-party mode).
        """
        self.ensure_discovered()
        found = self._backends.get(mode) if isinstance(mode, str) else None
        if found is not None:
            return found[0]
        message = (
            f"Unknown vectorization_mode {mode!r}; expected one of {self.vectorization_modes()!r}."
        )
        hint = mode_hint(mode, self._host)
        raise ValueError(f"{message} {hint}" if hint else message)

    def backend_source(self, mode: str) -> SpecSource | None:
        """Who registered ``mode`` (None if unknown or registered without a plugin)."""
        self.ensure_discovered()
        found = self._backends.get(mode)
        return found[1] if found is not None else None


_LIVE: weakref.WeakSet[EnvRegistry] = weakref.WeakSet()


def _refuse_renaming_a_stored_spec(spec: EnvSpec, new_id: str) -> None:
    """Refuse a new ``id`` for a spec a registry stores: it would stay under the old ID, so
    ``all_specs()`` would list a name ``spec()`` cannot find and the old name would build it."""
    for registry in list(_LIVE):
        if registry._specs.get(spec.id) is spec:
            raise AttributeError(
                f"Cannot rename {spec.id!r} to {new_id!r}: this EnvSpec is the registry's own "
                "entry (sekai.spec() returns it, not a copy). Rename a copy instead: "
                f"dataclasses.replace(spec, id={new_id!r})."
            )


_RENAME_CHECKS.append(_refuse_renaming_a_stored_spec)


def _after_fork_in_child() -> None:
    for registry in list(_LIVE):
        registry._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
