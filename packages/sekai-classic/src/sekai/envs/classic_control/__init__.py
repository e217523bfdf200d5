"""Classic-control environments (being written)."""
