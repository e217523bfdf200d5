"""sekai-ray: run sub-envs on a Ray cluster (``RayVecEnv``, the ``"ray"`` vectorization mode).

Importing this package is cheap: ``RayVecEnv`` (and with it Ray) is imported on first use, since
plugin discovery imports ``sekai.ray._plugin`` and with it this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["RayVecEnv"]

_LAZY: dict[str, str] = {"RayVecEnv": "sekai.ray.vec_env"}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'sekai.ray' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.ray.vec_env import RayVecEnv as RayVecEnv
