"""Real vLLM releases: downloaded through pip's configured index, indexed, and the seed issue's two errors
resolved to their real sites. Runs in CI (CI=true) or with VLLM_TRIAGE_REAL_SDISTS=1; skipped otherwise.

0.6.3 has the SupportsPP error in vllm/config.py and not the MoE backend error; 0.17.0 (the seed's release)
has both: the first in vllm/config/model.py at line 1065 (the line the seed's traceback shows), the second in
the fused-MoE backend oracle.
"""

import os

import pytest

from bot.cli import main
from bot.report import parse
from bot.sources.resolve import resolve
from bot.stores.sources.sqlite import SqliteSourceStore, index_file

pytestmark = [
    pytest.mark.real_sdists,
    pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("VLLM_TRIAGE_REAL_SDISTS")),
                       reason="downloads vLLM sdists: set VLLM_TRIAGE_REAL_SDISTS=1 (CI runs it)"),
]

PP_REPORT = """\
### Your current environment
vLLM Version: 0.17.0

### 🐛 Describe the bug
`vllm serve` with `--pipeline-parallel-size 2` and an MTP speculative config fails at start-up:

```
(APIServer pid=1200) Traceback (most recent call last):
(APIServer pid=1200)   File "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py", line 1443, in create_speculative_config
(APIServer pid=1200)     return SpeculativeConfig(**self.speculative_config)
(APIServer pid=1200)   File "/usr/local/lib/python3.12/dist-packages/vllm/config/model.py", line 1065, in verify_with_parallel_config
(APIServer pid=1200)     raise NotImplementedError(
(APIServer pid=1200) NotImplementedError: Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` interface.
```
"""  # noqa: E501

MOE_REPORT = """\
vllm 0.17.0, two GPUs, --moe-backend marlin on an unquantized MoE checkpoint:

(EngineCore_DP0 pid=77) ERROR 01-02 03:04:05 [core.py:1000] EngineCore failed to start.
(EngineCore_DP0 pid=77) ValueError: moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton', 'flashinfer_cutlass'].
"""  # noqa: E501


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    old = os.environ.get("VLLM_TRIAGE_DATA_DIR")
    os.environ["VLLM_TRIAGE_DATA_DIR"] = str(data)
    try:
        assert main(["sources", "build", "--versions", "0.6.3,0.17.0", "--jobs", "2"]) == 0
    finally:
        if old is None:
            os.environ.pop("VLLM_TRIAGE_DATA_DIR", None)
        else:
            os.environ["VLLM_TRIAGE_DATA_DIR"] = old
    store = SqliteSourceStore(index_file(data))
    built = store.releases("vllm")
    assert [r.version for r in built] == ["0.6.3", "0.17.0"] and all(r.unparsed == 0 for r in built)
    loaded = store.load("vllm")
    text = store.source("vllm", "0.17.0", "vllm/config/model.py")
    store.close()
    return loaded, text


def test_the_supports_pp_error_resolves_to_model_config_at_the_seed_line(index):
    loaded, text = index
    found = resolve(loaded, parse("[Bug]: pipeline parallelism with an MTP draft model", PP_REPORT))
    assert found is not None and found.of == "exception"
    m = found.resolution.site
    assert m is not None and m.at_release and m.release.version == "0.17.0"
    assert (m.file, m.line, m.site.qualname) == ("vllm/config/model.py", 1065,
                                                  "ModelConfig.verify_with_parallel_config")
    assert m.site.type == "NotImplementedError" and m.site.guard_kind == "if"
    assert "pipeline_parallel_size > 1" in m.site.guard
    assert text.splitlines()[1064].strip() == "raise NotImplementedError("
    assert [(r.version, line) for r, line in loaded.lines_of(m.site)] == [("0.17.0", 1065)]
    # the same error at 0.6.3: the same function, in vllm/config.py then
    old = resolve(loaded, parse("[Bug]: pp", PP_REPORT.replace("0.17.0", "0.6.3")))
    assert (old.resolution.site.file, old.resolution.site.site.qualname) == (
        "vllm/config.py", "ModelConfig.verify_with_parallel_config")


def test_the_moe_backend_error_resolves_to_the_fused_moe_oracle(index):
    loaded, _ = index
    found = resolve(loaded, parse("[Bug]: marlin MoE backend", MOE_REPORT))
    m = found.resolution.site
    assert m is not None and m.at_release and m.release.version == "0.17.0"
    assert m.file == "vllm/model_executor/layers/fused_moe/oracle/unquantized.py"
    assert m.site.qualname == "map_unquantized_backend" and m.site.type == "ValueError"
    # not raised at 0.6.3: the nearest release that raises it
    old = resolve(loaded, parse("[Bug]: marlin", MOE_REPORT.replace("vllm 0.17.0", "vllm 0.6.3")))
    assert old.resolution.release.version == "0.6.3"
    assert not old.resolution.site.at_release and old.resolution.site.release.version == "0.17.0"


def test_the_seed_errors_explainer_page_has_what_the_seed_page_has(index):
    """The page (as its JSON) for the seed's SupportsPP error at 0.17.0, item by item against the seed's page: the
    message, the type, what it means, the code around the raise pinned to the release, the releases, solutions
    and an example fix, when it happens, related errors, the JSON API."""
    from bot.dashboard.catalog import Catalog
    from bot.dashboard.explainer import build_page, chosen_release
    from bot.dashboard.sitelinks import IndexSites, coverage
    from bot.rules import DEFAULT_RULES_DIR, load_rules

    loaded, text = index
    site = resolve(loaded, parse("[Bug]: pp", PP_REPORT)).resolution.site.site
    catalog = Catalog(load_rules(DEFAULT_RULES_DIR), IndexSites({"vllm": loaded}))
    rules = [catalog.entry(rid) for rid in coverage(catalog).get(site.id, ())]
    release, _ = chosen_release(loaded, site, "0.17.0")
    page = build_page(loaded, site, release, "0.17.0", text, rules=rules, superseding=[], issues=[],
                      issues_recorded=False).as_json()
    assert page["message"]["template"] == ("Pipeline parallelism is not supported for this model. Supported models "
                                           "implement the `SupportsPP` interface.")
    assert page["type"] == "NotImplementedError"
    assert "pp-model-not-supported" in [r["id"] for r in page["meaning"]["rules"]]
    assert "pipeline_parallel_size > 1" in page["meaning"]["condition"]
    source = page["source"]
    assert source["release"] == "0.17.0" and source["line"] == 1065
    assert source["permalink"] == "https://github.com/vllm-project/vllm/blob/v0.17.0/vllm/config/model.py#L1065"
    excerpt = [c["line"] for c in source["excerpt"]]
    assert excerpt[0] == 1045 and excerpt[-1] >= 1085
    assert [c["text"].strip() for c in source["excerpt"] if c["marked"]][0] == "raise NotImplementedError("
    assert page["releases"]["first"] == "0.17.0" and page["releases"]["runs"][0]["line"] == 1065
    solutions = {s["rule"]: s for s in page["solutions"]}
    assert "--pipeline-parallel-size" in solutions["pp-model-not-supported"]["example_fix"]["before"]
    assert solutions["pp-model-not-supported"]["solutions"]
    assert page["related"]["same_function"], "the attention heads check of the same function"
    assert [r["file"] for r in page["related"]["same_message"]] == ["vllm/config.py"]    # 0.6.3
    assert page["api"] == f"/api/errors/{site.id}"
