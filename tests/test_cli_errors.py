"""A user mistake on the command line gets one line on stderr, `vllm-triage: ...`, and exit status 2: every
command, every option that takes a path or a value. No traceback, nothing half-written."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

ROOT = Path(__file__).resolve().parents[1]
ISSUE = {"number": 1, "title": "[Bug]: x", "body": "RuntimeError: boom", "created_at": "2025-01-01T00:00:00Z"}


@pytest.fixture
def files(tmp_path):
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(ISSUE) + "\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n")
    not_db = tmp_path / "notes.txt"
    not_db.write_text("not an index, just text\n" * 200)
    return {"EXPORT": str(export), "EMPTY": str(empty), "DIR": str(tmp_path), "NOTDB": str(not_db),
            "MISSING": str(tmp_path / "missing.jsonl"), "NODIR": str(tmp_path / "no" / "such" / "dir" / "x.html"),
            "UNDERFILE": str(export / "x.sqlite3"),
            "NEWDB": str(tmp_path / "new.sqlite3")}


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


CASES = [
    (["replay", "MISSING"], "cannot read {MISSING}: No such file"),
    (["replay", "DIR"], "cannot read {DIR}: Is a directory"),
    (["replay", "EXPORT", "--html", "NODIR"], "cannot write {NODIR}: No such directory"),
    (["replay", "EXPORT", "--out", "NODIR"], "cannot write {NODIR}: No such directory"),
    (["replay", "EXPORT", "--out", "DIR"], "cannot write {DIR}: Is a directory"),
    (["replay", "EXPORT", "--db", "DIR"], "cannot write {DIR}: Is a directory"),
    (["replay", "EXPORT", "--db", "NOTDB"], "cannot open {NOTDB} as a duplicate index"),
    (["replay", "EXPORT", "--jobs", "0"], "--jobs"),
    (["replay", "EXPORT", "--jobs", "many"], "--jobs"),
    (["--rules", "MISSING", "replay", "EXPORT"], "{MISSING}"),
    (["explain", "MISSING"], "cannot read {MISSING}: No such file"),
    (["explain", "DIR"], "cannot read {DIR}: Is a directory"),
    (["explain", "EMPTY"], "{EMPTY} is empty"),
    (["explain", "EXPORT", "--db", "MISSING"], "cannot read {MISSING}: No such file"),
    (["explain", "EXPORT", "--db", "NOTDB"], "cannot open {NOTDB} as a duplicate index"),
    (["explain", "EXPORT", "--number", "x"], "--number"),
    (["explain", "EXPORT", "--created-at", "yesterday"], "--created-at"),
    (["index", "MISSING", "--db", "NODIR"], "cannot read {MISSING}: No such file"),
    (["index", "EXPORT", "--db", "NOTDB"], "cannot open {NOTDB} as a duplicate index"),
    (["index", "EXPORT"], "--db"),
    (["index"], "give an EXPORT file"),
    (["index", "EXPORT", "--db", "NEWDB", "--sources", "MISSING"], "--sources {MISSING}: no such file"),
    (["index", "--github", "not-a-repo"], "OWNER/REPO"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--port", "http"], "--port"),
    (["serve", "--workers", "0"], "--workers"),
    (["serve", "--intake-processes", "0"], "--intake-processes"),
    (["redeliver", "--since", "last tuesday"], "--since"),
    (["redeliver", "--max", "-1"], "--max"),
    (["redeliver"], "GITHUB_APP_ID"),
    (["--rules", "MISSING", "rules", "test"], "{MISSING}"),
    (["rules", "test", "--sources", "MISSING"], "--sources {MISSING}: no such file"),
    (["replay", "EXPORT", "--sources", "MISSING"], "--sources {MISSING}: no such file"),
    (["replay", "EXPORT", "--sources", "NOTDB"], "cannot open {NOTDB} as a source index"),
    (["explain", "EXPORT", "--sources", "MISSING"], "--sources {MISSING}: no such file"),
    (["explain", "EXPORT", "--sources", "DIR"], "--sources {DIR}: no such file"),
    (["sources", "status", "--db", "MISSING"], "cannot read {MISSING}: No such file"),
    (["sources", "status", "--db", "NOTDB"], "cannot open {NOTDB} as a source index"),
    (["sources", "build", "--db", "UNDERFILE", "--versions", "0.1.0"], "cannot write {UNDERFILE}: Not a directory"),
    (["sources", "build", "--jobs", "0"], "--jobs"),
    (["sources", "build", "--latest", "x"], "--latest"),
    (["frobnicate"], "frobnicate"),
    ([], "command"),
]


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(a) or "nothing" for a, _ in CASES])
def test_a_user_mistake_gets_one_line_and_status_2(argv, message, files, capsys, monkeypatch, tmp_path):
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET",
                 "DATABASE_URL", "VLLM_TRIAGE_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VLLM_TRIAGE_DATA_DIR", str(tmp_path / "data"))
    argv = [files.get(a, a) for a in argv]
    message = message.format(**files) if "{" in message else message
    assert not Path(files["MISSING"]).exists()
    code, out, err = run(argv, capsys)
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vllm-triage"), err
    assert message in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert not Path(files["MISSING"]).exists()  # nothing made on the way to the error


def test_serve_on_a_port_in_use_and_migrate_on_an_unusable_database_say_so_in_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GITHUB_WEBHOOK_SECRET": "s",
           "VLLM_TRIAGE_DATA_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "bot", "serve", "--port", str(port)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"cannot listen on 127.0.0.1:{port}" in lines[-1]
    (tmp_path / "file").write_text("a file, not a directory")
    for url in (f"sqlite:///{tmp_path / 'file' / 'x.sqlite3'}", "mysql://u@h/db"):
        done = subprocess.run([sys.executable, "-m", "bot", "migrate"], env={**env, "DATABASE_URL": url}, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]


def test_skipped_export_lines_are_reported_once(tmp_path, capsys):
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(ISSUE) + "\n{not json\n")
    code, _, err = run(["replay", str(export), "--no-duplicates", "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 0
    assert err.count("line 2") == 1, err


def test_output_into_a_pipe_closed_early_ends_without_a_traceback(tmp_path):
    body = tmp_path / "body.md"
    body.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n" * 50)
    done = subprocess.run(f"{sys.executable} -m bot explain {body} | head -1", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("title:") and "Traceback" not in done.stderr, done.stderr[-2000:]
