"""Score the curator on the labeled novelty set (see README.md beside this file).

    python tests/novelty/score.py [--cli "memory-curator"] [--out scores.json]
                                  [--sets main,template,one_page,retitled]
                                  [--semantic MODEL_DIR [--threshold 0.8]] [--set-dir tests/novelty_es]
                                  [--judge]

Each set runs on a fresh copy of the real vault (plus `owned/`, the curator-owned notes) through
`<cli> init` and `<cli> run --no-judge --settle 0 --json`, with a temporary state directory.
`--semantic` turns semantic pairing on in each copy's rules (`semantic: {model: MODEL_DIR}`).
`--judge` sweeps without `--no-judge`: give it a `--cli` that answers the judge, such as
`tests/judge_replay/replay_cli.py` (requests answered from files, see its README).
`--set-dir` scores another labeled set laid out like this folder (`labels.yaml`, `candidates/`, `owned/`);
its `set.yaml`, when present, names the real vault it is written against (`vault:`, a folder of
../shared/real-vaults/) and the base of the retitled set's source URLs (`source_base:`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

HERE = Path(__file__).resolve().parent
REAL_VAULTS = HERE.parents[2] / "shared" / "real-vaults"
REAL_VAULT = REAL_VAULTS / "obsidian-help-en"
DUPLICATES = ("exact_duplicate", "paraphrased_duplicate", "same_source_reworded")
CONFLICTS = ("contradiction", "conflict_other_field")
# Without a judge these wait for a person by design (similarity never decides alone; a note with no surface is
# never dropped): the judge-less floor adds them to `review_only` unless a label says `waits:` itself.
JUDGE_OR_PERSON = ("paraphrased_duplicate", "noise")
SET: dict[str, Any] = {"dir": HERE, "source_base": "https://help.obsidian.md/"}  # `--set-dir` and its set.yaml
COPIES = 300
# The one-page set: 50 facts an agent took from one plugin directory page (one `source_url`): 10 plugins x 5
# predicates, values shared across plugins (a license, an author, a minimum app version), never two of one plugin.
PLUGINS = ("quill-timeline", "ember-tasks", "lumen-graph", "paper-kanban", "sprout-habits",
           "tidal-calendar", "cobalt-citations", "marble-outliner", "fable-flashcards", "harbor-sync")  # fmt: skip
LICENSES = ("MIT", "MIT", "GPL-3.0", "MIT", "Apache-2.0", "MIT", "GPL-3.0", "MIT", "MIT", "BSD-3-Clause")
AUTHORS = ("Mara Quint", "Tobias Reyne", "Mara Quint", "Ines Kolar", "Tobias Reyne")
APP_VERSIONS = ("1.4.0", "1.5.0", "1.4.0", "1.6.3", "1.5.0")
ONE_PAGE = "plugins.acme-notes.dev/directory?sort=downloads"


def abouts(label: dict[str, Any]) -> list[str]:
    """The acceptable `about` notes of a label (a path, a list of paths, or null)."""
    about = label.get("about")
    return [about] if isinstance(about, str) else list(about or [])


def digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def body_of(text: str) -> str:
    if text.startswith("---\n") and "\n---\n" in text[3:]:
        return text[text.index("\n---\n", 3) + 5 :]
    return text


SEMANTIC: dict[str, Any] = {}  # `--semantic`: the `semantic:` setting written into every copy's rules
JUDGE: dict[str, bool] = {"on": False}  # `--judge`: swept without `--no-judge` (a replayed judge: ../judge_replay)


class Run:
    """One vault copy under `work`: init, owned notes, candidates, one sweep."""

    def __init__(self, cli: list[str], source: Path, work: Path) -> None:
        self.cli, self.work, self.vault, self.state = cli, work, work / "vault", work / "state"
        shutil.copytree(source, self.vault, symlinks=True)
        self.original = digests(self.vault)
        self.call("init", "--vault", str(self.vault))
        shutil.copytree(SET["dir"] / "owned", self.vault, dirs_exist_ok=True)
        if SEMANTIC:
            self.set_semantic(SEMANTIC)

    def set_semantic(self, setting: dict[str, Any]) -> None:
        """Turn semantic pairing on in this copy's rules (the file `init` wrote)."""
        rules = self.vault / "_meta" / "inbox-rules.md"
        text = rules.read_text(encoding="utf-8")
        assert "\nsettings:\n" in text, "no settings: section in the rules"
        line = f"  semantic: {json.dumps(setting)}\n"
        rules.write_text(text.replace("\nsettings:\n", "\nsettings:\n" + line, 1), encoding="utf-8")

    def call(self, *args: str) -> str:
        done = subprocess.run(
            [*self.cli, *args], capture_output=True, text=True, timeout=900, check=False, cwd=self.work
        )  # not the checkout: `python -m` would import the code beside it
        if done.returncode != 0:
            raise RuntimeError(f"{shlex.join([*self.cli, *args])} exited {done.returncode}: {done.stderr[-2000:]}")
        return done.stdout

    def add(self, rel: str, text: str) -> None:
        path = self.vault / "_inbox" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def sweep(self) -> dict[str, dict[str, Any]]:
        out = json.loads(
            self.call(
                "run",
                "--vault",
                str(self.vault),
                *([] if JUDGE["on"] else ["--no-judge"]),
                "--settle",
                "0",
                "--json",
                "--state-dir",
                str(self.state),
            )
        )
        agents = out.get("agents", [out])
        return {a["inbox_path"]: a for agent in agents for a in agent.get("actions", [])}

    def review_text(self, action: dict[str, Any]) -> str:
        """The JSON reason plus the candidate's uncertainty lines, as a person would read them."""
        path = self.vault / action["inbox_path"]
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
        return "\n".join([str(action.get("reason", "")), *(ln for ln in lines if "curator uncertainty" in ln)])

    def on_disk(self, action: dict[str, Any]) -> bool:
        """Whether the candidate's fate on disk matches its verdict."""
        inbox = (self.vault / str(action["inbox_path"])).is_file()
        verdict = str(action["verdict"])
        if verdict in ("promote", "patch"):
            return not inbox and (self.vault / str(action.get("target_path"))).is_file()
        if verdict == "drop":
            return not inbox and (self.vault / str(action.get("moved_to"))).is_file()
        return inbox


def link_name(rel: str) -> str:
    """A note's file name as Obsidian resolves a `[[link]]` to it: case-insensitive, NFC."""
    return unicodedata.normalize("NFC", rel.rsplit("/", 1)[-1].removesuffix(".md")).casefold()


def namesakes(target: str | None, person: Iterable[str], owned: Iterable[str]) -> list[str]:
    """The vault notes a promote at `target` shares its link name with (an ambiguous `[[link]]`): any of the
    person's notes, and a curator-owned note of another top folder. Two notes of one surface share names by its
    path template (`facts/*/license.md`: their key is the folder too), so those are not counted."""
    if not target:
        return []
    top = target.split("/", 1)[0]
    found = [p for p in person if link_name(p) == link_name(target)]
    return found + [p for p in owned if link_name(p) == link_name(target) and p.split("/", 1)[0] != top]


def names(text: str, notes: Iterable[str]) -> bool:
    return any(n in text or n.removesuffix(".md") in text for n in notes)


def waits(label: dict[str, Any]) -> bool:
    """Whether, without a judge and under the design, the item can only wait (the judge-less floor)."""
    if "waits" in label:
        return bool(label["waits"])
    return bool(label.get("review_only")) or label["class"] in JUDGE_OR_PERSON


def score_main(cli: list[str], source: Path, work: Path) -> dict[str, Any]:
    labels: dict[str, dict[str, Any]] = yaml.safe_load((SET["dir"] / "labels.yaml").read_text(encoding="utf-8"))
    run = Run(cli, source, work)
    for rel in labels:
        run.add(rel, (SET["dir"] / "candidates" / rel).read_text(encoding="utf-8"))
    person = [p for p in run.original if p.endswith(".md")]
    owned = [p.relative_to(SET["dir"] / "owned").as_posix() for p in (SET["dir"] / "owned").rglob("*.md")]
    actions = run.sweep()
    after = digests(run.vault)
    changed = sorted(p for p, h in run.original.items() if after.get(p) != h)
    items: list[dict[str, Any]] = []
    classes: dict[str, dict[str, int]] = {}
    for rel, label in labels.items():
        action = actions.get(f"_inbox/{rel}", {"verdict": "missing", "inbox_path": f"_inbox/{rel}"})
        verdict, about = action["verdict"], abouts(label)
        item = {
            "file": rel,
            "class": label["class"],
            "careless": label["careless"],
            "verdict": verdict,
            "acceptable": verdict in label["accept"],
            "target": action.get("target_path"),
            "reason": action.get("reason"),
            "on_disk": verdict != "missing" and run.on_disk(action),
        }
        item["wrong_drop"] = verdict == "drop" and "drop" not in label["accept"]
        item["duplicate_promoted"] = label["class"] in DUPLICATES and verdict == "promote"
        item["second_note"] = bool(about) and verdict == "promote"
        item["contradiction_merged"] = label["class"] in CONFLICTS and verdict == "patch"
        item["named_like"] = namesakes(action.get("target_path"), person, owned) if verdict == "promote" else []
        item["code"] = action.get("reason_code")
        # a patch into a note about another subject: neither the labeled target nor a note it is about
        allowed = {label.get("patch_target"), *about}
        item["wrong_patch"] = verdict == "patch" and action.get("target_path") not in allowed
        if verdict == "needs_review" and about:
            item["names_about"] = names(run.review_text(action), about)
        items.append(item)
        c = classes.setdefault(label["class"], {"n": 0, "acceptable": 0})
        c["n"] += 1
        c["acceptable"] += item["acceptable"]
    n = len(items)
    named = [i["names_about"] for i in items if "names_about" in i]
    review = sum(i["verdict"] == "needs_review" for i in items) / n
    floor = sum(bool(lb.get("review_only")) for lb in labels.values()) / n
    judge_less = sum(waits(lb) for lb in labels.values()) / n
    careless = [i for i in items if i["careless"]]
    contradictions = [i for i in items if i["class"] == "contradiction"]
    return {
        "n": n,
        "acceptable": sum(i["acceptable"] for i in items) / n,
        "acceptable_careless": sum(i["acceptable"] for i in careless) / max(1, len(careless)),
        "per_class": {k: {**v, "fraction": v["acceptable"] / v["n"]} for k, v in sorted(classes.items())},
        "verdicts": {v: sum(i["verdict"] == v for i in items) for v in sorted({i["verdict"] for i in items})},
        "wrong_drops": sum(i["wrong_drop"] for i in items),
        "duplicates_promoted": sum(i["duplicate_promoted"] for i in items),
        "second_notes": sum(i["second_note"] for i in items),
        "wrong_patches": sum(i["wrong_patch"] for i in items),
        "contradictions_merged": sum(i["contradiction_merged"] for i in items),
        "named_like_vault_note": sum(bool(i["named_like"]) for i in items),
        "contradictions_named": sum(i["code"] == "contradiction" for i in contradictions),
        "contradictions_n": len(contradictions),
        "person_notes_identical": not changed,
        "person_notes_changed": changed,
        "review_fraction": review,
        "review_floor": floor,
        "review_ratio": review / floor if floor else None,
        "review_floor_judge_less": judge_less,
        "review_ratio_judge_less": review / judge_less if judge_less else None,
        "review_named": sum(named) / len(named) if named else None,
        "review_named_n": len(named),
        "fate_mismatches": [i["file"] for i in items if not i["on_disk"]],
        "items": items,
    }


def score_template(cli: list[str], source: Path, work: Path) -> dict[str, Any]:
    run = Run(cli, source, work)
    for n in range(1, COPIES + 1):
        run.add(
            f"catalog-agent/widget-{n}.md",
            f"---\ntype: fact\nentity: widget-{n}\npredicate: size\nvalue: {n * 3 + 7} mm\n"
            f"source_url: https://parts.acme-industrial.com/catalog/widget-{n}\nconfidence: 2\n---\n"
            f"Catalog entry for widget {n}.\n",
        )
    verdicts = [a["verdict"] for a in run.sweep().values()]
    return {
        "n": COPIES,
        "promoted": verdicts.count("promote"),
        "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
    }


def one_page_facts() -> list[tuple[str, str]]:
    """(inbox path, text) of the one-page set's 50 facts, each worded as an agent words it."""
    facts = []
    for i, plugin in enumerate(PLUGINS):
        name = plugin.replace("-", " ").title()
        values = {
            "license": (LICENSES[i], f"{name} is released under the {LICENSES[i]} license."),
            "latest-version": (f"2.{i}.{i + 1}", f"The directory lists {name} at version 2.{i}.{i + 1}."),
            "min-app-version": (APP_VERSIONS[i % 5], f"{name} needs Obsidian {APP_VERSIONS[i % 5]} or newer."),
            "author": (AUTHORS[i % 5], f"{name} is written and maintained by {AUTHORS[i % 5]}."),
            "downloads": (f"{(i + 3) * 4127:,}", f"{name} shows {(i + 3) * 4127:,} downloads on the directory page."),
        }
        for predicate, (value, body) in values.items():
            facts.append(
                (
                    f"catalog-agent/{plugin}-{predicate}.md",
                    f'---\ntype: fact\nentity: {plugin}\npredicate: {predicate}\nvalue: "{value}"\n'
                    f"source_url: https://{ONE_PAGE}\nconfidence: 2\n---\n{body}\n",
                )
            )
    return facts


def score_one_page(cli: list[str], source: Path, work: Path) -> dict[str, Any]:
    """50 distinct facts from one page (one `source_url`, some sharing a value, different keys): all promotable."""
    run = Run(cli, source, work)
    for rel, text in one_page_facts():
        run.add(rel, text)
    actions = run.sweep()
    verdicts = [a["verdict"] for a in actions.values()]
    return {
        "n": len(verdicts),
        "promoted": verdicts.count("promote"),
        "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
        "not_promoted": {p: a.get("reason") for p, a in sorted(actions.items()) if a["verdict"] != "promote"},
    }


def score_retitled(cli: list[str], source: Path, work: Path) -> dict[str, Any]:
    """300 verbatim bodies of vault notes, each under a new title as a sourced research note (promotable were it
    new): none may be promoted or patched."""
    notes = [
        p
        for p in sorted(source.rglob("*.md"))
        if ".obsidian" not in p.parts and len(body_of(p.read_text(encoding="utf-8")).strip()) >= 80
    ]
    run = Run(cli, source, work)
    origin = {}
    for i in range(COPIES):
        note = notes[i % len(notes)]
        origin[f"_inbox/clipper/saved-page-{i:03d}.md"] = note.relative_to(source).as_posix()
        run.add(
            f"clipper/saved-page-{i:03d}.md",
            f"---\ntype: research\ntopic: saved-pages\ntitle: Saved page {i:03d}\n"
            f"source_url: {SET['source_base']}{quote(note.stem)}\nconfidence: 2\n---\n"
            + body_of(note.read_text(encoding="utf-8")),
        )
    actions = run.sweep()
    verdicts = [actions[p]["verdict"] if p in actions else "missing" for p in origin]
    reviewed = [p for p in origin if actions.get(p, {}).get("verdict") == "needs_review"]
    return {
        "n": COPIES,
        "caught": sum(v in ("drop", "needs_review") for v in verdicts),
        "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
        "review_named": sum(names(run.review_text(actions[p]), [origin[p]]) for p in reviewed),
    }


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def table(result: dict[str, Any]) -> str:
    rows = [("set", "figure", "value")]
    m = result.get("main")
    if m:
        rows += [
            ("main", "candidates", str(m["n"])),
            ("main", "acceptable verdicts", pct(m["acceptable"])),
            ("main", "acceptable (careless only)", pct(m["acceptable_careless"])),
            *(("main", f"acceptable: {k}", f"{v['acceptable']}/{v['n']}") for k, v in m["per_class"].items()),
            ("main", "verdicts", ", ".join(f"{k} {v}" for k, v in m["verdicts"].items())),
            ("main", "wrong drops", str(m["wrong_drops"])),
            ("main", "duplicates promoted", str(m["duplicates_promoted"])),
            ("main", "second notes for a subject", str(m["second_notes"])),
            ("main", "patches into another note", str(m["wrong_patches"])),
            ("main", "contradictions merged (patched)", str(m["contradictions_merged"])),
            ("main", "notes named like a vault note", str(m["named_like_vault_note"])),
            (
                "main",
                "contradictions named as such",
                f"{m['contradictions_named']}/{m['contradictions_n']}",
            ),
            ("main", "person's notes byte-identical", "yes" if m["person_notes_identical"] else "NO"),
            (
                "main",
                "review fraction / floor",
                f"{pct(m['review_fraction'])} / {pct(m['review_floor'])} (x{m['review_ratio']:.2f})",
            ),
            (
                "main",
                "review fraction / judge-less floor",
                f"{pct(m['review_fraction'])} / {pct(m['review_floor_judge_less'])}"
                f" (x{m['review_ratio_judge_less']:.2f})",
            ),
            ("main", "needs_review naming the right note", f"{pct(m['review_named'])} of {m['review_named_n']}"),
            ("main", "fate on disk differs from verdict", str(len(m["fate_mismatches"]))),
        ]
    if "template" in result:
        t = result["template"]
        rows.append(("template", "widget-N facts promoted", f"{t['promoted']}/{t['n']}"))
    if "one_page" in result:
        o = result["one_page"]
        rows.append(("one_page", "distinct facts from one page promoted", f"{o['promoted']}/{o['n']}"))
    if "retitled" in result:
        r = result["retitled"]
        rows.append(("retitled", "retitled copies caught (not promoted)", f"{r['caught']}/{r['n']}"))
        rows.append(("retitled", "verdicts", ", ".join(f"{k} {v}" for k, v in r["verdicts"].items())))
        rows.append(("retitled", "needs_review naming the copied note", str(r["review_named"])))
    lines = [f"| {' | '.join(r)} |" for r in rows]
    lines.insert(1, "|---|---|---|")
    semantic = f", semantic: {result['semantic']}" if result.get("semantic") else ""
    return "\n".join(lines) + f"\n\n{result['seconds']:.1f} s, cli: `{result['cli']}`{semantic}\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="memory-curator", help="the command that runs the curator")
    parser.add_argument("--out", type=Path, help="write the scores as JSON here")
    parser.add_argument("--vault-src", type=Path, help="the real vault to copy (default: the set's, see --set-dir)")
    parser.add_argument("--set-dir", type=Path, default=HERE, help="the labeled set to score (default: this folder)")
    parser.add_argument(
        "--sets", default="main,template,one_page,retitled", help="comma-separated: main,template,one_page,retitled"
    )
    parser.add_argument("--semantic", type=Path, metavar="MODEL_DIR", help="turn semantic pairing on with this model")
    parser.add_argument("--threshold", type=float, help="with --semantic: its threshold (default: the rules')")
    parser.add_argument("--judge", action="store_true", help="sweep with the judge on (a --cli that answers it)")
    parser.add_argument("--work", type=Path, help="where the vault copies go (default: the system's temp folder)")
    args = parser.parse_args(argv)
    JUDGE["on"] = args.judge
    settings = args.set_dir / "set.yaml"
    setting = yaml.safe_load(settings.read_text(encoding="utf-8")) if settings.is_file() else {}
    SET.update(dir=args.set_dir.resolve(), source_base=setting.get("source_base", "https://help.obsidian.md/"))
    vault_src = args.vault_src or (REAL_VAULTS / setting["vault"] if "vault" in setting else REAL_VAULT)
    SEMANTIC.clear()
    if args.semantic:
        SEMANTIC["model"] = str(args.semantic.resolve())
        if args.threshold is not None:
            SEMANTIC["threshold"] = args.threshold
    cli, start = shlex.split(args.cli), time.monotonic()
    scorers = {"main": score_main, "template": score_template, "one_page": score_one_page, "retitled": score_retitled}
    result: dict[str, Any] = {"cli": args.cli, "semantic": dict(SEMANTIC) or None, "judge": args.judge}
    if args.set_dir.resolve() != HERE:
        result.update(set_dir=str(args.set_dir), vault=vault_src.name)
    with tempfile.TemporaryDirectory(prefix="novelty-", dir=args.work) as tmp:
        for name in args.sets.split(","):
            work = Path(tmp) / name
            work.mkdir()
            result[name] = scorers[name](cli, vault_src, work)
    return report(result, start, args.out, table)


def report(
    result: dict[str, Any], start: float, out: Path | None, as_table: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """The end of a scorer's run (this one, queries.py): its time, the JSON file, the table."""
    result["seconds"] = time.monotonic() - start
    if out:
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(as_table(result))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
