"""Number formatting and "nice" axis ticks for the finance charts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

__all__ = [
    "format_number",
    "format_pct",
    "format_price",
    "format_ticks",
    "nice_ticks",
    "plain",
]

# Characters the built-in bitmap font lacks, and what to draw instead.
_PLAIN = str.maketrans({"–": "-", "—": "-", "’": "'", "‘": "'", "μ": "u", "σ": "s", "≈": "~"})


def plain(text: str) -> str:
    """``text`` with the characters the bitmap font lacks replaced (en dash -> hyphen, ...)."""
    return text.translate(_PLAIN)


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """About ``count`` round values (1, 2, 2.5 or 5 times a power of ten) in ``[low, high]``."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(0.0 if abs(value) < step * 1e-9 else value)
        value = first + len(ticks) * step
    return ticks


def _decimals(step: float) -> int:
    """The fewest decimals that write ``step`` exactly (2.5 needs one, 25 none)."""
    if step <= 0 or not math.isfinite(step):
        return 2
    for decimals in range(9):
        if abs(round(step, decimals) - step) <= 1e-9 * step:
            return decimals
    return 8


def _suffix(magnitude: float) -> tuple[float, str]:
    if magnitude >= 1e9:
        return 1e9, "B"
    if magnitude >= 1e6:
        return 1e6, "M"
    if magnitude >= 1e4:
        return 1e3, "k"
    return 1.0, ""


def format_ticks(ticks: Sequence[float], *, kind: str = "number") -> list[str]:
    """Labels for ``ticks`` with just enough decimals; ``kind`` is ``"number"`` or ``"pct"``.

    Large numbers are shortened with k/M/B suffixes (``1.2M``).
    """
    if not ticks:
        return []
    step = min((b - a for a, b in pairwise(ticks)), default=abs(ticks[0]) or 1.0)
    if kind == "pct":
        return [f"{t * 100:.{_decimals(step * 100)}f}%" for t in ticks]
    div, suffix = _suffix(max(abs(t) for t in ticks))
    decimals = _decimals(step / div)
    if decimals > 2:  # "9.9975k" reads worse than "9997.5": keep the suffix for round ticks
        div, suffix, decimals = 1.0, "", _decimals(step)
    return ["0" if t == 0 else f"{t / div:.{decimals}f}{suffix}" for t in ticks]


def format_number(value: float, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, shortened with k/M/B when large."""
    if not math.isfinite(value):
        return "-" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    div, suffix = _suffix(abs(value))
    scaled = value / div
    if scaled == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{decimals}f}{suffix}"


def format_price(value: float) -> str:
    """A price with two decimals (``10006.50``); significant digits when very large or small."""
    if math.isfinite(value) and 0.1 <= abs(value) < 1e6:
        return f"{value:.2f}"
    return format_number(value, 5)


def format_pct(value: float, decimals: int = 2, *, signed: bool = False) -> str:
    """``value`` as a percentage (``0.0432`` -> ``4.32%``); ``signed`` adds ``+``/``−``."""
    if not math.isfinite(value):
        return "-"
    text = f"{abs(value) * 100:.{decimals}f}%"
    if value < 0 and float(text[:-1]) != 0:
        return f"−{text}"
    return f"+{text}" if signed else text
