"""Issue 38, "the judge sees what decides": each neighbour by the passages holding the candidate's
words, with its path-free key, surface, whose note it is and when it was observed; each note
once per request; the surfaces and the slug rule in the system prompt; `max_tokens` scaled with
the chunk. Through the real SDK over httpx2's MockTransport (`test_judge`'s fake provider)."""

from __future__ import annotations

import re

from test_judge import _NOTE, NEIGHBOUR, OTHER, judged, shown

__all__ = ["judged"]  # the fixture, used by name

LONG = "insights/garden-and-sweeps.md"
FILLER = "".join(
    f"Paragraph {n}: the garden needs watering on Tuesdays, and the shed keeps rakes, hoses and seed trays.\n\n"
    for n in range(60)
)
DECISIVE = "Sweeping the inbox weekly keeps it small: measured over 40 weeks, the backlog stayed under 12 notes."
LONG_NOTE = (
    "---\ntype: insight\ntitle: Garden and sweeps\nobserved_at: 2026-02-03\ncurated_from:\n"
    "  - inbox: _inbox/a/g.md\n    sha256: sha256:00\n    curated_at: 2026-02-04T00:00:00Z\n---\n"
    f"{FILLER}{DECISIVE}\n"
)


def notes_of(body: dict) -> dict[str, str]:
    return dict(_NOTE.findall(body["messages"][0]["content"]))


def test_a_long_neighbour_is_shown_where_it_holds_the_candidates_words(judged) -> None:
    (judged.vault / LONG).write_text(LONG_NOTE, encoding="utf-8")
    assert LONG_NOTE.index(DECISIVE) > 6000, "the part that decides is far past the old 2,000-character cut"
    judged.candidates(1, {1: "Sweeping the inbox weekly keeps its backlog small, under a dozen notes."})
    judged.links["insight-01.md"] = [LONG]
    judged.run()
    (text,) = notes_of(judged.model.requests[0]).values()
    assert DECISIVE in text
    assert "title: Garden and sweeps" in text, "its frontmatter comes first"
    assert len(text) < 3000 and "[...]" in text, "the watering paragraphs are left out"


def test_each_note_says_its_surface_key_whose_and_when(judged) -> None:
    judged.candidates(1)
    judged.links["insight-01.md"] = [OTHER, "insights/agents-need-a-curator.md"]
    judged.run()
    user = judged.model.requests[0]["messages"][0]["content"]
    fact = re.search(r'<note id="n1"([^>]*)>', user)
    person = re.search(r'<note id="n2"([^>]*)>', user)
    assert fact and person
    key = 'key="entity: obsidian, predicate: file-format"'
    assert fact.group(1) == f' surface="facts" {key} whose="curator" observed="2026-03-01T00:00:00Z"'
    assert person.group(1) == ' surface="insights" key="slug: agents-need-a-curator" whose="person"'
    assert re.search(r'<candidate id="c1" notes="n1 n2" surface="insights" key="slug: insight-01">', user)
    assert OTHER not in user and "facts/obsidian" not in user, "still no path"


def test_a_note_is_shown_once_whatever_shows_it(judged) -> None:
    """Two candidates shown the same note, and a copy of it at another path: one id, one text."""
    copy = "insights/weekly-sweeps-copy.md"
    (judged.vault / copy).write_bytes((judged.vault / NEIGHBOUR).read_bytes())
    judged.candidates(2)
    judged.links["insight-01.md"] = [NEIGHBOUR, copy]
    judged.links["insight-02.md"] = [copy]
    judged.run()
    body = judged.model.requests[0]
    assert list(notes_of(body)) == ["n1"]
    assert body["messages"][0]["content"].count("Sweeping the inbox weekly keeps it small.") == 1
    assert {cid: notes for cid, notes in shown(body).values()} == {"c1": ["n1"], "c2": ["n1"]}


def test_the_system_prompt_names_each_surfaces_key_required_fields_and_the_slug_rule(judged) -> None:
    judged.candidates(1)
    judged.run()
    system = judged.model.requests[0]["system"][0]["text"]
    assert "facts (type fact): key entity, predicate; required entity, predicate, value" in system
    assert "events (type event): key date, slug; required date, title" in system
    assert "A slug is a title or name made a key: lowercased, accents folded (Café -> cafe)" in system
    assert "facts/{entity}" not in system, "no path template"


def test_max_tokens_grows_with_the_chunk_up_to_the_setting(judged) -> None:
    judged.candidates(1)
    judged.run("--judge-set", "max_tokens=1200")
    assert judged.model.requests[0]["max_tokens"] == 1200, "the setting caps it"
    judged.candidates(12)  # the first is promoted already: 11 are sent
    judged.run()
    assert len(shown(judged.model.requests[1])) == 11
    assert judged.model.requests[1]["max_tokens"] == 1024 + 512 * 11
