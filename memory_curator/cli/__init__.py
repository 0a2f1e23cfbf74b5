"""The click group, the one error boundary and the only renderer."""

from memory_curator.cli.app import cli, main

__all__ = ["cli", "main"]
