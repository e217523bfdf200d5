"""The multi-agent bridges: to_pettingzoo and from_pettingzoo (PettingZoo's ParallelEnv)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai.compat._optional import require_pettingzoo
from sekai.compat._spaces import convert_space, space_from_gymnasium
from sekai.core._rng import SeedLike, check_seed, np_random
from sekai.core.env import Env
from sekai.core.multi_agent import MultiAgentEnv
from sekai.core.result import MAResetResult, MAStepResult

if TYPE_CHECKING:
    from sekai.compat._sekai_to_pettingzoo import SekaiToPettingZoo

__all__ = ["PettingZooToSekai", "from_pettingzoo", "to_pettingzoo"]


def to_pettingzoo(env: MultiAgentEnv[Any, Any, Any]) -> SekaiToPettingZoo:
    """Wrap a sekai ``MultiAgentEnv`` as a PettingZoo ``ParallelEnv``.

    Spaces are converted with ``space_to_gymnasium``, results become PettingZoo's tuples of
    agent-keyed dicts, and seeds and options pass through to ``env.reset()``.

    Raises:
        sekai.MissingDependency: pettingzoo is not installed
            (``pip install 'sekai-compat[pettingzoo]'``).
        TypeError: ``env`` is not a MultiAgentEnv, or a space has no gymnasium equivalent.
    """
    require_pettingzoo("to_pettingzoo()")
    from sekai.compat._sekai_to_pettingzoo import SekaiToPettingZoo

    return SekaiToPettingZoo(env)


def from_pettingzoo(parallel_env: Any) -> PettingZooToSekai:
    """Wrap a PettingZoo ``ParallelEnv`` as a sekai ``MultiAgentEnv``.

    The env must list ``possible_agents``. Convert an AEC env first: a turn-based one (chess,
    say) with ``pettingzoo.utils.turn_based_aec_to_parallel``, one whose metadata declares
    ``is_parallelizable`` with ``pettingzoo.utils.aec_to_parallel``. ``state()`` and
    ``state_space`` (converted) are the PettingZoo env's, when it has them.

    Raises:
        sekai.MissingDependency: pettingzoo is not installed
            (``pip install 'sekai-compat[pettingzoo]'``).
        TypeError: ``parallel_env`` is not a ParallelEnv (an AEC env, say), or a space has no
            sekai equivalent (the message names the agent and the space).
        ValueError: the env does not define ``possible_agents``.
    """
    pettingzoo = require_pettingzoo("from_pettingzoo()")
    if not isinstance(parallel_env, pettingzoo.ParallelEnv):
        raise TypeError(
            f"from_pettingzoo() expects a pettingzoo.ParallelEnv, got "
            f"{type(parallel_env).__name__}.{_not_parallel_hint(parallel_env, pettingzoo)}"
        )
    return PettingZooToSekai(parallel_env)


def _not_parallel_hint(env: Any, pettingzoo: Any) -> str:
    """What to do with an object that is no ParallelEnv, by what it is (empty when unknown)."""
    if isinstance(env, pettingzoo.AECEnv):
        return (
            " Convert an AEC env first: a turn-based one with "
            "pettingzoo.utils.turn_based_aec_to_parallel(env), one whose metadata sets "
            "is_parallelizable with pettingzoo.utils.aec_to_parallel(env)."
        )
    if isinstance(env, MultiAgentEnv):
        return " It already is a sekai MultiAgentEnv: use it as it is."
    if isinstance(env, Env):
        return " It already is a sekai env (a single-agent one): use it as it is."
    gymnasium = sys.modules.get("gymnasium")  # a gymnasium env means it is imported
    if gymnasium is not None and isinstance(env, gymnasium.Env):
        return " For a single-agent gymnasium env, use from_gymnasium()."
    return ""


# A bool Box: gymnasium's wrappers cannot wrap a PettingZoo env, so the advice is PettingZoo's.
_BOX_DTYPE_ADVICE = (
    "Give the PettingZoo env an integer dtype before converting it: a subclass of "
    "pettingzoo.utils.BaseParallelWrapper whose observation_space(agent) returns the space "
    "with an integer dtype (np.int8) and whose reset() and step() cast the observations to "
    "it; for an action space, one whose action_space(agent) does so and whose step() casts "
    "the actions back."
)


def _from_gymnasium(space: Any, which: str) -> Any:
    return convert_space(
        "from_pettingzoo()", space_from_gymnasium, space, f"the {which}", _BOX_DTYPE_ADVICE
    )


class PettingZooToSekai(MultiAgentEnv[Any, Any, Any]):
    """A PettingZoo ``ParallelEnv`` as a sekai ``MultiAgentEnv`` (built by ``from_pettingzoo()``).

    ``possible_agents`` and the per-agent spaces (converted with ``space_from_gymnasium``) are
    read once; ``agents`` is the PettingZoo env's live list. Seeds: an int (NumPy ones too)
    goes to the PettingZoo env's ``reset()``. Whether the PettingZoo env has a Generator
    ``np_random`` when it is wrapped decides, once, what a Generator seed does, so the same
    fresh Generator gives the same episode on every reset: with one, the Generator becomes
    the PettingZoo env's ``np_random`` (as ``from_gymnasium`` does); without (an env that
    makes it in ``reset()``, or has none), one int drawn from it goes to ``reset()``, as
    PettingZoo's ``reset()`` takes only ints. ``rng`` is the PettingZoo env's ``np_random``
    in the first case, and ``_set_rng`` seeds that one; otherwise ``reset(seed=)`` seeds this
    wrapper's ``rng`` as ``Env._set_rng`` does. ``state()`` is the PettingZoo env's;
    ``state_space`` (converted) exists when the PettingZoo env has one.

    Attributes:
        pettingzoo_env: the wrapped ParallelEnv.
    """

    def __init__(self, parallel_env: Any) -> None:
        possible = getattr(parallel_env, "possible_agents", None)
        if possible is None:
            raise ValueError(
                f"from_pettingzoo() needs a ParallelEnv that lists possible_agents; "
                f"{type(parallel_env).__name__} does not define it."
            )
        self.pettingzoo_env = parallel_env
        # decided once: an np_random that the first reset() makes must not change the seeding
        theirs = getattr(getattr(parallel_env, "unwrapped", parallel_env), "np_random", None)
        self._env_generator = isinstance(theirs, np.random.Generator)
        self.possible_agents = list(possible)
        self.observation_spaces = {
            agent: _from_gymnasium(
                parallel_env.observation_space(agent), f"observation space of agent {agent!r}"
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {
            agent: _from_gymnasium(
                parallel_env.action_space(agent), f"action space of agent {agent!r}"
            )
            for agent in self.possible_agents
        }
        state_space = getattr(parallel_env, "state_space", None)  # optional in PettingZoo
        if state_space is not None:
            self.state_space = _from_gymnasium(state_space, "state space")
        self._metadata = dict(getattr(parallel_env, "metadata", None) or {})

    @property
    def metadata(self) -> dict[str, Any]:  # type: ignore[override]
        """A copy of the PettingZoo env's metadata, taken when it was wrapped."""
        return self._metadata

    @property
    def agents(self) -> list[Any]:  # type: ignore[override]
        """The live agents (the PettingZoo env's ``agents``)."""
        return list(getattr(self.pettingzoo_env, "agents", []))

    def state(self) -> Any:
        """The PettingZoo env's global ``state()`` (PettingZoo's NotImplementedError without)."""
        return self.pettingzoo_env.state()

    @property
    def rng(self) -> np.random.Generator:
        """The PettingZoo env's ``np_random`` if it has one, else a generator of this wrapper."""
        if self._env_generator:
            return self.pettingzoo_env.unwrapped.np_random  # type: ignore[no-any-return]
        return super().rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(value).__name__}.")
        if self._env_generator:
            self.pettingzoo_env.unwrapped.np_random = value
        self._rng, self._rng_seed = value, -1

    def _set_rng(self, seed: SeedLike) -> int:
        """Seed ``rng`` with sekai's rules (see ``Env._set_rng``): the PettingZoo env's
        ``np_random`` when it has one, so the seeded generator is the one the env draws from."""
        if not self._env_generator:
            return super()._set_rng(seed)
        if seed is None:  # keep the PettingZoo env's stream
            return -1 if self._rng_seed is None else self._rng_seed
        generator, used = np_random(seed)
        self.rng = generator
        self._rng_seed = used
        return used

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> MAResetResult[Any]:
        """Reset the PettingZoo env (a Generator seed becomes its ``np_random``, or, for an env
        without one, one int drawn from the Generator)."""
        check_seed(seed)
        if not self._env_generator:
            # This wrapper's rng is the env's: seeded by sekai's rules (None keeps its stream).
            self._set_rng(seed)
            if isinstance(seed, np.random.Generator):
                seed = int(seed.integers(2**31))  # PettingZoo's reset() takes ints only
        elif isinstance(seed, np.random.Generator):
            self.rng = seed  # used as it is (seeding page), as from_gymnasium does
            seed = None
        elif seed is not None:
            self._rng_seed = int(seed)  # the env seeds its np_random: _set_rng(None) reports it
        observations, infos = self.pettingzoo_env.reset(
            seed=None if seed is None else int(seed), options=options
        )
        return MAResetResult(dict(observations), dict(infos))

    def step(self, actions: dict[Any, Any]) -> MAStepResult[Any]:
        """Step the PettingZoo env with one action per live agent."""
        observations, rewards, terminated, truncated, infos = self.pettingzoo_env.step(actions)
        return MAStepResult(
            dict(observations),
            {agent: float(r) for agent, r in rewards.items()},
            {agent: bool(t) for agent, t in terminated.items()},
            {agent: bool(t) for agent, t in truncated.items()},
            dict(infos),
        )

    def close(self) -> None:
        """Close the PettingZoo env."""
        self.pettingzoo_env.close()

    def __str__(self) -> str:
        return f"<{type(self).__name__} agents={self.agents!r}>"
