"""Utilities: check_env, action-mask helpers and structural comparison."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = [
    "action_mask_space",
    "check_env",
    "flatten_action_mask",
    "get_action_mask",
    "structurally_equal",
    "supports_action_mask",
]

# Imported on first use: the checker and action-mask helpers pull in spaces and wrappers, which
# ``import sekai`` (it imports this package) must not pay for.
_LAZY = {
    "action_mask_space": "sekai.utils.action_mask",
    "flatten_action_mask": "sekai.utils.action_mask",
    "get_action_mask": "sekai.utils.action_mask",
    "supports_action_mask": "sekai.utils.action_mask",
    "check_env": "sekai.utils.checker",
    "structurally_equal": "sekai.utils._equal",
}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover
    from sekai.utils._equal import structurally_equal
    from sekai.utils.action_mask import (
        action_mask_space,
        flatten_action_mask,
        get_action_mask,
        supports_action_mask,
    )
    from sekai.utils.checker import check_env
