"""VecResetResult and VecStepResult: the frozen batched results of a VecEnv."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from sekai.core.result import _ArrayAwareEq, _seal
from sekai.vector.infos import LazyInfos

__all__ = ["VecRecvResult", "VecResetResult", "VecStepResult"]

ObsT = TypeVar("ObsT")


@dataclass(frozen=True, slots=True, eq=False)
class VecResetResult(_ArrayAwareEq, Generic[ObsT]):
    """What ``VecEnv.reset()`` returns: the batched first observations and one info per sub-env.

    Attributes:
        observations: the batch, shaped like ``batch_observation_space``.
        infos: a list with one distinct dict per sub-env.
    """

    observations: ObsT
    infos: list[dict[str, Any]]

    @property
    def dones(self) -> NDArray[np.bool_]:
        """All ``False``: a reset never ends an episode."""
        return np.zeros(len(_raw_infos(self)), dtype=bool)

    def _replace(self, **changes: Any) -> VecResetResult[Any]:
        """Copy with some fields changed, keeping a not yet built ``infos`` unbuilt."""
        return VecResetResult(
            changes.get("observations", self.observations),
            changes["infos"] if "infos" in changes else _raw_infos(self),
        )


@dataclass(frozen=True, slots=True, eq=False, init=False)
class VecStepResult(_ArrayAwareEq, Generic[ObsT]):
    """What ``VecEnv.step()`` returns: one transition of every sub-env.

    Attributes:
        observations: the batch, shaped like ``batch_observation_space`` (after an autoreset,
            the first observation of the new episode).
        rewards: ``float64`` array ``(num_envs,)``.
        terminated: ``bool`` array ``(num_envs,)``.
        truncated: ``bool`` array ``(num_envs,)``.
        infos: a list with one distinct dict per sub-env.
    """

    observations: ObsT
    rewards: NDArray[np.float64]
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    infos: list[dict[str, Any]]

    def __init__(
        self,
        observations: ObsT,
        rewards: NDArray[np.float64],
        terminated: NDArray[np.bool_],
        truncated: NDArray[np.bool_],
        infos: list[dict[str, Any]],
    ) -> None:
        # Every VecEnv step builds one: the slots set through their descriptors, as
        # StepResult's are (dataclass's frozen __init__ costs about twice as much).
        set_observations, set_rewards, set_terminated, set_truncated, set_infos = _STEP_SLOTS
        set_observations(self, observations)
        set_rewards(self, rewards)
        set_terminated(self, terminated)
        set_truncated(self, truncated)
        set_infos(self, infos)

    @property
    def dones(self) -> NDArray[np.bool_]:
        """``terminated | truncated``."""
        return self.terminated | self.truncated

    def _replace(self, **changes: Any) -> VecStepResult[Any]:
        """Copy with some fields changed, keeping a not yet built ``infos`` unbuilt."""
        return VecStepResult(
            changes.get("observations", self.observations),
            changes.get("rewards", self.rewards),
            changes.get("terminated", self.terminated),
            changes.get("truncated", self.truncated),
            changes["infos"] if "infos" in changes else _raw_infos(self),
        )


@dataclass(frozen=True, slots=True, eq=False)
class VecRecvResult(VecStepResult[ObsT]):
    """What ``recv()`` returns: one transition of each sub-env in ``env_ids``.

    Every field has one row per sub-env of ``env_ids`` (in that order) instead of one per
    sub-env of the VecEnv.

    Attributes:
        env_ids: ``intp`` array, the sub-envs the rows belong to.
    """

    env_ids: NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))

    def _replace(self, **changes: Any) -> VecRecvResult[Any]:
        """Copy with some fields changed, keeping a not yet built ``infos`` unbuilt."""
        return VecRecvResult(
            changes.get("observations", self.observations),
            changes.get("rewards", self.rewards),
            changes.get("terminated", self.terminated),
            changes.get("truncated", self.truncated),
            changes["infos"] if "infos" in changes else _raw_infos(self),
            changes.get("env_ids", self.env_ids),
        )


def _install_lazy_infos(cls: type) -> None:
    # `infos` may hold a LazyInfos (native envs build one dict per sub-env only when asked): the
    # slot keeps whatever was stored and this property swaps in the built list on first read, so
    # users only ever see a real list of real dicts.
    slot = cls.__dict__["infos"]

    def infos(self: Any) -> list[dict[str, Any]]:
        value = slot.__get__(self, cls)
        if isinstance(value, LazyInfos):
            value = value.build()
            slot.__set__(self, value)
        return value  # type: ignore[no-any-return]

    infos.__doc__ = "One distinct dict per sub-env."
    cls._infos_slot = slot  # type: ignore[attr-defined]
    setattr(cls, "infos", property(infos, slot.__set__, doc=infos.__doc__))  # noqa: B010


def _raw_infos(result: VecResetResult[Any] | VecStepResult[Any]) -> Any:
    """The stored ``infos``: a list, or a LazyInfos that has not been built yet."""
    return type(result)._infos_slot.__get__(result, type(result))  # type: ignore[union-attr]


def info_at(result: VecResetResult[Any] | VecStepResult[Any], index: int) -> dict[str, Any]:
    """Sub-env ``index``'s info dict, building only that one when the list is still lazy.

    Wrappers use it to add keys for a few sub-envs without building every dict.
    """
    raw = _raw_infos(result)
    if isinstance(raw, LazyInfos):
        return raw.at(index)
    return raw[index]  # type: ignore[no-any-return]


def info_get(
    result: VecResetResult[Any] | VecStepResult[Any], index: int, key: str, default: Any = None
) -> Any:
    """``info_at(result, index).get(key, default)``, without building that dict when the list
    is still lazy and the value can be read without it (``LazyInfos.get``)."""
    raw = _raw_infos(result)
    if isinstance(raw, LazyInfos):
        return raw.get(index, key, default)
    return raw[index].get(key, default)


def info_set(
    result: VecResetResult[Any] | VecStepResult[Any], index: int, key: str, value: Any
) -> None:
    """``info_at(result, index)[key] = value``, without building that dict when the list is
    still lazy: it gets the key when it is built, in the same place (``LazyInfos.set_item``)."""
    raw = _raw_infos(result)
    if isinstance(raw, LazyInfos):
        raw.set_item(index, key, value)
    else:
        raw[index][key] = value


for _cls in (VecResetResult, VecStepResult, VecRecvResult):
    _seal(_cls)
    # Python 3.10's slots=True gives VecRecvResult a slot of its own for every inherited field
    # (3.11 on: only for env_ids), and that slot would hide VecStepResult's property.
    if "infos" in _cls.__dict__:
        _install_lazy_infos(_cls)

_BATCH_FIELDS = ("observations", "rewards", "terminated", "truncated")
# The slots exist only once dataclass(slots=True) has rebuilt the class; `infos` is the slot
# under the lazy-infos property.
_STEP_SLOTS = (
    *(VecStepResult.__dict__[name].__set__ for name in _BATCH_FIELDS),
    VecStepResult._infos_slot.__set__,  # type: ignore[attr-defined]
)
