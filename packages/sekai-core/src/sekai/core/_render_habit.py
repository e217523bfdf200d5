"""gymnasium's rendering habits (``render_mode=``, ``env.render()``), answered with renderers.

sekai envs have no ``render()``: a renderer object draws an env's state. Users coming from
gymnasium reach for the old API first; these errors name the renderer to use instead.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["NoVecRender", "missing_attribute", "reject_render_mode", "renderer_of"]

_SEE = (
    "See docs/pages/rendering.md and the section 'Renderers instead of render_mode' of "
    "docs/pages/gymnasium-migration.md."
)


def renderer_of(env_class: type, *, text: bool = False) -> str | None:
    """``from pkg import XRenderer``: the renderer of ``env_class`` or of its nearest base class
    that has one importable, where class ``XEnv`` has ``XRenderer`` unless it names another
    with a class attribute ``_renderer_name`` (an env drawn by a sibling's renderer). With
    ``text``, its text counterpart ``XTextRenderer`` instead (None if there is none)."""
    for cls in env_class.__mro__:
        renderer = cls.__dict__.get("_renderer_name")
        if renderer is None:
            name = cls.__name__
            if not name.endswith("Env") or name == "Env":
                continue
            renderer = f"{name[: -len('Env')]}Renderer"
        if text:
            renderer = f"{renderer.removesuffix('Renderer')}TextRenderer"
        found = _exported_by(cls.__module__, renderer)
        if found is not None:
            return found
    return None


def _exported_by(module: str, renderer: str) -> str | None:
    """``from pkg import renderer`` for the shortest imported package of ``module`` that has
    it (sekai.envs.classic_control, not .cartpole), or None."""
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        package = ".".join(parts[:end])
        if package in ("sekai", "sekai.envs"):
            continue
        if hasattr(sys.modules.get(package), renderer):
            return f"from {package} import {renderer}"
    return None


def _use_a_renderer(env_class: type) -> str:
    found = renderer_of(env_class)
    if found is None:
        return "Draw it with a renderer (a sekai.rendering.Renderer): frame = renderer.render(env)."
    name = found.rsplit(" ", 1)[1]
    return f"Draw it with its renderer: {found}; frame = {name}().render(env)."


def missing_attribute(obj: object, name: str) -> AttributeError:
    """The ``AttributeError`` of an env or wrapper lacking ``name`` (a hint for ``render``)."""
    message = f"{type(obj).__name__!r} object has no attribute {name!r}"
    if name == "render":
        base = getattr(obj, "__dict__", {}).get("env", obj)
        while "env" in getattr(base, "__dict__", {}):  # innermost env of a wrapper stack
            base = base.__dict__["env"]
        message += (
            f": sekai envs have no render() (gymnasium's env.render()). "
            f"{_use_a_renderer(type(base))} {_SEE}"
        )
    return AttributeError(message)


class NoVecRender:
    """``vec.render`` for gymnasium habits: an ``AttributeError`` naming ``VecRecordFrames``
    (a descriptor, as ``Env.render``: no ``__getattr__`` to slow every lookup)."""

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        raise AttributeError(
            f"{type(obj).__name__!r} object has no attribute 'render': sekai vector envs have "
            "no render() (gymnasium's VectorEnv.render()). Record one sub-env's frames with "
            "sekai.rendering.VecRecordFrames(vec, renderer, index=0) (sync or async sub-envs), "
            f"or draw a sub-env with its renderer. {_SEE}"
        )


def _accepts(factory: Callable[..., Any], keyword: str) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read: let the call itself decide
        return True
    return any(p.name == keyword or p.kind is p.VAR_KEYWORD for p in parameters)


def reject_render_mode(
    env_id: str,
    factory: Callable[..., Any],
    kwargs: Mapping[str, Any],
    drawn: object = None,
    call: str = "sekai.make()",
) -> None:
    """Raise ``TypeError`` with the renderer to use if ``render_mode`` reaches an env without it.

    Envs that take a ``render_mode`` argument of their own (or ``**kwargs``) are left alone.
    ``drawn`` is the env class a renderer would draw, when ``factory`` builds something else
    (a native VecEnv); ``call`` names the function that was given ``render_mode``.
    """
    if "render_mode" not in kwargs or _accepts(factory, "render_mode"):
        return
    target = factory if drawn is None else drawn
    env_class = target if isinstance(target, type) else type(None)
    raise TypeError(
        f"{env_id} takes no render_mode={kwargs['render_mode']!r}: {call} passes keyword "
        "arguments to the env's constructor, and sekai envs do not render themselves "
        f"(gymnasium's render_mode). Make the env without it. {_use_a_renderer(env_class)} "
        f"{_SEE}"
    )
