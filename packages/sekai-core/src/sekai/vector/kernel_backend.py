"""KernelBackend: what a kernel driver needs from an array library (numpy here; JAX, torch in
their distributions), and the vectorised action check every device backend shares."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai.error import InvalidAction
from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Sequence, Space, Tuple
from sekai.spaces._kinds import ARRAY_SPACES
from sekai.vector._contract.actions import ignored_action
from sekai.vector.kernel import Draw
from sekai.vector.kernel_outputs import FirstCalls
from sekai.vector.kernel_step import (
    KernelReset,
    KernelTransition,
    When,
    draw_all,
    host_when,
    initial,
    transition,
)

if TYPE_CHECKING:
    from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = [
    "DeviceActions",
    "GeneratorBackend",
    "KernelBackend",
    "NumpyBackend",
    "bad_action_rows",
    "bool_dtype",
    "check_action_shape",
    "check_device_actions",
    "index_dtype",
    "kernel_actions",
    "never_valid",
    "refuse_never_valid",
]

Array = Any
StepFn = Callable[[Any, Any, Array], KernelTransition]
ResetFn = Callable[[Any], KernelReset]


class KernelBackend(abc.ABC):
    """An array library as a kernel driver uses it: namespace, dtypes, RNG, compilation.

    Attributes:
        name: the vectorization mode (``"numpy"``, ``"jax"``, ``"torch"``).
        xp: the array namespace handed to kernels.
        float_dtype: the float dtype of parameters, draws, rewards (an ``xp`` dtype).
        device: where arrays live (None: the library's default).
    """

    name: str
    xp: Any
    float_dtype: Any
    device: Any = None

    @abc.abstractmethod
    def convert(self, value: Any) -> Array:
        """A float or numpy array as an ``xp`` array (floats in ``float_dtype``)."""

    @abc.abstractmethod
    def to_numpy(self, value: Array) -> np.ndarray:
        """A host copy of an ``xp`` array."""

    @abc.abstractmethod
    def seed(self, generator: np.random.Generator) -> None:
        """(Re)seed the backend's RNG from the driver's numpy generator (``reset(seed=...)``)."""

    def numpy_dtype(self, dtype: np.dtype[Any]) -> Any:
        """The ``xp`` dtype for a numpy dtype (float64 narrowed to ``float_dtype``)."""
        return dtype

    @abc.abstractmethod
    def actions(self, actions: Any) -> Array:
        """A user's batch of actions as an ``xp`` array on the backend's device."""

    def is_device_array(self, value: Any) -> bool:
        """Whether ``value`` is an array of this backend's library, whose actions are checked
        where they are (``DeviceActions``); anything else is host data, checked as a native
        env checks it. numpy's: none is (its arrays are host data)."""
        return False

    @abc.abstractmethod
    def build_reset(self, env: KernelVecEnv) -> ResetFn:
        """``params -> KernelReset`` for ``env`` (drawing from the backend's RNG)."""

    @abc.abstractmethod
    def build_step(self, env: KernelVecEnv) -> StepFn:
        """``(params, carry, action) -> KernelTransition`` for ``env``."""

    def call_kernel(self, method: Callable[..., Any], args: tuple[Any, ...], checked: bool) -> Any:
        """``method(*args)``: a kernel's ``reset`` or ``step`` as this backend calls it (the
        ``call`` of ``initial`` and ``transition``); ``checked``: a call whose outputs are
        checked, as the first of its kind (numpy then hands the kernel read-only arrays)."""
        return method(*args)

    def conditional(self) -> Callable[..., Any]:
        """The ``when(pred, yes, no, operand)`` the driver's autoreset runs under: a Python
        branch on the host (``host_when``); JAX traces it with ``lax.cond``."""
        return host_when

    def compiled(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` compiled for this backend (as it is on numpy; jitted on JAX)."""
        return fn

    def check_ready(self) -> None:  # noqa: B027 - a no-op unless overridden
        """Raise if the library's settings changed, since the backend was built, to ones it
        cannot run under (JAX: ``jax_enable_x64`` turned off under a float64 env). Every reset
        and step calls it first, on the host: it must be cheap."""

    def synchronize(self, values: Any) -> None:  # noqa: B027 - a no-op unless overridden
        """Wait until ``values`` (arrays of this backend, or a tree of them) are computed.

        A device library may return from a call before its work is done (JAX dispatches
        asynchronously; so does torch on CUDA): a timer stops only after this. The host
        computes numpy's arrays before returning them, so there is nothing to wait for.
        """

    def describe(self) -> str:
        """The dtype and device, for ``repr``."""
        device = "" if self.device is None else f", device={self.device}"
        return f"{np.dtype(self.float_dtype).name}{device}"

    def __getstate__(self) -> dict[str, Any]:
        # A backend holds its array library, and on a device its RNG state and compiled code:
        # one that can be rebuilt on the other side says how (NumpyBackend).
        raise TypeError(
            f"A KernelVecEnv on the {self.name} backend ({type(self).__name__}) cannot be "
            "copied or pickled: the backend holds the array library and its device state. Make "
            "another env instead (sekai.make_vec(..., vectorization_mode="
            f"{self.name!r}) or KernelVecEnv(kernel, num_envs, backend=...)); the numpy backend "
            "can be copied and pickled."
        )


class GeneratorBackend(KernelBackend):
    """A backend drawing its random numbers from a stateful generator (numpy's ``Generator``,
    a ``torch.Generator``) in Python code around the kernel's calls: numpy, torch.

    Subclasses implement ``_sample``; the step draws the reset noise only when the reset runs
    (``reset_noise``), in the steps where an episode ended with ``conditional()``'s ``when``.
    """

    @abc.abstractmethod
    def _sample(self, draw: Draw, shape: tuple[int, ...]) -> Array:
        """``shape`` random numbers of ``draw``'s distribution, in ``float_dtype``."""

    def reset_noise(
        self, draws: tuple[Draw, ...], num_envs: int
    ) -> Callable[[Array], Mapping[str, Array]]:
        """The reset's random numbers as a function of the ``done`` mask (every sub-env's)."""
        return lambda done: draw_all(draws, num_envs, self._sample)

    def build_reset(self, env: KernelVecEnv) -> ResetFn:
        kernel, n = env.kernel, env.num_envs

        def reset(params: Any) -> KernelReset:
            return initial(
                kernel,
                self.xp,
                params,
                draw_all(kernel.reset_draws(params), n, self._sample),
                n,
                autoreset=env.autoreset,
                observation_dtype=env.observation_dtype,
                device=self.device,
                call=self.call_kernel,
            )

        return reset

    def build_step(self, env: KernelVecEnv) -> StepFn:
        return self.step_function(env, self.conditional())

    def step_function(self, env: KernelVecEnv, when: When | None, eager: bool = True) -> StepFn:
        """The Python step of ``env`` with the autoreset under ``when`` (None: the reset runs
        every step, branch-free, as ``transition`` says). ``eager``: it runs as it is, and
        checks the kernel's calls of each kind until one passes; else it is compiled or
        captured, and checks every call, which tracing runs once."""
        kernel, n = env.kernel, env.num_envs
        checked = FirstCalls() if eager else None

        def step(params: Any, carry: Any, action: Array) -> KernelTransition:
            return transition(
                kernel,
                self.xp,
                params,
                carry,
                action,
                draw_all(kernel.step_draws(params), n, self._sample),
                self.reset_noise(kernel.reset_draws(params), n),
                max_episode_steps=env._max_episode_steps,
                autoreset=env.autoreset,
                observation_dtype=env.observation_dtype,
                when=when,
                call=self.call_kernel,
                checked=checked,
            )

        return step


def bad_action_rows(xp: Any, space: Space[Any], actions: Array, index: Any = None) -> Array | None:
    """``(num_envs,)`` bool of sub-envs whose action is outside ``space``, computed on the
    device, or None when the space's values need no check (bools for a MultiBinary or a Box,
    an int Box). ``index`` is the signed dtype a Discrete or MultiDiscrete index is compared in
    when ``actions`` are unsigned integers (``index_dtype``'s; None: as they are).

    Only array spaces (Box, Discrete, MultiDiscrete, MultiBinary) are supported by kernels.
    """
    n = actions.shape[0]
    if never_valid(xp, space, actions.dtype):
        return xp.ones((n,), dtype=xp.bool)
    if actions.dtype == xp.bool:
        return None  # a MultiBinary's values, or a Box's numbers 1 and 0
    if isinstance(space, Discrete):
        return _outside(xp, actions, space.start, space.start + space.n, index)
    if isinstance(space, Box):
        if not xp.isdtype(actions.dtype, "real floating"):
            return None
        bad = ~xp.isfinite(actions)
    elif isinstance(space, MultiDiscrete):
        # copies: the space's arrays are read-only, which torch warns about when sharing them
        low = xp.asarray(np.array(space.start), device=_device(actions))
        high = low + xp.asarray(np.array(space.nvec), device=_device(actions))
        bad = _outside(xp, actions, low, high, index)
    elif isinstance(space, MultiBinary):
        bad = (actions != 0) & (actions != 1)
    else:
        raise TypeError(
            f"kernel drivers check actions of Box, Discrete, MultiDiscrete and MultiBinary "
            f"spaces, got {type(space).__name__}; pass check_actions=False to skip the check."
        )
    return xp.any(xp.reshape(bad, (n, -1)), axis=1)


def _outside(xp: Any, actions: Array, low: Any, high: Any, index: Any) -> Array:
    """Where the indices ``actions`` are not integers in ``[low, high)`` (fractions, NaN)."""
    if index is not None and xp.isdtype(actions.dtype, "unsigned integer"):
        # Compared as the signed index dtype: torch implements no comparison of its uint16,
        # uint32 and uint64. A value too large for it wraps to a negative one; no unsigned
        # value is negative, and none that large is in a space's range.
        signed = xp.astype(actions, index)
        return (signed < 0) | (signed < low) | (signed >= high)
    bad = (actions < low) | (actions >= high)
    if xp.isdtype(actions.dtype, "real floating"):
        bad = bad | (actions != xp.floor(actions))  # fractions, and NaN
    return bad


def refuse_never_valid(xp: Any, space: Space[Any], dtype: Any) -> None:
    """Raise a ``TypeError`` for a batch of ``dtype`` that holds no action of ``space``
    (``never_valid``): what the functional API and the unchecked device path do, from the
    dtype alone (no device sync)."""
    if never_valid(xp, space, dtype):
        raise TypeError(
            f"actions of {space!r} cannot be of dtype {dtype}; pass integers (or integral "
            "floats) for indices, numbers for a Box."
        )


def never_valid(xp: Any, space: Space[Any], dtype: Any) -> bool:
    """Whether no array of ``dtype`` holds a value of ``space``, as the host check rules: a
    bool is no index (a MultiBinary's value, and a Box's number 1 or 0), and a complex number is
    no space's value (known from the dtype alone: no device sync)."""
    if dtype == xp.bool:
        return not isinstance(space, (Box, MultiBinary))
    return not xp.isdtype(dtype, ("integral", "real floating"))


def index_dtype(space: Space[Any], numpy_dtype: Callable[[np.dtype[Any]], Any]) -> Any:
    """The dtype a kernel indexes with a Discrete or MultiDiscrete action in: the space's, as
    ``numpy_dtype`` (a backend's) holds it; None for other spaces, whose actions pass as given."""
    if isinstance(space, (Discrete, MultiDiscrete)):
        return numpy_dtype(np.dtype(space.dtype))
    return None


def bool_dtype(space: Space[Any], float_dtype: Any) -> Any:
    """The dtype a Box's bool actions become before a kernel sees them: ``float_dtype`` (the
    driver's), whose 1.0 and 0.0 the host hands envs (``bools_as_floats``); None for other
    spaces (a MultiBinary's bools pass as they are)."""
    return float_dtype if isinstance(space, Box) else None


def kernel_actions(xp: Any, actions: Array, index: Any, bools: Any) -> Array:
    """``actions`` as a kernel takes them: cast to ``index`` (``index_dtype``'s; None: as
    they are), so that integral floats and other integer widths act as the space's integers,
    and bools to ``bools`` (``bool_dtype``'s; None: as they are), a Box's numbers 1 and 0."""
    if index is not None and actions.dtype != index:
        return xp.astype(actions, index)
    if bools is not None and actions.dtype == xp.bool:
        return xp.astype(actions, bools)
    return actions


def _device(array: Array) -> Any:
    return getattr(array, "device", None)


def check_action_shape(space: Space[Any], num_envs: int, actions: Array) -> None:
    """Raise like the native envs for a batch of an array space's actions whose shape is not
    ``(num_envs, *space.shape)`` (the shape is known on the host: no device sync)."""
    if not isinstance(space, ARRAY_SPACES):
        return
    expected = (num_envs, *tuple(space.shape or ()))
    if tuple(actions.shape) != expected:
        raise ValueError(
            f"actions must have shape {expected} ({num_envs} sub-envs, action space {space!r}), "
            f"got shape {tuple(actions.shape)}."
        )


def check_device_actions(
    backend: KernelBackend, space: Space[Any], actions: Array, frozen: Array | None
) -> None:
    """Raise like the native envs for a batch (of the right shape) holding an invalid value:
    ``InvalidAction`` names the first such sub-env that is not frozen (one host sync of a
    single bool when every value is valid)."""
    bad = bad_action_rows(backend.xp, space, actions, index=index_dtype(space, backend.numpy_dtype))
    if bad is None:
        return
    if frozen is not None:
        bad = bad & ~frozen
    if not bool(backend.to_numpy(backend.xp.any(bad))):
        return
    rows = backend.to_numpy(bad)
    index = int(np.flatnonzero(rows)[0])
    value = backend.to_numpy(actions[index])
    # A scalar as a Python number, as the host check shows it ("Action 2").
    raise InvalidAction(value.item() if value.ndim == 0 else value, space, index=index)


class DeviceActions:
    """The host check's rules (``ActionChecker.check``) for batches of actions that are device
    arrays of ``backend``, with no host sync but the value check's one bool:

    - the shape is checked (``check_action_shape``) and, with ``check``, the values of the
      sub-envs that are not frozen (``check_device_actions``); without it, a dtype that holds
      no action of the space (``refuse_never_valid``: bools for indices, complex numbers);
    - the ignored actions of frozen sub-envs become a valid value (``ignored_action``), so that
      an out-of-range or NaN index never reaches the kernel;
    - Discrete and MultiDiscrete actions of another dtype (integral floats, other integer
      widths) are cast to the space's dtype (as the backend holds it), which kernels index with;
      a Box's bools to the backend's float dtype (``kernel_actions``).
    """

    def __init__(self, backend: KernelBackend, space: Space[Any], num_envs: int) -> None:
        if isinstance(space, (Dict, Tuple, Sequence)):  # a batch of them is no one array
            raise TypeError(
                "a kernel's action_space must be a space of arrays (Box, Discrete, "
                f"MultiDiscrete or MultiBinary), got {type(space).__name__}."
            )
        self.backend = backend
        self.space = space
        self.num_envs = num_envs
        fill = ignored_action(space)
        # A MultiDiscrete's lowest values are an array: on the device once, not every step.
        self.fill = fill if fill is None or np.ndim(fill) == 0 else backend.convert(fill)
        self.index_dtype = index_dtype(space, backend.numpy_dtype)
        self.bool_dtype = bool_dtype(space, backend.float_dtype)

    def prepare(self, actions: Array, frozen: Array | None, check: bool) -> Array:
        """``actions`` (an ``xp`` array) checked and made ready for the kernel.

        Raises:
            ValueError: a batch of the wrong shape.
            sekai.InvalidAction: with ``check``, an invalid value for a sub-env that is not
                frozen.
            TypeError: without ``check``, a dtype that holds no action of the space (bools
                for indices, complex numbers), as the functional API refuses it.
        """
        xp = self.backend.xp
        check_action_shape(self.space, self.num_envs, actions)  # free: no sync
        if check:
            check_device_actions(self.backend, self.space, actions, frozen)
        else:  # the dtype is known on the host: refused without a sync
            refuse_never_valid(xp, self.space, actions.dtype)
        if frozen is not None and self.fill is not None:
            rows = xp.reshape(frozen, (self.num_envs,) + (1,) * (len(actions.shape) - 1))
            actions = xp.where(rows, self.fill, actions)
        return kernel_actions(xp, actions, self.index_dtype, self.bool_dtype)


class NumpyBackend(GeneratorBackend):
    """numpy: the reference driver. Reset noise is drawn for the finished rows only, in row
    order, so a kernel whose draws are those of its native env consumes the generator exactly
    as that env does (a native env that draws otherwise, e.g. in blocks, matches it only with
    the same draws injected).

    Args:
        dtype: the float dtype (float64 by default).
    """

    name = "numpy"

    def __init__(self, dtype: Any = np.float64) -> None:
        self.xp = np
        self.float_dtype = np.dtype(dtype)
        if self.float_dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise TypeError(
                "dtype must be float32 or float64 (the float dtypes NumPy's random generator "
                f"draws in), got {self.float_dtype}."
            )
        self.rng: np.random.Generator = np.random.default_rng()

    def convert(self, value: Any) -> Array:
        """``value`` as a read-only array (floats in ``float_dtype``): the params a kernel is
        handed, which it must not change in place (``call_kernel``)."""
        array = np.asarray(value)
        return _read_only(array.astype(self.float_dtype) if array.dtype.kind == "f" else array)

    def to_numpy(self, value: Array) -> np.ndarray:
        return np.asarray(value)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["xp"]  # a module: restored by __setstate__
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.xp = np

    def seed(self, generator: np.random.Generator) -> None:
        self.rng = generator  # the driver's own generator: the native envs' stream

    def actions(self, actions: Any) -> Array:
        return np.asarray(actions)

    def call_kernel(self, method: Callable[..., Any], args: tuple[Any, ...], checked: bool) -> Any:
        """``method(*args)``, in a ``checked`` call with the arrays handed over read-only, so
        that a kernel that updates one in place (``x += d``, ``x[mask] = v``), which torch
        runs on with wrong data, fails here, at that line, with the rule named. A kernel runs
        the same code at every call (no Python branch on array values): the driver checks
        each kind of call until one passes, and the other steps pay nothing. The driver's own
        arrays are handed over as read-only views (``_read_only``); params are read-only since
        ``convert``."""
        if not checked:
            return method(*args)
        try:
            return method(*map(_read_only, args))
        except ValueError as error:
            if str(error) not in _READ_ONLY_WRITES:  # the kernel's own error, as it is
                raise
            owner = getattr(method, "__self__", None)
            name = f"{type(owner).__name__}.{getattr(method, '__name__', 'kernel')}"
            raise ValueError(
                f"{name} wrote into an array it was given (its state, draws, params, mask or "
                "actions): kernels make no in-place updates (x += d, x[mask] = v); build new "
                "arrays (x = x + d, xp.where(mask, v, x)). The numpy driver hands kernels "
                "read-only arrays so that this fails here; torch would run on, changing arrays "
                f"that others still hold (the previous state, envs.state). ({error})"
            ) from error

    def _sample(self, draw: Draw, shape: tuple[int, ...]) -> np.ndarray:
        if draw.distribution == "uniform":
            return self.rng.random(shape, dtype=self.float_dtype)
        return self.rng.standard_normal(shape, dtype=self.float_dtype)

    def reset_noise(
        self, draws: tuple[Draw, ...], num_envs: int
    ) -> Callable[[Array], Mapping[str, Array]]:
        def finished_rows(done: np.ndarray) -> Mapping[str, Array]:
            rows = np.flatnonzero(done)
            full = {}
            for draw in draws:
                value = np.zeros((num_envs, *draw.shape), dtype=self.float_dtype)
                value[rows] = self._sample(draw, (len(rows), *draw.shape))
                full[draw.name] = value
            return full

        return finished_rows


# What NumPy raises for a write into a read-only array: an assignment (x[m] = v) or an
# in-place operation (x += d, np.add(x, d, out=x)).
_READ_ONLY_WRITES = frozenset({"assignment destination is read-only", "output array is read-only"})


def _read_only(value: Any) -> Any:
    """``value`` as a kernel is handed it by the numpy driver: an array as a read-only view,
    a dict (the state, the draws) as a new dict of such views, anything else as it is. Views:
    the arrays themselves (also in ``envs.state`` and infos) keep their flags."""
    # dict and ndarray, not Mapping: their C type checks cost nothing next to an ABC's
    if isinstance(value, dict):
        return {key: _read_only(item) for key, item in value.items()}
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()
        value.setflags(write=False)
    return value
