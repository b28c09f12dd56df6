"""The `vllm-triage` command."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.rules import DEFAULT_RULES_DIR, RuleError, load_rules

SAMPLE_EXPORT = Path(__file__).resolve().parent.parent / "samples" / "issues.jsonl"


def _rules(args: argparse.Namespace):
    try:
        return load_rules(args.rules)
    except RuleError as e:
        sys.exit(f"vllm-triage: {e}")


def cmd_replay(args: argparse.Namespace) -> int:
    from bot.dupes import MemoryIndex
    from bot.replay import ReplaySummary, load_sorted, print_readable, progress_bar, replay, write_jsonl

    rules = _rules(args)
    summary = ReplaySummary()
    issues = load_sorted(args.export, summary.problems)
    for problem in summary.problems:
        print(f"vllm-triage: {args.export}: {problem} (skipped)", file=sys.stderr)
    index = MemoryIndex() if not args.no_duplicates else None
    progress = progress_bar(len(issues)) if sys.stderr.isatty() and args.out else None
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            replay(issues, rules, index, write_jsonl(out), summary, progress)
    else:
        replay(issues, rules, index, print_readable(sys.stdout), summary, progress)
    print(summary.render(), file=sys.stderr)
    return 0


def _read_issue(source: str, title: str | None) -> tuple[str, str]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and "body" in obj:
            return title or str(obj.get("title") or ""), str(obj.get("body") or "")
    return title or "", text


def cmd_explain(args: argparse.Namespace) -> int:
    from bot.explain import explain

    rules = _rules(args)
    title, body = _read_issue(args.file, args.title)
    print(explain(title, body, rules))
    return 0


def cmd_rules_test(args: argparse.Namespace) -> int:
    from bot.rules.selftest import run_rule_tests

    return run_rule_tests(args.rules, sys.stdout)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vllm-triage", description="Triage vLLM issue reports.")
    p.add_argument("--rules", default=str(DEFAULT_RULES_DIR), help="rules directory (default: %(default)s)")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("replay", help="run the pipeline over an exported issue list, offline")
    r.add_argument("export", nargs="?", default=str(SAMPLE_EXPORT),
                   help="JSON array / JSON lines of GitHub issues, or `gh issue list --json` output "
                        "(default: the sample export shipped in samples/)")
    r.add_argument("--out", help="write one JSON object per issue here (default: print a readable triage)")
    r.add_argument("--no-duplicates", action="store_true", help="skip duplicate search")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("explain", help="show the parsed report and the findings for one issue body")
    e.add_argument("file", help="a file with the issue body (or an issue JSON object), or - for stdin")
    e.add_argument("--title", help="the issue title")
    e.set_defaults(func=cmd_explain)

    rl = sub.add_parser("rules", help="rule-file tools")
    rsub = rl.add_subparsers(dest="rules_command", required=True)
    t = rsub.add_parser("test", help="lint every rule file and run every rule's examples")
    t.set_defaults(func=cmd_rules_test)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
