"""The warning for parameters that let one ordinary step wipe out a finance account."""

from __future__ import annotations

import warnings

from sekai.error import WipeOutWarning

__all__ = ["WIPE_OUT_MOVE", "warn_wipe_out"]

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
