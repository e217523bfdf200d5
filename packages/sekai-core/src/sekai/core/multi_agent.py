"""The multi-agent (parallel) environment base class."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from sekai.core._async import call_sync
from sekai.core._metadata import own_metadata
from sekai.core._rng import SeededMixin, SeedLike
from sekai.core.result import MAResetResult, MAStepResult

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec
    from sekai.spaces.space import Space

__all__ = ["AgentID", "MultiAgentEnv"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")
AgentID = TypeVar("AgentID")
SpaceT = TypeVar("SpaceT")
# __enter__ returns the subclass (typing.Self is 3.11+, and hints must resolve at runtime).
_MultiAgentEnvT = TypeVar("_MultiAgentEnvT", bound="MultiAgentEnv[Any, Any, Any]")


class MultiAgentEnv(SeededMixin, abc.ABC, Generic[ObsType, ActType, AgentID]):
    """A parallel multi-agent environment: every active agent acts at every step.

    Subclasses set ``possible_agents``, ``agents`` (the active ones; may shrink),
    ``observation_spaces`` and ``action_spaces`` (dicts keyed by agent) and implement ``reset()``
    and ``step(actions)``. Seeding works as for ``Env``: call ``self._set_rng(seed)`` first in
    ``reset()`` and draw all randomness from ``self.rng``.
    """

    metadata: ClassVar[dict[str, Any]] = {}
    spec: EnvSpec | None = None
    possible_agents: list[AgentID]
    agents: list[AgentID]
    observation_spaces: dict[AgentID, Space[ObsType]]
    action_spaces: dict[AgentID, Space[ActType]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own_metadata(cls)

    @abc.abstractmethod
    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> MAResetResult[ObsType]:
        """Start a new episode and return every agent's first observation."""

    @abc.abstractmethod
    def step(self, actions: dict[AgentID, ActType]) -> MAStepResult[ObsType]:
        """Apply one action per active agent and return the agent-keyed transition."""

    async def async_reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> MAResetResult[ObsType]:
        """Coroutine version of ``reset()``; by default it calls ``self.reset()``."""
        return call_sync(self.reset, seed=seed, options=options)

    async def async_step(self, actions: dict[AgentID, ActType]) -> MAStepResult[ObsType]:
        """Coroutine version of ``step()``; by default it calls ``self.step()``."""
        return call_sync(self.step, actions)

    def close(self) -> None:
        """Release resources held by the environment (the base class holds none)."""

    def __enter__(self: _MultiAgentEnvT) -> _MultiAgentEnvT:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def unwrapped(self) -> MultiAgentEnv[ObsType, ActType, AgentID]:
        """The environment itself (there are no multi-agent wrappers)."""
        return self

    @property
    def num_agents(self) -> int:
        """Number of active agents."""
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """Number of possible agents."""
        return len(self.possible_agents)

    def observation_space(self, agent: AgentID) -> Space[ObsType]:
        """The observation space of ``agent``."""
        return self._lookup(self.observation_spaces, agent, "observation_spaces")

    def action_space(self, agent: AgentID) -> Space[ActType]:
        """The action space of ``agent``."""
        return self._lookup(self.action_spaces, agent, "action_spaces")

    def _lookup(self, spaces: dict[AgentID, SpaceT], agent: AgentID, name: str) -> SpaceT:
        try:
            return spaces[agent]
        except KeyError:
            raise KeyError(
                f"{type(self).__name__}.{name} has no agent {agent!r}; it has {list(spaces)!r}."
            ) from None

    def __str__(self) -> str:
        agents = getattr(self, "agents", None)  # a repr must work mid-__init__ too (debuggers)
        if agents is None:
            return f"<{type(self).__name__}>"
        return f"<{type(self).__name__} agents={list(agents)!r}>"

    def __repr__(self) -> str:
        return str(self)
