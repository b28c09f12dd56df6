"""The `vllm-triage` command."""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import sqlite3
import sys
from pathlib import Path

from bot.rules import DEFAULT_RULES_DIR, RuleError, load_rules
from bot.validtext import valid_str, valid_text

SAMPLE_EXPORT = Path(__file__).resolve().parent.parent / "samples" / "issues.jsonl"


class UserError(Exception):
    """A mistake in what the user asked for: `main` prints it as one line, `vllm-triage[ COMMAND]: message`,
    and exits with status 2."""

    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command


class Parser(argparse.ArgumentParser):
    """argparse, its errors (an unknown option, a value of the wrong kind) in one line like every other."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _at_least(low: int, what: str):
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}, not {raw!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{what}, not {raw!r}")
        return value
    return parse


def _port(raw: str) -> int:
    value = _at_least(1, "a port from 1 to 65535")(raw)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port from 1 to 65535, not {raw!r}")
    return value


def _since(raw: str) -> str:
    from bot.app.redeliver import parse_since

    try:
        parse_since(raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--since wants ")) from None
    return raw


def _iso_time(raw: str) -> str:
    from bot.isotime import epoch

    if epoch(raw) is None:
        raise argparse.ArgumentTypeError(f"an ISO 8601 time like 2025-01-31T12:00:00Z, not {raw!r}")
    return raw


def readable(path: str) -> Path:
    """`path` if it is a file that can be read, else a UserError saying why not."""
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    return Path(path)


def writable(path: str, *, make_parents: bool = False) -> Path:
    """`path` if a file can be written there (its directory exists, or can be made when `make_parents`)."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"cannot write {path}: Is a directory")
    parent = target.parent
    while make_parents and not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"cannot write {path}: {'Not a directory' if parent.exists() else 'No such directory'} "
                        f"{parent}")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UserError(f"cannot write {path}: Permission denied")
    return target


def open_index(path: str):
    """The duplicate index in the SQLite file `path` (made, with its directory, if missing)."""
    from bot.stores.dupes import open_index_file

    writable(path, make_parents=True)
    try:
        return open_index_file(path)
    except sqlite3.DatabaseError as e:
        raise UserError(f"cannot open {path} as a duplicate index: {e}") from None


def _unreachable(error: Exception) -> bool:
    """What opening DATABASE_URL raises when the database cannot be reached or its file cannot be made: an
    OSError, SQLite's errors, psycopg's OperationalError (told by name: only the Postgres backends import it)."""
    return isinstance(error, OSError | sqlite3.Error) or any(
        c.__name__ == "OperationalError" and c.__module__.startswith("psycopg") for c in type(error).__mro__)


def _rules(args: argparse.Namespace):
    if not Path(args.rules).is_dir():
        raise UserError(f"cannot read rules from {args.rules}: No such directory")
    try:
        return load_rules(args.rules)
    except RuleError as e:
        raise UserError(str(e)) from None


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
            raise UserError(str(e), command) from None
        try:
            index = load_index(settings.database_url, settings.data_dir)
        except Exception as e:  # a broken or unreachable index must not stop the command: it works without one
            print(f"vllm-triage {command}: source index not loaded ({type(e).__name__}: {e})", file=sys.stderr)
            return None
        where = "the data directory's source index"
    else:
        from bot.stores.sources.sqlite import SqliteSourceStore

        if not Path(choice).is_file():
            raise UserError(f"--sources {choice}: no such file (build one with "
                            "`vllm-triage sources build --db FILE`)", command)
        try:
            store = SqliteSourceStore(choice)
            try:
                index = load_from(store)
            finally:
                store.close()
        except sqlite3.DatabaseError as e:
            raise UserError(f"cannot open {choice} as a source index: {e}", command) from None
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

    readable(args.export)
    for path in (args.out, args.html):
        if path:
            writable(path)
    rules = _rules(args)
    summary = ReplaySummary()  # its render() lists the export lines skipped
    issues = load_sorted(args.export, summary.problems)
    # each issue sees only earlier ones, also when --db reuses an index that holds the whole export
    index = None
    if not args.no_duplicates:
        index = ChronologicalIndex(open_index(args.db) if args.db else open_index_file(None), issues)
    try:
        sources = _sources(args, "replay")
        progress = progress_bar(len(issues)) if sys.stderr.isatty() and args.out else None
        html = None
        if args.html:
            from bot.dashboard.report import HtmlReport

            html = HtmlReport(args.export)
        tee = html.tee if html is not None else (lambda sink: sink)
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
    text = sys.stdin.read() if source == "-" else readable(source).read_text(encoding="utf-8", errors="replace")
    text = valid_str(text)  # stdin decodes undecodable bytes to lone surrogates under a C locale
    if not text.strip():
        raise UserError(f"{'standard input' if source == '-' else source} is empty: nothing to explain "
                        "(give an issue body, or an issue JSON object with a body)")
    if text.lstrip().startswith("{"):
        try:
            obj = valid_text(json.loads(text))
        except (json.JSONDecodeError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "body" in obj:
            return valid_str(title or str(obj.get("title") or "")), str(obj.get("body") or "")
    return valid_str(title or ""), text


def cmd_explain(args: argparse.Namespace) -> int:
    from bot.explain import explain

    if args.db:
        readable(args.db)  # an index to read: `vllm-triage index` builds one
    title, body = _read_issue(args.file, args.title)
    rules = _rules(args)
    index = open_index(args.db) if args.db else None
    try:
        sources = _sources(args, "explain")
        print(explain(title, body, rules, sources, args.created_at))
        if index is not None:
            from bot.dupes.history import describe_candidates
            from bot.triage import analyse

            analysis = analyse(title, body, rules, sources, args.created_at)
            print(describe_candidates(index, analysis.report, analysis.findings, exclude=args.number))
    finally:
        if index is not None:
            index.close()
    return 0


def cmd_rules_test(args: argparse.Namespace) -> int:
    from bot.rules.selftest import run_rule_tests

    if not Path(args.rules).is_dir():  # a broken rule file is reported below, with every other
        raise UserError(f"cannot read rules from {args.rules}: No such directory")
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
        raise UserError(str(e), "serve") from None
    try:
        run(settings)
    except OSError as e:  # binding the port; gaierror: a host name that does not resolve
        if e.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES) and not isinstance(e, socket.gaierror):
            raise
        raise UserError(f"cannot listen on {settings.host}:{settings.port}: {e.strerror or e}", "serve") from None
    return 0


def cmd_index_github(args: argparse.Namespace) -> int:
    import asyncio
    import os

    import aiohttp

    from bot.app.backfill import backfill, client_for
    from bot.app.settings import SettingsError, from_env
    from bot.stores.deliveries import open_delivery_store
    from bot.stores.dupes import index_path, open_repo_index

    repo = args.github
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise UserError(f"--github wants OWNER/REPO, not {repo!r}", "index")
    try:
        settings = from_env()
    except SettingsError as e:
        raise UserError(str(e), "index") from None
    rules = _rules(args)
    if settings.uses_postgres and not args.db:  # the replicas' shared index (bot/stores/dupes/postgres.py)
        path, index = "the Postgres database", open_repo_index(settings.database_url, settings.data_dir, repo)
    else:
        path = Path(args.db) if args.db else index_path(settings.data_dir, repo)
        index = open_index(str(path))
    try:
        sources = _sources(args, "index")
    except UserError:
        index.close()
        raise

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
    readable(args.export)
    if not args.db:
        raise UserError("give --db PATH for the index file", "index")
    writable(args.db, make_parents=True)
    rules = _rules(args)
    problems = ReplaySummary().problems
    issues = load_sorted(args.export, problems)
    for problem in problems:
        print(f"vllm-triage: {args.export}: {problem} (skipped)", file=sys.stderr)
    index = open_index(args.db)
    try:
        sources = _sources(args, "index")
        progress = stderr_progress() if sys.stderr.isatty() else None
        summary = build_from_export(issues, index, rules.evaluate, progress, sources)
    finally:
        index.close()
    print(f"{args.export}: {summary.render()} -> {args.db}")
    return 0


def cmd_redeliver(args: argparse.Namespace) -> int:
    from bot.app.redeliver import run
    from bot.app.settings import SettingsError, from_env

    try:
        settings = from_env()
    except SettingsError as e:
        raise UserError(str(e), "redeliver") from None
    if not settings.has_credentials:
        raise UserError("needs the App's credentials (GITHUB_APP_ID and GITHUB_PRIVATE_KEY)", "redeliver")
    return run(settings, args.since, dry_run=args.dry_run, limit=args.max)


def cmd_migrate(args: argparse.Namespace) -> int:
    from bot.app.settings import SettingsError, from_env
    from bot.stores.database import MissingDriver
    from bot.stores.registry import migrate_all

    try:
        settings = from_env()
        done = migrate_all(settings.database_url, settings.data_dir)
    except (SettingsError, MissingDriver, ValueError) as e:
        raise UserError(str(e), "migrate") from None
    except Exception as e:
        if not _unreachable(e):
            raise
        raise UserError(f"cannot open the database: {str(e).strip().splitlines()[0]}", "migrate") from None
    for store, where, version in done:
        print(f"{store}: schema at version {version} ({where})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    if args.github:
        return cmd_index_github(args)
    if args.export:
        return cmd_index_export(args)
    raise UserError("give an EXPORT file or --github OWNER/REPO", "index")


def _source_store(args: argparse.Namespace, command: str):
    from bot.app.settings import SettingsError, from_env
    from bot.stores.sources import open_source_store
    from bot.stores.sources.sqlite import SqliteSourceStore

    try:
        settings = from_env()
    except SettingsError as e:
        raise UserError(str(e), command) from None
    if args.db:
        if command == "sources status":
            readable(args.db)  # an index to read: `sources build --db` makes one
        else:
            writable(args.db, make_parents=True)
        try:
            return SqliteSourceStore(args.db), args.db, Path(args.db).parent
        except sqlite3.DatabaseError as e:
            raise UserError(f"cannot open {args.db} as a source index: {e}") from None
    store = open_source_store(settings.database_url, settings.data_dir)
    where = getattr(store, "path", None) or "the Postgres database"
    return store, where, Path(settings.data_dir) / "sources"


def cmd_sources_build(args: argparse.Namespace) -> int:
    from bot.sources.build import PlanError, build, check_spec, plan
    from bot.sources.sdists import IndexClient, SdistError, pip_index

    try:
        if args.versions:
            check_spec(args.versions)
    except PlanError as e:
        raise UserError(str(e), "sources build") from None
    store, where, work_dir = _source_store(args, "sources build")
    try:
        held = {r.version: r for r in store.releases(args.package)}
        current = {v for v, r in held.items() if r.current and not args.rebuild}
        try:
            client = IndexClient(pip_index())
            todo, done = plan(client, args.package, current, args.versions, args.latest)
        except PlanError as e:
            raise UserError(str(e), "sources build") from None
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
            raise UserError(str(e), "sources status") from None
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
    p = Parser(prog="vllm-triage", description="Triage vLLM issue reports.")
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
    r.add_argument("--jobs", type=_at_least(1, "a number of processes, 1 or more"), default=1, metavar="N",
                   help="parse and diagnose in N worker processes (duplicates stay in order; same output)")
    r.add_argument("--sources", default="auto", metavar="DB|auto|none",
                   help="the raise-site index: an SQLite file, `auto` (the data directory's, when built; the "
                        "default) or `none`")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("explain", help="show the parsed report and the findings for one issue body")
    e.add_argument("file", help="a file with the issue body (or an issue JSON object), or - for stdin")
    e.add_argument("--title", help="the issue title")
    e.add_argument("--db", help="a duplicate index (see `index`): also show similar earlier issues and why")
    e.add_argument("--number", type=_at_least(1, "an issue number"),
                   help="with --db: the issue's own number, left out of the candidates")
    e.add_argument("--sources", default="auto", metavar="DB|auto|none",
                   help="the raise-site index (as for replay; default: auto)")
    e.add_argument("--created-at", type=_iso_time, metavar="ISO8601",
                   help="when the issue was filed: the release it is about when it names no version")
    e.set_defaults(func=cmd_explain)

    sv = sub.add_parser("serve", help="run the GitHub App: webhook server and worker (dry-run without credentials)")
    sv.add_argument("--host", help="bind address (default: $HOST or 127.0.0.1)")
    sv.add_argument("--port", type=_port, help="port (default: $PORT or 8080)")
    sv.add_argument("--workers", type=_at_least(1, "a number of deliveries, 1 or more"),
                    help="concurrent deliveries (default: $VLLM_TRIAGE_WORKERS or 4)")
    sv.add_argument("--intake-processes", type=_at_least(1, "a number of processes, 1 or more"), metavar="N",
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
    rd.add_argument("--since", default="24h", type=_since,
                    help="a duration (30m, 6h, 2d) or an ISO 8601 time, UTC unless it says (default: %(default)s)")
    rd.add_argument("--dry-run", action="store_true", help="list the failed deliveries, redeliver nothing")
    rd.add_argument("--max", type=_at_least(1, "a number of deliveries, 1 or more"), metavar="N",
                    help="redeliver at most N deliveries")
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
    pick.add_argument("--latest", type=_at_least(1, "a positive number of releases"), metavar="N",
                      help="the newest N final releases")
    sb.add_argument("--jobs", type=_at_least(1, "a number of processes, 1 or more"),
                    default=min(4, os.cpu_count() or 1), metavar="N",
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

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help (0), or a usage mistake argparse found (2, its one line already printed)
        return e.code if isinstance(e.code, int) else 2
    args.rules_dir_given = any(a == "--rules" or a.startswith("--rules=") for a in (argv or sys.argv[1:]))
    try:
        return args.func(args)
    except MissingDriver as e:  # DATABASE_URL is postgresql:// and the postgres extra is not installed
        print(f"vllm-triage {args.command}: {e}", file=sys.stderr)
        return 2
    except UserError as e:
        print(f"vllm-triage{' ' + e.command if e.command else ''}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `vllm-triage explain x | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
