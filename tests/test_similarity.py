"""Near means near (issue 28): words are compared by a real stemmer of the text's language, never
by a prefix; the language is the rules' or told by a text's stopwords."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_curator.core import rules, subject, words
from memory_curator.core.errors import RulesError

SHIPPED = (Path(__file__).resolve().parents[1] / "rules/inbox-rules.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("one", "other", "language", "alike"),
    [
        ("archivados", "archivado", "spanish", True),
        ("autoalojamos", "autoalojar", "spanish", True),
        ("facturación", "facturacion", "spanish", True),
        ("maintainers", "maintained", "english", True),
        ("policies", "policy", "english", True),
        ("properties", "proper", "english", False),
        ("commercial", "comment", "english", False),
        ("em0030", "em0031", "english", False),
    ],
)
def test_words_are_matched_by_their_stem_never_by_a_prefix(one: str, other: str, language: str, alike: bool) -> None:
    stem = lambda w: words.stem(words.tokens(w)[0], language)  # noqa: E731
    assert (stem(one) == stem(other)) is alike


def test_a_predicate_speaks_of_a_note_by_stem_only() -> None:
    assert subject.speaks_of(("maintainers",), "Maintained by Vinzent")
    assert not subject.speaks_of(("commercial", "license"), "A comment on the licence")
    assert not subject.speaks_of(("properties",), "Is this proper?")
    assert subject.speaks_of(("archivados",), "clientes con archivado_at", "spanish")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Los clientes archivados no salen en la lista de la factura.", "spanish"),
        ("The archived clients are left out of the invoice list.", "english"),
        ("Done.", "english"),
        ("n8n webhook postgres", "english"),
        ("por qué traefik da 502 si el contenedor de next responde bien en su ip", "spanish"),
    ],
)
def test_the_language_of_a_text_is_told_by_its_stopwords(text: str, language: str) -> None:
    assert words.language_of(text) == language
    assert words.language_of(text, "spanish") == "spanish", "a rules setting names it"


def test_stopwords_are_per_language() -> None:
    assert words.content(words.tokens("los clientes de la factura"), "spanish") == ["clientes", "factura"]
    assert words.content(words.tokens("the clients of the invoice"), "english") == ["clients", "invoice"]


def test_the_language_setting_is_range_checked() -> None:
    def read(language: str) -> str:
        text = SHIPPED.replace("\nsettings:\n", f"\nsettings:\n  language: {language}\n")
        return rules.parse(text, "rules.md").settings.language

    assert rules.parse(SHIPPED, "rules.md").settings.language == "auto"
    assert (read("Spanish"), read("english")) == ("spanish", "english")
    with pytest.raises(RulesError, match="'language' must be auto or one of: english, spanish"):
        read("klingon")
