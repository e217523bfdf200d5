"""sekai-ray: run sub-envs on a Ray cluster (``RayVecEnv``, the ``"ray"`` vectorization mode).

Importing this package is cheap: ``RayVecEnv`` (and with it Ray) is imported on first use, since
plugin discovery imports ``sekai.ray._plugin`` and with it this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = ["RayVecEnv"]

_LAZY: dict[str, str] = {"RayVecEnv": "sekai.ray.vec_env"}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.ray.vec_env import RayVecEnv as RayVecEnv
