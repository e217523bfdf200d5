"""Wipe-outs of a finance account: the warning for parameters that let one ordinary step wipe
it out, and the step whose equity leaves float64's range (0, inf)."""

from __future__ import annotations

import warnings
from typing import Any

from sekai.envs.finance._helpers import extreme_equity
from sekai.error import WipeOutWarning

__all__ = ["WIPE_OUT_MOVE", "equity_out_of_range", "warn_wipe_out"]

# An adverse one-step move this small or smaller is ordinary (a bad day for one stock).
WIPE_OUT_MOVE = 0.10


def warn_wipe_out(leverage: float, what: str, env: str, *, stacklevel: int = 3) -> None:
    """Warn ``WipeOutWarning`` when exposure ``leverage`` (gross, in units of equity, set by
    the parameter shown as ``what``) lets an adverse move of ``WIPE_OUT_MOVE`` or less wipe the
    account out: ``1 - leverage * move <= 0``."""
    if leverage * WIPE_OUT_MOVE < 1.0:
        return
    warnings.warn(
        WipeOutWarning(
            f"{env}: {what} exposes up to {leverage:g}x equity, so an adverse move of "
            f"{1.0 / leverage:.3g} ({100.0 / leverage:.3g} %) in one step wipes out the account "
            "(equity 0, the episode ends). Keep exposure below "
            f"{1.0 / WIPE_OUT_MOVE:g}x, or silence this with "
            "warnings.filterwarnings('ignore', category=sekai.WipeOutWarning)."
        ),
        stacklevel=stacklevel,
    )


def equity_out_of_range(env: Any, equity: float, growth: float) -> tuple[float, float]:
    """The ``(equity, growth)`` a single env books for a step whose equity, ``equity_before *
    growth``, left ``(0, inf)`` (checked by the caller, with one comparison, every step).

    At 0 or below it is a wipe-out: equity 0 and a growth of at most 0, which the reward and
    the position (or weights) then follow; so also where a positive growth underflowed the
    equity to 0 (the native envs' ``_settle`` does the same).

    Raises:
        ValueError: equity beyond float64 (inf or NaN), naming ``env``'s decision and what
            drives the equity and what to change (``env._equity_values()``). The step changes
            nothing, and the
            episode is over (``ResetRequired`` until ``reset()``), as a native sub-env waits.
    """
    if equity <= 0.0:
        return 0.0, min(growth, 0.0)
    env._done = True
    where = f"overflowed to infinity in the step {env._decision()}"
    raise extreme_equity(type(env).__name__, where, *env._equity_values())
