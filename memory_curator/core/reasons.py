"""Why an item waits for a person, as a stable code. Pure: no I/O.

The reason text of a needs_review verdict is for people and its wording may improve; scripts,
agents and `review --reason` need a word that stays. The code is set where the reason is
written (`Decision.code`: the decision core, the planner, the sweep's forced verdicts) and
journalled with it; it is never read back from the words. Adding a code: one line in `CODES`,
then `code="<it>"` on the Decision that gives the reason (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

CODES: Mapping[str, str] = {
    "secret": "it holds a credential (an API key, a password, a private key); it never becomes a note",
    "private": "it carries a privacy tag, or a private note decides it; only a person may approve sharing it",
    "too-large": "the file is over the rules' max_candidate_bytes; it is never read",
    "contradiction": "a different value than the note's, and no time says which is current",
    "persons-note": "it matches a note of yours, which only you change",
    "unreadable": "its frontmatter cannot be read safely",
    "empty": "the file is empty",
    "unsettled": "it kept changing past the settle ceiling",
    "no-surface": "no surface can be inferred (no usable type)",
    "incomplete": "a required field is missing, or its path is unsafe",
    "cannot-write": "its verdict could not be written (a symlink, a refused merge)",
    "judge": "the judge said something the rules cannot act on",
    "near-duplicate": "a note very like it exists (similarity never decides alone)",
    "semantic-neighbour": "a note saying much the same in other words exists (semantic pairing never decides alone)",
    "duplicate": "an exact duplicate exists elsewhere in the vault",
    "subject-note": "another note in the vault is about the same subject (a person's, or one of another surface)",
    "exists": "a note with its key exists and it adds nothing the merge can take",
    "criteria-failed": "a criterion failed",
    "undecided": "a criterion could not be decided without the judge or a person",
    "internal-error": "a bug met while deciding it",
    "held": "put back in the inbox by undo or restore",
    "other": "none of the above",
}


class Coded(Protocol):
    """A verdict with its code (`core.decide.Decision`, which imports this module)."""

    @property
    def code(self) -> str | None: ...


def reason_code(decision: Coded) -> str:
    """The code a needs_review decision carries (`Decision` refuses one without); `other` for
    any other verdict."""
    return decision.code or "other"


def recorded_code(record: Mapping[str, Any]) -> str:
    """The code of a journalled needs_review record.

    LEGACY, the one place for it: a journal written before codes were journalled (issue 17)
    has flags without `reason_code`; they read as `other`, never guessed from their words."""
    code = record.get("reason_code")
    return code if isinstance(code, str) else "other"
