"""Bridges to gymnasium, Stable-Baselines3 and PettingZoo (being written)."""
