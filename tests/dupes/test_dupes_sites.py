"""'Same raise site' as a duplicate signal: the source index's site of the root cause as a `site:` key that survives
the line moving, other values in the message's holes and a quote in the title instead of a traceback."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bot.cli import main
from bot.dupes.document import build_doc, doc_from_meta, doc_meta
from bot.dupes.index import DuplicateIndex
from bot.dupes.scoring import DEFAULT_POLICY, Match, combine, compare, reason
from bot.dupes.signature import site_key, site_keys
from bot.report import parse
from bot.report.model import RaiseSite
from bot.sources.locate import locate
from bot.stores.dupes import open_index_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sources.small import small_index, small_store  # noqa: E402

SITE = RaiseSite(id="a1", file="vllm/moe.py", line=3, end_line=6, qualname="map_unquantized_backend", kind="raise",
                 type="ValueError", message="moe_backend='{runner_backend}' is not supported for unquantized MoE.",
                 release="2.0", at_release=True, reporter_release="2.0", first="2.0", last="2.0", releases=1,
                 newest="2.0", raised_after=False, of="exception", by="message")


def test_the_key_names_the_statement_not_its_line_or_release():
    key = site_key(SITE)
    assert key.startswith("site:vllm/moe.py:map_unquantized_backend:")
    assert site_key(replace(SITE, id="b2", line=40, release="3.0", of="title")) == key
    assert site_key(replace(SITE, message="moe_backend={b} is unsupported.")) != key
    assert site_key(replace(SITE, qualname="other")) != key


def test_wrapper_and_logged_sites_give_no_key_and_tied_sites_give_each_theirs():
    report = parse("[Bug]: x", "")
    assert site_keys(replace(report, sites=(replace(SITE, wrapper=True),))) == ()
    assert site_keys(replace(report, sites=(replace(SITE, kind="log", type="error"),))) == ()
    other = replace(SITE, id="c3", file="vllm/moe_b.py")
    assert site_keys(replace(report, sites=(SITE, other))) == (site_key(SITE), site_key(other))


def test_the_key_is_a_lookup_key_and_survives_the_store():
    doc = build_doc(replace(parse("[Bug]: x", ""), sites=(SITE,)))
    assert site_key(SITE) in doc.keys
    assert doc_from_meta(doc.vector, doc_meta(doc)).sites == (site_key(SITE),)


def test_the_same_site_counts_like_the_same_error_and_says_where():
    a = build_doc(replace(parse("[Bug]: moe fails", ""), sites=(SITE,)))
    b = build_doc(replace(parse("[Bug]: start fails", ""), sites=(replace(SITE, line=9),)))
    m = compare(a, b, text=0.4)
    assert m.site == site_key(SITE) and m.signature is None and m.strong
    assert combine(m) == combine(Match(text=0.4, signature=None, site="k")) >= DEFAULT_POLICY.threshold
    assert combine(Match(text=0.1, site="k")) < DEFAULT_POLICY.threshold  # it still needs some shared wording
    assert "same error raised in vLLM at vllm/moe.py: map_unquantized_backend" in reason(m)
    conflict = replace(m, rule_conflict=True)
    assert combine(conflict) == DEFAULT_POLICY.w_text * 0.4  # two different diagnoses: a near miss


ENV = "### Your current environment\n\n```text\nvLLM Version                 : 2.0\n```\n\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return small_index(tmp_path_factory.mktemp("sdists"))


def test_a_report_quoting_the_message_in_its_title_finds_one_with_other_values_in_a_traceback(index):
    earlier = ("[Bug]: serving an unquantized MoE model fails at startup",
               ENV + "### 🐛 Describe the bug\n\nThe server stops while loading the MoE layers of an unquantized "
               "checkpoint.\n\n```\nValueError: moe_backend='marlin' is not supported for unquantized MoE. "
               "Expected one of ['triton', 'cutlass'].\n```\n")
    later = ("[Bug]: moe_backend='flashinfer' is not supported for unquantized MoE",
             ENV + "### 🐛 Describe the bug\n\nStarting the server on an unquantized MoE checkpoint stops while "
             "loading the layers.\n")

    def linked(sources) -> tuple[Match, float]:
        dupes = DuplicateIndex()
        dupes.add(1, locate(sources, parse(*earlier)), created_at="2024-07-01T00:00:00Z")
        [(m, _)] = dupes.candidates(build_doc(locate(sources, parse(*later))), exclude=2)
        return m, combine(m)

    without, score_without = linked(None)
    assert without.signature is None and without.site is None and score_without < DEFAULT_POLICY.threshold
    with_index, score = linked(index)
    assert with_index.site is not None and with_index.site.startswith("site:vllm/moe.py:map_unquantized_backend:")
    assert score >= DEFAULT_POLICY.threshold


def test_index_of_an_export_keys_each_issue_by_its_site(tmp_path):
    small_store(tmp_path / "sources.sqlite3", tmp_path / "sdists").close()
    title = "[Bug]: moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton']"
    export = tmp_path / "issues.jsonl"
    export.write_text(json.dumps({"number": 7, "title": title, "body": ENV, "state": "open",
                                  "created_at": "2024-07-01T00:00:00Z"}) + "\n")
    key = site_key(locate(small_index(tmp_path / "sdists2"), parse(title, ENV)).site)
    for sources, found in (("none", []), (str(tmp_path / "sources.sqlite3"), [7])):
        db = tmp_path / f"dupes-{found}.sqlite3"
        assert main(["index", str(export), "--db", str(db), "--sources", sources]) == 0
        index = open_index_file(db)
        try:
            assert list(index.store.numbers_by_key([key]).get(key, [])) == found
        finally:
            index.close()
