"""The advice of a single-agent API (wrappers, make(), vector envs) given something not an Env."""

from __future__ import annotations

__all__ = ["not_an_env_hint"]

_MULTI_AGENT = (
    "{got} is a multi-agent env, and sekai's wrappers, registry and vector envs take "
    "single-agent envs only: use a sekai.MultiAgentEnv directly, or with PettingZoo-based tools "
    "through sekai.compat.to_pettingzoo(env)."
)


def not_an_env_hint(obj: object, gymnasium_hint: str) -> str:
    """The sentence that follows "... not a sekai.Env": for a multi-agent env (a
    ``sekai.MultiAgentEnv`` or a PettingZoo env, both list ``possible_agents``) the multi-agent
    route, else ``gymnasium_hint``, how this API takes a gymnasium env."""
    if hasattr(obj, "possible_agents"):  # duck-typed: importing multi_agent here is not lazy
        return _MULTI_AGENT.format(got=type(obj).__name__)
    return gymnasium_hint
