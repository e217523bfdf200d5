"""Finance toolkit (being written)."""
