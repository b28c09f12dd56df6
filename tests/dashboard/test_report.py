"""`vllm-triage replay --html`: the self-contained report, its clusters and its agreement with maintainers' labels."""

from __future__ import annotations

import re

from bot.cli import main
from bot.dashboard.labelmap import topic_of
from bot.dashboard.report import Row, agreement, clusters

from .export import XSS_TITLE, write_export


def row(number: int, labels=(), gold=(), dups=()) -> Row:
    return Row(number=number, title=f"t{number}", url=None, kind="bug", labels=tuple(labels),
               maintainer_labels=tuple(gold), diagnoses=(), duplicates=tuple((d, 0.9, "r") for d in dups),
               needs_info=(), version=None, error=None)


def test_label_names_map_to_topics():
    assert topic_of("new model") == topic_of("new-model") == "new-model"
    assert topic_of("ROCm") == "rocm" and topic_of("Installation") == "installation"
    assert topic_of("bug") is None and topic_of("stale") is None


def test_agreement_scores_only_topics_the_maintainers_use():
    rows = [row(1, ["rocm", "memory"], ["bug", "rocm"]), row(2, ["rocm"], []), row(3, [], ["new model"]),
            row(4, ["new-model"], ["new-model"])]
    a = agreement(rows)
    by_topic = {s.topic: s for s in a.topics}
    assert set(by_topic) == {"rocm", "new-model"}                 # memory: no maintainers' label, not scored
    assert (by_topic["rocm"].tp, by_topic["rocm"].fp, by_topic["rocm"].fn) == (1, 1, 0)
    assert (by_topic["new-model"].tp, by_topic["new-model"].fn) == (1, 1)
    assert (a.total.precision, a.total.recall, a.issues) == (2 / 3, 2 / 3, 3)
    assert agreement([row(1, ["rocm"], ["bug"])]) is None


def test_clusters_are_connected_components():
    rows = [row(1), row(2, dups=[1]), row(3, dups=[2]), row(4), row(5, dups=[4, 99]), row(6)]
    assert [[r.number for r in g] for g in clusters(rows)] == [[1, 2, 3], [4, 5]]


def test_replay_writes_a_self_contained_report(tmp_path, capsys):
    export = write_export(tmp_path / "export.jsonl")
    html_path = tmp_path / "report.html"
    assert main(["replay", str(export), "--out", str(tmp_path / "t.jsonl"), "--html", str(html_path)]) == 0
    assert "report:" in capsys.readouterr().err
    html = html_path.read_text(encoding="utf-8")
    # self-contained: no external script, stylesheet, image or font
    assert not re.search(r"<(script|img|iframe)[^>]{0,200}\ssrc=", html)
    assert not re.search(r"<link[^>]{0,200}href=", html)
    assert "<style>" in html and "Chart.js v4" in html and 'id="chart-data"' in html
    # summary, labels, diagnoses, clusters, agreement
    for anchor in ('id="label-counts"', 'id="diagnoses"', 'id="agreement"', 'id="issues"', "Duplicate clusters"):
        assert anchor in html
    assert "pp-with-draft-model-without-pp" in html and "#101" in html
    # the hostile issue stays text
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and XSS_TITLE not in html
    assert 'href="javascript' not in html and "<script>window" not in html


def test_report_without_labels_says_so(tmp_path):
    from bot.cli import SAMPLE_EXPORT

    html_path = tmp_path / "r.html"
    assert main(["replay", str(SAMPLE_EXPORT), "--out", str(tmp_path / "t.jsonl"), "--html", str(html_path)]) == 0
    html = html_path.read_text(encoding="utf-8")
    assert "carries no labels" in html and 'id="agreement"' not in html
