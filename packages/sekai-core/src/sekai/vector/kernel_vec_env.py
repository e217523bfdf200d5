"""KernelVecEnv: the stateful vector env that runs any ArrayKernel on a KernelBackend."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sekai._args import IntLike
from sekai.core._rng import SeededMixin
from sekai.utils._equal import structurally_equal
from sekai.vector._contract.seeding import native_seed, refuse_rng_per_sub_env, vector_options
from sekai.vector._contract.subenv import call_attribute
from sekai.vector._space_attributes import SubEnvSpaces
from sekai.vector._time_limit import TimeLimitAttribute, check_max_episode_steps
from sekai.vector.infos import ArrayInfos, LazyInfos, split_value
from sekai.vector.kernel import ArrayKernel
from sekai.vector.kernel_backend import DeviceActions, KernelBackend, NumpyBackend, ResetFn, StepFn
from sekai.vector.kernel_params import (
    checked_params,
    converted_params,
    field_names,
    replaced_params,
    settable_fields,
)
from sekai.vector.kernel_step import (
    KernelTransition,
    device_params,
    is_dynamic,
    observation_dtypes,
    read_only_arrays,
    tree_map,
)
from sekai.vector.result import VecResetResult, VecStepResult
from sekai.vector.vec_env import VecEnv

# converted_params, replaced_params and settable_fields live in kernel_params: named here too.
__all__ = [
    "KernelInfos",
    "KernelVecEnv",
    "converted_params",
    "replaced_params",
    "settable_fields",
]


class KernelInfos(LazyInfos):
    """Per-sub-env infos of a kernel driver, copied to the host and split only when read."""

    __slots__ = ("_build", "_delegate")

    def __init__(self, n: int, build: Callable[[], ArrayInfos]) -> None:
        super().__init__(n)
        self._build = build
        self._delegate: ArrayInfos | None = None

    def _infos(self) -> ArrayInfos:
        if self._delegate is None:
            self._delegate = self._build()
        return self._delegate

    def _make_one(self, index: int) -> dict[str, Any]:
        return self._infos()._make_one(index)

    def _make_all(self) -> list[dict[str, Any]]:
        return self._infos()._make_all()

    def _peek(self, index: int, key: str, default: Any) -> Any:
        return self._infos()._peek(index, key, default)


class KernelVecEnv(SubEnvSpaces, TimeLimitAttribute, SeededMixin, VecEnv):
    """A vector env running an :class:`~sekai.vector.kernel.ArrayKernel` on a backend.

    The semantics are the native envs': same-step autoreset with ``final_observation`` /
    ``final_info`` / ``reset_info`` (or frozen sub-envs with ``autoreset=False``), the time
    limit with ``info["elapsed_steps"]``, ``reset(seed=...)`` (an int or a list of seeds seeds
    one numpy generator as a native env does; device backends seed their own RNG from it) and
    action checks. Observations, rewards and flags are arrays of the backend; infos are copied
    to the host only when read (``last_transition`` keeps the device arrays).

    Args:
        kernel: the env's kernel.
        num_envs: number of sub-envs.
        backend: the array library (default: numpy, float64).
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps.
        check_actions: check the values of every batch of actions (one host sync of a bool
            for device arrays); False skips that check. The shape is always checked (free).
    """

    def __init__(
        self,
        kernel: ArrayKernel[Any],
        num_envs: IntLike,
        *,
        backend: KernelBackend | None = None,
        autoreset: bool = True,
        max_episode_steps: IntLike | None = None,
        check_actions: bool = True,
    ) -> None:
        if not isinstance(kernel, ArrayKernel):
            raise TypeError(f"kernel must be an ArrayKernel, got {type(kernel).__name__}.")
        super().__init__(
            num_envs, kernel.observation_space, kernel.action_space, autoreset=autoreset
        )
        self.kernel = kernel
        self.metadata = dict(kernel.metadata)
        self.backend = backend if backend is not None else NumpyBackend()
        self._max_episode_steps = check_max_episode_steps(
            max_episode_steps, counter=self._step_counter()
        )
        if not isinstance(check_actions, (bool, np.bool_)):
            raise TypeError(f"check_actions must be a bool, got {type(check_actions).__name__}.")
        self.check_actions = bool(check_actions)
        self._device_actions = DeviceActions(self.backend, kernel.action_space, self.num_envs)
        self.observation_dtype = observation_dtypes(
            kernel.observation_space, self.backend.numpy_dtype
        )
        # Read-only: get_attr hands these arrays out, and a write would reach the next
        # device copy (set_attr converts them all again).
        self._host_params = read_only_arrays(checked_params(kernel))
        self._params: Any = device_params(kernel, self._host_params, self.backend)
        # What get_attr reports for the parameters set_attr changed: the values as given.
        self._reported: dict[str, Any] = {}
        self._carry: Any = None
        self.last_transition: KernelTransition | None = None
        # The generator the backend was last seeded from: another one (assigned to vec.rng,
        # or created by reading it) seeds the backend at the next reset, as a native env
        # draws from whatever generator it holds.
        self._backend_rng: np.random.Generator | None = None
        self._reset_fn: ResetFn | None = self.backend.build_reset(self)
        self._step_fn: StepFn | None = self.backend.build_step(self)

    @classmethod
    def cpu_backend(cls, dtype: str = "float64") -> KernelBackend:
        """This mode's backend on the CPU in ``dtype`` (the cross-backend tests compare them)."""
        return NumpyBackend(np.dtype(dtype))

    @classmethod
    def from_kernel(
        cls,
        kernel: ArrayKernel[Any],
        num_envs: int,
        max_episode_steps: int | None,
        vector_kwargs: Mapping[str, Any],
    ) -> KernelVecEnv:
        """What ``make_vec`` calls for a kernel mode, with the kernel the spec names."""
        return cls(kernel, num_envs, max_episode_steps=max_episode_steps, **vector_kwargs)

    # -- params ------------------------------------------------------------------------------

    @property
    def params(self) -> Any:
        """The kernel's parameters as given (host values; ``set_attr`` changes them)."""
        return self._host_params

    def _step_counter(self) -> str:  # the driver's elapsed steps: int32 on every backend
        return f"vectorization_mode={self.backend.name!r}"

    def _time_limit_changed(self) -> None:
        self._rebuild()  # the limit is compiled into the step functions

    def _rebuild(self) -> None:
        """Rebuild the compiled functions (after a change that is static for them)."""
        self._reset_fn = self.backend.build_reset(self)
        self._step_fn = self.backend.build_step(self)

    # -- copy and pickle (the backend decides whether it can be: numpy's can) ------------------

    def __getstate__(self) -> dict[str, Any]:
        # The backend's own check first: copy.copy keeps the backend by reference and would
        # never reach it, sharing a device backend's generator with the original.
        self.backend.__getstate__()
        state = self.__dict__.copy()
        # They close over this object: a copy builds its own (the copy would step this one).
        state["_reset_fn"] = state["_step_fn"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._params is not None:  # None once closed
            self._rebuild()

    # -- reset and step ----------------------------------------------------------------------

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        """Reset every sub-env (kernels take no reset options: ``None`` or ``{}`` only)."""
        self._check_open()
        self.backend.check_ready()
        n = self.num_envs
        if any(vector_options(options, n)):  # refused before drawing from the generator
            raise ValueError(
                f"{self._label()} takes no reset options (an array kernel resets every sub-env "
                f"the same way), got {options!r}; {self._modes_with_options()}."
            )
        rng_seed, seeds = native_seed(seed, n, lambda: self.rng)
        self._begin_reset()
        self._record_seeds(seeds)
        self._set_rng(rng_seed)
        if rng_seed is not None or self.rng is not self._backend_rng:
            self.backend.seed(self.rng)
            self._backend_rng = self.rng
        assert self._reset_fn is not None  # None once closed
        result = self._reset_fn(self._params)
        self._carry = result.state
        self.last_transition = None
        self._reset_done()
        params = self._host_params

        def build() -> ArrayInfos:
            return ArrayInfos(n, self._host_info(params, result.info))

        return VecResetResult(result.observation, KernelInfos(n, build))  # type: ignore[arg-type]

    def _frozen_mask(self) -> Any:
        return None if self._carry is None else self._carry.get("frozen")

    def step(self, actions: Any) -> VecStepResult[Any]:
        backend = self.backend
        backend.check_ready()
        frozen = self._frozen_mask()
        checker = self._ready_checker()
        if self.check_actions and not backend.is_device_array(actions):
            # Checked where it is, as a native env checks it, before the backend converts it
            # (which would fail on non-numbers, or wrap large ints without x64 in JAX).
            host_frozen = None if frozen is None else backend.to_numpy(frozen)
            action = backend.actions(checker.check(actions, host_frozen))
        else:  # by the same rules, on the device
            action = self._device_actions.prepare(
                backend.actions(actions), frozen, self.check_actions
            )
        assert self._step_fn is not None  # None once closed
        t = self._step_fn(self._params, self._carry, action)
        self._carry = t.state
        self.last_transition = t
        params = self._host_params
        infos = KernelInfos(self.num_envs, lambda: self._infos(t, frozen, params))
        return VecStepResult(t.observation, t.reward, t.terminated, t.truncated, infos)  # type: ignore[arg-type]

    def _host_info(
        self, params: Any, info: Mapping[str, Any], rows: np.ndarray | None = None
    ) -> dict[str, Any]:
        """Host copies of a kernel's info arrays (of sub-envs ``rows``), as the env reports
        them (``ArrayKernel.host_info``)."""
        to_numpy = self.backend.to_numpy
        arrays = {
            key: to_numpy(value) if rows is None else to_numpy(value)[rows]
            for key, value in info.items()
        }
        return dict(self.kernel.host_info(params, arrays))

    def _infos(self, t: KernelTransition, frozen: Any, params: Any) -> ArrayInfos:
        to_numpy = self.backend.to_numpy
        n = self.num_envs
        arrays = self._host_info(params, t.info)
        elapsed = None
        if self._max_episode_steps is not None:
            elapsed = to_numpy(t.elapsed).astype(np.int64)
        skip = None if frozen is None else to_numpy(frozen)
        if not self.autoreset:
            return ArrayInfos(n, arrays, elapsed=elapsed, skip=skip)
        rows = np.flatnonzero(to_numpy(t.done))
        if not len(rows):
            return ArrayInfos(n, arrays, elapsed=elapsed)
        return ArrayInfos(
            n,
            arrays,
            elapsed=elapsed,
            reset=rows,
            final_observations=tree_map(to_numpy, t.final_observation),
            observation_space=self.observation_space,
            reset_arrays=self._host_info(params, t.reset_info, rows),
        )

    def synchronize(self) -> None:
        """Wait until the device has run the calls made so far (the backend's
        ``synchronize``; nothing to wait for on numpy): time a loop of ``step()`` calls up to
        this, as ``sekai bench`` does, or the clock stops while the device is still busy."""
        self._check_open()
        self.backend.synchronize((self._carry, self.last_transition))

    @property
    def frozen(self) -> np.ndarray:
        """Sub-envs that finished with ``autoreset=False`` and wait for ``reset()`` (a copy)."""
        mask = self._frozen_mask()
        if mask is None:
            return np.zeros(self.num_envs, dtype=bool)
        return np.array(self.backend.to_numpy(mask), dtype=bool)

    @property
    def state(self) -> Any:
        """The kernel's state (a dict of backend arrays that later steps do not change), or
        None before the first reset."""
        return None if self._carry is None else self._carry["state"]

    # -- attributes --------------------------------------------------------------------------

    def get_attr(self, name: str) -> list[Any]:
        """A parameter or setting of the kernel as the env reports it (the same value for every
        sub-env: a number as a Python number, arrays read-only, as a native env's), or an
        attribute of this object split like a native env's."""
        self._check_open()
        if name in field_names(self._host_params):
            return [self._param_value(name)] * self.num_envs
        try:
            setting = self.kernel.setting(name)
        except AttributeError:
            return self._sub_env_spaces(name) or split_value(getattr(self, name), self.num_envs)
        return [setting] * self.num_envs

    def _param_value(self, name: str) -> Any:
        """Parameter ``name`` as ``get_attr`` reports it."""
        if name in self._reported:
            return self._reported[name]
        return self.kernel.host_param(name, getattr(self._host_params, name))

    def set_attr(self, name: str, values: Any) -> None:
        """Change a parameter of the kernel for every sub-env (or an existing attribute).

        The new value is checked as the env checks it (the params' dataclass does), and one
        number for a per-element parameter is broadcast, as the env's constructor does. A
        tensor that requires grad is taken detached, as actions are: gradients do not flow into
        the env's parameters.

        Raises:
            ValueError: per-sub-env values for a parameter (kernel parameters are shared), a
                value the env refuses, or one the backend's float dtype cannot run (named with
                the call that set it).
            TypeError: a value of another kind or shape than the parameter's; a list for rng.
            AttributeError: a read-only name, a field the kernel derives, or neither a
                parameter nor an existing attribute.
        """
        self._check_open()
        refuse_rng_per_sub_env(self, name, values, what="a kernel mode's env, like a native one,")
        if name == "max_episode_steps":  # checked, and the compiled functions rebuilt
            self.max_episode_steps = values
            return
        reason = self.kernel.read_only.get(name)
        if reason is not None:
            raise AttributeError(f"{type(self).__name__}.{name} is read-only: {reason}.")
        settable = settable_fields(self.kernel, self._host_params)
        if name not in field_names(self._host_params):
            if not hasattr(self, name):
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute or kernel parameter "
                    f"{name!r}; {type(self.kernel).__name__}'s parameters are "
                    f"{sorted(settable)}, the values its dynamics read: an attribute of the env "
                    "that is none of them (one the kernel derives them from when it is built) "
                    "cannot be set here; set the parameters derived from it."
                )
            self._set_attribute(name, values)  # a space: the sub-envs', as a native env's
            return
        if name not in settable:
            raise AttributeError(
                f"{type(self).__name__}.{name} is not a parameter: {type(self.kernel).__name__} "
                f"sets it when it is built; its parameters are {sorted(settable)}."
            )
        if isinstance(values, list) and len(values) == self.num_envs:
            values = self._shared_value(name, values)
        self.kernel.check_set(name, values)
        changed = replaced_params(self._host_params, {name: values}, current=self._param_value)
        params = read_only_arrays(changed)
        new = getattr(params, name)
        # One number as given (an int stays an int, as a native env keeps it), as the kernel's
        # env reports it; anything else as the checked, read-only array the kernel holds.
        number = len(np.shape(values)) == 0
        reported = self.kernel.host_param(name, _number(values)) if number else new
        try:
            device = device_params(self.kernel, params, self.backend)
        except ValueError as error:  # the driver's float dtype cannot run it (check_params)
            raise ValueError(
                f"{type(self).__name__}.set_attr({name!r}, {values!r}) refused: {error}"
            ) from error
        self._params, self._host_params = device, params
        self._reported[name] = reported
        if not is_dynamic(new):
            self._rebuild()  # a static field is compiled into the step functions

    def _shared_value(self, name: str, values: list[Any]) -> Any:
        """The one value of a per-sub-env list (a kernel's settings are shared)."""
        if any(not structurally_equal(v, values[0]) for v in values[1:]):
            raise ValueError(
                f"set_attr({name!r}, ...) got different values per sub-env; a kernel's "
                "parameters are shared by every sub-env: pass one value."
            )
        return values[0]

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        """Call method ``name`` of this object (or read it) and split the result."""
        self._check_open()
        called = self._sub_env_call(name, args, kwargs)
        if called is not None:
            return called
        value = call_attribute(name, getattr(self, name), args, kwargs)
        return split_value(value, self.num_envs)

    # -- misc --------------------------------------------------------------------------------

    def _modes_with_options(self) -> str:
        """Where to go for reset options: the native mode only where this ID has one, else the
        per-env modes."""
        spec = self.spec
        if spec is not None and spec.vector_entry_point is not None:
            return "use vectorization_mode='native' or 'sync' for reset options"
        return "use vectorization_mode='sync', 'async' or 'proc' for reset options"

    def _label(self) -> str:
        return self.spec.id if self.spec is not None else type(self.kernel).__name__

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._label()}, num_envs={self.num_envs}, "
            f"backend={self.backend.name}, {self.backend.describe()})"
        )

    def _close(self) -> None:
        # Drop everything on the device: the state, the params' copies and, held by the
        # step functions, compiled code (a CUDA graph and its buffers).
        self._carry = None
        self.last_transition = None
        self._params = None
        self._reset_fn = self._step_fn = None


def _number(value: Any) -> Any:
    """One number ``set_attr`` was given, as given (an int, a Decimal, a NumPy scalar), or the
    Python number a 0-d array of any library (NumPy, JAX, torch) holds."""
    if isinstance(value, np.generic) or not hasattr(value, "shape"):
        return value
    return value.item()


def _device_backend(venv: VecEnv) -> KernelBackend | None:
    """The backend of the kernel env under ``venv``'s wrappers when its arrays live outside
    NumPy (JAX, torch), else None."""
    base = venv.unwrapped
    if isinstance(base, KernelVecEnv) and not isinstance(base.backend, NumpyBackend):
        return base.backend
    return None
