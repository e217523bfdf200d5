"""Built-in wrappers (every one implements both the sync and the async paths)."""

from sekai.wrappers.order_enforcing import OrderEnforcing
from sekai.wrappers.time_limit import TimeLimit

__all__ = ["OrderEnforcing", "TimeLimit"]
