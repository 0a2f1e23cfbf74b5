"""What the index records about one note, and how a similarity query is built. Pure: text in,
data out; `index` does the I/O.

A note's *normalised text* is its title (or name), its value and its body — without the
curator's own trailing marker lines — joined and folded by `merge.norm_text` (case, accents,
whitespace, punctuation). Two notes with the same normalised text hash are exact duplicates,
and so are two with the same body hash (a verbatim copy under another title) unless they carry
different keys or values; texts under `MIN_DUPLICATE_WORDS` words get no hash (a bare "yes" is
nobody's duplicate). A note's names are its title, aliases, `slug`, file name and first `# heading`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_curator.core.candidate import infer_surface, target_path
from memory_curator.core.markdown import prose
from memory_curator.core.marks import strip_trailing_marks
from memory_curator.core.merge import norm_text
from memory_curator.core.names import nfc, printable, slugify
from memory_curator.core.notes import as_list, content_hash, frontmatter_tags, parse
from memory_curator.core.ownership import curator_owned
from memory_curator.core.rules import Rules
from memory_curator.core.subject import first_heading
from memory_curator.core.surface import Surface
from memory_curator.core.words import content

MIN_DUPLICATE_WORDS = 8
QUERY_TERMS = 10  # terms in one similarity query (title and value first, then the rarest body terms)
TITLE_TERMS = 5
COMMON_SHARE, COMMON_FLOOR = 100, 20  # words in more than max(20, 1% of notes) notes are not searched
PACK_LEVEL = 3  # zlib: here as fast as level 1 and a little smaller (about half the text's bytes)
K1, B = 1.2, 0.75  # FTS5's bm25() constants, used to score overlay notes the same way
SELECTED = (
    "type", "title", "name", "slug", "aliases", "entity", "predicate", "value", "date", "topic",
    "source_url", "sources", "source_skill", "author", "observed_at", "captured_at", "participants",
)  # fmt: skip
# notes.inline_tags / notes.wikilinks, with the literal first so `re` can skip to it (20x faster
# on long bodies); test_index checks they find exactly what the notes module finds.
_TAG = re.compile(r"#(?<![\w/&#\[(]#)(\w[\w/-]*)")
_LINK = re.compile(r"\[\[([^\]|#^\n]+)")


@dataclass(frozen=True)
class Row:
    """One note as the index stores it."""

    path: str
    stem: str
    surface: str | None
    key: str | None
    day: str | None
    title: str
    value: str
    body: str
    frontmatter: str
    tags: tuple[str, ...]
    links: tuple[str, ...]
    names: tuple[str, ...]
    content_hash: str
    text_hash: str | None
    body_hash: str | None  # the body alone: a verbatim copy under another title
    words: int
    problem: str | None
    owned: bool | None = None  # the curator's note (`ownership.curator_owned`); None: read it to know


Stemmed = tuple[str, str | None, "bool | None"]  # a note named so: (path, surface, owned; None: unknown)


class Layout:
    """The rules' surfaces, as the index needs them: which surface a note is on, and its key."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.folders = [(s.path.split("{")[0].rsplit("/", 1)[0] + "/", s) for s in rules.surfaces]
        self.signature = json.dumps([[s.name, s.type, s.path, list(s.key), s.curated] for s in rules.surfaces])

    def surface_of(self, rel: str, frontmatter: Mapping[str, Any]) -> Surface | None:
        by_type = infer_surface(frontmatter, self.rules)
        if by_type is not None:
            return by_type
        return next((s for folder, s in self.folders if rel.startswith(folder)), None)

    def key_of(self, rel: str, surface: Surface | None, frontmatter: Mapping[str, Any]) -> str | None:
        """The path the note's own key fields name (its identity); else its path, on its surface."""
        if surface is None:
            return None
        key, _ = target_path(surface, frontmatter)
        return key or rel


def decode(raw: bytes) -> tuple[str, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), "the file is not UTF-8 text"


def describe(rel: str, raw: bytes, layout: Layout) -> Row:
    """Everything the index keeps about one note. Never raises: a note whose reading raises
    anyway (a bug, or input nobody foresaw) is still indexed, by its body, as a problem note —
    `index stats` lists it, `status` counts it, `doctor` names it — and the other notes are
    indexed as usual (design §6, invariant 6)."""
    try:
        return _describe(rel, raw, layout)
    except Exception as exc:
        return body_only(rel, raw, printable(f"internal error while reading: {type(exc).__name__}: {exc}")[:300])


def body_only(rel: str, raw: bytes, problem: str) -> Row:
    """A note known only by its file name and its text: searchable, on no surface, with no key."""
    text = raw.decode("utf-8", errors="replace")
    stem = rel.rsplit("/", 1)[-1][:-3]
    name = slugify(stem)
    return Row(
        path=rel,
        stem=nfc(stem).casefold(),
        surface=None,
        key=None,
        day=None,
        title="",
        value="",
        body=text,
        frontmatter="{}",
        tags=(),
        links=(),
        names=(name,) if name else (),
        content_hash=content_hash(raw),
        text_hash=None,
        body_hash=None,
        words=text.count(" ") + 1 if text else 0,
        problem=problem,
    )


def _describe(rel: str, raw: bytes, layout: Layout) -> Row:
    text, problem = decode(raw)
    note = parse(text)
    fm = note.frontmatter
    problem = problem or note.problem
    surface = layout.surface_of(rel, fm)
    stem = rel.rsplit("/", 1)[-1][:-3]
    title = _text(fm.get("title") or fm.get("name"))
    aliases = [_text(a) for a in as_list(fm.get("aliases"))]
    value = _text(fm.get("value"))
    body = strip_marks(note.body)
    day = _day(fm.get("date")) if surface is not None and surface.type == "event" else None
    names = {slugify(n) for n in [title, *aliases, _text(fm.get("slug")), stem, first_heading(body)] if n}
    tags, links = tags_and_links(body)
    folded, bare = folded_parts(title, value, body)
    return Row(
        path=rel,
        stem=nfc(stem).casefold(),
        surface=surface.name if surface else None,
        key=layout.key_of(rel, surface, fm),
        day=day,
        title=" ".join([title, *aliases]).strip(),
        value=value,
        body=body,
        frontmatter=json.dumps({k: fm[k] for k in SELECTED if k in fm}, default=str, ensure_ascii=False),
        tags=tuple(dict.fromkeys([*frontmatter_tags(fm), *tags])),
        links=links,
        names=tuple(sorted(n for n in names if n)),
        content_hash=content_hash(raw),
        text_hash=_hash(folded),
        body_hash=_hash(bare),
        words=folded.count(" ") + 1 if folded else 0,
        problem=problem,
        owned=None if note.problem else curator_owned(rel, fm, layout.rules),
    )


def path_text(path: str) -> str:
    """What the `paths` table indexes of a note's path (its words, `.md` aside): written once,
    because a contentless table forgets a row only given the very text it indexed."""
    return path[:-3]


def pack(title: str, value: str, body: str) -> bytes:
    """A note's indexed text, stored once and compressed (the FTS5 table keeps no copy): the
    lengths of title and value, then the three joined."""
    text = f"{len(title)} {len(value)}\n{title}{value}{body}"
    return zlib.compress(text.encode("utf-8", "surrogatepass"), PACK_LEVEL)


def unpack(packed: bytes) -> tuple[str, str, str]:
    """(title, value, body) as `pack` stored them."""
    text = zlib.decompress(packed).decode("utf-8", "surrogatepass")
    head, _, rest = text.partition("\n")
    title_len, value_len = (int(n) for n in head.split(" "))
    return rest[:title_len], rest[title_len : title_len + value_len], rest[title_len + value_len :]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(_text(v) for v in value)
    return str(value).strip()


def _day(value: Any) -> str | None:
    text = str(value).strip()[:10] if value is not None else ""
    return text if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None


def strip_marks(body: str) -> str:
    """The body without the curator's own trailing uncertainty / drop lines."""
    if ">" not in body[-400:]:
        return body
    return strip_trailing_marks(body.rstrip())  # both marks


def folded_parts(title: str, value: str, body: str) -> tuple[str, str]:
    """`norm_text` of the title, value and body on their own lines, and of the body alone, the
    body folded once (issue 36: twice was 60 ms a body of 1 MiB). The same strings: a line break
    is a starter nothing composes with, so NFKC, case folding, punctuation and spaces do not
    reach across it."""
    bare = norm_text(body)
    return " ".join(part for part in (norm_text(f"{title}\n{value}"), bare) if part), bare


def hashes(title: str, value: str, body: str) -> tuple[str | None, str | None]:
    """The duplicate hashes (`Row.text_hash`, `Row.body_hash`), the body folded once."""
    folded, bare = folded_parts(title, value, body)
    return _hash(folded), _hash(bare)


def _hash(folded: str) -> str | None:
    if folded.count(" ") + 1 < MIN_DUPLICATE_WORDS:
        return None
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def tags_and_links(body: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Inline #tags and [[wikilinks]] outside code, as `notes` reads them (a body with nothing
    like either is not parsed: taking its code out cannot make one)."""
    if "[[" not in body and ("#" not in body or not _TAG.search(body)):
        return (), ()
    text = prose(body)
    tags: dict[str, None] = {}
    if "#" in text:
        for match in _TAG.finditer(text):
            tag = match.group(1).lower()
            if not tag.replace("/", "").isdigit():
                tags[tag] = None
    links: dict[str, None] = {}
    if "[[" in text:
        links = dict.fromkeys(name for m in _LINK.finditer(text) if (name := m.group(1).strip()))
    return tuple(tags), tuple(links)


def candidate_parts(frontmatter: Mapping[str, Any], body: str) -> tuple[str, str, str]:
    """(title, value, body) of a candidate, the way `describe` reads a note."""
    title = _text(frontmatter.get("title") or frontmatter.get("name"))
    return title, _text(frontmatter.get("value")), strip_marks(body)


# --- similarity ------------------------------------------------------------------------------


def terms(found: list[str], language: str) -> list[str]:
    """Distinct searchable words of these tokens, in order: no stopwords of the language, no
    single characters."""
    return content(dict.fromkeys(found), language)


def choose_terms(head: list[str], body: list[str], df: Mapping[str, int], total: int) -> tuple[str, ...]:
    """The words to search: the candidate's rarest title/value words, then its rarest body
    words, among those the vault holds but not in more than max(20, 1%) of its notes (such
    words weigh little in BM25 and their long posting lists cost milliseconds). Ties go to
    longer words. The search only finds notes to score (`similarity`)."""
    ceiling = max(COMMON_FLOOR, total // COMMON_SHARE)

    def rarest(words: Iterable[str], count: int) -> list[str]:
        usable = [w for w in words if 0 < df.get(w, 0) <= ceiling]
        return sorted(usable, key=lambda w: (df[w], -len(w), w))[:count]

    chosen = rarest(head, TITLE_TERMS)
    rest = [w for w in body if w not in chosen]
    return tuple(chosen + rarest(rest, QUERY_TERMS - len(chosen)))


def match_expression(words: Iterable[str]) -> str:
    """An FTS5 MATCH of OR-ed words, each a quoted string: no operator, column filter,
    prefix or NEAR can be smuggled in ("" is the only escape inside a string)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def idf(df: int, total: int) -> float:
    """FTS5's bm25() IDF, with its floor for words in more than half the notes. The overlay's
    counts are estimates (a patched note counts twice), hence the clamp."""
    if not 0 <= df <= total:  # the clamp, only where it changes something (this runs per word)
        df = min(max(df, 0), max(total, 0))
    value = math.log((total - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def bm25(
    words: Iterable[str], counts: Counter[str], length: int, avg_length: float, df: Mapping[str, int], total: int
) -> float:
    """FTS5's bm25() for one note held in memory (an overlay note), as a positive number."""
    return weighted_bm25(counts, length, {w: idf(df[w], total) for w in words}, avg_length)


def weighted_bm25(counts: Mapping[str, int], length: int, weights: Mapping[str, float], avg_length: float) -> float:
    """BM25 of a text with these word `counts` and `length`, for words of known IDF `weights`."""
    norm = K1 * (1 - B + B * length / (avg_length or 1.0))
    return sum(weight * counts[w] * (K1 + 1) / (counts[w] + norm) for w, weight in weights.items() if counts.get(w))
