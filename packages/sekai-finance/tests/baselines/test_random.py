"""RandomPolicy on Box action spaces with infinite bounds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance.baselines import RandomPolicy


class _BoxActionEnv(sekai.Env[Any, Any]):
    observation_space = sekai.Box(0.0, 1.0, (1,))

    def __init__(self, low: Any, high: Any) -> None:
        self.action_space = sekai.Box(low, high, (3,))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> Any:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


@pytest.mark.parametrize(
    ("low", "high", "lowest", "highest"),
    [
        (2.0, np.inf, 2.0, 3.0),  # an order size of at least 2, with no upper bound
        (-np.inf, -5.0, -6.0, -5.0),
        (0.0, np.inf, 0.0, 1.0),
        (-np.inf, 0.5, -1.0, 0.5),
        (-np.inf, np.inf, -1.0, 1.0),
    ],
)
def test_a_half_bounded_box_gets_actions_in_the_space(
    low: float, high: float, lowest: float, highest: float
) -> None:
    env = _BoxActionEnv(low, high)
    env.reset(seed=0)
    policy = RandomPolicy(0)
    actions = np.array([policy(None, env) for _ in range(200)])
    assert all(env.action_space.contains(action) for action in actions)
    assert lowest <= actions.min() and actions.max() <= highest
    assert actions.max() - actions.min() > 0.5  # spread over the stand-in interval
