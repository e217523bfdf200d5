"""NativeVecEnv: vector envs that advance every sub-env at once with array operations."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np
from numpy.typing import NDArray

from sekai._args import IntLike
from sekai.core._rng import SeededMixin
from sekai.spaces import Space
from sekai.vector._contract.batching import copy_batch, put_rows
from sekai.vector._contract.seeding import (
    check_native_seed,
    draw_native_seed,
    options_entry_noted,
    refuse_rng_per_sub_env,
    vector_options,
)
from sekai.vector._contract.subenv import call_attribute
from sekai.vector._space_attributes import SPACE_NAMES, SubEnvSpaces
from sekai.vector._time_limit import TimeLimitAttribute, check_max_episode_steps
from sekai.vector.infos import ArrayInfos, split_value
from sekai.vector.result import VecResetResult, VecStepResult
from sekai.vector.vec_env import VecEnv

__all__ = ["NativeVecEnv", "shared"]

M = TypeVar("M")

_SHARED = "_sekai_shared"


class _SharedProperty(property):
    """A property marked with ``@shared``."""

    _sekai_shared = True


def shared(member: M) -> M:
    """Mark a method or property of a native vector env as the same for every sub-env.

    ``get_attr`` and ``call`` then give every sub-env the whole value, even when it is an
    array whose length happens to equal ``num_envs``. Put it outermost, above ``@property``.

    Example:
        >>> class ScheduledDrift(DriftVecEnv):
        ...     @shared
        ...     def push_schedule(self):
        ...         return np.array([1, 1, 0, 0])
        >>> ScheduledDrift(4).call("push_schedule")[0]
        array([1, 1, 0, 0])
    """
    if isinstance(member, property) and not isinstance(member, _SharedProperty):
        return _SharedProperty(member.fget, member.fset, member.fdel, member.__doc__)  # type: ignore[return-value]
    try:
        setattr(member, _SHARED, True)
    except (AttributeError, TypeError) as exc:
        raise TypeError(
            f"@shared applies to methods and properties, got {type(member).__name__}."
        ) from exc
    return member


def _is_shared(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return bool(getattr(klass.__dict__[name], _SHARED, False))
    return False


def _refuse_infos(env: NativeVecEnv, hook: str, infos: Any) -> NoReturn:
    raise TypeError(
        f"{type(env).__name__}.{hook}() returned infos of type {type(infos).__name__}; it must "
        "return a dict of info arrays with a leading num_envs axis ({} when there is nothing "
        "to report)."
    )


class NativeVecEnv(SubEnvSpaces, TimeLimitAttribute, SeededMixin, VecEnv):
    """Base class of vector envs that simulate every sub-env at once with array operations.

    Pass ``num_envs`` and the single-env spaces to ``__init__`` and implement the hooks
    ``_reset_envs(indices, options)``, ``_observe()`` and ``_step(actions)`` (and optionally
    ``_reset_infos(indices)``, ``_check_reset_options(index, options)`` and
    ``_step_errors(actions)``). The base class does the rest: seeding (one generator,
    ``self.rng``), a sub-env that fails to step (the others step, then its error is raised),
    per-env options (when some sub-envs' options are invalid, the others are reset and the
    first error is raised, as on every backend; when all are, nothing is seeded either),
    ResetRequired before the first reset, action checks, same-step autoreset with
    ``final_observation`` / ``final_info`` / ``reset_info`` (or, with ``autoreset=False``,
    frozen sub-envs, listed in ``self.frozen``), splitting info arrays into one dict per
    sub-env, batched spaces, closing, and the time limit ``max_episode_steps`` with
    ``infos[i]["elapsed_steps"]``.

    Return new arrays from ``_observe()`` and ``_step()``: they are handed to the caller as
    they are. What the hooks return is checked cheaply (the observation batch's shapes and
    dtype kinds, the shapes of rewards and flags, infos being a dict), so that a bug in a
    subclass raises naming the hook instead of handing out a wrong batch.

    Args:
        num_envs: number of sub-envs.
        observation_space: the observation space of one sub-env.
        action_space: the action space of one sub-env.
        autoreset: reset finished sub-envs within the same step (default); with False they
            freeze until the next reset.
        max_episode_steps: truncate every sub-env's episode after this many steps.
    """

    def __init__(
        self,
        num_envs: IntLike,
        observation_space: Space[Any],
        action_space: Space[Any],
        *,
        autoreset: bool = True,
        max_episode_steps: IntLike | None = None,
    ) -> None:
        super().__init__(num_envs, observation_space, action_space, autoreset=autoreset)
        self._max_episode_steps = check_max_episode_steps(max_episode_steps)
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._flag_shape = (self.num_envs,)
        self._started = np.zeros(self.num_envs, dtype=bool)  # sub-envs that began an episode
        self._rng: np.random.Generator | None = None
        self._rng_seed: int | None = None
        self._last_actions: NDArray[Any] | None = None
        self._final_observations: Any = None
        self._final_terminated = np.zeros(self.num_envs, dtype=bool)
        self._final_truncated = np.zeros(self.num_envs, dtype=bool)

    # -- the hooks ---------------------------------------------------------------------------

    @abc.abstractmethod
    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        """(Re)initialise the sub-envs in ``indices``, with one options dict (or None) each."""

    @abc.abstractmethod
    def _observe(self) -> Any:
        """The batched observation of all sub-envs (a new array, not a view of the state)."""

    @abc.abstractmethod
    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        """Advance every sub-env: ``(rewards, terminated, truncated, infos)``.

        The first three have shape ``(num_envs,)``; ``infos`` is a dict of arrays with a
        leading ``num_envs`` axis (1-D arrays become Python scalars in each sub-env's dict).
        """

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        """Info arrays (leading axis ``len(indices)``) for the sub-envs just reset; default none."""
        return {}

    def _step_errors(self, actions: Any) -> dict[int, BaseException]:
        """The errors that sub-envs raise when stepped with ``actions`` (a hook; default none):
        ``{index: exception}``, found before any sub-env advances. Sub-envs already frozen
        need no entry. ``step()`` then steps the others, the failed ones held back as frozen
        (``_step`` sees them in ``self.frozen`` and must leave them as they are, also with
        autoreset), and raises the lowest one's error (core.md §14 rule 9). An error about
        the whole batch is raised here instead, before anything changes."""
        return {}

    # -- reset and step ----------------------------------------------------------------------

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._check_open()
        n = self.num_envs
        # The seed is checked before the sub-envs' options, as on every backend, but drawn
        # from only after them: a call refused for all of them seeds nothing (no draw from
        # the generator, no reseeding, no seed recorded), as the sub-envs of another backend
        # each refuse their options before seeding; with some valid, those are reset.
        per_env_options = vector_options(options, n)
        checked = check_native_seed(seed, n)
        failures = {} if options is None else self._option_failures(per_env_options)
        seeding = None if len(failures) == n else draw_native_seed(checked, n, lambda: self.rng)
        self._begin_reset()
        if seeding is not None:
            self._record_seeds(seeding[1])
            self._set_rng(seeding[0])
        if failures:
            self._reset_all_but(failures, per_env_options, options)
        indices = np.arange(n)
        self._reset_envs(indices, per_env_options)
        self._elapsed[:] = 0
        self._started[:] = True
        self._final_observations = None
        observations = self._observation_tools().checked_cast(self._observe())
        infos = ArrayInfos(n, self._reset_arrays(indices))
        self._reset_done()
        return VecResetResult(observations, infos)  # type: ignore[arg-type]

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        """Raise if sub-env ``index`` cannot be reset with ``options`` (a hook; default: any
        options are accepted). Checked for every sub-env before any is reset."""

    def _option_failures(
        self, options: Sequence[dict[str, Any] | None]
    ) -> dict[int, BaseException]:
        failures: dict[int, BaseException] = {}
        for index, option in enumerate(options):
            try:
                self._check_reset_options(index, option)
            except Exception as exc:
                failures[index] = exc
        return failures

    def _reset_all_but(
        self,
        failures: dict[int, BaseException],
        options: Sequence[dict[str, Any] | None],
        given: Any,
    ) -> None:
        """Reset the sub-envs whose options are valid, then raise the first error (lowest
        index), noting the entry of a list of options (``given``) it came from: every backend
        leaves its sub-envs in this state (core.md §14 rule 9)."""
        indices = np.array([i for i in range(self.num_envs) if i not in failures], np.intp)
        if len(indices):
            self._reset_envs(indices, [options[i] for i in indices.tolist()])
            self._elapsed[indices] = 0
            self._started[indices] = True
            self._final_terminated[indices] = False  # their episodes' ends are gone
            self._final_truncated[indices] = False
        first = min(failures)
        raise options_entry_noted(failures[first], given, first)

    @property
    def _all_started(self) -> bool:
        """Every sub-env has begun an episode (a failed reset may have reset only some)."""
        return bool(self._started.all())

    def step(self, actions: Any) -> VecStepResult[Any]:
        batch = self._checked_actions(actions)
        n = self.num_envs
        frozen: NDArray[np.bool_] | None = None
        if self._may_freeze is not None:
            frozen = self._frozen.copy() if self._frozen.any() else None
            batch = self._remember_actions(batch, frozen)
        failures = self._step_errors(batch)
        if failures:
            self._step_all_but(failures, batch, frozen)
        rewards, terminated, truncated, info_arrays = self._step(batch)
        rewards = np.asarray(rewards, dtype=np.float64)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        shape = self._flag_shape
        if rewards.shape != shape or terminated.shape != shape or truncated.shape != shape:
            self._refuse_flags(rewards, terminated, truncated)
        if type(info_arrays) is not dict and not isinstance(info_arrays, Mapping):
            _refuse_infos(self, "_step", info_arrays)
        elapsed = None
        if self._max_episode_steps is not None:
            if frozen is None:
                self._elapsed += 1
            else:
                self._elapsed += ~frozen
            truncated = truncated | (self._elapsed >= self._max_episode_steps)
            elapsed = self._elapsed.copy()
        if frozen is not None:
            rewards = np.where(frozen, 0.0, rewards)
            terminated = np.where(frozen, self._final_terminated, terminated)
            truncated = np.where(frozen, self._final_truncated, truncated)
        cast = self._observation_tools().checked_cast
        observations = cast(self._observe())
        dones = terminated | truncated
        if frozen is not None:
            observations = put_rows(
                self.observation_space, observations, self._final_observations, frozen
            )
            dones &= ~frozen  # the sub-envs that finished in this step
        finished = dones.nonzero()[0]
        infos: ArrayInfos
        if not len(finished):
            infos = ArrayInfos(n, info_arrays, elapsed=elapsed, skip=frozen)
        elif self.autoreset:
            infos = self._reset_finished(observations, finished, info_arrays, elapsed)
            observations = cast(self._observe())
        else:
            self._freeze(observations, dones, terminated, truncated)
            infos = ArrayInfos(n, info_arrays, elapsed=elapsed, skip=frozen)
        if self._may_freeze is not None:  # every native sub-env may freeze
            np.logical_or(terminated, truncated, out=self._frozen)
        return VecStepResult(observations, rewards, terminated, truncated, infos)  # type: ignore[arg-type]

    def _step_all_but(
        self,
        failures: dict[int, BaseException],
        batch: Any,
        frozen: NDArray[np.bool_] | None,
    ) -> NoReturn:
        """Step the sub-envs that did not fail (``_step_errors``), the failed ones held back as
        frozen, with their time limits, autoresets or freezing; then raise the first error
        (lowest index): every backend leaves its sub-envs in this state (core.md §14 rule 9)."""
        held = np.zeros(self.num_envs, dtype=bool)
        held[list(failures)] = True
        before = self._frozen.copy()
        self._frozen |= held
        try:
            rewards, terminated, truncated, _ = self._step(batch)
        finally:
            self._frozen[:] = before
        stepped = ~held if frozen is None else ~(held | frozen)
        terminated = np.asarray(terminated, dtype=bool) & stepped
        truncated = np.asarray(truncated, dtype=bool) & stepped
        if self._max_episode_steps is not None:
            self._elapsed += stepped
            truncated |= stepped & (self._elapsed >= self._max_episode_steps)
        ended = terminated | truncated
        if ended.any():
            if self.autoreset:
                finished = ended.nonzero()[0]
                self._reset_envs(finished, [None] * len(finished))
                self._elapsed[finished] = 0
            else:
                observations = self._observation_tools().checked_cast(self._observe())
                self._freeze(observations, ended, terminated, truncated)
        rewards = np.asarray(rewards, dtype=np.float64)
        done = [(int(i), rewards[i], terminated[i], truncated[i]) for i in stepped.nonzero()[0]]
        raise self._failed_step(failures[min(failures)], done)

    def _refuse_flags(
        self, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray
    ) -> None:
        raise ValueError(
            f"{type(self).__name__}._step() returned rewards of shape {rewards.shape}, "
            f"terminated {terminated.shape} and truncated {truncated.shape}; each must have "
            f"shape (num_envs,) = {self._flag_shape}."
        )

    def _reset_arrays(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        """``_reset_infos(indices)``, checked to be a mapping."""
        arrays = self._reset_infos(indices)
        if type(arrays) is not dict and not isinstance(arrays, Mapping):
            _refuse_infos(self, "_reset_infos", arrays)
        return arrays

    def _remember_actions(self, batch: Any, frozen: NDArray[np.bool_] | None) -> Any:
        """Give frozen sub-envs their last action again (a numeric array batch only)."""
        if not isinstance(batch, np.ndarray) or batch.dtype.kind not in "biuf":
            return batch
        last = self._last_actions
        if frozen is not None and last is not None and last.shape == batch.shape:
            batch = batch.copy()
            batch[frozen] = last[frozen]
        else:
            batch = batch.copy()  # the caller may reuse its array
        self._last_actions = batch
        return batch

    def _reset_finished(
        self,
        observations: Any,
        indices: NDArray[np.intp],
        info_arrays: dict[str, Any],
        elapsed: NDArray[np.int64] | None,
    ) -> ArrayInfos:
        """Autoreset: reset the sub-envs that finished; their infos follow the convention."""
        self._reset_envs(indices, [None] * len(indices))
        self._elapsed[indices] = 0
        infos = ArrayInfos(
            self.num_envs,
            info_arrays,
            elapsed=elapsed,
            reset=indices,
            final_observations=observations,
            observation_space=self.observation_space,
            reset_arrays=self._reset_arrays(indices),
        )
        return infos

    def _freeze(
        self,
        observations: Any,
        newly: NDArray[np.bool_],
        terminated: NDArray[np.bool_],
        truncated: NDArray[np.bool_],
    ) -> None:
        space = self.observation_space
        if self._final_observations is None:
            self._final_observations = copy_batch(space, observations)
        else:  # arrays are updated in place; other parts come back as new containers
            self._final_observations = put_rows(
                space, self._final_observations, observations, newly
            )
        self._final_terminated[newly] = terminated[newly]
        self._final_truncated[newly] = truncated[newly]

    # -- attributes --------------------------------------------------------------------------

    def _per_sub_env(self, name: str, value: Any) -> list[Any]:
        if _is_shared(type(self), name):
            return [value] * self.num_envs
        return split_value(value, self.num_envs)

    def get_attr(self, name: str) -> list[Any]:
        """Read attribute ``name`` of this object, split into one value per sub-env.

        An array with a leading ``num_envs`` axis is split (1-D arrays into Python scalars);
        anything else, and any member marked ``@shared``, is repeated for every sub-env. The
        spaces that ``set_attr`` set are the sub-envs' (``SubEnvSpaces``).
        """
        self._check_open()
        return self._sub_env_spaces(name) or self._per_sub_env(name, getattr(self, name))

    def set_attr(self, name: str, values: Any) -> None:
        """Change an existing attribute: a list of ``num_envs`` values is stored as one array
        (an object array of one value per sub-env stays one), any other value (a list of
        another length included) as it is. ``observation_space`` and ``action_space`` change
        the sub-envs' attribute, as on a SyncVecEnv, not this env's own spaces, which the
        actions are checked against (``SubEnvSpaces``).

        Raises:
            AttributeError: this object has no attribute ``name`` (a new attribute would not
                change the simulation).
            TypeError: a list or tuple for ``rng``: one generator serves every sub-env; a value
                for a space that is not a sekai.Space.
        """
        self._check_open()
        refuse_rng_per_sub_env(self, name, values)
        try:
            getattr(self, name)
        except AttributeError as error:  # chained: a property says why it is missing
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}; a native vector "
                "env's set_attr only changes existing attributes (a new one would not change "
                "the simulation)."
            ) from error
        # The time limit is one value for every sub-env: its setter takes the list itself (one
        # array of it would read as one value for all, as an array given by the user does).
        per_sub_env = isinstance(values, list) and len(values) == self.num_envs
        if per_sub_env and name != "max_episode_steps" and name not in SPACE_NAMES:
            values = self._as_rows(name, values, getattr(self, name))
        self._set_attribute(name, values)

    def _as_rows(self, name: str, values: list[Any], current: Any) -> Any:
        """One array of the per-sub-env ``values``, in ``current``'s dtype where it fits (a
        property with a setter gets ragged values as the list, and checks them itself)."""
        where = f"{type(self).__name__}.set_attr({name!r}, values)"
        checked = hasattr(getattr(type(self), name, None), "__set__")  # a property's setter
        if isinstance(current, np.ndarray) and current.dtype == object and current.ndim == 1:
            # One object per sub-env already (as stack_infos keeps ragged values): stays so.
            column = np.empty(len(values), dtype=object)
            for index, value in enumerate(values):
                column[index] = value
            return column
        try:
            array = np.array(values)
        except ValueError as error:  # NumPy refuses ragged rows
            if checked:
                return values  # its setter names the problem
            raise ValueError(
                f"{where}: the {self.num_envs} values must have one shape to be stored as one "
                f"array, got {[_shape(value) for value in values]}."
            ) from error
        if not checked and _is_numeric(current) and array.dtype.kind not in "biuf":
            # The env computes with it: a string or object array would only fail at step().
            raise TypeError(
                f"{where}: {name} holds numbers, got values of dtype {array.dtype} "
                f"({values[:3]!r}{'...' if len(values) > 3 else ''})."
            )
        if (
            isinstance(current, np.ndarray)
            and current.shape == array.shape
            and np.can_cast(array.dtype, current.dtype, "same_kind")
        ):
            array = array.astype(current.dtype)
        return array

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        """Call method ``name`` of this object (or read it when it is not callable) and split
        the result like ``get_attr``."""
        self._check_open()
        called = self._sub_env_call(name, args, kwargs)
        if called is not None:
            return called
        value = call_attribute(name, getattr(self, name), args, kwargs)
        return self._per_sub_env(name, value)


def _is_numeric(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def _shape(value: Any) -> Any:
    """``np.shape(value)``, or what a ragged value is (NumPy cannot give it a shape)."""
    try:
        return np.shape(value)
    except ValueError:
        return f"a ragged {type(value).__name__}"
