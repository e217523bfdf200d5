"""Constructor parameters and reset options are checked where they are given."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import (
    CartPoleEnv,
    ContinuousMountainCarEnv,
    MountainCarEnv,
    PendulumEnv,
)

NUMBERS = [
    ("Pendulum-v1", PendulumEnv, "g"),
    ("MountainCar-v0", MountainCarEnv, "goal_velocity"),
    ("MountainCarContinuous-v0", ContinuousMountainCarEnv, "goal_velocity"),
]


@pytest.mark.parametrize(("env_id", "cls", "name"), NUMBERS)
@pytest.mark.parametrize(
    ("value", "error", "says"),
    [
        (float("nan"), ValueError, "must be finite, got nan"),
        (float("inf"), ValueError, "must be finite, got inf"),
        ("9.8", TypeError, "must be a real number, got str"),
        (None, TypeError, "must be a real number, got NoneType"),
        (True, TypeError, "must be a real number, got bool"),
    ],
)
def test_numeric_parameters_must_be_finite_real_numbers(
    env_id: str, cls: Any, name: str, value: Any, error: type, says: str
) -> None:
    with pytest.raises(error, match=f"^{cls.__name__}: {name} {says}"):
        cls(**{name: value})
    with pytest.raises(error, match=f"{name} {says}"):  # the native twin builds a single env
        sekai.make_vec(f"classic/{env_id}", 2, **{name: value})


@pytest.mark.parametrize("value", [np.float32(9.8), 9, 10.0])
def test_a_valid_number_is_kept_as_given(value: Any) -> None:
    env = PendulumEnv(g=value)
    assert env.g is value  # its type decides NumPy's precision, as in gymnasium


@pytest.mark.parametrize("value", ["no", 1, None])
def test_sutton_barto_reward_must_be_a_bool(value: Any) -> None:
    with pytest.raises(TypeError, match=r"^CartPoleEnv: sutton_barto_reward must be a bool"):
        CartPoleEnv(sutton_barto_reward=value)
    assert CartPoleEnv(sutton_barto_reward=np.bool_(True))._sutton_barto_reward is True


@pytest.mark.parametrize(
    "env_id",
    ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"],
)
def test_reset_options_must_be_a_dict_or_none(env_id: str) -> None:
    with pytest.raises(TypeError, match=r"^options must be a dict or None, got int\.$"):
        sekai.make(env_id).reset(seed=0, options=5)  # type: ignore[arg-type]


def test_a_zero_dimensional_array_is_a_number_too() -> None:
    assert float(PendulumEnv(g=np.array(9.81)).g) == 9.81
    with pytest.raises(TypeError, match="g must be a real number, got ndarray"):
        PendulumEnv(g=np.array([9.81]))


# The envs whose reset draws its state from low/high options (Pendulum takes x_init/y_init).
BOUNDED_RESET_IDS = [
    "classic/CartPole-v1",
    "classic/Acrobot-v1",
    "classic/MountainCar-v0",
    "classic/MountainCarContinuous-v0",
]


@pytest.mark.parametrize("env_id", BOUNDED_RESET_IDS)
@pytest.mark.parametrize("mode", ["single", "native"])
def test_reset_bounds_of_zero_and_negative_zero_are_a_zero_range(env_id: str, mode: str) -> None:
    options = {"low": 0.0, "high": -0.0}  # equal bounds: NumPy's draw refused the -0.0 above
    if mode == "single":
        observation = sekai.make(env_id).reset(seed=0, options=options).observation
    else:
        vec = sekai.make_vec(env_id, 2, vectorization_mode="native")
        observation = vec.reset(seed=0, options=options).observations[0]
    assert np.all(np.isfinite(observation))


@pytest.mark.parametrize("env_id", BOUNDED_RESET_IDS)
@pytest.mark.parametrize("mode", ["single", "native", "native-list"])
def test_reset_bounds_too_far_apart_to_subtract_are_refused(env_id: str, mode: str) -> None:
    options = {"low": -1e308, "high": 1e308}  # each finite, high - low is not
    message = (
        r"The reset bounds low=-1e\+308 and high=1e\+308 must give a finite range high - low\."
    )
    with pytest.raises(ValueError, match=message):
        if mode == "single":
            sekai.make(env_id).reset(seed=0, options=options)
        else:
            vec = sekai.make_vec(env_id, 2, vectorization_mode="native")
            vec.reset(seed=0, options=options if mode == "native" else [None, options])
