"""Placeholder: the first-party provider table and MissingDistributionFinder (foundation issue)."""

from __future__ import annotations


def install_missing_distribution_finder() -> None:
    """Install the finder that names the distribution to pip install (not written yet)."""
