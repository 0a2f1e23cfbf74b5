"""A candidate that says otherwise than a note's prose (issue 38). Pure: no I/O.

Most contradictions an agent writes are of a person's prose ("Publish has no size limit" beside
the page saying 50 MB), which no field check reads. A *claim* of the candidate (its title, its
value, a sentence of its body) is *aligned* with a sentence of a note when the two share at least
more than half of the claim's words (stems, as `core.words` compares them); an aligned pair *clashes* when
they state a different amount in the same unit, or when one negates what the other asserts.
Language-light: numbers first, then a short list of negation words per language. docs/judge.md
("Contradictions without a judge") says the rule and its false-positive risk.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_curator.core import words
from memory_curator.core.candidate import Candidate
from memory_curator.core.facts import Facts
from memory_curator.core.notes import parse
from memory_curator.core.ownership import curator_owned
from memory_curator.core.privacy import withheld
from memory_curator.core.rules import Rules
from memory_curator.core.text import parse_time

NEGATIONS = {  # a word that negates what follows it in its clause (English `n't` too)
    "english": frozenset({"no", "not", "never", "none", "nothing", "without", "cannot", "nobody"}),
    "spanish": frozenset({"no", "nunca", "sin", "ningun", "ninguno", "ninguna", "nada", "jamas", "tampoco"}),
}  # not `nor`, `neither`, `ni`: they continue a list ("neither is Obsidian Credit") more than they negate
QUANTIFIERS = frozenset(
    {"always", "only", "every", "siempre", "solo", "unicamente", "todas", "todos"}
)  # a claim's scope
CUES = frozenset().union(*NEGATIONS.values())  # every language's: code and quotes mix them ("NOT NULL")
CHANGE = re.compile(r"\b(?:now|no longer|any ?more|previously|used to|ya|ahora)\b")  # a claim saying it is news
SCOPE = 2  # the content words after a negation word that it negates, at most (within its clause)
NEGATED_WORDS = 3  # words an aligned pair shares, at least, for a negation to count
NUMBER_WORDS = 2  # the same, for an amount: its unit is the rest of the evidence
CLAIM_CHARS = 8192  # of a candidate's body read for claims: the check runs on every candidate
NOTE_CHARS = 128 * 1024  # of a note read for sentences
CLAIM_FIELDS = ("value", "description", "summary")  # fields that state something, beside the headlines
QUOTE = 100  # characters of a quoted sentence

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+#>]|\d+[.)])\s)")
_CLAUSE = re.compile(r"[,;:()\[\]{}|\u2014\u2013\u2192]|\s-\s|\.\s")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d]\w*(?:'t)?")
_AMOUNT = re.compile(r"([$€£])?\s?(?<![\w.,])(\d+(?:[.,]\d+)*)(?:\s?([%$€£])|\s?([^\W\d_]{2,12})\b)?")
_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"<?https?://\S+")
_SLUG = re.compile(r"(?<![\w-])[^\W_]+(?:-[^\W_]+){3,}(?![\w-])")  # four words or more joined by hyphens
_MARKUP = re.compile(r"[*`~=]+|^\s*(?:[-+>]|#+)\s*", re.MULTILINE)
_INSTEAD = re.compile(r"\b(?:instead of|rather than|en lugar de|en vez de)\b")  # negates what follows
_AMOUNT_WORD = re.compile(r"\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:([.,])\d{3})(?:\1\d{3})*")


@dataclass(frozen=True)
class Said:
    """One sentence as the check reads it: its words outside and inside a negation's scope
    (`negated`: the `SCOPE` words after it; `denied`: the rest of its clause too), whether it
    holds a negation word, whether it says it is news (`CHANGE`), and its amounts as (unit, number)."""

    text: str
    asserted: frozenset[str]
    negated: frozenset[str]
    cued: bool
    amounts: frozenset[tuple[str, str]]
    denied: frozenset[str] = frozenset()
    news: bool = False
    quantified: frozenset[str] = frozenset()  # its `QUANTIFIERS`: "always", "only" say more than the bare claim

    @property
    def words(self) -> frozenset[str]:
        """What it is about: its words but amounts (`50`, `0,88`: what is compared, not what
        aligns); an address or a version (`0.0.0.0`, `1.13.0`) names a thing and counts."""
        return frozenset(w for w in self.asserted | self.negated if not _AMOUNT_WORD.fullmatch(w))


@dataclass(frozen=True)
class Conflict:
    """A claim of the candidate and the note's sentence that says otherwise, quoted."""

    path: str
    theirs: str  # the note's sentence (or its amount)
    mine: str  # the candidate's claim (or its amount)
    kind: str = "negation"  # or "amount": what differs
    yours: bool = True  # the note is a person's (`ownership.curator_owned`), not the curator's


@dataclass(frozen=True)
class Text:
    """What the check reads of a note or a candidate: its headlines (what it is about, as its
    title says or a fact's entity, predicate and value together) and its other claims."""

    headlines: tuple[str, ...]
    sentences: tuple[str, ...]
    value: str = ""  # a candidate's `value`: a sentence states a claim only with all of its words


def of_candidate(frontmatter: Mapping[str, Any], body: str) -> Text:
    """A candidate's title or name and a fact's `entity predicate value` (any key case); its
    value, description or summary and the sentences of its body's first `CLAIM_CHARS` characters."""
    fields = {str(k).casefold(): _scalar(v) for k, v in frontmatter.items()}
    fact = " ".join(fields[k].replace("-", " ") for k in ("entity", "predicate") if fields.get(k))
    heads = [fields[k] for k in ("title", "name") if fields.get(k)]
    if fact and fields.get("value"):
        heads.append(f"{fact}: {fields['value']}")
    said = [fields[k] for k in CLAIM_FIELDS if fields.get(k)]
    return Text(tuple(heads), (*said, *sentences(body[:CLAIM_CHARS])), fields.get("value", ""))


def of_note(frontmatter: Mapping[str, Any], body: str) -> Text:
    """A note's title, and its description and body's first `NOTE_CHARS` characters."""
    heads = [_scalar(frontmatter.get("title"))]
    said = [_scalar(frontmatter.get("description"))]
    return Text(tuple(h for h in heads if h), (*(d for d in said if d), *sentences(body[:NOTE_CHARS])))


def _scalar(value: Any) -> str:
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def sentences(text: str) -> list[str]:
    """Sentences, blank-line paragraphs, list items and headings, one line each; no question
    (an FAQ's "Can I verify that my data is encrypted?" asserts nothing)."""
    out = (" ".join(s.split()) for s in _SENTENCE.split(text))
    return [s for s in out if s and not s.endswith("?")]


KEPT = 4096  # sentences read kept per process: a note is the neighbour of many candidates, sweep after sweep
KEPT_UNDER = 1024  # characters: a kept sentence is short (4096 of them hold a few MB), a longer one read anew


def read(text: str, language: str) -> Said:
    """The sentence's words (stemmed, no stopword) by clause: a negation word negates the next
    `SCOPE` content words of its clause; numbers are words too (`0.0.0.0`, `50`)."""
    return _kept(text, language) if len(text) < KEPT_UNDER else _read(text, language)


@functools.lru_cache(maxsize=KEPT)
def _kept(text: str, language: str) -> Said:
    """`_read`, once per sentence: a sweep read each neighbour's sentences again for every
    candidate it was near (a tenth of a sweep's CPU on the real vaults; docs/testing.md)."""
    return _read(text, language)


def _read(text: str, language: str) -> Said:
    plain = _plain(text)
    folded = _INSTEAD.sub(" no ", words.fold(plain).replace("\u2019", "'"))
    cues, stop = CUES, words.stopwords(language)
    asserted: set[str] = set()
    negated: set[str] = set()
    denied: set[str] = set()
    cued = False
    quantified: set[str] = set()
    for clause in _CLAUSE.split(folded):
        left, denying = 0, False
        for token in _tokens(clause):
            if token in QUANTIFIERS:
                quantified.add(token)
            if token in cues or token.endswith("n't"):
                cued, left, denying = True, SCOPE, True
                continue
            if not token[0].isdigit() and (token in stop or len(token) < 2):
                continue
            word = _number(token) if token[0].isdigit() else words.stem(token, language)
            (negated if left else asserted).add(word)
            if denying:
                denied.add(word)
            left = max(0, left - 1)
    amounts = frozenset(_amounts(folded, stop, language))
    news = CHANGE.search(folded) is not None
    return Said(
        plain, frozenset(asserted), frozenset(negated), cued, amounts, frozenset(denied), news, frozenset(quantified)
    )


def _tokens(clause: str) -> Iterator[str]:
    """The clause's tokens; an identifier with a negation word among its parts (`is_not_present`)
    as its parts, any other (`user_id`) whole."""
    for token in _TOKEN.findall(clause):
        parts = token.split("_")
        yield from parts if len(parts) > 1 and CUES.intersection(parts) else (token,)


def _plain(text: str) -> str:
    """The text as read: a link by its shown text, no URL, no file name (`a-slug-of-words`: it
    names a note, it claims nothing), no emphasis or code marks."""
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _SLUG.sub(" ", _URL.sub(" ", _MDLINK.sub(r"\1", text)))
    return " ".join(_MARKUP.sub(" ", text).split())


def _number(token: str) -> str:
    """A number compared by value: `10.000` is 10000 (thousands), `0,88` is 0.88; else as written."""
    if _THOUSANDS.fullmatch(token):
        return re.sub(r"[.,]", "", token)
    if token.count(",") + token.count(".") == 1:
        return str(float(token.replace(",", "."))).removesuffix(".0")
    return token


def _amounts(folded: str, stop: frozenset[str], language: str) -> Iterator[tuple[str, str]]:
    """The amounts with a unit: a currency or `%`, else the word after the number (stemmed, not
    a stopword): `50mb` and `50 MB` are (mb, 50); a bare number (a year, a count) is none."""
    for found in _AMOUNT.finditer(folded):
        prefix, number, sign, word = found.groups()
        unit = prefix or sign or (words.stem(word, language) if word and word not in stop else None)
        if unit:
            yield unit, _number(number)


def conflict(mine: Text, notes: Iterable[tuple[str, Text]], language: str, mine_text: str) -> Conflict | None:
    """The first note (path, text) that the candidate clashes with, or None: a headline of its
    against the note's title (`_by_headline`), else a claim against the note's sentences
    (`_by_amount`, `_by_negation`). A claim one of the notes states (`_holds`) is the vault's
    own: what another note says otherwise is the vault's disagreement, not the candidate's. A
    note stating most of the claims is the one the candidate restates: not read for a clash.
    `mine_text`: the candidate's whole text; a number of the note's it also states makes it an
    update ("from 50 MB to 100 MB"), not a contradiction."""
    heads = _claims(mine.headlines, language)
    claimed = heads + _claims(mine.sentences, language)[:CLAIMS]
    value = read(mine.value, language).words
    read_notes, near = [], {}
    for j, (path, text) in enumerate(notes):  # one note's sentences held at a time: what it shares is kept
        note = _Note.of(path, text, language)
        near.update({(i, j): note.near(claim) for i, claim in enumerate(claimed)})
        read_notes.append(note.light())
    stated = {(i, j) for (i, j), found in near.items() if any(_holds(claimed[i], s, n, value) for s, n in found)}
    said = [i for i in range(len(claimed)) if not any((i, j) in stated for j in range(len(read_notes)))]
    if not said:
        return None
    mine_numbers = {_number(t) for t in _TOKEN.findall(words.fold(mine_text)) if t[0].isdigit()}
    for j, note in enumerate(read_notes):
        if 2 * sum((i, j) in stated for i in range(len(claimed))) > len(claimed):
            continue  # the note it restates: one claim worded otherwise is a wording, not a contradiction
        found = _by_headline([claimed[i] for i in said if i < len(heads)], note.titles, note.negated)
        if found is not None:
            return Conflict(note.path, *found)
        for i in said:
            amount = _by_amount(claimed[i], near[i, j], note.amounts, mine_numbers)
            if amount is not None:
                return Conflict(note.path, *amount, kind="amount")
            negation = _by_negation(claimed[i], near[i, j], note.negated)
            if negation is not None:
                return Conflict(note.path, *negation)
    return None


CLAIMS = 64  # a candidate's sentences read at most, beside its headlines: the check runs on every candidate
HELD = 0.8  # a sentence holding this share of a claim's words, not otherwise, states it (`restated.FOUND`)
Near = list[tuple[Said, int]]  # a note's sentences sharing words with a claim, with how many


@dataclass(frozen=True)
class _Note:
    """A note read: its titles, its sentences (titles first) and which sentences hold each word."""

    path: str
    titles: list[Said]
    sentences: list[Said]
    index: dict[str, list[int]]
    amounts: frozenset[tuple[str, str]]
    negated: frozenset[str]  # the words it negates somewhere ("No se retira a ciegas" under another title)

    @classmethod
    def of(cls, path: str, text: Text, language: str) -> _Note:
        titles = [read(head, language) for head in text.headlines]
        sentences = titles + [read(sentence, language) for sentence in text.sentences]
        index: dict[str, list[int]] = {}
        for number, sentence in enumerate(sentences):
            for word in sentence.words:
                index.setdefault(word, []).append(number)
        amounts = frozenset(a for sentence in sentences for a in sentence.amounts)
        negated = frozenset(w for sentence in sentences for w in sentence.negated)
        return cls(path, titles, sentences, index, amounts, negated)

    def light(self) -> _Note:
        """The note without its sentences and their index, once its claims' neighbours are found:
        a sweep's peak holds one note of 128 KiB read as sentences, not all of them."""
        return replace(self, sentences=[], index={})

    def near(self, claim: Said) -> Near:
        """The sentences sharing at least `NUMBER_WORDS` of the claim's words (by the index: the
        cost is the postings of the claim's words, not the note's length times the claims)."""
        counts: dict[int, int] = {}
        for word in claim.words:
            for number in self.index.get(word, ()):
                counts[number] = counts.get(number, 0) + 1
        return [(self.sentences[n], shared) for n, shared in sorted(counts.items()) if shared >= NUMBER_WORDS]


def _holds(claim: Said, sentence: Said, shared: int, value: frozenset[str]) -> bool:
    """The sentence (sharing `shared` words) states the claim: most of its words, no negation
    flipped, its amounts, its "always" or "only" (the note saying it listens on 0.0.0.0 by
    default does not say always), and the words of the candidate's `value` it holds ("…
    Conversation Flow in Rigid Mode" does not state the flow mode `Flex Mode`)."""
    if shared < HELD * len(claim.words) or not claim.amounts <= sentence.amounts:
        return False
    if not (claim.quantified <= sentence.quantified and claim.words & value <= sentence.words):
        return False
    return not _flipped(claim, sentence)


def _claims(texts: Iterable[str], language: str) -> list[Said]:
    """The texts read, but those saying too little to align and those saying they are news."""
    return [c for c in (read(text, language) for text in texts) if len(c.words) >= NUMBER_WORDS and not c.news]


def _by_headline(heads: list[Said], titles: list[Said], kept: frozenset[str]) -> tuple[str, str] | None:
    """A headline of the candidate's and the note's title, aligned (`NEGATED_WORDS` words shared,
    more than half of the shorter's) and one negating what the other asserts: a title states a
    note's conclusion, whatever its body weighs (an ADR lists the option it turned down)."""
    for head in heads:
        for title in titles:
            shared = len(head.words & title.words)
            if (
                shared >= NEGATED_WORDS
                and 2 * shared > min(len(head.words), len(title.words))
                and _flipped(head, title, kept)
            ):
                return _quote(title.text), _quote(head.text)
    return None


def _by_amount(claim: Said, near: Near, held: frozenset[tuple[str, str]], mine: set[str]) -> tuple[str, str] | None:
    """Per unit of the claim's amounts: the note's best-aligned sentences with an amount in that
    unit all state other numbers, the note holds none of the claim's in that unit, and the
    candidate none of theirs."""
    for unit in sorted({u for u, _ in claim.amounts}):
        values = {v for u, v in claim.amounts if u == unit}
        if any((unit, v) in held for v in values):
            continue
        best = _best(claim, [(s, n) for s, n in near if any(u == unit for u, _ in s.amounts)], NUMBER_WORDS)
        other = {v for s in best for u, v in s.amounts if u == unit}
        if best and not other & mine:
            return _quote(best[0].text), _quote(claim.text)
    return None


def _by_negation(claim: Said, near: Near, kept: frozenset[str]) -> tuple[str, str] | None:
    """The note's best-aligned sentences all negate what the claim asserts, or assert what it
    negates (`_flipped`)."""
    best = _best(claim, near, NEGATED_WORDS)
    if best and all(_flipped(claim, s, kept) for s in best):
        return _quote(best[0].text), _quote(claim.text)
    return None


def _best(claim: Said, near: Near, least: int) -> list[Said]:
    """The aligned sentences (at least `least` words shared, more than half of the claim's)
    sharing most; on a tie, those saying least besides (the share of their own words the claim
    holds): the most specific match."""
    scored = [((n, n / len(s.words)), s) for s, n in near if n >= least and 2 * n > len(claim.words)]
    top = max((score for score, _ in scored), default=None)
    return [s for score, s in scored if score == top]


def _flipped(a: Said, b: Said, kept: frozenset[str] = frozenset()) -> bool:
    """One negates a word the other asserts. When both hold a negation word, they must cross
    ("se anula, no se elimina" / "se elimina, no se anula") and deny no word alike ("don't
    separate words with spaces" / "don't use spaces to separate words" say one thing). `kept`:
    the words `b`'s note negates itself somewhere; `a` negating one of them says what it says."""
    a_not = (a.negated - a.asserted - kept) & (b.asserted - b.negated)
    b_not = (b.negated - b.asserted) & (a.asserted - a.negated)
    if a.cued and b.cued:
        return bool(a_not and b_not) and not a.denied & b.denied
    return bool(a_not or b_not)


def _quote(text: str) -> str:
    return text if len(text) <= QUOTE else text[: QUOTE - 1].rstrip() + "…"


NOTE_TIMES = ("observed_at", "captured_at", "updated_at", "modified", "date", "created")  # the note's, first found


def newer(candidate: Mapping[str, Any], note: Mapping[str, Any]) -> bool:
    """The candidate has an observation time (`observed_at`, else `captured_at`, any key case)
    later than the note's observed or modified time: an update of it, not a contradiction."""
    mine = _time({str(k).casefold(): v for k, v in candidate.items()}, ("observed_at", "captured_at"))
    theirs = _time(note, NOTE_TIMES)
    return mine is not None and theirs is not None and mine > theirs


def _time(fields: Mapping[str, Any], keys: Sequence[str]) -> dt.datetime | None:
    for key in keys:
        moment = parse_time(fields.get(key))
        if moment is not None:
            return moment
    return None


def in_notes(candidate: Candidate, facts: Facts, rules: Rules) -> Conflict | None:
    """What a candidate contradicts among the notes its decision found: the notes about its
    subject, then its neighbours scored at least half the near-duplicate score (under it, a note
    shares words, not a subject) and its semantic neighbours. Never a private note (it is never
    quoted), nor a note its observation time is newer than (an update: `newer`)."""
    settings = rules.settings
    floor = settings.near_duplicate_score / 2
    found = {n.path: n.note for n in facts.subjects}
    for near in (*facts.neighbours, *facts.close):
        if near.score >= floor and near.text and near.path not in found:
            found[near.path] = parse(near.text)
    notes = [
        (path, of_note(note.frontmatter, note.body))
        for path, note in found.items()
        if path not in facts.private
        and not withheld(note, settings.privacy_tags)
        and not newer(candidate.frontmatter, note.frontmatter)
    ]
    if not notes:
        return None
    mine = of_candidate(candidate.frontmatter, candidate.note.body)
    language = words.language_of(" ".join([*mine.headlines, *mine.sentences]), settings.language)
    found_one = conflict(mine, notes, language, candidate.note.text[: CLAIM_CHARS * 2])
    if found_one is None:
        return None
    return replace(found_one, yours=not curator_owned(found_one.path, found[found_one.path].frontmatter, rules))
