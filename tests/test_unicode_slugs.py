"""Unicode slugs (issue 16): a title that folds to ASCII keeps today's slug; one that folds to
nothing keeps its own letters, so a Japanese, Chinese or Russian title can be promoted."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memory_curator.core.names import ascii_slug, slugify
from memory_curator.store.state import vault_id


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Café Zürich", "cafe-zurich"),  # folds to ASCII: the slug every existing key has
        ("Obsidian 1.9 ships Bases", "obsidian-1-9-ships-bases"),
        ("Ärger", "arger"),
        ("同期の料金", "同期の料金"),
        ("Синхронизация: цена", "синхронизация-цена"),
        ("Σύνοψη", "σύνοψη"),
        ("云同步 / 价格?", "云同步-价格"),
        ("東京：料金？", "東京-料金"),  # full-width punctuation is a separator
    ],
)
def test_slug(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_mixed_script_title_that_folds_to_some_ascii_keeps_the_ascii_slug() -> None:
    # no existing key moves: whatever folded to non-empty ASCII before folds the same now
    assert slugify("東京 Tower 2026") == "tower-2026"


def test_unicode_slug_is_nfc_and_at_most_200_bytes() -> None:
    decomposed = unicodedata.normalize("NFD", "ё" * 10)
    assert slugify("ж" + decomposed) == unicodedata.normalize("NFC", "ж" + "ё" * 10)
    long = slugify("語" * 300)
    assert len(long.encode("utf-8")) <= 200 and long == "語" * 66


def test_nothing_usable_stays_empty() -> None:
    assert slugify("?!* / \\") == "" and slugify("🙂🙂") == ""


def test_state_folder_names_stay_ascii(tmp_path: Path) -> None:
    # the state folder (index, journal) must not move because slugs learned Unicode
    vault = tmp_path / "ノート"
    vault.mkdir()
    assert vault_id(vault).startswith("vault-") and ascii_slug("ノート") == ""


def test_a_japanese_title_is_promoted(vault: Path, invoke: Callable[..., Result]) -> None:
    inbox = vault / "_inbox" / "agent-ja"
    inbox.mkdir(parents=True)
    (inbox / "c.md").write_text(
        "---\ntype: insight\ntitle: 同期の料金は月額4ドル\nsource_url: https://obsidian.md/sync\n"
        "confidence: 3\nload_bearing: true\n---\n同期の料金について。\n",
        encoding="utf-8",
    )
    result = invoke("run", str(inbox), "--no-judge", "--settle", "0")
    assert result.exit_code == 0, result.output
    assert (vault / "insights" / "同期の料金は月額4ドル.md").exists(), result.output


def test_digits_alone_do_not_stand_for_a_non_latin_title() -> None:
    assert slugify("同期は月額4ドル") == "同期は月額4ドル"
    assert slugify("2026") == "2026" and slugify("v1.2") == "v1-2"
