"""Argument types shared by the subcommands (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse

__all__ = ["UsageError", "non_negative_int", "positive_int"]


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_int(text: str) -> int:
    """An int >= 1 (``--steps``, ``--num-envs``, ``--workers``)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An int >= 0 (``--seed``)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


class UsageError(Exception):
    """A command line that parses but makes no sense (printed as ``error: ...``, exit 2)."""
