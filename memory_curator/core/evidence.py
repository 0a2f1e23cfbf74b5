"""What a candidate's evidence fields mean before the rules see them (issue 16). Pure.

Agents fill `source_url` with a placeholder (`https://example.com`) and write `confidence: high`
where the rules compare numbers. The conditions see the candidate as a careful reader would: a
placeholder address is no source, a confidence word is its number. The note itself keeps what
the agent wrote.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from memory_curator.core import words
from memory_curator.core.comparison import blank, norm_text, norm_url, sources_of
from memory_curator.core.settings import PLACEHOLDER_SOURCES, Settings

SOURCE_KEYS = ("source_url", "sources")


def host_of(value: Any) -> str:
    """The host of a source address (`example.com` of `https://Example.com/x`); a bare host too."""
    text = str(value).strip()
    if not text:
        return ""
    try:
        host = urlsplit(text if "//" in text else f"//{text}").hostname
    except ValueError:  # `http://[` : not an address at all, so not a placeholder either
        return ""
    return (host or "").casefold().rstrip(".")


def is_placeholder(value: Any, settings: Settings) -> bool:
    """A documentation or reserved address: `example.com` and its subdomains, `localhost`,
    any host under the `.example`, `.invalid` and `.test` TLDs, and what the rules add."""
    host = host_of(value)
    if not host:
        return False
    for known in (*PLACEHOLDER_SOURCES, *settings.placeholder_sources):
        if known.startswith("."):
            if host.endswith(known) or host == known[1:]:
                return True
        elif host == known or host.endswith("." + known):
            return True
    return False


def placeholders(frontmatter: Mapping[str, Any], settings: Settings) -> list[str]:
    """The candidate's source addresses that are placeholders, as written."""
    found: list[str] = []
    for key in SOURCE_KEYS:
        raw = frontmatter.get(key)
        items = raw if isinstance(raw, list) else [raw] if raw is not None else []
        found += [str(v) for v in items if isinstance(v, str | int | float) and is_placeholder(v, settings)]
    return found


def as_read(frontmatter: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """The fields as the conditions see them: placeholder sources left out (a key left with
    none is absent), a confidence word replaced by its number."""
    fields = dict(frontmatter)
    for key in SOURCE_KEYS:
        raw = fields.get(key)
        if isinstance(raw, list):
            real = [v for v in raw if not is_placeholder(v, settings)]
            if real:
                fields[key] = real
            else:
                fields.pop(key)
        elif isinstance(raw, str) and is_placeholder(raw, settings):
            fields.pop(key)
    confidence = fields.get("confidence")
    if isinstance(confidence, str):
        words = dict(settings.confidence_words)
        number = words.get(confidence.strip().casefold())
        if number is not None:
            fields["confidence"] = number
    return fields


# --- evidence beyond words (issue 28) --------------------------------------------------------------
#
# Two notes may say the same thing in few shared words: an event of the same day from the same
# pull request, a fact under another predicate with the same entity, value and page. What they
# agree on is evidence of the same information; evidence alone is not enough (one page gives many
# distinct facts, some sharing a value), so it counts only together with a close title or text.

CLOSE = 0.25  # `similarity.same` (or `topic`) at which a note the evidence points at says what the candidate says
TITLE_WORDS = 2  # distinctive title words an event of the same day and source must share
SOURCE, DAY, ENTITY_VALUE = "source_url", "day", "entity and value"
VALUE_HELD = "entity, its value holding the note's"  # `Jane Roe (since 2024)` beside `Jane Roe` (issue 38)


def sources(frontmatter: Mapping[str, Any], settings: Settings) -> frozenset[str]:
    """The real sources of a note, each as `comparison.norm_url` keys it (placeholders are none)."""
    return frozenset(norm_url(s) for s in sources_of(frontmatter) if s.strip() and not is_placeholder(s, settings))


def agreed(mine: Mapping[str, Any], theirs: Mapping[str, Any], settings: Settings) -> tuple[str, ...]:
    """What two notes' fields agree on: a source (`SOURCE`), an event's day (`DAY`), a fact's
    entity with its value (`ENTITY_VALUE`), or with a value holding the note's (`VALUE_HELD`)."""
    found = []
    if sources(mine, settings) & sources(theirs, settings):
        found.append(SOURCE)
    if _is(mine, "event") and _is(theirs, "event") and _same(_day(mine), _day(theirs)):
        found.append(DAY)
    if _same(mine.get("entity"), theirs.get("entity")):
        if _same(mine.get("value"), theirs.get("value")):
            found.append(ENTITY_VALUE)
        elif holds(mine.get("value"), theirs.get("value")):
            found.append(VALUE_HELD)
    return tuple(found)


def holds(mine: Any, theirs: Any) -> bool:
    """Whether a value says the note's value and more (`Jane Roe (since 2024)` holds `Jane
    Roe`; `n8n 2.15.2` holds `2.15.2`): the note's words, in order, among the candidate's.
    Words keep their inner punctuation (`1.4` is not in `1.4.0`); a value of one character, or
    one as long as the candidate's, is not held (equal values are `ENTITY_VALUE`)."""
    if blank(mine) or blank(theirs):
        return False
    big, small = _value_words(mine), _value_words(theirs)
    if not small or len("".join(small)) < 2 or len(small) >= len(big):
        return False
    return any(big[i : i + len(small)] == small for i in range(len(big) - len(small) + 1))


def _value_words(value: Any) -> list[str]:
    """A value's words, case folded, each without the punctuation around it."""
    folded = unicodedata.normalize("NFKC", str(value)).casefold().split()
    return [w for w in (word.strip(string.punctuation + "«»“”‘’¿¡") for word in folded) if w]


def same_information(kind: str | None, said: tuple[str, ...], score: float, titles_shared: int) -> bool:
    """Whether agreed fields (`agreed`) and closeness make a candidate of type `kind` the note's
    information again: a fact with the note's entity, value (or a value holding it) and source,
    the same fact under another predicate (`author` beside `developer`, `chief-executive` beside
    `ceo`); an event of its day and source under a close title; any other
    note with its source and a close text (`score`, `similarity.same`, at least `CLOSE`). A fact
    sharing a page and a value with another fact of another entity is a fact of its own."""
    if SOURCE not in said:
        return False
    if kind == "fact":
        return ENTITY_VALUE in said or VALUE_HELD in said
    if kind == "event":
        return DAY in said and close_event(score, titles_shared)
    return score >= CLOSE


def moved(mine: Mapping[str, Any], theirs: Mapping[str, Any], said: tuple[str, ...], close: bool) -> str:
    """`date: 2026-07-27 -> 2026-07-29` when two events from one source, close in title or text,
    are dated otherwise: the same event with its date in conflict, old beside new ("" when not).
    A recurring meeting has a page of its own each time, so it is never one."""
    if SOURCE not in said or DAY in said or not close or not (_is(mine, "event") and _is(theirs, "event")):
        return ""
    old, new = _day(theirs), _day(mine)
    return f"date: {old} -> {new}" if old and new else ""


def titles_shared(mine: str, theirs: str, language: str = words.AUTO) -> int:
    """How many distinctive words (by stem, stopwords left out) two titles share."""
    spoken = words.language_of(f"{mine} {theirs}", language)
    held = [set(words.stems(words.content(words.tokens(t), spoken), spoken)) for t in (mine, theirs)]
    return len(held[0] & held[1])


def mentions(sources: frozenset[str], text: str) -> bool:
    """Whether a note's text may hold one of these sources (`sources`): the cheap test before
    its fields are read (`agreed`). Each is looked for up to its query, case folded: a written
    address holds its own key but for the order of its parameters (and an explicit default port)."""
    folded = text.casefold()
    return any(key.split("?", 1)[0].casefold() in folded for key in sources)


def close_event(score: float, titles_shared: int) -> bool:
    """An event's title or text close to another's: `TITLE_WORDS` distinctive title words in
    common, or a same-information score of at least `CLOSE`."""
    return titles_shared >= TITLE_WORDS or score >= CLOSE


def about(named: bool, score: float, topic: float) -> bool:
    """Whether a note the candidate's `topic` names (`notion`: `Stack/notion.md`) is about
    what it says: named, and close in text (`same` or `topic` at least `CLOSE`). A topic alone
    names a whole field; a review names the note only when the text is near too."""
    return named and max(score, topic) >= CLOSE


def named(said: tuple[str, ...]) -> str:
    """The agreement as a review line says it: `same source_url and day`, then what conflicts
    (`same source_url; date: 2026-07-27 -> 2026-07-29`)."""
    same = [s for s in said if s in (SOURCE, DAY, ENTITY_VALUE, VALUE_HELD)]
    return "; ".join([*(["same " + " and ".join(same)] if same else []), *(s for s in said if s not in same)])


def _is(frontmatter: Mapping[str, Any], kind: str) -> bool:
    return str(frontmatter.get("type") or "").strip().casefold() == kind


def _day(frontmatter: Mapping[str, Any]) -> str:
    return str(frontmatter.get("date") or "")[:10]


def _same(mine: Any, theirs: Any) -> bool:
    return not blank(mine) and not blank(theirs) and norm_text(mine) == norm_text(theirs)
