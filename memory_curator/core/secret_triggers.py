"""Which lines of a text are worth a detector's time: a cheap pass before the secret scan.

Running each of detect-secrets' plugins on each line costs ~1 s per 1 MiB (a Python call per
plugin per line). Every plugin pattern needs a literal, or a short shape, that a line without it
cannot match: `AKIA` for an AWS key, `://` for a URL's password, `key`/`pass`/`token` for the
name-and-value plugins. `TRIGGERS` holds those, read off the plugins' own regexes (detect-secrets
1.5); each is searched once over the whole text (a literal-led pattern is a fast C search),
and only the lines it hits are scanned, by the kinds it names. A detector without an entry (a
plugin a newer detect-secrets adds) is run on every line: slower, never blind. Pure: text in,
line numbers out (docs/safety.md, "Secrets").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

EVERY_LINE = "*"  # the trigger of a kind without triggers: it hits every line
_IGNORECASE = "i:"  # a trigger for a case-insensitive pattern: lowercase, searched in the folded text
# the non-ASCII letters Python's IGNORECASE matches to an ASCII one that `str.lower` keeps apart
# (or, for U+0130, lengthens): folded first, so a folded offset is the text's own offset
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_NAME_AND_VALUE = ("i:key", "i:pw", "i:pass", "i:token")  # Cloudant, IBM, SoftLayer: `<name>_key = <value>`

# kind (detect-secrets' `secret_type`, or an `EXTRA` kind) -> what each of its patterns needs
TRIGGERS: dict[str, tuple[str, ...]] = {
    "AWS Access Key": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "i:aws"),
    "Artifactory Credentials": ("AKC", r"AP[\dA-F]"),
    "Azure Storage Account access key": ("AccountKey=",),
    "Basic Auth Credentials": ("://",),
    "Cloudant Credentials": ("://", *_NAME_AND_VALUE),
    "Discord Bot Token": (r"\.[a-zA-Z\d_-]{6}\.",),
    "GitHub Token": (r"gh[pousr]_",),
    "GitLab Token": (r"gl[a-z]+-", "GR1348941"),
    "IBM COS HMAC Credentials": ("i:secret",),
    "IBM Cloud IAM Key": _NAME_AND_VALUE,
    "JSON Web Token": ("eyJ",),
    "Mailchimp Access Key": (r"-us\d",),
    "NPM tokens": (":_authToken=",),
    "OpenAI Token": ("T3BlbkFJ", "sk-"),
    "Private Key": ("PRIVATE KEY", "PuTTY-User-Key-File-2"),
    "PyPI Token": ("pypi-AgE",),
    "Secret Keyword": ("i:key", "i:pass", "i:pwd", "i:secret", "i:contrase"),
    "SendGrid API Key": (r"SG\.",),
    "Slack Token": (r"i:xox[abposr]-", "://"),
    "SoftLayer Credentials": ("://", "i:softlayer", *_NAME_AND_VALUE),
    "Square OAuth Secret": ("sq0csp-",),
    "Stripe Access Key": ("k_live_",),
    "Telegram Bot Token": (r":[0-9A-Za-z_-]{35}",),
    "Twilio API Key": (r"AC[a-z0-9]{32}", r"SK[a-z0-9]{32}"),
    "Anthropic API Key": ("sk-ant-",),
    "Google API Key": ("AIza",),
}


def candidates(text: str, kinds: Iterable[str]) -> dict[int, frozenset[str]]:
    """For each 0-based line of `text` (split on `\\n`) some trigger hits, the kinds to run on
    it; a kind without triggers is run everywhere (its line set is `EVERY_LINE`'s)."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    folded = _fold(text)
    hits: dict[int, set[str]] = {}
    for trigger, its_kinds in _by_trigger(tuple(kinds)).items():
        if trigger == EVERY_LINE:
            indexes: Iterable[int] = range(len(newlines) + 1)
        else:
            folds = trigger.startswith(_IGNORECASE)
            pattern = _compiled(trigger.removeprefix(_IGNORECASE))
            indexes = (bisect_right(newlines, m.start()) for m in pattern.finditer(folded if folds else text))
        for index in indexes:
            hits.setdefault(index, set()).update(its_kinds)
    return {index: frozenset(found) for index, found in hits.items()}


def keyword_shape(line: str) -> bool:
    """Whether `line` holds what each of the keyword plugin's patterns needs: one of its words
    then `:`, `=` or `!` after at most a closing quote or bracket and spaces (an assignment); its
    word, a quote within 50 characters, and a `;` (a statement); or its word and `==`, `!=`, `!!`
    (a comparison). Its patterns on a long line cost ~1 ms; most lines fail here."""
    folded = _fold(line)
    shapes = _keyword_shapes()
    if shapes.assignment.search(folded):
        return True
    if ";" in folded and shapes.statement.search(folded):
        return True
    return bool(shapes.comparison.search(folded) and shapes.word.search(folded))


def _fold(text: str) -> str:
    """`text` lowercased as Python's IGNORECASE compares ASCII letters, of the same length."""
    if any(c in text for c in "\u0130\u0131\u017f"):
        text = text.translate(_FOLD)
    return text.lower()


@dataclass(frozen=True)
class _KeywordShapes:
    word: re.Pattern[str]
    assignment: re.Pattern[str]
    statement: re.Pattern[str]
    comparison: re.Pattern[str]


@cache
def _keyword_shapes() -> _KeywordShapes:
    """The keyword plugin's words (`DENYLIST_REGEX`, lowercase: matched in the folded line)."""
    from detect_secrets.plugins.keyword import DENYLIST_REGEX as word

    return _KeywordShapes(
        re.compile(word),
        re.compile(rf"{word}[\]'\"]{{0,2}}\s*[:=!]"),
        re.compile(rf"{word}\S{{0,50}}?\s*['\"`]"),
        re.compile(r"[!=]{2}"),
    )


@cache
def _by_trigger(kinds: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each trigger once, with the kinds it lets through (`://` serves four)."""
    kinds_of: dict[str, set[str]] = {}
    for kind in kinds:
        for trigger in TRIGGERS.get(kind, (EVERY_LINE,)):
            kinds_of.setdefault(trigger, set()).add(kind)
    return {trigger: frozenset(found) for trigger, found in kinds_of.items()}


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
