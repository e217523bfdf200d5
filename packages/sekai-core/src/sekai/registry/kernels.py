"""Array kernels of registered envs: the kernel a spec names, built with the env's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sekai.core._render_habit import reject_render_mode
from sekai.registry._build import (
    _unbindable,
    construct,
    keyword_error,
    label,
    unexpected_keywords,
)
from sekai.registry.entry_points import load_entry_point
from sekai.vector.kernel import ArrayKernel

__all__ = ["kernel_entry_point", "load_kernel"]

_MAKE_VEC = "sekai.make_vec()"


def kernel_entry_point(spec: Any) -> Any:
    """The ``kernel_entry_point`` of a spec.

    Raises:
        ValueError: the spec names no kernel.
    """
    entry = getattr(spec, "kernel_entry_point", None)
    if entry is None:
        native = "'native', " if getattr(spec, "vector_entry_point", None) is not None else ""
        raise ValueError(
            f"{spec.id} has no array kernel (kernel_entry_point), which the kernel "
            f"vectorization modes ('jax', 'torch') need; use {native}'sync', 'async' or 'proc'."
        )
    return entry


def load_kernel(spec: Any, kwargs: Mapping[str, Any], *, call: str = _MAKE_VEC) -> ArrayKernel[Any]:
    """Build the kernel a spec names (``kernel_entry_point``) with the env's keyword arguments.

    ``call`` names the function given them, for the ``render_mode`` error and the advice for
    a keyword only the env takes.

    Raises:
        ValueError: the spec names no kernel.
        TypeError: the entry point does not build an ``ArrayKernel``, or a keyword argument
            that the env or its kernel does not take (naming the env, what refuses it and,
            for one only the env takes, the modes that take it).
    """
    entry = kernel_entry_point(spec)
    factory = load_entry_point(entry, "kernel_entry_point")
    what = f"its kernel_entry_point {label(entry)}"
    try:
        kernel = construct(spec.id, what, factory, dict(kwargs))
    except TypeError as exc:
        _refused_keywords(spec, what, factory, kwargs, call, exc)
        raise
    if not isinstance(kernel, ArrayKernel):
        raise TypeError(
            f"kernel_entry_point of {spec.id} built a {type(kernel).__name__}, not an ArrayKernel."
        )
    return kernel


def _refused_keywords(
    spec: Any, what: str, factory: Any, kwargs: Mapping[str, Any], call: str, exc: TypeError
) -> None:
    """Raise what ``make()`` raises when the env itself refuses ``kwargs`` (which a kernel
    built from the env met inside), or say which keywords the env takes and its kernel does
    not; return for any other failure (``construct``'s error then stands)."""
    if spec.entry_point is None:  # a spec from JSON: no env to compare with
        return
    try:
        env_factory = load_entry_point(spec.entry_point)
    except (ImportError, AttributeError, TypeError, ValueError):
        return  # the kernel's error stands: the env's entry point is make()'s to report
    reject_render_mode(spec.id, env_factory, kwargs, call=call)
    env_refuses = _unbindable(env_factory, (), kwargs)
    if not _unbindable(factory, (), kwargs):
        if env_refuses:  # the kernel passed them on to the env, whose error this is
            env_what = f"its entry point {label(spec.entry_point)}"
            raise keyword_error(spec.id, env_what, env_factory, kwargs, exc) from exc
        return
    if env_refuses or unexpected_keywords(factory, kwargs) is None:
        return  # construct's error names the env, the kernel and the keywords
    modes = "'native' or 'sync'" if spec.vector_entry_point is not None else "'sync'"
    if call == _MAKE_VEC:
        use = f"the kernel modes build the kernel, not the env; use vectorization_mode={modes}"
    else:  # the caller has no vectorization_mode: name the functions that build the env
        use = (
            f"{call} builds the kernel, not the env; use sekai.make(), or sekai.make_vec() with "
            f"vectorization_mode={modes},"
        )
    entry = label(spec.entry_point)
    why = f", which its entry point {entry} takes: {use} for the env's own arguments"
    own = exc.__cause__ if isinstance(exc.__cause__, TypeError) else exc  # before construct's
    raise keyword_error(spec.id, what, factory, kwargs, own, why) from own
