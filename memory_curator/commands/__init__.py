"""One module per command; each returns a frozen result and prints nothing (`cli` renders)."""
