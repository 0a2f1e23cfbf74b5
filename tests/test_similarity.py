"""Near means near (issue 28): two questions, two numbers. *Same information* is symmetric and
needs enough words; *same topic* only names a note; `query --text` ranks, it does not tie at
1.0; words are compared by a real stemmer of the text's language, never by a prefix."""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core import rules, subject, words
from memory_curator.core.errors import RulesError
from memory_curator.index import similarity
from tests.conftest import SHARED, age, examples, require_shared

SHIPPED = (Path(__file__).resolve().parents[1] / "rules/inbox-rules.md").read_text(encoding="utf-8")

SOURCE = "source_url: https://obsidian.md/changelog\nconfidence: 2\n"
NETWORKS = (
    "# Neural networks\n\nA neural network is a stack of layers of weighted units. Training adjusts the weights "
    "by gradient descent on a loss function; backpropagation computes the gradients layer by layer. "
    "Convolutional networks share weights across an image; recurrent networks carry a state across a sequence. "
    "Transformers replace recurrence with attention, and the body of a model is its stack of blocks, each an "
    "attention layer and a feed-forward layer with residual connections and normalisation.\n\n"
    "## Training\n\nThe learning rate sets the step of each update. Too high and the loss diverges; too low and "
    "training crawls. Warm-up raises it over the first steps; a schedule lowers it again towards the end. Batch "
    "size trades the noise of each gradient against the number of updates an epoch allows.\n\n"
    "## Evaluation\n\nA held-out set measures what the network learnt rather than what it memorised; early "
    "stopping ends training when the held-out loss stops falling.\n"
)
SECTION = (
    "The learning rate sets the step of each update: too high and the loss diverges, too low and training "
    "crawls. Warm-up raises it over the first steps and a schedule lowers it towards the end."
)


def scores(candidate: str, note: str, language: str = "english") -> tuple[float, float]:
    """(same information, same topic) of a note for a candidate, in a vault of 1,000 notes."""
    probe = similarity.probe(words.tokens(candidate), {}, 1000, 120.0, language)
    read = similarity.read(probe, note)
    return similarity.same(probe, read), similarity.topic(probe, read)


@pytest.mark.parametrize("short", ["Done.", "test", "body for atomic", "Epictetus", "cosmic inflation"])
def test_a_text_with_too_little_information_is_nobodys_near_duplicate(short: str) -> None:
    note = NETWORKS + "\nSee also: test runs, Epictetus, atomic units, cosmic inflation. Done.\n"
    same, topic = scores(short, note)
    assert same < 0.6 and topic < 0.6, (short, same, topic)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]), min_size=1))
def test_under_five_distinctive_words_never_score_at_least_0_6_against_a_note_sharing_one(
    chosen: list[str],
) -> None:
    candidate = " ".join(dict.fromkeys(chosen[:4]))
    same, topic = scores(candidate, f"{NETWORKS} {chosen[0]}")
    assert same < 0.6 and topic < 0.6


def test_same_information_is_symmetric_and_a_restated_section_stays_near() -> None:
    short, long = scores(SECTION, NETWORKS)[0], scores(NETWORKS, SECTION)[0]
    assert short >= 0.6, "a candidate restating one section of a long note is near"
    assert long < 0.6, "a long candidate is not the same information as one of its sections"
    assert scores(NETWORKS, NETWORKS)[0] == pytest.approx(1.0)
    excerpt = "Backpropagation computes the gradients of the loss."
    assert max(scores(excerpt, NETWORKS)[0], scores(NETWORKS, excerpt)[0]) < 0.6


INCIDENT = (
    "Our transformer's loss diverged at step 900 of training: the learning rate was too high after warm-up. "
    "Lowering the learning rate to 1e-4 fixed the training of the attention layers."
)


def test_a_topic_overlap_is_not_the_same_information() -> None:
    """Most of a candidate's words in a note make it about the same thing, not the same text."""
    other = (
        "The learning rate of our model was raised to 3e-4 after warm-up, and the loss diverged at step 900; "
        "lowering it to 1e-4 fixed the training run of the transformer layers."
    )
    same, topic = scores(other, NETWORKS)
    assert same < 0.6 <= topic, (same, topic)


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


COSMOS = {
    "Cosmology/Inflation.md": "# Cosmic inflation\n\nCosmic inflation is the exponential expansion of space in the "
    "early universe. Inflation explains the flatness and horizon problems; cosmic inflation ended with reheating.\n",
    "Cosmology/CMB.md": "# Cosmic microwave background\n\nThe cosmic microwave background is the afterglow of the "
    "hot early universe; its fluctuations were seeded during inflation.\n",
    "Cosmology/Dark energy.md": "# Dark energy\n\nDark energy drives the accelerating expansion of the universe, a "
    "late-time cousin of cosmic inflation.\n",
    "Economics/Inflation.md": "# Inflation\n\nPrice inflation erodes savings; central banks raise rates to cool "
    "inflation. Nothing cosmic about it, though some call it cosmic inflation of prices.\n",
    "Reading list.md": "# Reading list\n\n- A book on cosmic inflation\n- A book on inflation targeting\n- A book on "
    "gardening, cooking, travel, history, music, chess and many other things besides.\n",
}


def test_query_text_ranks_a_short_query_and_its_scores_spread(vault: Path, invoke: Callable[..., Result]) -> None:
    for rel, text in COSMOS.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
        age(vault / rel)
    result = invoke("query", "--vault", str(vault), "--text", "cosmic inflation", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["data"]["results"]
    ranked = [r["score"] for r in found]
    assert len(found) == 5 and found[0]["path"] == "Cosmology/Inflation.md", found
    assert ranked == sorted(ranked, reverse=True) and len(set(ranked)) == len(ranked), ranked
    assert all(0 < score < 1 for score in ranked), ranked


def test_query_text_finds_another_spelling_of_a_word(vault: Path, invoke: Callable[..., Result]) -> None:
    note = vault / "Notes/clientes.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Clientes\n\nUn cliente archivado lleva archivado_at y no sale en la lista.\n", encoding="utf-8")
    age(note)
    result = invoke("query", "--vault", str(vault), "--text", "los clientes archivados", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["data"]["results"][0]["path"] == "Notes/clientes.md"


def test_a_note_about_the_same_thing_is_named_and_a_short_text_names_nothing(vault: Path) -> None:
    (vault / "Notes").mkdir(exist_ok=True)
    (vault / "Notes/Neural networks.md").write_text(NETWORKS, encoding="utf-8")
    age(vault / "Notes/Neural networks.md")
    ctx = build_context(vault)
    short = f"---\ntype: fact\nentity: atomic\npredicate: body\nvalue: atomic\n{SOURCE}---\nbody for atomic\n"
    out = check_text(ctx, short, "_inbox/agent/c.md", agent="agent")
    assert "Neural networks" not in out.reason and out.verdict == "promote", out
    about = f"---\ntype: insight\ntitle: A diverging loss\nload_bearing: true\n{SOURCE}---\n{INCIDENT}\n"
    out = check_text(ctx, about, "_inbox/agent/d.md", agent="agent")
    assert out.verdict == "needs_review", out
    assert "the vault has a note about it: your note Notes/Neural networks.md" in out.reason, out
    assert "near-duplicate" not in out.reason, out


def _fold_char_by_char(text: str) -> str:
    """How `words.fold` folded before issue 29: every character of a non-ASCII text looked at."""
    import unicodedata

    folded = text.lower()
    if folded.isascii():
        return folded
    return "".join(c for c in unicodedata.normalize("NFD", folded) if not unicodedata.combining(c))


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_folding_only_the_non_ascii_runs_folds_as_character_by_character(text: str) -> None:
    assert words.fold(text) == _fold_char_by_char(text)


def test_the_real_vaults_fold_as_before() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared/real-vaults"
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(shared.rglob("*.md"))]
    if not texts:
        pytest.skip("no real vaults beside the checkout")
    assert [words.fold(t) for t in texts] == [_fold_char_by_char(t) for t in texts]


def test_fused_lists_rank_by_each_lists_share_of_its_range() -> None:
    lexical = [("a.md", 0.9), ("b.md", 0.5), ("c.md", 0.1)]
    semantic = [("d.md", 0.8), ("b.md", 0.7), ("a.md", 0.2)]
    fused = similarity.fused(lexical, semantic)
    assert [p for p, _ in fused] == ["b.md", "a.md", "d.md", "c.md"]  # b: 0.5 + 5/6; a: 1 + 0; d: 0 + 1
    assert fused[0][1] == pytest.approx((0.5 + 5 / 6) / 2) and fused[-1][1] == 0.0
    assert all(0.0 <= score <= 1.0 for _, score in fused)


def test_fused_keeps_one_list_and_ties_alike() -> None:
    only = [("a.md", 0.4), ("b.md", 0.2)]
    assert similarity.fused(only, []) == [("a.md", 1.0), ("b.md", 0.0)]
    assert similarity.fused([("b.md", 0.3), ("a.md", 0.3)]) == [("a.md", 1.0), ("b.md", 1.0)]
    assert similarity.fused([], []) == []


@pytest.mark.parametrize("language", ["english", "spanish"])
def test_the_c_stemmer_stems_as_the_pure_python_reference(language: str) -> None:
    """PyStemmer (a dependency, which `snowballstemmer` uses by itself) must give the stems the
    pure-Python Snowball gives, or a vault's words would compare otherwise on another install:
    4,000 words of the two real vaults (inflected forms included), every one alike."""
    stemmer = pytest.importorskip("Stemmer")
    pure = importlib.import_module(f"snowballstemmer.{language}_stemmer")
    reference = getattr(pure, f"{language.capitalize()}Stemmer")()
    vocabulary: set[str] = set()
    for vault in ("obsidian-help-en", "agent-learnings-es"):
        root = require_shared(SHARED / "real-vaults" / vault)
        for path in sorted(root.rglob("*.md"))[:400]:
            text = path.read_text(encoding="utf-8", errors="replace")
            vocabulary.update(w for w in words.tokens(text) if w.isalpha())
    picked = random.Random(28).sample(sorted(vocabulary), 4000)
    fast = stemmer.Stemmer(language)
    differ = [(w, reference.stemWord(w), fast.stemWord(w)) for w in picked if reference.stemWord(w) != fast.stemWord(w)]
    assert differ == []
    assert words.stem("archivados", "spanish") == "archiv" and words.stem("maintainers", "english") == "maintain"
