"""The `vllm-triage` command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bot.rules import DEFAULT_RULES_DIR, RuleError, load_rules

SAMPLE_EXPORT = Path(__file__).resolve().parent.parent / "samples" / "issues.jsonl"


def _rules(args: argparse.Namespace):
    try:
        return load_rules(args.rules)
    except RuleError as e:
        sys.exit(f"vllm-triage: {e}")


def _sources(args: argparse.Namespace, command: str):
    """The raise-site index `--sources` names: an SQLite file, `auto` (the data dir's or DATABASE_URL's, when
    built) or `none`. Says on stderr which one is used."""
    choice = getattr(args, "sources", "auto") or "auto"
    if choice == "none":
        return None
    from bot.stores.sources import load_from, load_index

    if choice == "auto":
        from bot.app.settings import SettingsError, from_env

        try:
            settings = from_env()
        except SettingsError as e:
            raise SystemExit(_usage_error(command, str(e))) from None
        try:
            index = load_index(settings.database_url, settings.data_dir)
        except Exception as e:  # a broken or unreachable index must not stop the command: it works without one
            print(f"vllm-triage {command}: source index not loaded ({type(e).__name__}: {e})", file=sys.stderr)
            return None
        where = "the data directory's source index"
    else:
        from bot.stores.sources.sqlite import SqliteSourceStore

        if not Path(choice).is_file():
            raise SystemExit(_usage_error(command, f"--sources {choice}: no such file (build one with "
                                                   "`vllm-triage sources build --db FILE`)"))
        store = SqliteSourceStore(choice)
        try:
            index = load_from(store)
        finally:
            store.close()
        where = choice
    if index is None:
        print(f"vllm-triage {command}: no source index (`vllm-triage sources build`); raise sites are not located",
              file=sys.stderr)
    else:
        print(f"vllm-triage {command}: source index: {len(index.releases)} releases, {len(index)} sites ({where})",
              file=sys.stderr)
    return index


def cmd_replay(args: argparse.Namespace) -> int:
    from bot.dupes.history import ChronologicalIndex
    from bot.replay import ReplaySummary, load_sorted, print_readable, progress_bar, replay, write_jsonl
    from bot.stores.dupes import open_index_file

    rules = _rules(args)
    sources = _sources(args, "replay")
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
                replay(issues, rules, index, tee(write_jsonl(out)), summary, progress, jobs=args.jobs,
                       sources=sources)
        else:
            replay(issues, rules, index, tee(print_readable(sys.stdout)), summary, progress, jobs=args.jobs,
                   sources=sources)
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
    sources = _sources(args, "explain")
    print(explain(title, body, rules, sources, args.created_at))
    if args.db:
        from bot.dupes.history import describe_candidates
        from bot.stores.dupes import open_index_file
        from bot.triage import analyse

        if not Path(args.db).exists():
            sys.exit(f"vllm-triage explain: {args.db}: no such index (build it with `vllm-triage index`)")
        index = open_index_file(args.db)
        analysis = analyse(title, body, rules, sources, args.created_at)
        print(describe_candidates(index, analysis.report, analysis.findings, exclude=args.number))
        index.close()
    return 0


def cmd_rules_test(args: argparse.Namespace) -> int:
    from bot.rules.selftest import run_rule_tests

    return run_rule_tests(args.rules, sys.stdout, _sources(args, "rules test"))


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
    sources = _sources(args, "index")
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
                                      progress=progress, sources=sources)
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
        summary = build_from_export(issues, index, rules.evaluate, progress, _sources(args, "index"))
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


def _usage_error(command: str, message: str) -> int:
    print(f"vllm-triage {command}: {message}", file=sys.stderr)
    return 2


def _source_store(args: argparse.Namespace, command: str):
    from bot.app.settings import SettingsError, from_env
    from bot.stores.sources import open_source_store
    from bot.stores.sources.sqlite import SqliteSourceStore

    try:
        settings = from_env()
    except SettingsError as e:
        raise SystemExit(_usage_error(command, str(e))) from None
    if args.db:
        return SqliteSourceStore(args.db), args.db, Path(args.db).parent
    store = open_source_store(settings.database_url, settings.data_dir)
    where = getattr(store, "path", None) or "the Postgres database"
    return store, where, Path(settings.data_dir) / "sources"


def cmd_sources_build(args: argparse.Namespace) -> int:
    from bot.sources.build import PlanError, build, check_spec, plan
    from bot.sources.sdists import IndexClient, SdistError, pip_index

    if args.latest is not None and args.latest < 1:
        return _usage_error("sources build", "--latest wants a positive number")
    if args.jobs < 1:
        return _usage_error("sources build", "--jobs wants a positive number")
    try:
        if args.versions:
            check_spec(args.versions)
    except PlanError as e:
        return _usage_error("sources build", str(e))
    store, where, work_dir = _source_store(args, "sources build")
    try:
        held = {r.version: r for r in store.releases(args.package)}
        current = {v for v, r in held.items() if r.current and not args.rebuild}
        try:
            client = IndexClient(pip_index())
            todo, done = plan(client, args.package, current, args.versions, args.latest)
        except PlanError as e:
            return _usage_error("sources build", str(e))
        except SdistError as e:
            print(f"vllm-triage sources build: {e}", file=sys.stderr)
            return 1

        def keep(result) -> None:
            if result.version in held:  # read by an older extractor, or --rebuild
                store.remove_release(result.package, result.version)
            store.add_release(result)

        tty = sys.stderr.isatty()

        def progress(n: int, total: int, version: str) -> None:
            if tty:
                width = 30
                filled = width * n // max(total, 1)
                print(f"\r[{'#' * filled}{'.' * (width - filled)}] {n}/{total} {version:<12}", end="",
                      file=sys.stderr, flush=True)
                if n == total:
                    print(file=sys.stderr)
            elif n:
                print(f"{args.package} {version}: {n}/{total}", file=sys.stderr, flush=True)

        jobs = min(args.jobs, len(todo)) if todo else 1
        summary = build(args.package, todo, client.index, work_dir / "sdists", keep, jobs=jobs,
                        keep_sdists=args.keep_sdists, module=args.module, progress=progress if todo else None)
        summary.skipped = done
        for version, why in summary.failed:
            print(f"vllm-triage sources build: {args.package} {version}: {why} (skipped)", file=sys.stderr)
        for result in summary.built:
            for problem in result.unparsed[:3]:
                print(f"vllm-triage sources build: {args.package} {result.version}: {problem}", file=sys.stderr)
        print(f"{args.package}: {summary.render()} -> {where}")
        return 1 if summary.failed else 0
    finally:
        store.close()


def cmd_sources_status(args: argparse.Namespace) -> int:
    from bot.stores.sources import has_index

    if not args.db:
        from bot.app.settings import SettingsError, from_env

        try:
            settings = from_env()
        except SettingsError as e:
            return _usage_error("sources status", str(e))
        if not has_index(settings.database_url, settings.data_dir):
            print(f"{args.package}: no source index (build it with `vllm-triage sources build`)")
            return 0
    store, where, _ = _source_store(args, "sources status")
    try:
        releases = store.releases(args.package)
        if not releases:
            print(f"{args.package}: no release built in {where}")
            return 0
        print(f"{'release':<14}{'uploaded':<13}{'modules':>8}{'sites':>8}{'unparsed':>9}{'seconds':>9}")
        for r in releases:
            flag = "" if r.current else "  (read by an older extractor: rebuilt by the next build)"
            print(f"{r.version:<14}{(r.uploaded_at or '?')[:10]:<13}{r.modules:>8}{r.sites:>8}{r.unparsed:>9}"
                  f"{r.seconds:>9.1f}{flag}")
        index = store.load(args.package)
        print(f"{args.package}: {len(releases)} releases, {len(index)} distinct sites -> {where}")
        return 0
    finally:
        store.close()


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
    r.add_argument("--sources", default="auto", metavar="DB|auto|none",
                   help="the raise-site index: an SQLite file, `auto` (the data directory's, when built; the "
                        "default) or `none`")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("explain", help="show the parsed report and the findings for one issue body")
    e.add_argument("file", help="a file with the issue body (or an issue JSON object), or - for stdin")
    e.add_argument("--title", help="the issue title")
    e.add_argument("--db", help="a duplicate index (see `index`): also show similar earlier issues and why")
    e.add_argument("--number", type=int, help="with --db: the issue's own number, left out of the candidates")
    e.add_argument("--sources", default="auto", metavar="DB|auto|none",
                   help="the raise-site index (as for replay; default: auto)")
    e.add_argument("--created-at", metavar="ISO8601",
                   help="when the issue was filed: the release it is about when it names no version")
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
    ix.add_argument("--sources", default="auto", metavar="DB|auto|none",
                    help="the raise-site index, to key each issue by its root cause's raise site as triage does "
                         "(as for replay; default: auto)")
    ix.set_defaults(func=cmd_index)

    rd = sub.add_parser("redeliver", help="ask GitHub to deliver again the webhooks that failed since a time")
    rd.add_argument("--since", default="24h",
                    help="a duration (30m, 6h, 2d) or an ISO 8601 time, UTC unless it says (default: %(default)s)")
    rd.add_argument("--dry-run", action="store_true", help="list the failed deliveries, redeliver nothing")
    rd.add_argument("--max", type=int, metavar="N", help="redeliver at most N deliveries")
    rd.set_defaults(func=cmd_redeliver)

    mg = sub.add_parser("migrate", help="apply the migrations DATABASE_URL lacks, then exit (serve also does)")
    mg.set_defaults(func=cmd_migrate)

    so = sub.add_parser("sources", help="the raise-site index: where each error is raised, in every release")
    ssub = so.add_subparsers(dest="sources_command", required=True)
    sb = ssub.add_parser("build", help="download sdists from pip's configured index and index their raise sites "
                                       "(releases already built are skipped)")
    sb.add_argument("--package", default="vllm", help="the package to index (default: %(default)s)")
    sb.add_argument("--module", help="its import name when that is not the package name")
    pick = sb.add_mutually_exclusive_group()
    pick.add_argument("--versions", metavar="SPEC",
                      help="a version specifier ('>=0.6,<0.9') or a list of versions ('0.6.3,0.17.0'); "
                           "default: every final release")
    pick.add_argument("--latest", type=int, metavar="N", help="the newest N final releases")
    sb.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), metavar="N",
                    help="releases read at once, in worker processes (default: %(default)s)")
    sb.add_argument("--keep-sdists", action="store_true", help="keep the downloaded archives under the data dir")
    sb.add_argument("--rebuild", action="store_true", help="read again the releases already built")
    sb.add_argument("--db", help="an SQLite file to build into (default: $VLLM_TRIAGE_DATA_DIR/sources/"
                                 "index.sqlite3, or the Postgres database DATABASE_URL names)")
    sb.set_defaults(func=cmd_sources_build)
    ss = ssub.add_parser("status", help="list the releases the index holds")
    ss.add_argument("--package", default="vllm", help="(default: %(default)s)")
    ss.add_argument("--db", help="an SQLite file (default: as for build)")
    ss.set_defaults(func=cmd_sources_status)

    rl = sub.add_parser("rules", help="rule-file tools")
    rsub = rl.add_subparsers(dest="rules_command", required=True)
    t = rsub.add_parser("test", help="lint every rule file and run every rule's examples")
    t.add_argument("--sources", default="auto", metavar="DB|auto|none",
                   help="the raise-site index (as for replay; default: auto): each rule's raised_in is checked "
                        "against it and the examples also run with their raise sites located")
    t.set_defaults(func=cmd_rules_test)
    return p


def main(argv: list[str] | None = None) -> int:
    from bot.stores.database import MissingDriver

    args = build_parser().parse_args(argv)
    args.rules_dir_given = any(a == "--rules" or a.startswith("--rules=") for a in (argv or sys.argv[1:]))
    try:
        return args.func(args)
    except SystemExit as e:  # a usage mistake found deep in a command (see _usage_error): its status
        if isinstance(e.code, int):
            return e.code
        raise
    except MissingDriver as e:  # DATABASE_URL is postgresql:// and the postgres extra is not installed
        sys.exit(f"vllm-triage: {e}")


if __name__ == "__main__":
    raise SystemExit(main())
