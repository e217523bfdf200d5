"""evaluate(): score a baseline policy over many episodes on the (native) vector env."""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.finance.baselines._checks import check_count, check_seed
from sekai.finance.sampling import EpisodeSampler, sequential_lanes
from sekai.vector.vec_env import VecEnv

__all__ = ["BaselinePolicy", "env_attr", "evaluate", "is_batch"]

Policy = Callable[[Any, Any], Any]


class BaselinePolicy(abc.ABC):
    """The base of the baselines: ``policy(observation, env) -> action``, batched for a vector env.

    Type checkers join a list of different baselines to this class, which ``evaluate()`` takes.
    """

    @abc.abstractmethod
    def __call__(self, observation: Any, env: Any) -> Any:
        """The action for ``env``'s current state, or a batch of actions for a vector env."""


def is_batch(env: Any) -> bool:
    """Whether ``env`` is a vector env (the policy must return a batch of actions)."""
    return isinstance(env, VecEnv)


def env_attr(env: Any, name: str) -> Any:
    """A parameter of a single env (through wrappers) or of sub-env 0 of a vector env."""
    if is_batch(env):
        return env.get_attr(name)[0]
    return env.get_attr(name)


# make_vec()'s own keywords, which evaluate() sets itself.
_VECTOR_OPTIONS = frozenset({"vectorization_mode", "vector_kwargs", "wrappers"})


def _check_two_arguments(policy: Callable[..., Any]) -> None:
    """``TypeError`` unless ``policy`` takes ``(observations, vec_env)`` positionally."""
    try:
        signature = inspect.signature(policy)
    except (TypeError, ValueError):  # no signature to read (some builtins): call it and see
        return
    try:
        signature.bind(None, None)
    except TypeError as exc:
        raise TypeError(
            "policy must be callable as policy(observations, vec_env) -> actions, but "
            f"{policy!r} has the signature {signature}."
        ) from exc


def _split_windows(vec: VecEnv, lanes: int) -> None:
    """Give the sub-envs of a ``SequentialStart`` env the windows one sampler visits over the
    episodes (sub-env ``i``: episodes ``i``, ``i + lanes``, ...), not each the same windows.

    Other samplers go to the sub-envs as ``make_vec`` hands them out (their ``spawn()``): one
    that draws from the env's generator sees another seed in each sub-env."""
    try:
        sampler = vec.get_attr("sampler")[0]
    except AttributeError:  # no history to sample windows of
        return
    if not isinstance(sampler, EpisodeSampler):
        return
    split = sequential_lanes(sampler, lanes)
    if split is not None:
        vec.set_attr("sampler", split)


def evaluate(
    policy: Policy,
    env_id: str,
    episodes: int = 1000,
    seed: int = 0,
    *,
    num_envs: int | None = None,
    **env_kwargs: Any,
) -> tuple[float, float]:
    """Mean and standard error of ``policy``'s undiscounted episode return on ``env_id``.

    Runs on the env's native vector version when it has one (else a ``SyncVecEnv``) with
    ``autoreset=False``, in rounds of ``num_envs`` episodes (default ``min(episodes, 1024)``);
    round ``k`` is reset with ``seed=seed + k``. Exactly ``episodes`` episodes count (the last
    round's surplus sub-envs are ignored), so the same arguments give the same numbers and
    policies compared with the same seed share random numbers. A policy with a ``reset()``
    method (``RandomPolicy``: its generator) is reset first, for the same reason.

    On a history with a ``SequentialStart`` sampler (``sampler="sequential"``) the episodes are
    the windows that one such sampler hands out over ``episodes`` episodes, whatever
    ``num_envs`` is: sub-env ``i`` takes episodes ``i``, ``i + num_envs``, ... of its walk. Any
    other sampler is given to the sub-envs as ``make_vec`` gives it (each its ``spawn()``).

    Args:
        policy: ``policy(observations, vec_env) -> actions`` (a batch).
        env_id: a registered ID, e.g. ``"Portfolio-v0"``.
        episodes: number of episodes to score.
        seed: base seed of the rounds.
        num_envs: sub-envs per round.
        **env_kwargs: keyword arguments of the env.

    Returns:
        ``(mean, standard_error)`` as Python floats (the error is 0 for a single episode).

    Raises:
        TypeError: ``policy`` is not a policy (or not callable with two arguments);
            ``env_kwargs`` holds ``vectorization_mode``, ``vector_kwargs`` or ``wrappers``;
            ``episodes``, ``seed`` or ``num_envs`` is not an
            int (bools, floats and Generators included); the policy is for another env.
        ValueError: ``episodes`` or ``num_envs`` below 1, or a negative ``seed``.
    """
    import sekai

    if isinstance(policy, type):
        raise TypeError(
            f"policy must be a policy object, got the class {policy.__name__}; pass an "
            f"instance, e.g. {policy.__name__}()."
        )
    if not callable(policy):
        raise TypeError(
            "policy must be a callable policy(observations, vec_env) -> actions, such as a "
            f"baseline of sekai.finance.baselines, got {type(policy).__name__}."
        )
    _check_two_arguments(policy)
    builder = sorted(_VECTOR_OPTIONS.intersection(env_kwargs))
    if builder:
        raise TypeError(
            f"evaluate() got {', '.join(f'{name}=' for name in builder)}: it builds the vector "
            "env itself (the native version when there is one, autoreset=False), so "
            "**env_kwargs takes only the env's own keyword arguments."
        )
    remaining = check_count("episodes", episodes)
    first_seed = check_seed("seed", seed)
    lanes = min(remaining, 1024) if num_envs is None else check_count("num_envs", num_envs)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    totals: list[np.ndarray] = []
    vec = sekai.make_vec(env_id, lanes, vector_kwargs={"autoreset": False}, **env_kwargs)
    try:
        _split_windows(vec, lanes)
        round_index = 0
        while remaining > 0:
            result: Any = vec.reset(seed=first_seed + round_index)
            returns = np.zeros(lanes)
            done = np.zeros(lanes, dtype=bool)
            while not done.all():
                result = vec.step(policy(result.observations, vec))
                returns += result.rewards
                done |= result.dones
            take = min(remaining, lanes)
            totals.append(returns[:take])
            remaining -= take
            round_index += 1
    finally:
        vec.close()
    scores = np.concatenate(totals)
    error = float(scores.std(ddof=1) / np.sqrt(scores.size)) if scores.size > 1 else 0.0
    return float(scores.mean()), error
