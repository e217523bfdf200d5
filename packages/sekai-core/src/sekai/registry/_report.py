"""Texts the registry shows: suggestions, "not found" hints and the pprint_registry listing."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sekai._providers import (
    install_hint,
    is_first_party,
    normalize_distribution,
    provider_of_env,
    provider_of_mode,
    reserved_for,
)
from sekai.registry.ids import parse_env_id

if TYPE_CHECKING:
    from sekai.plugins import PluginFailure
    from sekai.plugins._host import PluginHost
    from sekai.registry.spec import EnvSpec

__all__ = [
    "WRONG_ENTRY_POINT",
    "env_hint",
    "failure_sentence",
    "format_registry",
    "mode_clash_sentence",
    "mode_hint",
    "owner_sentence",
    "suggest",
]

_FIXES = {
    "import": "Reinstall it or add the missing dependency.",
    "clash": "Uninstall one of the distributions using that plugin name.",
}
_DEFAULT_FIX = "Reinstall it, or report the problem to its maintainers."
_RESERVED_FIX = (
    "Report it to the maintainers of {distribution}, or rename that entry point (and the "
    "namespace of its IDs) if the pack is yours."
)
# A plugin whose module raised something else than a missing import: its own code failed.
_IMPORT_ERRORS = ("ImportError:", "ModuleNotFoundError:", "MissingDependency:")
# How discovery words an entry point whose module or attribute does not exist (a typo in the
# pack's entry point, or an install older than its code).
WRONG_ENTRY_POINT = "the pack's entry point names"
_WRONG_ENTRY_POINT_FIX = (
    "Fix that entry point in the [project.entry-points.sekai] table of the pack's "
    "pyproject.toml and reinstall it, or report the problem to its maintainers."
)
_RAISED_AT_IMPORT = (
    "Its module raised while being imported: reinstall it, or report the problem to its "
    "maintainers (SEKAI_DISABLE_PLUGINS={name} skips it)."
)


def _version_key(env_id: str) -> int:
    version = parse_env_id(env_id).version
    return -1 if version is None else version


def suggest(env_id: str, registered: Iterable[str], n: int = 3) -> tuple[str, ...]:
    """Close registered IDs for a miss, best first.

    Other versions of the same name come first (name and namespace compare
    case-insensitively, so ``Cartpole-v1`` suggests ``CartPole-v1``); otherwise the same name in
    other namespaces (the same version first, then newest first), then IDs of the same namespace
    whose name and version look alike (``difflib.get_close_matches``, cutoff 0.6, on the IDs
    without their shared namespace). For a namespace with no IDs, only a likely typo in the
    namespace is suggested: the same name elsewhere, or IDs of a look-alike namespace whose name
    and version look alike. So ``CartPole-v0`` does not suggest ``Market-v0``, nor
    ``classic/Foo-v0`` ``classic/CartPole-v1``, nor ``broken/Thing-v0`` ``Trading-v0``.
    """
    ids = [i for i in registered if i != env_id]
    try:
        namespace, name, version = parse_env_id(env_id)
    except (TypeError, ValueError):
        return tuple(difflib.get_close_matches(str(env_id), ids, n=n, cutoff=0.6))
    parsed = {other: parse_env_id(other) for other in ids}
    namespaces: dict[str, list[str]] = {}
    for other, p in parsed.items():
        namespaces.setdefault((p.namespace or "").lower(), []).append(other)
    same_ns = namespaces.get((namespace or "").lower(), [])
    same_name = [i for i in same_ns if parsed[i].name.lower() == name.lower()]
    if same_name:
        return tuple(sorted(same_name, key=_version_key, reverse=True)[:n])
    # The same version first (the user forgot or misspelt the namespace), then newest first.
    elsewhere = sorted(
        (i for i, p in parsed.items() if p.name.lower() == name.lower()),
        key=lambda i: (parsed[i].version == version, _version_key(i)),
        reverse=True,
    )
    if same_ns:
        return tuple([*elsewhere, *_alike(env_id, same_ns, n)][:n])
    if elsewhere:
        return tuple(elsewhere[:n])
    close_ns = difflib.get_close_matches((namespace or "").lower(), list(namespaces), cutoff=0.6)
    candidates = [i for ns in close_ns for i in namespaces[ns]]
    return tuple(_alike(env_id, candidates, n))


def _alike(env_id: str, candidates: Iterable[str], n: int) -> list[str]:
    """The ``candidates`` (IDs of one namespace as ``env_id``'s, or of a look-alike one) whose
    name and version look like ``env_id``'s, best first: the namespace is left out of the
    comparison, or the prefix they share would make every ID of a namespace look alike."""
    by_name: dict[str, list[str]] = {}
    for candidate in candidates:
        by_name.setdefault(candidate.rpartition("/")[2], []).append(candidate)
    close = difflib.get_close_matches(env_id.rpartition("/")[2], list(by_name), n=n, cutoff=0.6)
    return [candidate for name in close for candidate in by_name[name]][:n]


def failure_sentence(failure: PluginFailure) -> str:
    """The hint naming a failed or disabled plugin, with how to fix it."""
    if failure.stage == "disabled":
        return f"Plugin {failure.name!r} is disabled by SEKAI_DISABLE_PLUGINS."
    fix = _FIXES.get(failure.stage, _DEFAULT_FIX)
    if failure.stage == "import" and WRONG_ENTRY_POINT in failure.error:
        fix = _WRONG_ENTRY_POINT_FIX
    elif failure.stage == "import" and not failure.error.startswith(_IMPORT_ERRORS):
        fix = _RAISED_AT_IMPORT.format(name=failure.name)
    elif (
        failure.stage == "clash"
        and reserved_for(failure.name) is not None
        and not is_first_party(failure.distribution)
    ):
        # Only that distribution is skipped (the first-party plugin loads): it needs a new name.
        fix = _RESERVED_FIX.format(distribution=failure.distribution)
    return (
        f"Plugin {failure.name!r} ({failure.distribution} {failure.version}) failed to load: "
        f"{failure.error.rstrip('.')}. {fix}"
    )


def _failures_of(
    host: PluginHost, distribution: str | None, plugin: str | None
) -> list[PluginFailure]:
    found = []
    for failure in host.failures:
        if distribution is not None:
            if normalize_distribution(failure.distribution) == distribution:
                found.append(failure)
        elif failure.name == plugin:
            found.append(failure)
    return found


def env_hint(
    env_id: str, host: PluginHost | None
) -> tuple[str | None, tuple[PluginFailure, ...], str | None]:
    """Why ``env_id`` may be missing: ``(provider, failures, hint sentence)``.

    The provider is the first-party distribution listing the ID; the failures are those of the
    plugin that would have registered it (the first-party plugin, or the plugin owning the ID's
    namespace); the hint says what to install, or which plugin failed or is disabled.
    """
    provider = provider_of_env(env_id)
    if host is None:
        return (provider.distribution if provider else None), (), None
    if provider is not None:
        failures = _failures_of(host, provider.distribution, None)
        if not failures and not host.is_installed(provider.distribution):
            return provider.distribution, (), install_hint(provider.distribution)
    else:
        try:
            namespace = parse_env_id(env_id).namespace
        except (TypeError, ValueError):
            namespace = None
        failures = _failures_of(host, None, namespace) if namespace else []
    hint = failure_sentence(failures[0]) if failures else None
    return (provider.distribution if provider else None), tuple(failures), hint


def mode_clash_sentence(mode: str, plugins: Sequence[str]) -> str:
    """Why ``mode``, which several plugins register, was skipped, and how to fix it."""
    named = " and ".join([", ".join(plugins[:-1]), plugins[-1]] if len(plugins) > 1 else plugins)
    return (
        f"Vectorization mode {mode!r} is registered by {named}, so it was "
        "skipped (their environments load normally). Uninstall one of the distributions "
        "using that mode name."
    )


def mode_hint(mode: object, host: PluginHost | None) -> str | None:
    """The sentence for an unknown vectorization mode that several plugins register, or that
    a first-party plugin provides."""
    if not isinstance(mode, str) or host is None:
        return None
    clashing = host.mode_clashes.get(mode)
    if clashing:
        return mode_clash_sentence(mode, clashing)
    provider = provider_of_mode(mode)
    if provider is None:
        return None
    failures = _failures_of(host, provider.distribution, None)
    if failures:
        return failure_sentence(failures[0])
    if not host.is_installed(provider.distribution):
        return install_hint(provider.distribution)
    return None


def owner_sentence(spec: EnvSpec) -> str | None:
    """``It is provided by plugin 'classic' (sekai-classic 0.3.0).``, or None for runtime specs."""
    source = spec.source
    if source is None:
        return None
    return f"It is provided by plugin {source.plugin!r} ({source.distribution} {source.version})."


def format_registry(specs: Sequence[EnvSpec]) -> str:
    """The ``pprint_registry()`` text: IDs sorted, grouped by namespace, un-namespaced first."""
    groups: dict[str | None, list[str]] = {}
    for spec in specs:
        groups.setdefault(spec.namespace, []).append(spec.id)
    lines = ["Registered environments:"]
    order = sorted(groups, key=lambda ns: (ns is not None, ns or ""))
    for namespace in order:
        lines.append("  [no namespace]" if namespace is None else f"  [{namespace}]")
        lines.extend(f"    {env_id}" for env_id in sorted(groups[namespace]))
    return "\n".join(lines)
