"""The array spaces: those whose samples are one NumPy array and whose batches stack them."""

from __future__ import annotations

from sekai.spaces.box import Box
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete

__all__ = ["ARRAY_SPACES"]

ARRAY_SPACES = (Box, Discrete, MultiDiscrete, MultiBinary)
