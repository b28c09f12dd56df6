"""`vllm-triage index --github OWNER/REPO` against the fake GitHub: every page of issues indexed, pull
requests skipped, never-triaged open issues queued for the worker."""

from __future__ import annotations

import asyncio
import json

from bot.cli import main
from bot.stores.deliveries import SqliteDeliveryStore

from .fakegithub import APP_ID

REPO = "vllm-project/vllm"


async def test_index_github_pages_through_the_whole_history(tmp_path, fake, monkeypatch, capsys):
    fake.add_repo(REPO, ["bug"])
    for n in range(1, 251):
        issue = fake.add_issue(REPO, n, f"[Bug]: failure {n}", f"RuntimeError: CUDA error number {n}")
        issue.state = "closed" if n % 3 == 0 else "open"
        issue.pull_request = n % 50 == 0
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_APP_ID", str(APP_ID))
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", fake.private_key.replace("\n", "\\n"))  # the one-line form
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'bot.sqlite3'}")
    # the CLI runs its own event loop: give it a thread while this loop serves the fake
    code = await asyncio.to_thread(main, ["--rules", str(tmp_path), "index", "--github", REPO, "--queue-missed"])
    assert code == 0
    out = capsys.readouterr().out
    assert "indexed 245 issues" in out and "5 pull requests skipped" in out
    pages = [c for c in fake.calls if c.path == f"/repos/{REPO}/issues"]
    assert len(pages) == 3  # 100 per page, following the Link header
    store = SqliteDeliveryStore(tmp_path / "bot.sqlite3")
    queued = await store.deliveries("queued", limit=1000)
    open_issues = [n for n, i in fake.repos[REPO].issues.items() if i.state == "open" and not i.pull_request]
    assert sorted(d.issue_number for d in queued) == sorted(open_issues)
    assert json.loads(queued[0].payload)["installation"] == {"id": 1}
    assert (tmp_path / "dupes" / "vllm-project__vllm.sqlite3").exists()
    await store.close()
