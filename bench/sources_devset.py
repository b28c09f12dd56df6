"""The raise-site index on the dev set: of the issues whose root-cause error vLLM raises, how many resolve to a
site, and how many to a wrong one; and how many errors vLLM does not raise resolve anyway (false resolutions).

    .venv/bin/python -m bench.sources_devset [--db PATH] [--issues ISSUES.jsonl] [--show]

"vLLM raises it" is judged from the report: the root-cause exception's innermost traceback frame lies in the vllm
package, and then the right site is that frame's (file and function). Most dev-set root causes are quoted without
a traceback; for those the judgement is ours, read from the error text and checked against vLLM's source
(JUDGED below: the file and function that raise it, or None when vLLM does not raise it). A root cause judged
neither way is counted as not vLLM's. The dev set is read at run time; nothing of it is stored here but issue
numbers and our judgements. Build the index first (`vllm-triage sources build`).
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

# issue -> (file, function) raising its frameless root cause, read from the error text; None: not vLLM's error
JUDGED: dict[int, tuple[str, str] | None] = {
    730: ("vllm/config.py", "_get_and_verify_dtype"),                 # bf16 on a pre-Ampere GPU
    1400: ("vllm/config.py", "_get_and_verify_dtype"),
    1705: ("vllm/config.py", "verify_with_parallel_config"),          # heads not divisible by TP
    3329: ("vllm/model_executor/weight_utils.py", "prepare_hf_model_weights"),
    4943: ("vllm/model_executor/model_loader/utils.py", "get_model_architecture"),
    6218: ("vllm/worker/model_runner.py", "_prepare_model_input_tensors"),
    7344: ("vllm/lora/models.py", "from_local_checkpoint"),
    9624: ("vllm/model_executor/models/registry.py", "_raise_for_unsupported"),
    9913: ("vllm/model_executor/layers/quantization/utils/marlin_utils.py", "verify_marlin_supports_shape"),
    10990: ("vllm/model_executor/models/registry.py", "_raise_for_unsupported"),
    13373: ("vllm/model_executor/models/utils.py", "_load_module"),
    13640: ("vllm/model_executor/layers/quantization/utils/marlin_utils.py", "verify_marlin_supports_shape"),
    15764: ("vllm/model_executor/models/utils.py", "_merge_multimodal_embeddings"),
    16118: ("vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory"),
    17579: ("vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_moe.py", "create_weights"),
    32599: ("vllm/lora/utils.py", "parse_fine_tuned_lora_name"),
    # a NameError the interpreter raises inside vLLM's code: there is no raise statement to find
    4229: None,
}


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
        if issue.number in JUDGED:
            expected = JUDGED[issue.number]
        elif where is not None:
            expected = (where, innermost.function or "")
        else:
            expected = None
        sites = [(m.file, m.line, m.site.function, m.release.version, m.at_release) for m in res.matches]
        line = f"#{issue.number} {root.type}: {root.first_line[:100]} v={version}"
        if expected is None:
            counts["not vLLM's error"] += 1
            if res.matches:
                counts["not vLLM's error, resolved anyway"] += 1
                if show:
                    print(f"{line}\n    FALSE -> {sites[:3]}", file=out)
            continue
        counts["vllm raises it"] += 1
        counts["vllm raises it (by frame)"] += issue.number not in JUDGED
        if not res.matches:
            if show:
                print(f"{line}\n    UNRESOLVED, raised at {expected}", file=out)
            continue
        counts["resolved"] += 1
        counts["resolved to one site"] += len(res.matches) == 1
        counts["at the reporter's release"] += any(m.at_release for m in res.matches)
        file, function = expected
        if not any(m.file == file and (not function or m.site.function == function) for m in res.matches):
            counts["wrong site"] += 1
            if show:
                print(f"{line}\n    WRONG -> {sites[:3]}, raised at {expected}", file=out)
    keys = ("issues", "with a root-cause exception", "vllm raises it", "vllm raises it (by frame)", "resolved",
            "resolved to one site", "at the reporter's release", "wrong site", "not vLLM's error",
            "not vLLM's error, resolved anyway")
    out_counts: dict[str, float] = {k: counts[k] for k in keys}
    out_counts["resolved share"] = round(counts["resolved"] / (counts["vllm raises it"] or 1), 3)
    return out_counts


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
