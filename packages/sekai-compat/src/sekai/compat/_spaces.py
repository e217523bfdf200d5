"""Convert spaces between sekai and gymnasium, keeping Dict key order both ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sekai.compat._optional import require_gymnasium
from sekai.spaces import (
    Box,
    Dict,
    Discrete,
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

    Box, Discrete and MultiDiscrete keep their bounds, ``start`` and dtype; MultiBinary passes
    its tuple ``n``; a Dict (a MaskedBox too, which becomes a gymnasium Dict of ``values`` and
    ``mask``) is built from ``(key, space)`` pairs, so gymnasium keeps sekai's key order instead
    of sorting it; a Sequence keeps ``stack`` and loses ``max_length`` (gymnasium's Sequence
    has no length bound). The gymnasium space is unseeded.

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
        return spaces.MultiBinary(tuple(space.n))
    if isinstance(space, Dict):  # MaskedBox included: a Dict of values and mask
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
        TypeError: a gymnasium space sekai has no equivalent for (Text, Graph, OneOf, or a
            custom space), naming it.
    """
    gym = require_gymnasium("space_from_gymnasium()")
    return _from_gymnasium(gym.spaces, space)


def _from_gymnasium(spaces: Any, space: Any) -> Space[Any]:
    if isinstance(space, spaces.Box):
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


def convert_space(caller: str, convert: Callable[[Any], Any], space: Any, which: str) -> Any:
    """``convert(space)``, its TypeError naming ``caller`` and ``which`` space failed (e.g.
    ``"the observation space of agent 'p1'"``): the converter's own names neither."""
    try:
        return convert(space)
    except TypeError as exc:
        raise TypeError(f"{caller}: cannot convert {which}: {exc}") from exc
