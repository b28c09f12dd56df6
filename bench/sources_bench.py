"""The raise-site index: build time per release, size, load time, and match time per issue with every release.

    .venv/bin/python -m bench.sources_bench [--db PATH] [--runs N] [--issues ISSUES.jsonl]

Reads an index built beforehand (`vllm-triage sources build`; the build's own per-release times are recorded in
it). Match time per issue: every query the report gives (the root-cause exception, its first line, error lines,
the title: bot/sources/resolve.py) tried in order until one resolves, as triage would; over messages written here
in the shape of real vLLM errors (and of other libraries' errors, which must not resolve), and over the dev set's
issues read at run time when the file is there.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

from bot.report import parse
from bot.sources.index import SourceIndex
from bot.sources.resolve import resolve

DEVSET = Path("/work/shared/devset/issues.jsonl")

# (title, body) in the shape of real reports: vLLM's own errors at several releases, cut short, quoted in titles,
# and errors from torch, transformers and CUDA that vLLM does not raise
WRITTEN = [
    ("[Bug]: engine fails to start", "vLLM Version: 0.6.3\nValueError: The model's max seq len (131072) is larger "
     "than the maximum number of tokens that can be stored in KV cache (54320). Try increasing "
     "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),
    ("[Bug]: no memory", "vLLM Version: 0.5.4\nValueError: No available memory for the cache blocks. Try increasing "
     "`gpu_memory_utilization` when initializing the engine."),
    ("[Bug]: T4 bf16", "vllm 0.4.2\nValueError: Bfloat16 is only supported on GPUs with compute capability of at least "
     "8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the"
     "`dtype` flag in CLI, for example: --dtype=half."),
    ("[Bug]: tp=3", "vLLM Version: 0.8.5\nValueError: Total number of attention heads (32) must be divisible by tensor "
     "parallel size (3)."),
    ("[Bug]: Qwen3.5 does not work with pipeline parallelism", "vLLM Version: 0.17.0\n"
     "NotImplementedError: Pipeline parallelism is not supported for this model. Supported models implement the "
     "`SupportsPP` interface."),
    ("ValueError: moe_backend='marlin' is not supported for unquantized MoE", "version 0.17.0"),
    ("[Bug]: unsupported arch", "vllm 0.6.1\nValueError: Model architectures ['FooForCausalLM'] are not supported for "
     "now. Supported architectures: ['AquilaModel', 'AquilaForCausalLM', 'BaiChuanForCausalLM']"),
    ("[Bug]: marlin shape", "vLLM Version: 0.6.4\nValueError: Weight input_size_per_partition = 7392 is not divisible "
     "by min_thread_k = 128. Consider reducing tensor_parallel_size or running with --quantization gptq."),
    ("[Bug]: lora", "vLLM Version: 0.7.2\nValueError: base_model.model.lm_head.weight is unsupported LoRA weight"),
    ("[Bug]: cut", "vLLM Version: 0.9.1\nValueError: The model's max seq len (32768) is larger than the maximum "
     "number of tokens that can be stored in KV cache (1"),
    ("[Bug]: chat template", "vLLM Version: 0.6.0\nValueError: As of transformers v4.44, default chat template is no "
     "longer allowed, so you must provide a chat template if the tokenizer does not define one."),
    ("[Bug]: trust remote code", "vLLM Version: 0.5.0\nValueError: Loading deepseek-ai/DeepSeek-V2-Lite requires you "
     "to execute the configuration file in that repo on your local machine. Make sure you have read the code "
     "there to avoid malicious use, then set the option `trust_remote_code=True` to remove this error."),
    ("[Bug]: OOM", "vLLM Version: 0.10.1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
     "GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free."),
    ("[Bug]: fork", "vLLM Version: 0.4.0\nRuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
     "with multiprocessing, you must use the 'spawn' start method"),
    ("[Bug]: transformers", "vLLM Version: 0.6.3\nValueError: The checkpoint you are trying to load has model type "
     "`qwen3` but Transformers does not recognize this architecture."),
    ("[Feature]: support T5", "Please add support for T5 encoder-decoder models. Thanks!"),
    ("[Usage]: how to get hidden states", "I want the last hidden state of a causal LM with LLM.generate."),
]


def _issues(path: Path) -> list[tuple[str, str, str]]:
    if not path.exists():
        return []
    from bot.export import read_export

    return [(i.title, i.body, i.created_at) for i in read_export(str(path)) if hasattr(i, "number")]


def time_issues(index: SourceIndex, issues: list[tuple[str, str, str | None]], runs: int) -> dict[str, float]:
    """Per-issue resolve time: wall clock, and this process's CPU time (what it costs on a machine others share)."""
    reports = [(parse(title, body), created) for title, body, created in issues]
    wall: list[float] = []
    cpu: list[float] = []
    resolved = 0
    for run in range(runs):
        for report, created in reports:
            start, start_cpu = time.perf_counter(), time.process_time()
            found = resolve(index, report, created)
            cpu.append(time.process_time() - start_cpu)
            wall.append(time.perf_counter() - start)
            if run == 0:
                resolved += found is not None
    wall.sort()
    cpu.sort()

    def p99(xs: list[float]) -> float:
        return 1e3 * xs[min(len(xs) - 1, int(0.99 * len(xs)))]

    return {"issues": len(reports), "resolved": resolved, "p50_ms": 1e3 * statistics.median(wall),
            "p99_ms": p99(wall), "max_ms": 1e3 * wall[-1], "cpu_p50_ms": 1e3 * statistics.median(cpu),
            "cpu_p99_ms": p99(cpu)}


def time_builds(package: str, versions: list[str]) -> list[tuple[str, int, int, float, float, float]]:
    """(version, modules, sites, download s, read wall s, read CPU s) for releases read afresh, one at a time,
    without the module cache a build's workers keep."""
    import tempfile

    from bot.sources.build import read_release
    from bot.sources.sdists import IndexClient, pip_index

    client = IndexClient(pip_index())
    available = client.list_sdists(package)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for version in versions:
            start = time.perf_counter()
            archive = client.download(available[version], Path(tmp))
            downloaded = time.perf_counter() - start
            start, start_cpu = time.perf_counter(), time.process_time()
            result = read_release(package, available[version], archive)
            out.append((version, result.modules, len(result.sites), downloaded, time.perf_counter() - start,
                        time.process_time() - start_cpu))
            archive.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, help="the source index (default: the data dir's)")
    p.add_argument("--package", default="vllm")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--issues", type=Path, default=DEVSET)
    p.add_argument("--build-sample", default="0.6.3,0.17.0,0.33.0", metavar="VERSIONS",
                   help="releases to download and read afresh, timed one at a time ('' to skip)")
    args = p.parse_args(argv)
    from bot.stores.sources.sqlite import SqliteSourceStore

    if args.db is None:
        from bench.sources_devset import default_db

        args.db = default_db()
    if not args.db.exists():
        print(f"sources_bench: no index at {args.db}: build it with `vllm-triage sources build`", file=sys.stderr)
        return 2
    store = SqliteSourceStore(args.db)
    releases = store.releases(args.package)
    size = store.size()
    start, start_cpu = time.perf_counter(), time.process_time()
    index = store.load(args.package)
    load_s, load_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    store.close()
    start, start_cpu = time.perf_counter(), time.process_time()
    index.prepare()
    prepare_s, prepare_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    gc.freeze()  # as serve and replay do after start-up: the index's objects are never collected
    if not releases:
        print("sources_bench: the index holds no release", file=sys.stderr)
        return 2

    print(f"## Source index: {args.package}, {len(releases)} releases ({releases[0].version} .. "
          f"{releases[-1].version})\n")
    per = sorted(r.seconds for r in releases)
    big = max(releases, key=lambda r: r.sites)
    print("| build (download + read in a worker, as recorded by `sources build`) | seconds |\n|---|---:|")
    print(f"| median per release | {statistics.median(per):.1f} |")
    print(f"| slowest release | {per[-1]:.1f} |")
    print(f"| all releases, summed | {sum(per):.0f} |")
    print(f"| largest release ({big.version}: {big.modules} modules, {big.sites} sites) | {big.seconds:.1f} |\n")
    sample = [v.strip() for v in args.build_sample.split(",") if v.strip()]
    if sample:
        print("| release read afresh | modules | sites | download s | read s (wall) | read s (CPU) |")
        print("|---|---:|---:|---:|---:|---:|")
        for version, modules, sites, down, wall, cpu in time_builds(args.package, sample):
            print(f"| {version} | {modules} | {sites} | {down:.1f} | {wall:.1f} | {cpu:.1f} |")
        print()
    per_release = sum(r.sites for r in releases)
    templates = len({s.template for s in index.sites.values()})
    print("| size | |\n|---|---:|")
    print(f"| sites summed over releases | {per_release:,} |")
    print(f"| distinct sites (one row each, a line per release) | {len(index):,} |")
    print(f"| distinct templates | {templates:,} |")
    print(f"| module texts kept (distinct) | {size['source_texts']:,} |")
    print(f"| SQLite file | {size.get('bytes', 0) / 1e6:.1f} MB |")
    print(f"| load into memory (wall / CPU) | {load_s:.2f} s / {load_cpu:.2f} s |")
    print(f"| prepare every template for fitting, `SourceIndex.prepare` (wall / CPU) | {prepare_s:.2f} s / "
          f"{prepare_cpu:.2f} s |\n")

    sets = {"written errors": [(t, b, None) for t, b in WRITTEN]}
    devset = _issues(args.issues)
    if devset:
        sets["dev set issues"] = devset
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| match per issue (all queries of a report) | issues | resolved | p50 ms | p99 ms | max ms | CPU p50 ms "
          "| CPU p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, issues in sets.items():
        r = time_issues(index, issues, args.runs)
        print(f"| {name} | {r['issues']} | {r['resolved']} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | "
              f"{r['max_ms']:.3f} | {r['cpu_p50_ms']:.3f} | {r['cpu_p99_ms']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
