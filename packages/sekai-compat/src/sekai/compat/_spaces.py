"""Convert spaces between sekai and gymnasium, keeping Dict key order both ways, and the
actions gymnasium's spaces contain to what sekai's contain."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai.compat._optional import require_gymnasium
from sekai.spaces import (
    Box,
    Dict,
    Discrete,
    MaskedBox,
    MultiBinary,
    MultiDiscrete,
    Sequence,
    Space,
    Tuple,
)

if TYPE_CHECKING:
    import gymnasium

__all__ = ["space_from_gymnasium", "space_to_gymnasium"]


def space_to_gymnasium(space: Space[Any]) -> gymnasium.spaces.Space[Any]:
    """Convert a sekai space to the equivalent gymnasium space.

    Box, Discrete and MultiDiscrete keep their bounds, ``start`` and dtype; a 1-D MultiBinary
    becomes gymnasium's ``MultiBinary(n)`` with an int ``n`` (the form SB3 takes as an action
    space), others keep their shape tuple; a Dict is built from ``(key, space)`` pairs, so
    gymnasium keeps sekai's key order instead of sorting it; a MaskedBox becomes a gymnasium
    Dict of ``values`` and ``mask``, its mask a ``MultiBinary((max_size,))``; a Sequence keeps
    ``stack`` and loses ``max_length`` (gymnasium's Sequence has no length bound). The
    gymnasium space is unseeded.

    Example:
        >>> print(space_to_gymnasium(sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=8)))
        Dict('values': Box(0.0, 1.0, (8, 2), float32), 'mask': MultiBinary((8,)))

    Raises:
        sekai.MissingDependency: gymnasium is not installed.
        TypeError: ``space`` is not a sekai space gymnasium can represent.
    """
    gym = require_gymnasium("space_to_gymnasium()")
    converted: gymnasium.spaces.Space[Any] = _to_gymnasium(gym.spaces, space)
    return converted


def _to_gymnasium(spaces: Any, space: Space[Any]) -> Any:
    if isinstance(space, Box):
        return spaces.Box(space.low, space.high, shape=space.shape, dtype=space.dtype)
    if isinstance(space, Discrete):
        return spaces.Discrete(space.n, start=space.start)
    if isinstance(space, MultiDiscrete):
        return spaces.MultiDiscrete(space.nvec, dtype=space.dtype, start=space.start)
    if isinstance(space, MultiBinary):
        n = space.n
        return spaces.MultiBinary(n[0] if len(n) == 1 else n)
    if isinstance(space, MaskedBox):
        # The mask keeps its tuple n, as the migration page prints the converted MaskedBox.
        mask = spaces.MultiBinary((space.max_size,))
        return spaces.Dict([("values", _to_gymnasium(spaces, space["values"])), ("mask", mask)])
    if isinstance(space, Dict):
        return spaces.Dict([(key, _to_gymnasium(spaces, sub)) for key, sub in space.items()])
    if isinstance(space, Tuple):
        return spaces.Tuple([_to_gymnasium(spaces, sub) for sub in space.spaces])
    if isinstance(space, Sequence):
        return spaces.Sequence(_to_gymnasium(spaces, space.feature_space), stack=space.stack)
    if not isinstance(space, Space):
        raise TypeError(
            f"space_to_gymnasium() expects a sekai space, got {type(space).__name__}. "
            "To convert a gymnasium space to sekai, use space_from_gymnasium()."
        )
    raise TypeError(
        f"space_to_gymnasium() cannot convert {space!r}: gymnasium has no equivalent of "
        f"{type(space).__name__}. Wrap the env in an ObservationWrapper or ActionWrapper that "
        "maps it to Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple or Sequence."
    )


def space_from_gymnasium(space: gymnasium.spaces.Space[Any]) -> Space[Any]:
    """Convert a gymnasium space to the equivalent sekai space.

    The inverse of ``space_to_gymnasium``: Dict key order is kept as gymnasium holds it, a
    Sequence comes back with ``max_length=None``, and the Dict of ``values`` and ``mask`` that a
    MaskedBox became comes back as a plain sekai Dict. The sekai space is unseeded.

    Raises:
        sekai.MissingDependency: gymnasium is not installed.
        TypeError: a gymnasium space sekai has no equivalent for (Text, Graph, OneOf, a
            custom space, or a Box of a dtype sekai's Box refuses, such as bool), naming it.
    """
    gym = require_gymnasium("space_from_gymnasium()")
    return _from_gymnasium(gym.spaces, space)


def _from_gymnasium(spaces: Any, space: Any) -> Space[Any]:
    if isinstance(space, spaces.Box):
        if space.dtype.kind not in "iuf":
            raise _BoxDtypeError(space)
        return Box(space.low, space.high, shape=space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Discrete):
        return Discrete(int(space.n), start=int(space.start))
    if isinstance(space, spaces.MultiDiscrete):
        return MultiDiscrete(space.nvec, dtype=space.dtype, start=space.start)
    if isinstance(space, spaces.MultiBinary):
        return MultiBinary(tuple(int(n) for n in space.shape))
    if isinstance(space, spaces.Dict):
        return Dict({key: _from_gymnasium(spaces, sub) for key, sub in space.spaces.items()})
    if isinstance(space, spaces.Tuple):
        return Tuple([_from_gymnasium(spaces, sub) for sub in space.spaces])
    if isinstance(space, spaces.Sequence):
        return Sequence(_from_gymnasium(spaces, space.feature_space), stack=space.stack)
    if not isinstance(space, spaces.Space):
        raise TypeError(
            f"space_from_gymnasium() expects a gymnasium space, got {type(space).__name__}. "
            "To convert a sekai space to gymnasium, use space_to_gymnasium()."
        )
    raise TypeError(
        f"space_from_gymnasium() cannot convert gymnasium's {space!r}: sekai has no "
        f"{type(space).__name__} space. Supported: Box, Discrete, MultiDiscrete, MultiBinary, "
        "Dict, Tuple and Sequence."
    )


_GYMNASIUM_BOX_DTYPE_ADVICE = (
    "Give the gymnasium env an integer dtype before converting it: "
    "gymnasium.wrappers.DtypeObservation(env, np.int8) for an observation space (on each "
    "sub-env, before vectorising, for a vector env), a gymnasium.ActionWrapper for an action "
    "space."
)


class _BoxDtypeError(TypeError):
    """A legal gymnasium Box (a bool one, say) that sekai's Box cannot hold. The message ends
    with what to do about a gymnasium env; ``reason`` is the message without it, for a bridge
    that converts another kind of env to give its own advice (see ``convert_space``)."""

    def __init__(self, space: Any) -> None:
        self.reason = (
            f"space_from_gymnasium() cannot convert gymnasium's {space!r}: sekai's Box takes "
            f"integer and floating dtypes only, got {space.dtype}."
        )
        super().__init__(f"{self.reason} {_GYMNASIUM_BOX_DTYPE_ADVICE}")


def action_converter(space: Space[Any]) -> Callable[[Any], Any] | None:
    """What gives an action of ``space`` the form sekai's space contains where gymnasium's
    converted space contains more, or None when ``space`` has no such part, so a bridge pays
    nothing per step. Two parts (``space`` itself, or parts of a Dict or Tuple) differ:

    - a MultiBinary: gymnasium's contains arrays of 0.0/1.0 floats (SB3 sends them); they
      become the space's integers;
    - a MaskedBox: gymnasium's Dict of ``values`` and ``mask`` contains any values in empty
      rows (its samples have them), sekai's holds ``fill_value`` there; the empty rows, which
      carry nothing, are set to it (a copy: the caller's array is left alone).

    It works alike on a batch of actions (leading axes), as a gymnasium vector env sends them.
    Anything else passes as it is, for the sekai env to judge."""
    if isinstance(space, MultiBinary):
        return functools.partial(_binary_action, dtype=space.dtype)
    if isinstance(space, MaskedBox):
        return functools.partial(_masked_box_action, space=space)
    if isinstance(space, Dict):
        keyed = {key: action_converter(sub) for key, sub in space.items()}
        parts = {key: convert for key, convert in keyed.items() if convert is not None}
        return functools.partial(_dict_action, parts=parts) if parts else None
    if isinstance(space, Tuple):
        each = [action_converter(sub) for sub in space.spaces]
        return functools.partial(_tuple_action, parts=each) if any(each) else None
    return None


def _binary_action(action: Any, dtype: np.dtype[Any]) -> Any:
    """A float array of 0s and 1s as ``dtype`` integers; anything else as it is."""
    floats = isinstance(action, np.ndarray) and action.dtype.kind == "f"
    if floats and np.all((action == 0) | (action == 1)):
        return action.astype(dtype)
    return action


def _masked_box_action(action: Any, space: MaskedBox) -> Any:
    """A MaskedBox action (or batch) with its empty rows set to the fill value and its mask as
    the space's integers; anything that is no such action (a wrong shape, a mask of other
    numbers) as it is."""
    if not isinstance(action, Mapping) or set(action) != {"values", "mask"}:
        return action
    mask = _binary_action(np.asarray(action["mask"]), np.dtype(np.int8))  # MaskedBox's mask
    values = np.asarray(action["values"])
    fits = mask.ndim >= 1 and mask.shape[-1] == space.max_size
    if not fits or values.shape != mask.shape + space.element_shape or mask.dtype.kind not in "biu":
        return action
    empty = mask == 0
    if np.any(empty):
        values = values.copy()
        values[empty] = space.fill_value
    return {**action, "values": values, "mask": mask}


def _dict_action(action: Any, parts: dict[Any, Callable[[Any], Any]]) -> Any:
    if not isinstance(action, Mapping):
        return action
    return {key: parts[key](value) if key in parts else value for key, value in action.items()}


def _tuple_action(action: Any, parts: list[Callable[[Any], Any] | None]) -> Any:
    if not isinstance(action, (tuple, list)) or len(action) != len(parts):
        return action
    converted = [part if convert is None else convert(part) for convert, part in zip(parts, action)]
    return converted if isinstance(action, list) else tuple(converted)


def convert_space(
    caller: str,
    convert: Callable[[Any], Any],
    space: Any,
    which: str,
    box_dtype_advice: str | None = None,
) -> Any:
    """``convert(space)``, its TypeError naming ``caller`` and ``which`` space failed (e.g.
    ``"the observation space of agent 'p1'"``): the converter's own names neither. For a Box
    of a dtype sekai refuses, ``box_dtype_advice`` replaces the advice written for a gymnasium
    env (for a caller that converts another kind of env)."""
    try:
        return convert(space)
    except TypeError as exc:
        message = str(exc)
        if box_dtype_advice is not None and isinstance(exc, _BoxDtypeError):
            message = f"{exc.reason} {box_dtype_advice}"
        raise TypeError(f"{caller}: cannot convert {which}: {message}") from exc
