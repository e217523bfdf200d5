"""sekai.plugins (being written)."""
