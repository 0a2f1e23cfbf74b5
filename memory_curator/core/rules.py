"""The rules file: human prose plus one ```yaml curator-rules``` block, parsed once into
immutable objects. Every problem is a RulesError naming the file and the line."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from memory_curator.core.conditions import Cond, ConditionError, compile_condition
from memory_curator.core.errors import RulesError
from memory_curator.core.notes import content_hash
from memory_curator.core.settings import (
    NESTED,
    SecretSettings,
    SemanticSettings,
    Unusable,
    coerce,
    judge_problem,
    semantic_problem,
    settings_problem,
)
from memory_curator.core.settings import JudgeSettings as JudgeSettings  # where some commands find it
from memory_curator.core.settings import Settings as Settings
from memory_curator.core.surface import BOOKKEEPING, HANDED_OVER, Surface, surface_folder, template_problem

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Settings = TypeVar("_Settings", bound="DataclassInstance")  # Settings or JudgeSettings
_T = TypeVar("_T")
_P = ParamSpec("_P")

_BLOCK = re.compile(r"^(```+|~~~+)[ \t]*yaml[ \t]+curator-rules[ \t]*\r?$", re.MULTILINE)
OUTCOMES = ("pass", "fail", "undecided")
CRITERIA = ("novel", "sourced", "specific", "future_useful", "surprise_or_load_bearing")
RULES_MAX_BYTES = 1 << 20  # a rules file is a note a person edits: 1 MiB is far more than one needs
# the frontmatter keys the curator itself reads (identity, provenance, merge), whatever the rules say
CURATOR_FIELDS = (
    "type", "title", "name", "slug", "date", "entity", "predicate", "value", "topic",
    "source_url", "sources", "source_kind", "confidence", "observed_at", "captured_at",
    "tags", "aliases", "participants", "roles", "source_skill", "author", "load_bearing",
)  # fmt: skip
NOT_KEYS = ("surface", "agent", "body")  # what conditions see besides the frontmatter


@dataclass(frozen=True)
class Criterion:
    name: str
    label: str
    fail: Cond | None = None
    undecided: Cond | None = None
    passes: Cond | None = None
    otherwise: str = "fail"


@dataclass(frozen=True)
class DropRule:
    id: str
    reason: str
    when: Cond | None
    judge_only: bool = False


@dataclass(frozen=True)
class Rules:
    path: str
    prose: str
    surfaces: tuple[Surface, ...]
    criteria: tuple[Criterion, ...]
    drop_rules: tuple[DropRule, ...]
    settings: Settings
    digest: str

    def surface_for_type(self, value: Any) -> Surface | None:
        wanted = str(value).strip().lower()
        return next((s for s in self.surfaces if wanted in (s.type.lower(), s.name.lower())), None)

    @cached_property
    def field_names(self) -> tuple[str, ...]:
        """Every frontmatter key these rules name (a surface's key, required fields and path
        placeholders, a condition's fields) and the curator's own: what a candidate's keys are
        matched against, case-insensitively (`candidate.build`)."""
        names: dict[str, None] = {}
        for surface in self.surfaces:
            names.update(dict.fromkeys([*surface.key, *surface.required, *(f for f, _ in surface.placeholders())]))
        conds = [c for r in self.drop_rules for c in (r.when,) if c is not None]
        conds += [c for k in self.criteria for c in (k.fail, k.undecided, k.passes) if c is not None]
        for cond in conds:
            names.update(dict.fromkeys(sorted(cond.fields())))
        names.update(dict.fromkeys(CURATOR_FIELDS))
        return tuple(n for n in names if n not in NOT_KEYS)

    def surface_named(self, name: str) -> Surface | None:
        return next((s for s in self.surfaces if s.name == name), None)

    def drop_rule(self, rule_id: str) -> DropRule | None:
        return next((r for r in self.drop_rules if r.id == rule_id), None)


_PARSED: dict[str, Rules] = {}  # the last few texts parsed, and their Rules
_PARSED_MAX = 8


def parse(text: str, origin: str) -> Rules:
    """The Rules of `text`, the file at `origin`. A command reads its rules two or three times
    and `watch` every sweep, and ruamel takes ~17 ms to read the default block, so the same text
    is parsed once per process: Rules are immutable, and each file's are named after it. A text
    that fails is never kept, so each error names the file it is in."""
    known = _PARSED.get(text)
    if known is None:
        known = _parse(text, origin)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)), None)
        _PARSED[text] = known
    return known if known.path == origin else replace(known, path=origin)


def _parse(text: str, origin: str) -> Rules:
    block, first_line, prose = _machine_block(text, origin)
    try:
        data = YAML(typ="rt").load(block)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark else first_line
        raise RulesError(origin, f"YAML error: {exc.problem or exc.context}", line) from None
    except RecursionError:
        raise RulesError(origin, "the curator-rules block is nested too deeply", first_line) from None
    except (ValueError, OverflowError) as exc:  # a value YAML reads but Python cannot hold
        line, why = _unreadable(block, exc)
        raise RulesError(origin, why, first_line + line) from None
    if not isinstance(data, dict):
        raise RulesError(origin, "the curator-rules block must be a mapping", first_line)
    builder = _Builder(origin, first_line)
    try:
        return builder.build(data, prose, content_hash(text))
    except ConditionError as exc:
        raise RulesError(origin, str(exc), builder.abs_line(exc.line)) from None
    except RecursionError:
        raise RulesError(origin, "the curator-rules block is nested too deeply", first_line) from None


def _unreadable(block: str, exc: Exception) -> tuple[int, str]:
    """Where in the block (0-based line) a value failed to load, and why, in one line."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if limit:
        long = re.search(rf"[0-9][0-9_]{{{limit},}}", block)
        if long:
            return block.count("\n", 0, long.start()), f"a number with more than {limit} digits"
    return 0, f"a value cannot be read: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"


def _machine_block(text: str, origin: str) -> tuple[str, int, str]:
    matches = list(_BLOCK.finditer(text))
    if not matches:
        raise RulesError(origin, "no ```yaml curator-rules``` block found")
    if len(matches) > 1:
        line = text.count("\n", 0, matches[1].start()) + 1
        raise RulesError(origin, "more than one curator-rules block", line)
    start = matches[0]
    fence = start.group(1)
    close = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*\r?$", re.MULTILINE)
    end = close.search(text, start.end())
    first_line = text.count("\n", 0, start.start()) + 2
    if end is None:
        raise RulesError(origin, "the curator-rules block is not closed", first_line - 1)
    block = text[start.end() + 1 : end.start()]
    prose = (text[: start.start()] + text[end.end() :]).strip()
    return block, first_line, prose


class _Builder:
    """Builds `Rules` from the loaded block, going on past a problem (each surface, criterion,
    drop rule and setting is checked on its own) so that one pass finds every problem."""

    def __init__(self, origin: str, first_line: int) -> None:
        self.origin, self.first_line = origin, first_line
        self.problems: list[RulesError] = []

    def attempt(self, build: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T | None:
        """`build(...)`, or None with its problem noted."""
        try:
            return build(*args, **kwargs)
        except ConditionError as exc:
            self.problems.append(RulesError(self.origin, str(exc), self.abs_line(exc.line)))
        except RulesError as exc:
            self.problems.extend(exc.problems)
        return None

    def abs_line(self, block_line: int | None) -> int | None:
        return None if block_line is None else self.first_line + block_line - 1

    def fail(self, message: str, node: Any = None, key: Any = None) -> RulesError:
        return RulesError(self.origin, message, self.abs_line(_line(node, key)))

    def build(self, data: Any, prose: str, digest: str) -> Rules:
        unknown = set(data) - {"version", "surfaces", "criteria", "drop_rules", "settings"}
        for key in sorted(unknown, key=str):
            self.problems.append(self.fail(f"unknown section {key!r}", data, key))
        surfaces = self.attempt(self.surfaces, data.get("surfaces"), data)
        criteria = self.attempt(self.criteria, data.get("criteria"), data)
        drops = self.attempt(self.drop_rules, data.get("drop_rules") or [])
        settings = self.attempt(self.settings, data.get("settings") or {})
        if self.problems:
            found = sorted(self.problems, key=lambda p: p.line or 0)
            first = found[0]
            raise first if len(found) == 1 else RulesError(first.path, first.message, first.line, tuple(found))
        assert surfaces is not None and criteria is not None and drops is not None and settings is not None
        return Rules(self.origin, prose, surfaces, criteria, drops, settings, digest)

    def surfaces(self, raw: Any, parent: Any) -> tuple[Surface, ...]:
        if not isinstance(raw, dict) or not raw:
            raise self.fail("'surfaces' must map surface names to their settings", parent, "surfaces")
        out = [self.attempt(self._surface, name, spec, raw) for name, spec in raw.items()]
        return tuple(s for s in out if s is not None)

    def _surface(self, name: Any, spec: Any, raw: Any) -> Surface:
        if not isinstance(spec, dict) or not {"type", "path", "key"} <= set(spec):
            raise self.fail(f"surface {name!r} needs type, path and key", raw, name)
        surface = Surface(
            str(name),
            str(spec["type"]),
            str(spec["path"]),
            tuple(_names(spec["key"])),
            tuple(_names(spec.get("required", []))),
        )
        self._check_template(surface, raw, name)
        unused = [k for k in surface.key if k not in {hole for hole, _ in surface.placeholders()}]
        if unused:  # the identity would not name the file: two notes with different keys, one path
            why = f"key field {unused[0]!r} is not in its path template ({surface.path})"
            node, at = (spec, "key") if _line(spec, "key") else (raw, name)
            raise self.fail(f"surface {surface.name!r}: {why}", node, at)
        carried = spec.get("not_carried")
        if carried is not None and not (isinstance(carried, list) and all(isinstance(k, str) for k in carried)):
            raise self.fail(f"surface {surface.name!r}: not_carried must be a list of keys", spec, "not_carried")
        kept = BOOKKEEPING if carried is None else tuple(carried)
        return replace(surface, curated=self._curated(surface, spec), not_carried=kept)

    def _check_template(self, surface: Surface, raw: Any, name: Any) -> None:
        try:
            holes = surface.placeholders()
        except ValueError as exc:
            raise self.fail(f"surface {surface.name!r}: bad path template: {exc}", raw, name) from None
        if not surface.path.endswith(".md") or surface.path.startswith("/") or ".." in surface.path:
            raise self.fail(f"surface {surface.name!r}: the path must be vault-relative and end in .md", raw, name)
        for hole, spec in holes:
            if hole not in surface.key and hole not in ("slug", "date"):
                raise self.fail(f"surface {surface.name!r}: unknown placeholder {{{hole}}} in path", raw, name)
            if spec and hole != "date":
                raise self.fail(f"surface {surface.name!r}: only {{date}} takes a format", raw, name)
        problem = template_problem(surface.path)
        if problem:
            raise self.fail(f"surface {surface.name!r}: {problem}", raw, name)

    def _curated(self, surface: Surface, spec: Any) -> bool:
        """`curated`: the surface's folder is handed over to the curator. Default: true for the
        agent-fed surfaces (facts, events, persons, projects, research) that have a folder."""
        folder = surface_folder(surface.path)
        value = spec.get("curated")
        if value is None:
            return surface.name in HANDED_OVER and folder is not None
        if not isinstance(value, bool):
            raise self.fail(f"surface {surface.name!r}: curated must be true or false", spec, "curated")
        if value and folder is None:
            why = "curated: true needs a fixed folder at the start of its path"
            raise self.fail(f"surface {surface.name!r}: {why}", spec, "curated")
        return value

    def criteria(self, raw: Any, parent: Any) -> tuple[Criterion, ...]:
        if not isinstance(raw, dict):
            raise self.fail("'criteria' must map criterion names to conditions", parent, "criteria")
        missing = [c for c in CRITERIA if c not in raw]
        if missing:
            self.problems.append(self.fail(f"criteria missing: {', '.join(missing)}", parent, "criteria"))
        out = [self.attempt(self._criterion, name, spec, raw) for name, spec in raw.items()]
        return tuple(c for c in out if c is not None)

    def _criterion(self, name: Any, spec: Any, raw: Any) -> Criterion:
        if not isinstance(spec, dict):
            raise self.fail(f"criterion {name!r} must be a mapping", raw, name)
        unknown = set(spec) - {"label", "pass", "fail", "undecided", "otherwise"}
        if unknown:
            raise self.fail(f"criterion {name!r}: unknown key {sorted(unknown)[0]!r}", spec, sorted(unknown)[0])
        otherwise = str(spec.get("otherwise", "fail"))
        if otherwise not in OUTCOMES:
            raise self.fail(f"criterion {name!r}: otherwise must be one of {OUTCOMES}", spec, "otherwise")
        conds = {k: self.cond(spec, k) for k in ("pass", "fail", "undecided")}
        return Criterion(
            str(name),
            str(spec.get("label", name)),
            conds["fail"],
            conds["undecided"],
            conds["pass"],
            otherwise,
        )

    def cond(self, spec: Any, key: str) -> Cond | None:
        if key not in spec or spec[key] is None:
            return None
        return compile_condition(spec[key], _line(spec, key))

    def drop_rules(self, raw: Any) -> tuple[DropRule, ...]:
        if not isinstance(raw, list):
            raise self.fail("'drop_rules' must be a list")
        out: list[DropRule] = []
        seen: set[str] = set()
        for index, spec in enumerate(raw):
            rule = self.attempt(self._drop_rule, spec, _item(raw, index), seen)
            if rule is not None:
                out.append(rule)
        return tuple(out)

    def _drop_rule(self, spec: Any, line: int | None, seen: set[str]) -> DropRule:
        if not isinstance(spec, dict) or "id" not in spec or "reason" not in spec:
            raise RulesError(self.origin, "each drop rule needs an id and a reason", self.abs_line(line))
        rule_id = str(spec["id"])
        if rule_id in seen:
            raise self.fail(f"duplicate drop rule id {rule_id!r}", spec, "id")
        seen.add(rule_id)
        judge_only = bool(spec.get("judge_only", False))
        when = self.cond(spec, "when")
        if when is None and not judge_only:
            raise self.fail(f"drop rule {rule_id!r} needs 'when' (or judge_only: true)", spec, "id")
        for fact in ("near_duplicate", "semantic_neighbour"):
            if when is not None and fact in when.facts():
                raise self.fail(f"drop rule {rule_id!r} uses {fact}: similarity alone never drops", spec, "when")
        return DropRule(rule_id, str(spec["reason"]), when, judge_only)

    def settings(self, raw: Any) -> Settings:
        """Typed and range-checked here, by the same checks `run` applies (settings_problem,
        judge_problem, semantic_problem): what `rules check` accepts, a sweep accepts."""
        if not isinstance(raw, dict):
            raise self.fail("'settings' must be a mapping")
        nested = {name: raw.get(name) or {} for name in NESTED}
        for name, value in nested.items():
            if not isinstance(value, dict):
                raise self.fail(f"{name!r} must be a mapping of {name} settings", raw, name)
        base = {k: v for k, v in raw.items() if k not in NESTED}
        before = len(self.problems)
        settings = self._typed(Settings(), base, raw)
        judge = self._typed(JudgeSettings(), nested["judge"], nested["judge"])
        semantic = self._typed(SemanticSettings(), nested["semantic"], nested["semantic"])
        secrets = self._typed(SecretSettings(), nested["secrets"], nested["secrets"])
        if len(self.problems) > before:  # a value of the wrong type: its range means nothing yet
            return settings
        checks = (
            (settings_problem(settings), raw),
            (judge_problem(judge), nested["judge"]),
            (semantic_problem(semantic), nested["semantic"]),
        )
        for problem, node in checks:
            if problem:
                name, why = problem
                line = _line(node, name) if name in node else _line(node)
                raise RulesError(self.origin, f"setting {name!r} {why}", self.abs_line(line))
        return replace(settings, judge=judge, semantic=semantic, secrets=secrets)

    def _typed(self, default: _Settings, values: dict[str, Any], node: Any) -> _Settings:
        known = {f.name: f for f in fields(default)}
        out = {}
        for key, value in values.items():
            if key not in known or key in NESTED:
                self.problems.append(self.fail(f"unknown setting {key!r}", node, key))
                continue
            coerced = self.attempt(self._coerce, key, value, getattr(default, key), node)
            if coerced is not None or value is None:
                out[key] = coerced
        return replace(default, **out)

    def _coerce(self, key: str, value: Any, current: Any, node: Any) -> Any:
        try:
            return coerce(key, value, current)
        except Unusable as exc:
            raise self.fail(f"setting {key!r} {exc}", node, key) from None


def _names(raw: Any) -> list[str]:
    return [str(raw)] if isinstance(raw, str) else [str(x) for x in raw or []]


def _line(node: Any, key: Any = None) -> int | None:
    try:
        return int(node.lc.key(key)[0] if key is not None else node.lc.line) + 1
    except (AttributeError, KeyError, TypeError):
        return None


def _item(seq: Any, index: int) -> int | None:
    try:
        return int(seq.lc.item(index)[0]) + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return None
