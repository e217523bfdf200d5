"""OrderEnforcing: refuse step() before the first reset()."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import Wrapper
from sekai.error import ResetRequired

__all__ = ["OrderEnforcing"]


class OrderEnforcing(Wrapper[Any, Any, Any, Any]):
    """Raise ``ResetRequired`` when ``step()`` is called before the first ``reset()``."""

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        self._has_reset = False

    @property
    def has_reset(self) -> bool:
        """Whether reset() has been called."""
        return self._has_reset

    def reset(
        self,
        *,
        seed: int | np.random.Generator | None = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Any]:
        result = self.env.reset(seed=seed, options=options)
        self._has_reset = True
        return result

    def step(self, action: Any) -> StepResult[Any]:
        if not self._has_reset:
            raise ResetRequired()
        return self.env.step(action)

    async def async_reset(
        self,
        *,
        seed: int | np.random.Generator | None = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Any]:
        result = await self.env.async_reset(seed=seed, options=options)
        self._has_reset = True
        return result

    async def async_step(self, action: Any) -> StepResult[Any]:
        if not self._has_reset:
            raise ResetRequired()
        return await self.env.async_step(action)
