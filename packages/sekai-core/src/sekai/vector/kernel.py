"""ArrayKernel: the dynamics of one env as pure array functions, run by numpy, JAX or torch."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

import numpy as np

from sekai.spaces import Space

__all__ = ["ArrayKernel", "Draw", "KernelReset", "KernelStep"]

Array = Any
"""An array of whichever namespace drives the kernel (numpy, jax.numpy, torch)."""
State = Mapping[str, Array]
"""A kernel's state: a flat dict (a pytree) of arrays, each with a leading sub-env axis."""
P = TypeVar("P")


@dataclass(frozen=True)
class Draw:
    """A request for random numbers that a kernel's reset or step consumes.

    The backend draws them (numpy ``Generator``, ``jax.random``, ``torch.Generator``) in the
    driver's float dtype, with the sub-env axis first: ``(num_envs, *shape)``.

    Attributes:
        name: the key of the drawn array in the ``draws`` mapping given to the kernel.
        distribution: ``"uniform"`` on [0, 1) or ``"normal"`` (standard).
        shape: the shape per sub-env.
    """

    name: str
    distribution: Literal["uniform", "normal"]
    shape: tuple[int, ...] = ()


KernelReset = tuple[State, Array, Mapping[str, Array]]
"""``(state, observation, info)`` returned by :meth:`ArrayKernel.reset`."""
KernelStep = tuple[State, Array, Array, Array, Array, Mapping[str, Array]]
"""``(state, observation, reward, terminated, truncated, info)`` from :meth:`ArrayKernel.step`."""


class ArrayKernel(abc.ABC, Generic[P]):
    """The dynamics of one env, batched over a leading sub-env axis, as pure functions.

    A kernel is built from the env's own keyword arguments (``Kernel(**spec.kwargs)``), checks
    them as the env does, and holds the single-env ``observation_space`` and ``action_space``
    and its ``params``: a frozen dataclass of numbers and arrays. A driver (numpy, JAX or torch)
    converts ``params`` to its namespace and float dtype, draws the requested random numbers,
    and calls :meth:`reset` and :meth:`step`; autoreset, time limits, seeding, action checks and
    info splitting belong to the driver, written once for every kernel.

    Rules, so that ``jax.jit``, ``torch.compile`` and CUDA graphs can trace a kernel: no in-place
    updates, no Python branching on array values (use ``xp.where``), no host round-trips,
    static shapes, and no hard-coded float dtype (follow the dtype of ``params``' and ``draws``'
    arrays). Kernels import neither JAX nor torch. The numpy driver hands a kernel read-only
    arrays (an in-place update raises there), and every driver checks that what ``reset`` and
    ``step`` return is shaped as the observation space and the state say
    (``sekai.vector.kernel_outputs``).
    """

    observation_space: Space[Any]
    action_space: Space[Any]
    params: P
    #: The env's metadata (``render_fps``), which a :class:`KernelVecEnv` reports as its own.
    metadata: ClassVar[Mapping[str, Any]] = {}
    #: The fields of ``params`` that ``set_attr`` changes (None: every field the dataclass
    #: takes in ``__init__``); the others are the kernel's own, derived when it is built.
    settable: ClassVar[frozenset[str] | None] = None
    #: Names ``set_attr`` refuses, with the reason, worded as the env's native vector env
    #: words it (``"it fixes the shapes of the env's arrays; build a new env"``).
    read_only: ClassVar[Mapping[str, str]] = {}

    #: Params this kernel holds but, as built, never reads (a replayed history leaves a finance
    #: env's built-in GBM unused): ``check_set`` refuses them, and the functional API's
    #: ``default_params`` leaves them out.
    unused: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        settable = cls.__dict__.get("settable")
        if settable is not None:  # listed in any collection: kept as the frozenset drivers use
            names = None if isinstance(settable, str) else tuple(settable)
            if names is None or not all(isinstance(n, str) for n in names):
                raise TypeError(
                    f"{cls.__name__}.settable must be None or a collection of the names of "
                    f"params fields (str), got {settable!r}."
                )
            cls.settable = frozenset(names)

    def setting(self, name: str) -> Any:
        """The env's setting ``name`` that is no params field (a read-only shape, the reward
        function), as the native env reports it, for ``get_attr``.

        Raises:
            AttributeError: the kernel keeps no such setting (the default).
        """
        raise AttributeError(name)

    def check_set(self, name: str, value: Any) -> None:
        """Refuse, as the env refuses it, setting parameter ``name`` to ``value`` where the env
        would not use it (one of ``unused``); nothing by default."""

    def reset_draws(self, params: P) -> tuple[Draw, ...]:
        """Return the random numbers :meth:`reset` needs (none by default)."""
        return ()

    def step_draws(self, params: P) -> tuple[Draw, ...]:
        """Return the random numbers :meth:`step` needs (none by default)."""
        return ()

    def host_info(self, params: P, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """The info arrays as the env reports them, from their host (numpy) copies.

        A kernel returns on the device what an accelerator holds exactly and finishes here:
        the finance kernels return each decision's history row, and its timestamp (float64,
        int64 or datetime64, which float32 and JAX without x64 cannot hold) is looked up here.
        By default the arrays are reported as they are.
        """
        return info

    def host_param(self, name: str, value: Any) -> Any:
        """Parameter ``name`` as the env reports it, for ``get_attr``: ``value`` is its host
        value as the kernel was built, or the value ``set_attr`` was given (one number as given,
        a 0-d array as its Python number, else the checked host array). By default a 0-d array
        as a Python number, anything else as it is. A kernel that broadcasts a number the env
        keeps as one reports that number; one whose env converts a number it is given (to a
        float) converts it too."""
        return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value

    def check_params(self, xp: Any, params: P, float_dtype: Any) -> None:
        """Refuse host ``params`` that the driver's ``float_dtype`` (an ``xp`` dtype) cannot run,
        with a ``ValueError`` (a value beyond float32's range, an integer beyond the int32 a
        kernel counts in). Drivers call it where they convert the params, when the env is built
        and at each ``set_attr``, so the step pays nothing. Accepts everything by default."""

    @abc.abstractmethod
    def reset(
        self,
        xp: Any,
        params: P,
        draws: Mapping[str, Array],
        mask: Array,
        state: State | None,
    ) -> KernelReset:
        """Reset the sub-envs where ``mask`` is true and keep the others.

        Args:
            xp: the array namespace (array API standard).
            params: the parameters, as arrays of ``xp``.
            draws: the random numbers of :meth:`reset_draws`, drawn for every sub-env.
            mask: ``(num_envs,)`` bool, the sub-envs to reset.
            state: the current state, or None on the first reset (``mask`` then all true).

        Returns:
            The new state, every sub-env's observation and the reset info arrays (the driver
            reads the observations and infos of the masked sub-envs only).
        """

    @abc.abstractmethod
    def step(
        self,
        xp: Any,
        params: P,
        state: State,
        action: Array,
        draws: Mapping[str, Array],
    ) -> KernelStep:
        """Advance every sub-env by one step.

        Returns:
            The new state, the observations, rewards ``(num_envs,)``, terminated and truncated
            ``(num_envs,)`` bool (the kernel's own truncation; the driver adds the time limit),
            and the step info arrays.
        """
