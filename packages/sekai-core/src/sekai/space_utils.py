"""The space utilities under gymnasium's name: ``import sekai.space_utils`` (or ``from sekai
import space_utils``) gives the functions of ``sekai.spaces.utils``, the same objects."""

from __future__ import annotations

from sekai.spaces import utils as _utils
from sekai.spaces.utils import *  # noqa: F403 - the same names, listed once in utils

__all__ = _utils.__all__
