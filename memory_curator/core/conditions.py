"""The rules file's condition language: small, safe, and evaluated without eval.

A condition is a querier fact named by a string (`known_unchanged`), or a one-key mapping:
`all`/`any` (lists), `not`, `present`/`missing` (field or list of fields), `equals`/`in`/
`at_least`/`at_most`/`matches` (a mapping of field to operand), `has_tag` (tag or list).

`matches` takes RE2 syntax (google-re2): matching time is linear in the text whatever the
pattern, so a rules file cannot make a sweep hang; what RE2 cannot compile (backreferences,
lookaround, possessive quantifiers, ...) is refused when the rules are loaded, naming it.
Conditions nest at most MAX_DEPTH deep.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import re2

from memory_curator.core.notes import as_list, norm_tag

FACTS = (
    "exact_key_exists",
    "known_unchanged",
    "exact_duplicate",
    "near_duplicate",
    "subject_note_exists",
    "semantic_neighbour",
    "links_to_durable_note",
    "required_fields_present",
)
OPERATORS = (
    "all",
    "any",
    "not",
    "present",
    "missing",
    "equals",
    "in",
    "at_least",
    "at_most",
    "has_tag",
    "matches",
)
MAX_REGEX = 200
MAX_DEPTH = 32  # all/any/not nesting: deeper is a mistake (or an attack), not a rule
TRUE_WORDS = {"true", "yes", "on", "1"}
FALSE_WORDS = {"false", "no", "off", "0"}


class ConditionError(ValueError):
    """A malformed condition; `line` is relative to the machine block when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Cond:
    op: str
    arg: Any  # tuple of Cond for all/any, Cond for not, tuples of (field, operand) otherwise
    text: str  # how the rules file wrote it, for explanations

    def facts(self) -> set[str]:
        if self.op == "fact":
            return {self.arg}
        if self.op in ("all", "any"):
            return set().union(*(c.facts() for c in self.arg)) if self.arg else set()
        if self.op == "not":
            inner: Cond = self.arg
            return inner.facts()
        return set()

    def fields(self) -> set[str]:
        """The fields this condition looks at (`surface`, `agent` and `body` among them)."""
        if self.op in ("all", "any"):
            return set().union(*(c.fields() for c in self.arg)) if self.arg else set()
        if self.op == "not":
            inner: Cond = self.arg
            return inner.fields()
        if self.op in ("present", "missing"):
            return {str(name) for name in self.arg}
        if self.op in ("equals", "in", "at_least", "at_most", "matches"):
            return {str(name) for name, _ in self.arg}
        return set()


@dataclass(frozen=True)
class Subject:
    """What a condition can look at: the candidate's fields, tags, body and querier facts."""

    fields: Mapping[str, Any]
    tags: frozenset[str]
    facts: Mapping[str, bool]


def compile_condition(raw: Any, line: int | None = None, depth: int = 1) -> Cond:
    if depth > MAX_DEPTH:
        raise ConditionError(f"conditions nest more than {MAX_DEPTH} deep", line)
    if isinstance(raw, str):
        if raw not in FACTS:
            raise ConditionError(f"unknown condition {raw!r} (facts: {', '.join(FACTS)})", line)
        return Cond("fact", raw, raw)
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise ConditionError(f"a condition is a fact name or a one-key mapping, not {raw!r}", line)
    op, arg = next(iter(raw.items()))
    op = str(op)
    line = _line_of(raw, op, line)
    if op not in OPERATORS:
        raise ConditionError(f"unknown condition {op!r} (known: {', '.join(OPERATORS)})", line)
    if op == "not":
        return _compile_not(op, arg, line, depth)
    if op in ("all", "any"):
        return _compile_group(op, arg, line, depth)
    return _COMPILERS[op](op, arg, line)


def _line_of(raw: Any, key: str, default: int | None) -> int | None:
    try:
        return int(raw.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return default


def _compile_group(op: str, arg: Any, line: int | None, depth: int = 1) -> Cond:
    if not isinstance(arg, list) or not arg:
        raise ConditionError(f"'{op}' takes a non-empty list of conditions", line)
    items = tuple(compile_condition(item, _item_line(arg, i, line), depth + 1) for i, item in enumerate(arg))
    word = " AND " if op == "all" else " OR "
    return Cond(op, items, word.join(f"({c.text})" if c.op in ("all", "any") else c.text for c in items))


def _item_line(seq: Any, index: int, default: int | None) -> int | None:
    try:
        return int(seq.lc.item(index)[0]) + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return default


def _compile_not(op: str, arg: Any, line: int | None, depth: int = 1) -> Cond:
    inner = compile_condition(arg, line, depth + 1)
    return Cond(op, inner, f"NOT {inner.text}")


def _compile_fields(op: str, arg: Any, line: int | None) -> Cond:
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ConditionError(f"'{op}' takes a field name or a list of field names", line)
    word = "no " if op == "missing" else ""
    return Cond(op, tuple(names), " AND ".join(f"{word}{n}" for n in names))


def _compile_operands(op: str, arg: Any, line: int | None) -> Cond:
    if not isinstance(arg, Mapping) or not arg:
        raise ConditionError(f"'{op}' takes a mapping of field: value", line)
    pairs = tuple((str(k), v) for k, v in arg.items())
    for field_name, operand in pairs:
        _check_operand(op, field_name, operand, line)
    symbol = {"equals": "=", "at_least": ">=", "at_most": "<=", "in": " in ", "matches": " ~ "}[op]
    return Cond(op, pairs, " AND ".join(f"{k}{symbol}{_show(v)}" for k, v in pairs))


def _check_operand(op: str, field_name: str, operand: Any, line: int | None) -> None:
    if op in ("at_least", "at_most") and (isinstance(operand, bool) or not isinstance(operand, int | float)):
        raise ConditionError(f"'{op}' needs a number for {field_name}, not {operand!r}", line)
    if op == "in" and not isinstance(operand, list):
        raise ConditionError(f"'in' needs a list of values for {field_name}", line)
    if op == "matches":
        if not isinstance(operand, str) or len(operand) > MAX_REGEX:
            raise ConditionError(f"'matches' needs a regular expression of at most {MAX_REGEX} characters", line)
        problem = regex_problem(operand)
        if problem:
            raise ConditionError(f"bad regular expression {operand!r} ('matches' takes RE2 syntax): {problem}", line)


# --- regular expressions: RE2, linear time ---------------------------------------------------

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # the error comes back as an exception; nothing on stderr
# What RE2 refuses that Python's `re` accepts, by the start of RE2's complaint, named for a person.
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead (?=...) is not supported"),
    ("invalid perl operator: (?!", "negative lookahead (?!...) is not supported"),
    ("invalid perl operator: (?<=", "lookbehind (?<=...) is not supported"),
    ("invalid perl operator: (?<!", "negative lookbehind (?<!...) is not supported"),
    ("invalid perl operator: (?>", "atomic group (?>...) is not supported"),
    ("invalid perl operator: (?(", "conditional group (?(...)...) is not supported"),
    ("invalid perl operator: (?#", "inline comment (?#...) is not supported"),
    ("invalid escape sequence: \\Z", "\\Z is not supported (write \\z)"),
    ("invalid escape sequence: \\u", "\\uXXXX is not supported (write \\x{XXXX})"),
    ("invalid escape sequence: \\U", "\\UXXXXXXXX is not supported (write \\x{XXXXXX})"),
    ("invalid repetition size", "a repetition count over 1000 is not supported"),
    ("pattern too large", "the pattern is too large"),
)
_BACKREFERENCE = re.compile(r"invalid escape sequence: \\[1-9]")
_POSSESSIVE = re.compile(r"bad repetition operator: .*[*+?}]\+$")


def regex_problem(pattern: str) -> str | None:
    """Why RE2 cannot compile `pattern`, naming the construct (None: it compiles)."""
    try:
        _compiled(pattern)
    except re2.error as exc:
        if "(?P=" in pattern:  # RE2 only says "invalid perl operator: (?P"
            return "named backreference (?P=name) is not supported"
        return _explain(exc)
    except (UnicodeError, ValueError, TypeError) as exc:  # a lone surrogate cannot be UTF-8
        return f"cannot be read as text ({exc})"
    return None


def _explain(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    message = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if _BACKREFERENCE.match(message):
        return f"backreference {message.rsplit(' ', 1)[-1]} is not supported"
    if _POSSESSIVE.match(message):
        return f"possessive quantifier {message.rsplit(' ', 1)[-1]} is not supported"
    for start, meaning in _UNSUPPORTED:
        if message.startswith(start):
            return meaning
    return message


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re2._Regexp:
    return re2.compile(pattern, options=_RE2_OPTIONS)


def regex_search(pattern: str, text: str) -> bool:
    """Whether `pattern` (RE2 syntax, checked when the rules were loaded) is found in `text`;
    time linear in the text. Bytes that are not UTF-8 are matched as they are (never raise)."""
    return _compiled(pattern).search(text.encode("utf-8", "surrogateescape")) is not None


def _compile_tags(op: str, arg: Any, line: int | None) -> Cond:
    tags = [arg] if isinstance(arg, str) else arg
    if not isinstance(tags, list) or not tags:
        raise ConditionError("'has_tag' takes a tag or a list of tags", line)
    normal = tuple(norm_tag(t) for t in tags)
    return Cond(op, normal, " OR ".join(f"#{t}" for t in normal))


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


_COMPILERS = {  # the leaves; all/any/not carry the nesting depth (compile_condition)
    "present": _compile_fields,
    "missing": _compile_fields,
    "equals": _compile_operands,
    "in": _compile_operands,
    "at_least": _compile_operands,
    "at_most": _compile_operands,
    "matches": _compile_operands,
    "has_tag": _compile_tags,
}


# --- evaluation ------------------------------------------------------------------------------


def evaluate(cond: Cond, subject: Subject) -> bool:
    return _EVALUATORS[cond.op](cond, subject)


def is_present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | tuple | Mapping):
        return bool(value)
    return True


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def same_value(value: Any, expected: Any) -> bool:
    """Equality as a person means it: case-insensitive text, 'yes' for true, 2 == '2'."""
    if isinstance(value, list):
        return any(same_value(v, expected) for v in value)
    if isinstance(expected, bool):
        if isinstance(value, bool):
            return value is expected
        words = TRUE_WORDS if expected else FALSE_WORDS
        return str(value).strip().lower() in words
    if isinstance(expected, int | float) and _number(value) is not None:
        return _number(value) == float(expected)
    if value is None or expected is None:
        return value is expected
    return str(value).strip().casefold() == str(expected).strip().casefold()


def _eval_compare(cond: Cond, subject: Subject) -> bool:
    for field_name, operand in cond.arg:
        value = subject.fields.get(field_name)
        if cond.op == "equals":
            ok = same_value(value, operand)
        elif cond.op == "in":
            ok = any(same_value(value, option) for option in operand)
        elif cond.op == "matches":
            ok = any(regex_search(operand, str(v)) for v in as_list(value) or [])
        else:
            number = _number(value)
            ok = number is not None and (number >= operand if cond.op == "at_least" else number <= operand)
        if not ok:
            return False
    return True


_EVALUATORS = {
    "fact": lambda c, s: bool(s.facts.get(c.arg, False)),
    "all": lambda c, s: all(evaluate(x, s) for x in c.arg),
    "any": lambda c, s: any(evaluate(x, s) for x in c.arg),
    "not": lambda c, s: not evaluate(c.arg, s),
    "present": lambda c, s: all(is_present(s.fields.get(n)) for n in c.arg),
    "missing": lambda c, s: not any(is_present(s.fields.get(n)) for n in c.arg),
    "has_tag": lambda c, s: any(t in s.tags for t in c.arg),
    "equals": _eval_compare,
    "in": _eval_compare,
    "at_least": _eval_compare,
    "at_most": _eval_compare,
    "matches": _eval_compare,
}
