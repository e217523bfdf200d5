"""sekai.registry (being written)."""
