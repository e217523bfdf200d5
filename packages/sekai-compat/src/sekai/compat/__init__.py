"""Bridges between sekai and gymnasium, Stable-Baselines3 and PettingZoo, single and vector.

``import sekai.compat`` works without any of those libraries: each name is imported on first
use, and a function whose library is missing raises ``sekai.MissingDependency`` naming the
install command (``pip install 'sekai-compat[gymnasium]'``, ``'sekai-compat[pettingzoo]'`` or
``pip install stable-baselines3``).

| sekai -> other | other -> sekai |
|---|---|
| ``to_gymnasium(env)`` | ``from_gymnasium(gym_env)``, ``GymnasiumRenderer`` |
| ``space_to_gymnasium(space)`` | ``space_from_gymnasium(gym_space)`` |
| ``to_pettingzoo(multi_agent_env)`` | ``from_pettingzoo(parallel_env)`` |
| ``to_sb3(vec)`` (a Stable-Baselines3 VecEnv) | |
| ``to_gymnasium_vector(vec)`` | ``from_gymnasium_vector(venv)`` |
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The classes that subclass an optional library's base class (_NEEDS_LIBRARY) are left out, so
# that ``from sekai.compat import *`` works without those libraries too.
__all__ = [
    "GymnasiumRenderer",
    "GymnasiumToSekai",
    "GymnasiumVectorToSekai",
    "PettingZooToSekai",
    "from_gymnasium",
    "from_gymnasium_vector",
    "from_pettingzoo",
    "space_from_gymnasium",
    "space_to_gymnasium",
    "to_gymnasium",
    "to_gymnasium_vector",
    "to_pettingzoo",
    "to_sb3",
]

# name -> defining module. None of these modules imports an optional library at import time.
_LAZY: dict[str, str] = {
    "to_gymnasium": "sekai.compat._gymnasium",
    "from_gymnasium": "sekai.compat._gymnasium",
    "GymnasiumToSekai": "sekai.compat._gymnasium",
    "GymnasiumRenderer": "sekai.compat._gymnasium",
    "space_to_gymnasium": "sekai.compat._spaces",
    "space_from_gymnasium": "sekai.compat._spaces",
    "to_pettingzoo": "sekai.compat._pettingzoo",
    "from_pettingzoo": "sekai.compat._pettingzoo",
    "PettingZooToSekai": "sekai.compat._pettingzoo",
    "to_sb3": "sekai.compat._sb3",
    "to_gymnasium_vector": "sekai.compat._gym_vector",
    "from_gymnasium_vector": "sekai.compat._gym_vector",
    "GymnasiumVectorToSekai": "sekai.compat._gym_vector",
}

# Classes that subclass an optional library's base class: name -> (module, requirement check).
_NEEDS_LIBRARY: dict[str, tuple[str, str]] = {
    "SekaiToGymnasium": ("sekai.compat._sekai_to_gymnasium", "gymnasium"),
    "SekaiToPettingZoo": ("sekai.compat._sekai_to_pettingzoo", "pettingzoo"),
    "SekaiToSB3": ("sekai.compat._sekai_to_sb3", "sb3"),
    "SekaiToGymnasiumVector": ("sekai.compat._sekai_to_gym_vector", "gymnasium-vector"),
}


def _require(library: str, name: str) -> None:
    from sekai.compat import _optional

    what = f"sekai.compat.{name}"
    if library == "gymnasium":
        _optional.require_gymnasium(what)
    elif library == "gymnasium-vector":
        _optional.require_gymnasium(what, "1.1")
    elif library == "pettingzoo":
        _optional.require_pettingzoo(what)
    else:
        _optional.require_sb3(what)


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module_name = _LAZY.get(name)
        if module_name is None and name in _NEEDS_LIBRARY:
            module_name, library = _NEEDS_LIBRARY[name]
            _require(library, name)  # MissingDependency rather than a bare ModuleNotFoundError
        if module_name is None:
            raise AttributeError(f"module 'sekai.compat' has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__, *_NEEDS_LIBRARY})


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.compat._gym_vector import (
        GymnasiumVectorToSekai as GymnasiumVectorToSekai,
        from_gymnasium_vector as from_gymnasium_vector,
        to_gymnasium_vector as to_gymnasium_vector,
    )
    from sekai.compat._gymnasium import (
        GymnasiumRenderer as GymnasiumRenderer,
        GymnasiumToSekai as GymnasiumToSekai,
        from_gymnasium as from_gymnasium,
        to_gymnasium as to_gymnasium,
    )
    from sekai.compat._pettingzoo import (
        PettingZooToSekai as PettingZooToSekai,
        from_pettingzoo as from_pettingzoo,
        to_pettingzoo as to_pettingzoo,
    )
    from sekai.compat._sb3 import to_sb3 as to_sb3
    from sekai.compat._sekai_to_gym_vector import SekaiToGymnasiumVector as SekaiToGymnasiumVector
    from sekai.compat._sekai_to_gymnasium import SekaiToGymnasium as SekaiToGymnasium
    from sekai.compat._sekai_to_pettingzoo import SekaiToPettingZoo as SekaiToPettingZoo
    from sekai.compat._sekai_to_sb3 import SekaiToSB3 as SekaiToSB3
    from sekai.compat._spaces import (
        space_from_gymnasium as space_from_gymnasium,
        space_to_gymnasium as space_to_gymnasium,
    )
