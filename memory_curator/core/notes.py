"""Reading and faithfully editing markdown notes with YAML frontmatter.

Reads use PyYAML's C safe loader with YAML 1.2 core resolvers (`Loader12`): Obsidian reads
frontmatter as YAML 1.2, so `NO`, `on` and `1:20` are strings, `010` is 10 and dates stay the
text they were written as. The loader never constructs arbitrary objects and can only fail
with a parse problem (duplicate keys, absurd nesting or integers are refused as bad YAML).

Edits never re-serialise a whole file: the text is split at its `---` fences, only the YAML
is re-emitted with ruamel.yaml round-trip, every top-level key whose value did not change
keeps its original bytes, and a re-emitted value keeps its written text. The body is
copied unchanged. This is what lets a person trust a sweep with their notes.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import io
import itertools
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import RoundTripConstructor

from memory_curator.core import yaml12
from memory_curator.core.markdown import prose

MAX_FRONTMATTER = 64 * 1024
KEPT_TAGS = 8  # bodies whose tags are kept (`inline_tags`)
BOM = "\ufeff"
_FENCE = re.compile(r"---[ \t]*\r?\n|---[ \t]*\Z")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_INLINE_TAG = re.compile(r"(?<![\w/&#\[(])#(\w[\w/-]*)")
_WIKILINK = re.compile(r"!?\[\[([^\]|#^\n]+)")


class NotEditable(Exception):
    """The frontmatter cannot be edited safely (it does not parse, or is unsafe)."""


@dataclass(frozen=True)
class Split:
    """A note cut at its frontmatter fences; concatenating the parts gives the text back."""

    bom: str
    opening: str
    yaml: str
    closing: str
    body: str


@dataclass(frozen=True)
class Note:
    text: str
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    body: str = ""
    split: Split | None = None
    problem: str | None = None
    unclosed: bool = False

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text[:4096] else "\n"


def content_hash(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def decode(raw: bytes) -> str:
    """Decode note bytes; a BOM is kept in the text so it can be written back."""
    return raw.decode("utf-8")


def split(text: str) -> Split | None:
    """Cut at the fences; None when the text has no frontmatter block."""
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    opening = _FENCE.match(rest)
    if not opening:
        return None
    after = rest[opening.end() :]
    close = _CLOSE.search(after)
    if close is None:
        raise _Unclosed
    return Split(bom, opening.group(0), after[: close.start()], close.group(0), after[close.end() :])


class _Unclosed(Exception):
    pass


def parse(raw: bytes | str) -> Note:
    """Parse a note; problems are returned as data, never raised."""
    try:
        text = raw if isinstance(raw, str) else decode(raw)
    except UnicodeDecodeError:
        return Note(text="", problem="the file is not UTF-8 text")
    try:
        parts = split(text)
    except _Unclosed:
        return Note(text=text, body=text, problem="the frontmatter has no closing ---", unclosed=True)
    if parts is None:
        return Note(text=text, body=text.removeprefix(BOM))
    data, problem = load_yaml(parts.yaml)
    return Note(text=text, frontmatter=data, body=parts.body, split=parts, problem=problem)


def load_yaml(source: str) -> tuple[dict[str, Any], str | None]:
    """Load frontmatter YAML safely; refuse what could be abused or is not a mapping."""
    if len(source.encode("utf-8")) > MAX_FRONTMATTER:
        return {}, "the frontmatter is over 64 KB"
    if ("&" in source or "*" in source) and _has_anchor(source):
        return {}, "the frontmatter uses YAML anchors or aliases"
    try:
        data = yaml12.load(source)
    except yaml.YAMLError as exc:
        return {}, "the frontmatter does not parse: " + _yaml_message(exc)
    except Exception as exc:  # yaml12 promises a YAMLError only; should a path slip through, it is bad YAML too
        return {}, f"the frontmatter does not parse: {type(exc).__name__}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "the frontmatter is not a mapping of keys to values"
    return {str(k): v for k, v in data.items()}, None


def _has_anchor(source: str) -> bool:
    try:
        tokens = yaml.scan(source, Loader=yaml.SafeLoader)
        return any(isinstance(tok, yaml.AnchorToken | yaml.AliasToken) for tok in tokens)
    except Exception:  # a scan that fails is a parse that fails: loading says why
        return False


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} (line {mark.line + 2})" if mark is not None else str(problem)


# --- what a note says ------------------------------------------------------------------------


def as_list(value: Any) -> list[Any]:
    """Frontmatter lists are often written as one string; treat both alike."""
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple):
        return [v for v in value if v is not None and v != ""]
    if isinstance(value, str) and "," in value:
        return [v.strip() for v in value.split(",") if v.strip()]
    return [value]


def norm_tag(tag: Any) -> str:
    return str(tag).strip().lstrip("#").strip().lower()


def frontmatter_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    out: dict[str, None] = {}
    for raw in as_list(frontmatter.get("tags")):
        for part in str(raw).split() if isinstance(raw, str) else [raw]:
            tag = norm_tag(part)
            if tag:
                out[tag] = None
    return list(out)


def inline_tags(body: str) -> list[str]:
    """Obsidian `#tags` in the body, outside code (`markdown.prose`: as CommonMark reads it);
    purely numeric tags do not count. A body with nothing like a tag is not parsed. The last
    `KEPT_TAGS` bodies' are kept: privacy, each rule's `has_tag` and the merge ask a candidate's
    tags, and parsing 1 MiB of markdown took 40 ms each time (issue 36)."""
    return list(_inline_tags(body))


@functools.lru_cache(maxsize=KEPT_TAGS)
def _inline_tags(body: str) -> tuple[str, ...]:
    text = prose(body) if _INLINE_TAG.search(body) else ""
    found: dict[str, None] = {}  # ordered and O(1) membership: 100,000 tags stay linear
    for match in _INLINE_TAG.finditer(text):
        tag = match.group(1).lower()
        if not tag.replace("/", "").isdigit():
            found[tag] = None
    return tuple(found)


def all_tags(note: Note) -> list[str]:
    return list(dict.fromkeys([*frontmatter_tags(note.frontmatter), *inline_tags(note.body)]))


def wikilinks(body: str) -> list[str]:
    """`[[links]]` in the body, outside code (`markdown.prose`)."""
    text = prose(body) if "[[" in body else ""
    return list(dict.fromkeys(m.group(1).strip() for m in _WIKILINK.finditer(text) if m.group(1).strip()))


# --- writing ---------------------------------------------------------------------------------


def _represent_datetime(representer: Any, value: dt.datetime) -> Any:
    text = value.isoformat()
    text = text[:-6] + "Z" if text.endswith("+00:00") else text
    return representer.represent_scalar("tag:yaml.org,2002:timestamp", text)


_TOKEN = "v" + secrets.token_hex(3)  # short: a trailing comment's column is kept where it fits
_TOKENS = re.compile(_TOKEN + "([0-9a-f]+)x( +(?=#))?")
_SPELLINGS: dict[str, int] = {}  # written text -> token number, for the life of the process


def _represent_verbatim(representer: Any, value: yaml12.Verbatim) -> Any:
    """A plain token that `_unverbatim` swaps for the written text once the YAML is out."""
    number = _SPELLINGS.setdefault(value.text, len(_SPELLINGS))
    return representer.represent_scalar("tag:yaml.org,2002:str", f"{_TOKEN}{number:x}x", style="")


def _unverbatim(text: str) -> str:
    if _TOKEN not in text:
        return text
    texts = {number: written for written, number in _SPELLINGS.items()}

    def swap(match: re.Match[str]) -> str:
        written, gap = texts[int(match.group(1), 16)], match.group(2)
        if gap is None:
            return written
        return written + " " * max(1, len(match.group(0)) - len(written))  # the comment stays put

    return _TOKENS.sub(swap, text)


class _RoundTrip(RoundTripConstructor):
    """ruamel's round-trip constructor, except that a timestamp no calendar has
    (`2026-02-30`, month 13) stays its text, as the reading side (YAML 1.2) has it: a note
    PyYAML reads must not become uneditable, or crash an edit, over an impossible date."""

    def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
        try:
            return super().construct_yaml_timestamp(node, values)
        except (ValueError, OverflowError):
            return self.construct_scalar(node)


_RoundTrip.add_constructor("tag:yaml.org,2002:timestamp", _RoundTrip.construct_yaml_timestamp)


def _yaml(mapping: int = 2, offset: int = 2) -> YAML:
    out = YAML()
    out.Constructor = _RoundTrip
    out.preserve_quotes = True
    out.width = 4096
    out.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    out.representer.add_representer(dt.datetime, _represent_datetime)
    out.representer.add_representer(yaml12.Verbatim, _represent_verbatim)
    return out


def dump_yaml(data: Mapping[str, Any], mapping: int = 2, offset: int = 2) -> str:
    """Block-style YAML, Obsidian Properties style: block lists indented by two, ISO dates."""
    buf = io.StringIO()
    target = _yaml(mapping, offset)
    target.default_flow_style = False
    target.dump(_to_plain(data, keep_spelling=True) if not isinstance(data, CommentedMap) else data, buf)
    return _unverbatim(buf.getvalue())


def render(frontmatter: Mapping[str, Any], body: str, newline: str = "\n") -> str:
    """A new note: a frontmatter block then the body."""
    block = dump_yaml(frontmatter) if frontmatter else ""
    text = "---\n" + block + "---\n" + body
    return text.replace("\n", newline) if newline != "\n" else text


def _to_plain(value: Any, keep_spelling: bool = False) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _to_plain(v, keep_spelling) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v, keep_spelling) for v in value]
    if isinstance(value, yaml12.Verbatim):
        return value if keep_spelling else _to_plain(value.value)
    if isinstance(value, str):
        return str(value)
    return value


def plain(value: Any) -> Any:
    """Round-trip containers and scalar subclasses (a kept spelling too) as plain Python values."""
    return _to_plain(value)


def spelled(note: Note) -> dict[str, Any]:
    """The note's frontmatter with each scalar as written (`yaml12.spelled`); its parsed
    values where the text cannot be kept."""
    if note.split is None or note.problem:
        return dict(note.frontmatter)
    return {**note.frontmatter, **yaml12.spelled(note.split.yaml.replace("\r\n", "\n"))}


def _keep_spellings(data: Any, texts: Mapping[tuple[int, int], yaml12.Verbatim]) -> None:
    """Every scalar of a round-trip mapping becomes its `Verbatim`, found by its position, so
    that whatever an edit re-emits or moves is written as it was written."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, CommentedMap):
            items: Iterable[tuple[Any, Any]] = list(node.items())
            where = node.lc.value
        elif isinstance(node, CommentedSeq):
            items, where = list(enumerate(node)), node.lc.item
        else:
            continue
        for key, value in items:
            if isinstance(value, CommentedMap | CommentedSeq):
                stack.append(value)
                continue
            try:
                found = texts.get(tuple(where(key)))
            except (AttributeError, KeyError, IndexError, TypeError):
                continue
            if found is not None:  # the same position: the same scalar, whatever type ruamel gave it
                node[key] = found


def _guess_indent(source: str) -> tuple[int, int]:
    """(mapping indent, block-sequence offset) as this file writes them."""
    lines = source.splitlines()
    offset, mapping = 2, 2
    for prev, line in itertools.pairwise(lines):
        stripped = line.lstrip(" ")
        if prev.rstrip().endswith(":") and not prev.startswith(" "):
            indent = len(line) - len(stripped)
            if stripped.startswith("- "):
                offset = indent
                break
            if indent:
                mapping = indent
    return mapping, offset


def _key_segments(source_lines: list[str], data: CommentedMap) -> tuple[list[str], dict[str, str]] | None:
    """Original text of each top-level key, from its line to the next key's line."""
    starts = []
    for key in data:
        try:
            starts.append((data.lc.key(key)[0], str(key)))
        except (AttributeError, KeyError, TypeError):
            return None
    starts.sort()
    if len({line for line, _ in starts}) != len(starts):
        return None
    segments: dict[str, str] = {}
    for index, (line, key) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(source_lines)
        segments[key] = "".join(source_lines[line:end])
    prefix = source_lines[: starts[0][0]] if starts else source_lines
    return prefix, segments


def edit_frontmatter(text: str, mutate: Callable[[CommentedMap], None]) -> str:
    """Apply `mutate` to the frontmatter; unchanged keys and the body keep their bytes.

    Returns the text unchanged (the same object) when `mutate` changed nothing, so that a
    no-op edit writes nothing.
    """
    note = parse(text)
    if note.problem:
        raise NotEditable(note.problem)
    newline = note.newline
    if note.split is None:
        data = CommentedMap()
        mutate(data)
        if not data:
            return text
        bom = BOM if text.startswith(BOM) else ""
        return bom + render(data, text[len(bom) :].replace(newline, "\n"), "\n").replace("\n", newline)
    parts = note.split
    source = parts.yaml.replace("\r\n", "\n")
    mapping, offset = _guess_indent(source)
    rt = _yaml(mapping, offset)
    try:  # ruamel's scanner is stricter than PyYAML's (a tab after a colon) and may raise anything
        data = rt.load(source) or CommentedMap()
    except Exception as exc:
        raise NotEditable(f"ruamel cannot round-trip it: {type(exc).__name__}") from None
    _keep_spellings(data, yaml12.scalars(source))
    before = {str(k): plain(v) for k, v in data.items()}
    segments = _key_segments(source.splitlines(keepends=True), data)
    mutate(data)
    after = {str(k): plain(v) for k, v in data.items()}
    if before == after and list(before) == list(after):
        return text
    try:
        new_yaml = _unverbatim(_splice(data, before, segments, rt))
    except Exception as exc:  # the edited YAML cannot be written back faithfully: leave the text alone
        raise NotEditable(f"ruamel cannot write it back: {type(exc).__name__}") from None
    if new_yaml and not new_yaml.endswith("\n"):
        new_yaml += "\n"
    if newline != "\n":
        new_yaml = new_yaml.replace("\n", newline)
    return parts.bom + parts.opening + new_yaml + parts.closing + parts.body


def _splice(
    data: CommentedMap,
    before: dict[str, Any],
    segments: tuple[list[str], dict[str, str]] | None,
    rt: YAML,
) -> str:
    buf = io.StringIO()
    rt.dump(data, buf)
    fresh = buf.getvalue()
    if segments is None:
        return fresh
    fresh_parsed = rt.load(fresh) or CommentedMap()
    fresh_segments = _key_segments(fresh.splitlines(keepends=True), fresh_parsed)
    if fresh_segments is None:
        return fresh
    prefix, old = segments
    out = list(prefix)
    for key in data:
        name = str(key)
        unchanged = name in before and name in old and before[name] == plain(data[key])
        piece = old[name] if unchanged else fresh_segments[1][name]
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out.append(piece)
    return "".join(out)


def append_line(text: str, line: str) -> str:
    """Append one line, in the file's own newline style, after a blank line."""
    newline = "\r\n" if "\r\n" in text[:4096] else "\n"
    if text and not text.endswith(("\n", "\r")):
        text += newline
    return text + newline + line + newline


def union(existing: Iterable[Any], extra: Iterable[Any], key: Callable[[Any], Any] = str) -> list[Any]:
    """Order-keeping union without duplicates (compared through `key`)."""
    out: list[Any] = []
    seen: set[Any] = set()
    for item in [*existing, *extra]:
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out
