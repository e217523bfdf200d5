"""The ``classic`` plugin: registers the classic-control IDs (as strings; imports no env code)."""

from __future__ import annotations

from sekai.plugins import EnvRegistrar, hookimpl

__all__ = ["sekai_register_envs"]

_PKG = "sekai.envs.classic_control"

# (id, module:class, native module:class, max_episode_steps, reward_threshold), gymnasium's values.
_ENVS: tuple[tuple[str, str, str, int, float | None], ...] = (
    ("CartPole-v1", "cartpole:CartPoleEnv", "cartpole:CartPoleVecEnv", 500, 475.0),
    (
        "MountainCar-v0",
        "mountain_car:MountainCarEnv",
        "mountain_car:MountainCarVecEnv",
        200,
        -110.0,
    ),
    (
        "MountainCarContinuous-v0",
        "continuous_mountain_car:ContinuousMountainCarEnv",
        "continuous_mountain_car:ContinuousMountainCarVecEnv",
        999,
        90.0,
    ),
    ("Pendulum-v1", "pendulum:PendulumEnv", "pendulum:PendulumVecEnv", 200, None),
    ("Acrobot-v1", "acrobot:AcrobotEnv", "acrobot:AcrobotVecEnv", 500, -100.0),
)

# The envs that have an array kernel (the jax and torch vectorization modes run it).
_KERNELS: dict[str, str] = {"CartPole-v1": f"{_PKG}.kernels.cartpole:CartPoleKernel"}


@hookimpl
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Register the five classic IDs, then their ``classic/`` twins with native vector versions.

    The un-namespaced IDs have no ``vector_entry_point`` (``make_vec`` gives a ``SyncVecEnv``, as
    the user docs print); ``classic/<ID>`` is the same env with its ``NativeVecEnv`` as default.
    """
    for env_id, entry, _, steps, threshold in _ENVS:
        registry.register(
            env_id,
            f"{_PKG}.{entry}",
            kernel_entry_point=_KERNELS.get(env_id),
            max_episode_steps=steps,
            reward_threshold=threshold,
        )
    for env_id, entry, native, steps, threshold in _ENVS:
        registry.register(
            f"classic/{env_id}",
            f"{_PKG}.{entry}",
            vector_entry_point=f"{_PKG}.vector.{native}",
            kernel_entry_point=_KERNELS.get(env_id),
            max_episode_steps=steps,
            reward_threshold=threshold,
        )
