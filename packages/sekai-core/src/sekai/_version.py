"""The version shared by every first-party sekai distribution."""

__version__ = "0.3.0"
