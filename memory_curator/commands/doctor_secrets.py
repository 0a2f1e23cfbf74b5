"""`doctor`'s secrets check: durable notes that already hold a credential, named masked.

The sweep keeps a credential out of new notes; one a person wrote, or approved in `review`,
may already sit in the vault, where MCP refuses to serve it and the judge is never shown it.
`doctor` names such notes so the person can rotate the key and edit it out. It only reads:
a person's note is never rewritten. The notes are the index's list (no walk when the index
exists); a note over `max_candidate_bytes` is skipped and counted, which bounds the cost at
~0.3 ms per usual note (~30 s at 100,000 notes; docs/safety.md, "Secrets")."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.clock import Clock
from memory_curator.core.errors import CuratorError
from memory_curator.core.names import printable
from memory_curator.core.rules import Rules
from memory_curator.core.secrets import Finding as Credential
from memory_curator.core.secrets import scan

NAMED = 5  # notes named in the one line


@dataclass(frozen=True)
class Held:
    """The durable notes holding a credential, with theirs, and how many notes were too big to read."""

    notes: tuple[tuple[str, tuple[Credential, ...]], ...]
    skipped: int
    limit: int

    def message(self) -> str | None:
        """The one line: how many notes, the first `NAMED` with their first credential, masked, and
        its SHA-1 (what `secrets.allow` takes, should it be no credential); None: no note holds one."""
        if not self.notes:
            return None
        shown = self.notes[:NAMED]
        named = "; ".join(f"{printable(rel)}: {found[0].label} (sha1 {found[0].hashed})" for rel, found in shown)
        more = f"; and {len(self.notes) - NAMED} more" if len(self.notes) > NAMED else ""
        unread = f" ({self.skipped} notes over {self.limit} bytes not read)" if self.skipped else ""
        count = "1 durable note holds" if len(self.notes) == 1 else f"{len(self.notes)} durable notes hold"
        return f"{count} a credential, not served to agents nor shown to the judge ({named}{more}){unread}"


def held(root: Path, rules: Rules, state: Path | None, clock: Clock) -> Held:
    """Every durable note holding a credential (by the rules' `secrets` settings), read-only."""
    limit, allow = rules.settings.max_candidate_bytes, rules.settings.secrets.allow
    listed = _listed(root, rules, state, clock)
    found: list[tuple[str, tuple[Credential, ...]]] = []
    for rel, size in listed:
        text = _read(root / rel) if size <= limit else None
        credentials = scan(text, allow) if text is not None else ()
        if credentials:
            found.append((rel, credentials))
    return Held(tuple(found), sum(1 for _, size in listed if size > limit), limit)


def _listed(root: Path, rules: Rules, state: Path | None, clock: Clock) -> list[tuple[str, int]]:
    """(path, size) of every durable note: the index's rows when it exists (refreshed by the
    index check just before), else one stat walk."""
    from memory_curator.index.store import FILE_NAME, Index
    from memory_curator.index.walk import notes

    if state is not None and (state / FILE_NAME).exists():
        try:
            index = Index(root, rules, state, clock)
            try:
                return index.sizes()
            finally:
                index.close()
        except (CuratorError, OSError, sqlite3.Error):
            pass  # the index check says what is wrong with it; the walk still answers
    return sorted((rel, size) for rel, (size, _) in notes(root, rules).items())


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
