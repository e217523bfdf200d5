"""Vector wrapper base classes: VecWrapper, VecResultWrapper (hooks) and its observation,
reward and action variants."""

from __future__ import annotations

import abc
import dataclasses
import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sekai._args import type_name
from sekai._slots import Slotted
from sekai.core._async import passes_inward
from sekai.core._not_an_env import not_an_env_hint
from sekai.core.wrapper import _NO_REVERSE_ACTION, _own_space
from sekai.spaces import Dict, Space, Tuple, concatenate, iterate
from sekai.spaces._kinds import ARRAY_SPACES
from sekai.vector._async_calls import AsyncCalls, claim_calls, release_calls
from sekai.vector._contract.checks import observation_checker
from sekai.vector.kernel_step import tree_map
from sekai.vector.kernel_vec_env import _device_backend
from sekai.vector.result import VecResetResult, VecStepResult, info_get, info_set
from sekai.vector.vec_env import VecEnv, _BatchCache

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from sekai.registry.spec import EnvSpec
    from sekai.vector._contract.partial import PartialStep
    from sekai.vector.kernel_backend import KernelBackend

__all__ = [
    "VecActionWrapper",
    "VecObservationWrapper",
    "VecResultWrapper",
    "VecRewardWrapper",
    "VecWrapper",
]

_WRAP_GYMNASIUM_VECTOR = (
    "To wrap a gymnasium vector env, convert it first with "
    "sekai.compat.from_gymnasium_vector(envs)."
)


class _NotForwarded:
    """``send``/``recv`` of a vector wrapper: an ``AttributeError`` saying why and what to do
    instead (a descriptor, as ``VecEnv.render``: no ``__getattr__`` to slow every lookup)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        backend = obj.unwrapped  # type: ignore[attr-defined]
        kind = type(backend).__name__
        if hasattr(backend, self.name):
            instead = (
                f"call send() and recv() on the backend, {kind} (vec.unwrapped), which skips the "
                "wrappers' processing, or use step()"
            )
        else:
            instead = f"its backend, {kind}, has none either: use step()"
        raise AttributeError(
            f"{type(obj).__name__!r} object has no attribute {self.name!r}: vector wrappers do "
            "not forward send() and recv() (they process whole step() results, not the batches "
            f"of whichever sub-envs finish first); {instead}."
        )


class VecWrapper(VecEnv):
    """Wraps a whole VecEnv; delegates everything (the async pair included) by default, but
    ``send()``/``recv()``, which raise ``AttributeError`` naming what to do instead.

    Subclasses call ``super().__init__(venv)`` and may assign new single-env
    ``observation_space`` / ``action_space`` in ``__init__`` (the batched spaces follow).
    Stateful logic derives from ``VecResultWrapper`` and overrides its hooks, which serve
    ``reset``/``step`` and ``async_reset``/``async_step`` alike. A subclass that overrides
    only the sync pair itself gets async methods that run it (the routing rule).

    Args:
        venv: the VecEnv to wrap.
    """

    # Runtime only, so that type checkers flag wrapper.send() instead of typing it Any.
    if not TYPE_CHECKING:
        send = _NotForwarded()
        recv = _NotForwarded()

    def __init__(self, venv: VecEnv) -> None:
        if not isinstance(venv, VecEnv):
            raise TypeError(
                f"{type(self).__name__} expected a sekai VecEnv, got {type_name(venv)}. "
                + not_an_env_hint(venv, _WRAP_GYMNASIUM_VECTOR, vector=True)
            )
        self.venv = venv
        self._own_observation_space: Space[Any] | None = None
        self._own_action_space: Space[Any] | None = None
        self._batch_obs = _BatchCache()
        self._batch_act = _BatchCache()

    # -- delegated state -------------------------------------------------------------------

    @property
    def num_envs(self) -> int:
        return self.venv.num_envs

    @property
    def observation_space(self) -> Space[Any]:
        own = self._own_observation_space
        return own if own is not None else self.venv.observation_space

    @observation_space.setter
    def observation_space(self, space: Space[Any] | None) -> None:
        self._own_observation_space = _own_space(type(self).__name__, "observation_space", space)

    @property
    def action_space(self) -> Space[Any]:
        own = self._own_action_space
        return own if own is not None else self.venv.action_space

    @action_space.setter
    def action_space(self, space: Space[Any] | None) -> None:
        self._own_action_space = _own_space(type(self).__name__, "action_space", space)

    @property
    def autoreset(self) -> bool:
        return self.venv.autoreset

    @property
    def frozen(self) -> NDArray[np.bool_]:
        return self.venv.frozen

    @property
    def closed(self) -> bool:
        return self.venv.closed

    @property
    def unwrapped(self) -> VecEnv:
        """The innermost VecEnv."""
        return self.venv.unwrapped

    def _partial_step(self, error: BaseException) -> PartialStep | None:
        """What the step that raised ``error`` still did (rule 9), as this wrapper hands it
        out: the layers below rewrote it as they rewrite a step's results."""
        partial = self.venv._partial_step(error)
        return None if partial is None else self._rewrite_partial(partial)

    def _rewrite_partial(self, partial: PartialStep) -> PartialStep:
        """The record of a failed step as this wrapper's own step would have returned it (a
        reward wrapper transforms the rewards of the sub-envs that stepped)."""
        return partial

    @property
    def rng(self) -> np.random.Generator:
        """The wrapped env's generator (a native env's; wrappers have none of their own)."""
        generator: np.random.Generator = self.venv.rng  # type: ignore[attr-defined]
        return generator

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        if not hasattr(self.venv, "rng"):
            raise AttributeError(
                f"{type(self.venv.unwrapped).__name__} has no rng to set: its sub-envs hold "
                "their own generators; seed them with reset(seed=...)."
            )
        self.venv.rng = value

    @property
    def spec(self) -> EnvSpec | None:
        return self.venv.spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self.venv.spec = value

    @property
    def metadata(self) -> dict[str, Any]:
        return self.venv.metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self.venv.metadata = value

    # -- delegated API ---------------------------------------------------------------------

    @passes_inward
    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        return self.venv.reset(seed=seed, options=options)

    @passes_inward
    def step(self, actions: Any) -> VecStepResult[Any]:
        return self.venv.step(actions)

    # A wrapper's flag is set only by a routed async call of its own (a subclass's step()):
    # the calls passed inward meanwhile are refused as the env it wraps refuses its own.
    # That call runs the sync calls it passes inward in its own thread: the envs it wraps run
    # that thread's calls meanwhile, and refuse other threads' (not the wrapper's own copies,
    # pickles or closes of them, which are no async call of theirs).
    _claimed: tuple[AsyncCalls, ...] = ()

    def _begin_async(self) -> None:
        super()._begin_async()
        try:
            self._claimed = claim_calls(_wrapped_envs(self))
        except BaseException:
            super()._end_async()
            raise

    def _end_async(self) -> None:
        claimed, self._claimed = self._claimed, ()
        release_calls(claimed)
        super()._end_async()

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._check_no_async_call()
        return await self.venv.async_reset(seed=seed, options=options)

    async def async_step(self, actions: Any) -> VecStepResult[Any]:
        self._check_no_async_call()
        return await self.venv.async_step(actions)

    def get_attr(self, name: str) -> list[Any]:
        return self.venv.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        self.venv.set_attr(name, values)

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        return self.venv.call(name, *args, **kwargs)

    def close(self) -> None:
        self._check_no_async_call()
        self.venv.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.venv!r})"


def _wrapped_envs(wrapper: VecWrapper) -> Iterator[VecEnv]:
    """The envs inside ``wrapper``, outermost first."""
    env = wrapper.venv
    while isinstance(env, VecWrapper):
        yield env
        env = env.venv
    yield env


def _live_before_step(venv: VecEnv) -> NDArray[np.bool_] | None:
    """The sub-envs ``venv``'s next step will really step (not frozen), None when all of them."""
    if venv.autoreset:
        return None
    frozen = venv.frozen
    return ~frozen if frozen.any() else None


class VecResultWrapper(VecWrapper):
    """A VecWrapper that works through hooks, called the same way on the sync and async paths.

    Override these (each a no-op or identity by default) instead of the four reset/step
    methods, so that a stateful wrapper cannot implement one path and forget the other:

    - ``_on_reset(seed)``: after the inner reset succeeded, with the ``seed`` it was given.
    - ``_rewrite_reset(result)``: the reset's result as this wrapper returns it.
    - ``_step_actions(actions)``: the batch passed to the inner step.
    - ``_rewrite_step(result, live)``: the step's result as this wrapper returns it. ``live``
      is the mask of the sub-envs the step really stepped, None when it stepped all of them
      (without autoreset, frozen sub-envs are not stepped); it is read before the step only
      where the class sets ``_step_reads_live`` (None is passed elsewhere).
    - ``_on_failed_step(partial)``: after an inner step raised while other sub-envs stepped
      (rule 9), with what they did (a ``PartialStep``: which stepped, their rewards and
      flags; those that ended an episode were reset, with autoreset). Their observations and
      infos are lost with the call.
    """

    _step_reads_live: ClassVar[bool] = False

    def _on_reset(self, seed: Any) -> None:
        pass

    def _rewrite_reset(self, result: VecResetResult[Any]) -> VecResetResult[Any]:
        return result

    def _step_actions(self, actions: Any) -> Any:
        return actions

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        return result

    def _on_failed_step(self, partial: PartialStep) -> None:
        pass

    def _failed(self, error: BaseException) -> None:
        partial = self.venv._partial_step(error)
        if partial is not None and partial.stepped.any():
            self._on_failed_step(partial)

    @passes_inward
    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        result = self.venv.reset(seed=seed, options=options)
        self._on_reset(seed)
        return self._rewrite_reset(result)

    @passes_inward
    def step(self, actions: Any) -> VecStepResult[Any]:
        live = _live_before_step(self.venv) if self._step_reads_live else None
        try:
            result = self.venv.step(self._step_actions(actions))
        except BaseException as error:  # Ctrl-C or a cancelled call too: the stepped are recorded
            self._failed(error)
            raise
        return self._rewrite_step(result, live)

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._check_no_async_call()
        result = await self.venv.async_reset(seed=seed, options=options)
        self._on_reset(seed)
        return self._rewrite_reset(result)

    async def async_step(self, actions: Any) -> VecStepResult[Any]:
        self._check_no_async_call()
        live = _live_before_step(self.venv) if self._step_reads_live else None
        try:
            result = await self.venv.async_step(self._step_actions(actions))
        except BaseException as error:  # Ctrl-C or a cancelled call too: the stepped are recorded
            self._failed(error)
            raise
        return self._rewrite_step(result, live)


_NONE: Any = object()  # an info without "final_observation"


class _OneRow(Slotted):
    """How ``VecObservationWrapper`` reads the row of a batch of one of ``single``: ``check``
    (its ``observation_checker``); ``first``, for an array space or a Dict/Tuple of them, the
    row ``iterate`` gives of a batch that passed the check (row 0 of each array); else
    ``batch()``, the batch space ``iterate`` reads it by, built when first needed (a custom
    space may have none)."""

    __slots__ = ("_batch", "check", "first", "single")

    def __init__(self, single: Space[Any]) -> None:
        self.single = single
        self.check = observation_checker(single, 1)
        self.first = _first_row(single)
        self._batch = _BatchCache()

    def batch(self) -> Space[Any]:
        return self._batch.get(self.single, 1)


def _first_row(space: Space[Any]) -> Callable[[Any], Any] | None:
    """The reader of row 0 of a checked batch of ``space`` (None: not made of array spaces)."""
    if isinstance(space, ARRAY_SPACES):
        return operator.itemgetter(0)
    if isinstance(space, (Dict, Tuple)):
        children = space.spaces.items() if isinstance(space, Dict) else enumerate(space.spaces)
        readers = {key: _first_row(child) for key, child in children}
        parts = {key: read for key, read in readers.items() if read is not None}
        if len(parts) < len(readers):
            return None
        if isinstance(space, Dict):
            return lambda batch: {key: read(batch[key]) for key, read in parts.items()}
        return lambda batch: tuple(read(batch[key]) for key, read in parts.items())
    return None


class VecObservationWrapper(VecResultWrapper):
    """Transforms every batch of observations with ``observation(batch)`` (reset and step).

    Terminal observations left by autoreset (``infos[i]["final_observation"]``) go through
    ``final_observation(obs)``, which by default runs ``observation()`` on a batch of one and
    takes its row: as a batch of ``observation_space`` where it is one, else by its structure
    (a dict of rows, a tuple of rows, row 0 of an array), so a transform that changes the
    structure without declaring its space still gives the terminal observation it transforms.
    Override it when the transform has side effects (e.g. updating statistics) or only makes
    sense on a full batch.
    """

    @abc.abstractmethod
    def observation(self, observations: Any) -> Any:
        """Return the transformed batch of observations."""

    def final_observation(self, observation: Any) -> Any:
        """Transform one terminal observation; default: ``observation()`` on a batch of one
        (over a JAX or torch kernel env, on its device, as its batches are)."""
        inner = self.venv.observation_space
        backend = _device_backend(self.venv)
        try:
            batch = concatenate(inner, [observation])
        except (TypeError, ValueError, NotImplementedError):
            batch = [observation]
        else:
            if backend is not None:  # the infos hold host copies
                batch = tree_map(backend.convert, batch)
        transformed = self.observation(batch)
        if backend is not None:  # back to the host, where the env's infos keep it
            transformed = tree_map(_host_copy(backend), transformed)
        # Its row: by ``iterate`` where it is a batch of observation_space (its structure,
        # shapes and dtype kinds: ``observation_checker``), else by its own structure.
        one = self._one_row()
        if one.check(transformed) is None:
            if one.first is not None:
                return one.first(transformed)
            try:
                return next(iter(iterate(one.batch(), transformed)))
            except (TypeError, ValueError, NotImplementedError):  # a custom space's batch
                pass
        return self._row_by_structure(transformed)

    def _row_by_structure(self, batch: Any) -> Any:
        """The one row of ``batch``, what ``observation()`` returned for a batch of one that is
        not a batch of ``observation_space``, by its own structure (``tree_map``: a dict of
        rows, a tuple of rows, row 0 of each array or list of length 1).

        Raises:
            TypeError: naming the wrapper, when a part of ``batch`` is not a batch of one.
        """

        def row(part: Any) -> Any:
            rows = isinstance(part, list) or (isinstance(part, np.ndarray) and part.ndim > 0)
            if rows and len(part) == 1:
                return part[0]
            raise TypeError(
                f"{type(self).__name__}.observation() returned a {type(batch).__name__} for a "
                "batch of one terminal observation that is neither a batch of its "
                f"observation_space {self.observation_space!r} nor one row by its structure "
                f"({type(part).__name__} {part!r:.60} is not an array or list of length 1). "
                "Declare the space of what observation() returns "
                "(VecTransformObservation(..., new_observation_space=...), or set "
                "self.observation_space in the wrapper's __init__), or override "
                "final_observation()."
            )

        return tree_map(row, batch)

    def _final_observations(self, observations: list[Any]) -> list[Any]:
        """The step's terminal observations transformed, in order (``final_observation()`` on
        each; a subclass may transform them together)."""
        return [self.final_observation(observation) for observation in observations]

    def _one_row(self) -> _OneRow:
        """The ``_OneRow`` of the current ``observation_space`` (built again when it changes)."""
        one: _OneRow | None = self.__dict__.get("_one_row_cache")
        if one is None or one.single is not self.observation_space:
            one = self.__dict__["_one_row_cache"] = _OneRow(self.observation_space)
        return one

    def _step_observations(self, observations: Any, live: NDArray[np.bool_] | None) -> Any:
        """A step's batch transformed (``live``: see ``_step_reads_live``)."""
        return self.observation(observations)

    def _rewrite_reset(self, result: VecResetResult[Any]) -> VecResetResult[Any]:
        return result._replace(observations=self.observation(result.observations))

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        # Read and replaced without building the infos a native env has not built yet.
        ended = [
            (index, final)
            for index in np.flatnonzero(result.dones).tolist()
            if (final := info_get(result, index, "final_observation", _NONE)) is not _NONE
        ]
        if ended:  # before the batch updates any statistics
            self._check_final(ended)
        observations = self._step_observations(result.observations, live)
        if ended:
            finals = self._final_observations([final for _, final in ended])
            for (index, _), final in zip(ended, finals):
                info_set(result, index, "final_observation", final)
        return result._replace(observations=observations)

    def _check_final(self, ended: list[tuple[int, Any]]) -> None:
        """Raise ``TypeError`` when a terminal observation of ``ended`` (``(index,
        final_observation)`` pairs) is not one of the inner VecEnv's observations (an AutoReset
        inside a sub-env's observation wrappers leaves it in the space below them)."""
        inner = self.venv.observation_space
        check = observation_checker(inner)
        for index, final in ended:
            reason = check(final)
            if reason is not None:
                raise TypeError(
                    f"{type(self).__name__}: infos[{index}]['final_observation'] does not fit "
                    f"{inner!r}: {reason}. A sub-env whose AutoReset sits inside wrappers that "
                    "change observations leaves it in the space below them: put AutoReset "
                    "outermost (make_vec(..., wrappers=[..., sekai.AutoReset]))."
                )


class VecRewardWrapper(VecResultWrapper):
    """Transforms every ``(num_envs,)`` reward array with ``reward(rewards)`` (step paths);
    a result of another shape raises ``ValueError``. The sub-envs a step did not step (frozen
    ones, without autoreset; those left out by a step that raised) keep reward 0, as a reward
    wrapper inside each sub-env leaves them."""

    _step_reads_live = True

    @abc.abstractmethod
    def reward(self, rewards: NDArray[np.float64]) -> Any:
        """Return the transformed rewards (converted to a float64 array; over a JAX or torch
        kernel env, which hands out its rewards on its device, to its float dtype there)."""

    def _transformed(self, rewards: Any) -> Any:
        """``reward(rewards)`` converted as ``reward()`` says: on the host, or on the device
        the rewards came from."""
        out = self.reward(rewards)
        backend = None if isinstance(rewards, np.ndarray) else _device_backend(self.venv)
        if backend is None:
            return np.asarray(out, dtype=np.float64)
        if not backend.is_device_array(out):
            return backend.convert(np.asarray(out, dtype=np.float64))
        if out.dtype != backend.float_dtype:  # a comparison's bools, say, as the host's floats
            out = backend.xp.astype(out, backend.float_dtype)
        return out

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        rewards = self._transformed(result.rewards)
        if rewards.shape != result.rewards.shape:
            raise ValueError(
                f"{type(self).__name__}.reward() must return one reward per sub-env, shape "
                f"{tuple(result.rewards.shape)}, got shape {tuple(rewards.shape)}."
            )
        if live is not None:
            rewards = self._stepped_only(rewards, live)
        return result._replace(rewards=rewards)

    def _rewrite_partial(self, partial: PartialStep) -> PartialStep:
        rewards = self._transformed(partial.rewards)  # a failed step's record is on the host
        return dataclasses.replace(partial, rewards=self._stepped_only(rewards, partial.stepped))

    def _stepped_only(self, rewards: Any, stepped: NDArray[np.bool_]) -> Any:
        """``rewards`` with 0 for the sub-envs not ``stepped`` (on the device they are on)."""
        backend = None if isinstance(rewards, np.ndarray) else _device_backend(self.venv)
        if backend is None:
            return np.where(stepped, rewards, 0.0)
        xp = backend.xp
        return xp.where(backend.convert(stepped), rewards, xp.zeros_like(rewards))


class VecActionWrapper(VecResultWrapper):
    """Maps every batch of actions with ``action(actions)`` before the inner VecEnv sees it."""

    @abc.abstractmethod
    def action(self, actions: Any) -> Any:
        """Return the batch of actions to send to the inner VecEnv."""

    def reverse_action(self, actions: Any) -> Any:
        """Map a batch of inner-env actions back to this wrapper's action space."""
        raise NotImplementedError(_NO_REVERSE_ACTION.format(cls=type(self).__name__))

    def _step_actions(self, actions: Any) -> Any:
        return self.action(actions)


def _host_copy(backend: KernelBackend) -> Callable[[Any], Any]:
    """A device array's host copy; anything else (a transform that returns NumPy) as it is."""
    return lambda value: backend.to_numpy(value) if backend.is_device_array(value) else value
