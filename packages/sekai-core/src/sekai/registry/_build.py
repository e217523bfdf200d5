"""Building an env from its spec: entry point, time limit and additional wrappers."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sekai._args import IntLike
from sekai.core._not_an_env import given, not_an_env_hint
from sekai.core._render_habit import reject_render_mode
from sekai.core.env import Env
from sekai.registry.entry_points import load_entry_point
from sekai.vector._time_limit import check_max_episode_steps

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec

__all__ = [
    "build_env",
    "check_wrapped",
    "construct",
    "effective_steps",
    "keyword_error",
    "label",
    "merge_kwargs",
    "passed_on",
    "refuse_kernel_wrappers",
    "refused",
    "unexpected_keywords",
]


def effective_steps(spec: EnvSpec, max_episode_steps: IntLike | None) -> int | None:
    """``make()``'s rule: None keeps the registered limit, -1 removes it, an int overrides it."""
    if max_episode_steps is None:
        return spec.max_episode_steps
    return check_max_episode_steps(max_episode_steps, removable=True)


def merge_kwargs(spec: EnvSpec, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` over a deep copy of the registered ones they leave in place (gymnasium's
    rule): no env made shares or changes a mutable default held by the registry. A registered
    ``Spawnable`` is passed as it is: ``make_vec`` gives each sub-env its own by ``spawn()``.
    """
    from sekai.vector.spawnable import Spawnable

    merged = {}
    for key, value in spec.kwargs.items():
        if key in kwargs or isinstance(value, Spawnable):
            merged[key] = kwargs.get(key, value)
            continue
        try:
            merged[key] = copy.deepcopy(value)
        except Exception as exc:
            raise TypeError(
                f"{spec.id}: its registered keyword argument {key!r} ({type(value).__name__}) "
                f"cannot be copied ({exc}); each env made gets its own copy of the registered "
                f"defaults, so pass this one to make() instead (make({spec.id!r}, {key}=...))."
            ) from exc
    merged.update(kwargs)
    return merged


def refuse_kernel_wrappers(spec: EnvSpec, runner: str, per_env: bool, instead: str) -> None:
    """Refuse per-env wrappers (``per_env``, or the spec's ``additional_wrappers``) for
    ``runner``, which runs the spec's array kernel: it has no per-env objects to wrap, and
    leaving a registered wrapper out would silently change the env.

    Raises:
        ValueError: naming ``runner``, the env and what to do ``instead``.
    """
    if per_env or spec.additional_wrappers:
        raise ValueError(
            f"{runner} runs the array kernel of {spec.id}, which has no per-env objects to "
            f"wrap; {instead}."
        )


def build_env(
    spec: EnvSpec, max_episode_steps: IntLike | None, kwargs: dict[str, Any]
) -> Env[Any, Any]:
    """Build ``spec``'s env: ``kwargs`` over the registered ones, time limit, wrappers."""
    if spec.entry_point is None:
        raise ValueError(
            f"{spec.id} has no entry_point to build it from (EnvSpec.to_json() leaves callable "
            "entry points out); pass an EnvSpec with an entry point, or make() a registered ID."
        )
    steps = effective_steps(spec, max_episode_steps)
    merged = merge_kwargs(spec, kwargs)
    factory = load_entry_point(spec.entry_point)
    reject_render_mode(spec.id, factory, merged)
    env: Env[Any, Any] = construct(
        spec.id, f"its entry point {label(spec.entry_point)}", factory, merged
    )
    if not isinstance(env, Env):
        raise TypeError(
            f"{spec.id}: its entry point {spec.entry_point!r} returned "
            f"{given(env)}, not a sekai.Env. "
            + not_an_env_hint(
                env,
                "To register a gymnasium env, make the entry point return "
                "sekai.compat.from_gymnasium(env).",
            )
        )
    env.spec = dataclasses.replace(spec, kwargs=merged, max_episode_steps=steps)
    if steps is not None:
        from sekai.wrappers.time_limit import TimeLimit

        env = TimeLimit(env, steps)
    for wrapper in spec.additional_wrappers:
        wrapper_cls = load_entry_point(
            wrapper.entry_point, f"entry_point of wrapper {wrapper.name!r}"
        )
        wrapped = construct(
            spec.id, f"its wrapper {wrapper.name!r}", wrapper_cls, wrapper.kwargs, env
        )
        env = check_wrapped(
            wrapped, env, f"{spec.id}: its wrapper {wrapper.name!r} ({label(wrapper.entry_point)})"
        )
    return env


def check_wrapped(wrapped: object, env: Env[Any, Any], what: str) -> Env[Any, Any]:
    """``wrapped``, what a wrapper (``what``) returned for ``env``, if it is a sekai Env.

    Raises:
        TypeError: naming ``what`` and what it returned instead; ``env`` is closed first.
    """
    if isinstance(wrapped, Env):
        return wrapped
    with contextlib.suppress(Exception):  # the wrapper's mistake is the error
        env.close()
    raise TypeError(
        f"{what} returned {given(wrapped)}, not a sekai.Env; a wrapper must return the env "
        "it is given, wrapped (e.g. lambda env: sekai.ClipReward(env, -1.0, 1.0)). "
        + not_an_env_hint(
            wrapped,
            "To use a gymnasium wrapper, convert the env it returns with "
            "sekai.compat.from_gymnasium(env).",
        )
    )


def label(entry_point: object) -> str:
    if isinstance(entry_point, str):
        return repr(entry_point)
    return getattr(entry_point, "__qualname__", None) or type(entry_point).__name__


def construct(
    env_id: str,
    what: str,
    fn: Any,
    kwargs: dict[str, Any],
    *args: Any,
    hint: Callable[[list[str]], str] | None = None,
) -> Any:
    """``fn(*args, **kwargs)``, naming the env when the call's arguments do not fit ``fn``;
    ``hint`` adds a sentence about the keywords ``fn`` does not take (empty: none)."""
    try:
        return fn(*args, **kwargs)
    except TypeError as exc:
        # Rewritten only when the arguments do not bind to fn's signature; a TypeError from fn's
        # own code (C code included: an abstract class, a bad value) propagates as it is.
        raised_inside = exc.__traceback__ is not None and exc.__traceback__.tb_next is not None
        if raised_inside or not _unbindable(fn, args, kwargs):
            raise
        raise keyword_error(env_id, what, fn, kwargs, exc, hint=hint, args=args) from exc


def keyword_error(
    env_id: str,
    what: str,
    fn: Any,
    kwargs: Mapping[str, Any],
    exc: TypeError,
    why: str = "",
    *,
    hint: Callable[[list[str]], str] | None = None,
    args: tuple[Any, ...] = (),
) -> TypeError:
    """The error of ``fn(*args, **kwargs)`` failing for its arguments: the env, then which
    keywords ``what`` does not take (then ``why``, when said) or, when it takes them all, the
    required arguments the call left out; ``exc`` (the call's own error), then ``hint``'s
    sentence about the keywords ``fn`` does not take (as ``construct``'s)."""
    unexpected = unexpected_keywords(fn, kwargs)
    missing = _missing_arguments(fn, args, kwargs) if unexpected is None else None
    extra = hint(unexpected) if hint is not None and unexpected else ""
    return TypeError(f"{refused(env_id, what, unexpected, kwargs, missing)}{why}: {exc}{extra}")


def refused(
    env_id: str,
    what: str,
    unexpected: list[str] | None,
    given: Iterable[str],
    missing: list[str] | None = None,
) -> str:
    """``"<id>: <what> does not take the keyword argument 'x' (given: ...)"``; without the
    ``unexpected`` names, that it is missing the required arguments ``missing`` or, without
    those either, that it cannot be called with the arguments it was given."""
    # A key that is no str (kwargs edited after EnvSpec checked them) must not break the error.
    given = ", ".join(key if isinstance(key, str) else repr(key) for key in given) or "none"
    if unexpected:
        names = ", ".join(repr(key) for key in unexpected)
        plural = "s" if len(unexpected) > 1 else ""
        return (
            f"{env_id}: {what} does not take the keyword argument{plural} {names} (given: {given})"
        )
    if missing:
        names = ", ".join(repr(name) for name in missing)
        plural = "s" if len(missing) > 1 else ""
        return f"{env_id}: {what} is missing the required argument{plural} {names} (given: {given})"
    return f"{env_id}: {what} cannot be called with these arguments (given: {given})"


def _missing_arguments(fn: Any, args: tuple[Any, ...], keys: Iterable[str]) -> list[str] | None:
    """The parameters without a default that ``fn(*args, **keywords)`` (``keys`` as keywords)
    leaves without a value, in ``fn``'s order (None if none, or if the call's signature cannot
    tell)."""
    try:
        signature = inspect.signature(fn)
        bound = signature.bind_partial(*args, **dict.fromkeys(keys))
    except (TypeError, ValueError):  # no signature to read, or arguments that do not fit it
        return None
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    missing = [
        name
        for name, parameter in signature.parameters.items()
        if parameter.default is parameter.empty
        and parameter.kind not in variadic
        and name not in bound.arguments
    ]
    return missing or None


def _keywords(fn: Any) -> tuple[set[str], bool] | None:
    """The keyword parameters ``fn`` names and whether it has ``**kwargs`` (None: unknown)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, any(p.kind is p.VAR_KEYWORD for p in parameters)


def unexpected_keywords(fn: Any, keys: Iterable[str]) -> list[str] | None:
    """The ``keys`` that ``fn`` has no parameter for (None if unknown, or if none: the call
    failed for another reason, such as a missing argument)."""
    found = _keywords(fn)
    if found is None or found[1]:
        return None
    return [key for key in keys if key not in found[0]] or None


def passed_on(fn: Any, keys: Iterable[str]) -> list[str]:
    """The ``keys`` that ``fn`` takes only through its ``**kwargs`` (none if it has none)."""
    found = _keywords(fn)
    if found is None or not found[1]:
        return []
    return [key for key in keys if key not in found[0]]


def _unbindable(fn: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
    """Whether ``fn(*args, **kwargs)`` fails for its arguments alone (False if unknown)."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return True
    except ValueError:  # no signature to read (some builtins)
        return False
    return False
