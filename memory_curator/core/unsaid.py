"""What a candidate cites that a note does not hold: its links and its dates (issue 38). Pure.

A judge's "duplicate" drops a candidate as already known and unchanged. A candidate citing a link
or a date its note lacks is not unchanged (design §3), whatever the judge's verdict: the replayed
answers said "only adds the PR link" or "dates it 07-27, not 07-29" and still said duplicate. Such
a candidate extends the note instead (`judge.prompt.to_verdict`): a person's note waits for them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from memory_curator.core import words
from memory_curator.core.comparison import norm_url, sources_of

URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`|]+")
DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
EVENT = "event"  # an event's `date` is what it is about; another note's says when it was written
_TRAILING = ".,;:!?*_~"  # sentence punctuation and markdown emphasis after a bare link


def unsaid(frontmatter: Mapping[str, Any], body: str, note_text: str, note_path: str = "") -> tuple[str, ...]:
    """The candidate's links (its sources and the body's) and dates (an event's `date`, the body's)
    that `note_text` does not hold, each once, in their order; links compared as `norm_url` keys them.
    A link naming only the subject of the note at `note_path` is its address, not news (`addresses`)."""
    held_urls = {norm_url(u) for u in _urls(note_text)}
    held_dates = set(DATE.findall(note_text))
    language = words.language_of(body)
    out: dict[str, None] = {}
    for url in [*sources_of(frontmatter), *_urls(body)]:
        if norm_url(url) not in held_urls and not addresses(url, note_path, language):
            out.setdefault(url.strip())
    for date in [*_dates(frontmatter), *DATE.findall(body)]:
        if date not in held_dates:
            out.setdefault(date)
    return tuple(out)


def addresses(url: str, note_path: str, language: str) -> bool:
    """Whether the link's path names the note: every word of its file name, and no word its path
    lacks (by stem, stopwords aside): the page where the note itself is published
    (`help.obsidian.md/publish/limitations` for `Obsidian Publish/Publish limitations.md`). A path
    with an id, a number or another subject's word is something else; a bare site names no note."""
    said = set(_stems(unquote(urlsplit(url.strip()).path).replace("+", " "), language))
    folders, _, name = note_path.removesuffix(".md").rpartition("/")
    named = set(_stems(name, language))
    return bool(named) and named <= said <= named | set(_stems(folders, language))


def _stems(text: str, language: str) -> list[str]:
    return words.stems(words.content(words.tokens(text), language), language)


def _urls(text: str) -> list[str]:
    return [u.rstrip(_TRAILING) for u in URL.findall(text)]


def _dates(frontmatter: Mapping[str, Any]) -> list[str]:
    if str(frontmatter.get("type", "")).strip().lower() != EVENT:
        return []
    value = frontmatter.get("date")
    return DATE.findall(value.isoformat() if isinstance(value, dt.date) else str(value or ""))[:1]
