"""Argument checks shared by the baselines: ``TypeError`` for a wrong type, ``ValueError`` for a
bad value, each naming the argument and what it accepts (bools are not numbers)."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from sekai.envs.finance._common import check_per_asset
from sekai.finance._values import (
    check_count as count,
    check_number,
    is_int,
    is_real,
    real_array,
    scalar,
)
from sekai.vector.vec_env import VecEnv

__all__ = [
    "check_count",
    "check_flag",
    "check_number",
    "check_seed",
    "observation_entry",
    "per_asset",
    "real_vector",
    "require_env",
]


def _integer(name: str, value: object, accepted: str) -> int:
    if not is_int(value):
        raise TypeError(f"{name} must be {accepted}, got {type(value).__name__} {value!r}.")
    return int(value)


def check_count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum`` (``TypeError`` for a non-int, bools included)."""
    return count(name, value, minimum)


def check_seed(name: str, value: object, *, none_ok: bool = False) -> int:
    """A seed, an int ``>= 0``: floats, strings, bools, None and Generators are a ``TypeError``
    (core.md §3). ``none_ok``: the caller handles None itself (the message says so)."""
    seed = _integer(name, value, "an int >= 0" + (" or None" if none_ok else ""))
    if seed < 0:
        raise ValueError(f"{name} must be an int >= 0, got {seed}.")
    return seed


def check_flag(name: str, value: object) -> bool:
    """``True`` or ``False`` (NumPy bools too); nothing else is read as a truth value."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}.")
    return bool(value)


def real_vector(name: str, value: object) -> np.ndarray:
    """A non-empty 1-D array of finite real numbers (float64)."""
    array = real_array(name, value)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D array (one entry per asset), got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite numbers, got {array.tolist()}.")
    return array


def per_asset(name: str, value: object, n: int, bound: str | None = None) -> np.ndarray:
    """A number (or 0-d array) or ``n`` numbers (finite, within ``bound``) as an ``(n,)``
    float64 array."""
    value = scalar(value)
    if not is_real(value):
        real_array(name, value)  # TypeError for what is not numbers
    return np.broadcast_to(check_per_asset(name, value, n, bound), (n,))


# -- the env a policy drives ------------------------------------------------------------------

# env ID -> the classes (in sekai.envs.finance) of its single env, and the baselines written for it.
_ENVS: dict[str, tuple[tuple[str, ...], str]] = {
    "Trading-v0": (("TradingEnv",), "ConstantPosition, BuyAndHold"),
    "Portfolio-v0": (("PortfolioEnv",), "ConstantMix, KellyBuyAndHold, EqualWeight"),
    "MarketMaking-v0": (
        ("MarketMakingEnv",),
        "AvellanedaStoikov, OptimalQuotes, ConstantQuotes",
    ),
    "OptimalExecution-v0": (("OptimalExecutionEnv",), "AlmgrenChriss, TWAP"),
    "Market-v0": (("MarketEnv",), "VolatilityFilter, RegimeOracle"),
    "LimitOrderBook-v0": (
        ("LimitOrderBookEnv", "LimitOrderBookMarket"),
        "InventorySkew, FixedQuotes",
    ),
}

# Vector envs of single envs: (class, action space) of unwrapped sub-env 0, looked up once.
_SUB_ENV: weakref.WeakKeyDictionary[Any, tuple[type, Any]] = weakref.WeakKeyDictionary()


@functools.cache
def _env_id(cls: type) -> str | None:
    """The finance env ID whose single env ``cls`` is (a subclass of), or None."""
    import sekai.envs.finance as envs

    for env_id, (names, _) in _ENVS.items():
        if issubclass(cls, tuple(getattr(envs, name) for name in names)):
            return env_id
    return None


def _identify(env: Any) -> tuple[str | None, str]:
    """``(finance env ID or None, what env is)`` through wrappers and vector envs."""
    base = getattr(env, "unwrapped", env)
    kind: type = type(base)
    name = kind.__name__
    if not isinstance(base, VecEnv):
        return _env_id(kind), name
    single = getattr(kind, "single_env", None)  # a native finance env
    if isinstance(single, type):
        return _env_id(single), name
    spec_id = getattr(getattr(env, "spec", None), "id", None)
    if spec_id in _ENVS:  # built by make_vec()
        return spec_id, name
    sub = _sub_env(base)[0]
    return _env_id(sub), f"{name} of {sub.__name__}"


def _sub_env(base: VecEnv) -> tuple[type, Any]:
    """``(class, action space)`` of ``base``'s unwrapped sub-env 0."""
    found = _SUB_ENV.get(base)
    if found is None:
        sub = base.get_attr("unwrapped")[0]
        found = _SUB_ENV[base] = (type(sub), sub.action_space)
    return found


def _own_action_space(env: Any) -> Any:
    """The action space of the env under every wrapper (a native env's own, or the
    unwrapped sub-envs' of another vector env)."""
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, VecEnv) or isinstance(getattr(type(base), "single_env", None), type):
        return base.action_space
    return _sub_env(base)[1]


def require_env(policy: object, env: Any, env_id: str) -> None:
    """``TypeError`` unless ``env`` is (a wrapper or vector env of) the env ``policy`` is for,
    with that env's own action space (the policy's actions are in it)."""
    found, what = _identify(env)
    if found == env_id:
        space, own = env.action_space, _own_action_space(env)
        if space is not own and space != own:
            raise TypeError(
                f"{type(policy).__name__} gives actions in {env_id}'s own action space {own!r}, "
                f"but this env takes {space!r} (an action wrapper changed it): give the policy "
                "the env without the action wrapper and convert its actions."
            )
        return
    names, _ = _ENVS[env_id]
    hint = "" if found is None else f", a {found} env: use {_ENVS[found][1]} or RandomPolicy"
    raise TypeError(
        f"{type(policy).__name__} is a policy for {env_id} ({' or '.join(names)}, single or "
        f"vector), not for {what}{hint}."
    )


def observation_entry(policy: object, observation: Any, key: str) -> Any:
    """``observation[key]`` of the env's Dict observation; ``TypeError`` naming ``observation``
    when it is not one (e.g. flattened by ``FlattenObservation``)."""
    if isinstance(observation, Mapping) and key in observation:
        return observation[key]
    shape = getattr(observation, "shape", None)
    got = type(observation).__name__ + ("" if shape is None else f" of shape {shape}")
    if isinstance(observation, Mapping):
        got += f" with keys {sorted(observation)}"
    raise TypeError(
        f"{policy!r} reads observation[{key!r}] of the env's Dict observation, got {got}: "
        "give it the env's own observations (not through FlattenObservation or another "
        "observation wrapper)."
    )
