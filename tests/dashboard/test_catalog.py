"""The error catalog: one entry per rule, in the shape of an error-explainer page."""

from __future__ import annotations

import pytest

from bot.dashboard.catalog import Catalog, build_entry, condition_tree, reference
from bot.rules import load_rules


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog(load_rules())


def test_every_rule_has_a_complete_entry(catalog):
    assert catalog.ids()
    for rid in catalog.ids():
        e = catalog.entry(rid)
        assert e.message, rid                    # every rule's first example shows the error it diagnoses
        assert e.meaning.strip() and e.solutions.strip(), rid
        assert e.example_fix.strip(), rid        # the workaround computed for the example report
        assert e.trigger["op"] or e.trigger["text"], rid
        assert rid not in {r for r, _ in e.related}
    with_related = [rid for rid in catalog.ids() if catalog.entry(rid).related]
    assert len(with_related) >= 0.95 * len(catalog.ids())


def test_pp_entry_reads_like_an_error_explainer(catalog):
    e = catalog.entry("pp-with-draft-model-without-pp")
    assert "Pipeline parallelism is not supported" in e.message
    assert e.raised_in.startswith("vllm/config/")
    assert e.source_url == "https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py"
    assert e.example_command and "--pipeline-parallel-size" in e.example_command
    assert "--tensor-parallel-size" in e.example_fix
    # the generic texts do not invent flag values for a report that gave none
    assert "--speculative-config '" not in e.solutions
    j = e.as_json([{"number": 1}])
    assert j["example_fix"]["before"] == e.example_command and j["matched_issues"] == [{"number": 1}]
    assert {"message", "meaning", "raised_in", "solutions", "when", "related", "affects", "fixed_in"} <= set(j)


def test_versions_and_supersedes_are_shown():
    rules = load_rules()
    versioned = [r for r in rules.rules if r.fixed_in is not None or r.affects is not None]
    if versioned:
        e = build_entry(versioned[0], rules)
        assert e.fixed_in or e.affects
    superseding = next(r for r in rules.rules if r.supersedes)
    e = build_entry(superseding, rules)
    assert set(e.supersedes) == set(superseding.supersedes)
    assert e.related[0][0] in superseding.supersedes
    other = build_entry(rules.get(superseding.supersedes[0]), rules)
    assert superseding.id in other.superseded_by


def test_condition_tree_and_references():
    rules = load_rules()
    tree = condition_tree(rules.get("pp-with-draft-model-without-pp").match)
    assert tree["op"] == "all of" and any("NotImplementedError" in (c["text"] or "") for c in tree["children"])
    assert reference("vllm-project/vllm#36643").url == "https://github.com/vllm-project/vllm/issues/36643"
    assert reference("https://docs.vllm.ai/en/latest/").url == "https://docs.vllm.ai/en/latest/"
    assert reference("javascript:alert(1)").url is None
    assert reference("see the docs").url is None
