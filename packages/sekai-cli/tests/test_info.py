"""``sekai info ID``: the spec lines, spaces, metadata, wrappers and the provider line."""

from __future__ import annotations

CARTPOLE_INFO = """\
id=CartPole-v1
entry_point=sekai.envs.classic_control.cartpole:CartPoleEnv
kernel_entry_point=sekai.envs.classic_control.kernels.cartpole:CartPoleKernel
max_episode_steps=500
reward_threshold=475.0
observation_space=Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)
action_space=Discrete(2)
metadata={'render_fps': 50}
wrappers=TimeLimit -> CartPoleEnv
provided_by=sekai-classic 0.3.0 (plugin classic)
"""


def test_info_of_cartpole_matches_the_spec_sample_plus_its_provider(sekai_cli) -> None:
    done = sekai_cli("info", "CartPole-v1")
    assert done.returncode == 0
    assert done.stdout == CARTPOLE_INFO
    assert done.stderr == ""


def test_info_shows_the_vector_entry_point_of_a_native_spec(sekai_cli) -> None:
    lines = sekai_cli("info", "classic/CartPole-v1").stdout.splitlines()
    assert lines[2] == (
        "vector_entry_point=sekai.envs.classic_control.vector.cartpole:CartPoleVecEnv"
    )


def test_info_of_a_runtime_env_without_wrappers_or_metadata(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/Plain-v0")
    assert done.returncode == 0
    assert done.stdout == (
        "id=mine/Plain-v0\n"
        "entry_point=<class 'my_envs.Plain'>\n"
        "kwargs={'scale': 2.0}\n"
        "observation_space=Box(0.0, 1.0, (1,), float32)\n"
        "action_space=Discrete(2)\n"
        "provided_by=runtime\n"
    )


def test_info_names_the_third_party_distribution_of_a_plugin_env(
    sekai_cli, fake_dists: dict[str, str]
) -> None:
    done = sekai_cli("info", "fake/Line-v0", env=fake_dists)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert "wrappers=TimeLimit -> LineEnv" in lines
    assert "metadata={'render_fps': 10}" in lines
    assert lines[-1] == "provided_by=sekai-fake-pack 0.1.0 (plugin fake)"
