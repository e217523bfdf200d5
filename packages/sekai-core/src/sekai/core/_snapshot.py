"""Snapshots of observations: every array copied, so a later write into a reused buffer cannot
change them."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["snapshot"]


def snapshot(obs: Any) -> Any:
    """``obs`` with every ndarray in it copied: a terminal observation kept across the reset
    that follows it, in case the env writes the reset observation into the same buffer."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if isinstance(obs, dict):
        return {key: snapshot(value) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(snapshot(value) for value in obs)
    return obs
