"""Rule coverage over an issue export: on which share of the issues each rule fires, and which rules never do.

    .venv/bin/python -m bench.rules_coverage [EXPORT] [--rules DIR] [--sources DB|none] [--json FILE]

EXPORT is a JSON-lines issue export (default: the dev set). Each issue is triaged as replay does (parsed, its
raise site located when `--sources` names an index, every rule evaluated and arbitrated); a rule *fires* on an
issue when its finding is in the result, *shown* when that finding's confidence is at least 0.5 (a comment may
carry it). A rule that matches only where a more specific rule supersedes it is listed apart from the rules that
never match. Prints one table (rules by issues, most first), the never-firing rules and the share of rules that
fire at least once; `--json` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.export import ExportProblem, read_export  # noqa: E402
from bot.report import parse  # noqa: E402
from bot.rules import DEFAULT_RULES_DIR, RuleError, evaluate_rule, load_rules  # noqa: E402
from bot.sources.locate import locate  # noqa: E402

DEVSET = Path("/work/shared/devset/issues.jsonl")
SHOWN = 0.5


def _index(choice: str):
    if choice == "none":
        return None
    from bot.stores.sources import load_from
    from bot.stores.sources.sqlite import SqliteSourceStore

    store = SqliteSourceStore(choice)
    try:
        return load_from(store)
    finally:
        store.close()


def coverage(export: Path, rules_dir: Path, sources: str) -> dict:
    rules = load_rules(rules_dir)
    index = _index(sources)
    fired: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    superseded_only: Counter[str] = Counter()
    problems: list[str] = []
    issues = 0
    for item in read_export(str(export)):
        if isinstance(item, ExportProblem):
            problems.append(str(item))
            continue
        issues += 1
        report = locate(index, parse(item.title, item.body), item.created_at or None)
        findings = rules.evaluate(report)
        ids = {f.rule for f in findings}
        fired.update(ids)
        shown.update(f.rule for f in findings if f.confidence >= SHOWN)
        # rules some firing rule superseded: did they match too?
        dropped = {other for f in findings for other in rules.get(f.rule).supersedes} - ids
        superseded_only.update(r for r in dropped if evaluate_rule(rules.get(r), report) is not None)
    never = sorted(r.id for r in rules.rules if r.id not in fired)
    return {
        "export": str(export),
        "issues": issues,
        "rules": len(rules.rules),
        "firing": len(rules.rules) - len(never),
        "share_firing": round((len(rules.rules) - len(never)) / len(rules.rules), 3) if rules.rules else 0.0,
        "per_rule": {rid: {"issues": n, "share": round(n / issues, 4) if issues else 0.0, "shown": shown[rid]}
                     for rid, n in fired.most_common()},
        "never": [r for r in never if not superseded_only[r]],
        "superseded_only": {r: superseded_only[r] for r in never if superseded_only[r]},
        "problems": problems,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rules_coverage", description=__doc__.split("\n\n")[0])
    ap.add_argument("export", nargs="?", type=Path, default=DEVSET, help="JSON-lines issue export (default: dev set)")
    ap.add_argument("--rules", type=Path, default=DEFAULT_RULES_DIR, help="rules directory")
    ap.add_argument("--sources", default="none", metavar="DB|none", help="raise-site index (SQLite file)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if not args.export.is_file():
        ap.error(f"{args.export}: no such file")
    if args.sources != "none" and not Path(args.sources).is_file():
        ap.error(f"--sources {args.sources}: no such file")
    try:
        result = coverage(args.export, args.rules, args.sources)
    except RuleError as e:
        ap.error(str(e))
    for problem in result["problems"]:
        print(f"rules_coverage: {args.export}: {problem}", file=sys.stderr)
    n = result["issues"]
    print(f"{'rule':<52} {'issues':>6} {'share':>7} {'shown':>6}")
    for rid, row in result["per_rule"].items():
        print(f"{rid:<52} {row['issues']:>6} {row['share']:>7.1%} {row['shown']:>6}")
    if result["superseded_only"]:
        print("\nmatch only where a more specific rule supersedes them:")
        for rid, k in result["superseded_only"].items():
            print(f"  {rid} ({k})")
    print(f"\nnever fire ({len(result['never'])}):")
    for rid in result["never"]:
        print(f"  {rid}")
    print(f"\n{result['firing']} of {result['rules']} rules fire on at least one of {n} issues "
          f"({result['share_firing']:.1%})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
