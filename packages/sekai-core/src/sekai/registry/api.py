"""The registry functions of the public API (``sekai.make``, ``sekai.make_vec``, ...)."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sekai import _discovery
from sekai._args import IntLike, check_num_envs, check_ordered
from sekai.core._render_habit import reject_render_mode
from sekai.registry._build import (
    build_env,
    check_wrapped,
    construct,
    effective_steps,
    keyword_error,
    label,
    merge_kwargs,
    passed_on,
    refuse_kernel_wrappers,
    refused,
    unexpected_keywords,
)
from sekai.registry.ids import parse_env_id
from sekai.registry.kernels import kernel_entry_point, load_kernel
from sekai.registry.registry import EnvRegistry
from sekai.registry.spec import EntryPoint, EnvSpec, WrapperSpec, load_entry_point

if TYPE_CHECKING:
    from sekai.core.env import Env
    from sekai.error import MissingDependency
    from sekai.vector.vec_env import VecEnv

__all__ = [
    "all_specs",
    "default_registry",
    "deregister",
    "make",
    "make_vec",
    "pprint_registry",
    "register",
    "register_namespace",
    "set_default_registry",
    "spec",
]

EnvWrapperFn = Callable[["Env[Any, Any]"], "Env[Any, Any]"]


# Discovery is wired in from above: ``sekai/__init__.py`` installs the plugin host factory.
_registry = EnvRegistry(_discovery.create_host)


def default_registry() -> EnvRegistry:
    """The registry the module-level functions use (``sekai.testing.registry_sandbox`` swaps it)."""
    return _registry


def set_default_registry(registry: EnvRegistry) -> EnvRegistry:
    """Make ``registry`` the default one and return the previous default."""
    global _registry
    if not isinstance(registry, EnvRegistry):
        raise TypeError(f"Expected an EnvRegistry, got {type(registry).__name__}.")
    previous, _registry = _registry, registry
    return previous


# -- registration ---------------------------------------------------------------------------


def register(
    id: str,
    entry_point: EntryPoint,
    *,
    reward_threshold: float | None = None,
    nondeterministic: bool = False,
    max_episode_steps: int | None = None,
    kwargs: Mapping[str, Any] | None = None,
    additional_wrappers: Iterable[WrapperSpec] = (),
    vector_entry_point: EntryPoint | None = None,
    kernel_entry_point: EntryPoint | None = None,
) -> EnvSpec:
    """Register an environment under ``id``.

    Entry points are checked for form only (a callable, or ``"pkg.mod:Attr"``); nothing is
    imported until ``make()``.

    Args:
        id: ``[namespace/]Name[-vN]``.
        entry_point: the env class or factory, or ``"module.path:ClassName"``.
        reward_threshold: the return at which the task counts as solved.
        nondeterministic: whether the env is stochastic beyond its seed.
        max_episode_steps: the time limit ``make()`` applies (None = none).
        kwargs: default keyword arguments for the entry point.
        additional_wrappers: ``WrapperSpec``s ``make()`` applies after the time limit.
        vector_entry_point: a native vector implementation (a ``NativeVecEnv`` subclass).
        kernel_entry_point: the env's array kernel (``sekai.vector.kernel.ArrayKernel``
            subclass, built with the env's keyword arguments), for the ``jax`` and ``torch``
            vectorization modes.

    Returns:
        The registered spec.

    Raises:
        EnvAlreadyRegistered: ``id`` is taken (when a plugin provides it, an exception note
            names the plugin).
        ValueError: a malformed ID or entry point.
    """
    return _registry.register(
        id,
        entry_point,
        reward_threshold=reward_threshold,
        nondeterministic=nondeterministic,
        max_episode_steps=max_episode_steps,
        kwargs=kwargs,
        additional_wrappers=additional_wrappers,
        vector_entry_point=vector_entry_point,
        kernel_entry_point=kernel_entry_point,
    )


def deregister(id: str) -> None:
    """Remove ``id`` from the registry (running its namespace's loader first, as ``spec()``).

    Raises:
        EnvNotFound: ``id`` is not registered.
    """
    _registry.deregister(id)


def spec(id: str) -> EnvSpec:
    """The spec registered under ``id``.

    Raises:
        EnvNotFound: not registered; the message suggests close IDs and names what to install.
    """
    return _registry.spec(id)


def all_specs() -> list[EnvSpec]:
    """Every registered spec, in registration order."""
    return _registry.all_specs()


def register_namespace(namespace: str, loader: Callable[[], object]) -> None:
    """Call ``loader()`` when an unregistered ID in ``namespace`` is first asked for."""
    _registry.register_namespace(namespace, loader)


def pprint_registry() -> None:
    """Print every registered ID, grouped by namespace."""
    print(_registry.format())


# -- make -----------------------------------------------------------------------------------


def make(
    id: str | EnvSpec, *, max_episode_steps: IntLike | None = None, **kwargs: Any
) -> Env[Any, Any]:
    """Build a registered environment.

    The entry point's module is imported now; the env gets ``kwargs`` merged over the
    registered ones, ``env.spec`` describing exactly this env, the time limit and the
    registered ``additional_wrappers``.

    Args:
        id: a registered ID, or an ``EnvSpec`` (built without consulting the registry).
        max_episode_steps: None keeps the registered limit, an int overrides it, -1 removes it.
        **kwargs: keyword arguments for the env constructor.

    Raises:
        EnvNotFound: ``id`` is not registered.
    """
    env_spec = id if isinstance(id, EnvSpec) else _registry.spec(id)
    return build_env(env_spec, max_episode_steps, kwargs)


# -- make_vec -------------------------------------------------------------------------------


class _SubEnvFactory:
    """A zero-argument factory for one sub-env (picklable, so ProcVecEnv can ship it)."""

    def __init__(
        self,
        spec: EnvSpec,
        max_episode_steps: int,
        kwargs: dict[str, Any],
        wrappers: Sequence[EnvWrapperFn],
    ) -> None:
        self.spec = spec
        self.max_episode_steps = max_episode_steps
        self.kwargs = kwargs
        self.wrappers = tuple(wrappers)

    def __call__(self) -> Env[Any, Any]:
        env = build_env(self.spec, self.max_episode_steps, self.kwargs)
        for index, wrap in enumerate(self.wrappers):
            what = f"make_vec({self.spec.id!r}): wrappers[{index}] ({wrap!r})"
            env = check_wrapped(wrap(env), env, what)
        return env

    def __repr__(self) -> str:
        return f"<sub-env factory for {self.spec.id}>"

    def unpicklable_part(self, dumps: Callable[[Any], bytes]) -> str | None:
        """Which argument of ``make_vec`` keeps this factory from being pickled by ``dumps``
        (for the error of a worker-process backend), or None when none alone does."""
        parts = [(f"the keyword argument {k!r}", v) for k, v in self.kwargs.items()]
        parts += [(f"wrappers[{i}] ({w!r})", w) for i, w in enumerate(self.wrappers)]
        for what, value in parts:
            try:
                dumps(value)
            except Exception:
                return f"{what} of make_vec({self.spec.id!r})"
        return None


def _is_spawnable(value: object) -> bool:
    from sekai.vector.spawnable import Spawnable

    return isinstance(value, Spawnable)


def _spawned(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v.spawn() if _is_spawnable(v) else v for k, v in kwargs.items()}


def make_vec(
    id: str | EnvSpec,
    num_envs: IntLike = 1,
    *,
    vectorization_mode: str | None = None,
    vector_kwargs: Mapping[str, Any] | None = None,
    wrappers: Iterable[EnvWrapperFn] | None = (),
    **env_kwargs: Any,
) -> VecEnv:
    """Build a vector environment of ``num_envs`` copies of a registered environment.

    Args:
        id: a registered ID or an ``EnvSpec``.
        num_envs: the number of sub-envs (>= 1).
        vectorization_mode: None (native if the spec has a ``vector_entry_point`` and no
            per-env wrappers apply, else ``"sync"``), ``"native"`` (alias
            ``"vector_entry_point"``), ``"sync"``, ``"async"``, ``"proc"``, or a mode a plugin
            registered (``"jax"`` and ``"torch"`` run the spec's ``kernel_entry_point``: a
            backend class with a ``from_spec`` classmethod is given the spec, not sub-envs).
        vector_kwargs: keyword arguments for the VecEnv constructor.
        wrappers: callables applied in order to each sub-env, as a list or tuple (a set has no
            order: ``TypeError``); not with native mode; None: none.
        **env_kwargs: keyword arguments for ``make()`` (``max_episode_steps`` included).

    Returns:
        The VecEnv, with ``spec`` set to the describing copy ``make()`` puts on its envs.

    Raises:
        ValueError: bad ``num_envs``, an unknown mode, or a native build that cannot be done.
    """
    env_spec = id if isinstance(id, EnvSpec) else _registry.spec(id)
    _registry.ensure_discovered()
    n = check_num_envs(num_envs)
    max_steps_arg = env_kwargs.pop("max_episode_steps", None)
    steps = effective_steps(env_spec, max_steps_arg)
    if wrappers is not None and (callable(wrappers) or not isinstance(wrappers, Iterable)):
        hint = f"; pass [{getattr(wrappers, '__name__', 'wrapper')}]" if callable(wrappers) else ""
        raise TypeError(
            "wrappers must be a sequence of callables env -> env, "
            f"got {type(wrappers).__name__}{hint}."
        )
    check_ordered("make_vec", "wrappers", wrappers)
    wrapper_fns = tuple(wrappers or ())
    for fn in wrapper_fns:
        if not callable(fn):
            raise TypeError(f"wrappers must hold callables env -> env, got {type(fn).__name__}.")
    if vector_kwargs is not None and not isinstance(vector_kwargs, Mapping):
        raise TypeError(f"vector_kwargs must be a dict, got {type(vector_kwargs).__name__}.")
    backend_kwargs = dict(vector_kwargs) if vector_kwargs is not None else {}
    for key, instead in (("num_envs", "num_envs"), ("max_episode_steps", "max_episode_steps=")):
        if key in backend_kwargs:
            raise TypeError(
                f"make_vec got {key!r} in vector_kwargs; pass it as make_vec's {instead} "
                "argument, which every vectorization mode applies (and records in vec.spec)."
            )
    merged = merge_kwargs(env_spec, env_kwargs)
    describing = dataclasses.replace(env_spec, kwargs=merged, max_episode_steps=steps)

    mode = vectorization_mode
    if mode is None:
        mode = default_mode(env_spec, bool(wrapper_fns))

    vec: VecEnv
    backend = mode_backend(env_spec, mode)
    if backend is None:
        vec = _make_native(env_spec, n, merged, steps, backend_kwargs, bool(wrapper_fns))
        _check_vec_env(
            vec, f"{env_spec.id}: its vector_entry_point {label(env_spec.vector_entry_point)}"
        )
    else:
        what = f"vectorization_mode {mode!r} ({getattr(backend, '__name__', backend)})"
        from_kernel = getattr(backend, "from_kernel", None)
        if from_kernel is not None:  # a kernel backend: it runs the spec's kernel, no sub-envs
            refuse_kernel_wrappers(
                env_spec,
                f"vectorization_mode {mode!r}",
                bool(wrapper_fns),
                "use vector wrappers around it instead",
            )
            kernel = load_kernel(env_spec, merged)
            try:
                vec = from_kernel(kernel, n, steps, backend_kwargs)
            except TypeError as exc:
                # from_kernel passes vector_kwargs on to the backend class: keywords it has no
                # parameter for are what failed, named as the other modes name them.
                if not unexpected_keywords(backend, backend_kwargs):
                    raise
                raise keyword_error(
                    env_spec.id, what, backend, backend_kwargs, exc, hint=_proc_hint(backend_kwargs)
                ) from exc
            _check_vec_env(vec, f"vectorization_mode {mode!r}")
            vec.spec = describing
            return vec
        steps_arg = -1 if steps is None else steps
        # Each sub-env merges the registered kwargs itself, so it gets its own deep copy of
        # them; registered Spawnables are spawned here, one per sub-env, like the given ones.
        spawnables = {k: v for k, v in env_spec.kwargs.items() if _is_spawnable(v)}
        per_env = {**spawnables, **env_kwargs}
        env_fns = [
            _SubEnvFactory(env_spec, steps_arg, _spawned(per_env), wrapper_fns) for _ in range(n)
        ]
        vec = construct(
            env_spec.id, what, backend, backend_kwargs, env_fns, hint=_proc_hint(backend_kwargs)
        )
        _check_vec_env(vec, f"vectorization_mode {mode!r}")
    vec.spec = describing
    return vec


def default_mode(env_spec: EnvSpec, has_wrappers: bool = False) -> str:
    """The mode ``make_vec`` builds with when none is given: ``"native"`` if the spec has a
    ``vector_entry_point`` and no per-env wrappers apply (``has_wrappers``: ``wrappers=`` were
    given), else ``"sync"``."""
    native_ok = not has_wrappers and not env_spec.additional_wrappers
    return "native" if env_spec.vector_entry_point is not None and native_ok else "sync"


def mode_backend(env_spec: EnvSpec, mode: str) -> Any:
    """The class ``make_vec(env_spec.id, vectorization_mode=mode)`` builds with, or None for the
    native mode, checked as ``make_vec`` checks it, before anything is built (``sekai bench
    --compare`` checks every mode this way before timing the first).

    Raises:
        ValueError: an unknown mode; the native mode for a spec without a
            ``vector_entry_point``; a kernel mode for a spec without a ``kernel_entry_point``.
        MissingDependency: a library the mode's module imports is not installed.
    """
    if mode in ("native", "vector_entry_point"):
        if env_spec.vector_entry_point is None:
            twins = native_twins(env_spec)
            twin = (
                f"; {' and '.join(twins)} {'has' if len(twins) == 1 else 'have'} one (the same "
                "env registered with its native vector version, "
                "docs/pages/registry.md#native-twins)"
                if twins
                else ""
            )
            raise ValueError(
                f"{env_spec.id} has no native vector implementation (vector_entry_point){twin}; "
                "use vectorization_mode='sync', 'async' or 'proc'."
            )
        return None
    backend = _load_backend(mode)
    if getattr(backend, "from_kernel", None) is not None:
        kernel_entry_point(env_spec)  # a kernel mode without a kernel to run
    return backend


def _check_vec_env(vec: object, what: str) -> None:
    from sekai.vector.vec_env import VecEnv

    if not isinstance(vec, VecEnv):
        raise TypeError(
            f"{what} returned {type(vec).__name__}, not a sekai.VecEnv (make_vec builds sekai "
            "vector envs; wrap a gymnasium vector env with sekai.compat.from_gymnasium_vector)."
        )


# Distributions found with every library they declare: installed libraries stay installed.
_COMPLETE: set[str] = set()


def _load_backend(mode: str) -> Any:
    """The class of vectorization mode ``mode``; a library its distribution declares that is
    missing (a plugin installed with ``--no-deps``, or its library removed later) is named as
    such, whether the mode's module imports it at once or only when the vector env is built."""
    source = _registry.backend_source(mode)
    with mode_library_imports(mode, source.distribution if source is not None else None):
        return load_entry_point(_registry.backend(mode), f"vectorization_mode {mode!r}")


@contextlib.contextmanager
def mode_library_imports(mode: str, provider: str | None) -> Iterator[None]:
    """Around the imports of vectorization mode ``mode``'s code, ``provider`` the distribution
    that registers it: a library it declares that is not installed, before the block or when the
    block's import of it is missing, raises the mode's ``MissingDependency`` (with the install
    command ``provider`` declares, such as ``pip install 'ray>=2.9'``). ``make_vec`` and a backend
    class built directly (``RayVecEnv(...)``) raise the same error this way. Any other missing
    module (one that an installed library such as Ray imports itself, a submodule of it, or a
    module ``provider`` does not declare) leaves the block as its own ``ModuleNotFoundError``:
    the library is installed but broken, and no install command would be right."""
    from sekai._metadata import declared_requirement, installed_version, missing_requirements

    if provider is not None and provider not in _COMPLETE:
        missing = missing_requirements(provider)
        if missing:
            raise _missing_library(mode, provider, missing)
        if installed_version(provider) is not None:  # else nothing was checked
            _COMPLETE.add(provider)  # reading metadata on every make_vec() makes garbage cycles
    try:
        yield
    except ModuleNotFoundError as exc:
        declared = declared_requirement(provider, exc.name) if provider and exc.name else None
        if provider is None or declared is None:  # not the library itself: it is broken
            raise
        raise _missing_library(mode, provider, (declared,), exc) from exc


def _missing_library(
    mode: str,
    provider: str,
    requirements: tuple[str, ...],
    exc: ModuleNotFoundError | None = None,
) -> MissingDependency:
    """The error of a vectorization mode whose library (``requirements``: what to pip install,
    such as ``"ray>=2.9"``) is not installed; ``exc``: the failed import, if any."""
    from sekai._metadata import pip_install, requirement_name
    from sekai.error import MissingDependency

    names = [requirement_name(r) or r for r in requirements]
    plural = len(names) > 1
    return MissingDependency(
        f"vectorization_mode {mode!r} needs {' and '.join(names)}, which "
        f"{'are' if plural else 'is'} not installed{f' ({exc})' if exc else ''}: {provider}, "
        f"which provides the mode, depends on {'them' if plural else 'it'}. Install "
        f"{'them' if plural else 'it'} with: {pip_install(*requirements)}",
        package=names[0],
    )


def native_twins(env: str | EnvSpec) -> list[str]:
    """IDs of the same env (entry point, name and version) in another namespace that have a
    native vector env: ``native_twins("CartPole-v1") == ["classic/CartPole-v1"]``."""
    spec = env if isinstance(env, EnvSpec) else _registry.spec(env)
    parsed = parse_env_id(spec.id)
    return sorted(
        other.id
        for other in _registry.all_specs()
        if other.vector_entry_point is not None
        and other.id != spec.id
        and other.entry_point == spec.entry_point
        and parse_env_id(other.id)[1:] == parsed[1:]
    )


def _make_native(
    spec: EnvSpec,
    num_envs: int,
    merged: dict[str, Any],
    steps: int | None,
    vector_kwargs: dict[str, Any],
    has_wrappers: bool,
) -> VecEnv:
    assert spec.vector_entry_point is not None  # mode_backend() checked it
    if has_wrappers or spec.additional_wrappers:
        given = "wrappers=" if has_wrappers else "its registered additional_wrappers"
        raise ValueError(
            f"{spec.id} was asked for a native vector env with {given}, but a native env has no "
            "per-env objects to wrap; use vector wrappers (sekai.VecWrapper) around it, or "
            "vectorization_mode='sync' to wrap each sub-env."
        )
    if "autoreset" in merged:
        raise TypeError(
            f"make_vec({spec.id!r}) got autoreset as a keyword argument of the env; it is an "
            "argument of the VecEnv: pass vector_kwargs={'autoreset': ...}."
        )
    call_kwargs: dict[str, Any] = {"num_envs": num_envs, **merged}
    if steps is not None:
        call_kwargs["max_episode_steps"] = steps
    clash = sorted(call_kwargs.keys() & vector_kwargs.keys())
    if clash:
        raise TypeError(f"make_vec got {clash} both as env keyword arguments and in vector_kwargs.")
    vec_cls = load_entry_point(spec.vector_entry_point, "vector_entry_point")
    if "render_mode" in merged:
        drawn = None if spec.entry_point is None else load_entry_point(spec.entry_point)
        reject_render_mode(spec.id, vec_cls, merged, drawn, "sekai.make_vec()")
    kwargs = {**call_kwargs, **vector_kwargs}
    what = f"its vector_entry_point {label(spec.vector_entry_point)}"
    try:
        vec: VecEnv = construct(spec.id, what, vec_cls, kwargs, hint=_proc_hint(vector_kwargs))
    except TypeError as exc:
        better = _refused_on(spec, vec_cls, kwargs, merged, vector_kwargs, what, exc)
        if better is None:
            raise
        raise better from exc
    return vec


def _refused_on(
    spec: EnvSpec,
    vec_cls: Any,
    kwargs: dict[str, Any],
    merged: dict[str, Any],
    vector_kwargs: dict[str, Any],
    what: str,
    exc: TypeError,
) -> TypeError | None:
    """The error ``make_vec(mode="sync")`` gives, for a native VecEnv that raised ``exc`` after
    passing keywords it does not name on (``**kwargs``) to the single env, which does not take
    them (None when it does): a keyword of the env names its entry point, one of
    ``vector_kwargs`` the VecEnv; ``render_mode`` gets the renderer hint."""
    forwarded = passed_on(vec_cls, kwargs)
    if spec.entry_point is None or not forwarded:
        return None
    single = load_entry_point(spec.entry_point)
    try:
        reject_render_mode(
            spec.id, single, {k: kwargs[k] for k in forwarded}, None, "sekai.make_vec()"
        )
    except TypeError as error:
        return error
    unexpected = unexpected_keywords(single, forwarded) or []
    of_env = [key for key in unexpected if key not in vector_kwargs]
    if of_env:
        entry = f"its entry point {label(spec.entry_point)}"
        return TypeError(f"{refused(spec.id, entry, of_env, merged)}: {exc}")
    if unexpected:
        hint = _proc_hint(vector_kwargs)(unexpected)
        return TypeError(f"{refused(spec.id, what, unexpected, kwargs)}: {exc}{hint}")
    return None


def _proc_hint(vector_kwargs: Mapping[str, Any]) -> Callable[[list[str]], str]:
    """For ``construct``: the keys of ``vector_kwargs`` refused that are ProcVecEnv options."""

    def hint(unexpected: list[str]) -> str:
        from sekai.vector.proc.vec_env import ProcVecEnv

        options = inspect.signature(ProcVecEnv).parameters
        proc = [key for key in unexpected if key in vector_kwargs and key in options]
        if not proc:
            return ""
        names = ", ".join(repr(key) for key in proc)
        are, it = ("is an option", "it") if len(proc) == 1 else ("are options", "them")
        return f". {names} {are} of ProcVecEnv: pass {it} with vectorization_mode='proc'."

    return hint
