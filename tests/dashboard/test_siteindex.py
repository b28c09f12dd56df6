"""The dashboard's hold on the raise-site index: nothing is created while none is built, a build is noticed, and so
is a release added later; the catalog's rules join the sites their examples resolve to."""

from __future__ import annotations

import pytest

from bot.dashboard.catalog import Catalog
from bot.dashboard.siteindex import REFRESH_SECONDS, RETRY_SECONDS, SiteIndexes
from bot.dashboard.sitelinks import IndexSites, coverage, named_in
from bot.rules import load_rules
from bot.stores.sources.sqlite import SqliteSourceStore, index_file

from .sites import PP, build_index, fill_store, site_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.asyncio
async def test_an_index_is_looked_for_loaded_and_reloaded_when_it_grows(tmp_path):
    clock = Clock()
    holder = SiteIndexes(None, tmp_path / "data", clock=clock)
    assert await holder.get() is None
    assert not index_file(tmp_path / "data").exists()
    store = SqliteSourceStore(index_file(tmp_path / "data"))
    fill_store(store, tmp_path / "sdists", ["1.0"])
    assert await holder.get() is None                     # not looked for again yet
    clock.now += RETRY_SECONDS
    loaded = await holder.get()
    assert loaded is not None and [r.version for r in loaded.indexes["vllm"].releases] == ["1.0"]
    text = await holder.source("vllm", "1.0", "vllm/config.py")
    assert text is not None and "class ModelConfig" in text
    fill_store(store, tmp_path / "sdists", ["2.0"])
    clock.now += RETRY_SECONDS
    assert await holder.get() is loaded                   # a loaded index is checked less often
    clock.now += REFRESH_SECONDS
    again = await holder.get()
    assert again is not loaded and [r.version for r in again.indexes["vllm"].releases] == ["1.0", "2.0"]
    clock.now += REFRESH_SECONDS
    assert await holder.get() is again                    # nothing new: the same index
    pp = site_of(again.indexes["vllm"], "vllm/config/model.py", "Pipeline parallelism")
    assert again.site(pp.id) == (again.indexes["vllm"], pp) and again.site("0" * 16) is None
    store.close()
    holder.close()


def test_rules_cover_the_sites_their_examples_resolve_to(tmp_path):
    index = build_index(tmp_path / "data", tmp_path / "sdists")
    sites = IndexSites({"vllm": index})
    catalog = Catalog(load_rules(), sites)
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    old = site_of(index, "vllm/config.py", "Pipeline parallelism")
    entry = catalog.entry("pp-model-not-supported")
    assert entry.message == PP and entry.message_from == "site"
    assert [s.id for s in entry.sites[:2]] == [pp.id, old.id]          # newest first, the moved one too
    assert entry.sites[0].url.endswith(f"/blob/v2.0/vllm/config/model.py#L{entry.sites[0].line}")
    cover = coverage(catalog)
    assert {"pp-model-not-supported", "pp-with-draft-model-without-pp"} <= set(cover[pp.id])
    engine = site_of(index, "vllm/engine.py", "Engine core initialization failed")
    assert all(rid != "pp-model-not-supported" for rid in cover.get(engine.id, ()))
    # a rule whose examples show no vLLM error links nothing
    assert catalog.entry("cuda-out-of-memory").sites == ()


def test_raised_in_names_files_and_functions():
    text = "vllm/config/model.py (ModelConfig.verify_with_parallel_config / _verify_with_expert_parallelism)"
    names = {"ModelConfig.verify_with_parallel_config", "verify_with_parallel_config",
             "_verify_with_expert_parallelism"}
    assert named_in(text) == [("vllm/config/model.py", names)]
    got = named_in("vllm/v1/core/kv_cache_utils.py (check_enough_kv_cache_memory); V0 vllm/worker/worker.py")
    assert [p for p, _ in got] == ["vllm/v1/core/kv_cache_utils.py", "vllm/worker/worker.py"]
    assert "check_enough_kv_cache_memory" in got[0][1]
    assert named_in(None) == [] and named_in("the operating system") == []
