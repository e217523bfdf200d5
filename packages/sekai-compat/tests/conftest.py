"""Fixtures of sekai-compat's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def sb3_logdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Stable-Baselines3's log folder for this run, under pytest's temporary folder.

    Without ``SB3_LOGDIR``, every ``learn()`` creates an (empty) ``SB3-<date>`` folder in the
    system's temporary folder, which nothing removes.
    """
    folder = tmp_path_factory.mktemp("sb3-logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(folder))
        yield folder
