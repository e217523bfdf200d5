"""sekai.stats (being written)."""
