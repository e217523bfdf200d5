"""Test helpers for env packs and sekai's own suites: env conformance and a sandboxed registry."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sekai.core.env import Env
    from sekai.registry.registry import EnvRegistry
    from sekai.registry.spec import EnvSpec

__all__ = ["assert_env_conforms", "registry_sandbox"]

SANDBOX_DISTRIBUTION = "sekai-sandbox"
SANDBOX_VERSION = "0.0.0"


def assert_env_conforms(
    env_or_id: Env[Any, Any] | str | EnvSpec,
    *,
    n_steps: int = 100,
    check_determinism: bool | None = None,
    strict: bool = False,
    check_vector: bool = True,
) -> None:
    """Assert that an environment passes ``sekai.check_env``.

    Args:
        env_or_id: a fresh env, or an ID / ``EnvSpec`` to ``make()`` (and close afterwards).
        n_steps: random steps ``check_env`` takes.
        check_determinism: compare two seeded rollouts; None does so unless the spec is
            registered ``nondeterministic``.
        strict: fail on every WARNING too. Without it only ERRORs fail, and a determinism
            failure (which ``check_env`` reports as a WARNING).
        check_vector: for an ID with a ``vector_entry_point``, also run the vector contract
            checks (``sekai.vector.kernel_check.check_kernel_vec_env``: batched spaces,
            same-step autoreset, freezing with ``autoreset=False``, action errors and, with
            ``check_determinism``, determinism) on its native vector env with two sub-envs
            (and a time limit of at most ``n_steps // 3``, so that episodes end). Registered
            ``additional_wrappers`` are left out there: a native env has no per-env objects
            to wrap, and ``make_vec`` refuses them in native mode.

    Raises:
        AssertionError: listing every issue found.
    """
    from sekai.registry.api import make
    from sekai.registry.spec import EnvSpec
    from sekai.utils.checker import check_env

    spec: EnvSpec | None = None
    if isinstance(env_or_id, (str, EnvSpec)):
        env = make(env_or_id)
        spec = env.spec
        label = spec.id if spec is not None else str(env_or_id)
    else:
        env, label = env_or_id, str(env_or_id)
    if check_determinism is None:
        check_determinism = spec is None or not spec.nondeterministic
    try:
        issues = check_env(env, n_steps=n_steps, check_determinism=check_determinism)
    finally:
        if spec is not None:
            env.close()
    failing = _failing(issues, strict)
    if failing:
        raise AssertionError(f"{label} does not conform:\n" + "\n".join(failing))
    if check_vector and spec is not None and spec.vector_entry_point is not None:
        _assert_native_conforms(spec, n_steps, check_determinism, strict)


def _failing(issues: list[str], strict: bool) -> list[str]:
    """The issues that fail the assertion: all of them with ``strict``, else the ERRORs and a
    failed determinism check (a WARNING of ``check_env``, which compares no rollouts of an env
    registered ``nondeterministic``)."""
    from sekai.utils._check_messages import NONDETERMINISTIC

    failing = ("ERROR", f"WARNING: {NONDETERMINISTIC}")
    return issues if strict else [issue for issue in issues if issue.startswith(failing)]


def _assert_native_conforms(
    spec: EnvSpec, n_steps: int, check_determinism: bool, strict: bool
) -> None:
    """The vector contract checks (``check_kernel_vec_env``) on the native vector env, with a
    time limit of at most ``n_steps // 3`` so that autoreset and freezing are exercised."""
    import dataclasses

    from sekai.registry.api import make_vec
    from sekai.vector.kernel_check import check_kernel_vec_env

    limit = max(1, n_steps // 3)
    if spec.max_episode_steps is not None:
        limit = min(limit, spec.max_episode_steps)

    # Native mode refuses per-env wrappers, which the native env never gets anyway.
    native = dataclasses.replace(spec, additional_wrappers=())

    def build(autoreset: bool) -> Any:
        return make_vec(
            native,
            2,
            vectorization_mode="native",
            vector_kwargs={"autoreset": autoreset},
            max_episode_steps=limit,
        )

    issues = check_kernel_vec_env(
        lambda: build(True),
        n_steps=n_steps,
        check_determinism=check_determinism,
        make_frozen=lambda: build(False),
    )
    failing = _failing(issues, strict)
    if failing:
        raise AssertionError(
            f"The native vector env of {spec.id} does not conform:\n" + "\n".join(failing)
        )


def _returning(value: object) -> Callable[[], object]:
    return lambda: value


@contextlib.contextmanager
def registry_sandbox(
    *plugins: object,
    distribution: str = SANDBOX_DISTRIBUTION,
    version: str = SANDBOX_VERSION,
) -> Iterator[EnvRegistry]:
    """Swap in a fresh default registry whose only plugins are the given in-memory objects.

    Installed entry points are not loaded; core's built-in plugin (the ``sync``, ``async`` and
    ``proc`` modes) is. Each plugin is loaded exactly as an entry point would be, attributed
    to ``distribution``/``version`` (third-party rules apply unless that names a first-party
    distribution), lazily at the sandbox's first registry operation. The real default
    registry is restored on exit.

    Args:
        *plugins: plugin objects (modules, classes or instances with ``@hookimpl`` functions),
            or ``(name, plugin)`` pairs. Unnamed plugins are called ``sandbox``,
            ``sandbox2``, ... in order; a third-party plugin's IDs must start with its name.
        distribution: the distribution the plugins are attributed to.
        version: its version.

    Yields:
        The sandbox registry (also what ``sekai.make`` and friends use inside the block).
    """
    from sekai.plugins._host import EntryPointRecord, PluginHost
    from sekai.registry.api import set_default_registry
    from sekai.registry.registry import EnvRegistry

    records = []
    for index, item in enumerate(plugins):
        if isinstance(item, tuple):
            name, plugin = item
        else:
            name, plugin = ("sandbox" if index == 0 else f"sandbox{index + 1}"), item
        records.append(EntryPointRecord(str(name), distribution, version, _returning(plugin)))
    registry = EnvRegistry(lambda reg: PluginHost(reg, entry_points=records, disabled=""))
    previous = set_default_registry(registry)
    try:
        yield registry
    finally:
        set_default_registry(previous)
