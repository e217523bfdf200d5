"""The advice of an API that takes a sekai Env (wrappers, make(), vector envs) or a sekai VecEnv
(vector wrappers), given something else: one helper, so that each mistake gets the same advice
everywhere."""

from __future__ import annotations

import sys

from sekai._args import type_name
from sekai.core.env import Env

__all__ = ["env_class_name", "given", "not_an_env_hint"]

_MULTI_AGENT = (
    "{got} is a multi-agent env, and sekai's wrappers, registry and vector envs take "
    "single-agent envs only: use a sekai.MultiAgentEnv directly, or with PettingZoo-based tools "
    "through sekai.compat.to_pettingzoo(env)."
)
_SEKAI_VEC_ENV = (
    "It is a sekai VecEnv (several sub-envs), where one env is expected: pass a single env, e.g. "
    "sekai.make(env_id); a VecEnv takes the vector wrappers (sekai.VecWrapper subclasses, such "
    "as those of sekai.vector.wrappers)."
)
_GYMNASIUM_VECTOR_ENV = (
    "It is a gymnasium vector env, where one env is expected: pass a single env; "
    "sekai.compat.from_gymnasium_vector(envs) makes a vector env a sekai VecEnv, which takes the "
    "vector wrappers (sekai.VecWrapper subclasses)."
)
_SEKAI_ENV = (
    "It is a single sekai env: wrap it with a single-env wrapper (those of sekai.wrappers), or "
    "build a VecEnv of such envs first, e.g. sekai.make_vec(env_id, num_envs) or "
    "sekai.SyncVecEnv([lambda: sekai.make(env_id)] * num_envs)."
)
_GYMNASIUM_ENV = (
    "It is a single gymnasium env: convert it with sekai.compat.from_gymnasium(env), then wrap "
    "it with a single-env wrapper, or build a VecEnv of such envs first, e.g. "
    "sekai.SyncVecEnv([lambda: sekai.compat.from_gymnasium(gymnasium.make(env_id))] * num_envs)."
)


def env_class_name(obj: object) -> str | None:
    """The name of ``obj`` if it is a sekai Env class (the ``()`` forgotten), else None."""
    if isinstance(obj, type) and issubclass(obj, Env):
        return obj.__name__
    return None


def given(obj: object) -> str:
    """How the error names what it got instead of an env: ``the class CartPoleEnv`` for an Env
    class (its type, ``abc.ABCMeta``, says nothing), else ``type_name(obj)``."""
    name = env_class_name(obj)
    return f"the class {name}" if name is not None else type_name(obj)


def not_an_env_hint(obj: object, gymnasium_hint: str, *, vector: bool = False) -> str:
    """The sentence that follows "... not a sekai.Env" (with ``vector``: "... not a sekai
    VecEnv"), by what ``obj`` is: a multi-agent env (a ``sekai.MultiAgentEnv`` or a PettingZoo
    env, both list ``possible_agents``), a single env where a VecEnv is expected or the reverse
    (sekai's or gymnasium's), else ``gymnasium_hint``: how this API takes the gymnasium kind of
    what it expects; for a sekai Env class where one env is expected, how to make one."""
    name = None if vector else env_class_name(obj)
    if name is not None:
        return f"Pass an instance: {name}()."
    if hasattr(obj, "possible_agents"):  # duck-typed: importing multi_agent here is not lazy
        return _MULTI_AGENT.format(got=type(obj).__name__)
    # A module not imported yet cannot have made ``obj``: neither is imported for the check.
    gymnasium = sys.modules.get("gymnasium.vector")
    if gymnasium is not None and isinstance(obj, gymnasium.VectorEnv):
        return gymnasium_hint if vector else _GYMNASIUM_VECTOR_ENV
    gymnasium_core = sys.modules.get("gymnasium.core")
    if gymnasium_core is not None and isinstance(obj, gymnasium_core.Env):
        return _GYMNASIUM_ENV if vector else gymnasium_hint
    if vector:
        return _SEKAI_ENV if isinstance(obj, Env) else gymnasium_hint
    vec_env = sys.modules.get("sekai.vector.vec_env")
    if vec_env is not None and isinstance(obj, vec_env.VecEnv):
        return _SEKAI_VEC_ENV
    return gymnasium_hint
