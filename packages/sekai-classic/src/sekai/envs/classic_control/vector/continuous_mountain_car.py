"""ContinuousMountainCarVecEnv: MountainCarContinuous-v0 for many sub-envs, with array maths."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control.continuous_mountain_car import (
    ContinuousMountainCarEnv,
    check_energy,
)
from sekai.envs.classic_control.vector._common import bound_array, keep_frozen, pow2
from sekai.envs.classic_control.vector._valley import ValleyVecEnv

__all__ = ["ContinuousMountainCarVecEnv"]

FloatArray = npt.NDArray[np.float64]
Classes = npt.NDArray[np.int8]

# The single env (like gymnasium's) computes with NumPy scalars, so each intermediate value is a
# weak Python float, a float16, a float32 or a float64 (a float16 or integer action makes some),
# and NumPy's promotion rules (NEP 50) decide where results are rounded. The vector version
# carries every value as float64 plus its class, and rounds to float16 or float32 exactly where
# the scalar code would (float64 arithmetic rounded once to float16 or float32 is what NumPy
# computes: float64 holds more than twice their precision). The order PY < F16 < F32 < F64
# makes the promoted class of a binary operation the maximum of the two classes.
PY, F16, F32, F64 = 0, 1, 2, 3
# The class of an action's dtype: an integer action enters the arithmetic as NumPy promotes it
# with a Python float, as a float64.
_ACTION_CLASSES = {np.dtype(np.float16): F16, np.dtype(np.float32): F32, np.dtype(np.float64): F64}
# Actions beyond this square to more than a float64 holds (energy penalty 0.1 * a**2).
_ROOT_MAX = math.sqrt(np.finfo(np.float64).max)
_MAX, _MIN = np.maximum.reduce, np.minimum.reduce


def _r32(values: FloatArray) -> FloatArray:
    """Round to the nearest float32 (kept in float64; exact for +, -, * of float32 values)."""
    return values.astype(np.float32).astype(np.float64)


def _r16(values: FloatArray) -> FloatArray:
    """Round to the nearest float16 (kept in float64)."""
    return values.astype(np.float16).astype(np.float64)


# ``half``: whether any value of the step may be of class F16 (float16 actions only): the other
# steps skip the float16 roundings.


def _as_class(values: FloatArray, classes: Classes, half: bool) -> FloatArray:
    """``values`` rounded to float32 where their class is F32, to float16 where it is F16."""
    values = np.where(classes == F32, _r32(values), values)
    if half:
        values = np.where(classes == F16, _r16(values), values)
    return values


def _weak(value: Any, classes: Classes, half: bool) -> FloatArray:
    """A Python float (or one per sub-env, set with ``set_attr``) as NumPy combines it with each
    value: rounded to float32 for F32 values and to float16 for F16 values (NEP 50)."""
    if isinstance(value, np.ndarray):
        return _as_class(value.astype(np.float64), classes, half)
    weak: FloatArray = np.where(classes == F32, float(np.float32(value)), value)
    if half:
        weak = np.where(classes == F16, float(np.float16(value)), weak)
    return weak


def _action_class(actions: npt.NDArray[Any]) -> int:
    """The class of a batch of actions: F16, F32 or F64 (float64 and integer actions).

    Raises:
        ValueError: another float dtype (long double), whose arithmetic the float64 storage
            cannot reproduce.
    """
    dtype = actions.dtype
    action_class = _ACTION_CLASSES.get(dtype)
    if action_class is not None:
        return action_class
    if dtype.kind in "iu":
        return F64
    raise ValueError(
        f"ContinuousMountainCarVecEnv.step(actions): actions of dtype {dtype} are not "
        "supported; expected float16, float32, float64 or integer actions (the dtypes whose "
        "dynamics it reproduces bit for bit). Cast them, or use vectorization_mode='sync'."
    )


def _add(
    x: FloatArray, cx: Classes, y: FloatArray, cy: Classes, half: bool
) -> tuple[FloatArray, Classes]:
    """``x + y`` with NumPy scalar promotion: a weak Python float joins a float32 as a float32
    (a float16 as a float16)."""
    classes = np.maximum(cx, cy)
    if half:
        y = np.where(cy == PY, _as_class(y, classes, half), y)
    else:
        y = np.where((classes == F32) & (cy == PY), _r32(y), y)
    return _as_class(x + y, classes, half), classes


class ContinuousMountainCarVecEnv(ValleyVecEnv):
    """``num_envs`` MountainCarContinuous-v0 sub-envs stepped together with array operations.

    Same dynamics, spaces, rewards and reset options as ``ContinuousMountainCarEnv``; under the
    same states and float16, float32, float64 or integer actions every sub-env matches the
    single env bit for bit, including its float16/float32/float64 roundings, also with
    parameters set per sub-env (``set_attr`` with a list); actions of another float dtype (long
    double) raise ``ValueError``. A sub-env whose action's square overflows the energy penalty
    raises the single env's ``OverflowError`` after the others stepped (core.md §14 rule 9).
    ``state`` has shape ``(num_envs, 2)`` (float64
    storage; after a sub-env's first step its values are float32 values, as in the single env,
    and ``get_attr("state")`` gives those rows as float32 arrays).

    Args:
        num_envs: number of sub-envs.
        goal_velocity: as for ``ContinuousMountainCarEnv``.
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps (``make_vec`` passes
            the registered 999).
    """

    metadata = ContinuousMountainCarEnv.metadata
    _state_dtypes = (np.float64, np.float32)

    low_state = bound_array("low_state")
    high_state = bound_array("high_state")

    def __init__(
        self,
        num_envs: int,
        *,
        goal_velocity: float = 0,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        single = ContinuousMountainCarEnv(goal_velocity=goal_velocity)
        super().__init__(num_envs, single, autoreset=autoreset, max_episode_steps=max_episode_steps)
        self.min_action: Any = single.min_action
        self.max_action: Any = single.max_action
        self.power: Any = single.power
        self._low_state = single.low_state
        self._high_state = single.high_state
        # True until a sub-env's first step: its state is still float64, as after the single
        # env's reset (later states are float32).
        self._fresh = np.ones(self.num_envs, dtype=bool)

    def _reset_envs(
        self, indices: npt.NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        super()._reset_envs(indices, options)
        self._fresh[indices] = True

    def _step_errors(self, actions: npt.NDArray[Any]) -> dict[int, BaseException]:
        """The sub-envs whose action's square overflows the energy penalty: the single env's
        ``OverflowError`` for each (they are held back, the others step).

        Raises:
            ValueError: actions of a dtype this class does not reproduce (long double).
        """
        # Only float64 actions can square past a float64 (other dtypes are narrower or refused).
        if _action_class(actions) != F64 or actions.dtype != np.float64:
            return {}
        a = actions[:, 0]
        if not (_MAX(a) > _ROOT_MAX or _MIN(a) < -_ROOT_MAX):
            return {}
        errors: dict[int, BaseException] = {}
        with np.errstate(over="ignore"):
            energy = pow2(a)
        for index in np.flatnonzero(~np.isfinite(energy) & ~self.frozen).tolist():
            try:
                check_energy(float(energy[index]), float(a[index]), index)
            except OverflowError as exc:
                errors[index] = exc
        return errors

    def _step(
        self, actions: npt.NDArray[Any]
    ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        n = self.num_envs
        state_class = np.where(self._fresh, F64, F32).astype(np.int8)
        kind = _action_class(actions)
        half = kind == F16
        action_class = np.full(n, kind, dtype=np.int8)
        a = actions[:, 0].astype(np.float64)
        if _MAX(a) > _ROOT_MAX or _MIN(a) < -_ROOT_MAX:  # rare: some squares overflow
            with np.errstate(over="ignore"):  # sub-envs held back (``_step_errors``) or frozen
                energy = pow2(a)
        else:
            energy = pow2(a)
        position = self.state[:, 0].copy()
        velocity = self.state[:, 1].copy()

        # force = min(max(a, min_action), max_action): a clipped force is a Python float.
        low = a < _weak(self.min_action, action_class, half)
        high = a > _weak(self.max_action, action_class, half)
        force = np.where(low, self.min_action, np.where(high, self.max_action, a))
        force_class = np.where(low | high, PY, action_class).astype(np.int8)
        push = _as_class(force * _weak(self.power, force_class, half), force_class, half)
        angle = _as_class(3 * position, state_class, half)
        drag = 0.0025 * np.cos(angle)  # math.cos: a Python float
        rhs, rhs_class = _add(push, force_class, -drag, np.full(n, PY, dtype=np.int8), half)
        velocity, velocity_class = _add(velocity, state_class, rhs, rhs_class, half)

        over = velocity > _weak(self.max_speed, velocity_class, half)
        velocity = np.where(over, self.max_speed, velocity)
        velocity_class = np.where(over, PY, velocity_class).astype(np.int8)
        under = velocity < _weak(-self.max_speed, velocity_class, half)
        velocity = np.where(under, -self.max_speed, velocity)
        velocity_class = np.where(under, PY, velocity_class).astype(np.int8)

        position, position_class = _add(position, state_class, velocity, velocity_class, half)
        over = position > _weak(self.max_position, position_class, half)
        position = np.where(over, self.max_position, position)
        position_class = np.where(over, PY, position_class).astype(np.int8)
        under = position < _weak(self.min_position, position_class, half)
        position = np.where(under, self.min_position, position)
        position_class = np.where(under, PY, position_class).astype(np.int8)
        stop = (position == _weak(self.min_position, position_class, half)) & (velocity < 0)
        velocity = np.where(stop, 0.0, velocity)
        velocity_class = np.where(stop, PY, velocity_class).astype(np.int8)

        terminated = (position >= _weak(self.goal_position, position_class, half)) & (
            velocity >= _weak(self.goal_velocity, velocity_class, half)
        )
        rewards = np.where(terminated, 100.0, 0.0) - energy * 0.1
        new = np.stack([_r32(position), _r32(velocity)], axis=1)
        # Finished sub-envs (autoreset=False) keep their final state (and its class).
        frozen = self.frozen
        self.state = keep_frozen(frozen, new, self.state)
        self._fresh &= frozen
        return rewards, terminated, np.zeros(n, dtype=bool), {}
