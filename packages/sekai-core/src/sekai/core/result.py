"""The frozen result types returned by reset() and step()."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from sekai._equal import structurally_equal

__all__ = ["MAResetResult", "MAStepResult", "ResetResult", "StepResult"]

ObsT = TypeVar("ObsT")


class _ArrayAwareEq:
    """`==` that compares array observations element-wise instead of raising."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(
            structurally_equal(getattr(self, name), getattr(other, name))
            for name in self.__dataclass_fields__  # type: ignore[attr-defined]
        )

    __hash__ = None  # type: ignore[assignment]


def _refuse_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _seal(cls: type) -> None:
    """Make every assignment raise ``FrozenInstanceError``.

    The ``__setattr__`` that ``dataclass(frozen=True, slots=True)`` writes calls ``super()``
    on the class it replaced (a CPython bug before 3.13), so assigning an unknown attribute
    raised a ``TypeError``; ``typing`` does that when a result is built through a
    subscripted alias (``StepResult[np.ndarray](...)``) and expects an ``AttributeError``.
    """
    type.__setattr__(cls, "__setattr__", _refuse_setattr)
    type.__setattr__(cls, "__delattr__", _refuse_delattr)


class _FreshDict:
    """The default of ``info``: a new dict per result (shown as ``<factory>``, like dataclasses)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FRESH: Any = _FreshDict()


# What a flag never is. Gym's old order (obs, reward, done, info) puts the info dict in
# `truncated`: every step with a non-empty info would end the episode, and the info be lost.
_NOT_FLAGS = (Mapping, Set, list, tuple, str, bytes)
# The types seen as flags (NumPy/JAX bools, ints: check_env warns about those), so that an env
# with non-bool flags pays a set lookup per step, not the isinstance() checks against ABCs.
# Never an ndarray: a 1-element one counts as its element, but the next may hold several values.
_FLAG_TYPES: set[type] = {bool}


def _check_flags(terminated: object, truncated: object) -> None:
    """Refuse a container, a string or an array of several values as a flag."""
    for name, value in (("terminated", terminated), ("truncated", truncated)):
        if type(value) in _FLAG_TYPES:
            continue
        if isinstance(value, np.ndarray):
            if value.size != 1:
                raise TypeError(
                    f"StepResult's {name} must be a bool (or a 1-element array), got an "
                    f"{several_values(value)}: one step has one {name} flag."
                )
            continue
        if isinstance(value, _NOT_FLAGS):
            gym = ", not gym's (obs, reward, done, info)" if isinstance(value, Mapping) else ""
            raise TypeError(
                f"StepResult's {name} must be a bool, got {type(value).__name__}: StepResult "
                f"takes (observation, reward, terminated, truncated, info){gym}."
            )
        _FLAG_TYPES.add(type(value))


def several_values(array: np.ndarray) -> str:
    """``"ndarray of several values, shape (2,)"`` (``"empty ndarray, ..."`` for none): what a
    flag that must be one value was given, for the messages that refuse it."""
    what = "empty ndarray" if array.size == 0 else "ndarray of several values"
    return f"{what}, shape {array.shape}"


def _slot_setters(cls: type) -> tuple[Any, ...]:
    """The ``__set__`` of each field's slot, in field order.

    Every env step builds a result, and the ``__init__`` that ``dataclass(frozen=True)`` writes
    goes through ``object.__setattr__`` field by field: setting the slots through their
    descriptors builds the same frozen object in about 0.6 of the time.
    """
    return tuple(cls.__dict__[name].__set__ for name in cls.__dataclass_fields__)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True, eq=False, init=False)
class ResetResult(_ArrayAwareEq, Generic[ObsT]):
    """What ``reset()`` returns: the first observation and an info dict."""

    observation: ObsT
    info: dict[str, Any] = field(default_factory=dict)

    def __init__(self, observation: ObsT, info: dict[str, Any] = _FRESH) -> None:
        set_observation, set_info = _RESET_SLOTS
        set_observation(self, observation)
        set_info(self, {} if info is _FRESH else info)

    @property
    def done(self) -> bool:
        """Always False: a reset never ends an episode."""
        return False


@dataclass(frozen=True, slots=True, eq=False, init=False)
class StepResult(_ArrayAwareEq, Generic[ObsT]):
    """What ``step()`` returns: one transition of the MDP.

    ``reward`` is a float and the flags are bools; NumPy float scalars and NumPy bools are
    accepted too (as ``check_env`` accepts them) and kept as given. Type checkers read the
    fields as ``float`` and ``bool``, which such scalars stand in for.
    """

    observation: ObsT
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        observation: ObsT,
        reward: float | np.floating[Any],
        terminated: bool | np.bool_,
        truncated: bool | np.bool_,
        info: dict[str, Any] = _FRESH,
    ) -> None:
        if type(terminated) not in _FLAG_TYPES or type(truncated) not in _FLAG_TYPES:
            _check_flags(terminated, truncated)
        set_observation, set_reward, set_terminated, set_truncated, set_info = _STEP_SLOTS
        set_observation(self, observation)
        set_reward(self, reward)
        set_terminated(self, terminated)
        set_truncated(self, truncated)
        set_info(self, {} if info is _FRESH else info)

    @property
    def done(self) -> bool:
        """``terminated or truncated``, as a Python bool."""
        return bool(self.terminated or self.truncated)


def _agent_done(terminated: dict[Any, Any], truncated: dict[Any, Any]) -> list[bool]:
    agents = list(dict.fromkeys([*terminated, *truncated]))
    return [bool(terminated.get(a) or truncated.get(a)) for a in agents]


@dataclass(frozen=True, slots=True, eq=False)
class MAResetResult(_ArrayAwareEq, Generic[ObsT]):
    """What a MultiAgentEnv's ``reset()`` returns (agent-keyed dicts)."""

    observations: dict[Any, ObsT]
    info: dict[Any, Any] = field(default_factory=dict)

    @property
    def all_done(self) -> bool:
        """Always False after a reset."""
        return False

    @property
    def any_done(self) -> bool:
        """Always False after a reset."""
        return False


def _check_agent_dicts(
    rewards: object, terminated: object, truncated: object, info_given: bool
) -> None:
    """Refuse rewards or flags that are not agent-keyed mappings, and gym's order (obs,
    rewards, dones, infos), which puts the infos in ``truncated`` (every agent with an info
    would be done)."""
    fields = (("rewards", rewards), ("terminated", terminated), ("truncated", truncated))
    for name, value in fields:
        if not isinstance(value, Mapping):
            raise TypeError(
                f"MAStepResult's {name} must be a dict keyed by agent, got "
                f"{type(value).__name__}: MAStepResult takes (observations, rewards, "
                "terminated, truncated, info), each keyed by agent."
            )
    if info_given or not isinstance(truncated, Mapping):
        return
    infos = [
        agent
        for agent, flag in truncated.items()
        if type(flag) is not bool and isinstance(flag, Mapping)
    ]
    if infos:
        raise TypeError(
            f"MAStepResult's truncated must map agents to bools, got a "
            f"{type(truncated[infos[0]]).__name__} for agent(s) {infos!r}: "
            "MAStepResult takes (observations, rewards, terminated, truncated, info), not "
            "gym's (obs, rewards, dones, infos)."
        )


@dataclass(frozen=True, slots=True, eq=False, init=False)
class MAStepResult(_ArrayAwareEq, Generic[ObsT]):
    """What a MultiAgentEnv's ``step()`` returns (agent-keyed dicts)."""

    observations: dict[Any, ObsT]
    rewards: dict[Any, float]
    terminated: dict[Any, bool]
    truncated: dict[Any, bool]
    info: dict[Any, Any] = field(default_factory=dict)

    def __init__(
        self,
        observations: dict[Any, ObsT],
        rewards: dict[Any, float],
        terminated: dict[Any, bool],
        truncated: dict[Any, bool],
        info: dict[Any, Any] = _FRESH,
    ) -> None:
        # Dicts pay three type checks, and without an info a look at the truncated flags:
        # gym's order (obs, rewards, dones, infos) puts dicts there.
        if type(rewards) is not dict or type(terminated) is not dict or type(truncated) is not dict:
            _check_agent_dicts(rewards, terminated, truncated, info is not _FRESH)
        elif info is _FRESH:
            for flag in truncated.values():
                if type(flag) is not bool:
                    _check_agent_dicts(rewards, terminated, truncated, False)
                    break
        set_observations, set_rewards, set_terminated, set_truncated, set_info = _MA_STEP_SLOTS
        set_observations(self, observations)
        set_rewards(self, rewards)
        set_terminated(self, terminated)
        set_truncated(self, truncated)
        set_info(self, {} if info is _FRESH else info)

    @property
    def all_done(self) -> bool:
        """True when every agent named in the flags is terminated or truncated."""
        done = _agent_done(self.terminated, self.truncated)
        return bool(done) and all(done)

    @property
    def any_done(self) -> bool:
        """True when at least one agent is terminated or truncated."""
        return any(_agent_done(self.terminated, self.truncated))


for _cls in (ResetResult, StepResult, MAResetResult, MAStepResult):
    _seal(_cls)
# The slots exist only once dataclass(slots=True) has rebuilt the classes.
_RESET_SLOTS = _slot_setters(ResetResult)
_STEP_SLOTS = _slot_setters(StepResult)
_MA_STEP_SLOTS = _slot_setters(MAStepResult)
