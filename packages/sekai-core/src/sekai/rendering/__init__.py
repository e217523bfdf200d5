"""sekai.rendering (being written)."""
