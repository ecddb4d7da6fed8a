"""The package version, in a module of its own so that low layers (the cache's identity) can
read it without importing the package root, which reaches up to the session."""

__version__ = "0.1.0"
