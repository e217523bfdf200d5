"""What plugin discovery reports: the plugins that loaded, those skipped, and why.

Defined here, below ``sekai.plugins``, because the registry returns these reports; import them
from ``sekai.plugins``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["FailureStage", "PluginFailure", "PluginInfo", "PluginReport"]

FailureStage = Literal["import", "hooks", "register", "clash", "disabled"]


@dataclass(frozen=True)
class PluginInfo:
    """A plugin that loaded: its name, distribution, version and what it registered.

    ``missing``: the dependencies its distribution declares that are not installed (``pip install
    --no-deps``, or a library removed later), as written in its metadata (``("ray>=2.9",)``); its
    plugin loads without them, but what it registered fails when used.
    """

    name: str
    distribution: str
    version: str
    envs: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that was skipped during discovery.

    Attributes:
        name: the plugin (entry-point) name.
        distribution: the distribution declaring it.
        version: that distribution's version.
        stage: ``"import"`` (its module failed to import), ``"hooks"`` (invalid hook
            implementations), ``"register"`` (a hook raised or broke a registration rule),
            ``"clash"`` (its name is taken) or ``"disabled"`` (``SEKAI_DISABLE_PLUGINS``).
        error: ``"Type: message"`` of the exception, or the reason.
    """

    name: str
    distribution: str
    version: str
    stage: FailureStage
    error: str

    @property
    def label(self) -> str:
        """``plugin 'acme' (acme-envs 1.2.0)``, as messages name a plugin."""
        return f"plugin {self.name!r} ({self.distribution} {self.version})"


@dataclass(frozen=True)
class PluginReport:
    """The outcome of plugin discovery (what ``sekai list --plugins`` shows).

    Attributes:
        plugins: the plugins that loaded, in load order (core's built-in plugin first).
        failures: the plugins that were skipped, in discovery order.
        missing: first-party distributions that are not installed.
    """

    plugins: tuple[PluginInfo, ...]
    failures: tuple[PluginFailure, ...]
    missing: tuple[str, ...]
