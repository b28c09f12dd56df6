import json

from bot.export import ExportProblem, IssueRecord, read_export


def test_jsonl_with_broken_line_reports_line_and_keeps_rest(tmp_path):
    path = tmp_path / "export.jsonl"
    good = {"number": 7, "title": "[Bug]: x", "body": "b", "created_at": "2026-01-01T00:00:00Z"}
    pr = {"number": 8, "title": "a PR", "body": "", "pull_request": {"url": "u"}}
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps(pr) + "\n" + json.dumps({"title": "x"}) + "\n")
    items = list(read_export(path))
    issues = [i for i in items if isinstance(i, IssueRecord)]
    problems = [i for i in items if isinstance(i, ExportProblem)]
    assert [i.number for i in issues] == [7]
    assert [p.line for p in problems] == [2, 4]
    assert "number" in problems[1].message


def test_gh_cli_array(tmp_path):
    path = tmp_path / "gh.json"
    path.write_text(json.dumps([{"number": 3, "title": "t", "body": "b", "createdAt": "2025-01-01T00:00:00Z",
                                 "state": "OPEN", "author": {"login": "alice"},
                                 "labels": [{"name": "bug"}], "url": "https://github.com/o/r/issues/3"}]))
    (issue,) = list(read_export(path))
    assert issue.created_at == "2025-01-01T00:00:00Z"
    assert issue.state == "open" and issue.author == "alice" and issue.labels == ("bug",)


def test_a_lone_surrogate_in_an_export_is_made_valid_and_replay_writes_its_report(tmp_path):
    from bot.cli import main

    path = tmp_path / "export.jsonl"
    issue = {"number": 1, "title": "[Bug]: engine dies \ud83d", "created_at": "2025-01-01T00:00:00Z",
             "body": "```\nRuntimeError: CUDA error: an illegal memory access was encountered \udc00\n```"}
    path.write_text(json.dumps(issue) + "\n" + json.dumps([issue])[1:-1].replace('"number": 1', '"number": 2'))
    records = [r for r in read_export(path) if isinstance(r, IssueRecord)]
    assert [r.title for r in records] == ["[Bug]: engine dies \ufffd"] * 2
    assert "\ufffd" in records[0].body
    assert main(["replay", str(path), "--out", str(tmp_path / "out.jsonl"), "--html", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text(encoding="utf-8")
