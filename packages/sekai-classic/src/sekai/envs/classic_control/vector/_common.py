"""Helpers and the base class shared by the native classic-control vector envs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai.core.env import Env
from sekai.envs.classic_control._common import reset_bounds
from sekai.envs.classic_control.vector._pow import pow2
from sekai.vector import NativeVecEnv, shared

__all__ = ["ClassicVecEnv", "bound_array", "keep_frozen", "pow2", "uniform_rows"]


def bound_array(name: str) -> Any:
    """A ``@shared`` property for the single env's array ``name`` (observation bounds), kept
    as ``_name``: every sub-env gets the whole array, even one of ``num_envs`` entries, and
    setting it works as on the single env (the spaces built stay as they are)."""
    private = f"_{name}"

    def get(self: Any) -> npt.NDArray[np.float32]:
        return getattr(self, private)  # type: ignore[no-any-return]

    def set_(self: Any, value: npt.NDArray[np.float32]) -> None:
        setattr(self, private, value)

    doc = f"The single env's ``{name}`` (the observation bounds), the same for every sub-env."
    return shared(property(get, set_, doc=doc))


class ClassicVecEnv(NativeVecEnv):
    """A native vector env with the spaces of one single env, observing ``state`` as float32.

    Subclasses pass a single env built with their keyword arguments, copy the constants they
    need from it, and override ``_observe`` when the observation is not the state itself. Their
    reset options are the single env's ``low`` / ``high``, by default ``_reset_range`` (override
    ``_check_reset_options`` for others), checked for every sub-env before any is reset.
    Parameters named in ``_one_value`` take one value for every sub-env.

    ``get_attr`` gives each sub-env's state as the single env holds it (``_as_single``): the
    ``state`` rows in the single env's dtype (``_state_dtypes``), and ``elapsed_steps`` counts
    each sub-env's steps as the ``TimeLimit`` of a single env does.
    """

    state: npt.NDArray[np.float64]
    _state_dtypes: ClassVar[tuple[type[np.floating[Any]], type[np.floating[Any]]] | None] = None
    """The dtypes of the single env's ``state`` right after a reset and after a step, where it
    changes (None: float64 throughout); the subclass then keeps ``_fresh``, True for the
    sub-envs not stepped since their reset."""
    _fresh: npt.NDArray[np.bool_]
    _reset_range: ClassVar[tuple[float, float]]
    """The single env's default ``low`` / ``high`` reset bounds."""
    _one_value: ClassVar[frozenset[str]] = frozenset()
    """Parameters the dynamics branch on as a whole: ``set_attr`` refuses different values
    per sub-env for them."""

    def __init__(
        self,
        num_envs: int,
        single: Env[Any, Any],
        *,
        autoreset: bool,
        max_episode_steps: int | None,
    ) -> None:
        super().__init__(
            num_envs,
            single.observation_space,
            single.action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )

    def _observe(self) -> npt.NDArray[np.float32]:
        # Row-major whatever the state's layout (CartPole keeps its state column-major):
        # torch's view() and other consumers of a batch expect C order, as every backend gives.
        return self.state.astype(np.float32, order="C")

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        # The single env's errors (ValueError), raised before any sub-env is reset.
        if options:
            reset_bounds(options, *self._reset_range)

    @property
    def elapsed_steps(self) -> npt.NDArray[np.int64]:
        """Steps taken in every sub-env's current episode, counted as the ``TimeLimit`` of a
        single env counts them (a frozen sub-env's count stays).

        Raises:
            AttributeError: built without a time limit, as the single env has no
                ``elapsed_steps`` without a ``TimeLimit``.
        """
        if self._max_episode_steps is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'elapsed_steps': it was built "
                "without a time limit, which counts the steps (pass max_episode_steps=n to "
                "make_vec() or to the constructor)."
            )
        result: npt.NDArray[np.int64] = self._elapsed.copy()
        return result

    def get_attr(self, name: str) -> list[Any]:
        """``NativeVecEnv.get_attr``, each sub-env's value as the single env holds it
        (``_as_single``)."""
        return self._as_single(name, super().get_attr(name))

    def _as_single(self, name: str, values: list[Any]) -> list[Any]:
        """``values`` (one a sub-env) of attribute ``name`` as the single env holds them: the
        ``state`` rows in its dtype (``_state_dtypes``). Subclasses add the attributes they
        store otherwise."""
        if name != "state" or self._state_dtypes is None:
            return values
        after_reset, after_step = self._state_dtypes
        return [
            np.asarray(row, dtype=after_reset if fresh else after_step)
            for row, fresh in zip(values, self._fresh.tolist(), strict=True)
        ]

    def set_attr(self, name: str, values: Any) -> None:
        """``NativeVecEnv.set_attr``; a parameter in ``_one_value`` takes one value (or a list
        repeating one value).

        Raises:
            ValueError: different values per sub-env for a parameter in ``_one_value``.
        """
        if name in self._one_value and isinstance(values, list) and len(values) == self.num_envs:
            first = values[0]
            if any(not np.array_equal(value, first) for value in values[1:]):
                raise ValueError(
                    f"{type(self).__name__}.set_attr({name!r}, values): {name} is one value for "
                    f"every sub-env, got {values!r}. Pass one value, or use "
                    "vectorization_mode='sync' for different values per sub-env."
                )
            values = first
        super().set_attr(name, values)


def uniform_rows(
    rng: np.random.Generator,
    options: Sequence[dict[str, Any] | None],
    default: tuple[float, float],
    width: int,
) -> npt.NDArray[np.float64]:
    """``len(options)`` rows of ``width`` uniform draws within each row's ``low``/``high`` options
    (``default``: the bounds without options).

    Row ``i`` takes the next ``width`` draws of ``rng``, so resetting sub-envs one row at a time
    draws exactly what the single env's ``uniform(low, high, size=(width,))`` would.
    """
    k = len(options)
    if not any(options):  # no options (None or {}): the defaults for every row
        return rng.uniform(low=default[0], high=default[1], size=(k, width))
    bounds = np.array([reset_bounds(option, *default) for option in options])
    return rng.uniform(low=bounds[:, :1], high=bounds[:, 1:], size=(k, width))


def keep_frozen(
    frozen: npt.NDArray[np.bool_], new: npt.NDArray[Any], old: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """``new`` with the rows of frozen sub-envs put back to ``old`` (they are not advanced)."""
    if frozen.any():
        new[frozen] = old[frozen]
    return new
