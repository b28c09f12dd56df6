"""Duplicate detection on a labelled export: threshold sweep and signal ablation.

    .venv/bin/python -m bench.dupes_devset ISSUES.jsonl GOLD.jsonl SCORE.py [--sources INDEX.sqlite3]

Replays the export chronologically once (each issue searched against the earlier ones only, with the
rules of `rules/` when they load, and the raise-site index when given), keeps every exactly-scored pair, then
re-applies scoring policies to those pairs offline and scores each with the given score.py (so the figures are
the scorer's own).
Reads the labelled files at run time only; nothing of them is stored.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from dataclasses import replace

from bot.dupes.document import build_doc
from bot.dupes.index import DuplicateIndex
from bot.dupes.scoring import DEFAULT_POLICY, Match, Policy, combine
from bot.export import read_export
from bot.report import parse
from bot.sources.locate import locate


def _rules():
    try:
        from bot.rules import load_rules

        return load_rules()
    except Exception as e:  # rules are written concurrently; measure text + signatures without them
        print(f"(rules not loaded: {e})", file=sys.stderr)
        return None


def collect(issues_path: str, sources=None) -> tuple[list, dict[int, list[tuple[Match, int, int | None]]]]:
    issues = [i for i in read_export(issues_path) if hasattr(i, "number")]
    issues.sort(key=lambda i: (i.created_at, i.number))
    rules = _rules()
    index = DuplicateIndex()
    pairs: dict[int, list[tuple[Match, int, int | None]]] = {}
    for issue in issues:
        report = locate(sources, parse(issue.title, issue.body), issue.created_at)
        try:
            findings = rules.evaluate(report) if rules is not None else ()
        except Exception:
            findings = ()
        doc = build_doc(report, findings)
        pairs[issue.number] = [(m, s.number, s.duplicate_of) for m, s in index.candidates(doc, exclude=issue.number)]
        index.add_doc(issue.number, doc, title=issue.title, state=issue.state, created_at=issue.created_at)
    return issues, pairs


def no_error_members(gold: list[dict]) -> set[int]:
    """Members of clusters of requests and questions: every member a feature / usage / installation / docs / other
    report, and none with an exception (gold)."""
    members: dict[str, list[dict]] = {}
    for g in gold:
        if g.get("cluster"):
            members.setdefault(g["cluster"], []).append(g)
    return {g["number"] for ms in members.values()
            if all(g.get("exception") is None and g.get("kind") in NO_ERROR_KINDS for g in ms) for g in ms}


NO_ERROR_KINDS = ("feature", "usage", "installation", "docs", "other")


def predict(pairs: dict[int, list[tuple[Match, int, int | None]]], policy: Policy) -> list[dict]:
    rows = []
    for number, scored in pairs.items():
        ranked = sorted(((combine(m, policy), n, policy.threshold_for(m)) for m, n, _ in scored), reverse=True)
        dups = [{"number": n, "score": s} for s, n, t in ranked if s >= t][:3]
        rows.append({"number": number, "duplicates": dups})
    return rows


def ablate(pairs, strip) -> dict:
    return {n: [(strip(m), k, d) for m, k, d in v] for n, v in pairs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("issues")
    ap.add_argument("gold")
    ap.add_argument("scorer", help="path to score.py")
    ap.add_argument("--misses", action="store_true", help="list false links and missed duplicates")
    ap.add_argument("--sources", metavar="DB", help="a raise-site index (SQLite) to locate each root cause in")
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("devscore", a.scorer)
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    raw = scorer.load_jsonl(a.issues)
    gold = scorer.load_jsonl(a.gold)
    _, pairs = collect(a.issues, _load_sources(a.sources) if a.sources else None)

    quiet = no_error_members(gold)

    def figures(p, policy):
        rows = predict(p, policy)
        d = scorer.score(raw, gold, rows)["dup"]
        q = scorer.score(raw, gold, rows, only=quiet)["dup"]
        return (f"R@3={d['recall@3']} false-link={d['false_link_rate']} link-P={d['link_precision']} "
                f"links={d['links']} | no-error R@3={q['recall@3']} ({q['eligible']})")

    print(f"default policy {DEFAULT_POLICY}")
    print("threshold sweep:")
    for t in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9):
        print(f"  t={t:.2f} {figures(pairs, replace(DEFAULT_POLICY, threshold=t))}")
    print("ablation (default threshold):")
    no_rules = lambda m: replace(m, shared_rules=(), rule_conflict=False)  # noqa: E731
    no_entities = lambda m: replace(m, entities=(), entity_conflict=False)  # noqa: E731
    no_asks = lambda m: replace(m, entities=tuple(e for e in m.entities if not e.key.startswith("ask:")))  # noqa: E731
    variants = {
        "all signals": pairs,
        "no entity keys": ablate(pairs, no_entities),
        "no ask keys": ablate(pairs, no_asks),
        "no diagnoses": ablate(pairs, no_rules),
        "no diagnoses, no entities": ablate(pairs, lambda m: no_entities(no_rules(m))),
        "entities + text": ablate(pairs, lambda m: replace(no_rules(m), signature=None, same_body=False)),
        "text only": ablate(pairs, lambda m: replace(no_entities(no_rules(m)), signature=None, same_body=False)),
        "no signature": ablate(pairs, lambda m: replace(m, signature=None)),
        "no raise site": ablate(pairs, lambda m: replace(m, site=None)),
        "no signature, no site": ablate(pairs, lambda m: replace(m, signature=None, site=None)),
        "no diagnoses, no site": ablate(pairs, lambda m: replace(no_rules(m), site=None)),
        "no diagnoses, no signature": ablate(pairs, lambda m: replace(no_rules(m), signature=None)),
        "no diag., no sig., no site": ablate(pairs, lambda m: replace(no_rules(m), signature=None, site=None)),
        "no rule veto": pairs,
        "no near-miss veto": pairs,
        "one threshold": pairs,
    }
    for name, p in variants.items():
        policy = {"no rule veto": replace(DEFAULT_POLICY, veto_rule_conflict=False),
                  "no near-miss veto": replace(DEFAULT_POLICY, veto_entity_conflict=False),
                  "one threshold": replace(DEFAULT_POLICY, no_error_thresholds=())}.get(name, DEFAULT_POLICY)
        print(f"  {name:26s} {figures(p, policy)}")
    print("text alone (no rules, no signature), by the text similarity it needs:")
    text_only = variants["text only"]
    for cut in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.86, 0.9):
        policy = replace(DEFAULT_POLICY, w_text=DEFAULT_POLICY.threshold / cut)
        print(f"  text>={cut:.2f} {figures(text_only, policy)}")
    if a.misses:
        _misses(raw, gold, pairs)


def _load_sources(path: str):
    from bot.stores.sources import load_from
    from bot.stores.sources.sqlite import SqliteSourceStore

    store = SqliteSourceStore(path)
    try:
        return load_from(store)
    finally:
        store.close()


def _misses(raw, gold, pairs) -> None:
    cluster = {g["number"]: g.get("cluster") for g in gold}
    order = {i["number"]: (i.get("created_at", ""), i["number"]) for i in raw}
    for row in predict(pairs, DEFAULT_POLICY):
        n = row["number"]
        c = cluster.get(n)
        earlier = {m for m, cm in cluster.items() if c and cm == c and order[m] < order[n]}
        got = [d["number"] for d in row["duplicates"]]
        best = sorted(((combine(m, DEFAULT_POLICY), k, m) for m, k, _ in pairs[n]), key=lambda x: -x[0])[:4]
        wrong = [g for g in got if g not in earlier]
        if wrong or (earlier and not any(g in earlier for g in got)):
            tag = "FALSE" if wrong else "MISS "
            print(f"{tag} #{n} [{c}] earlier={sorted(earlier)} got={got}")
            for s, k, m in best:
                mark = "*" if k in earlier else " "
                print(f"     {mark}#{k} [{cluster.get(k)}] {s:.2f}/{DEFAULT_POLICY.threshold_for(m):.2f} "
                      f"text={m.text:.2f} sig={bool(m.signature)} site={bool(m.site)} rules={m.shared_rules} "
                      f"conflict={m.rule_conflict} "
                      f"ents={[e.key + ':' + e.strength[0] for e in m.entities]} near-miss={m.entity_conflict} "
                      f"terms={m.shared_terms}")



if __name__ == "__main__":
    main()
