"""What a candidate's evidence fields mean before the rules see them (issue 16). Pure.

Agents fill `source_url` with a placeholder (`https://example.com`) and write `confidence: high`
where the rules compare numbers. The conditions see the candidate as a careful reader would: a
placeholder address is no source, a confidence word is its number. The note itself keeps what
the agent wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from memory_curator.core.settings import PLACEHOLDER_SOURCES, Settings

SOURCE_KEYS = ("source_url", "sources")


def host_of(value: Any) -> str:
    """The host of a source address (`example.com` of `https://Example.com/x`); a bare host too."""
    text = str(value).strip()
    if not text:
        return ""
    try:
        host = urlsplit(text if "//" in text else f"//{text}").hostname
    except ValueError:  # `http://[` : not an address at all, so not a placeholder either
        return ""
    return (host or "").casefold().rstrip(".")


def is_placeholder(value: Any, settings: Settings) -> bool:
    """A documentation or reserved address: `example.com` and its subdomains, `localhost`,
    any host under the `.example`, `.invalid` and `.test` TLDs, and what the rules add."""
    host = host_of(value)
    if not host:
        return False
    for known in (*PLACEHOLDER_SOURCES, *settings.placeholder_sources):
        if known.startswith("."):
            if host.endswith(known) or host == known[1:]:
                return True
        elif host == known or host.endswith("." + known):
            return True
    return False


def placeholders(frontmatter: Mapping[str, Any], settings: Settings) -> list[str]:
    """The candidate's source addresses that are placeholders, as written."""
    found: list[str] = []
    for key in SOURCE_KEYS:
        raw = frontmatter.get(key)
        items = raw if isinstance(raw, list) else [raw] if raw is not None else []
        found += [str(v) for v in items if isinstance(v, str | int | float) and is_placeholder(v, settings)]
    return found


def as_read(frontmatter: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """The fields as the conditions see them: placeholder sources left out (a key left with
    none is absent), a confidence word replaced by its number."""
    fields = dict(frontmatter)
    for key in SOURCE_KEYS:
        raw = fields.get(key)
        if isinstance(raw, list):
            real = [v for v in raw if not is_placeholder(v, settings)]
            if real:
                fields[key] = real
            else:
                fields.pop(key)
        elif isinstance(raw, str) and is_placeholder(raw, settings):
            fields.pop(key)
    confidence = fields.get("confidence")
    if isinstance(confidence, str):
        words = dict(settings.confidence_words)
        number = words.get(confidence.strip().casefold())
        if number is not None:
            fields["confidence"] = number
    return fields
