"""First-party distributions, what each provides, and the finder that names the one to install."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = [
    "PROVIDERS",
    "RESERVED_PLUGIN_NAMES",
    "MissingDistributionFinder",
    "Provider",
    "install_command",
    "install_command_from",
    "install_hint",
    "install_missing_distribution_finder",
    "is_first_party",
    "normalize_distribution",
    "provider_of_distribution",
    "provider_of_env",
    "provider_of_export",
    "provider_of_mode",
    "provider_of_module",
    "reserved_for",
]


@dataclass(frozen=True)
class Provider:
    """One first-party distribution and everything that is missing when it is not installed.

    Attributes:
        distribution: the name to ``pip install``.
        plugin: its entry-point plugin name (reserved for it), or None if it registers nothing.
        modules: the import paths it contributes under ``sekai``.
        env_ids: every env ID its plugin registers, namespaced or not.
        vector_modes: the vectorization modes its plugin registers.
        exports: the names its ``sekai.envs.<sub>`` package lists in ``__all__``.
    """

    distribution: str
    plugin: str | None
    modules: tuple[str, ...]
    env_ids: tuple[str, ...] = ()
    vector_modes: tuple[str, ...] = ()
    exports: tuple[str, ...] = ()


_CLASSIC_IDS = (
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Acrobot-v1",
)
_CLASSIC_CLASSES = ("CartPole", "MountainCar", "ContinuousMountainCar", "Pendulum", "Acrobot")
_FINANCE_CLASSES = ("Trading", "Portfolio", "MarketMaking", "OptimalExecution", "Market")

PROVIDERS: tuple[Provider, ...] = (
    Provider("sekai-core", "core", ("sekai",), vector_modes=("sync", "async", "proc")),
    Provider(
        "sekai-classic",
        "classic",
        ("sekai.envs.classic_control",),
        env_ids=(*_CLASSIC_IDS, *(f"classic/{env_id}" for env_id in _CLASSIC_IDS)),
        exports=(
            *(f"{name}Env" for name in _CLASSIC_CLASSES),
            *(f"{name}VecEnv" for name in _CLASSIC_CLASSES),
            "CartPoleRenderer",
            "MountainCarRenderer",
            "PendulumRenderer",
            "AcrobotRenderer",
        ),
    ),
    Provider(
        "sekai-finance",
        "finance",
        ("sekai.finance", "sekai.envs.finance"),
        env_ids=(
            "Trading-v0",
            "Portfolio-v0",
            "MarketMaking-v0",
            "OptimalExecution-v0",
            "Market-v0",
            "LimitOrderBook-v0",
        ),
        exports=(
            *(f"{name}Env" for name in (*_FINANCE_CLASSES, "LimitOrderBook")),
            "LimitOrderBookMarket",
            *(f"{name}VecEnv" for name in _FINANCE_CLASSES[:4]),
            *(f"{name}Renderer" for name in (*_FINANCE_CLASSES, "LimitOrderBook")),
            "LimitOrderBookMarketRenderer",
            "default_market",
            "simulate_gbm",
            "random_correlation",
            "sample_window",
        ),
    ),
    Provider("sekai-compat", None, ("sekai.compat",)),
    Provider("sekai-cli", None, ("sekai.cli",)),
    Provider("sekai-ray", "ray", ("sekai.ray",), vector_modes=("ray",)),
    Provider("sekai-jax", "jax", ("sekai.jax",), vector_modes=("jax",)),
    Provider("sekai-torch", "torch", ("sekai.torch",), vector_modes=("torch",)),
)

RESERVED_PLUGIN_NAMES: frozenset[str] = frozenset(p.plugin for p in PROVIDERS if p.plugin)
_BY_PLUGIN = {p.plugin: p for p in PROVIDERS if p.plugin}

_BY_MODULE = {module: p for p in PROVIDERS[1:] for module in p.modules}
_BY_ENV = {env_id: p for p in PROVIDERS for env_id in p.env_ids}
_BY_MODE = {mode: p for p in PROVIDERS for mode in p.vector_modes}
_BY_EXPORT = {name: p for p in PROVIDERS for name in p.exports}


def normalize_distribution(name: str) -> str:
    """PEP 503 normalisation, so ``Sekai_Finance`` and ``sekai-finance`` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


_BY_DIST = {p.distribution: p for p in PROVIDERS}


def provider_of_distribution(distribution: str) -> Provider | None:
    """The first-party entry for a distribution name, or None for a third-party one."""
    return _BY_DIST.get(normalize_distribution(distribution))


def is_first_party(distribution: str) -> bool:
    """Whether ``distribution`` is one of sekai's own distributions."""
    return provider_of_distribution(distribution) is not None


def provider_of_env(env_id: str) -> Provider | None:
    """The first-party distribution that registers ``env_id``, if any."""
    return _BY_ENV.get(env_id)


def provider_of_mode(mode: str) -> Provider | None:
    """The first-party distribution that registers vectorization mode ``mode``, if any."""
    return _BY_MODE.get(mode)


def provider_of_export(name: str) -> Provider | None:
    """The first-party distribution whose ``sekai.envs`` subpackage exports ``name``, if any."""
    return _BY_EXPORT.get(name)


def reserved_for(name: str) -> str | None:
    """``reserved for sekai-classic`` when the plugin name ``name`` is a first-party one, else None.

    Matched in any case (``Classic`` adds ``(as 'classic', in any case)``): namespaces are
    case-sensitive, so a third party's ``Classic`` would serve ``Classic/CartPole-v1`` to a user
    who mistyped ``classic``.
    """
    owner = _BY_PLUGIN.get(name.lower())
    if owner is None:
        return None
    as_typed = "" if name == owner.plugin else f" (as {owner.plugin!r}, in any case)"
    return f"reserved for {owner.distribution}{as_typed}"


def provider_of_module(module: str) -> Provider | None:
    """The first-party distribution contributing exactly the package ``module``, if any."""
    return _BY_MODULE.get(module)


@lru_cache(maxsize=1)
def _core_direct_url() -> Mapping[str, object] | None:
    """sekai-core's PEP 610 ``direct_url.json``, or None when it was installed by name."""
    from sekai._metadata import PackageNotFoundError, distribution

    try:
        text = distribution("sekai-core").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    return json.loads(text) if text else None


def _local_path(url: object) -> Path | None:
    """The path of a ``file://`` URL, or None for any other URL."""
    if not isinstance(url, str):
        return None
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _shown(path: Path, cwd: Path) -> str:
    """``./packages/x`` below the working directory (pip needs the ``./``), else absolute."""
    try:
        text = "./" + path.relative_to(cwd).as_posix()
    except ValueError:
        text = str(path)
    return shlex.quote(text)


def install_command_from(
    distribution: str, direct_url: Mapping[str, object] | None, cwd: Path
) -> str:
    """The command installing ``distribution`` from where sekai-core was installed.

    Args:
        distribution: the first-party distribution to install, e.g. ``"sekai-classic"``.
        direct_url: sekai-core's ``direct_url.json`` (None: it was installed by name, from a
            package index or a ``--find-links`` folder).
        cwd: the directory the user runs the command in.

    Returns:
        ``pip install -e ./packages/sekai-classic`` next to an editable checkout,
        ``pip install ./packages/sekai-classic`` next to a plain one, the sibling wheel's path when
        sekai-core was installed from a wheel file, and ``pip install sekai-classic`` only when
        sekai-core itself was installed by name: the same pip sources (an index, a find-links
        folder) have the other distributions, and pip records no path to name instead.
    """
    if direct_url is None:
        return f"pip install {distribution}"
    where = _local_path(direct_url.get("url"))
    if where is not None and "dir_info" in direct_url:
        sibling = where.parent / distribution
        if (sibling / "pyproject.toml").is_file():
            dir_info = direct_url["dir_info"]
            editable = isinstance(dir_info, Mapping) and dir_info.get("editable") is True
            return f"pip install {'-e ' if editable else ''}{_shown(sibling, cwd)}"
    elif where is not None and where.suffix == ".whl":
        version = where.name.split("-")[1] if where.name.count("-") >= 4 else "*"
        stem = distribution.replace("-", "_")
        wheels = sorted(where.parent.glob(f"{stem}-{version}-*.whl"))
        if wheels:
            return f"pip install {_shown(wheels[-1], cwd)}"
    # Installed from somewhere this process cannot see (a deleted folder, a VCS URL): the
    # distributions are not on an index, so only a checkout has them.
    return f"pip install ./packages/{distribution} (in a sekai checkout: it is not on an index)"


def install_command(distribution: str) -> str:
    """The command that installs ``distribution`` where the user is (see install_command_from)."""
    return install_command_from(distribution, _core_direct_url(), Path(os.getcwd()))


def install_hint(distribution: str) -> str:
    """The sentence every "not installed" message ends with."""
    return (
        f"It is provided by {distribution}, which is not installed: "
        f"{install_command(distribution)}."
    )


class MissingDistributionFinder:
    """A last-resort ``sys.meta_path`` finder naming the distribution a ``sekai.*`` module needs.

    It answers only for the packages first-party distributions contribute, and only after every
    other finder failed; it never returns a spec, it raises ``ModuleNotFoundError``.
    """

    @classmethod
    def find_spec(cls, fullname: str, path: object = None, target: object = None) -> None:
        """Raise the install hint for a first-party package; ignore every other module."""
        provider = _BY_MODULE.get(fullname)
        if provider is None:
            return None
        dist = provider.distribution
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: it is part of the {dist} distribution, which is not "
            f"installed. Install it with: {install_command(dist)}",
            name=fullname,
        )


def install_missing_distribution_finder() -> None:
    """Append ``MissingDistributionFinder`` to the end of ``sys.meta_path`` (once)."""
    if not any(type(f).__name__ == "MissingDistributionFinder" for f in sys.meta_path):
        sys.meta_path.append(MissingDistributionFinder())
