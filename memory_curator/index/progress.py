"""The bar of long index work: a build or refresh that reads many notes, the semantic vectors
embedded after it. The context passes one down (`Progress`, a terminal's only); both the
index's upkeep and `semantic` ask `bar_for` whether the work is long enough to show it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

Progress = Callable[[int], contextlib.AbstractContextManager[Callable[[int], None]]]  # total -> advance(n)
PROGRESS_NOTES = 300  # "more than a few hundred notes": work that long shows a bar


def bar_for(progress: Progress | None, total: int, least: int = PROGRESS_NOTES) -> Progress:
    """The context's bar for work over more than `least` notes; else a bar that shows nothing."""
    return progress if progress is not None and total > least else _no_bar


@contextlib.contextmanager
def _no_bar(total: int) -> Iterator[Callable[[int], None]]:
    yield lambda done: None
