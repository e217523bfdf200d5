"""Native vector versions of the classic-control envs (``NativeVecEnv`` subclasses).

Each keeps the single env's state under the same attribute names with a leading ``num_envs``
axis and advances every sub-env with array operations. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = [
    "AcrobotVecEnv",
    "CartPoleVecEnv",
    "ContinuousMountainCarVecEnv",
    "MountainCarVecEnv",
    "PendulumVecEnv",
]

_LAZY: dict[str, str] = {
    "CartPoleVecEnv": "sekai.envs.classic_control.vector.cartpole",
    "MountainCarVecEnv": "sekai.envs.classic_control.vector.mountain_car",
    "ContinuousMountainCarVecEnv": "sekai.envs.classic_control.vector.continuous_mountain_car",
    "PendulumVecEnv": "sekai.envs.classic_control.vector.pendulum",
    "AcrobotVecEnv": "sekai.envs.classic_control.vector.acrobot",
}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.classic_control.vector.acrobot import AcrobotVecEnv
    from sekai.envs.classic_control.vector.cartpole import CartPoleVecEnv
    from sekai.envs.classic_control.vector.continuous_mountain_car import (
        ContinuousMountainCarVecEnv,
    )
    from sekai.envs.classic_control.vector.mountain_car import MountainCarVecEnv
    from sekai.envs.classic_control.vector.pendulum import PendulumVecEnv
