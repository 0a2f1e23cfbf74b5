"""A tiny static-embedding model written in model2vec's own on-disk format (`config.json`,
`tokenizer.json`, `model.safetensors`), so tests and the semantic benchmark load a model through
the same code path users take (a local folder) without downloading anything.

Its words carry hand-set vectors: the words of one concept (`meeting`, `gathering`) point the
same way, so a paraphrase lands close to what it rewords and an unrelated note does not.
Function words have zero vectors (they count in the mean, point nowhere)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

CONCEPTS: dict[str, tuple[str, ...]] = {
    "meeting": ("meeting", "gathering", "sync", "standup"),
    "moved": ("moved", "rescheduled", "postponed", "shifted"),
    "thursday": ("thursday",),
    "company": ("acme", "company", "vendor", "supplier"),
    "keeps": ("stores", "keeps", "holds", "hosts"),
    "data": ("data", "records", "information", "files"),
    "place": ("frankfurt", "germany", "europe"),
    "food": ("pasta", "recipe", "tomato", "basil", "dinner"),
    "money": ("budget", "spending", "costs", "money"),
    "approved": ("approved", "accepted", "signed"),
    "security": ("keys", "rotation", "rotates", "credentials", "signing"),
    "weekly": ("weekly", "fortnight", "monthly"),
}
FUNCTION_WORDS = ("the", "a", "an", "to", "in", "was", "of", "for", "and", "its", "our", "team", "customer", "client")


def word_vectors(dim: int = 16) -> dict[str, list[float]]:
    """Concept k is axis k; each word also leans a little towards an axis of its own, so two
    paraphrases are close (cosine about 0.9) but not identical."""
    assert dim > len(CONCEPTS)
    vectors: dict[str, list[float]] = {}
    for axis, words in enumerate(CONCEPTS.values()):
        for word in words:
            vector = [0.0] * dim
            vector[axis] = 1.0
            vector[len(CONCEPTS) + zlib.crc32(word.encode()) % (dim - len(CONCEPTS))] += 0.3
            vectors[word] = vector
    for word in FUNCTION_WORDS:
        vectors[word] = [0.0] * dim
    return vectors


def write_model(folder: Path, vectors: dict[str, list[float]] | None = None, dim: int = 16) -> Path:
    """A model2vec folder: a word-level tokenizer (lowercased, accents stripped, split on
    whitespace and punctuation) over `vectors`' words, `[UNK]` first with a zero vector."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vectors = vectors if vectors is not None else word_vectors(dim)
    dim = len(next(iter(vectors.values())))
    vocab = {"[UNK]": 0} | {word: i for i, word in enumerate(vectors, 1)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    matrix = np.zeros((len(vocab), dim), dtype=np.float32)
    for word, i in vocab.items():
        if word in vectors:
            matrix[i] = vectors[word]
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    save_file({"embeddings": matrix}, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": dim, "normalize": True}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
