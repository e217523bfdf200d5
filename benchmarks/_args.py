"""Argument types shared by the benchmark scripts (argparse ``type=`` callables).

A count of steps, repeats, sub-envs or workers below 1 would make a script divide by zero or
print a made-up figure: argparse rejects it instead, naming the option (as ``sekai bench``).
"""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "positive_ints"]


def positive_int(text: str) -> int:
    """An int >= 1 (``--steps``, ``--repeats``, ``--num-envs``, ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def positive_ints(text: str) -> list[int]:
    """Comma-separated ints >= 1, such as ``2,16``: sorted, without duplicates."""
    return sorted({positive_int(part) for part in text.split(",")})
