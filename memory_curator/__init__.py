"""memory-curator: keeps an Obsidian-style vault clean while AI agents write into it."""

__version__ = "0.1.0"
