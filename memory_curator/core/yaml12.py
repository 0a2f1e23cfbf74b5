"""YAML as Obsidian reads it (1.2 core schema), on PyYAML's C parser, and the written text of
each scalar so that a value moved elsewhere keeps its spelling.

PyYAML's own loaders follow YAML 1.1 (`NO` is false, `1:20` is 80, `010` is 8). `Loader12`
swaps in the 1.2 core resolvers and constructors and keeps the C parser's speed. There is no
timestamp type in 1.2: dates stay the text they were written as, and the curator parses the
times it compares explicitly. Whatever the input, loading raises only `yaml.YAMLError`.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from ruamel.yaml.scalarstring import ScalarString

_HANDLER = YAMLHandler()  # python-frontmatter's handler, given the 1.2 loader
MAX_DEPTH = 32  # a person or an agent nests a few levels; hundreds is an attack
MAX_INT_DIGITS = 40

_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class Loader12(yaml.CSafeLoader):
    """The C safe loader with YAML 1.2 core resolvers; keys are kept as the text written."""

    # PyYAML's per-class table (its stub calls it an instance attribute); empty: only the 1.2 resolvers below
    yaml_implicit_resolvers = {}  # noqa: RUF012

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
        out: dict[Any, Any] = {}
        construct = self.construct_object
        for key_node, value_node in node.value:
            key = key_node.value if type(key_node) is yaml.ScalarNode else self._key(key_node)
            if key in out:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            out[key] = construct(value_node, deep=deep)
        return out

    def _key(self, node: yaml.Node) -> Any:
        """A collection used as a key. A scalar key is its written text (`1:`, `true:` and
        `null:` are the keys '1', 'true', 'null', as Obsidian shows them): two spellings can
        never collide into one."""
        key = self.construct_object(node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "a key that is not text", node.start_mark) from None
        return key

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(self.construct_scalar(node))
        digits = text.lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(None, None, "an integer too large", node.start_mark)
        try:
            if digits.startswith("0o"):
                return int(digits[2:], 8)
            if digits.startswith("0x"):
                return int(digits[2:], 16)
            return int(text, 10)
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not an integer", node.start_mark
            ) from None

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        text = str(self.construct_scalar(node)).lower()
        if text.endswith(".inf"):
            return -math.inf if text.startswith("-") else math.inf
        if text == ".nan":
            return math.nan
        try:
            return float(text)
        except ValueError:
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a number", node.start_mark) from None

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        return str(self.construct_scalar(node)).lower() == "true"

    def construct_not_core(self, node: yaml.Node) -> Any:
        raise yaml.constructor.ConstructorError(None, None, f"the tag {node.tag} is not YAML 1.2 core", node.start_mark)

    def construct_timestamp_text(self, node: yaml.ScalarNode) -> str:
        """An explicit `!!timestamp` stays text too: the curator parses times where it compares."""
        return str(self.construct_scalar(node))


for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", _BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", _FLOAT, "-+0123456789."),
    ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
):
    Loader12.add_implicit_resolver(_tag, _pattern, list(_first))
for _tag, _method in (
    ("tag:yaml.org,2002:int", Loader12.construct_yaml_int),
    ("tag:yaml.org,2002:float", Loader12.construct_yaml_float),
    ("tag:yaml.org,2002:bool", Loader12.construct_yaml_bool),
    ("tag:yaml.org,2002:timestamp", Loader12.construct_timestamp_text),
):
    Loader12.add_constructor(_tag, _method)
for _tag in ("binary", "set", "omap", "pairs"):
    Loader12.add_constructor(f"tag:yaml.org,2002:{_tag}", Loader12.construct_not_core)


def load(source: str) -> Any:
    """Load one YAML document; any failure (C parser, constructor, depth, size) is a YAMLError."""
    try:
        data = yaml.load(source, Loader=Loader12)
    except yaml.YAMLError:
        raise
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        raise yaml.YAMLError(f"cannot be read: {type(exc).__name__}") from None
    if too_deep(data):
        raise yaml.YAMLError(f"nested more than {MAX_DEPTH} levels deep")
    return data


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Iterative, so that checking the depth cannot itself overflow the stack."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


_NEW = object()


class Verbatim(ScalarString):
    """A scalar that is written back as `text`, its original spelling (quotes included).

    As a `str` it is its value's text, so comparisons in the merge see the value; `value` is
    the value itself. Only spellings that are valid in any context are kept (quoted, or plain
    without flow indicators), so moving one into a flow list cannot change its meaning. It is
    a ruamel `ScalarString` so that ruamel keeps it as it is when it replaces a quoted value.
    """

    text: str
    value: Any

    def __new__(cls, text: str, value: Any = _NEW) -> Any:
        if value is _NEW:  # ruamel restyling a new value like the one it replaces: it is plain text
            return str(text)
        self = str.__new__(cls, value if isinstance(value, str) else "" if value is None else str(value))
        self.text = text
        self.value = value
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Verbatim:
        return self

    def __copy__(self) -> Verbatim:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Verbatim, (self.text, self.value))


def keepable(text: str) -> bool:
    if not text or "\n" in text:
        return False
    return text[0] in "'\"" or not any(c in text for c in ",[]{}")


def scalars(source: str) -> dict[tuple[int, int], Verbatim]:
    """(line, column) -> every one-line scalar, with its written text and its value.

    ruamel.yaml reports the same positions (`lc`), so a round-trip mapping can be joined to
    the text each of its values was written as. Empty when the source does not parse.
    """
    loader = Loader12(source)
    out: dict[tuple[int, int], Verbatim] = {}
    try:
        root = loader.get_single_node()
        lines = source.splitlines()
        stack = [root] if root is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, yaml.ScalarNode):
                kept = _verbatim(loader, node, lines)
                if kept is not None:
                    out[(node.start_mark.line, node.start_mark.column)] = kept
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)
            elif isinstance(node, yaml.MappingNode):
                stack.extend(v for _, v in node.value)
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
        return {}
    finally:
        loader.dispose()
    return out


def spelled(source: str) -> dict[str, Any]:
    """The top level of a frontmatter block with every keepable scalar as a `Verbatim`
    (containers are plain dicts and lists): what a promote or a patch copies into a note."""
    loader = Loader12(source)
    try:
        root = loader.get_single_node()
        if not isinstance(root, yaml.MappingNode):
            return {}
        lines = source.splitlines()
        return {str(k.value): _spell(loader, v, lines) for k, v in root.value if isinstance(k, yaml.ScalarNode)}
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
        return {}
    finally:
        loader.dispose()


def _spell(loader: Loader12, node: yaml.Node, lines: list[str]) -> Any:
    if isinstance(node, yaml.MappingNode):
        return {str(k.value): _spell(loader, v, lines) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    if isinstance(node, yaml.SequenceNode):
        return [_spell(loader, v, lines) for v in node.value]
    kept = _verbatim(loader, node, lines) if isinstance(node, yaml.ScalarNode) else None
    return kept if kept is not None else loader.construct_object(node)


def _verbatim(loader: Loader12, node: yaml.ScalarNode, lines: list[str]) -> Verbatim | None:
    start, end = node.start_mark, node.end_mark
    if start.line != end.line or node.style not in (None, "", "'", '"') or start.line >= len(lines):
        return None
    text = lines[start.line][start.column : end.column]
    return Verbatim(text, loader.construct_object(node)) if keepable(text) else None


def top_level(source: str) -> tuple[yaml.Node | None, dict[str, Any]] | None:
    """The root node and, when it is a mapping, its values as `spelled` gives them; None when
    the source does not parse."""
    loader = Loader12(source)
    try:
        root = loader.get_single_node()
        if not isinstance(root, yaml.MappingNode):
            return root, {}
        lines = source.splitlines()
        return root, {str(k.value): _spell(loader, v, lines) for k, v in root.value if isinstance(k, yaml.ScalarNode)}
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
        return None
    finally:
        loader.dispose()
