"""Frontmatter edits spliced into the text, without a YAML round trip, where that is provably
what the round trip (`notes.edit_frontmatter`) would write, byte for byte.

ruamel's round trip is most of what a sweep spends on composing a promoted note or flagging a
candidate, yet what those edits write is small: a key removed, a few new keys, a tag list
re-written or appended to. `notes.edit_frontmatter` already keeps every unchanged key's bytes
(its segment, from its line to the next key's) and takes only the changed keys from ruamel's
fresh dump, so the output is those segments in the edited mapping's order with the changed
keys written as ruamel writes them. This module builds the same mapping from PyYAML's C parser
(each scalar as its `Verbatim`, exactly what the round trip's mapping holds), runs the same
edit on it, and writes the changed keys itself, but only when the block is plain enough that
the result is certain:

- the top level is a block mapping of plain, one-line keys that read as text, each first on
  its line (no `? key`: ruamel may not write one back), the first one on the first line; no
  comment, tab, lone carriage return, byte-order mark, unusual line break, tag, anchor or
  alias anywhere; every scalar one line (plain or quoted);
- a changed key that was already there was written the way ruamel writes it (so its segment
  holds nothing else, a blank line or odd indentation included);
- every value written is a kept spelling, `true`/`false`, null, an integer, a UTC time, a text
  that ruamel writes plain, or a list of those (or of one-level maps of them): a list the
  edit appended to keeps its flow or block style, a new one is a block list indented as the
  file indents (`notes._guess_indent`), `tags: []` when empty.

Anything else returns None and the caller takes the round trip. `tests/test_splice.py`
compares the two paths on generated frontmatters and on every note of the real vaults.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode

from memory_curator.core import notes, yaml12

Edit = Callable[[CommentedMap], None]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_KEY_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})
_UNSAFE = re.compile(r"[\r\t\ufeff\x0b\x0c\x1c-\x1e\x85\u2028\u2029]|(?:^| )#", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_FIRST = re.compile(r"\w")  # no indicator (`-?:,[]{}#&*!|>'"%@`) and no space first
_FLOW = re.compile(r"[,\[\]{}]")
_KEY_MAX = 120
_FLOW_WIDTH = 4000  # ruamel breaks a line past its width (4096)
_PLAIN_MAX = 1000  # far below ruamel's width (4096): a long plain text would be folded
_STR = "tag:yaml.org,2002:str"
_SCALAR_STYLES = (None, "", "'", '"')
_PLAIN_STYLES = (None, "")
_RESOLVER = notes._yaml().resolver


def edit_frontmatter(text: str, mutate: Edit) -> str:
    """`notes.edit_frontmatter`, spliced into the text where that is certain to be the same."""
    spliced = fast_edit(text, mutate)
    return spliced if spliced is not None else notes.edit_frontmatter(text, mutate)


def fast_edit(text: str, mutate: Edit) -> str | None:
    """What `notes.edit_frontmatter(text, mutate)` returns, or None when that is not certain.

    `mutate` may run here and again on the round trip's mapping, so it must be an edit of
    the mapping it is given and nothing else."""
    note = notes.parse(text)
    if note.problem:
        return None
    if note.split is None:
        return _fresh_block(text, note.newline, mutate)
    block = _Block.read(note.split.yaml.replace("\r\n", "\n"))
    if block is None:
        return None
    before = block.values()
    mutate(block.data)
    after = block.values()
    if before == after and list(before) == list(after):
        return text  # the same object: a no-op edit writes nothing
    new_yaml = block.written(before, after)
    if new_yaml is None:
        return None
    parts = note.split
    return parts.bom + parts.opening + new_yaml.replace("\n", note.newline) + parts.closing + parts.body


def _fresh_block(text: str, newline: str, mutate: Edit) -> str | None:
    """A note without frontmatter: the block `notes.render` would put on top of it."""
    data = CommentedMap()
    mutate(data)
    if not data:
        return text
    pieces = [_entry(str(key), value, False, (2, 2)) for key, value in data.items()]
    if any(piece is None for piece in pieces):
        return None
    bom = notes.BOM if text.startswith(notes.BOM) else ""
    body = text[len(bom) :].replace(newline, "\n")
    return bom + ("---\n" + "".join(p for p in pieces if p) + "---\n" + body).replace("\n", newline)


class _Block:
    """A plain frontmatter block: its mapping (as the round trip would hold it), each key's
    segment of text, whether that segment is what ruamel writes, and the file's indentation."""

    def __init__(self, prefix: str, pairs: list[tuple[str, yaml.Node, str, Any]], indent: tuple[int, int]) -> None:
        self.prefix = prefix
        self.indent = indent
        self.data = CommentedMap((name, value) for name, _, _, value in pairs)
        self.segments = {name: segment for name, _, segment, _ in pairs}
        self.kept = {name: value for name, _, _, value in pairs}  # the objects an edit may append to
        self.flow = {name: _is_flow(node) for name, node, _, _ in pairs}
        self.canonical = {
            name: _entry(name, value, self.flow[name], indent) == segment for name, _, segment, value in pairs
        }

    @classmethod
    def read(cls, source: str) -> _Block | None:
        if _UNSAFE.search(source) or (source and not source.endswith("\n")) or _unprintable(source):
            return None
        read = yaml12.top_level(source)
        if read is None:
            return None
        root, values = read
        if root is None:
            return cls(source, [], (2, 2)) if not source.strip() else None
        lines = source.splitlines(keepends=True)
        keys = _plain_pairs(root, lines)
        if keys is None or (keys and keys[0][0].start_mark.line != 0):
            return None
        starts = [key.start_mark.line for key, _ in keys] + [len(lines)]
        pairs = [
            (str(key.value), node, "".join(lines[starts[i] : starts[i + 1]]), _commented(values[str(key.value)]))
            for i, (key, node) in enumerate(keys)
        ]
        if any(_ends_empty(node) and segment.count("\n") > 1 for _, node, segment, _ in pairs[:-1]):
            return None  # ruamel keeps the lines after an empty value with the next key, not with its own
        return cls("", pairs, notes._guess_indent(source))

    def values(self) -> dict[str, Any]:
        return {str(key): notes.plain(value) for key, value in self.data.items()}

    def written(self, before: dict[str, Any], after: dict[str, Any]) -> str | None:
        """The edited block's text: unchanged keys keep their segments. None when unsure."""
        if self.segments and not self._tail_stays(before, after):
            return None
        out = [self.prefix]
        for name, value in zip(after, self.data.values(), strict=True):
            if name in before and before[name] == after[name]:
                out.append(self.segments[name])
                continue
            if name in before and not self.canonical[name]:
                return None  # the old text is not what ruamel writes: ruamel may keep some of it
            piece = _entry(name, value, self.flow.get(name, False) and value is self.kept[name], self.indent)
            if piece is None:
                return None
            out.append(piece)
        return "".join(out)

    def _tail_stays(self, before: dict[str, Any], after: dict[str, Any]) -> bool:
        """Blank lines at the block's end follow whatever ruamel writes last: certain only when
        the last key stays last and unchanged."""
        last = next(reversed(self.segments))
        lines = self.segments[last].splitlines()
        if len(lines) < 2 or lines[-1].strip():
            return True
        return bool(after) and next(reversed(after)) == last and before[last] == after[last]


def _empty(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == "" and node.style in _PLAIN_STYLES


def _ends_empty(node: yaml.Node) -> bool:
    """The value, or the last value nested in it (`type:\n  k:`), is empty: the lines after it are
    kept with the next key."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.value and not node.flow_style:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    return _empty(node)


def _is_flow(node: yaml.Node) -> bool:
    """A flow list ruamel keeps as one when it is appended to (`[]` it writes as a new list)."""
    return isinstance(node, yaml.SequenceNode) and bool(node.flow_style) and bool(node.value)


def _unprintable(source: str) -> bool:
    """A character YAML or ruamel may refuse or escape (the reader refuses most already)."""
    if source.isascii():
        return _CONTROL.search(source) is not None
    return any(not c.isprintable() and c != "\n" for c in source)


def _plain_pairs(root: yaml.Node, lines: list[str]) -> list[tuple[yaml.ScalarNode, yaml.Node]] | None:
    """The top-level pairs when every key is a plain one-line text and every value is written
    plainly (one-line scalars, collections of them, no tags); None otherwise."""
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    pairs = []
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or not _text_key(key) or not _KEY.match(key.value):
            return None
        if lines[key.start_mark.line][: key.start_mark.column].strip():  # `? key`: an explicit key
            return None
        if key.value.lower() in _KEY_WORDS or not _plain_value(value, lines):
            return None
        pairs.append((key, value))
    return pairs


def _text_key(key: yaml.ScalarNode) -> bool:
    """A plain key both readers take as the same text (ruamel reads `1_000:` as a number)."""
    return (
        key.style in _PLAIN_STYLES
        and key.tag == _STR
        and _RESOLVER.resolve(ScalarNode, key.value, (True, False)) == _STR
    )


def _plain_value(node: yaml.Node, lines: list[str]) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        mark = item.start_mark
        first = lines[mark.line][mark.column : mark.column + 1] if mark.line < len(lines) else ""
        if first in ("!", "&", "*"):
            return False
        if isinstance(item, yaml.ScalarNode):
            if item.style not in _SCALAR_STYLES or mark.line != item.end_mark.line:
                return False
        elif isinstance(item, yaml.SequenceNode):
            stack.extend(item.value)
        elif isinstance(item, yaml.MappingNode):
            if any(not isinstance(k, yaml.ScalarNode) or not _text_key(k) for k, _ in item.value):
                return False
            stack.extend(v for _, v in item.value)
    return True


def _commented(value: Any) -> Any:
    """A spelled value in the round trip's containers."""
    if isinstance(value, dict):
        return CommentedMap((k, _commented(v)) for k, v in value.items())
    if isinstance(value, list):
        return CommentedSeq(_commented(v) for v in value)
    return value


# --- writing one key as ruamel writes it -----------------------------------------------------


def _entry(name: str, value: Any, flow: bool, indent: tuple[int, int]) -> str | None:
    """`name: value` as the round trip's dump writes it; `flow` when it is a flow list the edit
    kept (a new list is a block list). None when not certain."""
    if not _simple_key(name):
        return None
    if isinstance(value, list):
        return _list_entry(name, value, flow, indent)
    if isinstance(value, dict):
        return None
    text = _scalar(value)
    if text is None:
        return None
    return f"{name}:\n" if text == "" else f"{name}: {text}\n"


def _list_entry(name: str, items: list[Any], flow: bool, indent: tuple[int, int]) -> str | None:
    if not items:
        return f"{name}: []\n"
    if flow:
        texts = [_scalar(item, flow=True) for item in items]
        line = f"{name}: [{', '.join(t for t in texts if t)}]\n"
        return None if any(not t for t in texts) or len(line) > _FLOW_WIDTH else line
    mapping, offset = indent
    if mapping not in (2, 4) or offset not in (0, 2, 4):
        return None
    lines = [f"{name}:\n"]
    for item in items:
        piece = _item(item, " " * offset)
        if piece is None:
            return None
        lines.append(piece)
    return "".join(lines)


def _item(item: Any, lead: str) -> str | None:
    if isinstance(item, dict):
        pairs = [(k, _scalar(v)) for k, v in item.items()]
        if not pairs or any(not isinstance(k, str) or not _simple_key(k) or not t for k, t in pairs):
            return None
        inner = lead + "  "
        rows = [f"{k}: {t}\n" for k, t in pairs]
        return lead + "- " + rows[0] + "".join(inner + row for row in rows[1:])
    if isinstance(item, list):
        return None
    text = _scalar(item)
    return f"{lead}- {text}\n" if text else None


def _scalar(value: Any, flow: bool = False) -> str | None:
    """A scalar's text as the round trip writes it ("" for null); None when not certain."""
    if isinstance(value, yaml12.Verbatim):
        return value.text
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is dt.datetime and value.utcoffset() == dt.timedelta(0):
        return value.replace(tzinfo=None).isoformat() + "Z"
    if type(value) is str and _plain(value, flow):
        return value
    return None


def _simple_key(name: str) -> bool:
    """A key ruamel writes as it is (past 128 characters it writes a `? ` key)."""
    return len(name) < _KEY_MAX and _plain(name)


def _plain(text: str, flow: bool = False) -> bool:
    """Whether ruamel writes `text` as it is (its emitter's `analyze_scalar`, narrowed): a plain
    scalar, in a block (or a flow list), that it would not read as anything else."""
    if not text or len(text) > _PLAIN_MAX or not _FIRST.match(text) or text[-1] in " :":
        return False
    if ": " in text or " #" in text or not text.isprintable() or (flow and _FLOW.search(text)):
        return False
    return bool(_RESOLVER.resolve(ScalarNode, text, (True, False)) == _STR)
