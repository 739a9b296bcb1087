"""The package version (its own module, so that any room can read it without importing envs)."""

__version__ = "0.1.0"
