"""sekai.spaces (being written)."""
