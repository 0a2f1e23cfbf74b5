"""The secret scan's cheap pass (`core/secret_triggers.py`) never hides a credential (issue 39).

Only the lines a trigger hits are given to the detectors; these tests hold that the triggers
are what the plugins' own patterns need (any match of any plugin pattern, generated from the
pattern itself, is a hit) and that the scan with them finds exactly what the scan of every
line finds, on the corpus's credentials and look-alikes set in random text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import CREDENTIALS, LOOK_ALIKES

from memory_curator.core import secret_triggers, secrets
from memory_curator.core.secret_triggers import TRIGGERS, candidates
from memory_curator.core.secrets import EXTRA, scan
from tests.conftest import examples

PLUGINS = secrets._detectors().plugins
PATTERNS = [(p.secret_type, pattern) for p in PLUGINS for pattern in getattr(p, "denylist", ())] + list(EXTRA)
NOISE = st.text(alphabet=st.sampled_from(list("aZ0 _-.:=;\"'`/@\t")) | st.characters(), max_size=12)
FRAGMENTS = (
    [c for _, _, c in CREDENTIALS]
    + [t for _, t in LOOK_ALIKES]
    + [
        "password = ",
        'api_key: "',
        "token ",
        "://",
        "\n",
        "\n---\n",
        "---\n",
        "DB_PASS=",
        "secret_key",
        "Contraseña: ",
        '"Zq8x7Rm2" == ',
        ";",
        " != ",
        "']",
    ]
)


def full_scan(text: str, allow: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """The scan of every line: no kind has triggers, so each runs everywhere."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(secret_triggers, "TRIGGERS", {})
        return scan(text, allow)


def test_every_detector_has_triggers() -> None:
    kinds = {plugin.secret_type for plugin in secrets._detectors().plugins} | {kind for kind, _ in EXTRA}
    assert kinds <= set(TRIGGERS), kinds - set(TRIGGERS)


@pytest.mark.parametrize(("kind", "pattern"), PATTERNS, ids=[f"{k}-{p.pattern[:24]}" for k, p in PATTERNS])
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_any_match_of_a_plugin_pattern_is_a_trigger_hit(kind: str, pattern: re.Pattern[str], data: Any) -> None:
    text = data.draw(NOISE) + data.draw(st.from_regex(pattern, fullmatch=True)) + data.draw(NOISE)
    hits = candidates(text, [kind])
    for index, line in enumerate(text.split("\n")):
        if pattern.search(line):
            assert kind in hits.get(index, ()), (line, pattern.pattern)


@settings(max_examples=examples(300), deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS) | NOISE, max_size=12))
def test_the_scan_with_triggers_finds_what_the_scan_of_every_line_finds(parts: list[str]) -> None:
    text = "".join(parts)
    assert scan(text) == full_scan(text)


@pytest.mark.parametrize(("name", "kind", "credential"), CREDENTIALS, ids=[c[0] for c in CREDENTIALS])
def test_every_corpus_credential_passes_the_triggers(name: str, kind: str, credential: str) -> None:
    text = f"---\ntype: fact\n---\nThe agent saw {credential} here.\n"
    assert kind in candidates(text, [kind]).get(3, ())
    assert [f.kind for f in scan(text)] == [kind]


def test_a_line_without_a_trigger_is_never_given_to_a_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    detect = secrets._detect

    def spy(line: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(line)
        return detect(line, *args, **kwargs)

    monkeypatch.setattr(secrets, "_detect", spy)
    ordinary = "The agent noted that the vault moved to the new folder layout last week.\n" * 500
    found = scan(ordinary + "Pasted AKIAIOSFODNN7EXAMPLE by mistake.\n" + ordinary)
    assert [(f.kind, f.line) for f in found] == [("AWS Access Key", 501)]
    assert seen == ["Pasted AKIAIOSFODNN7EXAMPLE by mistake."]


def test_the_fold_keeps_offsets_and_folds_what_ignorecase_folds() -> None:
    text = "İSTANBUL ſecret \u212aEY ıd"
    folded = secret_triggers._fold(text)
    assert len(folded) == len(text)
    assert "secret" in folded and "key" in folded


@settings(max_examples=examples(300), deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS) | NOISE, max_size=8))
def test_the_keyword_plugin_finds_nothing_in_a_line_without_its_shape(parts: list[str]) -> None:
    keyword = next(p for p in secrets._detectors().plugins if p.secret_type == secrets.KEYWORD)
    for line in "".join(parts).split("\n"):
        found = [*keyword.analyze_string(line), *keyword.analyze_string(line, secrets._detectors().yaml_keyword)]
        assert not found or secret_triggers.keyword_shape(line), line
