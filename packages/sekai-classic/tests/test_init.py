"""The package's lazy exports."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sekai
import sekai.envs.classic_control as classic

NAMES = {
    "CartPoleEnv": "cartpole",
    "MountainCarEnv": "mountain_car",
    "ContinuousMountainCarEnv": "continuous_mountain_car",
    "PendulumEnv": "pendulum",
    "AcrobotEnv": "acrobot",
    "CartPoleVecEnv": "vector.cartpole",
    "MountainCarVecEnv": "vector.mountain_car",
    "ContinuousMountainCarVecEnv": "vector.continuous_mountain_car",
    "PendulumVecEnv": "vector.pendulum",
    "AcrobotVecEnv": "vector.acrobot",
    "CartPoleRenderer": "rendering",
    "MountainCarRenderer": "rendering",
    "PendulumRenderer": "rendering",
    "AcrobotRenderer": "rendering",
}


def test_all_lists_every_env_native_class_and_renderer() -> None:
    assert sorted(classic.__all__) == sorted(NAMES)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_name_comes_from_its_module(name: str) -> None:
    value = getattr(classic, name)
    assert value.__module__ == f"sekai.envs.classic_control.{NAMES[name]}"
    assert name in dir(classic)


def test_native_classes_are_native_vec_envs() -> None:
    for name in NAMES:
        if name.endswith("VecEnv"):
            assert issubclass(getattr(classic, name), sekai.NativeVecEnv)


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = classic.Nope  # type: ignore[attr-defined]


def test_importing_the_package_imports_no_env_module() -> None:
    code = (
        "import sys, sekai.envs.classic_control\n"
        "print(sorted(m for m in sys.modules if m.startswith('sekai.envs.classic_control.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_joint_envs_package_finds_classic_names() -> None:
    import sekai.envs

    assert sekai.envs.CartPoleRenderer is classic.CartPoleRenderer  # type: ignore[attr-defined]
