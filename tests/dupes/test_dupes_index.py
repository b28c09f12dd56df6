from dupes_reports import ENV_DUMP, finding, pp_draft_report, pp_target_report, report

from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.dupes.document import build_doc
from bot.stores.dupes.sqlite import SqliteIndexStore

PP_DRAFT = (finding("pp-with-draft-model-without-pp"),)
PP_TARGET = (finding("pp-model-not-supported"),)


def unrelated(i: int):
    topics = ["tool calling with hermes parser returns empty arguments", "AWQ checkpoint loads slowly on ROCm",
              "benchmark throughput regression between releases", "LoRA adapter rank 64 rejected",
              "docker image missing flash attention wheel", "multimodal image embeddings wrong shape"]
    return report(f"[Bug]: {topics[i % len(topics)]} #{i}", ENV_DUMP + f"\nDetails for case {i}: "
                  + topics[(i + 1) % len(topics)])


def fill(index):
    for i in range(12):
        index.add(100 + i, unrelated(i), (), state="closed", created_at=f"2025-01-{i + 1:02d}T00:00:00Z")


def test_empty_index_finds_nothing(index):
    assert index.search(pp_draft_report(), PP_DRAFT) == ()


def test_finds_the_earlier_report_of_the_same_failure(index):
    fill(index)
    index.add(200, pp_draft_report(), PP_DRAFT, state="closed", url="https://github.com/vllm-project/vllm/issues/200")
    found = index.search(pp_draft_report("deepseek-ai/DeepSeek-V3.2"), PP_DRAFT, exclude=300)
    assert [c.number for c in found] == [200]
    c = found[0]
    assert c.state == "closed" and c.url.endswith("/200") and 0 < c.score <= 1
    assert "same error: NotImplementedError: Pipeline parallelism" in c.reason
    assert "--speculative-config" in c.reason


def test_near_miss_is_not_linked(index):
    fill(index)
    index.add(200, pp_target_report(), PP_TARGET)
    assert index.search(pp_draft_report(), PP_DRAFT) == ()
    # an undiagnosed report with the same error is a candidate again: nothing contradicts it
    index.add(201, pp_target_report(), ())
    assert {c.number for c in index.search(pp_target_report("x/Other-Model"), ())} == {200, 201}


def test_unrelated_report_links_nothing(index):
    fill(index)
    index.add(200, pp_draft_report(), PP_DRAFT)
    assert index.search(report("[Bug]: Whisper transcription returns garbage for long audio", ENV_DUMP), ()) == ()


def test_exclude_and_limit(index):
    fill(index)
    for n in (200, 201, 202, 203):
        index.add(n, pp_draft_report(), PP_DRAFT)
    found = index.search(pp_draft_report(), PP_DRAFT, exclude=203, limit=3)
    assert len(found) == 3 and 203 not in [c.number for c in found]


def test_edit_replaces_the_earlier_version(index):
    fill(index)
    index.add(200, report("[Bug]: placeholder", "will fill in later"), ())
    assert index.search(pp_draft_report(), PP_DRAFT) == ()
    index.add(200, pp_draft_report(), PP_DRAFT)          # issue edited
    assert [c.number for c in index.search(pp_draft_report(), PP_DRAFT)] == [200]
    assert len(index) == 13
    index.add(200, unrelated(3), ())                      # edited again, now about something else
    assert index.search(pp_draft_report(), PP_DRAFT) == ()


def test_closed_as_duplicate_redirects_to_the_original(index):
    fill(index)
    index.add(200, pp_draft_report(), PP_DRAFT, state="closed")
    index.add(201, pp_draft_report("zai-org/GLM-4.6"), PP_DRAFT, state="closed", duplicate_of=200)
    index.add(202, pp_draft_report("moonshotai/Kimi-K2"), PP_DRAFT)
    index.mark_duplicate(202, 200)
    found = index.search(pp_draft_report(), PP_DRAFT)
    assert [c.number for c in found] == [200]
    assert found[0].via in (None, 201, 202)


def test_sqlite_index_persists_and_batches(tmp_path):
    path = tmp_path / "persist.db"
    idx = DuplicateIndex(SqliteIndexStore(path))
    with idx.batch():
        fill(idx)
        idx.add(200, pp_draft_report(), PP_DRAFT)
        idx.add(200, pp_draft_report(), PP_DRAFT)          # re-added inside the batch
        assert len(idx) == 13
    idx.close()
    again = DuplicateIndex(SqliteIndexStore(path))
    assert len(again) == 13
    assert [c.number for c in again.search(pp_draft_report(), PP_DRAFT)] == [200]
    again.close()


def test_stores_agree(tmp_path):
    mem, sql = DuplicateIndex(MemoryIndexStore()), DuplicateIndex(SqliteIndexStore(tmp_path / "a.db"))
    for idx in (mem, sql):
        fill(idx)
        idx.add(200, pp_draft_report(), PP_DRAFT)
    doc = build_doc(pp_draft_report("a/B"), PP_DRAFT)
    a = [(s.candidate.number, s.candidate.score) for s in mem.search_doc(doc, near_misses=True)]
    b = [(s.candidate.number, s.candidate.score) for s in sql.search_doc(doc, near_misses=True)]
    assert a == b and a


# -- the chronological view (replay over a reused index that already holds later issues) -----------------
LATER = "2025-03-{:02d}T00:00:00Z"


def test_earlier_duplicate_is_found_behind_many_later_ones_with_the_same_keys(index):
    """Later reports of the same failure (more than the per-key budget) must not take the candidate slots."""
    fill(index)
    index.add(120, pp_draft_report(), PP_DRAFT, state="closed", created_at="2025-01-20T00:00:00Z")
    with index.batch():
        for i in range(60):
            index.add(400 + i, pp_draft_report(f"org{i}/Model-{i}"), PP_DRAFT, created_at=LATER.format(i % 28 + 1))
    before = ("2025-02-01T00:00:00Z", 300)
    found = index.search(pp_draft_report("deepseek-ai/DeepSeek-V3.2"), PP_DRAFT, exclude=300, before=before)
    assert [c.number for c in found] == [120]
    # the unfiltered view (the live bot) still prefers the newest
    assert all(c.number >= 400 for c in index.search(pp_draft_report("deepseek-ai/DeepSeek-V3.2"), PP_DRAFT))


def wording_report(extra: str = ""):
    return report("[Bug]: streaming chat completions drop the last chunk when stop strings overlap the tokenizer "
                  "boundary", "Streaming responses from the chat endpoint lose the final delta whenever a stop "
                  "string spans two detokenizer increments; the non-streaming response is complete. Seen with "
                  "several tokenizers and both sampling presets." + extra)


def test_earlier_duplicate_is_found_behind_many_later_ones_with_the_same_words(index):
    """The same for the term candidates: later issues sharing the query's rarest words, scoring higher."""
    fill(index)
    index.add(120, wording_report(), (), created_at="2025-01-20T00:00:00Z")
    with index.batch():
        for i in range(40):
            index.add(400 + i, wording_report(" Streaming stop string detokenizer overlap chunk boundary." * 2), (),
                      created_at=LATER.format(i % 28 + 1))
    before = ("2025-02-01T00:00:00Z", 300)
    assert [c.number for c in index.search(wording_report(), (), exclude=300, before=before)] == [120]


def test_chronological_index_uses_creation_order_not_numbers(index):
    """Replay's view: 'earlier' is (created_at, number); an issue numbered above the query but created before
    it (a transferred issue) is a candidate, one numbered below but created after is not."""
    from bot.dupes.history import ChronologicalIndex
    from bot.export import IssueRecord

    records = [IssueRecord(500, "moved here", "", created_at="2025-01-15T00:00:00Z"),
               IssueRecord(300, "query", "", created_at="2025-02-01T00:00:00Z"),
               IssueRecord(250, "late", "", created_at="2025-02-10T00:00:00Z")]
    chrono = ChronologicalIndex(index, records)
    fill(index)
    with index.batch():
        for i in range(60):
            chrono.add(600 + i, pp_draft_report(f"org{i}/Model-{i}"), PP_DRAFT, created_at=LATER.format(i % 28 + 1))
        chrono.add(500, pp_draft_report(), PP_DRAFT, created_at="2025-01-15T00:00:00Z")
        chrono.add(250, pp_draft_report("zai-org/GLM-4.6"), PP_DRAFT, created_at="2025-02-10T00:00:00Z")
    found = chrono.search(pp_draft_report("deepseek-ai/DeepSeek-V3.2"), PP_DRAFT, exclude=300)
    assert [c.number for c in found] == [500]


def test_unsupported_architectures_link_only_to_the_same_architecture(index):
    from bot.report import parse
    from bot.rules import load_rules

    rules = load_rules()

    def unsupported(arch: str, who: str):
        body = f"""### Your current environment

vLLM 0.4.2 on an A100 box ({who}).

### 🐛 Describe the bug

```
ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: ['LlamaForCausalLM']
```
"""
        r = parse(f"[Bug]: cannot serve my {arch} checkpoint", body)
        return r, tuple(rules.evaluate(r))

    fill(index)
    index.add(300, *unsupported("ZetaForCausalLM", "lab A"), created_at="2025-02-01T00:00:00Z")
    index.add(301, *unsupported("OrcaVLForConditionalGeneration", "lab B"), created_at="2025-02-02T00:00:00Z")
    found = index.search(*unsupported("ZetaForCausalLM", "lab C"))
    assert [c.number for c in found] == [300]


REPOST = """### 🐛 Describe the bug

Starting the server on our eight-card box fails every time, right after the weights are loaded:

```
vllm serve /models/Orca-MoE-400B --tensor-parallel-size 8 --max-model-len 2048 --enable-expert-parallel
(APIServer pid=4410) INFO 03-11 09:12:40 [api_server.py:1300] vLLM API server version 0.13.0
(APIServer pid=4410) INFO 03-11 09:12:40 [utils.py:250] non-default args: {'tensor_parallel_size': 8}
(APIServer pid=4410) INFO 03-11 09:12:45 [model.py:514] Resolved architecture: OrcaMoeForCausalLM
(EngineCore_DP0 pid=4501) INFO 03-11 09:14:02 [gpu_model_runner.py:3000] Model loading took 48.1 GiB
```

We tried two different nodes with the same result; the process exits without any message after this.
"""


def test_a_re_filed_report_links_to_the_first_filing_whatever_its_title(index):
    fill(index)
    index.add(400, report("[Bug]: Orca-MoE-400B does not start", REPOST), (), created_at="2025-03-11T00:00:00Z")
    found = index.search(report("[Bug]: is the RTX PRO 6000 not supported for Orca MoE?", REPOST), ())
    assert [c.number for c in found] == [400]
    assert found[0].reason.startswith("same description")


def test_short_or_template_only_descriptions_are_not_a_shared_description(index):
    form = "📄 **Reference:**\nhttps://docs.vllm.ai/en/latest/\n\n📝 **Feedback:**\n_Your response_"
    index.add(500, report("[Docs] Feedback for `/en/latest/`", form), ())
    assert build_doc(report("[Docs] Feedback for `/en/latest/`", form)).body_key == ""
    assert index.search(report("[Docs] Feedback for `/en/stable/`", form), ()) == ()
