"""The helpers shared by the native classic-control vector envs."""

from __future__ import annotations

import numpy as np

from sekai.envs.classic_control.vector._common import keep_frozen


def test_keep_frozen_puts_back_only_the_frozen_rows_in_place() -> None:
    new = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    old = np.zeros((3, 2))
    result = keep_frozen(np.array([False, True, False]), new, old)
    assert result is new
    np.testing.assert_array_equal(result, [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])


def test_keep_frozen_leaves_new_untouched_when_nothing_is_frozen() -> None:
    new = np.array([[1.0], [2.0]])
    result = keep_frozen(np.zeros(2, dtype=bool), new, np.zeros((2, 1)))
    np.testing.assert_array_equal(result, [[1.0], [2.0]])
