"""The checks of what the sub-envs return, in one place for every backend.

- Observations: ``observation_checker(space)`` says why one does not fit (shape, dtype kind,
  keys). The parent's stacker (``batching.stacker``, SyncVecEnv/AsyncVecEnv and the
  out-of-process backends' pickled observations) checks the whole batch with one ``np.array``
  and looks at each sub-env only when the batch does not fit; ``CheckedSubEnv`` checks each
  observation where it is produced in a ProcVecEnv worker or a RayVecEnv actor (before shared
  memory) through ``ResultCheck``; ``batching.checked_caster`` checks a native env's whole
  batch with the same rules. When an in-process batch does not fit, ``checked_steps`` checks
  each step result as a worker does, so the misfit is its sub-env's error on every backend.
- Results and infos: ``checked_result``, in ``SubEnv`` wherever the sub-env runs (every backend):
  ``reset()`` / ``step()`` must return a ``ResetResult`` / ``StepResult`` whose info is a plain
  dict (any other Mapping is copied into one).
- Rewards and flags: ``VecEnv._step_result``, which every backend's results pass through in the
  parent, batches them with ``batch_rewards`` / ``batch_flags``: one NumPy conversion in the
  common case, a per-sub-env look otherwise.

So a wrong value is an error naming the sub-env instead of a batch of the wrong shape or a NaN
reward.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from sekai._args import type_name
from sekai.core._autoreset import reset_inside
from sekai.core._snapshot import snapshot
from sekai.core.result import ResetResult, StepResult, several_values
from sekai.spaces import Dict, Space, Tuple
from sekai.spaces._explain import described, short_repr
from sekai.spaces._kinds import ARRAY_SPACES

__all__ = [
    "ResultCheck",
    "batch_flags",
    "batch_rewards",
    "checked_result",
    "checked_steps",
    "observation_checker",
    "observation_error",
    "snapshot",
]

R = TypeVar("R", ResetResult[Any], StepResult[Any])

# Which array dtype kinds may hold an observation of a space of each dtype kind: integers and
# booleans fit a float space; a float in an integer space would be truncated silently.
_KINDS = {"f": "fiub", "i": "iub", "u": "iub", "b": "biu"}
# The Python scalars that fit a shape-() space of each dtype kind.
_SCALARS: dict[str, tuple[type, ...]] = {
    "f": (float, int, bool),
    "i": (int, bool),
    "u": (int, bool),
    "b": (bool, int),
}

_FLOAT64 = np.dtype(np.float64)

# A reason why an observation does not fit, or None when it fits.
ObservationCheck = Callable[[Any], "str | None"]


def observation_checker(space: Space[Any], num_envs: int | None = None) -> ObservationCheck:
    """A function giving why an observation does not fit ``space`` (None when it fits).

    Array spaces check shape and dtype kind; ``Dict`` / ``Tuple`` check their keys / length
    and every part (a ``MaskedBox`` is the Dict of its ``values`` and ``mask``); other spaces
    (``Sequence``, custom ones) are not checked. With
    ``num_envs``, it judges a whole batch instead (a native env's): every array part has the
    leading ``num_envs`` axis.
    """
    if isinstance(space, ARRAY_SPACES):
        dtype = np.dtype(space.dtype)
        if num_envs is None:
            return _array_checker(tuple(space.shape), dtype)
        shape = (num_envs, *space.shape)
        return _array_checker(shape, dtype, f"a batch's shape (num_envs, *shape) is {shape}")
    if isinstance(space, Dict):
        parts = {key: observation_checker(sub, num_envs) for key, sub in space.spaces.items()}
        return lambda obs: _check_dict(parts, obs)
    if isinstance(space, Tuple):
        items = [observation_checker(sub, num_envs) for sub in space.spaces]
        return lambda obs: _check_tuple(items, obs)
    return lambda obs: None


def array_kinds(dtype: Any) -> str:
    """The array dtype kinds an observation of an array space of ``dtype`` may have."""
    kind: str = np.dtype(dtype).kind
    return _KINDS.get(kind, kind)


# The observation of a step that ended an episode and was reset in the same call comes from
# the reset, not from step(): naming step() would send the user to the wrong method.
_CALLS = {"autoreset": "reset() (the same-step autoreset after step() ended its episode)"}


def observation_error(
    obs: Any, space: Space[Any], reason: str, *, index: int | None = None, method: str | None = None
) -> ValueError:
    """The ``ValueError`` for an observation that does not fit ``space``: it names the sub-env
    ``index`` (or the env), the ``method`` that returned it (``"autoreset"``: the reset of a
    same-step autoreset), the space and ``reason`` (what ``observation_checker`` found)."""
    who = f"Sub-env {index}" if index is not None else "The env"
    call = f" from {_CALLS.get(method, f'{method}()')}" if method is not None else ""
    return ValueError(
        f"{who} returned observation {obs!r}{call}, which does not fit observation_space "
        f"{space!r}: {reason}. The env must return observations of its observation_space "
        "(check its step()/reset() or its declared space)."
    )


def check_observations(space: Space[Any], check: ObservationCheck, items: list[Any]) -> None:
    """Raise ``observation_error`` for the first of ``items`` (one per sub-env, in sub-env
    order) that does not fit ``space`` (``check`` is its ``observation_checker``)."""
    for index, obs in enumerate(items):
        reason = check(obs)
        if reason is not None:
            raise observation_error(obs, space, reason, index=index)


def _array_checker(
    shape: tuple[int, ...], dtype: np.dtype[Any], expected: str | None = None
) -> ObservationCheck:
    kind = dtype.kind
    allowed = _KINDS.get(kind, kind)
    expected = expected or f"the space's shape is {shape}"
    scalars = _SCALARS.get(kind, ()) if shape == () else ()
    # An integer cast wraps 300 to 44 in uint8: a value that is no member would pass as one.
    exact = kind in "iu"
    low, high = (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)) if exact else (0, 0)

    def check(obs: Any) -> str | None:
        if type(obs) is np.ndarray and obs.shape == shape and obs.dtype.kind in allowed:
            if exact and obs.dtype != dtype and not np.can_cast(obs.dtype, dtype, "safe"):
                return _changed_by_cast(obs, dtype)
            return None  # the common case: one type, one shape and a few comparisons
        if type(obs) in scalars:  # a Python int for Discrete, a float for Box(())
            if exact and type(obs) is int and not low <= obs <= high:
                return f"{obs}, which the space's dtype {dtype} cannot hold"
            return None
        if isinstance(obs, (str, bytes)) or obs is None:
            return f"a {type(obs).__name__}, not an array of shape {shape}"
        try:
            array = np.asarray(obs)
        except Exception:  # ragged lists and other objects NumPy cannot read as an array
            return f"a {type(obs).__name__} that is not an array of shape {shape}"
        if array.shape != shape:
            return f"shape {array.shape}, {expected}"
        if array.dtype.kind not in allowed:
            found = f"dtype {array.dtype} (kind {array.dtype.kind!r})"
            return f"{found}, the space's dtype kind is {kind!r}"
        if exact and not np.can_cast(array.dtype, dtype, "safe"):
            return _changed_by_cast(array, dtype)
        return None

    return check


def _changed_by_cast(obs: np.ndarray, dtype: np.dtype[Any]) -> str | None:
    """Why ``obs`` cannot be cast to the integer ``dtype`` (None when every value survives)."""
    if bool((obs.astype(dtype) == obs).all()):
        return None
    return f"values of dtype {obs.dtype} that the space's dtype {dtype} cannot hold"


def _check_dict(parts: dict[Any, ObservationCheck], obs: Any) -> str | None:
    if not isinstance(obs, Mapping):
        return f"a {type(obs).__name__}, not a dict"
    if obs.keys() != parts.keys():
        return f"keys {sorted(map(str, obs))}, the space's keys are {sorted(map(str, parts))}"
    for key, check in parts.items():
        reason = check(obs[key])
        if reason is not None:
            return f"[{key!r}]: {reason}"
    return None


def _check_tuple(items: list[ObservationCheck], obs: Any) -> str | None:
    if not isinstance(obs, (tuple, list)):
        return f"a {type(obs).__name__} that is not a tuple of {len(items)} parts"
    if len(obs) != len(items):
        return f"a {type(obs).__name__} of {len(obs)} parts, the space's tuple has {len(items)}"
    for position, (check, part) in enumerate(zip(items, obs)):
        reason = check(part)
        if reason is not None:
            return f"[{position}]: {reason}"
    return None


class ResultCheck:
    """Checks one sub-env's observations against its observation space before they are batched.

    Args:
        space: the observation space.
        index: the sub-env's index in the whole VecEnv (for messages).
    """

    __slots__ = ("_check", "array_dtype", "array_shape", "index", "space")

    def __init__(self, space: Space[Any], index: int) -> None:
        self.space = space
        self.index = index
        self._check = observation_checker(space)
        self.array_shape: tuple[int, ...] | None = None
        """For an array space: the shape of an observation that needs no further check."""
        self.array_dtype: np.dtype[Any] | None = None
        """For an array space: the dtype of an observation that needs no further check."""
        if isinstance(space, ARRAY_SPACES):
            self.array_shape, self.array_dtype = tuple(space.shape), np.dtype(space.dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ResultCheck, (self.space, self.index))  # the checker is a closure: rebuild it

    def observation(self, obs: Any, method: str) -> None:
        """Raise ``observation_error`` naming the sub-env when ``obs`` does not fit the space."""
        reason = self._check(obs)
        if reason is not None:
            raise observation_error(obs, self.space, reason, index=self.index, method=method)

    def step(self, result: StepResult[Any]) -> StepResult[Any]:
        """``result`` with its observation checked and its reward and flags as
        :func:`checked_scalars` gives them.

        Raises:
            ValueError: naming the sub-env, when the observation does not fit.
            TypeError: naming the sub-env, when the reward or a flag does not fit.
        """
        reason = self._check(result.observation)
        if reason is not None:  # which call it came from is worked out only for the message
            raise observation_error(
                result.observation, self.space, reason, index=self.index, method=_source(result)
            )
        return checked_scalars(result, self.index)


def _source(result: StepResult[Any]) -> str:
    """Which call a step result's observation came from: ``"autoreset"`` when the step ended
    its episode and was reset in the same call (``reset_inside``: its info holds
    ``final_observation``), else ``"step"``."""
    ended = result.terminated or result.truncated
    return "autoreset" if reset_inside(bool(ended), result.info) else "step"


def checked_steps(space: Space[Any], results: list[Any]) -> list[Any]:
    """The sub-envs' step results (exceptions where a sub-env raised), each checked as
    ``ResultCheck.step`` checks it where the sub-env runs: one that does not fit becomes its
    sub-env's error. For a batch that could not be built, so that the step is the failure of
    the sub-envs whose results do not fit, and the others' steps still count (rule 9)."""
    checked: list[Any] = []
    for index, result in enumerate(results):
        if not isinstance(result, BaseException):
            try:
                result = ResultCheck(space, index).step(result)
            except Exception as exc:  # this sub-env's error; the others are still checked
                result = exc
        checked.append(result)
    return checked


def checked_result(result: Any, cls: type[R], index: int, method: str) -> R:
    """What sub-env ``index``'s ``method()`` (``"reset"`` or ``"step"``) returned, as the VecEnv
    batches it: a ``cls`` whose info is a plain ``dict`` (core rule: ``type(infos[i]) is dict``),
    any other Mapping (a ``defaultdict``, an ``OrderedDict``, a ``mappingproxy``) copied into one.

    Raises:
        TypeError: naming the sub-env, when ``result`` is not a ``cls`` (a gymnasium-style
            tuple, None) or its info is not a Mapping (None, a list).
    """
    if type(result) is cls and type(result.info) is dict:
        return result  # the common case, unchanged
    if not isinstance(result, cls):
        raise TypeError(_not_a_result(result, cls.__name__, index, method))
    info = result.info
    if isinstance(info, Mapping):
        return dataclasses.replace(result, info=dict(info))
    raise TypeError(
        f"Sub-env {index} returned info {short_repr(info, 80)} ({type_name(info)}) from "
        f"{method}(); an info must be a dict (any other Mapping is copied into one)."
    )


# How to build each result from gymnasium's tuple, by method.
_GYM_TUPLES = {
    "reset": "(obs, info)",
    "step": "(obs, reward, terminated, truncated, info)",
}


def _not_a_result(result: Any, name: str, index: int, method: str) -> str:
    """Why sub-env ``index``'s ``method()`` result is refused, with a hint for the usual
    mistakes (a gymnasium-style tuple, a coroutine, a missing return)."""
    got = "None" if result is None else described(result)
    message = f"Sub-env {index} returned {got} from {method}(), not a sekai.{name}"
    if isinstance(result, tuple):
        fields = _GYM_TUPLES[method]
        return f"{message}: return sekai.{name}{fields} instead of gymnasium's tuple {fields}."
    if inspect.iscoroutine(result):
        result.close()  # never to be awaited: no "never awaited" RuntimeWarning later
        return f"{message}: {method}() must be a plain def; async code goes in async_{method}()."
    if result is None:
        return f"{message} (is a return statement missing?)."
    return f"{message}."


def checked_scalars(result: StepResult[Any], index: int) -> StepResult[Any]:
    """``result`` with a real-number reward and bool flags, for a sub-env whose rewards and
    flags are batched where it runs (a ProcVecEnv worker, a Ray actor); the checks and messages
    of :func:`batch_rewards` and :func:`batch_flags`.

    Raises:
        TypeError: naming sub-env ``index`` when its reward is not a real number or a flag is a
            sequence of several values.
    """
    reward, terminated, truncated = result.reward, result.terminated, result.truncated
    if type(reward) is float and type(terminated) is bool and type(truncated) is bool:
        return result  # the common case, unchanged
    return dataclasses.replace(
        result,
        reward=_reward(reward, index),
        terminated=_flag("terminated", terminated, index),
        truncated=_flag("truncated", truncated, index),
    )


def batch_rewards(rewards: Any, num_envs: int) -> NDArray[np.float64]:
    """The ``(num_envs,)`` float64 batch of the sub-envs' rewards, checked.

    Real numbers (NumPy scalars, ints and bools too) pass; a 1-element array counts as its
    element (gymnasium#1445: such rewards gave ``(N, 1)`` batches).

    Raises:
        TypeError: naming the first sub-env whose reward is not a real number.
    """
    try:
        batch = np.asarray(rewards)
    except (ValueError, TypeError):  # ragged: some 1-element arrays among numbers
        pass
    else:
        dtype = batch.dtype
        if dtype is _FLOAT64 and batch.shape == (num_envs,):
            return batch  # the common case: Python floats, one conversion
        if dtype.kind in "biuf" and batch.shape == (num_envs,):
            return batch.astype(np.float64)
    return np.array([_reward(value, index) for index, value in enumerate(rewards)], np.float64)


def batch_flags(name: str, flags: Any, num_envs: int) -> NDArray[np.bool_]:
    """The ``(num_envs,)`` bool batch of the sub-envs' ``terminated`` or ``truncated``.

    Each flag counts by its truth value, as in ``if terminated:``; a 1-element array counts as
    its element (gymnasium#1445: such flags gave ``(N, 1)`` batches).

    Raises:
        TypeError: naming the first sub-env whose flag holds several values (or none), as
            ``StepResult`` refuses an array flag of several values where it is built.
    """
    try:
        batch = np.asarray(flags, dtype=bool)
    except (ValueError, TypeError):  # ragged: some arrays among bools
        pass
    else:
        if batch.shape == (num_envs,):
            return batch  # the common case: one conversion, as without the check
    return np.array([_flag(name, value, index) for index, value in enumerate(flags)], bool)


def _reward(reward: Any, index: int) -> float:
    value = _one_element(reward)
    if isinstance(value, (numbers.Real, np.bool_)):
        return float(value)
    raise TypeError(
        f"Sub-env {index} returned reward {reward!r} ({type(reward).__name__}) from step(); a "
        "reward must be a real number (a float, an int or a 1-element array of one)."
    )


def _flag(name: str, flag: Any, index: int) -> bool:
    value = _one_element(flag)
    if np.ndim(value) == 0:
        return bool(value)
    what = (
        several_values(flag)
        if isinstance(flag, np.ndarray)
        else f"{type(flag).__name__} of several values"
    )
    raise TypeError(
        f"Sub-env {index} returned {name}={flag!r} ({what}) from step(); {name} must be a bool "
        "(or a 1-element array)."
    )


def _one_element(value: Any) -> Any:
    """The element of a 1-element array (gymnasium#1445: such rewards batched as ``(N, 1)``)."""
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.reshape(()).item() if value.dtype.kind in "biuf" else value
    return value
