"""The objects plugin hooks receive: EnvRegistrar and BackendRegistrar."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sekai._providers import normalize_distribution, provider_of_mode
from sekai.registry.spec import (
    EnvSpec,
    SpecSource,
    WrapperSpec,
    check_entry_point,
    wrapper_tuple,
)

if TYPE_CHECKING:
    from sekai.registry.registry import EnvRegistry

__all__ = ["RESERVED_MODES", "BackendRegistrar", "EnvRegistrar", "PluginRecord"]

RESERVED_MODES = frozenset({"native", "vector_entry_point"})
_MODE_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_OUTSIDE_DISCOVERY = (
    "{cls}.register() may only be called by a plugin's {hook} hook during plugin discovery; "
    "at runtime use sekai.register()."
)


@dataclass
class PluginRecord:
    """The plugin currently being registered and what it has registered so far."""

    name: str
    distribution: str
    version: str
    first_party: bool
    envs: list[str] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)

    @property
    def source(self) -> SpecSource:
        """The provenance attached to everything this plugin registers."""
        return SpecSource(self.name, self.distribution, self.version)

    @property
    def label(self) -> str:
        """``plugin 'acme' (acme-envs 1.2.0)``."""
        return f"plugin {self.name!r} ({self.distribution} {self.version})"


def _require_string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"Plugins must register {what} as a 'module.path:ClassName' string (so nothing is "
            f"imported before it is used), got {type(value).__name__}."
        )
    check_entry_point(value, what)
    return value


class EnvRegistrar:
    """Registers a plugin's environments, attributed to the plugin (the ``registry`` argument).

    ``register`` mirrors ``sekai.register`` but only takes string entry points, and confines a
    third-party plugin to IDs in its own namespace (``<plugin name>/...``).
    """

    def __init__(self, registry: EnvRegistry) -> None:
        self._registry = registry
        self.current: PluginRecord | None = None

    def register(
        self,
        id: str,
        entry_point: str,
        *,
        vector_entry_point: str | None = None,
        kernel_entry_point: str | None = None,
        max_episode_steps: int | None = None,
        reward_threshold: float | None = None,
        nondeterministic: bool = False,
        kwargs: Mapping[str, Any] | None = None,
        additional_wrappers: Iterable[WrapperSpec] = (),
    ) -> EnvSpec:
        """Register one environment for the plugin being loaded.

        Raises:
            TypeError: an entry point is not a string.
            ValueError: a malformed ID or entry point, or (third-party plugins) an ID outside
                the plugin's namespace.
            EnvAlreadyRegistered: the ID is taken.
        """
        record = self.current
        if record is None:
            raise RuntimeError(
                _OUTSIDE_DISCOVERY.format(cls="EnvRegistrar", hook="sekai_register_envs")
            )
        _require_string(entry_point, "entry_point")
        if vector_entry_point is not None:
            _require_string(vector_entry_point, "vector_entry_point")
        if kernel_entry_point is not None:
            _require_string(kernel_entry_point, "kernel_entry_point")
        wrappers = wrapper_tuple(additional_wrappers)
        for wrapper in wrappers:
            if isinstance(wrapper, WrapperSpec):
                _require_string(wrapper.entry_point, f"entry_point of wrapper {wrapper.name!r}")
        if not record.first_party and not (
            isinstance(id, str) and id.startswith(f"{record.name}/")
        ):
            raise ValueError(
                f"plugin {record.name!r} registered {id!r}; third-party IDs must start with "
                f"{record.name + '/'!r}"
            )
        spec = EnvSpec(
            id=id,
            entry_point=entry_point,
            reward_threshold=reward_threshold,
            nondeterministic=nondeterministic,
            max_episode_steps=max_episode_steps,
            kwargs=dict(kwargs) if kwargs is not None else {},
            additional_wrappers=wrappers,
            vector_entry_point=vector_entry_point,
            kernel_entry_point=kernel_entry_point,
            source=record.source,
        )
        self._registry.add(spec)
        record.envs.append(spec.id)
        return spec


class BackendRegistrar:
    """Registers a plugin's vectorization modes (the ``registry`` argument of the backend hook)."""

    def __init__(self, registry: EnvRegistry) -> None:
        self._registry = registry
        self.current: PluginRecord | None = None
        self._owners: dict[str, PluginRecord] = {}
        # Modes that several plugins register: none of them gets it, as for a plugin name.
        self.clashes: dict[str, list[PluginRecord]] = {}

    def register(self, mode: str, entry_point: str) -> None:
        """Make ``make_vec(..., vectorization_mode=mode)`` build ``entry_point(env_fns, **kw)``.

        Raises:
            TypeError: ``mode`` or ``entry_point`` is not a string.
            ValueError: a malformed or reserved mode name, a mode the plugin registered
                already, or a malformed entry point.

        A mode that another plugin registers too is a clash: it is skipped for both (recorded
        in ``clashes``), and their environments load.
        """
        record = self.current
        if record is None:
            raise RuntimeError(
                _OUTSIDE_DISCOVERY.format(
                    cls="BackendRegistrar", hook="sekai_register_vector_backends"
                )
            )
        if not isinstance(mode, str):
            raise TypeError(f"A vectorization mode must be a str, got {type(mode).__name__}.")
        if _MODE_RE.fullmatch(mode) is None or mode in RESERVED_MODES:
            raise ValueError(
                f"{record.label} cannot register vectorization mode {mode!r}: modes are made of "
                "letters, digits, '_' and '-', and 'native' / 'vector_entry_point' are reserved."
            )
        owner = provider_of_mode(mode)
        if owner is not None and owner.distribution != normalize_distribution(record.distribution):
            raise ValueError(
                f"{record.label} cannot register vectorization mode {mode!r}: it is reserved "
                f"for {owner.distribution}."
            )
        _require_string(entry_point, "entry_point")
        clash = self.clashes.get(mode)
        holder = self._owners.get(mode)
        if clash is not None:
            if record not in clash:
                clash.append(record)
            return
        if holder is not None and holder is not record:
            self._registry.remove_backend(mode)
            holder.backends.remove(mode)
            del self._owners[mode]
            self.clashes[mode] = [holder, record]
            return
        self._registry.add_backend(mode, entry_point, record.source)
        self._owners[mode] = record
        record.backends.append(mode)

    def remove(self, record: PluginRecord) -> None:
        """Remove the modes of ``record``, a plugin that failed."""
        for mode in record.backends:
            self._registry.remove_backend(mode)
            self._owners.pop(mode, None)
