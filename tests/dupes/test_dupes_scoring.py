from dupes_reports import finding, pp_draft_report, pp_target_report

from bot.dupes.document import build_doc
from bot.dupes.scoring import DEFAULT_POLICY, Match, Policy, bm25, combine, compare, idf, reason, self_score


def test_bm25_prefers_rare_terms_and_self_score_bounds_it():
    idfs = {"xgrammar": idf(2, 1000), "model": idf(900, 1000)}
    q = {"xgrammar": 1.0, "model": 1.0}
    assert bm25(q, {"xgrammar": 1.0}, idfs) > bm25(q, {"model": 1.0}, idfs)
    assert abs(bm25(q, q, idfs) - self_score(q, idfs)) < 1e-9
    assert bm25(q, {"xgrammar": 1.0}, idfs) <= self_score(q, idfs)


def test_text_alone_needs_a_very_high_similarity():
    assert combine(Match(text=0.5)) < DEFAULT_POLICY.threshold
    assert combine(Match(text=0.95)) >= DEFAULT_POLICY.threshold


def test_same_diagnosis_links_by_itself():
    assert combine(Match(text=0.0, shared_rules=("missing-chat-template",))) >= DEFAULT_POLICY.threshold


def test_same_error_needs_some_shared_wording():
    from bot.dupes.signature import Signature

    sig = Signature("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate <size>")
    assert combine(Match(text=0.45, signature=sig)) >= DEFAULT_POLICY.threshold
    assert combine(Match(text=0.1, signature=sig)) < DEFAULT_POLICY.threshold


def test_near_miss_same_error_different_diagnosis_is_not_linked_on_the_error():
    draft = build_doc(pp_draft_report(), (finding("pp-with-draft-model-without-pp"),))
    target = build_doc(pp_target_report(), (finding("pp-model-not-supported"),))
    m = compare(draft, target, text=0.45)
    assert m.signature is not None and m.rule_conflict
    assert combine(m) == DEFAULT_POLICY.w_text * 0.45 < DEFAULT_POLICY.threshold
    assert combine(m, Policy(veto_rule_conflict=False)) >= DEFAULT_POLICY.threshold


def test_same_error_same_diagnosis_links_with_a_readable_reason():
    a = build_doc(pp_draft_report(), (finding("pp-with-draft-model-without-pp"),))
    b = build_doc(pp_draft_report("deepseek-ai/DeepSeek-V3.2"), (finding("pp-with-draft-model-without-pp"),))
    m = compare(a, b, text=0.4, shared_terms=("pipeline", "mtp"))
    assert combine(m) >= DEFAULT_POLICY.threshold
    why = reason(m)
    assert why.startswith("same error: NotImplementedError: Pipeline parallelism is not supported")
    assert "same diagnosis: pp-with-draft-model-without-pp" in why
    assert "both use --pipeline-parallel-size and --speculative-config" in why


def test_reason_cannot_mention_people_or_inject_html():
    from bot.dupes.signature import Signature

    m = Match(text=0.9, signature=Signature("ValueError", "x", (), "ping @octocat <img src=x> ```"))
    why = reason(m)
    assert "@octocat" not in why and "<img" not in why and "```" not in why


def _doc_of(title: str, body: str):
    from bot.report import parse

    return build_doc(parse(title, body))


def test_near_empty_reports_do_not_link_on_wording_alone():
    # a bare title over an empty template: every earlier report repeating its three words would be "100 % similar"
    bare = _doc_of("[Installation]: Failed building wheel for vllm", "### Your current environment\n")
    assert len(bare.vector) < DEFAULT_POLICY.min_text_terms
    earlier = _doc_of("pip install fails: Failed building wheel for vllm",
                      "Building wheel for vllm (pyproject.toml) ... error on Ubuntu 22.04 with CUDA 12.1")
    m = compare(bare, earlier, text=1.0)
    assert not m.strong
    assert combine(m) < DEFAULT_POLICY.threshold
    # a report with real content still links on very similar wording
    assert combine(Match(text=0.95, query_terms=40)) >= DEFAULT_POLICY.threshold


def test_a_strong_signal_is_not_scaled_down_for_short_reports():
    from bot.dupes.signature import Signature

    sig = Signature("ValueError", "Bfloat16 is only supported on GPUs with compute capability of at least <num>")
    assert combine(Match(text=0.5, signature=sig, query_terms=4)) >= DEFAULT_POLICY.threshold


def keyed(rule: str, key: str | None):
    from dataclasses import replace
    return replace(finding(rule), duplicate_key=key)


def test_same_rule_with_different_duplicate_keys_is_a_near_miss_not_a_diagnosis_in_common():
    a = build_doc(pp_target_report(), (keyed("architecture-not-supported", "fooforcausallm"),))
    b = build_doc(pp_target_report("x/Other-Model"), (keyed("architecture-not-supported", "barlm"),))
    m = compare(a, b, text=0.45)
    assert m.shared_rules == () and m.rule_conflict
    assert combine(m) < DEFAULT_POLICY.threshold


def test_same_rule_and_same_key_or_an_unknown_key_is_shared():
    a = build_doc(pp_target_report(), (keyed("architecture-not-supported", "fooforcausallm"),))
    same = build_doc(pp_target_report("x/Other-Model"), (keyed("architecture-not-supported", "fooforcausallm"),))
    unknown = build_doc(pp_target_report("x/Third"), (keyed("architecture-not-supported", None),))
    for other in (same, unknown):
        m = compare(a, other, text=0.0)
        assert m.shared_rules == ("architecture-not-supported",)
        assert combine(m) >= DEFAULT_POLICY.threshold
        assert "same diagnosis: architecture-not-supported" in reason(m)
    assert "rule:architecture-not-supported" in a.keys   # retrieval by rule id, whatever the key


def generic(rule: str):
    from dataclasses import replace
    return replace(finding(rule), confidence=0.55)


def test_a_generic_diagnosis_weighs_like_a_shared_error_not_a_root_cause():
    # a catch-all finding (CUDA OOM outside the phases other rules name) says what failed, not why
    a = build_doc(pp_target_report(), (generic("cuda-out-of-memory"),))
    b = build_doc(pp_target_report("x/Other-Model"), (generic("cuda-out-of-memory"),))
    assert a.rules == ("~cuda-out-of-memory",) and "rule:cuda-out-of-memory" in a.keys
    thin = compare(a, b, text=0.1)
    assert thin.shared_rules == ("cuda-out-of-memory",) and thin.generic_rules
    assert combine(thin) < DEFAULT_POLICY.threshold
    assert "same diagnosis: cuda-out-of-memory" in reason(thin)
    worded = compare(a, b, text=0.45)
    assert combine(worded) >= DEFAULT_POLICY.threshold


def test_a_diagnosis_generic_on_one_side_only_is_still_shared_but_generic():
    a = build_doc(pp_target_report(), (generic("nccl-collective-timeout"),))
    b = build_doc(pp_target_report("x/Other-Model"), (finding("nccl-collective-timeout"),))
    m = compare(a, b, text=0.1)
    assert m.shared_rules == ("nccl-collective-timeout",) and not m.rule_conflict and m.generic_rules
    assert combine(m) < DEFAULT_POLICY.threshold


def test_a_specific_diagnosis_beside_a_generic_one_still_links_by_itself():
    a = build_doc(pp_target_report(), (generic("cuda-out-of-memory"), finding("cuda-oom-loading-model")))
    b = build_doc(pp_target_report("x/Other-Model"), (generic("cuda-out-of-memory"), finding("cuda-oom-loading-model")))
    m = compare(a, b, text=0.0)
    assert not m.generic_rules
    assert combine(m) >= DEFAULT_POLICY.threshold
