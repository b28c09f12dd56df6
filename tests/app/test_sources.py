"""The App and the raise-site index: the core loads the data directory's index once and triage locates raise sites
with it (the decision record keeps the site and an inferred type); without an index everything else works; the
releases the index lacks are built in the background, without holding up webhooks, and then loaded."""

from __future__ import annotations

import asyncio
import logging

from sources.releases import write_index
from sources.small import small_store

from bot.stores.sources.sqlite import SqliteSourceStore, index_file
from bot.triage import triage

from .conftest import issue_payload, make_settings

REPO = "vllm-project/vllm"
PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")
BODY = ("### Your current environment\n\n```text\nvLLM Version                 : 2.0\n```\n\n"
        "### 🐛 Describe the bug\n\nvllm serve some/model --pipeline-parallel-size 2 fails at start-up.\n")


async def decision_of(bot, number: int) -> dict:
    [decision] = await bot.get(f"/api/decisions?repo={REPO}&number={number}")
    return decision["plan"]["decision"]


async def test_the_core_loads_the_data_directorys_index_and_triage_locates_the_site(tmp_path, make_bot):
    small_store(index_file(tmp_path), tmp_path / "sdists").close()
    bot = await make_bot(make_settings(tmp_path), triage_fn=triage)
    await bot.send("issues", issue_payload(REPO, 1, "[Bug]: " + PP, BODY))
    await bot.drain()
    decision = await decision_of(bot, 1)
    assert decision["error"] == {"type": "NotImplementedError", "message": PP, "inferred": True}
    site = decision["site"]
    assert (site["file"], site["qualname"], site["release"]) == (
        "vllm/config/model.py", "ModelConfig.verify_with_parallel_config", "2.0")
    assert site["url"] == f"https://github.com/vllm-project/vllm/blob/v2.0/vllm/config/model.py#L{site['line']}"


async def test_without_an_index_triage_works_without_sites(tmp_path, make_bot):
    bot = await make_bot(make_settings(tmp_path), triage_fn=triage)
    await bot.send("issues", issue_payload(REPO, 1, "[Bug]: " + PP, BODY))
    await bot.drain()
    decision = await decision_of(bot, 1)
    assert decision["site"] is None and decision["error"] is None
    assert not index_file(tmp_path).exists()  # nothing is created by looking


async def test_missing_releases_are_built_in_the_background_then_loaded(tmp_path, make_bot, monkeypatch, caplog):
    url = write_index(tmp_path / "pypi")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", url)
    small_store(index_file(tmp_path), tmp_path / "sdists", versions=["1.0"]).close()  # 2.0 is missing
    caplog.set_level(logging.INFO, "vllm_triage")
    bot = await make_bot(make_settings(tmp_path, sources_build=5), triage_fn=triage)
    # webhooks are acknowledged and triaged while the build runs (with the release the index already has)
    response = await bot.send("issues", issue_payload(REPO, 1, "[Bug]: " + PP, BODY))
    assert response.status == 202
    for _ in range(1200):
        if "source index reloaded" in caplog.text:
            break
        await asyncio.sleep(0.1)
    assert "source index reloaded: 2 releases" in caplog.text, caplog.text
    assert "source index: 1 releases built, 1 already there, 0 failed" in caplog.text
    store = SqliteSourceStore(index_file(tmp_path))
    assert [r.version for r in store.releases("vllm")] == ["1.0", "2.0"]
    store.close()
    await bot.drain()
    await bot.send("issues", issue_payload(REPO, 2, "[Bug]: " + PP, BODY))
    await bot.drain()
    assert (await decision_of(bot, 2))["site"]["release"] == "2.0"


async def test_a_build_that_cannot_reach_an_index_is_logged_and_harmless(tmp_path, make_bot, monkeypatch, caplog):
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", (tmp_path / "nowhere").as_uri())
    caplog.set_level(logging.INFO, "vllm_triage")
    bot = await make_bot(make_settings(tmp_path, sources_build=3), triage_fn=triage)
    for _ in range(600):
        if "source index: not built" in caplog.text:
            break
        await asyncio.sleep(0.1)
    assert "source index: not built" in caplog.text
    await bot.send("issues", issue_payload(REPO, 1, "[Bug]: " + PP, BODY))
    await bot.drain()
    assert (await decision_of(bot, 1))["site"] is None


async def test_the_dashboards_issue_page_shows_the_inferred_type_and_the_raise_site(tmp_path, make_bot,
                                                                                     monkeypatch):
    monkeypatch.setenv("DASHBOARD_PUBLIC", "1")
    small_store(index_file(tmp_path), tmp_path / "sdists").close()
    bot = await make_bot(make_settings(tmp_path), triage_fn=triage)
    await bot.send("issues", issue_payload(REPO, 1, "[Bug]: " + PP, BODY))
    await bot.drain()
    page = await (await bot.client.get(f"/dashboard/issues/{REPO}/1")).text()
    assert 'id="inferred-type"' in page and "NotImplementedError: Pipeline parallelism" in page
    assert 'href="https://github.com/vllm-project/vllm/blob/v2.0/vllm/config/model.py#L' in page
    assert "ModelConfig.verify_with_parallel_config" in page
