"""``sekai info ID``: the spec lines, spaces, metadata, wrappers and the provider line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_failing_close_is_reported_after_the_description_with_exit_2(
    sekai_cli, my_envs: str, as_json: bool
) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/CloseFails-v0", *(["--json"] if as_json else []))
    assert done.returncode == 2
    if as_json:
        assert json.loads(done.stdout)["id"] == "mine/CloseFails-v0"
    else:
        assert done.stdout.splitlines()[0] == "id=mine/CloseFails-v0"
        assert done.stdout.splitlines()[-1] == "provided_by=runtime"
    assert done.stderr == "error: RuntimeError: close failed\n"


def test_info_names_the_third_party_distribution_of_a_plugin_env(
    sekai_cli, fake_dists: dict[str, str]
) -> None:
    done = sekai_cli("info", "fake/Line-v0", env=fake_dists)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert "wrappers=TimeLimit -> LineEnv" in lines
    assert "metadata={'render_fps': 10}" in lines
    assert lines[-1] == "provided_by=sekai-fake-pack 0.1.0 (plugin fake)"


def test_info_json_holds_the_spec_spaces_metadata_wrappers_and_provider(sekai_cli) -> None:
    done = sekai_cli("info", "CartPole-v1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "id": "CartPole-v1",
        "max_episode_steps": 500,
        "entry_point": "sekai.envs.classic_control.cartpole:CartPoleEnv",
        "vector_entry_point": None,
        "native_vec": False,
        "kernel_entry_point": "sekai.envs.classic_control.kernels.cartpole:CartPoleKernel",
        "plugin": "classic",
        "distribution": "sekai-classic",
        "version": "0.3.0",
        "kwargs": {},
        "reward_threshold": 475.0,
        "observation_space": (
            "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)"
        ),
        "action_space": "Discrete(2)",
        "metadata": {"render_fps": 50},
        "wrappers": ["TimeLimit", "CartPoleEnv"],
    }


def test_info_json_of_a_runtime_env_names_its_class_and_no_plugin(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/Plain-v0", "--json")
    row = json.loads(done.stdout)
    assert (row["entry_point"], row["kwargs"], row["plugin"]) == (
        "<class 'my_envs.Plain'>",
        {"scale": 2.0},
        None,
    )


ODD_VALUES = """
import numpy as np

import sekai


class Odd(sekai.Env):
    metadata = {
        "render_fps": np.int64(30),
        (0, 1): "goal",
        7: "seven",
        "goal_cells": np.array([[0, 1], [2, 3]]),
        "scale": np.float32(0.5),
    }

    def __init__(self, **kwargs):
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action):
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 0.0, False, False, {})


sekai.register(
    "mine/Odd-v0",
    Odd,
    kwargs={"stop_loss": float("-inf"), "cap": float("inf"), "fee": float("nan"),
            "levels": (np.float64(1.5), float("nan")), "by_pair": {("a", "b"): 1}},
)
"""


def _strict_json(text: str) -> Any:
    """``text`` parsed as RFC 8259 JSON: ``NaN`` and ``Infinity`` are refused."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_info_json_is_standard_json_whatever_the_metadata_and_kwargs_hold(
    sekai_cli, tmp_path: Path
) -> None:
    (tmp_path / "odd_values.py").write_text(ODD_VALUES)
    done = sekai_cli("-m", "odd_values", "info", "mine/Odd-v0", "--json")
    assert done.returncode == 0, done.stderr
    described = _strict_json(done.stdout)
    assert described["metadata"] == {
        "render_fps": 30,
        "(0, 1)": "goal",
        "7": "seven",
        "goal_cells": [[0, 1], [2, 3]],
        "scale": 0.5,
    }
    assert described["kwargs"] == {
        "stop_loss": "-inf",
        "cap": "inf",
        "fee": "nan",
        "levels": [1.5, "nan"],
        "by_pair": {"('a', 'b')": 1},
    }
