"""Classic control: CartPole, MountainCar, MountainCarContinuous, Pendulum and Acrobot.

Importing this package is cheap: each name below is imported from its module on first use (the
plugin that registers the IDs imports this package, and must not import any env code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = [
    "AcrobotEnv",
    "AcrobotRenderer",
    "AcrobotVecEnv",
    "CartPoleEnv",
    "CartPoleRenderer",
    "CartPoleVecEnv",
    "ContinuousMountainCarEnv",
    "ContinuousMountainCarVecEnv",
    "MountainCarEnv",
    "MountainCarRenderer",
    "MountainCarVecEnv",
    "PendulumEnv",
    "PendulumRenderer",
    "PendulumVecEnv",
]

# name -> module defining it, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "CartPoleEnv": "sekai.envs.classic_control.cartpole",
    "MountainCarEnv": "sekai.envs.classic_control.mountain_car",
    "ContinuousMountainCarEnv": "sekai.envs.classic_control.continuous_mountain_car",
    "PendulumEnv": "sekai.envs.classic_control.pendulum",
    "AcrobotEnv": "sekai.envs.classic_control.acrobot",
    "CartPoleVecEnv": "sekai.envs.classic_control.vector.cartpole",
    "MountainCarVecEnv": "sekai.envs.classic_control.vector.mountain_car",
    "ContinuousMountainCarVecEnv": "sekai.envs.classic_control.vector.continuous_mountain_car",
    "PendulumVecEnv": "sekai.envs.classic_control.vector.pendulum",
    "AcrobotVecEnv": "sekai.envs.classic_control.vector.acrobot",
    "CartPoleRenderer": "sekai.envs.classic_control.rendering",
    "MountainCarRenderer": "sekai.envs.classic_control.rendering",
    "PendulumRenderer": "sekai.envs.classic_control.rendering",
    "AcrobotRenderer": "sekai.envs.classic_control.rendering",
}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.envs.classic_control.acrobot import AcrobotEnv
    from sekai.envs.classic_control.cartpole import CartPoleEnv
    from sekai.envs.classic_control.continuous_mountain_car import ContinuousMountainCarEnv
    from sekai.envs.classic_control.mountain_car import MountainCarEnv
    from sekai.envs.classic_control.pendulum import PendulumEnv
    from sekai.envs.classic_control.rendering import (
        AcrobotRenderer,
        CartPoleRenderer,
        MountainCarRenderer,
        PendulumRenderer,
    )
    from sekai.envs.classic_control.vector.acrobot import AcrobotVecEnv
    from sekai.envs.classic_control.vector.cartpole import CartPoleVecEnv
    from sekai.envs.classic_control.vector.continuous_mountain_car import (
        ContinuousMountainCarVecEnv,
    )
    from sekai.envs.classic_control.vector.mountain_car import MountainCarVecEnv
    from sekai.envs.classic_control.vector.pendulum import PendulumVecEnv
