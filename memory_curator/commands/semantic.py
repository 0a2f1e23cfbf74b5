"""`semantic fetch NAME [--to PATH]`: the one place that downloads a semantic model.

A sweep only ever reads a local folder (`index.semantic.load`); this command puts one there:
from the model hub by name (`minishlab/potion-base-8M`: only model2vec's files, through
`huggingface_hub`, which the `semantic` extra brings), or by copying a model folder you already
have (NAME is an existing folder: for a machine without the hub). The files land in a temp
folder beside the destination, are loaded once to prove they are a model, and only then take
the destination's place, so a failed fetch never leaves half a model where sweeps look.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.index import semantic

Download = Callable[..., str]  # (repo_id=, local_dir=, allow_patterns=) -> the folder


@dataclass(frozen=True)
class Fetched:
    name: str
    path: Path
    bytes: int
    identity: str

    def to_json(self) -> JsonObject:
        return {"name": self.name, "path": str(self.path), "bytes": self.bytes, "identity": self.identity}


def fetch(
    name: str,
    to: Path | None,
    env: Mapping[str, str],
    download: Download | None = None,
    *,
    data_home: Path | None = None,
) -> Fetched:
    """Put the model NAME (a hub name, or a local model folder to copy) at `to`, by default
    where a `semantic: {model: NAME}` setting looks for it (`semantic.models_dir`: from `env`,
    else the machine's `data_home`)."""
    source = Path(name).expanduser()
    local = source.is_dir()
    if to is not None:
        dest = to.expanduser()
    elif local:
        dest = semantic.models_dir(env, data_home) / source.resolve().name
    else:
        dest = semantic.model_path(name, semantic.models_dir(env, data_home))
    if not local:
        semantic.model_path(name, Path())  # a hub name, never a path or a traversal
    dest = dest.absolute()
    dest.parent.mkdir(parents=True, exist_ok=True)
    temp = dest.parent / f".fetch-{dest.name}-{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    try:
        if local:
            _copy(source, temp)
        else:
            _download(name, temp, download or _hub)
        missing = semantic.missing_files(temp)
        if missing:
            raise CuratorError(f"{name} is not a model2vec model (no {', '.join(missing)})")
        semantic.load(temp)  # readable, or a one-line error
        _install(temp, dest)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    size = sum((dest / file).stat().st_size for file in semantic.MODEL_FILES)
    return Fetched(name, dest, size, semantic.identity(dest))


def _copy(source: Path, temp: Path) -> None:
    for file in (*semantic.MODEL_FILES, *semantic.EXTRA_FILES):
        if (source / file).is_file():
            shutil.copyfile(source / file, temp / file)


def _download(name: str, temp: Path, download: Download) -> None:
    patterns = [*semantic.MODEL_FILES, *semantic.EXTRA_FILES]
    try:
        download(repo_id=name, local_dir=str(temp), allow_patterns=patterns)
    except semantic.SemanticUnavailable:
        raise
    except Exception as exc:  # the hub's errors are many kinds; each is one line here
        raise CuratorError(f"cannot fetch {name}: {' '.join(str(exc).split()) or type(exc).__name__}") from None
    shutil.rmtree(temp / ".cache", ignore_errors=True)  # the hub's bookkeeping of a local_dir download


def _hub(repo_id: str, local_dir: str, allow_patterns: list[str]) -> str:
    try:
        hub = importlib.import_module("huggingface_hub")
    except ImportError:
        raise semantic.SemanticUnavailable(semantic.EXTRA_MISSING) from None
    return str(
        hub.snapshot_download(repo_id=repo_id, repo_type="model", local_dir=local_dir, allow_patterns=allow_patterns)
    )


def _install(temp: Path, dest: Path) -> None:
    """The new model takes the destination's place; an old one there is removed after."""
    old = dest.parent / f".fetch-old-{dest.name}-{os.getpid()}"
    if dest.exists():
        if not dest.is_dir():
            raise CuratorError(f"{dest} exists and is not a folder", file=dest)
        os.replace(dest, old)
    try:
        os.replace(temp, dest)
    except OSError:
        with contextlib.suppress(OSError):
            os.replace(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)
