"""bench/rules_coverage.py on a small export written here: fired, superseded-only and never-firing rules."""

from __future__ import annotations

import json

from bench.rules_coverage import coverage, main
from bot.rules import DEFAULT_RULES_DIR

HEADS = ("[Bug]: Qwen on three GPUs",
         "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 3\n"
         "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (3).\n"
         "AssertionError: 18944 is not divisible by 3\n")
QUESTION = ("[Usage]: which sampling parameters for a summary?", "Is temperature 0.7 a good choice?")


def _export(tmp_path, rows, broken=False):
    path = tmp_path / "issues.jsonl"
    lines = [json.dumps({"number": i + 1, "title": t, "body": b, "created_at": "2025-06-01T00:00:00Z"})
             for i, (t, b) in enumerate(rows)]
    if broken:
        lines.insert(1, "{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_counts_fired_superseded_and_never(tmp_path):
    result = coverage(_export(tmp_path, [HEADS, QUESTION, HEADS]), DEFAULT_RULES_DIR, "none")
    assert result["issues"] == 3
    assert result["per_rule"]["attention-heads-not-divisible-by-tp"] == {"issues": 2, "share": 0.6667, "shown": 2}
    # the generic rule matched both times but the heads message superseded it
    assert result["superseded_only"] == {"tp-size-does-not-divide-model": 2}
    assert "tp-size-does-not-divide-model" not in result["never"]
    assert "attention-heads-not-divisible-by-tp" not in result["never"]
    assert "blackwell-no-kernel-image" in result["never"]
    assert result["firing"] == result["rules"] - len(result["never"]) - len(result["superseded_only"])
    assert result["share_firing"] == round(result["firing"] / result["rules"], 3)


def test_broken_line_is_reported_with_its_number(tmp_path, capsys):
    assert main([str(_export(tmp_path, [HEADS, QUESTION], broken=True))]) == 0
    out, err = capsys.readouterr()
    assert "line 2" in err
    assert "attention-heads-not-divisible-by-tp" in out
    assert "rules fire on at least one of 2 issues" in out


def test_missing_export_is_a_usage_error(tmp_path, capsys):
    try:
        main([str(tmp_path / "nope.jsonl")])
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError("expected exit status 2")
    assert "no such file" in capsys.readouterr().err
