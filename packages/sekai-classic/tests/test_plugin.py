"""The ``classic`` plugin: what it registers, and that registering imports no env code."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sekai
from sekai.envs.classic_control import _plugin
from sekai.testing import registry_sandbox

EXPECTED = {
    "CartPole-v1": ("cartpole:CartPoleEnv", "cartpole:CartPoleVecEnv", 500, 475.0),
    "MountainCar-v0": (
        "mountain_car:MountainCarEnv",
        "mountain_car:MountainCarVecEnv",
        200,
        -110.0,
    ),
    "MountainCarContinuous-v0": (
        "continuous_mountain_car:ContinuousMountainCarEnv",
        "continuous_mountain_car:ContinuousMountainCarVecEnv",
        999,
        90.0,
    ),
    "Pendulum-v1": ("pendulum:PendulumEnv", "pendulum:PendulumVecEnv", 200, None),
    "Acrobot-v1": ("acrobot:AcrobotEnv", "acrobot:AcrobotVecEnv", 500, -100.0),
}
PKG = "sekai.envs.classic_control"


@pytest.mark.parametrize("env_id", sorted(EXPECTED))
def test_each_id_is_registered_without_a_native_vector_and_its_twin_with_one(env_id: str) -> None:
    entry, native, steps, threshold = EXPECTED[env_id]
    plain, twin = sekai.spec(env_id), sekai.spec(f"classic/{env_id}")
    assert plain.entry_point == twin.entry_point == f"{PKG}.{entry}"
    assert plain.vector_entry_point is None
    assert twin.vector_entry_point == f"{PKG}.vector.{native}"
    assert plain.max_episode_steps == twin.max_episode_steps == steps
    assert plain.reward_threshold == twin.reward_threshold == threshold


@pytest.mark.parametrize("env_id", sorted(EXPECTED))
def test_make_builds_the_env_with_its_time_limit(env_id: str) -> None:
    for full_id in (env_id, f"classic/{env_id}"):
        env = sekai.make(full_id)
        assert str(env) == f"<TimeLimit(<{full_id}>)>"
        assert env.get_attr("max_episode_steps") == EXPECTED[env_id][2]
        env.close()


def test_the_plugin_registers_ten_ids_in_order() -> None:
    with registry_sandbox(("classic", _plugin), distribution="sekai-classic") as registry:
        ids = [spec.id for spec in registry.all_specs()]
    assert ids == [*EXPECTED, *(f"classic/{env_id}" for env_id in EXPECTED)]


def test_loading_the_plugin_imports_no_env_module() -> None:
    code = (
        "import sys, sekai\n"
        "sekai.all_specs()\n"
        "import sekai.envs.classic_control._plugin\n"
        f"loaded = [m for m in sys.modules if m.startswith('{PKG}.')]\n"
        f"print(sorted(set(loaded) - {{'{PKG}._plugin'}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_quickstart_episode_statistics_are_18_16_11() -> None:
    env = sekai.RecordEpisodeStatistics(sekai.make("CartPole-v1"))
    env.action_space.seed(0)
    result = env.reset(seed=0)
    lengths = []
    for _ in range(3):
        while not result.done:
            result = env.step(env.action_space.sample())
        stats = result.info["episode"]
        lengths.append((stats.episode_return, stats.episode_length))
        result = env.reset()
    assert lengths == [(18.0, 18), (16.0, 16), (11.0, 11)]


def test_quickstart_make_prints() -> None:
    env = sekai.make("CartPole-v1")
    assert str(env) == "<TimeLimit(<CartPole-v1>)>"
    assert (
        str(env.reset(seed=42).observation) == "[ 0.0273956  -0.00611216  0.03585979  0.0197368 ]"
    )
    with pytest.raises(AttributeError, match="'TimeLimit' object has no attribute 'x_threshold'"):
        _ = env.x_threshold  # type: ignore[attr-defined]
