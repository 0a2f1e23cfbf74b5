"""What a candidate would add to a note with the same key, pure: new sources, tags and set
members, and whether its value differs (newer, older, or a contradiction time cannot settle).
`facts` asks it whether a candidate is known and unchanged; `merge` writes what it finds."""

from __future__ import annotations

import datetime as dt
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from memory_curator.core.notes import as_list, norm_tag
from memory_curator.core.text import parse_time

SET_FIELDS = ("participants", "aliases", "roles")
CONTESTED = "contradictions"  # values a person kept beside the current one (`settle="both"`)
Settle = Literal["new", "old", "both"]  # a person's answer to a contradiction time cannot settle
IGNORED_TAGS = {"needs-review"}
_TRACKING = re.compile(r"^(utm_.*|fbclid|gclid|mc_cid|mc_eid|ref|ref_src|igshid|si)$", re.IGNORECASE)
_PUNCT_BYTES = string.punctuation.encode("ascii")  # what `norm_text` takes out


# Fields that carry no claim a candidate can contradict (docs/merge.md, "Contradictions"): the value
# (compared on its own, with its history), the sets that union, times, provenance, confidence,
# identity and titles, and the candidate's own signals. Every other scalar both carry is a claim.
NOT_CLAIMS = frozenset(
    {
        "value", "tags", "aliases", "sources", "source_url", "participants", "roles",
        "observed_at", "captured_at", "updated_at", "curated_at", "date", "created", "modified",
        "history", CONTESTED, "curated_from", "confidence",
        "type", "title", "name", "slug", "entity", "predicate", "topic",
        "source_skill", "source_kind", "author", "load_bearing", "surprise", "ephemeral",
    }
)  # fmt: skip
Conflict = tuple[str, Any, Any]  # (the field as the note spells it, the note's claim, the candidate's)


@dataclass(frozen=True)
class Comparison:
    """What a candidate would add to a note with the same key."""

    sources: tuple[str, ...]
    tags: tuple[str, ...]
    participants: tuple[str, ...]
    aliases: tuple[str, ...]
    value_changed: bool
    order: str  # "newer", "older", "unknown": the candidate's observation vs the note's
    roles: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()  # claims other than `value` the two state differently

    @property
    def additions(self) -> tuple[str, ...]:
        out = [f"source {s}" for s in self.sources]
        out += [f"tag {t}" for t in self.tags]
        out += [f"participant {p}" for p in self.participants]
        out += [f"alias {a}" for a in self.aliases]
        out += [f"role {r}" for r in self.roles]
        if self.value_changed:
            out.append("a changed value")
        out += [f"a different {field}" for field, _, _ in self.conflicts]
        return tuple(out)

    @property
    def contradiction(self) -> bool:
        """A different value, or another claim, whose time cannot say which one is current."""
        return (self.value_changed or bool(self.conflicts)) and self.order == "unknown"

    @property
    def differs(self) -> tuple[str, ...]:
        """What the candidate states otherwise than the note: `value` and each conflicting field."""
        return (*(("value",) if self.value_changed else ()), *(field for field, _, _ in self.conflicts))


def norm_text(value: Any) -> str:
    """Case, accents, whitespace and punctuation folded: 'the same value' as a person means it."""
    return " ".join(_folded(str(value)).split())


def _folded(text: str) -> str:
    """NFKC, case folded, ASCII punctuation taken out: as bytes, in one C call (a translation
    table of `str` is looked up a character at a time: 100 ms for a body of 1 MiB; issue 36).
    UTF-8 never holds an ASCII byte inside another character's bytes; a lone surrogate passes."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return folded.encode("utf-8", "surrogatepass").translate(None, _PUNCT_BYTES).decode("utf-8", "surrogatepass")


def norm_url(url: Any) -> str:
    """One source however it is written: scheme (`http`/`https`), host case, `www.`, a default
    port, a trailing slash, the fragment and tracking parameters do not make a new source. The
    key it returns is for comparing only (`example.com/a?b=1`), never written."""
    text = str(url).strip()
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return text
    if not parts.scheme or not host:
        return text.rstrip("/")
    host = host.removeprefix("www.")
    if port is not None and port not in (80, 443):
        host = f"{host}:{port}"
    kept = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k))
    query = f"?{urlencode(kept)}" if kept else ""
    return f"{host}{parts.path.rstrip('/')}{query}"


def sources_of(frontmatter: Mapping[str, Any]) -> list[str]:
    return [str(s) for s in [*as_list(frontmatter.get("source_url")), *as_list(frontmatter.get("sources"))]]


def history_values(frontmatter: Mapping[str, Any]) -> list[Any]:
    return [h.get("value") for h in as_list(frontmatter.get("history")) if isinstance(h, Mapping)]


def history_sources(frontmatter: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for entry in as_list(frontmatter.get("history")):
        if isinstance(entry, Mapping):
            out += sources_of(entry)
    return out


def observed(frontmatter: Mapping[str, Any]) -> dt.datetime | None:
    """When the value was true in the world: observed_at, else captured_at."""
    for key in ("observed_at", "captured_at"):
        moment = parse_time(frontmatter.get(key))
        if moment is not None:
            return moment
    return None


def conflicts(note_fm: Mapping[str, Any], cand_fm: Mapping[str, Any], skip: Iterable[str] = ()) -> tuple[Conflict, ...]:
    """The claims both state, differently (after folding case, accents and punctuation), field
    by field; a key spelled in another case is the note's own (`Status` is `status`)."""
    spelled = {str(k).casefold(): k for k in note_fm}
    ignored = {k.casefold() for k in (*NOT_CLAIMS, *skip)}
    out = []
    for key, mine in cand_fm.items():
        name = spelled.get(str(key).casefold())
        if name is None or str(key).casefold() in ignored or not (_claim(mine) and _claim(note_fm[name])):
            continue
        if norm_text(mine) != norm_text(note_fm[name]):
            out.append((str(name), note_fm[name], mine))
    return tuple(out)


def _claim(value: Any) -> bool:
    """A scalar that says something (a list or a mapping is a set or a structure, never one claim)."""
    return not blank(value) and not isinstance(value, list | dict | tuple | set)


def compare(
    note_fm: Mapping[str, Any],
    note_tags: Iterable[str],
    cand_fm: Mapping[str, Any],
    cand_tags: Iterable[str],
    skip: Iterable[str] = (),
) -> Comparison:
    """What the candidate adds to the note; `skip`: its keys that are no claim of its own (the
    agent's bookkeeping, person-only fields)."""
    known_sources = {norm_url(s) for s in [*sources_of(note_fm), *history_sources(note_fm)]}
    new_sources = new_items(sources_of(cand_fm), known_sources, norm_url)
    known_tags = {norm_tag(t) for t in note_tags}
    new_tags = tuple(t for t in dict.fromkeys(norm_tag(t) for t in cand_tags) if t not in known_tags | IGNORED_TAGS)
    sets = {
        name: new_items(
            [str(x) for x in as_list(cand_fm.get(name))], {norm_text(x) for x in as_list(note_fm.get(name))}
        )
        for name in SET_FIELDS
    }
    order = _order(note_fm, cand_fm)
    value_changed = _value_changed(note_fm, cand_fm, order)
    if value_changed and blank(note_fm.get("value")):
        order = "newer"  # a value where the note had none replaces nothing: never a contradiction
    differ = conflicts(note_fm, cand_fm, skip)
    return Comparison(
        new_sources,
        new_tags,
        sets["participants"],
        sets["aliases"],
        value_changed,
        order,
        roles=sets["roles"],
        conflicts=differ,
    )


def new_items(items: Iterable[str], known: set[str], key: Any = norm_text) -> tuple[str, ...]:
    """The items whose `key` is not known yet, each once, in their order."""
    out: list[str] = []
    seen = set(known)
    for item in items:
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return tuple(out)


def blank(value: Any) -> bool:
    """No value at all: a missing key, `null` or an empty text (0 and false are values)."""
    return value is None or value == ""


def _value_changed(note_fm: Mapping[str, Any], cand_fm: Mapping[str, Any], order: str) -> bool:
    """A value differs when it is neither current nor in history; a newer observation of a
    value in history differs too (the fact changed back)."""
    if blank(cand_fm.get("value")):
        return False
    mine = norm_text(cand_fm["value"])
    if not blank(note_fm.get("value")) and mine == norm_text(note_fm["value"]):
        return False
    contested = [e.get("value") for e in as_list(note_fm.get(CONTESTED)) if isinstance(e, Mapping)]
    known = {norm_text(v) for v in [*history_values(note_fm), *contested] if v is not None}
    return order == "newer" or mine not in known


def settled(comparison: Comparison, note_fm: Mapping[str, Any], cand_fm: Mapping[str, Any], how: Settle) -> Comparison:
    """The comparison as a person settled it: the new value current (`new`: the old one to
    history), the old one kept (`old`: the new one to history), or both kept (`both`: the new
    one beside the current value, under `contradictions:`)."""
    order = {"new": "newer", "old": "older", "both": "contested"}[how]
    return replace(comparison, order=order, value_changed=_value_changed(note_fm, cand_fm, order))  # conflicts stay


def _order(note_fm: Mapping[str, Any], cand_fm: Mapping[str, Any]) -> str:
    mine, theirs = observed(cand_fm), observed(note_fm)
    if mine is None or theirs is None or mine == theirs:
        return "unknown"
    return "newer" if mine > theirs else "older"


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_WORD = re.compile(r"[^\W\d_]{4,}")  # a content word, roughly: letters, four or more
NEW_SHARE = 0.6  # a sentence with less than this share of its content words in the note is news
CONTENT_WORDS = 4  # a shorter sentence ("See above.") says too little to be news


def _content_words(text: str) -> set[str]:
    """Its words, case and accents folded; ASCII text (most of it) is not looked at a character
    at a time (it has no accents to fold: 1.7 ms a `gather_facts` with a note, at 3 KB a note)."""
    folded = text.casefold()
    if not folded.isascii():
        folded = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return set(_WORD.findall(folded))


def sentence_words(body: str) -> list[set[str]]:
    """The content words of each sentence of a body that says enough to be news
    (`CONTENT_WORDS` or more), as `new_sentences` splits and reads them."""
    found = (_content_words(sentence) for sentence in _SENTENCE.split(body))
    return [words for words in found if len(words) >= CONTENT_WORDS]


def content_words(text: str) -> set[str]:
    """A text's content words, case and accents folded (`sentence_words`)."""
    return _content_words(text)


def new_sentences(body: str, note_text: str) -> tuple[str, ...]:
    """The sentences of a candidate's body that the note does not hold: a rewording of what the
    note says is not news (most of its words are there), a sentence the note lacks is
    ("already known and unchanged" means unchanged content too, design §3)."""
    held = _content_words(note_text)
    out = []
    for sentence in _SENTENCE.split(body):
        words = _content_words(sentence)
        if len(words) >= CONTENT_WORDS and len(words & held) < NEW_SHARE * len(words):
            out.append(" ".join(sentence.split()))
    return tuple(out)
