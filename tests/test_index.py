"""The derived index and the querier over it: refresh, rebuild, lookups, neighbours, overlay."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_curator.cli.machine import build_context
from memory_curator.commands.context import Context, Seams
from memory_curator.commands.sweep import Options, run
from memory_curator.core import candidate as cand
from memory_curator.core import notes, words
from memory_curator.core.clock import FixedClock
from memory_curator.core.facts import Neighbour, gather_facts, staging
from memory_curator.core.rules import Rules
from memory_curator.index import build
from memory_curator.index import querier as iq
from memory_curator.index import rows as indexing
from memory_curator.index import store as ix
from memory_curator.index.overlay import Overlay
from memory_curator.index.progress import PROGRESS_NOTES, Progress
from memory_curator.index.questions import key_first
from memory_curator.index.walk import walk
from memory_curator.store.rules_file import load_for_vault
from tests.conftest import FIXTURES, REAL_VAULT, examples, require_shared

from conftest import NOW, age, run_installed

FACT = """---
type: fact
entity: {entity}
predicate: {predicate}
value: {value}
source_url: https://example.dev/{entity}
confidence: 2
---
{body}
"""
LONG_BODY = (
    "The quarterly vendor review found that the zephyrine gateway retries idempotent calls "
    "three times with jittered backoff, logs every quorvax handshake, and rotates its "
    "signing keys each fortnight according to the operations handbook."
)


def state_of(tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    folder.mkdir(exist_ok=True)
    return folder


def querier_for(root: Path, state: Path) -> iq.IndexQuerier:
    return iq.open_querier(root, load_for_vault(root), state)


def fact(entity: str, predicate: str = "data-handling", value: str = "A value.", body: str = "Body.") -> str:
    return FACT.format(entity=entity, predicate=predicate, value=value, body=body)


def write(root: Path, rel: str, text: str | bytes, settled: bool = True) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    if settled:
        age(path)
    return path


def candidate(root: Path, text: str, name: str = "c.md") -> cand.Candidate:
    return cand.build(text.encode("utf-8"), f"_inbox/agent-a/{name}", "agent-a", load_for_vault(root))


# --- what is indexed, where --------------------------------------------------------------------


def test_every_note_but_inbox_and_dot_folders_is_indexed_in_the_state_directory(vault: Path, tmp_path: Path) -> None:
    write(vault, "digests/2026-w01.md", "# A digest\n")
    write(vault, "notes/loose.md", "no frontmatter at all\n")
    write(vault, ".obsidian/workspace.md", "ignored\n")
    write(vault, ".trash/old.md", "ignored\n")
    write(vault, "facts/.hidden/x.md", "ignored\n")
    write(vault, "facts/.draft.md", "ignored\n")
    write(vault, "_inbox/.dropped/a/x.md", "ignored\n")
    os.symlink(vault / "notes/loose.md", vault / "notes/link.md")
    state = state_of(tmp_path)
    querier = querier_for(vault, state)
    indexed = {p for (p,) in querier.conn.execute("SELECT path FROM notes")}
    on_disk = {
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*.md")
        if not any(part.startswith((".", "_inbox")) for part in p.relative_to(vault).parts) and not p.is_symlink()
    }
    assert indexed == on_disk
    assert {"digests/2026-w01.md", "notes/loose.md", "_meta/inbox-rules.md"} <= indexed
    assert querier.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert (state / "index.sqlite3").is_file()
    assert not [p for p in vault.rglob("*") if "sqlite" in p.name or p.name == "index.lock"]


def test_refresh_sees_an_added_an_edited_a_deleted_and_a_renamed_note(vault: Path, tmp_path: Path) -> None:
    state = state_of(tmp_path)
    rules = load_for_vault(vault)
    index = ix.Index(vault, rules, state)
    assert index.refresh().rebuilt
    again = index.refresh()
    assert (again.rebuilt, again.added, again.changed, again.removed, again.notes) == (False, 0, 0, 0, index.count())
    write(vault, "facts/acme/added.md", fact("acme", "added", "Added value."))
    edited = vault / "facts/obsidian/file-format.md"
    edited.write_text(edited.read_text().replace("plain Markdown files", "plain Markdown text files"))
    age(edited)
    (vault / "persons/ada-lovelace.md").unlink()
    (vault / "insights/agents-need-a-curator.md").rename(vault / "insights/curators-for-agents.md")
    done = index.refresh()
    assert (done.rebuilt, done.added, done.changed, done.removed) == (False, 2, 1, 2)
    querier = iq.IndexQuerier(vault, rules, state, index)
    assert querier.paths_for_key("facts/acme/added.md") == ["facts/acme/added.md"]
    assert querier.paths_for_key("persons/ada-lovelace.md") == []
    assert querier.match_name("curators for agents") == ["insights/curators-for-agents.md"]
    assert querier.match_name("agents need a curator") == ["insights/curators-for-agents.md"]  # by its title
    value = querier.info("facts/obsidian/file-format.md")["value"]
    assert value == "Obsidian stores notes as plain Markdown text files in a local folder."
    frequencies = dict(querier.conn.execute("SELECT term, df FROM terms"))
    assert frequencies == dict(querier.conn.execute("SELECT term, doc FROM vocab"))  # kept in step with FTS5
    assert frequencies["text"] >= 1 and "lovelace" not in frequencies


def test_an_incremental_refresh_leaves_the_contentless_tables_as_a_rebuild_would(vault: Path, tmp_path: Path) -> None:
    """The FTS5 tables keep no copy of a note: a changed, removed or renamed note leaves them by
    the 'delete' command given its stored text and path. Wrong values would leave its words
    behind (counts, ranks, path words that find a note no longer there)."""
    rules = load_for_vault(vault)
    index = ix.Index(vault, rules, state_of(tmp_path))
    index.refresh()
    edited = vault / "facts/obsidian/file-format.md"
    edited.write_text(edited.read_text().replace("plain Markdown files", "plain zanzibarian files"))
    age(edited)
    (vault / "persons/ada-lovelace.md").unlink()
    (vault / "insights/agents-need-a-curator.md").rename(vault / "insights/curators-for-agents.md")
    assert index.refresh().changed == 1
    (tmp_path / "rebuilt").mkdir()
    rebuilt = ix.Index(vault, rules, tmp_path / "rebuilt")
    rebuilt.refresh()
    asks = {
        "vocab": "SELECT term, doc, cnt FROM vocab ORDER BY term",
        "path_vocab": "SELECT term, doc FROM path_vocab ORDER BY term",
        "ranks": "SELECT n.path, round(f.rank, 9) FROM fts f JOIN notes n ON n.id = f.rowid "
        "WHERE fts MATCH 'obsidian OR zanzibarian OR agents' ORDER BY n.path",
    }
    for name, sql in asks.items():
        assert index.conn.execute(sql).fetchall() == rebuilt.conn.execute(sql).fetchall(), name
    words = {t for (t,) in index.conn.execute("SELECT term FROM path_vocab")}
    assert "curators" in words and "need" not in words and "lovelace" not in words
    querier = iq.IndexQuerier(vault, rules, state_of(tmp_path), index)
    assert querier.paths_naming(("curator",), "english") == ["insights/curators-for-agents.md"]
    assert querier.indexed("facts/obsidian/file-format.md") is not None
    assert "zanzibarian" in (querier.indexed("facts/obsidian/file-format.md") or (0, ""))[1]


def test_a_kept_querier_forgets_the_paths_it_found_when_the_notes_change(vault: Path, tmp_path: Path) -> None:
    """`paths_naming` keeps what each word found for the querier's life (a sweep's facts share
    their entities): a querier kept across sweeps (`mcp`, `watch`) and refreshed by `expire`
    finds a note added meanwhile, and no longer finds one removed."""
    querier = querier_for(vault, state_of(tmp_path))
    assert querier.paths_naming(("zanzibar",), "english") == []
    added = write(vault, "Places/Zanzibar ferries.md", "# Zanzibar ferries\n\nTimetables.\n")
    assert querier.paths_naming(("zanzibar",), "english") == []  # not refreshed yet: the same answer
    querier.expire()
    assert querier.paths_naming(("zanzibar",), "english") == ["Places/Zanzibar ferries.md"]
    added.unlink()
    querier.expire()
    assert querier.paths_naming(("zanzibar",), "english") == []


def test_a_note_rewritten_in_the_same_instant_with_the_same_size_is_read_again(vault: Path, tmp_path: Path) -> None:
    """mtime may not tick between two writes: a note modified just before a refresh is re-read
    by the next one even when its size and mtime look unchanged. "Just before" is by the
    index's clock, here set to the file's own mtime (never the day the suite runs)."""
    state = state_of(tmp_path)
    clock = FixedClock(NOW)
    index = ix.Index(vault, load_for_vault(vault), state, clock)
    index.refresh()
    path = write(vault, "facts/acme/racy.md", fact("acme", "racy", "Value one."), settled=False)
    stamp = path.stat().st_mtime_ns
    clock.at = dt.datetime.fromtimestamp(stamp / 1e9, dt.UTC)
    index.refresh()
    path.write_text(fact("acme", "racy", "Value two."))
    os.utime(path, ns=(stamp, stamp))
    assert index.refresh().changed == 1
    assert iq.IndexQuerier(vault, index.rules, state, index).info("facts/acme/racy.md")["value"] == "Value two."


def test_a_refresh_after_another_process_rebuilt_the_file_writes_to_the_new_file(vault: Path, tmp_path: Path) -> None:
    state = state_of(tmp_path)
    rules = load_for_vault(vault)
    ix.Index(vault, rules, state).refresh()
    mine, theirs = ix.Index(vault, rules, state), ix.Index(vault, rules, state)
    assert mine.usable() and mine.count() == theirs.count()  # `mine` has the file open
    theirs.rebuild()  # unlinks the file `mine` has open, writes a new one
    write(vault, "facts/acme/late.md", fact("acme", "late"))
    done = mine.refresh()
    assert (done.rebuilt, done.added) == (False, 1)  # an incremental refresh, of the new file
    fresh = iq.IndexQuerier(vault, rules, state, ix.Index(vault, rules, state))
    assert fresh.paths_for_key("facts/acme/late.md") == ["facts/acme/late.md"]


@pytest.mark.parametrize(
    "garbage",
    [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 4000, b""],
    ids=["text", "bad-header", "empty"],
)
def test_a_corrupt_index_file_is_rebuilt(vault: Path, tmp_path: Path, garbage: bytes) -> None:
    state = state_of(tmp_path)
    (state / "index.sqlite3").write_bytes(garbage)
    querier = querier_for(vault, state)
    assert querier.refreshed is not None and querier.refreshed.rebuilt
    assert querier.paths_for_key("facts/obsidian/file-format.md") == ["facts/obsidian/file-format.md"]


def test_a_build_that_dies_half_way_leaves_the_old_index_in_place(vault: Path, tmp_path: Path) -> None:
    state = state_of(tmp_path)
    rules = load_for_vault(vault)
    before = ix.Index(vault, rules, state)
    before.refresh()
    (state / "index.sqlite3.building-12345").write_bytes(b"left by a builder that was killed")

    def killed(*_: object) -> build.Described:  # Ctrl-C while the first notes are read
        assert list(state.glob("index.sqlite3.building-*")) == [state / f"index.sqlite3.building-{os.getpid()}"]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ix.Index(vault, rules, state, workers=build.Workers(here=killed)).rebuild()
    assert not list(state.glob("index.sqlite3.building-*"))
    after = ix.Index(vault, rules, state)
    assert after.usable() and after.count() == before.count()
    assert not after.refresh().rebuilt


def test_an_old_schema_another_vault_or_changed_surfaces_mean_a_rebuild(vault: Path, tmp_path: Path) -> None:
    state = state_of(tmp_path)
    rules = load_for_vault(vault)
    ix.Index(vault, rules, state).refresh()
    with sqlite3.connect(state / "index.sqlite3") as conn:
        conn.execute("PRAGMA user_version = 0")
    assert ix.Index(vault, rules, state).refresh().rebuilt
    assert not ix.Index(vault, rules, state).refresh().rebuilt
    other = tmp_path / "other-vault"
    shutil.copytree(vault, other)
    assert ix.Index(other, load_for_vault(other), state).refresh().rebuilt
    rules_file = vault / "_meta/inbox-rules.md"
    rules_file.write_text(rules_file.read_text().replace('path: "persons/{slug}.md"', 'path: "people/{slug}.md"'))
    assert ix.Index(vault, load_for_vault(vault), state).refresh().rebuilt


# --- messy notes -------------------------------------------------------------------------------

MESSY = {
    "bom.md": "\ufeff---\ntitle: With a BOM\ntags: [bom-tag]\n---\nBody after a byte order mark.\n",
    "crlf.md": "---\r\ntitle: Windows lines\r\ntags:\r\n  - crlf-tag\r\n---\r\nBody with CRLF line ends.\r\n",
    "bad-yaml.md": "---\ntitle: [unclosed\n---\nThe body of a note whose YAML is broken: zanzibarite.\n",
    "template.md": "---\ndate: {{date}}\ntitle: {{title}}\n---\nDaily template for {{date}} quillwort.\n",
    "hash-tags.md": '---\ntitle: Hash tags\ntags: "#alpha, #beta/gamma"\n---\nBody #inline-tag `#not-a-tag`\n',
    "strings.md": "---\ntitle: Strings\naliases: Only One Alias\ntags: one, two\nsources: https://a.example.dev\n---\nx\n",
    "latin1.md": "---\ntitle: caf\xe9\n---\nna\xefve\n".encode("latin-1"),
    "empty.md": "",
    "only-fence.md": "---\n",
}


def test_bom_crlf_bad_yaml_placeholders_hash_tags_and_strings_are_indexed(vault: Path, tmp_path: Path) -> None:
    for name, text in MESSY.items():
        write(vault, f"notes/{name}", text)
    querier = querier_for(vault, state_of(tmp_path))
    rows = {
        path: (title, json.loads(tags), problem)
        for path, title, tags, problem in querier.conn.execute(
            "SELECT path, title, tags, problem FROM notes WHERE path LIKE 'notes/%'"
        )
    }
    assert set(rows) == {f"notes/{name}" for name in MESSY}
    assert rows["notes/bom.md"] == ("With a BOM", ["bom-tag"], None)
    assert rows["notes/crlf.md"] == ("Windows lines", ["crlf-tag"], None)
    assert rows["notes/hash-tags.md"][1] == ["alpha", "beta/gamma", "inline-tag"]
    assert rows["notes/strings.md"][:2] == ("Strings Only One Alias", ["one", "two"])
    assert querier.match_name("only one alias") == ["notes/strings.md"]
    problems = dict(querier.index.problems())
    assert set(problems) == {"notes/bad-yaml.md", "notes/template.md", "notes/latin1.md", "notes/only-fence.md"}
    assert "does not parse" in problems["notes/template.md"]
    found = {n.path for n in querier.similar("zanzibarite quillwort", "", 5)}
    assert {"notes/bad-yaml.md", "notes/template.md"} <= found  # indexed by their bodies


def test_a_copy_of_a_real_vault_and_edited_copies_of_its_notes_index_without_error(
    tmp_path: Path, real_vault: Path
) -> None:
    root = tmp_path / "real"
    shutil.copytree(real_vault, root)
    (root / "_inbox").mkdir()
    source = root / "Home.md"
    text = source.read_text(encoding="utf-8")
    edits = {
        "bom.md": "\ufeff" + text,
        "crlf.md": text.replace("\n", "\r\n"),
        "invalid.md": text.replace("aliases:", "aliases: [oops\nbroken:", 1),
        "placeholder.md": text.replace("permalink: /", "created: {{date}}\npermalink: /", 1),
        "hashtags.md": text.replace("aliases:", "tags: '#home #start'\naliases:", 1),
        "stringlist.md": text.replace("aliases:\n  - Start here", "aliases: Start here, Welcome", 1),
    }
    for name, edited in edits.items():
        write(root, f"Edited/{name}", edited)
    querier = querier_for(root, state_of(tmp_path))
    expected = len(list(real_vault.rglob("*.md"))) + len(edits)
    assert querier.index.count() == expected
    assert set(dict(querier.index.problems())) == {"Edited/invalid.md", "Edited/placeholder.md"}
    assert querier.match_name("Welcome") == ["Edited/stringlist.md"]
    assert set(querier.match_name("start here")) >= {"Home.md", "Edited/bom.md", "Edited/crlf.md"}
    tags = json.loads(querier.conn.execute("SELECT tags FROM notes WHERE path = 'Edited/hashtags.md'").fetchone()[0])
    assert tags[:2] == ["home", "start"]
    duplicates = {p for (p,) in querier.conn.execute(
        "SELECT path FROM notes WHERE text_hash = (SELECT text_hash FROM notes WHERE path = 'Home.md')")}  # fmt: skip
    assert duplicates >= {"Home.md", "Edited/bom.md", "Edited/crlf.md", "Edited/placeholder.md"}
    near = querier.similar("Obsidian Help", text.split("---\n", 2)[2], 3)
    assert near[0].score > 0.95 and near[0].path in duplicates  # not 1.0: the copies' titles are not the asked one


# --- the questions a decision asks ---------------------------------------------------------------


def test_exact_key_finds_a_note_filed_under_another_name(vault: Path, tmp_path: Path) -> None:
    write(vault, "facts/acme/Data Handling (old).md", fact("acme", "data-handling", "Keeps logs for 30 days."))
    querier = querier_for(vault, state_of(tmp_path))
    text = fact("ACME", "Data Handling", "Keeps logs for 30 days.")
    found = querier.note_at(candidate(vault, text).target or "")
    assert found is not None and found.path == "facts/acme/Data Handling (old).md"
    assert found.frontmatter["value"] == "Keeps logs for 30 days."


def test_exact_duplicate_of_normalised_text_anywhere_in_the_vault(vault: Path, tmp_path: Path) -> None:
    write(vault, "notes/clipping.md", f"---\nvalue: Keeps logs for 30 days.\n---\n{LONG_BODY}\n")
    querier = querier_for(vault, state_of(tmp_path))
    shouting = fact("newco", value="KEEPS logs for 30 days!", body=LONG_BODY.upper().replace(",", " ,  "))
    facts = gather_facts(candidate(vault, shouting), querier)
    assert facts.exact_duplicate and facts.duplicate_of == "notes/clipping.md"
    assert not facts.neighbours  # settled: similarity is not asked
    other = gather_facts(candidate(vault, fact("newco", value="Deletes logs daily.", body=LONG_BODY)), querier)
    assert not other.exact_duplicate
    short = gather_facts(candidate(vault, fact("x", value="Yes.", body="")), querier)
    write(vault, "notes/yes.md", "---\nvalue: Yes.\n---\n")
    assert not short.exact_duplicate  # under MIN_DUPLICATE_WORDS words: nobody's duplicate


def test_a_near_duplicate_leaves_novel_undecided_and_never_drops(vault: Path, tmp_path: Path) -> None:
    write(
        vault,
        "research/vendors/zephyrine.md",
        f"---\ntype: research\ntopic: vendors\ntitle: Zephyrine\n---\n{LONG_BODY}\n",
    )
    state = state_of(tmp_path)
    querier = querier_for(vault, state)
    edited = LONG_BODY.replace("three times", "four times").replace("fortnight", "month")
    near = candidate(vault, fact("zephyrine", value="Retries idempotent calls.", body=edited))
    facts = gather_facts(near, querier)
    assert facts.near_duplicate and facts.neighbours[0].path == "research/vendors/zephyrine.md"
    assert facts.neighbours[0].score >= 0.6 and "quorvax" in facts.neighbours[0].text
    unrelated = candidate(vault, fact("other", value="Ships on Tuesdays.", body="Wholly unrelated prose."))
    assert not gather_facts(unrelated, querier).near_duplicate
    inbox = write(vault, "_inbox/agent-a/near.md", fact("zephyrine", value="Retries idempotent calls.", body=edited))
    result = run(build_context(vault, str(state)), inbox.parent, Options(use_judge=False))
    (action,) = [a for agent in result.agents for a in agent.actions]
    assert action.verdict == "needs_review" and action.criteria["novel"] is None
    assert "near-duplicate of research/vendors/zephyrine.md" in action.reason
    assert inbox.exists()


def test_links_to_a_durable_note_by_name_or_path(vault: Path, tmp_path: Path) -> None:
    write(vault, "notes/scratch.md", "not on a surface\n")
    querier = querier_for(vault, state_of(tmp_path))
    assert querier.links_to_durable(["ada-lovelace"])
    assert querier.links_to_durable(["persons/Ada-Lovelace.md"])
    assert querier.links_to_durable(["decisions/keep-notes-in-markdown"])
    assert not querier.links_to_durable(["insights/ada-lovelace", "sons/ada-lovelace"])  # the path must match
    assert not querier.links_to_durable(["scratch", "no-such-note"])
    text = fact("x", body="See [[ada-lovelace|Ada]] and [[no-such-note]].")
    assert gather_facts(candidate(vault, text), querier).links_to_durable_note


def test_accented_words_are_found_as_fts5_folds_them(vault: Path, tmp_path: Path) -> None:
    write(vault, "notes/cafe.md", "---\ntitle: Café\n---\nUn café naïve à Ærøskøbing, Straße.\n")
    querier = querier_for(vault, state_of(tmp_path))
    assert querier.similar("cafe naive", "", 3)[0].path == "notes/cafe.md"
    assert querier.similar("CAFÉ", "ærøskøbing straße", 3)[0].path == "notes/cafe.md"


def test_events_on_a_day_and_names_folded(vault: Path, tmp_path: Path) -> None:
    write(vault, "persons/rene-descartes.md", "---\ntype: person\nname: René Descartes\n---\n")
    querier = querier_for(vault, state_of(tmp_path))
    assert querier.events_on("2026-05-01") == ["events/2026/2026-05-01-vault-kickoff.md"]
    assert querier.events_on("2026-05-02") == []
    assert querier.match_name("RENE descartes!") == ["persons/rene-descartes.md"]


# --- FTS5 syntax in candidate text ----------------------------------------------------------------

HOSTILE = ['"', "*", "NEAR", "AND", "OR", "NOT", ":", "^", "(", ")", "body:", "alph*", 'a"b', "NEAR(a b)", "-", "+"]


def test_fts5_syntax_in_a_candidate_cannot_break_or_widen_the_query(vault: Path, tmp_path: Path) -> None:
    write(vault, "notes/alphabet.md", "---\ntitle: Alphabet\n---\nalphabet soup\n")
    write(vault, "notes/near.md", "---\ntitle: Proximity\n---\nthe word near appears here\n")
    querier = querier_for(vault, state_of(tmp_path))
    hostile = " ".join(HOSTILE) + ' title:alph* "unbalanced ( NEAR(soup alphabet) ^soup'
    found = {n.path for n in querier.similar(hostile, hostile, 10)}
    assert "notes/near.md" in found  # the word "near" is a word like any other
    assert "notes/alphabet.md" in found  # "soup" and "alphabet" as plain words
    assert not {n.path for n in querier.similar("alph* ^alp", "", 10)}  # no prefix or initial-token widening
    for hostile_word in [*HOSTILE, 'x" OR "y', "a*b", "title:x"]:
        expression = indexing.match_expression([hostile_word])
        querier.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expression,)).fetchone()
    matched = querier.conn.execute(
        "SELECT count(*) FROM fts WHERE fts MATCH ?", (indexing.match_expression(['alph" OR "soup']),)
    ).fetchone()[0]
    assert matched == 0  # one literal phrase, not an OR of two words


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=st.sampled_from(list('abc #/&[]()`~!-_é1\n"*:^')), max_size=60))
def test_fast_tags_and_links_read_exactly_what_notes_reads(body: str) -> None:
    assert indexing.tags_and_links(body) == (tuple(notes.inline_tags(body)), tuple(notes.wikilinks(body)))


# --- the overlay ------------------------------------------------------------------------------------


def test_the_overlay_shows_a_staged_note_to_every_question(vault: Path, tmp_path: Path) -> None:
    querier = Overlay(querier_for(vault, state_of(tmp_path)))
    text = fact("zephyrine", value="Retries idempotent calls.", body=LONG_BODY)
    first = candidate(vault, text)
    assert querier.note_at(first.target or "") is None
    querier.stage("facts/zephyrine/data-handling.md", text)
    later = candidate(vault, text, "later.md")
    facts = gather_facts(later, querier)
    assert facts.existing is not None and facts.existing.path == "facts/zephyrine/data-handling.md"
    assert facts.known_unchanged
    assert querier.duplicate_of(candidate(vault, text.replace("zephyrine", "elsewhere", 1))) == (
        "facts/zephyrine/data-handling.md"
    )
    assert querier.similar("quorvax zephyrine", "", 3)[0].path == "facts/zephyrine/data-handling.md"
    assert querier.links_to_durable(["zephyrine/data-handling"])
    querier.stage("facts/obsidian/file-format.md", None)  # removed in this sweep
    assert querier.note_at("facts/obsidian/file-format.md") is None
    assert "facts/obsidian/file-format.md" not in {n.path for n in querier.similar("plain markdown", "", 9)}


def test_restaging_a_patched_note_keeps_word_counts_sane(tmp_path: Path, write_candidate: Callable[..., Path]) -> None:
    """A patched note replaces its indexed version: its words must not count twice."""
    root = tmp_path / "tiny"  # one note, the default rules
    write(root, "facts/zephyrine/data-handling.md", fact("zephyrine", body=LONG_BODY))
    querier = Overlay(querier_for(root, state_of(tmp_path)))
    for round_ in range(3):
        querier.stage("facts/zephyrine/data-handling.md", fact("zephyrine", body=f"{LONG_BODY} Round {round_}."))
    (found,) = querier.similar("quorvax zephyrine", LONG_BODY, 5)
    assert found.path == "facts/zephyrine/data-handling.md" and 0 < found.score <= 1
    querier.stage("facts/zephyrine/data-handling.md", None)
    assert querier.similar("quorvax zephyrine", LONG_BODY, 5) == []
    querier.stage("facts/zephyrine/other.md", fact("zephyrine", "other", body=LONG_BODY))
    assert [n.path for n in querier.similar("quorvax zephyrine", LONG_BODY, 5)] == ["facts/zephyrine/other.md"]


def _scanned(querier: Overlay, field: str, value: str) -> list[str]:
    """What the overlay's own matches were before it kept them by field: a scan of every staged
    note, in the order they were first staged."""
    notes_ = [(p, s.row) for p, s in querier.staged.items() if s is not None]
    if field == "name":
        return [p for p, row in notes_ if value in row.names]
    return [p for p, row in notes_ if getattr(row, field) == value]


_BASES: dict[Path, iq.IndexQuerier] = {}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.booleans()), min_size=1, max_size=25))
def test_the_overlay_finds_staged_notes_by_field_as_a_scan_of_them_does(
    steps: list[tuple[int, int, bool]], vault: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Staged, restaged and removed in any order, the notes an overlay finds by key, name, day,
    hashes and file name are those a scan of its staged notes finds, in the same order: the
    fields it keeps for the sweep's later candidates stay true to what is staged."""
    if vault not in _BASES:  # the vault is only read: one index for every example
        _BASES[vault] = querier_for(vault, state_of(tmp_path_factory.mktemp("overlay")))
    querier = Overlay(_BASES[vault])
    paths = [f"facts/ent{i % 3}/data-handling.md" if i < 3 else f"events/2026-01-0{i}-meeting.md" for i in range(6)]
    for where, variant, remove in steps:
        body = f"{LONG_BODY} Variant {variant}: ai go{variant} {'policy' if variant % 2 else 'policies'}."
        text = (
            fact(f"ent{variant}", body=body)
            if where < 3
            else f"---\ntitle: Meeting {variant}\ndate: 2026-01-0{variant + 1}\n---\n{body}\n"
        )
        querier.stage(paths[where], None if remove else text)
        for name_, value in [
            (f, getattr(s.row, f))
            for s in querier.staged.values()
            if s
            for f in ("key", "day", "text_hash", "body_hash", "stem")
            if getattr(s.row, f)
        ]:
            assert [p for p, _ in querier._matching(name_, value)] == _scanned(querier, name_, value), (name_, value)
        for name in {n for s in querier.staged.values() if s for n in s.row.names}:
            assert [p for p, _ in querier._matching("name", name)] == _scanned(querier, "name", name)
        ever = {w for held in querier._heads.values() for w in held}  # every word a staged note brought
        for word in [*sorted(ever), "ai", "go"]:
            stemmed = words.stem(word, "english")
            scanned = {w for w in ever if w.startswith(words.prefixes(stemmed)) and words.stem(w, "english") == stemmed}
            assert set(querier._spelt_as(stemmed, "english")) == scanned, word
        added = sum(1 for p in querier._new_paths if querier.staged.get(p) is not None)
        removed = sum(1 for p, s in querier.staged.items() if s is None and p not in querier._new_paths)
        assert querier.count() == querier.base.count() + added - removed
        for rel in paths:  # as the overlay answered by its scan
            scanned = [p for p, s in querier.staged.items() if s is not None and (p == rel or s.row.key == rel)]
            scanned += [p for p in querier.base.paths_for_key(rel) if p not in querier.staged]
            assert querier.paths_for_key(rel) == key_first(scanned, rel)


def test_the_overlay_asks_the_index_for_as_many_more_notes_as_hidden_ones_could_rank(tmp_path: Path) -> None:
    """A sweep hides every note it patched. The index's best notes for some words are asked
    for with as many more as hidden notes hold one of those words, not as many more as are
    hidden (the longer list cost a sort and a join per question), and the visible best are
    the same either way; a list shorter than asked for is all there is."""
    root = tmp_path / "many"
    for i in range(30):
        words = "zephyrine quorvax" if i % 3 == 0 else "meridian"
        write(root, f"facts/ent{i:02}/data-handling.md", fact(f"ent{i:02}", body=f"{words} {'filler ' * i}note {i}."))
    querier = Overlay(querier_for(root, state_of(tmp_path)))
    asked: list[int] = []
    real, rows = querier.base.ranked, querier.base.ranked_rows

    def spied(words: tuple[str, ...], limit: int) -> list[Any]:
        asked.append(limit)
        return rows(words, limit)

    querier.base.ranked_rows = spied  # type: ignore[method-assign]
    for i in range(1, 30, 3):  # ten patched notes that hold "meridian", none "zephyrine"
        querier.stage(f"facts/ent{i:02}/data-handling.md", fact(f"ent{i:02}", body=f"patched {i}."))
    querier.stage("facts/ent00/data-handling.md", fact("ent00", body="patched 0."))  # one that held it
    words, total = ("zephyrine",), querier.count()
    df = querier.frequencies(list(words))
    best = sorted(querier.ranked(words, df, total, 3), key=lambda item: (-item[0], item[1]))[:3]
    assert asked == [3 + 1 + 1]  # the one hidden note that held the word (and one row more), not the eleven hidden
    everything = [f for f in real(words, df, total, 3 + 11) if querier._visible(f[1])]
    assert best == sorted(everything, key=lambda item: (-item[0], item[1]))[:3]
    assert "facts/ent00/data-handling.md" not in {path for _, path, _ in best}
    asked.clear()
    few = querier.ranked(("quorvax",), querier.frequencies(["quorvax"]), total, 20)  # 9 visible hold it
    assert asked == [20 + 1 + 1] and len(few) == 9  # all there is came: nothing asked again


def test_notes_tied_at_the_overlays_cut_are_ranked_as_with_every_hidden_note(tmp_path: Path) -> None:
    """Notes of the same shape score the same: the index orders them by rowid, the question by
    path. A shorter list cut between them would keep other notes than the longer one the
    overlay asked for before; it asks for that one again."""
    root = tmp_path / "tied"
    for i in range(1, 8):
        write(root, f"facts/ent{i:02}/data-handling.md", fact(f"ent{i:02}", body="zephyrine alpha beta."))
    for i in range(10):
        write(root, f"facts/oth{i:02}/data-handling.md", fact(f"oth{i:02}", body="meridian alpha beta gamma."))
    base = querier_for(root, state_of(tmp_path))
    write(
        root, "facts/ent01/data-handling.md", fact("ent01", body="zephyrine alpha beta.")
    )  # indexed again: a new rowid
    base.expire()
    querier = Overlay(base)
    for i in range(10):
        querier.stage(f"facts/oth{i:02}/data-handling.md", fact(f"oth{i:02}", body="patched."))
    words, total = ("zephyrine",), querier.count()
    df = querier.frequencies(list(words))
    for count in (1, 2, 3):
        asked = sorted(querier.ranked(words, df, total, count), key=lambda item: (-item[0], item[1]))[:count]
        everything = [f for f in base.ranked(words, df, total, count + 10) if querier._visible(f[1])]
        assert asked == sorted(everything, key=lambda item: (-item[0], item[1]))[:count]
        assert asked[0][1] == "facts/ent01/data-handling.md"


def test_a_sweep_stages_its_notes_in_the_overlay_the_context_gives(vault: Path, tmp_path: Path) -> None:
    """The context's querier is the index under the overlay; the index querier alone answers
    questions and stages nothing."""
    ctx = build_context(vault, str(state_of(tmp_path)))
    given = ctx.querier(ctx, ctx.rules)
    assert isinstance(given, Overlay) and staging(given) is given
    with pytest.raises(TypeError, match="cannot stage"):
        staging(iq.IndexQuerier(vault, ctx.rules, ctx.state))


@pytest.mark.parametrize("dry_run", [False, True], ids=["sweep", "dry-run"])
def test_a_promotion_is_visible_to_later_candidates_of_the_same_sweep(
    vault: Path, tmp_path: Path, write_candidate: Callable[..., Path], dry_run: bool
) -> None:
    state = state_of(tmp_path)
    querier_for(vault, state)  # an index built before these candidates arrived
    text = fact("zephyrine", value="Retries idempotent calls.", body=LONG_BODY)
    write_candidate(vault, "a-first.md", text)
    write_candidate(vault, "b-again.md", text)
    result = run(build_context(vault, str(state)), None, Options(use_judge=False, dry_run=dry_run))
    verdicts = {Path(a.inbox_path).name: (a.verdict, a.reason) for agent in result.agents for a in agent.actions}
    assert verdicts["a-first.md"][0] == "promote"
    assert verdicts["b-again.md"] == ("drop", "already known and unchanged (facts/zephyrine/data-handling.md)")
    assert (vault / "facts/zephyrine/data-handling.md").exists() is not dry_run


# --- when the index is refreshed ------------------------------------------------------------------


def test_an_empty_inbox_never_opens_the_index(vault: Path, tmp_path: Path) -> None:
    for path in (vault / "_inbox").rglob("*.md"):
        path.unlink()
    state = state_of(tmp_path)
    run(build_context(vault, str(state)), None, Options(use_judge=False))
    assert not (state / "index.sqlite3").exists()


def test_a_sweep_with_candidates_refreshes_the_index(vault: Path, tmp_path: Path) -> None:
    state = state_of(tmp_path)
    querier_for(vault, state)
    write(vault, "facts/acme/fresh.md", fact("acme", "fresh"))
    run(build_context(vault, str(state)), None, Options(use_judge=False))
    paths = {p for (p,) in sqlite3.connect(state / "index.sqlite3").execute("SELECT path FROM notes")}
    assert "facts/acme/fresh.md" in paths


# --- the command line ------------------------------------------------------------------------------


def test_query_and_index_commands(vault: Path, tmp_path: Path, invoke: Callable[..., object]) -> None:
    state = str(state_of(tmp_path))
    common = ["--vault", str(vault), "--state-dir", state]
    out = invoke("query", "Obsidian", "File Format", "--json", *common)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)["data"]
    assert data["kind"] == "key" and data["query"] == "facts/obsidian/file-format.md"
    assert data["results"][0]["value"] == "Obsidian stores notes as plain Markdown files in a local folder."
    out = invoke("query", "--slug", "Ada Lovelace", *common)
    assert out.output.startswith("persons/ada-lovelace.md  (persons)")
    out = invoke("query", "--text", "plain markdown files", "--json", *common)
    assert json.loads(out.output)["data"]["results"][0]["path"] == "facts/obsidian/file-format.md"
    out = invoke("query", "--date", "2026-05-01", *common)
    assert "events/2026/2026-05-01-vault-kickoff.md" in out.output
    assert "no note matches" in invoke("query", "nobody", "nothing", *common).output
    for bad in (["only-one"], [], ["a", "b", "--slug", "c"]):
        assert invoke("query", *bad, *common).exit_code == 2
    missing = run_installed("index", "stats", "--state-dir", str(tmp_path / "new"), cwd=vault)
    assert missing.returncode == 1 and "no index yet" in missing.stderr and "Traceback" not in missing.stderr
    write(vault, "notes/broken.md", "---\na: [\n---\nbody\n")
    rebuilt = json.loads(invoke("index", "rebuild", "--json", *common).output)["data"]
    assert rebuilt["rebuilt"] and rebuilt["notes"] == ix.Index(vault, load_for_vault(vault), Path(state)).count()
    stats = json.loads(invoke("index", "stats", "--json", *common).output)["data"]
    assert stats["path"] == str(Path(state) / "index.sqlite3") and stats["surfaces"]["facts"] == 1
    assert [p["path"] for p in stats["problems"]] == ["notes/broken.md"]
    assert "read by body only: notes/broken.md" in invoke("index", "stats", *common).output


def test_similarity_is_not_asked_of_candidates_a_drop_rule_takes(vault: Path, invoke, write_candidate) -> None:
    asked: list[str] = []

    class Spied(Overlay):
        def neighbours(self, candidate: cand.Candidate, k: int) -> list[Neighbour]:
            asked.append(candidate.inbox_path)
            return super().neighbours(candidate, k)

    def spied(ctx: Context, rules: Rules) -> Spied:
        return Spied(iq.IndexQuerier(ctx.root, rules, ctx.state, clock=ctx.clock, files=ctx.files, env=ctx.env))

    unsourced = "---\ntype: fact\nentity: wobblium\npredicate: colour\nvalue: teal\nconfidence: 1\n---\nrumour\n"
    sourced = unsourced.replace("confidence: 1", "confidence: 2\nsource_url: https://example.dev/wobblium")
    write_candidate(vault, "dropped.md", unsourced, agent="spy")
    write_candidate(vault, "kept.md", sourced.replace("colour", "weight"), agent="spy")
    out = json.loads(invoke("run", "_inbox/spy", "--vault", str(vault), "--json", seams=Seams(querier=spied)).output)
    verdicts = {a["inbox_path"]: a["verdict"] for a in out["actions"]}
    assert verdicts == {"_inbox/spy/dropped.md": "drop", "_inbox/spy/kept.md": "promote"}
    assert asked == ["_inbox/spy/kept.md"]


def test_a_rebuilt_index_is_put_in_place_with_the_writers_recipe(vault: Path, tmp_path: Path) -> None:
    """fsynced, renamed, its folder fsynced: through the same `Files` as every other write."""
    from memory_curator.store.writer import Files

    @dataclass(frozen=True)
    class Spy(Files):
        calls: list[str] = field(default_factory=list)

        def fsync_file(self, path: Path) -> None:
            self.calls.append(f"fsync {path.name}")
            super().fsync_file(path)

        def fsync_dir(self, folder: Path) -> None:
            self.calls.append("fsync folder")
            super().fsync_dir(folder)

    spy = Spy()
    state = tmp_path / "state"
    state.mkdir()
    index = ix.Index(vault, load_for_vault(vault), state, FixedClock(NOW), spy)
    index.rebuild()
    assert spy.calls[-2:] == [f"fsync {ix.FILE_NAME}.building-{os.getpid()}", "fsync folder"]
    assert index.count() > 0 and not list(state.glob("*.building-*"))


def recording_bar() -> tuple[list[tuple[int, int]], Progress]:
    """A progress bar that records (total, how far it advanced) each time it closes."""
    shown: list[tuple[int, int]] = []

    @contextlib.contextmanager
    def bar(total: int) -> Iterator[Callable[[int], None]]:
        done = [0]
        yield lambda n: done.__setitem__(0, done[0] + n)
        shown.append((total, done[0]))

    return shown, bar


def test_a_build_that_reads_more_than_a_few_hundred_notes_shows_a_bar_and_a_small_one_does_not(
    tmp_path: Path,
) -> None:
    """The context's bar (stderr, terminal only) advances to the number of notes read; a vault
    of a few notes builds without one."""
    shown, bar = recording_bar()

    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    for n in range(PROGRESS_NOTES + 50):
        (root / "notes" / f"n{n}.md").write_text(f"---\ntitle: Note {n}\n---\nbody {n}\n", encoding="utf-8")
    rules = load_for_vault(root)
    (tmp_path / "s1").mkdir()
    ix.Index(root, rules, tmp_path / "s1", FixedClock(NOW), progress=bar).rebuild()
    assert shown == [(PROGRESS_NOTES + 50, PROGRESS_NOTES + 50)]
    for n in range(PROGRESS_NOTES + 1, PROGRESS_NOTES + 50):
        (root / "notes" / f"n{n}.md").unlink()
    shown.clear()
    (tmp_path / "s2").mkdir()
    ix.Index(root, rules, tmp_path / "s2", FixedClock(NOW), progress=bar).rebuild()
    assert shown == [(PROGRESS_NOTES + 1, PROGRESS_NOTES + 1)]
    for n in range(50, PROGRESS_NOTES + 1):
        (root / "notes" / f"n{n}.md").unlink()
    shown.clear()
    (tmp_path / "s3").mkdir()
    ix.Index(root, rules, tmp_path / "s3", FixedClock(NOW), progress=bar).rebuild()
    assert shown == [], "50 notes: no bar"


# --- a build in worker processes ------------------------------------------------------------------


def dump(state: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row the index holds, FTS5 content and vocabulary included."""
    with sqlite3.connect(state / ix.FILE_NAME) as conn:
        queries = {
            "notes": "SELECT * FROM notes ORDER BY id",
            "names": "SELECT * FROM names ORDER BY note, name",
            "terms": "SELECT * FROM terms ORDER BY term",
            "texts": "SELECT * FROM texts ORDER BY id",
            "vocab": "SELECT * FROM vocab ORDER BY term",
            "path_vocab": "SELECT * FROM path_vocab ORDER BY term",
            "meta": "SELECT * FROM meta ORDER BY key",
            "fts_config": "SELECT * FROM fts_config ORDER BY k",
            "schema": "SELECT type, name, sql FROM sqlite_schema ORDER BY name",
            "version": "PRAGMA user_version",
        }
        return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}


def messy_vault(vault: Path) -> None:
    for name, text in MESSY.items():
        write(vault, f"notes/{name}", text)
    for n in range(60):
        write(vault, f"facts/gen-{n}/colour.md", fact(f"gen-{n}", "colour", f"Colour {n}.", f"{LONG_BODY} #t{n % 4}"))
    write(vault, "notes/links.md", "---\ntitle: Links\n---\nSee [[gen-1]] and [[Obsidian]] #tagged\n")


@dataclass
class Spread:
    """Chunks of 7 notes over two workers (even on one core), so that a small vault spreads over
    them. What happened, in order: "pool" for a build or refresh that started worker processes,
    "here" for each chunk described in this process (the workers' own calls are not seen here)."""

    seen: list[str] = field(default_factory=list)

    def workers(self, parallel: bool = False, work: Any = None, pool_fails: bool = False) -> build.Workers:
        """In worker processes from one note on (`parallel`), else from the default number."""

        def pool(*args: Any) -> Any:
            self.seen.append("pool")
            return 1 / 0 if pool_fails else build.spawn_pool(*args)

        def here(*args: Any) -> build.Described:
            self.seen.append("here")
            return build.describe_chunk(*args)

        spread = build.Workers(chunk=7, count=2, pool=pool, here=here, work=work or build.WORKERS.work)
        return replace(spread, from_notes=1) if parallel else spread


@pytest.fixture
def tiny_chunks() -> Spread:
    return Spread()


def test_a_build_in_worker_processes_holds_exactly_the_rows_of_one_in_this_process(
    vault: Path, tmp_path: Path, tiny_chunks: Spread
) -> None:
    messy_vault(vault)
    rules = load_for_vault(vault)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    ix.Index(vault, rules, here, FixedClock(NOW), workers=tiny_chunks.workers()).rebuild()  # below the threshold
    assert set(tiny_chunks.seen) == {"here"}
    tiny_chunks.seen.clear()
    rebuilt = ix.Index(vault, rules, there, FixedClock(NOW), workers=tiny_chunks.workers(parallel=True)).rebuild()
    assert tiny_chunks.seen == ["pool"], "every chunk described by a worker"
    assert rebuilt.notes == len(walk(vault)) > 70
    ours, theirs = dump(here), dump(there)
    assert theirs == ours
    assert len(ours["notes"]) == rebuilt.notes and ours["texts"] and ours["terms"] and ours["names"]
    assert [k for k, _ in ours["fts_config"]] == ["hashsize", "version"], "built without merging; merges as usual after"


def test_a_bad_note_in_a_workers_chunk_is_indexed_by_its_body_with_its_one_line_problem(
    vault: Path, tmp_path: Path, tiny_chunks: Spread
) -> None:
    messy_vault(vault)
    state = state_of(tmp_path)
    index = ix.Index(vault, load_for_vault(vault), state, FixedClock(NOW), workers=tiny_chunks.workers(parallel=True))
    assert index.rebuild().notes == len(walk(vault))
    assert tiny_chunks.seen == ["pool"]
    problems = dict(index.problems())
    assert set(problems) == {"notes/bad-yaml.md", "notes/template.md", "notes/latin1.md", "notes/only-fence.md"}
    assert all("\n" not in why and why for why in problems.values())
    assert "does not parse" in problems["notes/template.md"]
    querier = iq.IndexQuerier(vault, load_for_vault(vault), state, index)
    found = {n.path for n in querier.similar("zanzibarite quillwort", "", 5)}
    assert {"notes/bad-yaml.md", "notes/template.md"} <= found  # indexed by their bodies
    assert querier.paths_for_key("facts/gen-59/colour.md") == ["facts/gen-59/colour.md"]


def _crash_on_a_note_named_crash(rels: tuple[str, ...], *args: object) -> object:
    """A worker that dies (as on a segfault) on the chunk holding `crash.md`."""
    if any(rel.endswith("crash.md") for rel in rels):
        os._exit(70)
    return build._work(rels, *args)  # type: ignore[arg-type]


def test_a_worker_that_dies_or_a_pool_that_cannot_start_costs_time_not_rows(
    vault: Path, tmp_path: Path, tiny_chunks: Spread
) -> None:
    messy_vault(vault)
    write(vault, "notes/crash.md", "---\ntitle: Crash\n---\nA note a worker dies on.\n")
    rules = load_for_vault(vault)
    here = tmp_path / "here"
    here.mkdir()
    ix.Index(vault, rules, here, FixedClock(NOW), workers=tiny_chunks.workers()).rebuild()
    expected = dump(here)
    for name in ("dead-worker", "no-pool"):
        tiny_chunks.seen.clear()
        state = tmp_path / name
        state.mkdir()
        spread = tiny_chunks.workers(parallel=True, work=_crash_on_a_note_named_crash, pool_fails=name == "no-pool")
        ix.Index(vault, rules, state, FixedClock(NOW), workers=spread).rebuild()
        assert dump(state) == expected, name
        assert tiny_chunks.seen[0] == "pool" and "here" in tiny_chunks.seen, name


def test_a_parallel_build_advances_the_bar_to_every_note_and_a_refresh_counts_terms_the_same(
    vault: Path, tmp_path: Path, tiny_chunks: Spread
) -> None:
    shown, bar = recording_bar()

    messy_vault(vault)
    for n in range(PROGRESS_NOTES):
        write(vault, f"notes/many/n{n}.md", f"---\ntitle: Note {n}\n---\nbody {n} word{n % 13}\n")
    rules = load_for_vault(vault)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    parallel, default = tiny_chunks.workers(parallel=True), tiny_chunks.workers()
    ix.Index(vault, rules, there, FixedClock(NOW), progress=bar, workers=parallel).rebuild()
    total = len(walk(vault))
    assert shown == [(total, total)]
    ix.Index(vault, rules, here, FixedClock(NOW), workers=default).rebuild()
    assert tiny_chunks.seen.count("pool") == 1
    for n in range(40):  # a refresh of many notes goes through the workers too, counting their words
        write(vault, f"notes/many/n{n}.md", f"---\ntitle: Note {n}\n---\nedited {n} fresh{n % 5}\n")
        write(vault, f"notes/more/m{n}.md", f"---\ntitle: More {n}\n---\nadded {n} extra{n % 3}\n")
    (vault / "notes/many/n299.md").unlink()
    refreshed = ix.Index(vault, rules, there, FixedClock(NOW), workers=parallel).refresh()
    assert (refreshed.rebuilt, refreshed.added, refreshed.changed, refreshed.removed) == (False, 40, 40, 1)
    assert tiny_chunks.seen.count("pool") == 2
    ix.Index(vault, rules, here, FixedClock(NOW), workers=default).refresh()
    assert tiny_chunks.seen.count("pool") == 2
    assert dump(there) == dump(here)


@pytest.mark.parametrize("where", ["fixtures", "help", "learnings"])
def test_whose_a_note_is_the_index_says_as_reading_the_note_does(where: str) -> None:
    """`_namesakes` trusts the index's `owned` column instead of reading each namesake: on
    every note of the fixtures and of both real vaults it must be what a read decides."""
    from memory_curator.core.ownership import curator_owned
    from memory_curator.core.rules import parse as parse_rules

    roots = {"fixtures": FIXTURES, "help": REAL_VAULT, "learnings": REAL_VAULT.parent / "agent-learnings-es"}
    root = require_shared(roots[where]) if where != "fixtures" else FIXTURES
    rules = parse_rules((FIXTURES / "_meta/inbox-rules.md").read_text(encoding="utf-8"), "inbox-rules.md")
    layout = indexing.Layout(rules)
    owned = 0
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        row = indexing.describe(rel, raw, layout)
        read = curator_owned(rel, notes.parse(raw.decode("utf-8", errors="replace")).frontmatter, rules)
        assert row.owned in (read, None), rel
        owned += bool(row.owned)
    assert where != "fixtures" or owned > 0
