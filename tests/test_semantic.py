"""Semantic pairing's isolated part (issue 20): a tiny model in model2vec's own format, loaded
from a local folder as users load theirs; vectors kept in the index, incrementally and rebuilt
when the model changes; neighbours ranking paraphrases first; the missing extra and the missing
model as one-line errors. No test touches the network: the hub's download is made to fail."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from semantic_kit import word_vectors, write_model

from memory_curator.commands import doctor
from memory_curator.commands import semantic as fetching
from memory_curator.core.errors import CuratorError
from memory_curator.index import semantic
from memory_curator.index import store as ix
from memory_curator.store.rules_file import load_for_vault

from conftest import age

pytestmark = pytest.mark.usefixtures("no_network")  # no test may reach the model hub

np = pytest.importorskip("numpy")
pytest.importorskip("model2vec")

NOTES = {
    "events/2026/team-meeting.md": "---\ntitle: Team meeting\n---\nThe team meeting moved to Thursday.\n",
    "facts/acme/hosting.md": "---\ntitle: Acme hosting\n---\nAcme stores customer data in Frankfurt.\n",
    "notes/dinner.md": "---\ntitle: Dinner\n---\nA pasta recipe with tomato and basil.\n",
    "notes/budget.md": "---\ntitle: Budget\n---\nThe budget was approved.\n",
    "notes/keys.md": "---\ntitle: Keys\n---\nThe vendor rotates its signing keys every fortnight.\n",
}
PARAPHRASES = {
    "Thursday: our standup was rescheduled.": "events/2026/team-meeting.md",
    "The company keeps client records in Germany.": "facts/acme/hosting.md",
    "Our supplier rotates credentials each fortnight.": "notes/keys.md",
    "Spending accepted.": "notes/budget.md",
}


@pytest.fixture
def model(model_dir: Path) -> semantic.Model:
    return semantic.load(model_dir)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / "_inbox").mkdir(parents=True)
    for rel, text in NOTES.items():
        write(folder, rel, text)
    return folder


@pytest.fixture
def index(root: Path, tmp_path: Path) -> Iterator[ix.Index]:
    state = tmp_path / "state"
    state.mkdir()
    built = ix.Index(root, load_for_vault(root), state)
    built.refresh()
    yield built
    built.close()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    age(path)


def paths(conn: sqlite3.Connection) -> dict[int, str]:
    return dict(conn.execute("SELECT id, path FROM notes"))


def stored(conn: sqlite3.Connection) -> dict[int, bytes]:
    return dict(conn.execute("SELECT note, vector FROM vectors"))


# --- the model ----------------------------------------------------------------------------------------


def test_a_local_folder_loads_and_embeds_paraphrases_close(model: semantic.Model, model_dir: Path) -> None:
    assert model.path == model_dir.resolve() and model.dim == 16 and len(model.identity) == 64
    vectors = model.embed(["The team meeting moved to Thursday.", "Thursday: our standup was rescheduled.",
                           "A pasta recipe with tomato and basil.", "zzz qqq"])  # fmt: skip
    assert vectors.shape == (4, 16) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any(), "a text without a known word is a zero vector, not NaN"
    assert vectors[0] @ vectors[1] > 0.85
    assert abs(vectors[0] @ vectors[2]) < 0.2
    assert model.embed([]).shape == (0, 16)


def test_the_identity_is_the_files_not_the_folder(tmp_path: Path, model_dir: Path) -> None:
    twin = write_model(tmp_path / "elsewhere" / "tiny")
    assert semantic.identity(twin) == semantic.identity(model_dir)
    changed = word_vectors() | {"pasta": [0.0] * 15 + [1.0]}
    write_model(twin, changed)
    assert semantic.identity(twin) != semantic.identity(model_dir)


# --- vectors in the index ---------------------------------------------------------------------------


def test_sync_embeds_every_note_then_nothing(index: ix.Index, model: semantic.Model) -> None:
    first = semantic.sync(index.conn, model)
    assert (first.embedded, first.removed, first.rebuilt, first.vectors) == (5, 0, True, 5)
    assert set(stored(index.conn)) == set(paths(index.conn))
    assert all(len(blob) == 16 * 4 for blob in stored(index.conn).values())
    again = semantic.sync(index.conn, model)
    assert (again.embedded, again.removed, again.rebuilt, again.vectors) == (0, 0, False, 5)


def test_a_note_added_after_the_last_one_was_removed_gets_its_own_vector(
    index: ix.Index, model: semantic.Model, root: Path
) -> None:
    """`sync` tells new notes by their ids, so a refresh never gives a new note an id a removed
    one had: seen on a tmpfs, where the walk's order put the removed notes last and the new
    ones took their ids, and their vectors. Twice: with and without a sync between."""
    semantic.sync(index.conn, model)
    seen = set(paths(index.conn))
    for name, between in (("first", True), ("second", False)):
        last = max(paths(index.conn).items())[1]
        (root / last).unlink()
        index.refresh()
        if between:
            semantic.sync(index.conn, model)
        write(root, f"notes/{name}.md", f"---\ntitle: {name}\n---\nAcme keeps its {name} archive in Lisbon.\n")
        index.refresh()
        new = next(i for i, p in paths(index.conn).items() if p == f"notes/{name}.md")
        assert new not in seen
        seen |= set(paths(index.conn))
        done = semantic.sync(index.conn, model)
        assert (done.embedded, done.removed) == (1, 0 if between else 1)
        assert set(stored(index.conn)) == set(paths(index.conn))


def test_a_refresh_is_followed_incrementally(index: ix.Index, model: semantic.Model, root: Path) -> None:
    semantic.sync(index.conn, model)
    before = stored(index.conn)
    write(root, "notes/dinner.md", "---\ntitle: Dinner\n---\nThe budget meeting was moved to Thursday.\n")
    write(root, "notes/new.md", "---\ntitle: New\n---\nAcme holds records in Europe.\n")
    (root / "notes" / "budget.md").unlink()
    refreshed = index.refresh()
    assert (refreshed.added, refreshed.changed, refreshed.removed) == (1, 1, 1)
    done = semantic.sync(index.conn, model)
    assert (done.embedded, done.removed, done.rebuilt, done.vectors) == (2, 2, False, 5)
    now = stored(index.conn)
    assert set(now) == set(paths(index.conn))
    by_path = {p: now[i] for i, p in paths(index.conn).items()}
    assert by_path["facts/acme/hosting.md"] in before.values(), "an unchanged note keeps its vector"
    dinner = np.frombuffer(by_path["notes/dinner.md"], dtype=np.float32)
    assert dinner @ model.embed(["meeting moved thursday budget"])[0] > 0.9, "the changed text was embedded"


def test_update_takes_changed_and_removed_notes(index: ix.Index, model: semantic.Model) -> None:
    semantic.sync(index.conn, model)
    ids = sorted(paths(index.conn))
    done = semantic.update(index.conn, model, [(ids[0], "pasta with basil")], [ids[1]])
    assert (done.embedded, done.removed, done.rebuilt, done.vectors) == (1, 1, False, 4)
    vector = np.frombuffer(stored(index.conn)[ids[0]], dtype=np.float32)
    assert np.allclose(vector, model.embed(["pasta with basil"])[0])


def test_update_inside_the_callers_transaction(index: ix.Index, model: semantic.Model) -> None:
    semantic.sync(index.conn, model)
    ident = min(paths(index.conn))
    index.conn.execute("BEGIN IMMEDIATE")
    semantic.update(index.conn, model, [(ident, "budget approved")], [])
    index.conn.execute("ROLLBACK")
    vector = np.frombuffer(stored(index.conn)[ident], dtype=np.float32)
    assert not np.allclose(vector, model.embed(["budget approved"])[0]), "the caller's rollback undid it"


def test_another_model_rebuilds_every_vector(
    index: ix.Index, model: semantic.Model, model_dir: Path, tmp_path: Path
) -> None:
    semantic.sync(index.conn, model)
    assert semantic.sync(index.conn, semantic.load(model_dir)).rebuilt is False, "the same model, loaded again"
    other = semantic.load(write_model(tmp_path / "other", word_vectors() | {"thursday": [0.0] * 15 + [1.0]}))
    assert semantic.load_vectors(index.conn, other).ids.size == 0, "never another model's vectors"
    done = semantic.update(index.conn, other, [], [])
    assert (done.embedded, done.rebuilt, done.vectors) == (5, True, 5)
    assert semantic.load_vectors(index.conn, other).ids.size == 5
    assert semantic.load_vectors(index.conn, model).ids.size == 0


def test_a_rebuilt_index_gets_its_vectors_back(index: ix.Index, model: semantic.Model) -> None:
    semantic.sync(index.conn, model)
    index.rebuild()
    assert semantic.sync(index.conn, model).embedded == 5


class DiesOnTheThirdBatch:
    """The model's own encoder, killed (Ctrl-C) when asked for its third batch."""

    def __init__(self, encoder: Any) -> None:
        self.encoder, self.calls = encoder, 0

    def encode(self, sentences: Sequence[str], **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return self.encoder.encode(sentences, **kwargs)


def test_a_killed_build_resumes(index: ix.Index, model: semantic.Model) -> None:
    dying = dataclasses.replace(model, encoder=DiesOnTheThirdBatch(model.encoder))
    with pytest.raises(KeyboardInterrupt):
        semantic.sync(index.conn, dying, pace=semantic.Pace(batch=2))
    assert len(stored(index.conn)) == 4, "two batches were committed"
    done = semantic.sync(index.conn, model)
    assert (done.embedded, done.rebuilt, done.vectors) == (1, False, 5)


def test_the_progress_bar_advances_over_a_large_update(index: ix.Index, model: semantic.Model) -> None:
    seen: list[tuple[str, int]] = []

    from contextlib import contextmanager

    @contextmanager
    def bar(total: int) -> Iterator[object]:
        seen.append(("total", total))
        yield lambda n: seen.append(("advance", n))

    semantic.sync(index.conn, model, bar, semantic.Pace(bar_from=3))  # type: ignore[arg-type]
    assert seen[0] == ("total", 5) and sum(n for what, n in seen if what == "advance") == 5


# --- neighbours -------------------------------------------------------------------------------------


def test_paraphrases_rank_first(index: ix.Index, model: semantic.Model) -> None:
    semantic.sync(index.conn, model)
    vectors = semantic.load_vectors(index.conn, model)
    names = paths(index.conn)
    queries = model.embed(list(PARAPHRASES))
    for (text, expected), query in zip(PARAPHRASES.items(), queries, strict=True):
        found = semantic.nearest(vectors, query, 3)
        assert names[found[0][0]] == expected, (text, [(names[i], round(s, 2)) for i, s in found])
        assert found[0][1] > 0.75 and found[1][1] < 0.5
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    singles = [semantic.nearest(vectors, q, 3) for q in queries]
    for many, one in zip(semantic.nearest_many(vectors, queries, 3, block=3), singles, strict=True):  # two blocks
        assert [i for i, _ in many] == [i for i, _ in one]
        assert [s for _, s in many] == pytest.approx([s for _, s in one], abs=1e-6)


def test_nearest_skips_and_bounds(index: ix.Index, model: semantic.Model) -> None:
    semantic.sync(index.conn, model)
    vectors = semantic.load_vectors(index.conn, model)
    query = model.embed(["The company keeps client records in Germany."])[0]
    best = semantic.nearest(vectors, query, 1)[0][0]
    assert best not in [i for i, _ in semantic.nearest(vectors, query, 2, skip={best})]
    assert len(semantic.nearest(vectors, query, 2, skip={best})) == 2
    assert len(semantic.nearest(vectors, query, 50)) == 5
    assert semantic.nearest(vectors, query, 0) == []
    empty = semantic.Vectors(np.zeros(0, dtype=np.int64), np.zeros((0, 16), dtype=np.float32))
    assert semantic.nearest(empty, query, 3) == [] and semantic.nearest_many(empty, query[None], 3) == [[]]


def test_a_sweep_opens_its_pairing_once(index: ix.Index, model_dir: Path) -> None:
    pairing = semantic.open_pairing(index.conn, model_dir)
    assert len(pairing.vectors) == 5
    names = paths(index.conn)
    best = pairing.similar("The company keeps client records in Germany.", 2)
    assert names[best[0][0]] == "facts/acme/hosting.md"
    assert best[0][0] not in [i for i, _ in pairing.similar("The company keeps records.", 2, skip={best[0][0]})]
    with pytest.raises(semantic.SemanticUnavailable, match="not found at"):
        semantic.open_pairing(index.conn, model_dir.parent / "gone")


# --- what is missing: one line, no download -----------------------------------------------------------


def test_the_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, model_dir: Path) -> None:
    monkeypatch.setitem(sys.modules, "model2vec", None)  # `import model2vec` raises ImportError
    with pytest.raises(semantic.SemanticUnavailable) as raised:
        semantic.load(model_dir)
    assert str(raised.value) == "semantic pairing needs the extra: pip install 'memory-curator[semantic]'"
    assert isinstance(raised.value, CuratorError)
    told = semantic.availability(model_dir)
    assert (told.available, told.message) == (False, semantic.EXTRA_MISSING)
    assert semantic.extra_installed() is False


def test_the_modules_import_without_the_extra() -> None:
    """Only a function that needs the model imports it: the CLI and doctor work without the extra."""
    code = (
        "import sys; sys.modules.update(numpy=None, model2vec=None, huggingface_hub=None)\n"
        "from memory_curator.index import semantic\n"
        "from memory_curator.commands import semantic as fetching, doctor\n"
        "from memory_curator.cli import app\n"
        "print(semantic.availability(None).message)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == semantic.EXTRA_MISSING


def test_numpy_missing_is_the_same_line(monkeypatch: pytest.MonkeyPatch, model: semantic.Model) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(semantic.SemanticUnavailable, match=r"^semantic pairing needs the extra"):
        model.embed(["x"])


def test_a_missing_model_is_one_line_and_never_downloaded(tmp_path: Path, model_dir: Path) -> None:
    missing = tmp_path / "minishlab" / "potion-base-8M"
    with pytest.raises(semantic.SemanticUnavailable) as raised:
        semantic.load(missing)
    message = str(raised.value)
    assert message == f"semantic model not found at {missing} (fetch it with `memory-curator semantic fetch`)"
    assert raised.value.file == str(missing)
    (model_dir / "tokenizer.json").unlink()
    with pytest.raises(semantic.SemanticUnavailable, match="not found at"):
        semantic.load(model_dir)  # a folder without every file is not a model (model2vec would download)
    assert semantic.availability(model_dir).message == semantic.not_found(model_dir)


def test_a_broken_model_is_one_line(model_dir: Path) -> None:
    (model_dir / "model.safetensors").write_bytes(b"\x00" * 10)
    with pytest.raises(semantic.SemanticUnavailable) as raised:
        semantic.load(model_dir)
    assert str(raised.value).startswith(f"semantic model at {model_dir} cannot be read: ")
    assert "\n" not in str(raised.value)


def test_availability_for_doctor(model_dir: Path) -> None:
    told = semantic.availability(model_dir)
    size = sum((model_dir / name).stat().st_size for name in semantic.MODEL_FILES)
    assert (told.available, told.path, told.bytes) == (True, str(model_dir), size)
    assert str(model_dir) in told.message and "MB" in told.message
    assert semantic.availability(None).available is False


def test_a_setting_names_a_folder_or_a_model(tmp_path: Path) -> None:
    models = tmp_path / "models"
    assert semantic.model_path("minishlab/potion-base-8M", models) == models / "minishlab" / "potion-base-8M"
    assert semantic.model_path("/opt/m", models) == Path("/opt/m")
    assert semantic.model_path("./m", models) == Path("./m")
    for bad in ("../../etc", "a/../b", "a/b/c", "a b", ""):
        if bad.startswith("../"):
            continue
        with pytest.raises(semantic.SemanticUnavailable, match="not a model name"):
            semantic.model_path(bad, models)
    assert semantic.models_dir({"MEMORY_CURATOR_MODELS": str(tmp_path / "m")}) == tmp_path / "m"
    assert semantic.models_dir({}, tmp_path / "data") == tmp_path / "data" / "models"


def test_doctor_says_where_the_model_is_and_its_size(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert doctor.check_semantic(None, {}) == []
    [ok] = doctor.check_semantic(str(model_dir), {})
    assert ok.level == "ok" and str(model_dir) in ok.message and "MB" in ok.message
    models = {"MEMORY_CURATOR_MODELS": str(tmp_path / "models")}
    [missing] = doctor.check_semantic("minishlab/potion-base-8M", models)
    assert missing.level == "warn" and "not found at" in missing.message and "lexically" in missing.message
    assert missing.fix == "memory-curator semantic fetch minishlab/potion-base-8M"
    [bad] = doctor.check_semantic("a b", {})
    assert bad.level == "warn" and "not a model name" in bad.message
    monkeypatch.setitem(sys.modules, "model2vec", None)
    [extra] = doctor.check_semantic(str(model_dir), {})
    assert extra.level == "warn" and extra.message.startswith(semantic.EXTRA_MISSING)
    assert extra.fix == "pip install 'memory-curator[semantic]'"


# --- fetch: the one place that downloads ---------------------------------------------------------------


def test_fetch_copies_a_local_model_folder(model_dir: Path, tmp_path: Path) -> None:
    to = tmp_path / "installed" / "tiny"
    fetched = fetching.fetch(str(model_dir), to, {})
    assert fetched.path == to and fetched.identity == semantic.identity(model_dir)
    assert semantic.load(to).identity == semantic.identity(model_dir)


def test_fetch_downloads_only_the_model_files(model_dir: Path, tmp_path: Path) -> None:
    asked: list[dict[str, object]] = []

    def hub(repo_id: str, local_dir: str, allow_patterns: list[str]) -> str:
        asked.append({"repo_id": repo_id, "allow_patterns": allow_patterns})
        write_model(Path(local_dir))
        return local_dir

    models = tmp_path / "models"
    fetched = fetching.fetch("minishlab/potion-base-8M", None, {"MEMORY_CURATOR_MODELS": str(models)}, download=hub)
    assert fetched.path == models / "minishlab" / "potion-base-8M"
    assert asked == [{"repo_id": "minishlab/potion-base-8M", "allow_patterns": [*semantic.MODEL_FILES,
                                                                               *semantic.EXTRA_FILES]}]  # fmt: skip
    assert semantic.availability(fetched.path).available
    assert not list(models.rglob(".fetch-*")), "no temp folder is left behind"


def test_fetch_refuses_what_is_not_a_model(tmp_path: Path) -> None:
    def hub(repo_id: str, local_dir: str, allow_patterns: list[str]) -> str:
        (Path(local_dir) / "config.json").write_text("{}", encoding="utf-8")
        return local_dir

    with pytest.raises(CuratorError, match="is not a model2vec model"):
        fetching.fetch("someone/not-a-model", tmp_path / "to", {}, download=hub)
    assert not (tmp_path / "to").exists()

    def offline(repo_id: str, local_dir: str, allow_patterns: list[str]) -> str:
        raise OSError("no route to host\nsecond line")

    with pytest.raises(CuratorError) as raised:
        fetching.fetch("someone/model", tmp_path / "to", {}, download=offline)
    assert str(raised.value) == "cannot fetch someone/model: no route to host second line"


def test_fetch_without_the_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(semantic.SemanticUnavailable) as raised:
        fetching.fetch("minishlab/potion-base-8M", tmp_path / "to", {})
    assert str(raised.value) == semantic.EXTRA_MISSING
    assert not (tmp_path / "to").exists() and not list(tmp_path.glob(".fetch-*"))


def test_fetch_replaces_an_older_copy(model_dir: Path, tmp_path: Path) -> None:
    to = tmp_path / "installed"
    fetching.fetch(str(model_dir), to, {})
    newer = write_model(tmp_path / "newer", word_vectors() | {"basil": [0.0] * 15 + [1.0]})
    assert fetching.fetch(str(newer), to, {}).identity == semantic.identity(newer)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["installed", "models", "newer"]
