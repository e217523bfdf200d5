"""sekai.testing (being written)."""
