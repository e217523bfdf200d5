"""SekaiToSB3: any sekai VecEnv seen as a Stable-Baselines3 VecEnv.

This module imports stable_baselines3 at the top: it is imported only by ``to_sb3()`` and the
lazy ``sekai.compat.SekaiToSB3`` attribute, after ``require_sb3()`` succeeded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import gymnasium
import numpy as np
from numpy.typing import NDArray
from stable_baselines3.common.vec_env import VecEnv as SB3VecEnv

from sekai.compat._episode import with_episode_dict
from sekai.compat._gym_vector import GymnasiumVectorToSekai
from sekai.compat._spaces import space_to_gymnasium
from sekai.spaces import Dict, Discrete, MaskedBox, MultiBinary, MultiDiscrete, Space
from sekai.utils.action_mask import flatten_action_mask
from sekai.vector._attributes import RemoteAttributes
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.native import NativeVecEnv
from sekai.vector.spawnable import spawn_each
from sekai.vector.vec_env import VecEnv
from sekai.vector.vec_wrapper import VecWrapper

__all__ = ["SekaiToSB3"]

_MASKS = "action_masks"
# Attributes SB3 asks every sub-env for that sekai envs do not have: the bridge answers them.
_ANSWERED = {"render_mode": None}


def _check_sb3_spaces(observation_space: Space[Any], action_space: Space[Any]) -> None:
    """Refuse the spaces SB3's policies would misread or fail on.

    Actions: SB3's policies pick a Discrete or MultiDiscrete action as indices from 0 (ignoring
    ``start``, so the env would be given other actions than the policy chose) and build a
    MultiDiscrete or MultiBinary policy for a 1-D space only. Observations: SB3 one-hot encodes
    a Discrete or MultiDiscrete observation (a Dict's entries too) as indices from 0, ignoring
    ``start`` likewise, and a MultiDiscrete one only with a 1-D ``nvec`` (it fails on others);
    its MultiInputPolicy fails on a Dict key torch refuses (``_check_sb3_dict_keys``).

    Raises:
        ValueError: naming the space and the wrapper that makes it one SB3 can use.
    """
    _check_sb3_action_space(action_space)
    entries: dict[str | None, Space[Any]] = (
        dict(observation_space.spaces)
        if isinstance(observation_space, Dict)
        else {None: observation_space}
    )
    for key, entry in entries.items():
        flat = not isinstance(entry, MultiDiscrete) or entry.nvec.ndim == 1
        if isinstance(entry, (Discrete, MultiDiscrete)) and (np.any(entry.start) or not flat):
            _refuse_observation(observation_space, key, entry)
    if isinstance(observation_space, Dict):
        _check_sb3_dict_keys(observation_space)


def _check_sb3_dict_keys(space: Dict) -> None:
    """Refuse a Dict observation space with a key SB3's MultiInputPolicy cannot hold: it keys
    a torch ModuleDict by the Dict's keys, and torch refuses one that names an attribute of a
    ModuleDict (``"values"``, a MaskedBox's entry, ``"keys"``, ...), contains '.' or is empty.

    Raises:
        ValueError: naming the keys and the wrapper that makes the space one SB3 can use.
    """
    from torch import nn  # SB3 imported torch already

    taken = nn.ModuleDict()
    refused = [
        key
        for key in space.spaces
        if isinstance(key, str) and (key == "" or "." in key or hasattr(taken, key))
    ]
    if not refused:
        return
    if isinstance(space, MaskedBox):
        fix = (
            "Wrap each sub-env in sekai.FlattenObservation, which makes its values and mask "
            "one Box, and train with MlpPolicy"
        )
    else:
        fix = (
            "Wrap each sub-env in a sekai.ObservationWrapper whose observation_space and "
            "observation() use other keys"
        )
    raise ValueError(
        f"to_sb3() cannot use the observation space {space!r}: SB3's MultiInputPolicy keys a "
        f"torch ModuleDict by the observation's keys, and torch refuses {refused!r} (the name "
        f"of a ModuleDict attribute, a key with '.', or ''). {fix} (make_vec(..., "
        "wrappers=[...]) adds it to every sub-env)."
    )


def _check_sb3_action_space(space: Space[Any]) -> None:
    """Refuse an action space SB3's policies cannot drive (see ``_check_sb3_spaces``)."""
    shifted = "ignore start, so the env would be given other actions than the policy chose"
    if isinstance(space, Discrete) and space.start != 0:
        plain: Space[Any] = Discrete(space.n)
        why = f"SB3's policies pick the actions 0..{space.n - 1} and {shifted}"
        how = f"returns action {_plus(space.start)}"
    elif isinstance(space, MultiDiscrete) and space.nvec.ndim > 1:
        plain = MultiDiscrete(space.nvec.ravel(), dtype=space.dtype)
        why = f"SB3 builds a MultiDiscrete policy for a 1-D nvec only, not {space.nvec.shape}"
        how = f"returns action.reshape({space.nvec.shape})"
        if space.start.any():
            why += f", and its policies {shifted}"
            how += f" + {space.start.tolist()}"
    elif isinstance(space, MultiDiscrete) and space.start.any():
        plain = MultiDiscrete(space.nvec, dtype=space.dtype)
        why = f"SB3's policies pick each entry from 0 to nvec - 1 and {shifted}"
        how = f"returns action + {space.start.tolist()}"
    elif isinstance(space, MultiBinary) and len(space.shape) > 1:
        plain = MultiBinary(int(np.prod(space.shape)))
        why = f"SB3 builds a MultiBinary policy for a 1-D shape only, not {space.shape}"
        how = f"returns action.reshape({space.shape})"
    else:
        return
    _refuse("action", space, why, f"whose action_space is {plain!r} and whose action() {how}")


def _refuse_observation(
    space: Space[Any], key: str | None, entry: Discrete | MultiDiscrete
) -> NoReturn:
    """Refuse an observation space (or its Dict entry ``key``) with a non-zero ``start`` or a
    multi-dimensional ``nvec``."""
    name = "observation" if key is None else f"observation[{key!r}]"
    if isinstance(entry, Discrete):
        plain: Space[Any] = Discrete(entry.n)
        why = f"SB3's policies one-hot encode the observations 0..{entry.n - 1}"
        how = f"{name} {_plus(-entry.start)}"
    else:
        plain = MultiDiscrete(entry.nvec.ravel(), dtype=entry.dtype)
        why = "SB3's policies one-hot encode each entry from 0 to nvec - 1"
        how = f"{name} - {entry.start.tolist()}" if entry.start.any() else name
        if entry.nvec.ndim > 1:
            why = (
                f"SB3's policies one-hot encode a MultiDiscrete with a 1-D nvec only, not "
                f"{entry.nvec.shape} (they fail on it)"
            )
            if entry.start.any():
                why += ", and each entry from 0 to nvec - 1"
                how = f"({how})"
            how = f"{how}.ravel()"
    if np.any(entry.start):
        why += (
            " and ignore start, so they would read other observations than the env gave (or "
            "fail on those out of range)"
        )
    if key is None:
        wrapper = f"whose observation_space is {plain!r} and whose observation() returns {how}"
    else:
        why = f"its entry {key!r}, {entry!r}: {why}"
        wrapper = (
            f"whose observation_space holds {plain!r} under {key!r} and whose observation() "
            f"puts {how} there"
        )
    _refuse("observation", space, why, wrapper)


def _plus(shift: int) -> str:
    """``+ 2`` or ``- 2``: ``shift`` added in the wrapper a refusal suggests."""
    return f"{'+' if shift > 0 else '-'} {abs(shift)}"


def _refuse(kind: str, space: Space[Any], why: str, wrapper: str) -> NoReturn:
    """Raise the ValueError of a ``kind`` ("action" or "observation") space SB3 cannot use,
    suggesting the ``wrapper`` (its space and method) that makes it one SB3 can use."""
    raise ValueError(
        f"to_sb3() cannot use the {kind} space {space!r}: {why}. Wrap each sub-env in a "
        f"sekai.{kind.capitalize()}Wrapper {wrapper} (make_vec(..., wrappers=[...]) adds it to "
        f"every sub-env), or give the env such an {kind} space."
    )


def _runs(targets: list[int]) -> list[list[int]]:
    """``targets`` cut, in order, into runs that name each sub-env once: SB3's own VecEnvs run
    a method once per entry of ``indices``, so a sub-env named again runs again, after the
    entries before it."""
    runs: list[list[int]] = [[]]
    seen: set[int] = set()
    for i in targets:
        if i in seen:
            runs.append([])
            seen.clear()
        runs[-1].append(i)
        seen.add(i)
    return runs


class SekaiToSB3(SB3VecEnv):  # type: ignore[misc,unused-ignore]  # Any when SB3 is absent
    """A sekai ``VecEnv`` as a Stable-Baselines3 ``VecEnv``; build it with ``to_sb3()``.

    Sekai's same-step autoreset is SB3's convention, so results map directly: for a sub-env
    whose episode ended, ``observations[i]`` is the first observation of the next episode,
    ``infos[i]["terminal_observation"]`` the last one of the finished episode, and
    ``infos[i]["TimeLimit.truncated"]`` (set on every step) tells a time-limit truncation
    from a termination. Rewards are float32, as SB3's own VecEnvs return them. An
    ``infos[i]["episode"]`` EpisodeStats (from ``VecRecordEpisodeStatistics``) becomes SB3's
    Monitor dict ``{"r", "l", "t"}`` so SB3's loggers can read it.

    ``seed()`` / ``set_options()`` apply at the next ``reset()`` as in SB3: seed ``s`` gives
    sub-env ``i`` the seed ``s + i`` (a native VecEnv combines the list into its one
    generator). ``get_attr`` / ``set_attr`` / ``env_method`` / ``env_is_wrapped`` take SB3's
    ``indices``, with one result per entry, in order, as SB3's own VecEnvs (``set_attr`` and
    ``env_method`` run once per entry, so a sub-env named twice runs twice). SyncVecEnv,
    AsyncVecEnv, ProcVecEnv and RayVecEnv reach exactly those sub-envs (a ProcVecEnv or
    RayVecEnv asks only the workers that run them), under VecWrappers that pass these calls
    through. A VecWrapper with its own ``get_attr`` / ``set_attr`` / ``call`` is asked with or
    without ``indices`` alike: its ``get_attr`` for all, the ``indices`` entries returned; its
    ``set_attr`` and ``call`` on some sub-envs raise ``NotImplementedError``. A native
    env is one object for all its sub-envs: ``get_attr`` reads all and returns the ``indices``
    entries, ``set_attr`` changes only their values, and ``env_method`` on some sub-envs
    raises ``NotImplementedError`` rather than run on all; so do ``set_attr`` and
    ``env_method`` on a backend that cannot reach single sub-envs (``from_gymnasium_vector``, a
    custom VecEnv), whose ``get_attr`` reads all. ``env_is_wrapped`` is
    False for gymnasium wrappers (SB3's Monitor) and on native envs (their sub-envs have no
    wrapper layers), and raises ``NotImplementedError`` for a sekai wrapper on a backend
    without sub-env objects here (proc, ray, ``from_gymnasium_vector``), which cannot be
    checked. ``get_attr("action_masks")`` gives each sub-env's own ``action_masks`` (one flat
    mask). ``action_masks()`` (and
    ``env_method("action_masks")``, what sb3-contrib's MaskablePPO calls) flattens each
    sub-env's ``action_mask()`` from ``vec.call``. Like ``to_gymnasium``'s, it exists only
    when the sub-envs define ``action_mask()``: otherwise ``hasattr(venv, "action_masks")`` is
    False and reading it raises AttributeError saying so.

    Attributes:
        sekai_vec: the wrapped sekai VecEnv.
    """

    def __init__(self, vec: VecEnv) -> None:
        if not isinstance(vec, VecEnv):
            raise TypeError(
                f"to_sb3() expects a sekai VecEnv, got {type(vec).__name__}. For a single "
                "sekai.Env, use to_gymnasium(env) (SB3 vectorises it itself)."
            )
        if not vec.autoreset:
            raise ValueError(
                "to_sb3() needs a VecEnv with autoreset=True: SB3 expects finished sub-envs to "
                "be reset within step(). Build it without vector_kwargs={'autoreset': False}."
            )
        _check_sb3_spaces(vec.observation_space, vec.action_space)
        self.sekai_vec = vec
        self._actions: Any = None
        self._masked: bool | None = None  # whether the sub-envs mask, asked once when needed
        super().__init__(
            vec.num_envs,
            space_to_gymnasium(vec.observation_space),
            space_to_gymnasium(vec.action_space),
        )
        sb3_metadata: dict[str, Any] = getattr(self, "metadata", {})  # render modes
        self.metadata = {**vec.metadata, **sb3_metadata}

    # -- reset and step ---------------------------------------------------------------------

    def reset(self) -> Any:
        """Reset every sub-env with the seeds and options set since the last reset."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = None
        if any(self._options):
            options = [o if o else None for o in self._options]
        result = self.sekai_vec.reset(seed=seeds, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = list(result.infos)
        return result.observations

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the batch of actions for ``step_wait()``."""
        self._actions = actions

    def step_wait(self) -> tuple[Any, NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        """Step every sub-env; return ``(observations, rewards, dones, infos)`` in SB3's format."""
        result = self.sekai_vec.step(self._actions)
        self._actions = None
        terminated, truncated = result.terminated, result.truncated
        dones = terminated | truncated
        time_limit = truncated & ~terminated
        infos: list[dict[str, Any]] = list(result.infos)
        for i, info in enumerate(infos):
            info["TimeLimit.truncated"] = bool(time_limit[i])
            if dones[i]:
                info["terminal_observation"] = info.get("final_observation")
                self.reset_infos[i] = info.get("reset_info", {})
            infos[i] = with_episode_dict(info)
        return result.observations, result.rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the sekai VecEnv."""
        self.sekai_vec.close()

    # -- attributes and methods of the sub-envs ---------------------------------------------

    def _indices(self, indices: Any) -> list[int]:
        """SB3's ``indices`` as sub-env numbers (negative ones count from the end, as in SB3's
        own VecEnvs, which index a list of envs).

        Raises:
            IndexError: an index out of range.
        """
        n = self.num_envs
        targets = [int(i) for i in self._get_indices(indices)]
        for i in targets:
            if not -n <= i < n:
                raise IndexError(f"indices holds {i}, out of range for {n} sub-envs.")
        return [i % n for i in targets]

    def _local_envs(self) -> list[Any] | None:
        """The sub-env objects when they live in this process (SyncVecEnv, AsyncVecEnv)."""
        envs = getattr(self.sekai_vec.unwrapped, "envs", None)
        return list(envs) if isinstance(envs, Iterable) else None

    def _is_native(self) -> bool:
        """Whether the sub-envs are rows of one object (no sub-env objects, no wrapper layers)."""
        return isinstance(self.sekai_vec.unwrapped, (NativeVecEnv, KernelVecEnv))

    def _reach(self, method: str) -> VecEnv:
        """The layer that answers ``method`` (``"get_attr"``, ``"set_attr"`` or ``"call"``) for
        the sub-envs: the outermost with a ``method`` of its own. VecWrapper's own passes the
        call inward unchanged, so every layer outside this one leaves it as it is.

        Both ``indices=None`` and some sub-envs go through this layer: its public ``method``
        for every sub-env, its ``_<method>_at`` hook for some. A VecWrapper with a ``method``
        of its own is reached with VecEnv's hooks: a read of all sub-envs (``get_attr``), a
        refusal (``set_attr``, ``call``).
        """
        layer = self.sekai_vec
        while isinstance(layer, VecWrapper) and getattr(type(layer), method) is getattr(
            VecWrapper, method
        ):
            layer = layer.venv
        return layer

    def _check_reachable(
        self, targets: list[int], runs: list[list[int]], what: str, method: str
    ) -> VecEnv:
        """The layer that runs ``method`` (``_reach``), after refusing, before anything runs,
        ``runs`` that leave sub-envs out where it cannot act on single sub-envs.

        Args:
            targets: the sub-envs of ``indices``; runs: them cut by ``_runs``.
            what: the method called, for the message; method: ``"set_attr"`` or ``"call"``.

        Raises:
            NotImplementedError: a native env (one object for all its sub-envs), a VecWrapper
                with its own ``method`` (it acts on all sub-envs), or a backend without the
                single-sub-env hook (``from_gymnasium_vector``, a custom VecEnv).
        """
        layer = self._reach(method)
        n = self.num_envs
        if all(len(run) == n for run in runs):
            return layer
        name = type(layer).__name__
        hook = f"_{method}_at"
        instead = (
            ", or build a SyncVecEnv, AsyncVecEnv, ProcVecEnv or RayVecEnv, whose sub-envs "
            "to_sb3 reaches one by one"
        )
        if isinstance(layer, (NativeVecEnv, KernelVecEnv)):
            reason = (
                f"{name} is one object for all its sub-envs, so a call cannot be limited to "
                "some of them"
            )
        elif getattr(type(layer), hook) is not getattr(VecEnv, hook):
            return layer
        elif isinstance(layer, VecWrapper):
            reason = (
                f"{name} has its own {method}(), which acts on all sub-envs at once: going "
                "past it to some of them would skip it"
            )
            instead = f"; {name} decides what {method}() does for each sub-env"
        else:
            reason = (
                f"{name} cannot reach single sub-envs: its get_attr, set_attr and call act on all "
                "of them, which would touch the others"
            )
        which = (
            "that leave sub-envs out"
            if len(set(targets)) < n
            else "that name a sub-env again (SB3 runs it once per entry, the repeats alone)"
        )
        raise NotImplementedError(
            f"{type(self).__name__}.{what} with indices {which}: {reason}. Pass indices=None to "
            f"reach every sub-env once{instead}."
        )

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """Read ``attr_name`` from the sub-envs in ``indices`` (through their wrapper stacks):
        one value per entry, in order."""
        targets = self._indices(indices)
        if attr_name in _ANSWERED:
            return [_ANSWERED[attr_name]] * len(targets)
        if attr_name == _MASKS:
            self._require_masks()
            return [functools.partial(self._action_masks_of, i) for i in targets]
        layer = self._reach("get_attr")
        distinct = list(dict.fromkeys(targets))  # a read changes nothing: each sub-env once
        if len(distinct) == self.num_envs:
            values = layer.get_attr(attr_name)
            return [values[i] for i in targets]
        read = dict(zip(distinct, layer._get_attr_at(distinct, attr_name)))
        return [read[i] for i in targets]

    def has_attr(self, attr_name: str) -> bool:
        """Whether every sub-env has ``attr_name`` (``action_masks``: whether they mask)."""
        if attr_name == _MASKS:
            return self._supports_masks()
        return bool(super().has_attr(attr_name))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` to ``value`` on the sub-envs in ``indices``, once per entry."""
        targets = self._indices(indices)
        n = self.num_envs
        what = f"set_attr({attr_name!r}, ...)"
        if self._is_native():
            # One object holds every sub-env's value: one set gives each of ``targets`` the
            # value, as setting it again for a repeated entry would.
            if len(set(targets)) == n:
                self._set_all(attr_name, value)
                return
            values = list(self.sekai_vec.get_attr(attr_name))
            for i, spawned in zip(targets, spawn_each(value, len(targets), what=what)):
                values[i] = spawned
            self.sekai_vec.set_attr(attr_name, values)
            return
        runs = _runs(targets)
        layer = self._check_reachable(targets, runs, f"set_attr({attr_name!r})", "set_attr")
        for run in runs:
            if len(run) == n:
                self._set_all(attr_name, value, layer)
            else:
                spawned = spawn_each(value, len(run), what=what)
                layer._set_attr_at(run, attr_name, spawned)

    def _set_all(self, attr_name: str, value: Any, layer: VecEnv | None = None) -> None:
        # A list of num_envs items would be read as one value per sub-env.
        one_for_all = isinstance(value, list) and len(value) == self.num_envs
        target = self.sekai_vec if layer is None else layer
        target.set_attr(attr_name, [value] * self.num_envs if one_for_all else value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call ``method_name`` on the sub-envs in ``indices``, once per entry, results in that
        order (``action_masks``: their masks)."""
        targets = self._indices(indices)
        if method_name == _MASKS:
            masks = self.action_masks()
            return [masks[i] for i in targets]
        runs = _runs(targets)
        layer = self._check_reachable(targets, runs, f"env_method({method_name!r})", "call")
        results: list[Any] = []
        for run in runs:
            if len(run) == self.num_envs:
                values = layer.call(method_name, *method_args, **method_kwargs)
                results += [values[i] for i in run]
            else:
                results += layer._call_at(run, method_name, method_args, method_kwargs)
        return results

    def env_is_wrapped(self, wrapper_class: type[Any], indices: Any = None) -> list[bool]:
        """Whether each sub-env in ``indices`` has a ``wrapper_class`` layer (sekai wrappers).

        Always False for gymnasium wrappers such as SB3's Monitor (a sub-env's layers are sekai
        envs) and on native envs (no wrapper layers per sub-env).

        Raises:
            NotImplementedError: another class on a backend without sub-env objects here:
                one whose sub-envs live in worker processes (ProcVecEnv, RayVecEnv), a
                ``from_gymnasium_vector`` env (gymnasium sub-envs) or a custom VecEnv.
        """
        targets = self._indices(indices)
        envs = self._local_envs()
        if envs is not None:
            return [any(isinstance(layer, wrapper_class) for layer in envs[i]) for i in targets]
        if self._is_native() or issubclass(wrapper_class, gymnasium.Env):
            return [False] * len(targets)
        backend = self.sekai_vec.unwrapped
        name = type(backend).__name__
        if isinstance(backend, RemoteAttributes):
            why = "they live in its worker processes. Build a SyncVecEnv or AsyncVecEnv"
        elif isinstance(backend, GymnasiumVectorToSekai):
            inner = type(backend.gymnasium_vec.unwrapped).__name__
            why = (
                f"they are gymnasium envs inside its {inner}, which hands out their attributes "
                "and methods but no sekai wrapper stacks. Build a SyncVecEnv of sekai envs "
                "(from_gymnasium() for gymnasium ones)"
            )
        else:
            why = f"{name} has no envs list of them. Build a SyncVecEnv or AsyncVecEnv"
        raise NotImplementedError(
            f"{type(self).__name__}.env_is_wrapped({wrapper_class.__name__}) cannot look at the "
            f"wrapper layers of {name}'s sub-envs: {why} to check them."
        )

    # -- action masks -----------------------------------------------------------------------

    def _supports_masks(self) -> bool:
        if self._masked is None:
            try:
                self.sekai_vec.get_attr("action_mask")
            except AttributeError:
                self._masked = False
            else:
                self._masked = True
        return self._masked

    def _require_masks(self) -> None:
        if not self._supports_masks():
            raise AttributeError(
                f"{type(self).__name__} has no action_masks(): the sub-envs of "
                f"{self.sekai_vec!r} define no action_mask()."
            )

    def _action_masks_of(self, index: int) -> NDArray[np.bool_]:
        """Sub-env ``index``'s flattened mask: its entry of ``get_attr("action_masks")``."""
        mask: NDArray[np.bool_] = self.action_masks()[index]
        return mask

    @property
    def action_masks(self) -> Callable[[], NDArray[np.bool_]]:
        """``action_masks()``: every sub-env's ``action_mask()``, flattened: a bool array
        ``(num_envs, n)``.

        Only present when the sub-envs define ``action_mask``; otherwise reading it raises
        AttributeError, so ``hasattr(venv, "action_masks")`` is False.
        """
        self._require_masks()
        return self._action_masks

    def _action_masks(self) -> NDArray[np.bool_]:
        space = self.sekai_vec.action_space
        masks = self.sekai_vec.call("action_mask")
        return np.stack([flatten_action_mask(space, mask) for mask in masks])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sekai_vec!r})"
