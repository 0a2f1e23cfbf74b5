"""The decision core: one verdict per candidate, from the rules and the querier's facts.

Pure: no I/O. Order (design §3): drop rules (ANY) -> patch -> promote (ALL criteria) ->
needs_review. Uncertainty never becomes a drop: a drop always names the rule that made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeGuard

from memory_curator.core import conflict, evidence, veil
from memory_curator.core.candidate import Candidate, person_only_keys, placement_problem, with_hints
from memory_curator.core.comparison import Comparison
from memory_curator.core.conditions import Cond, Subject, evaluate
from memory_curator.core.facts import ExistingNote, Facts
from memory_curator.core.ownership import claims
from memory_curator.core.reasons import CODES
from memory_curator.core.rules import Criterion, DropRule, Rules, Settings
from memory_curator.core.secrets import reason as secret_reason

Verdict = Literal["promote", "patch", "drop", "needs_review"]
Value = bool | None  # a criterion's value; None is undecided


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge said about one candidate, already validated and mapped to paths."""

    criteria: Mapping[str, Value] = field(default_factory=dict)
    relation: str = "distinct"  # distinct / duplicate / extends / supersedes / contradicts
    target: str | None = None
    drop_rule: str | None = None
    reason: str = ""
    failure: str | None = None  # why the judge could not answer for this candidate
    audit: Mapping[str, Any] = field(default_factory=dict)  # model, prompt version, raw answer: for the journal
    yours: bool = False  # `target` is a note the judge may not change (`ownership.judge_may_change`): a person's


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str
    surface: str | None = None
    target: str | None = None
    rule: str | None = None
    criteria: Mapping[str, Value] = field(default_factory=dict)
    contradiction: bool = False
    explanation: tuple[str, ...] = ()
    by_judge: bool = False  # the judge named `target` (a patch or a duplicate): `ownership.judge_may_change`
    code: str | None = None  # needs_review: why, as one of `reasons.CODES`, set where the reason is written

    def __post_init__(self) -> None:
        """A needs_review verdict carries its code (never read back from its words); no other does."""
        if (self.verdict == "needs_review") != (self.code is not None) or (self.code and self.code not in CODES):
            raise ValueError(f"a {self.verdict} decision with the reason code {self.code!r}")


def subject_of(candidate: Candidate, facts: Facts, settings: Settings | None = None) -> Subject:
    """What the conditions see. An inbox file's own `source_skill: human` / `author: user` is
    hidden: anything that arrives through `_inbox/` is agent-written (design §3); a placeholder
    source is no source and a confidence word is its number (`evidence.as_read`). The fields
    only a person sets (`user_approved`…) are hidden the same way: an agent cannot approve itself."""
    hidden = {*claims(candidate.frontmatter), *candidate.person_only, *person_only_keys(candidate)}
    read = evidence.as_read(candidate.frontmatter, settings or Settings())
    fields: dict[str, Any] = {k: v for k, v in read.items() if k not in hidden}
    fields["body"] = candidate.note.body
    fields["agent"] = candidate.agent
    fields["surface"] = candidate.surface.name if candidate.surface else None
    required_ok = candidate.surface is not None and not candidate.missing and candidate.key_problem is None
    return Subject(fields, frozenset(candidate.tags), facts.as_conditions(required_ok))


def decide(
    candidate: Candidate, rules: Rules, facts: Facts, judge: JudgeVerdict | None = None, prose: bool = True
) -> Decision:
    """The verdict; with `prose`, one the rules would promote or keep waiting becomes a
    `contradiction` wait when it says otherwise than a note's prose (`_contradicted`)."""
    decision = _decided(candidate, rules, facts, judge)
    return _contradicted(candidate, rules, facts, judge, decision) if prose else decision


READ = frozenset(  # the waits a contradiction read from prose may name instead: novelty and criteria
    {"no-surface", "incomplete", "near-duplicate", "semantic-neighbour", "subject-note", "criteria-failed", "undecided"}
    | {"other"}
)


def _contradicted(
    candidate: Candidate, rules: Rules, facts: Facts, judge: JudgeVerdict | None, decision: Decision
) -> Decision:
    """A promote or a wait on novelty or criteria, with no note of its key (the fields decide
    that one) and no judge's relation but `distinct`, that says otherwise than the prose of a
    note it was found beside (`conflict.in_notes`) waits, naming the note and quoting both; what
    held it stays in the reason. Never a drop, never a patch (docs/judge.md)."""
    if decision.verdict not in ("promote", "needs_review") or (decision.code and decision.code not in READ):
        return decision
    if facts.existing is not None or (_usable(judge) and judge.relation != "distinct"):
        return decision
    found = conflict.in_notes(candidate, facts, rules)
    if found is None:
        return decision
    whose = f"your note {found.path}" if found.yours else found.path
    said = f'contradicts {whose}: "{found.theirs}" there, "{found.mine}" here, with no newer observation time'
    held = "" if decision.verdict == "promote" else f"; {decision.reason}"
    why = f"contradiction: {said}{held}"
    return replace(
        decision, verdict="needs_review", reason=why, target=found.path, contradiction=True, code="contradiction"
    )


def _decided(candidate: Candidate, rules: Rules, facts: Facts, judge: JudgeVerdict | None) -> Decision:
    surface = candidate.surface.name if candidate.surface else None
    if candidate.secrets:  # first: a credential waits for a person (who may rotate it), whatever else holds
        return Decision("needs_review", secret_reason(candidate.secrets), surface, candidate.target, code="secret")
    if candidate.note.problem:
        return Decision("needs_review", candidate.note.problem, surface, code="unreadable")
    if veil.decided_privately(facts):  # never dropped as known, never patched: a person sees it
        return Decision("needs_review", veil.PRIVATE_NOTE, surface, candidate.target, code="private")
    subject = subject_of(candidate, facts, rules.settings)
    dropped = _drop(candidate, rules, facts, subject, judge)
    if dropped is not None:
        return dropped
    if candidate.privacy:
        return Decision("needs_review", private_reason(candidate), surface, candidate.target, code="private")
    criteria = evaluate_criteria(rules.criteria, subject, judge)
    flagged = _judge_flag(candidate, judge, criteria)
    if flagged is not None:
        return flagged
    if candidate.surface is None:
        why = "; ".join(p for p in (placement_problem(candidate, rules), found_notes(facts)) if p)
        why = with_hints(_with_closest(why, facts, rules.settings), candidate)
        return Decision("needs_review", why, code="no-surface")
    named = _judge_relation(candidate, rules, judge, criteria)
    if named is not None:
        return named
    if facts.existing is not None and facts.comparison is not None and facts.comparison.additions:
        return _patch(candidate, facts, criteria)
    if all(criteria.get(c.name) is True for c in rules.criteria):
        if any(n.found_by == NAMESAKE for n in facts.subjects):  # a name, not novelty: no judge settles it
            why = _found(facts)["subject-note"] + _judge_said(judge)
            return Decision("needs_review", why, surface, candidate.target, criteria=criteria, code="subject-note")
        reason = " + ".join(c.label for c in rules.criteria) + _judge_said(judge)
        return Decision("promote", reason, surface, candidate.target, criteria=criteria)
    failure = f"; {judge.failure}" if judge is not None and judge.failure else ""
    why = _with_closest(_review_reason(candidate, rules, criteria, facts), facts, rules.settings)
    return Decision(
        "needs_review",
        with_hints(why + failure, candidate),
        surface,
        candidate.target,
        criteria=criteria,
        code=criteria_code(criteria, facts),
    )


PRIVATE = "private content"  # how a privacy reason begins


def private_reason(candidate: Candidate) -> str:
    """Why a candidate with a privacy tag that no drop rule took waits: only a person approves it."""
    tags = ", ".join(f"#{t}" for t in candidate.privacy)
    return f"{PRIVATE} ({tags}): only a person may approve sharing it (`memory-curator review`)"


def _drop(
    candidate: Candidate, rules: Rules, facts: Facts, subject: Subject, judge: JudgeVerdict | None
) -> Decision | None:
    for rule in rules.drop_rules:
        if _rule_matches(rule, subject, judge):
            surface = candidate.surface.name if candidate.surface else None
            return Decision(
                "drop",
                with_hints(_reason(rule, facts) + _placeholder_note(candidate, rules), candidate),  # typos named
                surface,
                rule=rule.id,
                explanation=(rule.when.text,) if rule.when else ("cited by the judge",),
            )
    return _judge_duplicate(candidate, rules, judge)


KNOWN_RULE = "known-unchanged"  # the "already known" rule a judge-found duplicate is dropped by


def _judge_duplicate(candidate: Candidate, rules: Rules, judge: JudgeVerdict | None) -> Decision | None:
    """A paraphrase of a note the judge was shown is already known. A vault that renamed the
    rule keeps the candidate (see `_judge_relation`): no drop without a rule to name."""
    rule = rules.drop_rule(KNOWN_RULE)
    if not _usable(judge) or judge.relation != "duplicate" or not judge.target or rule is None:
        return None
    return Decision(
        "drop",
        rule.reason.replace("{note}", judge.target) + _judge_said(judge),
        candidate.surface.name if candidate.surface else None,
        rule=rule.id,
        explanation=(f"the judge found a duplicate of {judge.target}",),
        by_judge=True,
    )


def _usable(judge: JudgeVerdict | None) -> TypeGuard[JudgeVerdict]:
    return judge is not None and judge.failure is None


def _judge_said(judge: JudgeVerdict | None) -> str:
    return f" (judge: {judge.reason})" if _usable(judge) and judge.reason else ""


def _rule_matches(rule: DropRule, subject: Subject, judge: JudgeVerdict | None) -> bool:
    if rule.judge_only:
        return judge is not None and judge.failure is None and judge.drop_rule == rule.id
    return rule.when is not None and evaluate(rule.when, subject)


def _reason(rule: DropRule, facts: Facts) -> str:
    note = (facts.existing.path if facts.existing else None) or facts.duplicate_of or "?"
    return rule.reason.replace("{note}", note)


def evaluate_criteria(
    criteria: tuple[Criterion, ...], subject: Subject, judge: JudgeVerdict | None
) -> dict[str, Value]:
    """Three-valued: fail -> False, undecided -> None, pass -> True, else `otherwise`.
    The judge may settle a criterion the conditions left undecided, never overrule one."""
    out: dict[str, Value] = {}
    for criterion in criteria:
        value = criterion_value(criterion, subject)
        if value is None and judge is not None and judge.failure is None:
            value = judge.criteria.get(criterion.name)
        out[criterion.name] = value
    return out


def criterion_value(criterion: Criterion, subject: Subject) -> Value:
    checks: list[tuple[Cond | None, Value]] = [
        (criterion.fail, False),
        (criterion.undecided, None),
        (criterion.passes, True),
    ]
    for cond, value in checks:
        if cond is not None and evaluate(cond, subject):
            return value
    return {"pass": True, "fail": False, "undecided": None}[criterion.otherwise]


def _patch(candidate: Candidate, facts: Facts, criteria: dict[str, Value]) -> Decision:
    existing, comparison = facts.existing, facts.comparison
    assert existing is not None and comparison is not None
    surface = candidate.surface.name if candidate.surface else None
    if not existing.curator_owned:  # the person's note: a sweep never changes it (design §3)
        flag = bool(comparison.differs)
        said = f" (contradiction: {_differs(comparison)})" if flag else ""
        why = f"matches your note {existing.path}{said}"
        code = "contradiction" if flag else "persons-note"
        return Decision("needs_review", why, surface, existing.path, criteria=criteria, contradiction=flag, code=code)
    if comparison.contradiction:
        why = f"contradiction: {_differs(comparison)} for {existing.path} with no newer observation time"
        return Decision(
            "needs_review", why, surface, existing.path, criteria=criteria, contradiction=True, code="contradiction"
        )
    added = ", ".join(comparison.additions)
    return Decision("patch", f"adds {added} to {existing.path}", surface, existing.path, criteria=criteria)


def _differs(comparison: Comparison) -> str:
    """`a different value`, or `status: active -> archived` for each other claim: old beside new."""
    said = ["a different value"] if comparison.value_changed else []
    said += [f"{field}: {old} -> {new}" for field, old, new in comparison.conflicts]
    return "; ".join(said)


def _judge_flag(candidate: Candidate, judge: JudgeVerdict | None, criteria: dict[str, Value]) -> Decision | None:
    """What the judge said that makes a candidate wait whatever the rules said (no surface, a
    criterion failed): a contradiction is kept and flagged, never dropped or patched; what
    extends or supersedes a person's note waits for that person, naming it."""
    if not _usable(judge):
        return None
    surface = candidate.surface.name if candidate.surface else None
    if judge.relation == "contradicts":
        why = f"contradiction: contradicts {judge.target or 'a note'}" + (f" ({judge.reason})" if judge.reason else "")
        return Decision(
            "needs_review", why, surface, judge.target, criteria=criteria, contradiction=True, code="contradiction"
        )
    if judge.relation in ("extends", "supersedes") and judge.target and judge.yours:
        why = f"{judge.relation} your note {judge.target}{_judge_said(judge)}"
        return Decision("needs_review", why, surface, judge.target, criteria=criteria, code="persons-note")
    return None


def _judge_relation(
    candidate: Candidate, rules: Rules, judge: JudgeVerdict | None, criteria: dict[str, Value]
) -> Decision | None:
    """What else the judge said about the notes it was shown (`_judge_flag` first):
    extends/supersedes patch the curator's note (the merge keeps the old value in history);
    a drop rule the fields do not meet is a person's call."""
    if not _usable(judge):
        return None
    surface = candidate.surface.name if candidate.surface else None
    said = _judge_said(judge)
    if judge.relation == "duplicate":
        why = f"the judge found a duplicate of {judge.target}, but the rules have no {KNOWN_RULE!r} drop rule{said}"
        return Decision("needs_review", why, surface, candidate.target, criteria=criteria, code="judge")
    if judge.relation in ("extends", "supersedes") and judge.target:
        why = f"{judge.relation} {judge.target}{said}"
        return Decision("patch", why, surface, judge.target, criteria=criteria, by_judge=True)
    if judge.drop_rule:
        why = f"the judge cited drop rule {judge.drop_rule!r}, but its condition does not hold{said}"
        return Decision("needs_review", why, surface, candidate.target, criteria=criteria, code="judge")
    return None


def _review_reason(candidate: Candidate, rules: Rules, criteria: Mapping[str, Value], facts: Facts) -> str:
    parts: list[str] = []
    for criterion in rules.criteria:
        value = criteria.get(criterion.name)
        if value is True:
            continue
        detail = _detail(criterion.name, candidate, rules, facts)
        state = "undecided" if value is None else "not"
        parts.append(f"{criterion.label} {state}" if value is None else f"{state} {criterion.label}")
        if detail:
            parts[-1] += f" ({detail})"
    return "; ".join(parts) or "no criterion failed, yet not all passed"


def _placeholder_note(candidate: Candidate, rules: Rules) -> str:
    found = evidence.placeholders(candidate.frontmatter, rules.settings)
    return f" (placeholder source, not a source: {', '.join(found)})" if found else ""


def _detail(name: str, candidate: Candidate, rules: Rules, facts: Facts) -> str:
    if name == "sourced":
        return _placeholder_note(candidate, rules).strip(" ()")
    if name == "specific":
        return placement_problem(candidate, rules) or ""
    if name == "novel":
        if facts.existing is not None:
            said = f"a note with this key exists: {facts.existing.path}"
            count = len(facts.adds_text)
            return said + (f"; its body adds {count} sentence{'s' * (count > 1)} the note lacks" if count else "")
        return found_notes(facts)
    return ""


SHOWN = 3  # notes named in one reason


def found_notes(facts: Facts) -> str:
    """The note(s) that left novelty open, and why: every needs_review line names them."""
    return "; ".join(_found(facts).values())


FOUND_FIRST = ("duplicate", "near-duplicate", "subject-note", "semantic-neighbour")  # the code when several are found


def _found(facts: Facts) -> dict[str, str]:
    """Each kind of note that left novelty open (its reason code) -> the words naming them."""
    if facts.duplicate_of:
        return {"duplicate": f"exact duplicate of {facts.duplicate_of}"}
    parts = {}
    about = [n for n in facts.subjects if n.found_by != NAMESAKE]
    namesakes = [n for n in facts.subjects if n.found_by == NAMESAKE]
    subject = [f"the vault has a note about it: {_named(about)}"] if about else []
    if namesakes:
        link = namesakes[0].path.rsplit("/", 1)[-1].removesuffix(".md")
        subject.append(f"a note of its file name exists ([[{link}]] would be ambiguous): {_named(namesakes)}")
    if subject:
        parts["subject-note"] = "; ".join(subject)
    if facts.near:
        named = ", ".join(f"{n.path} ({n.score:.2f}{_agreed(n.agreed)})" for n in facts.near[:SHOWN])
        parts["near-duplicate"] = f"near-duplicate of {named}"
    named_already = {n.path for n in facts.subjects} | {n.path for n in facts.near}
    close = [n for n in facts.close if n.path not in named_already]
    if close:
        said = (f"semantically close to {n.path} ({n.score:.2f})" for n in close[:SHOWN])
        parts["semantic-neighbour"] = ", ".join(said)
    return parts


def criteria_code(criteria: Mapping[str, Value], facts: Facts) -> str:
    """The code of a verdict held by its criteria, from what `_review_reason` names: an unsafe
    path or missing field first, then novelty (what a person most often settles in bulk: the
    notes found, or the note with its key), then any failed criterion, then any undecided."""
    if criteria.get("specific") is False:
        return "incomplete"
    if "novel" in criteria and criteria["novel"] is not True:  # `_detail` names why
        if facts.existing is not None:
            if criteria["novel"] is False:
                return "exists"
        else:
            found = _found(facts)
            named = next((code for code in FOUND_FIRST if code in found), None)
            if named is not None:
                return named
    if any(value is False for value in criteria.values()):
        return "criteria-failed"
    if any(value is None for value in criteria.values()):
        return "undecided"
    return "other"


def _agreed(said: tuple[str, ...]) -> str:
    return f", {evidence.named(said)}" if said else ""


def _with_closest(reason: str, facts: Facts, settings: Settings) -> str:
    """The reason, and when it names no note, the closest notes on the subject with their
    `same` score, and the notes whose paths hold its title's words (`titled_alike`, which
    crosses languages): a person settling it looks there first, whatever held it (not sourced,
    undecided). A neighbour under half the near-duplicate score is not shown: it shares words,
    not a subject. Naming a note never changes the verdict."""
    if found_notes(facts) or facts.existing is not None:
        return reason
    floor = settings.near_duplicate_score / 2
    shown = [n for n in facts.neighbours if n.score >= floor][:SHOWN]
    parts = [reason]
    if shown:
        parts.append("closest: " + ", ".join(f"{n.path} ({n.score:.2f})" for n in shown))
    named = {n.path for n in shown}
    alike = [(path, held, of) for path, held, of in facts.alike if path not in named][:SHOWN]
    if alike:
        parts.append("titled alike: " + ", ".join(f"{p} ({held} of {of} title words)" for p, held, of in alike))
    return "; ".join(parts)


NAMESAKE = "file-name"  # how a subject note sharing the candidate's file name was found (`subject.names_alike`)


def _named(notes: list[ExistingNote]) -> str:
    return ", ".join(_whose(n.path, n.curator_owned) for n in notes[:SHOWN])


def _whose(path: str, curator_owned: bool) -> str:
    return path if curator_owned else f"your note {path}"


def explain(candidate: Candidate, rules: Rules, facts: Facts) -> list[str]:
    """Every drop rule and criterion as the rules file wrote it, with its outcome."""
    subject = subject_of(candidate, facts, rules.settings)
    lines = [f"facts: {', '.join(k for k, v in subject.facts.items() if v) or 'none'}"]
    if facts.duplicate_of:
        lines.append(f"exact duplicate: {facts.duplicate_of}")
    lines += [
        f"{'named alike' if n.found_by == NAMESAKE else 'about the same subject'}: {_whose(n.path, n.curator_owned)}"
        for n in facts.subjects
    ]
    lines += [f"near-duplicate: {n.path} ({n.score:.2f}{_agreed(n.agreed)})" for n in facts.near]
    lines += [f"semantically close: {n.path} ({n.score:.2f})" for n in facts.close]
    lines += [f"titled alike: {path} ({held} of {of} title words)" for path, held, of in facts.alike]
    for rule in rules.drop_rules:
        if rule.judge_only:
            lines.append(f"drop {rule.id}: judge only")
            continue
        assert rule.when is not None
        lines.append(f"drop {rule.id}: {'MATCH' if evaluate(rule.when, subject) else 'no'}  ({rule.when.text})")
    for criterion in rules.criteria:
        value = criterion_value(criterion, subject)
        shown = {True: "pass", False: "fail", None: "undecided"}[value]
        lines.append(f"criterion {criterion.name}: {shown}")
    return lines
