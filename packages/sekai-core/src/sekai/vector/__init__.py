"""sekai.vector (being written)."""
