"""Finance environments (being written)."""
