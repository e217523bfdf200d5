"""What a kernel's ``reset`` and ``step`` return, checked against its observation space and its
state: the drivers raise the issues found (``check_reset``, ``check_step``), and
``check_kernel_vec_env`` (``sekai check --mode``) reports its own in the same words
(``has_shape``, ``has_dtype``, ``has_keys``).

The checks read shapes and dtypes only, which are static: JAX runs them when it traces a call,
``torch.compile`` and a CUDA graph when they capture it, and the eager drivers (numpy, torch)
at the calls of each kind until one passes (``FirstCalls``), so that no step pays for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sekai.spaces import Dict, Space, Tuple
from sekai.spaces._kinds import ARRAY_SPACES

__all__ = [
    "FirstCalls",
    "check_reset",
    "check_step",
    "has_dtype",
    "has_keys",
    "has_shape",
    "observation_issue",
]

Array = Any


def has_shape(what: str, shape: tuple[int, ...], want: tuple[int, ...], whose: str) -> str:
    """``"{what} has shape {shape}, {whose} {want}"`` (``whose``: ``"expected"``, ``"the
    space's is"``)."""
    return f"{what} has shape {shape}, {whose} {want}"


def has_dtype(what: str, dtype: Any, want: Any, whose: str = "expected") -> str:
    """``"{what} has dtype {dtype}, {whose} {want}"``."""
    return f"{what} has dtype {_dtype_name(dtype)}, {whose} {_dtype_name(want)}"


def has_keys(what: str, keys: Iterable[str], whose: str, want: Iterable[str]) -> str:
    """``"{what} has keys [...], {whose} has [...]"``."""
    return f"{what} has keys {sorted(keys)}, {whose} has {sorted(want)}"


def _dtype_name(dtype: Any) -> str:
    """A dtype as its name (``float32``) in any library (numpy, JAX, torch)."""
    return str(dtype).removeprefix("torch.") if not isinstance(dtype, str) else dtype


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(getattr(value, "shape", ()))


def observation_issue(space: Space[Any], obs: Any, n: int, what: str) -> str | None:
    """How a batch of ``n`` observations (arrays of any library) is not structured and shaped
    as ``space``'s batch is, or None (dtypes are the driver's cast; spaces of no arrays are not
    checked)."""
    if isinstance(space, Dict):
        if not isinstance(obs, Mapping):
            return f"{what} is a {type(obs).__name__}, the space's is a dict"
        if obs.keys() != space.spaces.keys():
            return has_keys(what, obs, "the space's", space.spaces)
        for key, sub in space.spaces.items():
            issue = observation_issue(sub, obs[key], n, f"{what}[{key!r}]")
            if issue is not None:
                return issue
        return None
    if isinstance(space, Tuple):
        if not isinstance(obs, tuple) or len(obs) != len(space.spaces):
            got = f"a tuple of {len(obs)}" if isinstance(obs, tuple) else f"a {type(obs).__name__}"
            return f"{what} is {got}, the space's is a tuple of {len(space.spaces)}"
        for index, (sub, part) in enumerate(zip(space.spaces, obs)):
            issue = observation_issue(sub, part, n, f"{what}[{index}]")
            if issue is not None:
                return issue
        return None
    if isinstance(space, ARRAY_SPACES):
        want = (n, *space.shape)
        if _shape(obs) != want:
            return has_shape(what, _shape(obs), want, "the space's is")
    return None


def _state_issue(state: Mapping[str, Array], given: Mapping[str, Array], call: str) -> str | None:
    """How the state ``call`` returned differs in keys or shapes from the one it was given."""
    if state.keys() != given.keys():
        return has_keys(f"the state {call} returned", state, "the state it was given", given)
    for key, value in given.items():
        if _shape(state[key]) != _shape(value):
            shape, want = _shape(state[key]), _shape(value)
            return has_shape(
                f"state[{key!r}] from {call}", shape, want, "the state it was given has"
            )
    return None


def _flag_issue(xp: Any, what: str, value: Array, n: int, flag: bool) -> str | None:
    """How ``value`` is no ``(n,)`` array (of bools when it is a ``flag``), or None."""
    if _shape(value) != (n,):
        return has_shape(what, _shape(value), (n,), "expected")
    if flag and value.dtype != xp.bool:
        return has_dtype(what, value.dtype, "bool")
    return None


def _refuse(kernel: Any, call: str, issue: str | None) -> None:
    if issue is not None:
        raise ValueError(
            f"{type(kernel).__name__}.{call} returned what no driver can run: {issue} (a "
            "kernel's arrays have a leading sub-env axis and static shapes, its observations "
            "are shaped as its observation_space is, its state keeps its keys and shapes, and "
            "terminated and truncated are bools)."
        )


def check_reset(
    kernel: Any,
    state: Mapping[str, Array],
    obs: Any,
    n: int,
    given: Mapping[str, Array] | None = None,
) -> None:
    """Refuse what ``kernel.reset`` returned for ``n`` sub-envs: observations not shaped as
    the observation space says, or (given the state it reset) a state of other keys or shapes.

    Raises:
        ValueError: naming the kernel, the output, what it had and what was expected.
    """
    issue = observation_issue(kernel.observation_space, obs, n, "the observation")
    if issue is None and given is not None:
        issue = _state_issue(state, given, "reset")
    _refuse(kernel, "reset", issue)


def check_step(
    kernel: Any,
    xp: Any,
    given: Mapping[str, Array],
    outputs: tuple[Any, ...],
    n: int,
) -> None:
    """Refuse what ``kernel.step`` returned (``outputs``) for ``n`` sub-envs from the state
    ``given``: a state of other keys or shapes, observations not shaped as the observation
    space says, rewards of another shape than ``(n,)``, flags that are no ``(n,)`` bools.

    Raises:
        ValueError: naming the kernel, the output, what it had and what was expected.
    """
    state, obs, reward, terminated, truncated, _ = outputs
    issue = _state_issue(state, given, "step")
    if issue is None:
        issue = observation_issue(kernel.observation_space, obs, n, "the observation")
    for what, value, flag in (
        ("rewards", reward, False),
        ("terminated", terminated, True),
        ("truncated", truncated, True),
    ):
        if issue is None:
            issue = _flag_issue(xp, what, value, n, flag)
    _refuse(kernel, "step", issue)


class FirstCalls:
    """The kinds of call (``"step"``, ``"reset"``) that an eager driver has checked: a kernel
    runs the same code at every call (no Python branch on array values, static shapes), so
    each kind is checked until it passes once."""

    __slots__ = ("_passed",)

    def __init__(self) -> None:
        self._passed: set[str] = set()

    def pending(self, kind: str) -> bool:
        """Whether no call of this kind has passed its check yet."""
        return kind not in self._passed

    def passed(self, kind: str) -> None:
        """Record that a call of this kind passed its check."""
        self._passed.add(kind)
