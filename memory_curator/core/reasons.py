"""Why an item waits for a person, as a stable code. Pure: no I/O.

The reason text of a needs_review verdict is for people and its wording may improve; scripts,
agents and `review --reason` need a word that stays. `reason_code` gives one of `CODES`,
read from the decision's structure first (a contradiction, the criteria) and, for the few
verdicts the shell makes on its way to the disk, from the fixed start of their reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_curator.core.candidate import Candidate
from memory_curator.core.decide import PRIVATE, Decision
from memory_curator.core.secrets import SECRET
from memory_curator.core.veil import PRIVATE_NOTE

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

# the fixed beginnings of the reasons the shell (sweep, desk) gives when a plan turns a verdict
# into needs_review on its way to the disk; `decide` never starts a reason with these
_PREFIXES = (
    ("matches your note", "persons-note"),
    ("cannot patch", "cannot-write"),
    ("cannot promote", "cannot-write"),
    ("the judge", "judge"),
    ("internal error", "internal-error"),
    ("empty file", "empty"),
    ("never settled", "unsettled"),
    (PRIVATE, "private"),
    (PRIVATE_NOTE, "private"),
    (SECRET + " (", "secret"),
)


def reason_code(decision: Decision, candidate: Candidate | None = None) -> str:
    """The stable code of a needs_review decision (any other verdict: its rule, or `other`)."""
    if candidate is not None and candidate.secrets:
        return "secret"
    if decision.contradiction or decision.reason.startswith("contradiction"):
        return "contradiction"
    for prefix, code in _PREFIXES:
        if decision.reason.startswith(prefix):
            return code
    if candidate is not None:
        if candidate.note.problem:
            return "unreadable"
        if candidate.surface is None:
            return "no-surface"
    return _from_criteria(decision.criteria, decision.reason)


def _from_criteria(criteria: Mapping[str, bool | None], reason: str) -> str:
    """Novelty first (what a person most often settles in bulk), then any failed criterion."""
    if criteria.get("specific") is False:
        return "incomplete"
    if "near-duplicate of" in reason:
        return "near-duplicate"
    if "exact duplicate of" in reason:
        return "duplicate"
    if "the vault has a note about it" in reason:
        return "subject-note"
    if "semantically close to" in reason:
        return "semantic-neighbour"
    if criteria.get("novel") is False and "a note with this key exists" in reason:
        return "exists"
    if any(value is False for value in criteria.values()):
        return "criteria-failed"
    if any(value is None for value in criteria.values()):
        return "undecided"
    return "other"
