"""OrderEnforcing: refuse step() before the first reset()."""

from __future__ import annotations

from typing import Any

from sekai._args import check_bool
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.wrapper import ResultWrapper
from sekai.error import ResetRequired

__all__ = ["OrderEnforcing"]


class OrderEnforcing(ResultWrapper[Any, Any, Any, Any]):
    """Raise ``ResetRequired`` when ``step()`` is called before the first ``reset()``.

    ``disable_render_order_enforcing`` is gymnasium's argument, taken for code written for it:
    a sekai env does not render itself, and a renderer refuses to draw before the first
    ``reset()`` in any case, so the flag changes nothing.
    """

    def __init__(self, env: Env[Any, Any], disable_render_order_enforcing: bool = False) -> None:
        super().__init__(env)
        self.disable_render_order_enforcing = check_bool(
            "OrderEnforcing", "disable_render_order_enforcing", disable_render_order_enforcing
        )
        self._has_reset = False

    @property
    def has_reset(self) -> bool:
        """Whether reset() has been called."""
        return self._has_reset

    def _on_reset(self, seed: SeedLike) -> None:
        self._has_reset = True

    def _step_action(self, action: Any) -> Any:
        if not self._has_reset:
            raise ResetRequired()
        return action
