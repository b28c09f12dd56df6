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
    from bot.dupes.history import ChronologicalIndex
    from bot.replay import ReplaySummary, load_sorted, print_readable, progress_bar, replay, write_jsonl
    from bot.stores.dupes import open_index_file

    rules = _rules(args)
    summary = ReplaySummary()
    issues = load_sorted(args.export, summary.problems)
    for problem in summary.problems:
        print(f"vllm-triage: {args.export}: {problem} (skipped)", file=sys.stderr)
    # each issue sees only earlier ones, also when --db reuses an index that holds the whole export
    index = None if args.no_duplicates else ChronologicalIndex(open_index_file(args.db), issues)
    progress = progress_bar(len(issues)) if sys.stderr.isatty() and args.out else None
    html = None
    if args.html:
        from bot.dashboard.report import HtmlReport

        html = HtmlReport(args.export)
    tee = html.tee if html is not None else (lambda sink: sink)
    try:
        if args.out:
            with open(args.out, "w", encoding="utf-8") as out:
                replay(issues, rules, index, tee(write_jsonl(out)), summary, progress, jobs=args.jobs)
        else:
            replay(issues, rules, index, tee(print_readable(sys.stdout)), summary, progress, jobs=args.jobs)
    finally:
        if index is not None:
            index.close()
    print(summary.render(), file=sys.stderr)
    if html is not None:
        html.write(args.html, summary)
        print(f"report: {args.html}", file=sys.stderr)
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
    if args.db:
        from bot.dupes.history import describe_candidates
        from bot.report import parse
        from bot.stores.dupes import open_index_file

        if not Path(args.db).exists():
            sys.exit(f"vllm-triage explain: {args.db}: no such index (build it with `vllm-triage index`)")
        index = open_index_file(args.db)
        report = parse(title, body)
        print(describe_candidates(index, report, rules.evaluate(report), exclude=args.number))
        index.close()
    return 0


def cmd_rules_test(args: argparse.Namespace) -> int:
    from bot.rules.selftest import run_rule_tests

    return run_rule_tests(args.rules, sys.stdout)


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.app.server import run
    from bot.app.settings import SettingsError, from_env

    overrides: dict = {"insecure_no_secret": args.insecure_no_secret}
    for name in ("host", "port", "workers", "intake_processes"):
        if getattr(args, name) is not None:
            overrides[name] = getattr(args, name)
    if args.rules_dir_given:
        overrides["rules_dir"] = args.rules
    try:
        settings = from_env(**overrides)
        settings.check()
    except SettingsError as e:
        sys.exit(f"vllm-triage serve: {e}")
    run(settings)
    return 0


def cmd_index_github(args: argparse.Namespace) -> int:
    import asyncio
    import os

    import aiohttp

    from bot.app.backfill import backfill, client_for
    from bot.app.settings import SettingsError, from_env
    from bot.stores.deliveries import open_delivery_store
    from bot.stores.dupes import index_path, open_index_file, open_repo_index

    repo = args.github
    if repo.count("/") != 1 or not all(repo.split("/")):
        sys.exit("vllm-triage index: --github wants OWNER/REPO")
    try:
        settings = from_env()
    except SettingsError as e:
        sys.exit(f"vllm-triage index: {e}")
    rules = _rules(args)
    if settings.uses_postgres and not args.db:  # the replicas' shared index (bot/stores/dupes/postgres.py)
        path, index = "the Postgres database", open_repo_index(settings.database_url, settings.data_dir, repo)
    else:
        path = Path(args.db) if args.db else index_path(settings.data_dir, repo)
        index = open_index_file(path)

    async def go():
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=settings.http_timeout)) as session:
            gh, installation = await client_for(repo, settings, session, os.environ.get("GITHUB_TOKEN"))
            store = None
            if args.queue_missed:
                store = open_delivery_store(settings.database_url)
                await store.migrate()
            try:
                def progress(n: int) -> None:
                    if sys.stderr.isatty() and n % 100 == 0:
                        print(f"\r{n} issues", end="", file=sys.stderr)
                return await backfill(gh, repo, index, rules, store=store, installation_id=installation,
                                      progress=progress)
            finally:
                if store is not None:
                    await store.close()

    try:
        summary = asyncio.run(go())
    finally:
        index.close()
    print(f"{repo}: {summary.render()} -> {path}")
    return 0


def cmd_index_export(args: argparse.Namespace) -> int:
    from bot.dupes.history import build_from_export, stderr_progress
    from bot.replay import ReplaySummary, load_sorted
    from bot.stores.dupes import open_index_file

    if not args.db:
        sys.exit("vllm-triage index: give --db PATH for the index file")
    rules = _rules(args)
    problems = ReplaySummary().problems
    issues = load_sorted(args.export, problems)
    for problem in problems:
        print(f"vllm-triage: {args.export}: {problem} (skipped)", file=sys.stderr)
    index = open_index_file(args.db)
    try:
        progress = stderr_progress() if sys.stderr.isatty() else None
        summary = build_from_export(issues, index, rules.evaluate, progress)
    finally:
        index.close()
    print(f"{args.export}: {summary.render()} -> {args.db}")
    return 0


def cmd_redeliver(args: argparse.Namespace) -> int:
    from bot.app.redeliver import run

    return run(args.since, dry_run=args.dry_run, limit=args.max)


def cmd_migrate(args: argparse.Namespace) -> int:
    from bot.app.settings import SettingsError, from_env
    from bot.stores.database import MissingDriver
    from bot.stores.registry import migrate_all

    try:
        settings = from_env()
        done = migrate_all(settings.database_url, settings.data_dir)
    except (SettingsError, MissingDriver) as e:
        sys.exit(f"vllm-triage migrate: {e}")
    for store, where, version in done:
        print(f"{store}: schema at version {version} ({where})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    if args.github:
        return cmd_index_github(args)
    if args.export:
        return cmd_index_export(args)
    sys.exit("vllm-triage index: give an EXPORT file or --github OWNER/REPO")


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
    r.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report (summary, labels, "
                   "diagnoses, duplicate clusters, agreement with the export's labels)")
    r.add_argument("--db", help="duplicate index file to reuse and update (default: a fresh one in memory)")
    r.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="parse and diagnose in N worker processes (duplicates stay in order; same output)")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("explain", help="show the parsed report and the findings for one issue body")
    e.add_argument("file", help="a file with the issue body (or an issue JSON object), or - for stdin")
    e.add_argument("--title", help="the issue title")
    e.add_argument("--db", help="a duplicate index (see `index`): also show similar earlier issues and why")
    e.add_argument("--number", type=int, help="with --db: the issue's own number, left out of the candidates")
    e.set_defaults(func=cmd_explain)

    sv = sub.add_parser("serve", help="run the GitHub App: webhook server and worker (dry-run without credentials)")
    sv.add_argument("--host", help="bind address (default: $HOST or 127.0.0.1)")
    sv.add_argument("--port", type=int, help="port (default: $PORT or 8080)")
    sv.add_argument("--workers", type=int, help="concurrent deliveries (default: $VLLM_TRIAGE_WORKERS or 4)")
    sv.add_argument("--intake-processes", type=int, metavar="N",
                    help="processes acknowledging webhooks on the port, for more than a few thousand a second "
                         "(default: $VLLM_TRIAGE_INTAKE_PROCESSES or 1)")
    sv.add_argument("--insecure-no-secret", action="store_true",
                    help="dry-run on loopback without GITHUB_WEBHOOK_SECRET (deliveries are not verified)")
    sv.set_defaults(func=cmd_serve)

    ix = sub.add_parser("index", help="build the duplicate index from an export or from a repository's history")
    ix.add_argument("export", nargs="?", help="an exported issue list (see replay)")
    ix.add_argument("--github", metavar="OWNER/REPO", help="page through the repository's issues on GitHub")
    ix.add_argument("--db", help="index file (default: under $VLLM_TRIAGE_DATA_DIR/dupes/)")
    ix.add_argument("--queue-missed", action="store_true",
                    help="with --github: queue a triage for open issues the bot has no record of")
    ix.set_defaults(func=cmd_index)

    rd = sub.add_parser("redeliver", help="ask GitHub to deliver again the webhooks that failed since a time")
    rd.add_argument("--since", default="24h",
                    help="a duration (30m, 6h, 2d) or an ISO 8601 time, UTC unless it says (default: %(default)s)")
    rd.add_argument("--dry-run", action="store_true", help="list the failed deliveries, redeliver nothing")
    rd.add_argument("--max", type=int, metavar="N", help="redeliver at most N deliveries")
    rd.set_defaults(func=cmd_redeliver)

    mg = sub.add_parser("migrate", help="apply the migrations DATABASE_URL lacks, then exit (serve also does)")
    mg.set_defaults(func=cmd_migrate)

    rl = sub.add_parser("rules", help="rule-file tools")
    rsub = rl.add_subparsers(dest="rules_command", required=True)
    t = rsub.add_parser("test", help="lint every rule file and run every rule's examples")
    t.set_defaults(func=cmd_rules_test)
    return p


def main(argv: list[str] | None = None) -> int:
    from bot.stores.database import MissingDriver

    args = build_parser().parse_args(argv)
    args.rules_dir_given = any(a == "--rules" or a.startswith("--rules=") for a in (argv or sys.argv[1:]))
    try:
        return args.func(args)
    except MissingDriver as e:  # DATABASE_URL is postgresql:// and the postgres extra is not installed
        sys.exit(f"vllm-triage: {e}")


if __name__ == "__main__":
    raise SystemExit(main())
