"""The sekai plugin of sekai-example-pack: registers example/Gridworld-v0 by name only."""

from __future__ import annotations

from sekai.plugins import EnvRegistrar, hookimpl


@hookimpl
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Register the gridworld, its native vector version and its array kernel (strings: nothing
    is imported)."""
    registry.register(
        "example/Gridworld-v0",
        "sekai_example_pack.gridworld:GridworldEnv",
        vector_entry_point="sekai_example_pack.gridworld:GridworldVecEnv",
        kernel_entry_point="sekai_example_pack.kernel:GridworldKernel",
        max_episode_steps=100,
    )
