"""The judge's settings as one sweep resolves them: flag > environment > rules file > default.
Apart from the client, whose SDK and pydantic models cost ~75 ms to import: a run that asks no
judge (an empty inbox, `--no-judge`) never pays for them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from memory_curator.core.conditions import FALSE_WORDS, TRUE_WORDS
from memory_curator.core.errors import CuratorError
from memory_curator.core.settings import JudgeSettings, judge_problem

ENV_PREFIX = "MEMORY_CURATOR_JUDGE_"
KEY_ENV = "ANTHROPIC_API_KEY"  # the judge is on only with a key in the environment


def resolve_settings(base: JudgeSettings, flags: Iterable[tuple[str, str]], env: Mapping[str, str]) -> JudgeSettings:
    """`--judge-set NAME=VALUE`, else `MEMORY_CURATOR_JUDGE_<NAME>` (in `env`, the context's),
    else the rules file's value."""
    given = dict(flags)
    known = [f.name for f in dataclasses.fields(JudgeSettings)]
    for name in given:
        if name not in known:
            raise CuratorError(f"--judge-set {name}: unknown judge setting (known: {', '.join(known)})")
    values: dict[str, Any] = {}
    for name in known:
        variable = ENV_PREFIX + name.upper()
        if name in given:
            values[name] = _coerce(given[name], getattr(base, name), f"--judge-set {name}")
        elif variable in env:
            values[name] = _coerce(env[variable], getattr(base, name), variable)
    settings = replace(base, **values)
    _check(settings)
    return settings


def _coerce(raw: str, current: Any, source: str) -> Any:
    text = raw.strip()
    if isinstance(current, bool):
        if text.lower() in TRUE_WORDS | FALSE_WORDS:
            return text.lower() in TRUE_WORDS
        raise CuratorError(f"{source}={raw!r}: must be true or false")
    if isinstance(current, int | float):
        try:
            return type(current)(text)
        except ValueError:
            kind = "an integer" if isinstance(current, int) else "a number"
            raise CuratorError(f"{source}={raw!r}: must be {kind}") from None
    return text or None


def _check(settings: JudgeSettings) -> None:
    """The rules loader's own check (settings.judge_problem): `rules check` and `run` agree."""
    problem = judge_problem(settings)
    if problem:
        raise CuratorError(f"judge setting {problem[0]}: {problem[1]}")
