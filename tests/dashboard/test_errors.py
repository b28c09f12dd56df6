"""Error explainer pages and the paste-an-error search on the real App, over an index built from two small releases
written by the tests (tests/dashboard/sites.py); and every page without an index."""

from __future__ import annotations

import html
import re

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.app.context import STORE
from bot.app.server import create_app
from bot.app.settings import from_env
from bot.dashboard import errors
from bot.dashboard.auth import LoginThrottle
from bot.stores.sources.sqlite import index_file

from .conftest import csrf_of, fill, server_env
from .sites import PP, build_index, line_of, pp_report, site_of

pytestmark = pytest.mark.asyncio(loop_scope="module")
CHECKPOINT = "ValueError: Unsupported checkpoint format bin for this loader"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"


async def start(tmp, monkeypatch, *, public: bool = True) -> TestClient:
    env = server_env(tmp, public=public)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    client = TestClient(TestServer(create_app(from_env(env, core="thread"))))
    await client.start_server()
    return client


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("indexed")
    return tmp, build_index(tmp / "data", tmp / "sdists")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def indexed(built):
    mp = pytest.MonkeyPatch()
    client = await start(built[0], mp)
    yield client
    await client.close()
    mp.undo()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def bare(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    tmp = tmp_path_factory.mktemp("bare")
    client = await start(tmp, mp)
    yield client, tmp
    await client.close()
    mp.undo()


@pytest.fixture
def index(built):
    return built[1]


def text_of(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


async def search(client: TestClient, paste: str, version: str = "", follow: bool = False):
    form = await (await client.get("/dashboard/errors")).text()
    return await client.post("/dashboard/errors", data={"csrf": csrf_of(form), "error": paste, "version": version},
                             allow_redirects=follow)


async def test_the_index_is_loaded_and_linked_to_the_rules_when_the_app_starts(indexed, bare):
    assert await indexed.server.app[errors.WARMING] is True
    assert await bare[0].server.app[errors.WARMING] is False


async def test_the_page_of_an_error_has_what_the_seed_page_has(indexed, index):
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    old = site_of(index, "vllm/config.py", "Pipeline parallelism")
    heads = site_of(index, "vllm/config/model.py", "attention heads")
    resp = await indexed.get(f"/dashboard/errors/{pp.id}")
    assert resp.status == 200
    page = await resp.text()
    words = text_of(page)
    line = line_of("2.0", "vllm/config/model.py", "Pipeline")
    # the message and its type
    assert 'id="error-type">NotImplementedError<' in page
    assert html.escape(PP, quote=False) in page
    # what it means: the covering rule's explanation, and the guarding condition in words and code
    assert "pp-model-not-supported" in page and "SupportsPP" in words
    assert ("In the source, it is raised when parallel_config.pipeline_parallel_size > 1 and (not self.supports_pp)"
            " in ModelConfig.verify_with_parallel_config") in words
    # the code around the raise at the newest release that raises it, the statement marked, the permalink pinned
    marked = re.findall(r'<span class="line marked" data-marked="1"><span class="ln">(\d+)</span>', page)
    assert [int(n) for n in marked] == list(range(line, line + 4))
    numbers = [int(n) for n in re.findall(r'<span class="ln">(\d+)</span>', page)]
    assert numbers[0] == 1 and "class ModelConfig:" in page        # the module is shorter than 20 lines above it
    assert f'href="https://github.com/vllm-project/vllm/blob/v2.0/vllm/config/model.py#L{line}"' in page
    assert "pinned to v2.0" in words
    # the releases: first, last, line per release; the picker offers those that raise it
    assert "First 2.0 , last 2.0 : 1 of the 2 indexed releases" in words
    assert re.search(r'<option value="2.0"\s+selected>', page) and '<option value="1.0"' not in page
    # solutions and the example fix from the covering rules
    assert 'id="solutions"' in page and "--tensor-parallel-size" in words
    assert "Example fix" in words and "before" in words and "--pipeline-parallel-size" in words
    # when it happens; related errors: the same message before the move, the same function
    assert "Rule pp-model-not-supported diagnoses it when the report shows" in words
    assert f'href="/dashboard/errors/{old.id}"' in page and f'href="/dashboard/errors/{heads.id}"' in page
    assert "vllm/config.py" in words and "1.0" in words
    # no decision records a site yet; the JSON link
    assert "None recorded yet" in words
    assert f'href="/api/errors/{pp.id}"' in page
    # each of the seed page's parts where docs/dashboard.md says it is
    for part in ("error-message", "error-type", "meaning", "source-code", "permalink", "releases", "solutions",
                 "example-fix", "when", "related", "issues"):
        assert f'id="{part}"' in page, part


async def test_a_release_is_picked_and_one_that_does_not_raise_it_says_so(indexed, index):
    engine = site_of(index, "vllm/engine.py", "Engine core initialization failed")
    for version in ("1.0", "2.0"):
        page = await (await indexed.get(f"/dashboard/errors/{engine.id}?release={version}")).text()
        line = line_of(version, "vllm/engine.py", "Engine core init")
        assert f"vllm/engine.py:{line}" in text_of(page)
        assert f"/blob/v{version}/vllm/engine.py#L{line}" in page
        assert re.search(rf'<option value="{re.escape(version)}"\s+selected>', page)
    runs = re.search(r'<ul class="runs" id="release-runs">(.*?)</ul>', page, re.S).group(1)
    assert text_of(runs) == (f"1.0 L{line_of('1.0', 'vllm/engine.py', 'Engine core init')} "
                             f"2.0 L{line_of('2.0', 'vllm/engine.py', 'Engine core init')}")   # it moved: two runs
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    page = await (await indexed.get(f"/dashboard/errors/{pp.id}?release=1.0")).text()
    assert "vLLM 1.0 does not raise it" in text_of(page) and "showing 2.0" in text_of(page)
    page = await (await indexed.get(f"/dashboard/errors/{pp.id}?release=<script>")).text()
    assert "<script>" not in page and "&lt;script&gt; does not raise it (or is not indexed)" in page


async def test_the_json_has_the_same_content(indexed, index):
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    resp = await indexed.get(f"/api/errors/{pp.id}")
    assert resp.status == 200 and resp.content_type == "application/json"
    j = await resp.json()
    line = line_of("2.0", "vllm/config/model.py", "Pipeline")
    assert (j["id"], j["type"], j["kind"], j["file"], j["qualname"]) == (
        pp.id, "NotImplementedError", "raise", "vllm/config/model.py", "ModelConfig.verify_with_parallel_config")
    assert j["message"]["template"] == PP and j["message"]["pieces"] == [{"text": PP}]
    # the heading: a message longer than 100 characters is cut at a word
    assert j["title"] == ("Pipeline parallelism is not supported for this model. Supported models implement "
                          "the `SupportsPP`…")
    assert j["api"] == f"/api/errors/{pp.id}"
    assert j["meaning"]["guard_kind"] == "if" and "pp-model-not-supported" in [r["id"] for r in j["meaning"]["rules"]]
    assert j["source"]["permalink"].endswith(f"/blob/v2.0/vllm/config/model.py#L{line}")
    assert [x["line"] for x in j["source"]["excerpt"] if x["marked"]] == list(range(line, line + 4))
    assert j["releases"]["first"] == j["releases"]["last"] == "2.0" and j["releases"]["indexed"] == 2
    assert j["releases"]["runs"] == [{"first": "2.0", "last": "2.0", "line": line, "releases": 1}]
    assert any(s["example_fix"]["before"] for s in j["solutions"])
    assert [r["file"] for r in j["related"]["same_message"]] == ["vllm/config.py"]
    assert j["issues"] == {"recorded": False, "matched": []}
    # a hole in the message is a placeholder
    moe = site_of(index, "vllm/moe.py", "moe_backend")
    j = await (await indexed.get(f"/api/errors/{moe.id}")).json()
    assert {"hole": "runner_backend"} in j["message"]["pieces"]
    assert "moe-marlin-unquantized" in [r["id"] for r in j["meaning"]["rules"]]
    assert (await indexed.get("/api/errors/0123456789abcdef")).status == 404


async def test_the_issues_whose_decision_resolved_to_it(indexed, index):
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    old = site_of(index, "vllm/config.py", "Pipeline parallelism")
    moe = site_of(index, "vllm/moe.py", "moe_backend")
    store = indexed.server.app[STORE]
    plans = {901: {"id": pp.id, "release": "2.0"}, 902: {"id": old.id, "release": "1.0"}, 903: {"id": moe.id}}
    for number, site in plans.items():
        await store.record_decision(None, "vllm-project/vllm", number, "dry-run", "test", {
            "decision": {"site": site}, "issue": {"title": f"Report {number}", "created_at": "2024-07-01T00:00:00Z",
                                                  "url": f"https://github.com/vllm-project/vllm/issues/{number}"}},
            False)
    page = text_of(await (await indexed.get(f"/dashboard/errors/{pp.id}")).text())
    assert "Issues that matched it 2" in page      # the same message moved: its issues are this error's too
    assert "vllm-project/vllm#901" in page and "vllm-project/vllm#902" in page and "#903" not in page
    j = await (await indexed.get(f"/api/errors/{moe.id}")).json()
    assert j["issues"]["recorded"] and [i["number"] for i in j["issues"]["matched"]] == [903]


async def test_the_issues_triage_located_there(indexed, index):
    """Triage records the root cause's site in its decision (bot/app/record.py): the explainer page lists the issue,
    at the release it resolved at, and the issue page links to the explainer."""
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    old = site_of(index, "vllm/config.py", "Pipeline parallelism")
    await fill(indexed, [pp_report(921, "2.0"), pp_report(922, "1.0", traceback=False)])
    j = await (await indexed.get(f"/api/errors/{pp.id}")).json()
    matched = {i["number"]: i for i in j["issues"]["matched"]}
    assert matched[921]["release"] == "2.0" and matched[922]["release"] == "1.0"
    assert matched[921]["title"] == "[Bug]: pipeline parallel start-up fails on 2.0"
    j = await (await indexed.get(f"/api/errors/{old.id}")).json()
    assert 922 in [i["number"] for i in j["issues"]["matched"]]
    page = text_of(await (await indexed.get(f"/dashboard/errors/{pp.id}")).text())
    assert "vllm-project/vllm#921" in page and "vllm-project/vllm#922" in page
    issue = await (await indexed.get("/dashboard/issues/vllm-project/vllm/921")).text()
    assert f'href="/dashboard/errors/{pp.id}"' in issue
    issue = await (await indexed.get("/dashboard/issues/vllm-project/vllm/922")).text()
    assert f'href="/dashboard/errors/{old.id}"' in issue


async def test_a_pasted_error_lands_on_its_page(indexed, index):
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    resp = await search(indexed, f"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                                 f"NotImplementedError: {PP}\n")
    assert resp.status == 303 and resp.headers["Location"] == f"/dashboard/errors/{pp.id}?release=2.0"
    old = site_of(index, "vllm/config.py", "Pipeline parallelism")
    resp = await search(indexed, f"NotImplementedError: {PP}", version="1.0.dev3+g12ab")
    assert resp.headers["Location"] == f"/dashboard/errors/{old.id}?release=1.0"
    resp = await indexed.get("/dashboard/errors", params={"q": "Pipeline parallelism is not supported for this model"},
                             allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith(f"/dashboard/errors/{pp.id}")


async def test_several_sites_are_listed_and_none_suggests_the_catalog(indexed):
    resp = await search(indexed, CHECKPOINT)
    page = await resp.text()
    assert resp.status == 200 and 'id="hits"' in page
    words = text_of(page)
    assert "vllm/models/a.py:3" in words and "vllm/models/b.py:3" in words
    assert "load_a" in words and "1.0 – 2.0" in words
    assert "The message is the same in each" in words
    resp = await search(indexed, OOM)
    words = text_of(await resp.text())
    assert "No indexed error matches" in words and "cuda-out-of-memory" in words
    resp = await search(indexed, "nothing like an error at all")
    assert "No rule of the catalog matches it either" in text_of(await resp.text())


async def test_the_search_as_json(indexed, index):
    moe = site_of(index, "vllm/moe.py", "moe_backend")
    q = "ValueError: moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton']."
    j = await (await indexed.get("/api/errors", params={"q": q})).json()
    assert [m["id"] for m in j["matches"]] == [moe.id] and j["matches"][0]["file"] == "vllm/moe.py"
    j = await (await indexed.get("/api/errors", params={"q": OOM})).json()
    assert j["matches"] == [] and "cuda-out-of-memory" in [r["id"] for r in j["suggested_rules"]]
    assert (await indexed.get("/api/errors", params={"q": "x" * (errors.MAX_QUERY + 1)})).status == 400
    assert (await indexed.get("/api/errors")).status == 400


async def test_the_search_is_untrusted_input(indexed):
    hostile = '<script>window.__xss=1</script><img src=x onerror=alert(1)> ' + OOM
    page = await (await search(indexed, hostile)).text()
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    refused = await indexed.post("/dashboard/errors", data={"error": OOM}, allow_redirects=False)
    assert refused.status == 403                                 # no CSRF token
    assert (await indexed.get("/dashboard/errors", params={"q": "x" * (errors.MAX_QUERY + 1)})).status == 413
    deps = indexed.server.app[errors.DEPS]
    saved, deps.throttle = deps.throttle, LoginThrottle(3, 60.0)
    try:
        statuses = [(await search(indexed, OOM)).status for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert (await indexed.get("/api/errors", params={"q": OOM})).status == 429
    finally:
        deps.throttle = saved


async def test_rule_pages_link_to_their_sites(indexed, index):
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    page = await (await indexed.get("/dashboard/rules/pp-model-not-supported")).text()
    line = line_of("2.0", "vllm/config/model.py", "Pipeline")
    assert f'href="/dashboard/errors/{pp.id}"' in page and f"vllm/config/model.py:{line}" in page
    assert f"/blob/v2.0/vllm/config/model.py#L{line}" in page and "/blob/main/" not in page
    j = await (await indexed.get("/api/rules/pp-model-not-supported")).json()
    assert pp.id in [s["id"] for s in j["sites"]] and j["message_from"] == "site" and j["message"] == PP
    page = await (await indexed.get("/dashboard/errors")).text()
    assert "vllm 2 releases (1.0 – 2.0)" in text_of(page)


async def test_without_the_index_every_page_says_how_to_build_it(bare):
    client, tmp = bare
    page = await (await client.get("/dashboard/errors")).text()
    assert "The raise-site index is not built" in text_of(page) and "vllm-triage sources build" in page
    resp = await client.get("/dashboard/errors/0123456789abcdef")
    assert resp.status == 404 and "vllm-triage sources build" in await resp.text()
    resp = await client.get("/api/errors/0123456789abcdef")
    assert resp.status == 404 and (await resp.json())["build"] == "vllm-triage sources build"
    resp = await search(client, OOM)
    words = text_of(await resp.text())
    assert resp.status == 200 and "cannot be matched" in words and "cuda-out-of-memory" in words
    j = await (await client.get("/api/errors", params={"q": OOM})).json()
    assert j["matches"] == [] and j["build"] == "vllm-triage sources build" and j["suggested_rules"]
    page = await (await client.get("/dashboard/rules/pp-model-not-supported")).text()
    assert "https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py" in page   # today's text
    assert "/dashboard/errors/" not in page.replace('href="/dashboard/errors"', "")
    assert (await (await client.get("/api/rules/pp-model-not-supported")).json())["sites"] == []
    assert not index_file(tmp / "data").exists()                 # nothing created by looking


async def test_a_private_dashboard_asks_for_a_login(tmp_path, monkeypatch, built):
    client = await start(built[0], monkeypatch, public=False)
    try:
        assert (await client.get("/dashboard/errors", allow_redirects=False)).status == 303
        pp = site_of(built[1], "vllm/config/model.py", "Pipeline parallelism")
        assert (await client.get(f"/dashboard/errors/{pp.id}", allow_redirects=False)).status == 303
        assert (await client.get(f"/api/errors/{pp.id}")).status == 401
        assert (await client.get("/api/errors", params={"q": OOM})).status == 401
    finally:
        await client.close()


async def test_decision_records_name_their_sites():
    assert errors.site_ids({"decision": {"site": {"id": "a" * 16, "release": "0.17.0"}}}) == ({"a" * 16}, "0.17.0")
    assert errors.site_ids({"decision": {"site": {"id": "b" * 16, "ids": ["b" * 16, "c" * 16, 7, None]}}}) == (
        {"b" * 16, "c" * 16}, None)
    for plan in ({}, {"decision": None}, {"decision": {"site": "x"}}, {"decision": {"site": {"ids": ["d" * 16]}}},
                 None, []):
        assert errors.site_ids(plan) == (set(), None)
    assert errors.site_ids({"decision": {"site": {"id": 5}}})[0] == {"5"}
