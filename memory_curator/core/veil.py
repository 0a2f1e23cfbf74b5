"""Private notes among what a candidate was compared with (pure).

A sweep may compare a candidate with a private note (one with a privacy tag no person approved,
`privacy.withheld`), but what it then does must not tell an agent anything about that note.
An answer that depends on the note's value is an oracle: "already known and unchanged" for the
true salary, a contradiction for a wrong one, a score of 0.85 against 0.70. So:

- the sweep holds for a person every candidate that a private note decides (the note with its
  key, the exact duplicate, a near or semantic duplicate): never dropped as known, never
  patched into it, whatever the value (`decided_privately`);
- an agent (MCP, `submit`) is answered as if the vault held no private note (`veil`), and when
  the note with its key is private, only with `PRIVATE_NOTE`: the same words for every value.
"""

from __future__ import annotations

from dataclasses import replace

from memory_curator.core.facts import Facts, Neighbour

PRIVATE_NOTE = "a private note decides this: a person will review it"


def deciding(facts: Facts) -> tuple[str, ...]:
    """The notes the rules' novelty facts were computed against."""
    own = [facts.existing.path] if facts.existing is not None else []
    dup = [facts.duplicate_of] if facts.duplicate_of else []
    return tuple(dict.fromkeys([*own, *dup, *(n.path for n in (*facts.near, *facts.close))]))


def named(facts: Facts) -> tuple[str, ...]:
    """Every note the facts name: the deciding ones, the neighbours, the subject notes and the
    notes titled alike (what an answer to an agent may show)."""
    more = [n.path for n in (*facts.neighbours, *facts.semantic)] + [s.path for s in facts.subjects]
    return tuple(dict.fromkeys([*deciding(facts), *more, *(a[0] for a in facts.alike)]))


def decided_privately(facts: Facts) -> bool:
    """Whether a private note decides the candidate's novelty (`Facts.private` holds them)."""
    return bool(facts.private) and any(path in facts.private for path in deciding(facts))


def key_note_private(facts: Facts) -> bool:
    """Whether the note with the candidate's key (or its own subject note) is private: a fact of
    the candidate's own fields, the same for every value it carries."""
    return facts.existing is not None and facts.existing.path in facts.private


def veil(facts: Facts) -> Facts:
    """The facts as if the vault held none of `facts.private`: what an agent may be told."""
    hidden = facts.private
    if not hidden:
        return facts

    def keep(found: tuple[Neighbour, ...]) -> tuple[Neighbour, ...]:
        return tuple(n for n in found if n.path not in hidden)

    out = replace(
        facts,
        neighbours=keep(facts.neighbours),
        near=keep(facts.near),
        near_duplicate=bool(keep(facts.near)),
        semantic=keep(facts.semantic),
        close=keep(facts.close),
        subjects=tuple(s for s in facts.subjects if s.path not in hidden),
        alike=tuple(a for a in facts.alike if a[0] not in hidden),
        private=frozenset(),
    )
    if facts.duplicate_of in hidden:
        out = replace(out, duplicate_of=None, exact_duplicate=False)
    if key_note_private(facts):
        out = replace(out, existing=None, exact_key_exists=False, known_unchanged=False, comparison=None, adds_text=())
    return out


def lost_a_note(facts: Facts, veiled: Facts) -> bool:
    """Whether veiling took away the note with the key or the exact duplicate: the neighbours,
    never asked while either was there, must be asked of the veiled facts."""
    return (facts.existing is not None and veiled.existing is None) or (
        facts.duplicate_of is not None and veiled.duplicate_of is None
    )
