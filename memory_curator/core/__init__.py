"""The pure core: what a note, a rule, a candidate, a verdict and a plan are. No I/O: nothing
here imports `os`, `sqlite3`, `fcntl`, `click`, `rich` or another layer (tests/test_layers.py)."""
