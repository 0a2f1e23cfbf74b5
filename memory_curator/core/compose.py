"""Pure text builders for what a sweep writes: a promoted note, a dropped copy, a
needs-review candidate. Text in, text out; the writer puts the bytes on disk."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from memory_curator.core.candidate import Candidate, not_carried
from memory_curator.core.conditions import is_present
from memory_curator.core.marks import DROP_MARK, REVIEW_MARK, REVIEW_TAG, strip_trailing_marks
from memory_curator.core.names import printable, slugify
from memory_curator.core.notes import NotEditable, append_line, norm_tag, render, spelled
from memory_curator.core.ownership import claims
from memory_curator.core.privacy import APPROVAL
from memory_curator.core.splice import edit_frontmatter
from memory_curator.core.text import iso, split_list


def provenance(candidate: Candidate, now: dt.datetime) -> dict[str, Any]:
    """Where a curated note came from. The inbox path is shown escaped (`vault.printable`): a name
    that is not UTF-8 or holds control characters would make the note's YAML unreadable; the
    hash is what identifies the candidate."""
    entry: dict[str, Any] = {
        "inbox": printable(candidate.inbox_path),
        "sha256": candidate.digest.removeprefix("sha256:"),
    }
    entry["curated_at"] = now
    entry.update(claims(candidate.frontmatter))  # "a person wrote me": the inbox file's claim, kept here only
    return entry


# the only keys a promote may change (docs/merge.md); source_skill and author only when they claim a person
PROMOTE_OWNS = ("tags", "aliases", "curated_from", "source_skill", "author")


def promoted_text(candidate: Candidate, now: dt.datetime) -> str:
    """The candidate's own text as a durable note: every key keeps its bytes but the ones a
    promote owns (`promotion`), body unchanged."""
    text = strip_review_mark(candidate.note.text)  # a person promoting a flagged item
    try:
        return edit_frontmatter(text, promotion(candidate, now))
    except (NotEditable, YAMLError):  # what PyYAML reads and ruamel cannot round-trip
        left_out = _left_out(candidate)
        fm = {k: v for k, v in spelled(candidate.note).items() if k not in ("tags", "curated_from", *left_out)}
        tags = _clean_tags(candidate.frontmatter.get("tags"))
        fm.update({"tags": tags} if tags else {})
        aliases = _aliases(fm, candidate.target)
        fm.update({"aliases": aliases} if aliases is not None else {})
        fm.update(approval(candidate))
        fm["curated_from"] = [provenance(candidate, now)]
        return render(fm, strip_review_mark(candidate.note.body), candidate.note.newline)


def promotion(candidate: Candidate, now: dt.datetime) -> Callable[[CommentedMap], None]:
    """The frontmatter edit of a promote: the surface's `not_carried` bookkeeping keys left out;
    tags without `#` or `needs-review`; the title added to `aliases` when the file name differs
    from it; `curated_from` added; the inbox file's `source_skill: human` / `author: user`
    moved into it."""
    left_out = _left_out(candidate)

    def own(data: CommentedMap) -> None:
        for key in left_out:
            data.pop(key, None)
        tags = data.get("tags")
        written = [str(t) for t in tags] if isinstance(tags, list) else None
        if is_present(tags) and _clean_tags(tags) != written:
            data["tags"] = CommentedSeq(_clean_tags(tags))
            if not data["tags"]:
                del data["tags"]
        aliases = _aliases(data, candidate.target)
        if aliases is not None:
            data["aliases"] = CommentedSeq(aliases)
        data.update(approval(candidate))
        data["curated_from"] = CommentedSeq([CommentedMap(provenance(candidate, now))])

    return own


def _left_out(candidate: Candidate) -> list[str]:
    """The keys a promote leaves out: a claim of a person's hand, the agent's bookkeeping."""
    return [*claims(candidate.frontmatter), *(k for k in candidate.frontmatter if k in not_carried(candidate))]


def approval(candidate: Candidate) -> dict[str, bool]:
    """`user_approved: true` on privacy content a person promoted in `review`/`resolve`: the one
    way the field reaches a note (an agent's own `user_approved` is never carried)."""
    return {APPROVAL: True} if candidate.approved and candidate.privacy else {}


def _aliases(data: Mapping[str, Any], target: str | None) -> list[Any] | None:
    """The note's `aliases` with its title (else its name) added, when the file name is not the
    title, so that `[[Title]]` resolves in Obsidian; None when nothing changes. Every value is
    kept as written (the title's own spelling included); a single alias becomes a list."""
    title = next((data[k] for k in ("title", "name") if is_present(data.get(k))), None)
    if target is None or title is None or isinstance(title, list | dict):
        return None
    if str(title) == target.rsplit("/", 1)[-1].removesuffix(".md"):
        return None
    current = data.get("aliases")
    if isinstance(current, dict):
        return None  # not an alias list Obsidian reads: left as it is
    known = list(current) if isinstance(current, list) else [current] if is_present(current) else []
    if str(title) in (str(a) for a in known):
        return None
    return [*known, title]


def _clean_tags(value: Any) -> list[str]:
    tags = [norm_tag(t) for t in _tag_items(value)]
    return [t for t in dict.fromkeys(tags) if t and t != REVIEW_TAG]


def dropped_name(stem: str, now: dt.datetime) -> str:
    return f"{now.astimezone(dt.UTC).strftime('%Y-%m-%dT%H-%M-%S')}-{slugify(stem) or 'note'}.md"


def dropped_text(raw: bytes, reason: str, now: dt.datetime) -> bytes:
    """The original bytes, untouched, plus one audit line."""
    text = raw.decode("utf-8", errors="surrogateescape")
    line = f"{DROP_MARK}{reason} ({iso(now)})"
    return append_line(text, line).encode("utf-8", errors="surrogateescape")


def review_text(text: str, reason: str, now: dt.datetime) -> str:
    """Tag `needs-review` (no `#`) and append the uncertainty line, replacing an older one.

    When the frontmatter cannot be edited safely, only the line is appended.
    """
    body = strip_review_mark(text)
    with contextlib.suppress(NotEditable):
        body = edit_frontmatter(body, add_review_tag)
    return append_line(body, f"{REVIEW_MARK}{reason} ({iso(now)})")


def with_review_tag(text: str) -> str:
    """`text` tagged `needs-review`; unchanged when the frontmatter cannot be edited safely."""
    with contextlib.suppress(NotEditable):
        return edit_frontmatter(text, add_review_tag)
    return text


def review_bytes(raw: bytes, reason: str, now: dt.datetime) -> bytes:
    """`review_text` for bytes; a file that is not UTF-8 keeps every byte and gets only the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        line = f"{REVIEW_MARK}{reason} ({iso(now)})"
        return append_line(raw.decode("utf-8", "surrogateescape"), line).encode("utf-8", "surrogateescape")
    return review_text(text, reason, now).encode("utf-8")


def add_review_tag(data: CommentedMap) -> None:
    """The frontmatter edit of a flag: `needs-review` in `tags`, in the list's own style."""
    tags = data.get("tags")
    if tags is None or tags == "":
        seq = CommentedSeq([REVIEW_TAG])
        data["tags"] = seq
    elif isinstance(tags, list):
        if REVIEW_TAG not in [norm_tag(t) for t in tags]:
            tags.append(REVIEW_TAG)
    elif REVIEW_TAG not in [norm_tag(t) for t in split_list(tags)]:
        data["tags"] = CommentedSeq([*split_list(tags), REVIEW_TAG])


def strip_drop_mark(text: str) -> str:
    return strip_trailing_marks(text, (DROP_MARK,))


def strip_review_mark(text: str) -> str:
    """A candidate's body without the uncertainty line an earlier sweep appended."""
    return strip_trailing_marks(text, (REVIEW_MARK,))


def has_review_tag(frontmatter: Mapping[str, Any]) -> bool:
    tags = frontmatter.get("tags")
    return REVIEW_TAG in [norm_tag(t) for t in _tag_items(tags)]


def _tag_items(value: Any) -> list[Any]:
    """`tags` as written: a list, or one text of comma- or space-separated tags."""
    return value if isinstance(value, list) else split_list(value or "")
