"""Words as the curator compares them (issue 28), written once: tokens as the index's FTS5
tokenizer sees them, stopwords per language, the language of a text, and stems by a real
stemmer (Snowball, through `snowballstemmer`, which uses PyStemmer, its C build, when installed:
the same stems, ~500x faster; docs/dependencies.md). Pure.

Two words are the same word when their stems are equal in the text's language: `archivados` is
`archivado`, `maintainers` is `maintained`; `properties` is not `proper` and `commercial` is not
`comment` (a prefix rule said they were). A word with a digit is matched whole (`em0030` is not
`em0031`). Accents fold as in the index (`facturación` is `facturacion`).
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol

import snowballstemmer

AUTO = "auto"
FALLBACK = "english"  # a text with no stopword of any language (`Done.`, a list of names)
_TOKEN = re.compile(r"[^\W_]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # the same tokens in folded ASCII text, found 40% faster
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")

# Compact lists after the Snowball project's, folded as tokens are (no accents): the words
# that carry no subject of their own. A list here makes its language detectable.
_ENGLISH = """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
nor not now of off on once one only or other ought our ours ourselves out over own same she should so some
such than that the their theirs them themselves then there these they this those through to too under
until up us very was we were what when where which while who whom why will with would you your yours
yourself yourselves don doesn didn isn aren wasn weren wouldn shouldn couldn ll ve re
"""
_SPANISH = """
a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el ella
ellas ellos en entre era erais eramos eran eres es esa esas ese eso esos esta estaba estaban estado estais
estamos estan estar estas este esto estos estoy fue fuera fueron fui ha habeis habia habian han has hasta
hay haya he hemos la las le les lo los mas me mi mia mias mio mios mis mucho muchos muy nada ni no nos
nosotras nosotros nuestra nuestras nuestro nuestros o os otra otras otro otros para pero poco por porque
que quien quienes se sea sean ser si sido siendo sin sobre sois somos son soy su sus suya suyas suyo suyos
tambien tanto te tenemos tener tengo ti tiene tienen toda todas todo todos tu tus tuya tuyas tuyo tuyos
un una uno unos vosotras vosotros vuestra vuestras vuestro vuestros y ya yo
"""
STOPWORDS: dict[str, frozenset[str]] = {
    "english": frozenset(_ENGLISH.split()),
    "spanish": frozenset(_SPANISH.split()),
}
LANGUAGES = tuple(STOPWORDS)  # the languages `language: auto` chooses between, and a rules file may name
HEAD = 3  # letters a word shares with its stem at the start, at least (`starts`)
DETECTED = 400  # words of a text read to tell its language: stopwords are a third of any prose
KEPT = 8  # long texts whose tokens are kept (`tokens`): a candidate and the notes it is read against
KEPT_FROM = 16 * 1024  # characters from which a text's tokens are kept (a shorter one's cost little)
FIRST_CHARS = 4096  # characters first read for a text's first words (`first_tokens`)
CACHED = 1 << 18  # stems kept per language before the cache starts again (a vault has far fewer words)


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


_STEMMERS: dict[str, _Stemmer] = {}
_STEMS: dict[str, dict[str, str]] = {}


def fold(text: str) -> str:
    """Lower case without accents, as the index's tokenizer (`remove_diacritics 2`) folds. Only
    the runs of non-ASCII letters are looked at character by character (a note with one dash
    or accent was folded a character at a time: 70% of a `check` on the Obsidian help)."""
    folded = text.lower()
    if folded.isascii():
        return folded
    return _NON_ASCII.sub(_unmarked, unicodedata.normalize("NFD", folded))


def _unmarked(run: re.Match[str]) -> str:
    return _without_marks(run.group())


@functools.lru_cache(maxsize=1 << 14)
def _without_marks(run: str) -> str:
    """A run of non-ASCII characters without its combining marks (runs repeat: `é`, `ñ`, `—`)."""
    return "".join(c for c in run if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """Words as FTS5's unicode61 tokenizer (remove_diacritics 2) sees them. Those of the last
    `KEPT` long texts are kept (issue 36: a decision asks for a 1 MiB candidate's and its
    neighbours' words several times, 50-70 ms each), each caller given its own list."""
    return list(_tokens(text)) if len(text) >= KEPT_FROM else _fresh(text)


def _fresh(text: str) -> list[str]:
    folded = fold(text)
    return (_ASCII_TOKEN if folded.isascii() else _TOKEN).findall(folded)


@functools.lru_cache(maxsize=KEPT)
def _tokens(text: str) -> tuple[str, ...]:
    """Interned: a text of 1 MiB is 170,000 tokens of a few thousand words, 11 MB as new strings,
    3 MB as shared ones (and kept texts share them)."""
    return tuple(map(sys.intern, _fresh(text)))


def first_tokens(text: str, count: int, chars: int = FIRST_CHARS) -> list[str]:
    """The text's first `count` tokens, read from its first `chars` characters, then four times
    as many, until they hold one token more (the last may be cut) or the text ends: the same as
    `tokens(text)[:count]` (folding and tokens are local: a cut changes the last token only)."""
    while True:
        found = _fresh(text[:chars]) if chars < len(text) else tokens(text)
        if chars >= len(text) or len(found) > count:
            return found[:count]
        chars *= 4


def stopwords(language: str) -> frozenset[str]:
    """The language's stopwords (English's for a language without a list of its own)."""
    return STOPWORDS.get(language, STOPWORDS[FALLBACK])


def detect(words: list[str]) -> str:
    """The supported language whose stopwords the folded `words` (their first `DETECTED`) hold
    most; English on a tie or when none is held (a few words give no evidence either way)."""
    counts = Counter(words[:DETECTED])
    hits = {language: sum(counts[w] for w in counts.keys() & listed) for language, listed in STOPWORDS.items()}
    best = max(hits.values())
    return FALLBACK if best == 0 or hits[FALLBACK] == best else max(hits, key=lambda lang: hits[lang])


def language_of(text: str | list[str], setting: str = AUTO) -> str:
    """The language a text's words (or its `tokens`) are stemmed in: the rules' `language`,
    or the detected one."""
    if setting != AUTO:
        return setting
    return detect(first_tokens(text, DETECTED) if isinstance(text, str) else text)


def stem(word: str, language: str) -> str:
    """The word's Snowball stem in `language` (a folded token); a word with a digit whole."""
    cache = _cache(language)
    found = cache.get(word)
    if found is None:
        found = cache[word] = _stemmer(language).stemWord(word) if word.isalpha() else word
    return found


def stems(found: Iterable[str], language: str) -> list[str]:
    """`stem` of each word, in order (one loop: a text's words are many)."""
    cache = _cache(language)
    return [cache.get(w) or stem(w, language) for w in found]


def _cache(language: str) -> dict[str, str]:
    cache = _STEMS.get(language)
    if cache is None or len(cache) >= CACHED:
        cache = _STEMS[language] = {}
    return cache


def _stemmer(language: str) -> _Stemmer:
    if language not in _STEMMERS:
        _STEMMERS[language] = snowballstemmer.stemmer(language)
    return _STEMMERS[language]


def content(words: Iterable[str], language: str) -> list[str]:
    """The words that carry content: no stopword of the language, no single character."""
    listed = stopwords(language)
    return [w for w in words if w not in listed and len(w) > 1]  # stopwords first: they are most of a text


def prefixes(stemmed: str) -> tuple[str, ...]:
    """What every word with this stem begins with: the stem itself (Snowball only cuts, on
    folded words), or for a stem ending in `i` the stem with a `y` (English's `polici` is
    `policy` too)."""
    if stemmed.endswith("i") and len(stemmed) > 3:
        return stemmed, stemmed[:-1] + "y"
    return (stemmed,)


def starts(stemmed: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """What words with these stems begin with (`prefixes`), by their first `HEAD` letters: a
    word that begins with none of them has none of these stems (`stems_alike`), and need not be
    stemmed (stemming is the costly part of comparing words)."""
    found: dict[str, list[str]] = {}
    for start in {p for s in stemmed for p in prefixes(s)}:
        found.setdefault(start[:HEAD], []).append(start)
    return {head: tuple(group) for head, group in found.items()}


def stems_alike(found: Iterable[str], language: str, beginnings: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """The stems of those words that may have one of the stems whose `starts` are `beginnings`
    (the others have none of them, and are not stemmed)."""
    cache, alike, none = _cache(language), {}, ()
    short = min(map(len, beginnings), default=HEAD) < HEAD  # a stem of two letters (`ai`)
    for word in found:
        group = beginnings.get(word[:HEAD])
        if (group and word.startswith(group)) or (short and word.startswith(beginnings.get(word[:2], none))):
            known = cache.get(word)
            alike[word] = known if known is not None else stem(word, language)
    return alike


def supported(language: str) -> bool:
    """A language the rules may name: `auto`, or one with stopwords and a stemmer here."""
    return language == AUTO or language in LANGUAGES
