#!/usr/bin/env python3
"""A REAL small static-embedding model without the model hub: WordLlama's, from its PyPI wheel,
rewritten in model2vec's on-disk format, for benchmarks and the labeled-set evaluation.

    .venv/bin/pip download --no-deps -d /tmp/wl wordllama==0.4.0.post1
    .venv/bin/python tests/perf/wordllama_model.py /tmp/wl/wordllama-*.whl /tmp/wordllama-m2v
    .venv/bin/python tests/perf/semantic_bench.py --model /tmp/wordllama-m2v

The wheel ships `wordllama/weights/l2_supercat_256.safetensors` (32,000 Llama-2 tokens x 256
dims, float16) and `wordllama/tokenizers/l2_supercat_tokenizer_config.json` (a `tokenizers`
JSON). WordLlama embeds a text as the mean of its tokens' vectors, normalised: model2vec's
`encode` does the same, so the folder written here is that model, loaded by the curator's own
code path (`semantic.load`). Nothing is installed: the wheel is read as a zip.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"


def convert(wheel: Path, folder: Path) -> Path:
    import numpy as np
    from safetensors.numpy import load, save_file

    with zipfile.ZipFile(wheel) as archive:
        tensors = load(archive.read(WEIGHTS))
        tokenizer = archive.read(TOKENIZER)
    (matrix,) = tensors.values()
    vocab = len(json.load(io.BytesIO(tokenizer))["model"]["vocab"])
    if matrix.shape[0] != vocab:
        raise SystemExit(f"{wheel}: {matrix.shape[0]} vectors for {vocab} tokens")
    folder.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": np.ascontiguousarray(matrix, dtype=np.float32)}, str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_bytes(tokenizer)
    config = {"model_type": "model2vec", "hidden_dim": int(matrix.shape[1]), "normalize": True, "source": wheel.name}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(convert(Path(sys.argv[1]), Path(sys.argv[2])))
