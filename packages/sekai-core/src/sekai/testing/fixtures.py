"""pytest fixtures shared by every sekai test suite (loaded with ``-p sekai.testing.fixtures``)."""
