"""What a command's `to_json` returns: a JSON object, typed as JSON rather than `Any`.

A value is what `json.dumps` writes: text, a number, a boolean, null, a list or an object of
values. Read-only containers (`Sequence`, `Mapping`), so a `list[str]` or a `dict[str, int]` a
result holds is one as it is (a `list` is invariant and would refuse it). `JsonObject` is a plain
`dict`, as each `to_json` builds one key by key. A few results hold values `json.dumps` writes
with `default=str` (a time): those say so by taking `object`, not by loosening this type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
