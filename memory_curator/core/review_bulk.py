"""The review note's bulk lines (issue 37), as `review`'s `a` (pure): one section per group of
two or more waiting items (the same agent and reason code, and for a reason about one note the
same note), whose box ticks each item of the group the note was written with.

A bulk section holds no item of its own: it names its members (their sections' ids, which bind
each item's path and hash), and a tick on it is read as that tick on each member's own section
(`spread`). So it is applied exactly as ticking each would be: an item changed since (another
id) or decided meanwhile is told, not applied; an item that joined the group later is not in it;
a bulk drop and another box of one item are two actions for that item. A verb is offered only
when every member offers it (a promote each to its own target, as `a` does; privacy and
credential items never offer one in the note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from memory_curator.core.review_note import BEGIN, DROP, END, LEAVE, Item, Offer, Section, Tick, item_id
from memory_curator.core.review_quote import code, inert

BULK_VERBS = ("promote", DROP, LEAVE)  # what a bulk line may do, in the order shown
HEADING = "## Whole groups"
Group = tuple[str, str, str | None]  # (agent, reason code, the note it is about)


def groups(items: Sequence[Item]) -> list[tuple[Group, list[Item]]]:
    """The groups of two or more items, by agent, code and note, in that order."""
    found: dict[Group, list[Item]] = {}
    for item in items:
        found.setdefault((item.agent, item.code, item.about), []).append(item)
    return [(key, found[key]) for key in sorted(found, key=lambda k: (k[0], k[1], k[2] or "")) if len(found[key]) > 1]


def sections(items: Sequence[Item]) -> list[Section]:
    """One bulk section per group offering a verb every member offers; the first carries the heading."""
    out: list[Section] = []
    for key, members in groups(items):
        verbs = [v for v in BULK_VERBS if all(any(o.verb == v for o in m.offers) for m in members)]
        if verbs:
            out.append(_section(key, members, verbs, first=not out))
    return out


def _section(key: Group, members: list[Item], verbs: list[str], first: bool) -> Section:
    agent, why, about = key
    ids = tuple(m.id for m in members)
    sid = item_id("bulk", *ids)
    n = len(members)
    where = f" about {code(about)}" if about else ""  # named: a `cannot-write` target may not exist
    lines = [BEGIN.format(id=sid), ""]
    lines += [HEADING, ""] if first else []
    lines.append(f"{n} items from {code(agent)} wait for **{inert(why)}**{where}: one tick here ticks each of them.")
    lines += [f"- [ ] {v} all {n} ^mc-{sid}-{v}" for v in verbs]
    lines += ["", END.format(id=sid), ""]
    return Section(sid, tuple(lines), {v: Offer(v) for v in verbs}, members=ids)


def spread(ticks: Mapping[str, Tick], known: Mapping[str, Section]) -> dict[str, Tick]:
    """`ticks` with each bulk section's tick read as that tick on each of its members' sections
    (added to the member's own boxes); a bulk line set to another status is told on each member,
    and one that cannot be read (mangled) only where the member's own boxes say nothing."""
    out = dict(ticks)
    for sid, tick in ticks.items():
        section = known.get(sid)
        if section is None or not section.members:
            continue
        del out[sid]
        for member in section.members:
            own = out.get(member, Tick(member))
            told = tick.mangled and not own.verbs
            mangled = own.mangled or (f"its group's bulk line: {tick.mangled}" if told else None)
            out[member] = replace(
                own,
                verbs=(*own.verbs, *tick.verbs),
                reason=own.reason or tick.reason,
                mangled=mangled,
                others=(*own.others, *tick.others),
            )
    return out
