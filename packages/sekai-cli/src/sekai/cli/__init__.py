"""The sekai CLI (being written)."""
