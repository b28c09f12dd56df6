"""The raise-site index on the dev set: of the issues whose root-cause error vLLM raises, how many resolve to a
site, and how many to a wrong one.

    .venv/bin/python -m bench.sources_devset [--db PATH] [--issues ISSUES.jsonl] [--show]

"vLLM raises it" is judged from the report alone: the root-cause exception's innermost traceback frame lies in
the vllm package. Such an error resolves when the index answers with at least one site; a resolution is right
when one of its sites is that frame's (same file and function), wrong otherwise. Root causes without frames are
counted apart (they cannot be judged this way; --show lists them with their sites to look at). The dev set is
read at run time; nothing of it is stored. Build the index first (`vllm-triage sources build`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from bot.export import read_export
from bot.report import parse
from bot.sources.index import vllm_path
from bot.sources.resolve import exception_query

DEVSET = Path("/work/shared/devset/issues.jsonl")


def default_db() -> Path:
    from bot.app.settings import from_env
    from bot.stores.sources.sqlite import index_file

    return index_file(from_env().data_dir)


def _first(index, exc, version, created):
    res = index.match(exception_query(exc, version, created))
    if not res.matches and "\n" in exc.message.strip():
        res = index.match(exception_query(exc, version, created, first_line_only=True))
    return res


def measure(index, issues_path: Path, show: bool = False, out=sys.stdout) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for issue in read_export(str(issues_path)):
        if not hasattr(issue, "number"):
            continue
        report = parse(issue.title, issue.body)
        counts["issues"] += 1
        if not report.exceptions:
            continue
        root = report.exceptions[-1]
        counts["with a root-cause exception"] += 1
        version = report.environment.vllm_version
        res = _first(index, root, version, issue.created_at)
        innermost = root.frames[-1] if root.frames else None
        where = vllm_path(innermost.file) if innermost is not None else None
        sites = [(m.file, m.line, m.site.function, m.release.version, m.at_release) for m in res.matches]
        if where is None:
            key = "no vllm frame" if innermost is not None else "no frame"
            counts[f"{key}: resolved"] += bool(res.matches)
            counts[key] += 1
            if show and res.matches:
                print(f"#{issue.number} [{key}] {root.type}: {root.first_line[:110]}\n    -> {sites[:3]}", file=out)
            continue
        counts["vllm raises it"] += 1
        if not res.matches:
            if show:
                print(f"#{issue.number} UNRESOLVED {root.type}: {root.first_line[:110]} @ {where}:"
                      f"{innermost.line} {innermost.function} v={version}", file=out)
            continue
        counts["resolved"] += 1
        counts["resolved to one site"] += len(res.matches) == 1
        counts["at the reporter's release"] += any(m.at_release for m in res.matches)
        right = [m for m in res.matches if m.file == where and (not innermost.function
                                                                 or innermost.function == m.site.function)]
        if not right:
            counts["wrong site"] += 1
            if show:
                print(f"#{issue.number} WRONG {root.type}: {root.first_line[:110]} @ {where}:{innermost.line} "
                      f"{innermost.function}\n    -> {sites[:3]}", file=out)
    raised = counts["vllm raises it"] or 1
    counts_out = dict(counts)
    counts_out["resolved share"] = round(counts["resolved"] / raised, 3)
    return counts_out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, help="the source index (default: the data dir's)")
    p.add_argument("--issues", type=Path, default=DEVSET)
    p.add_argument("--show", action="store_true", help="list unresolved, wrong and frameless resolutions")
    args = p.parse_args(argv)
    from bot.stores.sources.sqlite import SqliteSourceStore

    db = args.db or default_db()
    if not db.exists() or not args.issues.exists():
        print(f"sources_devset: need {db} (vllm-triage sources build) and {args.issues}", file=sys.stderr)
        return 2
    store = SqliteSourceStore(db)
    index = store.load("vllm")
    store.close()
    print(f"index: {len(index.releases)} releases, {len(index)} sites")
    for key, value in measure(index, args.issues, args.show).items():
        print(f"{key:>40}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
