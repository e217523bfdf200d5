"""VecEnv: the abstract base of every vector env and the parent-side half of the contract."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from sekai._args import IntLike, check_num_envs
from sekai._slots import Slotted
from sekai.core._async import install_async_routes
from sekai.core._autoreset import reset_inside
from sekai.core._render_habit import NoVecRender
from sekai.error import AsyncCallPending, InvalidAction, ResetRequired, VecEnvClosed
from sekai.spaces import Space, batch_space
from sekai.spaces.space import check_space
from sekai.vector._async_calls import AsyncCalls, one_async_call
from sekai.vector._contract.actions import ActionChecker
from sekai.vector._contract.batching import caster, checked_caster, stacker
from sekai.vector._contract.checks import batch_flags, batch_rewards
from sekai.vector._contract.partial import PartialStep, Stepped
from sekai.vector._contract.seeding import vector_options, vector_seeds
from sekai.vector.result import VecResetResult, VecStepResult, info_at
from sekai.vector.spawnable import per_env_values

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec

__all__ = ["VecEnv"]


# __enter__ returns the subclass (typing.Self is 3.11+, and hints must resolve at runtime).
_VecEnvT = TypeVar("_VecEnvT", bound="VecEnv")


class _BatchCache(Slotted):
    """``batch_space(single, n)``, rebuilt only when the single space object changes."""

    __slots__ = ("batch", "single")

    def __init__(self) -> None:
        self.single: Space[Any] | None = None
        self.batch: Space[Any] | None = None

    def get(self, single: Space[Any], n: int) -> Space[Any]:
        if self.single is not single or self.batch is None:
            self.batch = batch_space(single, n)
            self.single = single
        return self.batch


class _SpaceTools:
    """The observation stacker and casters of one observation space (rebuilt when it changes):
    ``checked_cast`` checks a batch that ``owner`` built as a whole (a native env's
    ``_observe()``) before casting it."""

    __slots__ = ("cast", "checked_cast", "num_envs", "owner", "space", "stack")

    def __init__(self, space: Space[Any], num_envs: int, owner: str) -> None:
        self.space = space
        self.num_envs = num_envs
        self.owner = owner
        self.stack = stacker(space)
        self.cast = caster(space)
        self.checked_cast = checked_caster(space, num_envs, f"{owner}._observe")

    def __reduce__(self) -> tuple[Any, ...]:
        # The stacker and casters are closures (not picklable): rebuilt from the space.
        return (_SpaceTools, (self.space, self.num_envs, self.owner))


_RESET_FAILED = (
    "The last reset() raised before every sub-env was reset: call reset() again before step()."
)


class VecEnv(AsyncCalls, abc.ABC):
    """A batch of ``num_envs`` environments stepped together.

    Subclasses implement ``reset``, ``step``, ``get_attr``, ``set_attr`` and ``call``, and build
    them from the protected helpers here, which hold the parent-side rules every backend shares
    (core.md §14): ``_reset_plan`` / ``_reset_done`` (seeds, options), ``_checked_actions`` /
    ``_per_env_actions`` (VecEnvClosed, ResetRequired, action checks), ``_stack`` / ``_cast``
    (observation dtypes), ``_step_result`` / ``_failed_step`` (result dtypes, frozen
    sub-envs, rule 9) and ``_begin_async`` (AsyncCallPending). The per-sub-env rules live in
    ``sekai.vector._contract.subenv``.

    Attributes:
        spec: the registry entry when built by ``make_vec()``, else None.
        metadata: the env's metadata (native envs: the class attribute; others: sub-env 0's).
    """

    metadata: dict[str, Any] = {}  # noqa: RUF012 - read-only default; backends assign their own
    spec: EnvSpec | None = None
    # gymnasium's vec.render(): an AttributeError naming VecRecordFrames. Runtime only, so that
    # type checkers flag vec.render() instead of typing it Any.
    if not TYPE_CHECKING:
        render = NoVecRender()
    _recorded_seeds: list[int | None] | None = None
    """Each sub-env's recorded seed, as an env records its own (core.md §3): the seed the
    backend last reseeded it with when it derived the seeds (``_reset_plan``, native seeding),
    kept by resets that do not reseed it (None: never reseeded); None before the first reset.
    Set through ``_record_seeds``."""
    _self_resetting: NDArray[np.bool_] | None = None
    """Without autoreset, the sub-envs with an AutoReset inside (None: none): they freeze only
    when their episode ended on a step that AutoReset did not reset (``reset_inside``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        install_async_routes(cls, guard=one_async_call)

    def __init__(
        self,
        num_envs: IntLike,
        observation_space: Space[Any],
        action_space: Space[Any],
        *,
        autoreset: bool = True,
    ) -> None:
        if not isinstance(observation_space, Space) or not isinstance(action_space, Space):
            bad = observation_space if not isinstance(observation_space, Space) else action_space
            raise TypeError(f"{type(self).__name__} needs sekai spaces, got {type(bad).__name__}.")
        if not isinstance(autoreset, (bool, np.bool_)):
            raise TypeError(f"autoreset must be a bool, got {type(autoreset).__name__}.")
        self._num_envs = check_num_envs(num_envs)
        self._observation_space = observation_space
        self._action_space = action_space
        self._autoreset = bool(autoreset)
        self._frozen = np.zeros(self._num_envs, dtype=bool)
        # Which sub-envs freeze whenever their episode ends (None: none, autoreset is on); the
        # others freeze as ``_self_resetting`` says.
        self._may_freeze: NDArray[np.bool_] | None = (
            None if self._autoreset else np.ones(self._num_envs, dtype=bool)
        )
        self._has_reset = False
        self._resetting = False  # a reset() began and has not finished (it raised)
        # The last step that raised after some sub-envs stepped (rule 9): its error and what
        # the others did, for the wrappers (``_partial_step``).
        self._failure: tuple[BaseException, PartialStep] | None = None
        self._closed = False
        self._async_pending = False
        self._batch_obs = _BatchCache()
        self._batch_act = _BatchCache()
        self._checker: ActionChecker | None = None
        self._subset_checkers: dict[int, ActionChecker] = {}
        self._tools: _SpaceTools | None = None

    # -- spaces ----------------------------------------------------------------------------

    @property
    def num_envs(self) -> int:
        """The number of sub-envs."""
        return self._num_envs

    @property
    def observation_space(self) -> Space[Any]:
        """The observation space of one sub-env."""
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space: Space[Any]) -> None:
        self._observation_space = check_space(type(self).__name__, "observation_space", space)

    @property
    def action_space(self) -> Space[Any]:
        """The action space of one sub-env."""
        return self._action_space

    @action_space.setter
    def action_space(self, space: Space[Any]) -> None:
        self._action_space = check_space(type(self).__name__, "action_space", space)

    @property
    def batch_observation_space(self) -> Space[Any]:
        """The space of a batch of observations (``batch_space(observation_space, num_envs)``)."""
        return self._batch_obs.get(self.observation_space, self.num_envs)

    @property
    def batch_action_space(self) -> Space[Any]:
        """The space of a batch of actions (``batch_space(action_space, num_envs)``)."""
        return self._batch_act.get(self.action_space, self.num_envs)

    # -- state -----------------------------------------------------------------------------

    @property
    def autoreset(self) -> bool:
        """Whether a finished sub-env is reset within the same ``step()``."""
        return self._autoreset

    @property
    def frozen(self) -> NDArray[np.bool_]:
        """Sub-envs that finished with ``autoreset=False`` and wait for ``reset()`` (a copy)."""
        frozen: NDArray[np.bool_] = self._frozen.copy()  # Any in NumPy's stubs before 3.12
        return frozen

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has been called."""
        return self._closed

    @property
    def unwrapped(self) -> VecEnv:
        """The innermost VecEnv: ``self`` (vector wrappers return the one they wrap)."""
        return self

    # -- the API ---------------------------------------------------------------------------

    @abc.abstractmethod
    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        """Reset every sub-env.

        Args:
            seed: an int (independent child seeds are spawned for the sub-envs), a list of
                ``num_envs`` seeds (``None`` entries continue their stream) or None.
            options: one dict for every sub-env or a list with one dict (or None) per sub-env.
        """

    @abc.abstractmethod
    def step(self, actions: Any) -> VecStepResult[Any]:
        """Step every sub-env with its action from the batch (or list) ``actions``."""

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        """Coroutine version of ``reset()`` (by default it runs ``reset()``)."""
        self._begin_async()
        try:
            return self.reset(seed=seed, options=options)
        finally:
            self._end_async()

    async def async_step(self, actions: Any) -> VecStepResult[Any]:
        """Coroutine version of ``step()`` (by default it runs ``step()``)."""
        self._begin_async()
        try:
            return self.step(actions)
        finally:
            self._end_async()

    @abc.abstractmethod
    def get_attr(self, name: str) -> list[Any]:
        """Read ``name`` from every sub-env (through its wrapper stack)."""

    @abc.abstractmethod
    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name`` on every sub-env: a list of ``num_envs`` values is one per sub-env,
        anything else is one value for all (pass ``[v] * num_envs`` to give each the list v),
        a ``Spawnable`` one ``spawn()`` per sub-env, as ``make_vec`` does; one numpy Generator
        for several sub-envs is refused (ValueError): pass one per sub-env."""

    @abc.abstractmethod
    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        """Call method ``name`` on every sub-env (or read it when it is not callable); ``name``
        is positional-only, so a keyword argument of any name reaches the method."""

    # -- single sub-envs: internal hooks (SB3's ``indices``, ``sekai.compat.to_sb3``) ----------
    #
    # ``env_ids`` is a sequence of distinct sub-env indices, or None for every sub-env (what the
    # public methods above do: the backends with sub-env objects implement them through these).

    def _get_attr_at(self, env_ids: Sequence[int] | None, name: str) -> list[Any]:
        """``get_attr(name)`` of the sub-envs ``env_ids`` only, in that order.

        By default every sub-env is read and the values of ``env_ids`` returned; the backends
        with sub-env objects read only those.
        """
        values = self.get_attr(name)
        return values if env_ids is None else [values[i] for i in self._env_id_list(env_ids)]

    def _set_attr_at(self, env_ids: Sequence[int] | None, name: str, values: list[Any]) -> None:
        """Set ``name`` to ``values[i]`` on sub-env ``env_ids[i]`` only (one value each).

        Raises:
            NotImplementedError: this backend's sub-envs cannot be reached one by one.
        """
        raise NotImplementedError(self._not_one_by_one(f"set_attr({name!r})"))

    def _call_at(
        self,
        env_ids: Sequence[int] | None,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> list[Any]:
        """``call(name, *args, **kwargs)`` on the sub-envs ``env_ids`` only, results in that
        order.

        Raises:
            NotImplementedError: this backend's sub-envs cannot be reached one by one.
        """
        raise NotImplementedError(self._not_one_by_one(f"call({name!r})"))

    def _not_one_by_one(self, what: str) -> str:
        return (
            f"{type(self).__name__} cannot run {what} on some of its sub-envs only: its "
            "get_attr, set_attr and call reach all of them at once, and acting on all would touch "
            "the others. SyncVecEnv, AsyncVecEnv, ProcVecEnv and RayVecEnv reach single sub-envs."
        )

    def _env_id_list(self, env_ids: Sequence[int]) -> list[int]:
        """``env_ids`` as a list of ints, checked: distinct sub-env indices.

        Raises:
            TypeError: an index that is not an int.
            ValueError: an index out of range, or one named twice.
        """
        ids: list[int] = []
        for value in env_ids:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"env_ids must hold sub-env indices (ints), got {value!r}.")
            ids.append(int(value))
        n = self.num_envs  # a VecWrapper's is its venv's
        bad = [i for i in ids if not 0 <= i < n]
        if bad:
            raise ValueError(f"env_ids holds {bad[0]}, out of range for {n} sub-envs.")
        if len(set(ids)) != len(ids):
            raise ValueError(f"env_ids names a sub-env twice: {ids}.")
        return ids

    def close(self) -> None:
        """Release the sub-envs and the backend's resources; a second call does nothing.

        If a sub-env's ``close()`` raises, the rest is still released, then the first error
        is raised.

        Raises:
            sekai.AsyncCallPending: an ``async_reset()``/``async_step()`` of this VecEnv is
                still running (await or cancel it first): its sub-envs would close under it.
        """
        if self._closed:
            return
        self._check_no_async_call()
        self._closed = True
        self._close()

    def _close(self) -> None:
        """Backend hook for ``close()`` (runs once); default: nothing to release."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        # pickle, cloudpickle, copy.copy and copy.deepcopy all start here, before a backend's
        # own __getstate__: one check covers every backend and leaves their state alone.
        # A wrapper keeps no flag of its own; the env it wraps checks its own when copied.
        if getattr(self, "_async_pending", False):
            name = type(self).__name__
            raise AsyncCallPending(
                f"{name} cannot be copied or pickled while its async_reset() or async_step() "
                "is running: its sub-envs are in the middle of that call. Await the call "
                "first, then copy or pickle it."
            )
        reduced = super().__reduce_ex__(protocol)
        state = reduced[2] if isinstance(reduced, tuple) and len(reduced) > 2 else None
        if isinstance(state, dict) and state.get("_async_thread"):
            # A copy taken inside a wrapper's async call (a snapshot) is no part of that call.
            state = {key: value for key, value in state.items() if key != "_async_thread"}
            reduced = (*reduced[:2], state, *reduced[3:])
        return reduced

    def __len__(self) -> int:
        return self.num_envs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs})"

    def __enter__(self: _VecEnvT) -> _VecEnvT:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- parent-side rules shared by the backends ------------------------------------------

    def _check_open(self) -> None:
        """Raise VecEnvClosed after ``close()``, and AsyncCallPending for a call from another
        thread while an async call of this VecEnv runs."""
        if self._closed:
            raise VecEnvClosed()
        self._check_no_async_call_elsewhere()

    def _begin_reset(self) -> None:
        """Before dispatching a reset: the VecEnv must be reset again if it fails midway."""
        self._check_open()
        self._has_reset = False
        self._resetting = True

    def _reset_plan(
        self,
        seed: Any,
        options: Any,
        check: Callable[[list[dict[str, Any] | None]], object] | None = None,
    ) -> tuple[list[int | None], list[dict[str, Any] | None]]:
        """Each sub-env's seed and options (core.md §3, rule 5), checked before anything is
        dispatched; then ``_begin_reset()``. ``check`` (a backend that must pickle the options
        to send them) is called with the options before any seed is drawn, and may refuse
        them by raising."""
        self._check_open()
        # Options first: a refused call must not have drawn from a Generator among the seeds.
        per_env_options = vector_options(options, self._num_envs)
        if check is not None:
            check(per_env_options)
        seeds = vector_seeds(seed, self._num_envs)
        self._begin_reset()
        self._record_seeds(seeds)
        return seeds, per_env_options

    def _record_seeds(self, seeds: list[int | None]) -> None:
        """Record the seed each sub-env is reset with; a None entry (its stream continues)
        keeps the sub-env's recorded seed, as ``_set_rng(None)`` keeps an env's."""
        recorded = self._recorded_seeds or [None] * len(seeds)
        self._recorded_seeds = [old if new is None else new for new, old in zip(seeds, recorded)]

    def _reset_done(self) -> None:
        """After every sub-env was reset: unfreeze them all and allow stepping."""
        self._has_reset = True
        self._resetting = False
        self._frozen[:] = False

    def _set_self_resetting(self, resets_itself: NDArray[np.bool_] | list[bool]) -> None:
        """Tell which sub-envs have an AutoReset inside (``SubEnv.resets_itself``): they do not
        freeze on the steps it reset (``reset_inside``)."""
        if self._may_freeze is not None:
            flags = np.asarray(resets_itself, dtype=bool)
            self._may_freeze = ~flags
            self._self_resetting = flags if flags.any() else None

    def _froze(
        self,
        ended: NDArray[np.bool_],
        env_ids: NDArray[np.intp] | None,
        info: Callable[[int], Mapping[str, Any]] | None,
    ) -> NDArray[np.bool_]:
        """Which rows of ``ended`` (rows of the sub-envs ``env_ids``; None: every sub-env) froze
        in their step (autoreset off): all but those an AutoReset inside the sub-env reset,
        which ``reset_inside`` tells from the row's info, ``info(row)`` (None: the infos are
        lost with a step that raised; such a row is taken as reset)."""
        may_freeze, own = self._may_freeze, self._self_resetting
        assert may_freeze is not None
        if env_ids is not None:
            may_freeze = may_freeze[env_ids]
        frozen = ended & may_freeze
        if own is not None and info is not None:
            rows = ended & (own if env_ids is None else own[env_ids])
            for row in np.flatnonzero(rows).tolist():
                frozen[row] = not reset_inside(True, info(row))
        return frozen

    def _ready_checker(self) -> ActionChecker:
        """Rule 1 (and ``_check_open``) before anything is dispatched; the action checker."""
        self._check_open()
        if not self._has_reset:
            raise ResetRequired(_RESET_FAILED if self._resetting else None)
        return self._action_checker()

    def _action_checker(self) -> ActionChecker:
        """The checker of batches of the current action space (built once per space)."""
        checker = self._checker
        if checker is None or checker.space is not self._action_space:
            checker = self._checker = ActionChecker(self._action_space, self._num_envs)
        return checker

    def _checked_actions(self, actions: Any) -> Any:
        """Rules 1 and 2, before anything is dispatched: the checked batch of actions.

        Raises:
            VecEnvClosed: after ``close()``.
            ResetRequired: before the first ``reset()``.
            ValueError: a batch of the wrong structure or shape.
            sekai.InvalidAction: an invalid value for a sub-env that is not frozen.
        """
        frozen = None if self._may_freeze is None else self._frozen
        return self._ready_checker().check(actions, frozen)

    def _checked_subset(self, actions: Any, env_ids: NDArray[np.intp]) -> tuple[ActionChecker, Any]:
        """Rules 1 and 2 for a batch of actions of the sub-envs ``env_ids`` (``send()``, row
        ``i`` for sub-env ``env_ids[i]``): the checker used and the checked batch.

        Raises:
            sekai.InvalidAction: its ``index`` names the sub-env, ``env_ids[row]``, as for
                ``step()`` (rule 2).
        """
        self._ready_checker()
        count = len(env_ids)
        checker = self._subset_checkers.get(count)
        if checker is None or checker.space is not self._action_space:
            checker = self._subset_checkers[count] = ActionChecker(self._action_space, count)
        frozen = None if self._may_freeze is None else self._frozen[env_ids]
        try:
            return checker, checker.check(actions, frozen)
        except InvalidAction as exc:  # the checker knows rows only
            assert exc.index is not None
            rank = int(env_ids[exc.index])
            raise InvalidAction(exc.action, exc.space, index=rank) from None

    def _per_env_actions(self, actions: Any) -> list[Any]:
        """Rules 1 and 2 like ``_checked_actions()``, then one action per sub-env."""
        frozen = None if self._may_freeze is None else self._frozen
        return self._ready_checker().per_env(actions, frozen)

    def _observation_tools(self) -> _SpaceTools:
        tools = self._tools
        if tools is None or tools.space is not self.observation_space:
            owner = type(self).__name__
            tools = self._tools = _SpaceTools(self.observation_space, self._num_envs, owner)
        return tools

    def _stack(self, observations: list[Any]) -> Any:
        """Batch per-env observations in the observation space's dtype (rule 3)."""
        return self._observation_tools().stack(observations)

    def _cast(self, observations: Any) -> Any:
        """A batch with the observation space's dtypes (rule 3)."""
        return self._observation_tools().cast(observations)

    def _step_result(
        self, observations: Any, rewards: Any, terminated: Any, truncated: Any, infos: Any
    ) -> VecStepResult[Any]:
        """Build the result with the contract's dtypes and record which sub-envs froze.

        Raises:
            TypeError: a sub-env's reward is not a real number, or a flag not a bool.
        """
        n = self._num_envs
        rewards = batch_rewards(rewards, n)
        terminated = batch_flags("terminated", terminated, n)
        truncated = batch_flags("truncated", truncated, n)
        result = VecStepResult(observations, rewards, terminated, truncated, infos)
        if self._may_freeze is not None:
            ended = terminated | truncated
            self._frozen[:] = self._froze(ended, None, lambda row: info_at(result, row))
        return result

    def _record_subset(
        self,
        env_ids: NDArray[np.intp],
        dones: NDArray[np.bool_],
        result: VecStepResult[Any] | None = None,
    ) -> None:
        """Record which of the sub-envs ``env_ids`` froze in their step (``recv()``; ``result``
        the step's, row ``i`` for sub-env ``env_ids[i]``: its infos tell, see ``_froze``)."""
        if self._may_freeze is not None:
            info = None if result is None else (lambda row: info_at(result, row))
            self._frozen[env_ids] = self._froze(dones, env_ids, info)

    def _failed_step(
        self,
        error: BaseException,
        stepped: Iterable[Stepped],
        info: Callable[[int], Mapping[str, Any]] | None = None,
    ) -> BaseException:
        """Record the step of the sub-envs that stepped, ``(index, reward, terminated,
        truncated)``, when the batch failed elsewhere (rule 9); ``error``, to raise. ``info``
        gives the info of a sub-env that stepped, by index, where the backend still has it
        (see ``_froze``)."""
        may_freeze = self._may_freeze
        partial = PartialStep.of(
            self._num_envs, stepped, None if may_freeze is None else self._frozen
        )
        if may_freeze is not None:
            self._frozen |= self._froze(partial.ended, None, info)
        self._failure = (error, partial)
        return error

    def _partial_step(self, error: BaseException) -> PartialStep | None:
        """What the step that raised ``error`` still did (the others stepped, rule 9), or
        None when ``error`` was not raised so."""
        failure = self._failure
        return failure[1] if failure is not None and failure[0] is error else None

    def _per_env_values(self, name: str, values: Any) -> list[Any]:
        """Rule 6 for ``set_attr(name, values)``: a list of exactly ``num_envs`` items is per
        sub-env, anything else is one value for every sub-env: a ``Spawnable``'s ``spawn()``
        each, as ``make_vec`` gives them (so a stateful one is not shared, nor advanced), else
        the value itself; one numpy Generator for several sub-envs (given once or listed for
        each) raises ValueError."""
        return per_env_values(values, self._num_envs, what=f"set_attr({name!r}, ...)")
