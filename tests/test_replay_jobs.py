"""Replay in worker processes gives exactly the output of the sequential replay."""

from __future__ import annotations

import io
import json
from pathlib import Path

from bot.dupes import DuplicateIndex
from bot.dupes.history import ChronologicalIndex
from bot.replay import ReplaySummary, load_sorted, replay, write_jsonl
from bot.rules import load_rules

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "issues.jsonl"


def _run(jobs: int) -> tuple[list[dict], ReplaySummary]:
    rules = load_rules()
    summary = ReplaySummary()
    issues = load_sorted(str(SAMPLE), summary.problems)
    index = ChronologicalIndex(DuplicateIndex(), issues)
    out = io.StringIO()
    replay(issues, rules, index, write_jsonl(out), summary, jobs=jobs)
    return [json.loads(line) for line in out.getvalue().splitlines()], summary


def test_parallel_replay_matches_sequential():
    one, s1 = _run(1)
    two, s2 = _run(2)
    assert len(one) == s1.issues >= 10
    assert one == two
    assert s1.labels == s2.labels and s1.diagnoses == s2.diagnoses
    assert any(row["duplicates"] for row in one)  # the history is used in order in both


def test_workers_build_the_duplicate_documents(monkeypatch):
    import bot.dupes.document as document

    built: list[int] = []
    real = document.field_tokens
    monkeypatch.setattr(document, "field_tokens", lambda report: built.append(1) or real(report))
    two, _ = _run(2)
    assert two and built == []          # every document came from a worker (this counter is the main process's)
    one, _ = _run(1)
    assert one == two and len(built) == len(one)
    assert not document._PREBUILT


def test_prebuilt_document_is_used_once_and_only_for_that_report():
    from bot.dupes.document import IssueDoc, build_doc, prebuilt
    from bot.report import parse

    report = parse("[Bug]: boom", "ValueError: boom")
    other = parse("[Bug]: boom", "ValueError: boom")
    marker = IssueDoc(vector={"marker": 1.0})
    prebuilt(report, (), marker)
    assert build_doc(other) != marker
    assert build_doc(report, ()) is marker
    assert build_doc(report, ()) == build_doc(other)     # handed over once, then built as usual


def test_more_workers_than_chunks_and_several_chunks_per_worker(monkeypatch):
    import bot.replay as replay_module

    one, _ = _run(1)
    assert _run(5)[0] == one                      # 14 issues: one chunk, four idle workers
    monkeypatch.setattr(replay_module, "CHUNK", 3)  # five chunks over two workers, read back in order
    assert _run(2)[0] == one


def test_a_failing_worker_stops_the_replay_with_its_traceback(monkeypatch):
    import pytest

    import bot.replay as replay_module

    def boom(title, body, rules, *context):
        raise ValueError("analysis broke")

    monkeypatch.setattr(replay_module, "analyse", boom)
    with pytest.raises(RuntimeError, match="analysis broke"):
        _run(2)


def test_worker_results_leave_the_parse_text_behind():
    """What a worker sends back holds what this process reads (the comment's context, the duplicate document, the
    report's outputs), not the report's body, lines and sections."""
    import bot.replay as replay_module
    from bot.export import IssueRecord

    issue = IssueRecord(number=7, title="[Bug]: boom", body="```\nTraceback (most recent call last):\n"
                        '  File "x.py", line 1, in f\nValueError: boom\n```\n' + "words " * 200,
                        created_at="2026-01-01T00:00:00Z", state="open", url=None)
    replay_module._WORKER_RULES, replay_module._WORKER_DOCS = load_rules(), True
    try:
        analysis, doc, context = replay_module._analyse_one(issue)
    finally:
        replay_module._WORKER_RULES, replay_module._WORKER_DOCS = None, False
    report = analysis.report
    assert not report.body and not report.log_lines and not report.sections and not report.description
    assert report.root_cause is not None and report.root_cause.type == "ValueError"
    assert doc is not None and "word" in doc.vector      # built from the description before it was left out


def test_the_replay_collects_young_objects_less_often_and_restores_the_collector():
    import gc

    from bot.replay import YOUNG_OBJECTS

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    rules = load_rules()
    summary = ReplaySummary()
    issues = load_sorted(str(SAMPLE), summary.problems)
    seen: list[tuple[int, int, int]] = []
    replay(issues, rules, None, lambda issue, result: seen.append(gc.get_threshold()), summary, jobs=2)
    assert seen and all(t[0] >= YOUNG_OBJECTS and t[1:] == before[1:] for t in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
