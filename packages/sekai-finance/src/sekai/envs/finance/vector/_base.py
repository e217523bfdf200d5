"""Shared machinery of the native finance vector envs (finance.md §11).

A subclass of ``FinanceVecEnv`` names its single env (``single_env``), declares its parameters
with ``param()`` (shared, settable; forwarded to ``self.template``) and ``read_only(reason)``,
lists its per-sub-env state names in ``state_names`` (read-only copies: ``state(slot, doc)``),
allocates that state in ``_allocate_state()`` and implements the ``NativeVecEnv`` hooks.
``SessionVecEnv`` adds the step clock, reset options and observation cache of the session envs.
The template is a single env built from the same keyword arguments: it validates them exactly
as the single env does, supplies the spaces, and holds every parameter, read every step.

Rules implemented here:

* ``get_attr(parameter)`` repeats the one value for every sub-env (arrays are never split);
  ``get_attr(state)`` gives one value per sub-env.
* ``set_attr(parameter, value)`` takes one value, or a list of ``num_envs`` equal values
  (``np.array_equal``); different values raise ``ValueError`` (one shared parameter: use
  ``vectorization_mode='sync'``). Read-only parameters raise ``AttributeError``
  "``Cls.p`` is read-only: <reason>"; state raises ``AttributeError`` too.
* ``sampler``: one lane per sub-env holding ``template.sampler.spawn()``.
* ``step_rows()``: the decision row of every sub-env, clamped so a frozen sub-env never reads
  past its window; ``keep_frozen(new, old)`` leaves frozen sub-envs' state unchanged.
* A sub-env that could not start an episode (its autoreset raised) or whose simulation failed
  waits for ``reset()`` (``await_reset``): every later ``step()`` raises ``ResetRequired`` for
  it once the others stepped, as a ``SyncVecEnv`` sub-env whose ``reset()`` raised does;
  ``_step`` sees it in ``frozen_mask()`` and leaves it as it is (core.md §14 rule 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from sekai.core.env import Env
from sekai.envs.finance._common import EPISODE_OVER, parse_options
from sekai.envs.finance._session import ObservationCache, session_options
from sekai.error import ResetRequired
from sekai.finance.sampling import EpisodeSampler
from sekai.vector.native import NativeVecEnv

__all__ = [
    "HISTORY",
    "METADATA",
    "SHAPE",
    "TRANSACTION_COST",
    "FinanceVecEnv",
    "SessionVecEnv",
    "param",
    "read_only",
    "state",
]

SHAPE = "it fixes the shapes of the env's arrays; build a new env"
HISTORY = "it is loaded when the env is built"
TRANSACTION_COST = "it became `cost_model` when the env was built; set `cost_model` instead"
METADATA = "it describes the env class"
_SHARED_VALUE = (
    "{name} is one shared parameter of {cls}: set_attr takes one value (or a list repeating one "
    "value) for all sub-envs. For different values per sub-env use vectorization_mode='sync'."
)
_STATE = (
    "{cls}.{name} is per-sub-env state of the simulation and cannot be set; reset() the env or "
    "change its parameters instead."
)


class param:
    """A shared parameter of a native finance env, read from and written to ``self.template``."""

    def __init__(self, doc: str = "") -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.template, self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.template, self.name, value)


class read_only(param):
    """A parameter read from the template that cannot be set on the native env."""

    def __init__(self, reason: str, doc: str = "") -> None:
        super().__init__(doc)
        self.reason = reason

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if self.name == "metadata":
            owner = objtype if obj is None else type(obj)
            return owner.single_env.metadata  # type: ignore[union-attr]
        return super().__get__(obj, objtype)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{type(obj).__name__}.{self.name} is read-only: {self.reason}.")


def state(slot: str, doc: str) -> Any:
    """A read-only property giving a copy of the state array ``self.<slot>`` (one row a sub-env).

    A copy, so a caller's array never changes under later steps; setting it raises
    ``AttributeError`` like any property without a setter.
    """

    def get(self: Any) -> np.ndarray:
        return np.array(getattr(self, slot), copy=True)

    return property(get, doc=doc)


class FinanceVecEnv(NativeVecEnv):
    """Base of the native finance envs: template parameters, attribute rules, sampler lanes.

    Args:
        num_envs: number of sub-envs.
        autoreset: reset finished sub-envs within the same step (default); False freezes them.
        max_episode_steps: truncate every sub-env after this many steps.
        **kwargs: the single env's keyword arguments (validated by building the template).
    """

    single_env: ClassVar[type[Env[Any, Any]]]
    state_names: ClassVar[tuple[str, ...]] = ()
    metadata = read_only(METADATA)
    _awaiting: NDArray[np.bool_] | None = None  # sub-envs waiting for reset(); None: none

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
        **kwargs: Any,
    ) -> None:
        template = self.single_env(**kwargs)
        self.template = template
        super().__init__(
            num_envs,
            template.observation_space,
            template.action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        template_sampler = getattr(template, "sampler", None)
        self._lanes: list[EpisodeSampler] = (
            self._per_env_values("sampler", template_sampler)
            if isinstance(template_sampler, EpisodeSampler)
            else []
        )
        self._allocate_state()

    def _allocate_state(self) -> None:
        """Create the per-sub-env state arrays (a hook: runs once, at the end of ``__init__``)."""

    def _require_episode(self, what: str) -> None:
        """``ResetRequired`` before the first ``reset()``, as the single env raises it."""
        if not self._all_started:
            raise ResetRequired(
                f"{type(self).__name__}.{what} describes the current episodes: call reset() first."
            )

    # -- attributes -------------------------------------------------------------------------

    @classmethod
    def _descriptor(cls, name: str) -> Any:
        for klass in cls.__mro__:
            if name in klass.__dict__:
                return klass.__dict__[name]
        return None

    def _is_parameter(self, name: str) -> bool:
        return isinstance(self._descriptor(name), param)

    def get_attr(self, name: str) -> list[Any]:
        """One value per sub-env: parameters repeat their one value, state is split."""
        if self._is_parameter(name):
            self._check_open()
            return [getattr(self, name)] * self.num_envs
        if name == "sampler" and self._lanes:
            self._check_open()
            return list(self._lanes)
        return super().get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set a shared parameter (one value, or a list repeating it) or the samplers."""
        self._check_open()
        descriptor = self._descriptor(name)
        if name in self.state_names:
            raise AttributeError(_STATE.format(cls=type(self).__name__, name=name))
        if name == "sampler" and self._lanes:
            self._set_samplers(values)
            return
        if isinstance(descriptor, read_only):
            setattr(self, name, values)  # raises the read-only reason, whatever the value
        if isinstance(descriptor, param):
            setattr(self, name, self._one_value(name, values))
            return
        super().set_attr(name, values)

    def _one_value(self, name: str, values: Any) -> Any:
        if not (isinstance(values, list) and len(values) == self.num_envs):
            return values
        first = values[0]
        for other in values[1:]:
            same = other is first
            if not same:
                try:
                    same = bool(np.array_equal(np.asarray(other), np.asarray(first)))
                except (TypeError, ValueError):
                    same = False
            if not same:
                raise ValueError(_SHARED_VALUE.format(name=name, cls=type(self).__name__))
        return first

    # -- samplers ------------------------------------------------------------------------------

    @property
    def sampler(self) -> list[EpisodeSampler]:
        """Every sub-env's sampler (its lane): ``template.sampler.spawn()`` each."""
        if not self._lanes:  # the single env has no sampler either
            raise AttributeError(
                f"{type(self).__name__} has no sampler: {self.single_env.__name__} takes none."
            )
        return list(self._lanes)

    def _set_samplers(self, values: Any) -> None:
        """As ``set_attr`` on every backend: a list of ``num_envs`` gives one sampler each, as
        given; one sampler (a name, an int or an ``EpisodeSampler``) gives every sub-env its
        ``spawn()``, as building the env does."""
        template: Any = self.template  # a WindowEnv: only they have samplers
        if not (isinstance(values, list) and len(values) == self.num_envs):
            template.sampler = values
            values = template.sampler
        self._lanes = [
            template._checked_sampler(v) for v in self._per_env_values("sampler", values)
        ]

    # -- helpers for subclasses ----------------------------------------------------------------

    @staticmethod
    def parse_reset_options(
        options: Sequence[dict[str, Any] | None], allowed: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        """Validate every sub-env's options (unknown keys refused)."""
        return [parse_options(o, allowed) for o in options]

    def frozen_mask(self) -> NDArray[np.bool_] | None:
        """The frozen sub-envs, or None when none is frozen (the common, fast case): those
        that finished without autoreset, and those held back while others step (they wait
        for ``reset()``)."""
        if self.autoreset and self._awaiting is None:
            return None
        frozen = self._frozen
        return frozen.copy() if frozen.any() else None

    # -- sub-envs waiting for reset() --------------------------------------------------------

    def await_reset(self, indices: NDArray[np.intp]) -> None:
        """Sub-envs ``indices`` could not start an episode, or their simulation failed: they
        keep their state and wait for ``reset()``, each later ``step()`` raising
        ``ResetRequired`` for them after the others stepped (``_step_errors``)."""
        if self._awaiting is None:
            self._awaiting = np.zeros(self.num_envs, dtype=bool)
        self._awaiting[indices] = True

    def episodes_started(self, indices: NDArray[np.intp]) -> None:
        """Sub-envs ``indices`` began new episodes: none of them waits any more."""
        awaiting = self._awaiting
        if awaiting is not None:
            awaiting[indices] = False
            if not awaiting.any():
                self._awaiting = None

    def _step_errors(self, actions: Any) -> dict[int, BaseException]:
        awaiting = self._awaiting
        if awaiting is None:
            return {}
        return {index: ResetRequired(EPISODE_OVER) for index in np.flatnonzero(awaiting).tolist()}

    @staticmethod
    def keep_frozen(frozen: NDArray[np.bool_] | None, new: Any, old: Any) -> Any:
        """``new`` except where ``frozen`` (rows of ``old`` kept)."""
        if frozen is None:
            return new
        where = frozen.reshape((-1,) + (1,) * (np.ndim(new) - 1))
        return np.where(where, old, new)

    @staticmethod
    def replace_rows(array: np.ndarray, indices: NDArray[np.intp], values: Any) -> np.ndarray:
        """A copy of ``array`` with ``array[indices] = values`` (infos may hold the old one)."""
        fresh = array.copy()
        fresh[indices] = values
        result: np.ndarray = fresh
        return result

    def reset_reward(self, reward_fn: Any, indices: NDArray[np.intp]) -> None:
        """Reset a stateful reward for the sub-envs being reset (all: ``reset(None)``)."""
        if len(indices) == self.num_envs:
            reward_fn.reset(None)
        else:
            mask = np.zeros(self.num_envs, dtype=bool)
            mask[indices] = True
            reward_fn.reset(mask)


class SessionVecEnv(ObservationCache, FinanceVecEnv):
    """Base of the native session envs (MarketMaking, OptimalExecution): clock, options, resets.

    Holds every sub-env's step count ``_t`` (the template's ``dt`` gives the times) and caches
    observations (``ObservationCache``). Subclasses call ``super()._allocate_state()`` and start
    their ``_reset_envs`` with ``restart_sessions``.
    """

    _t: np.ndarray

    elapsed_steps = state("_t", "Steps taken in each sub-env's session.")

    def _allocate_state(self) -> None:
        self._t = np.zeros(self.num_envs, np.int64)

    @property
    def time_remaining(self) -> np.ndarray:
        """Session time left in every sub-env, ``max(n_steps - t, 0) dt``."""
        tpl: Any = self.template
        result: np.ndarray = np.maximum(tpl.n_steps - self._t, 0) * tpl.dt
        return result

    @property
    def timestamp(self) -> np.ndarray:
        """Session time of every sub-env's current decision, ``t dt``."""
        self._require_episode("timestamp")
        tpl: Any = self.template
        result: np.ndarray = self._t * tpl.dt
        return result

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        if options:
            session_options(options, self.single_env.__name__)  # as the single env says it

    def restart_sessions(self, indices: NDArray[np.intp]) -> None:
        """Restart the clocks and observations (the options were checked: a session has none)."""
        self._t[indices] = 0  # no info refers to this array: update in place
        self._observation_reset(indices)
