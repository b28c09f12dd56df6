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
