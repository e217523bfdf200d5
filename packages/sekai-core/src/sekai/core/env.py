"""The single-agent environment base class."""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from sekai.core._async import call_sync, install_async_routes
from sekai.core._metadata import own_metadata
from sekai.core._render_habit import missing_attribute
from sekai.core._rng import SeededMixin, SeedLike
from sekai.core.result import ResetResult, StepResult

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec
    from sekai.spaces.space import Space

__all__ = ["ActType", "Env", "ObsType"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")
# __enter__ returns the subclass (typing.Self is 3.11+, and hints must resolve at runtime).
_EnvT = TypeVar("_EnvT", bound="Env[Any, Any]")


class _NoRender:
    """``env.render`` for gymnasium habits: an ``AttributeError`` naming the env's renderer.

    A descriptor without ``__set__``, so that an env may still store an attribute named
    ``render`` (a flag or a renderer of its own), and not a class-level ``__getattr__``, which
    slows every attribute lookup on every env (measured: SyncVecEnv CartPole x16 steps 13%
    slower).
    """

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        raise missing_attribute(obj, "render")


class Env(SeededMixin, abc.ABC, Generic[ObsType, ActType]):
    """A reinforcement-learning environment.

    Subclasses set ``observation_space`` and ``action_space`` in ``__init__`` and implement
    ``reset()`` and ``step()``. Call ``self._set_rng(seed)`` first in ``reset()`` and draw all
    randomness from ``self.rng``.
    """

    metadata: ClassVar[dict[str, Any]] = {}
    spec: EnvSpec | None = None
    observation_space: Space[ObsType]
    action_space: Space[ActType]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        install_async_routes(cls)
        own_metadata(cls)

    @abc.abstractmethod
    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[ObsType]:
        """Start a new episode and return its first observation."""

    @abc.abstractmethod
    def step(self, action: ActType) -> StepResult[ObsType]:
        """Apply one action and return the transition."""

    async def async_reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[ObsType]:
        """Coroutine version of ``reset()``; by default it calls ``reset()``."""
        return call_sync(self.reset, seed=seed, options=options)

    async def async_step(self, action: ActType) -> StepResult[ObsType]:
        """Coroutine version of ``step()``; by default it calls ``step()``."""
        return call_sync(self.step, action)

    def close(self) -> None:
        """Release resources held by the environment (the base class holds none)."""

    def __enter__(self: _EnvT) -> _EnvT:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- attributes through wrapper stacks -------------------------------------------------

    @property
    def unwrapped(self) -> Env[Any, Any]:
        """The innermost environment (``self`` for an unwrapped env)."""
        return self

    def has_attr(self, name: str) -> bool:
        """Whether this env (or, for a wrapper, any layer) has attribute ``name``."""
        return hasattr(self, name)

    def get_attr(self, name: str) -> Any:
        """Read ``name`` from the outermost layer that has it."""
        return getattr(self, name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the outermost layer that has it."""
        setattr(self, name, value)

    # Not part of the API: renderers draw envs (``sekai.rendering``). Reading it raises an
    # ``AttributeError`` that names the env's renderer, for gymnasium's ``env.render()``.
    # Hidden from type checkers, so that they flag env.render() as the error it is.
    if not TYPE_CHECKING:
        render = _NoRender()

    def __iter__(self) -> Iterator[Env[Any, Any]]:
        """Iterate over the wrapper layers, outermost first (a bare env yields itself)."""
        yield self

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __str__(self) -> str:
        if self.spec is not None and getattr(self.spec, "id", None):
            return f"<{self.spec.id}>"
        return f"<{type(self).__name__}>"

    def __repr__(self) -> str:
        return str(self)
