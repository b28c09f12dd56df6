"""Reading the two test releases' sdists, folding their sites into one index, and matching errors to them."""

import pytest
from releases import RELEASES, UPLOADED, line_of, write_sdist

from bot.report.model import Frame
from bot.sources.build import read_release
from bot.sources.index import Query, SourceIndex, vllm_path
from bot.sources.model import Release, add_release
from bot.sources.sdists import Sdist
from bot.sources.template import render

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")
MOE = ("moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton', "
       "'flashinfer_cutlass'].")
CHECKPOINT = "Unsupported checkpoint format bin for this loader"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sdists")
    out = {}
    for version in RELEASES:
        archive = write_sdist(directory, version)
        out[version] = read_release("vllm", Sdist("vllm", version, archive.name, archive.as_uri()), archive)
    return out


@pytest.fixture(scope="module")
def index(builds):
    sites = {}
    releases = []
    for i, (version, build) in enumerate(builds.items(), start=1):
        release = Release(i, "vllm", version, build.uploaded_at)
        releases.append(release)
        add_release(sites, "vllm", release, build.sites)
    return SourceIndex("vllm", releases, sites.values())


def by_message(index, text):
    return [s for s in index.sites.values() if text in s.message]


def test_a_release_reads_every_module_of_the_package_except_vendored_code(builds):
    one = builds["1.0"]
    assert one.modules == 9  # every vllm/**/*.py but third_party/
    assert one.unparsed and "vllm/broken.py" in one.unparsed[0]
    assert set(one.files) == {"vllm/config.py", "vllm/engine.py", "vllm/models/a.py", "vllm/models/b.py",
                              "vllm/gone.py", "vllm/proxy.py"}
    assert not any("vendored" in render(s.template) for s in one.sites)
    assert one.uploaded_at == UPLOADED["1.0"].strftime("%Y-%m-%dT%H:%M:%SZ")


def test_sites_of_each_release(builds):
    got = {v: sorted((s.file, s.line, s.kind, s.type) for s in b.sites) for v, b in builds.items()}
    assert got["1.0"] == sorted([
        ("vllm/config.py", line_of("1.0", "vllm/config.py", "Total number"), "raise", "ValueError"),
        ("vllm/config.py", line_of("1.0", "vllm/config.py", "Pipeline"), "raise", "NotImplementedError"),
        ("vllm/engine.py", line_of("1.0", "vllm/engine.py", "EngineCore failed"), "log", "error"),
        ("vllm/engine.py", line_of("1.0", "vllm/engine.py", "Engine core init"), "raise", "RuntimeError"),
        ("vllm/engine.py", line_of("1.0", "vllm/engine.py", "raise ValueError(msg)"), "raise", "ValueError"),
        ("vllm/gone.py", 2, "raise", "ValueError"),
        ("vllm/models/a.py", 3, "raise", "ValueError"),
        ("vllm/models/b.py", 3, "raise", "ValueError"),
        ("vllm/proxy.py", 3, "raise", "AttributeError"),
    ])
    assert len(got["2.0"]) == 9
    assert ("vllm/moe.py", 3, "raise", "ValueError") in got["2.0"]


def test_one_site_per_statement_across_releases_with_a_line_per_release(index):
    engine = by_message(index, "Engine core initialization failed")
    assert len(engine) == 1
    assert [(r.version, line) for r, line in index.lines_of(engine[0])] == [
        ("1.0", line_of("1.0", "vllm/engine.py", "Engine core init")),
        ("2.0", line_of("2.0", "vllm/engine.py", "Engine core init")),
    ]
    assert line_of("2.0", "vllm/engine.py", "Engine core init") == \
        line_of("1.0", "vllm/engine.py", "Engine core init") + 3
    # moved to another file: two sites, one per file, with the same message
    pp = sorted(by_message(index, "Pipeline parallelism"), key=lambda s: s.file)
    assert [(s.file, [r.version for r in index.releases_of(s)]) for s in pp] == [
        ("vllm/config.py", ["1.0"]), ("vllm/config/model.py", ["2.0"])]
    assert {s.qualname for s in pp} == {"ModelConfig.verify_with_parallel_config"}
    # reworded: two sites
    heads = by_message(index, "Total number of attention heads")
    assert sorted(index.releases_of(s)[0].version for s in heads) == ["1.0", "2.0"]
    assert len(index) == 12


def test_an_exception_resolves_to_its_site_at_the_reporters_release(index):
    for version, path in (("1.0", "vllm/config.py"), ("2.0", "vllm/config/model.py")):
        res = index.match(Query(PP, type="NotImplementedError", version=version))
        assert res.release.version == version
        m = res.site
        assert m is not None and m.at_release and m.by == "message"
        assert (m.file, m.line) == (path, line_of(version, path, "Pipeline"))
        assert m.site.qualname == "ModelConfig.verify_with_parallel_config"
        assert m.site.guard == "parallel_config.pipeline_parallel_size > 1 and (not self.supports_pp)"


def test_dev_rc_and_local_builds_map_to_their_base_release(index):
    for version, expected in (("1.0.dev12+g1234abc", "1.0"), ("2.0rc1", "2.0"), ("2.0+cu121", "2.0"),
                              ("1.5", "1.0"), ("2.0.post1", "2.0"), ("3.1.0", "2.0"), ("v2.0", "2.0")):
        assert index.release_for(version).version == expected, version
    assert index.release_for("0.1") is None
    assert index.release_for("not a version") is None


def test_an_unknown_version_is_the_newest_release_before_the_report(index):
    assert index.release_for(None, "2024-03-01T00:00:00Z").version == "1.0"
    assert index.release_for(None, "2024-07-01T00:00:00Z").version == "2.0"
    assert index.release_for("garbage", "2024-07-01T00:00:00Z").version == "2.0"
    assert index.release_for(None, "2023-01-01T00:00:00Z") is None
    res = index.match(Query(PP, type="NotImplementedError", created_at="2024-03-01T00:00:00Z"))
    assert res.site.file == "vllm/config.py"


def test_a_message_not_raised_at_the_reporters_release_names_the_nearest_release_that_raises_it(index):
    res = index.match(Query(MOE, type="ValueError", version="1.0"))
    m = res.site
    assert m is not None and not m.at_release and m.release.version == "2.0" and m.file == "vllm/moe.py"
    gone = index.match(Query("The legacy block manager was removed; this path is gone.", type="ValueError",
                             version="2.0")).site
    assert gone is not None and not gone.at_release and gone.release.version == "1.0"
    # the old wording at the new release: the old site, at the release that still had it
    old = index.match(Query("Total number of attention heads (40) must be divisible by tensor parallel size (3).",
                            type="ValueError", version="2.0")).site
    assert old.release.version == "1.0" and old.file == "vllm/config.py"


def test_a_cut_short_message_still_resolves(index):
    res = index.match(Query("Pipeline parallelism is not supported for this model. Supp", type="NotImplementedError",
                            version="2.0"))
    assert res.site.file == "vllm/config/model.py" and res.site.fit.how == "cut"


def test_the_type_is_checked_when_known(index):
    assert not index.match(Query(PP, type="ValueError", version="2.0")).matches
    assert index.match(Query(PP, type="vllm.errors.NotImplementedError", version="2.0")).site is not None
    # pydantic's ValidationError carries the validator's ValueError message
    assert index.match(Query(MOE, type="pydantic_core._pydantic_core.ValidationError", version="2.0")).site


def test_ties_are_broken_by_the_innermost_vllm_frame_or_the_log_location(index):
    res = index.match(Query(CHECKPOINT, type="ValueError", version="2.0"))
    assert sorted(m.file for m in res.matches) == ["vllm/models/a.py", "vllm/models/b.py"]
    assert res.site is None
    frames = (Frame("/usr/lib/python3.12/site-packages/vllm/engine.py", 5, "start_engine", True),
              Frame("/usr/lib/python3.12/site-packages/vllm/models/b.py", 3, "load_b", True),
              Frame("/usr/lib/python3.12/site-packages/torch/nn/module.py", 9, "call", False))
    res = index.match(Query(CHECKPOINT, type="ValueError", version="2.0", frames=frames))
    assert res.site.file == "vllm/models/b.py" and res.site.by == "message+frame"
    res = index.match(Query(CHECKPOINT, level="ERROR", version="2.0", location=("a.py", 3)))
    assert res.site.file == "vllm/models/a.py" and res.site.by == "message+location"


def test_log_lines_resolve_to_logger_calls_at_a_matching_level(index):
    res = index.match(Query("EngineCore failed to start: CUDA out of memory", level="ERROR", version="1.0",
                            location=("engine.py", 10)))
    assert res.site.site.kind == "log" and res.site.site.type == "error"
    assert not index.match(Query("EngineCore failed to start: CUDA out of memory", level="WARNING",
                                 version="1.0")).matches
    # a log line never resolves to an exception type's site the other way round
    assert not index.match(Query("EngineCore failed to start: x", type="RuntimeError", version="1.0")).matches


def test_an_error_quoted_in_a_title(index):
    res = index.match(Query("[Bug]: ValueError: moe_backend='marlin' is not supported for unquantized MoE",
                            free_text=True, version="2.0"))
    assert res.site.file == "vllm/moe.py"
    assert not index.match(Query("[Usage]: how do I pick a moe backend?", free_text=True)).matches


def test_a_message_that_is_all_holes_resolves_only_by_its_frame(index):
    frames = (Frame("/opt/venv/lib/python3.11/site-packages/vllm/engine.py",
                    line_of("2.0", "vllm/engine.py", "raise ValueError(msg)"), "check", True),)
    res = index.match(Query("some value computed elsewhere", type="ValueError", version="2.0", frames=frames))
    assert res.site.by == "frame" and res.site.site.function == "check"
    assert not index.match(Query("some value computed elsewhere", type="ValueError", version="2.0")).matches
    assert not index.match(Query("some value computed elsewhere", type="KeyError", version="2.0",
                                 frames=frames)).matches


def test_vllm_paths_from_tracebacks():
    assert vllm_path("/usr/local/lib/python3.12/dist-packages/vllm/config/model.py") == "vllm/config/model.py"
    assert vllm_path("/home/me/src/vllm/vllm/engine/llm_engine.py") == "vllm/engine/llm_engine.py"
    assert vllm_path("C:\\venv\\Lib\\site-packages\\vllm\\utils.py") == "vllm/utils.py"
    assert vllm_path("/usr/lib/python3/dist-packages/torch/nn/modules/module.py") is None
    assert vllm_path("/usr/lib/python3/site-packages/vllm_ascend/worker.py") is None


def test_a_first_line_known_to_be_cut_needs_less_of_the_template(index):
    query = Query("Total number of attention heads (40", type="ValueError", version="2.0")
    assert not index.match(query).matches  # it may be any message that begins so
    res = index.match(Query(query.text, type="ValueError", version="2.0", cut=True))
    assert res.matches and res.matches[0].fit.how == "cut"
    assert {m.file for m in res.matches} == {"vllm/config/model.py"}


def test_a_title_that_only_mentions_words_of_a_message_does_not_resolve(index):
    # the words of the PP message, but not the message: the quote stops matching after a few words
    assert not index.match(Query("Does pipeline parallelism work with MTP?", free_text=True, version="2.0")).matches
    assert not index.match(Query("[Usage]: Pipeline parallelism is not supported with my setup, why?",
                                 free_text=True, version="2.0")).matches
    # ... while a quote that goes on long enough does
    res = index.match(Query("[Bug] Pipeline parallelism is not supported for this model. Supported models "
                            "implement the interface (Qwen3.5)", free_text=True, version="2.0"))
    assert res.site.file == "vllm/config/model.py" and res.site.fit.how == "partial"


def test_a_message_that_is_python_s_own_needs_a_frame_in_the_site_s_file(index):
    message = "'EagleProposer' object has no attribute 'positions'"
    assert not index.match(Query(message, type="AttributeError", version="2.0")).matches
    frames = (Frame("/venv/lib/python3.12/site-packages/vllm/proxy.py", 3, "__getattr__", True),)
    res = index.match(Query("'LayerProxy' object has no attribute 'weight'", type="AttributeError",
                            version="2.0", frames=frames))
    assert res.site.file == "vllm/proxy.py"


def test_a_weak_fit_only_other_releases_have_does_not_resolve(index):
    # cut after 24 literal characters, half the template: enough at 1.0, which has it, not at 2.0, which has not
    cut = "The legacy block manager was"
    res = index.match(Query(cut, type="ValueError", version="1.0"))
    assert res.site is not None and res.site.at_release
    assert not index.match(Query(cut, type="ValueError", version="2.0")).matches
    assert index.match(Query(cut + " removed; this", type="ValueError", version="2.0")).site.release.version == "1.0"
