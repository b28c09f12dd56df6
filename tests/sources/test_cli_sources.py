"""`replay --sources` and `explain --sources`: an SQLite file, the data directory's index by default, or none; a
missing file is a one-line mistake."""

import json

import pytest
from releases import line_of
from sources.small import small_store

from bot.cli import main
from bot.stores.sources.sqlite import index_file

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")
ISSUE = {"number": 12, "title": "[Bug]: " + PP, "state": "open", "created_at": "2024-07-01T00:00:00Z",
         "body": "### 🐛 Describe the bug\n\nvllm serve some/model --pipeline-parallel-size 2 fails.\n"}


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("VLLM_TRIAGE_DATA_DIR", str(tmp_path / "data"))
    export = tmp_path / "issues.jsonl"
    export.write_text(json.dumps(ISSUE) + "\n")
    return tmp_path, export


def replayed(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_replay_uses_the_data_directorys_index_when_it_is_built(env, capsys):
    tmp, export = env
    out = tmp / "out.jsonl"
    assert main(["replay", str(export), "--out", str(out), "--no-duplicates"]) == 0
    assert "no source index" in capsys.readouterr().err
    assert replayed(out)[0]["site"] is None and replayed(out)[0]["exceptions"] == []
    small_store(index_file(tmp / "data"), tmp / "sdists").close()
    assert main(["replay", str(export), "--out", str(out), "--no-duplicates"]) == 0
    assert "source index: 2 releases, 12 sites" in capsys.readouterr().err
    row = replayed(out)[0]
    # no version in the report: the release is the newest one uploaded before the issue was filed
    assert row["site"]["file"] == "vllm/config/model.py" and row["site"]["release"] == "2.0"
    assert row["site"]["line"] == line_of("2.0", "vllm/config/model.py", "Pipeline")
    # what the comment links: the line pinned to the release's tag, and the releases that raise the message
    assert row["site"]["url"] == (f"https://github.com/vllm-project/vllm/blob/v2.0/vllm/config/model.py"
                                  f"#L{row['site']['line']}")
    assert row["site"]["message_last"] == "2.0" and row["site"]["message_first"] is not None
    assert row["exceptions"] == [{"type": "NotImplementedError", "message": PP, "inferred": True}]
    assert main(["replay", str(export), "--out", str(out), "--no-duplicates", "--sources", "none"]) == 0
    assert replayed(out)[0]["site"] is None


def test_replay_and_explain_take_an_index_file_and_refuse_a_missing_one(env, capsys):
    tmp, export = env
    db = tmp / "elsewhere.sqlite3"
    small_store(db, tmp / "sdists").close()
    out = tmp / "out.jsonl"
    assert main(["replay", str(export), "--out", str(out), "--sources", str(db), "--jobs", "2"]) == 0
    assert replayed(out)[0]["site"]["qualname"] == "ModelConfig.verify_with_parallel_config"
    issue = tmp / "issue.json"
    issue.write_text(json.dumps(ISSUE))
    capsys.readouterr()
    assert main(["explain", str(issue), "--sources", str(db), "--created-at", "2024-07-01T00:00:00Z"]) == 0
    text = capsys.readouterr().out
    assert "vllm/config/model.py:" in text and "type inferred from the raise site" in text
    for argv in (["replay", str(export), "--sources", str(tmp / "nope.sqlite3")],
                 ["explain", str(issue), "--sources", str(tmp / "nope.sqlite3")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "nope.sqlite3: no such file" in err and len(err.strip().splitlines()) == 1
