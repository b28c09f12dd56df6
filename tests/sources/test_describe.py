"""A site told to a reader, and finding the site of a pasted error: on the two test releases and on sites read from
small modules written here."""

import textwrap

import pytest
from releases import line_of, memory_index

from bot.sources import describe
from bot.sources.extract import extract
from bot.sources.index import SourceIndex
from bot.sources.model import Release, add_release
from bot.sources.search import MAX_PASTE, search

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return memory_index(tmp_path_factory.mktemp("sdists"))[0]


def one(index, file, text):
    found = [s for s in index.sites.values() if s.file == file and text in s.message]
    assert len(found) == 1, found
    return found[0]


def sites_of(source: str, releases: list[tuple[str, str]] | None = None) -> tuple[SourceIndex, dict]:
    """An index of one module read at each (version, source) given (one release when `releases` is None)."""
    releases = releases or [("1.0", source)]
    sites: dict = {}
    rels = []
    for i, (version, text) in enumerate(releases, start=1):
        release = Release(i, "vllm", version)
        rels.append(release)
        add_release(sites, "vllm", release, extract("vllm/x.py", textwrap.dedent(text)))
    index = SourceIndex("vllm", rels, sites.values())
    return index, {s.message: s for s in index.sites.values()}


def words(parts) -> str:
    return describe.markdown(parts)


def test_the_condition_in_words_for_every_kind_of_guard():
    _, by = sites_of('''
        import logging
        logger = logging.getLogger(__name__)

        class ModelConfig:
            def verify(self, model_cls, pp, x, kind):
                if pp > 1 and not model_cls.supports_pp:
                    raise NotImplementedError("Pipeline parallelism is not supported for this model class here")
                if x:
                    pass
                else:
                    raise ValueError("The value x must be set before verifying the configuration")
                if kind == "fast":
                    return
                logger.warning("Falling back to the slow path for this kind of configuration")
                try:
                    import foo  # noqa
                except ImportError as e:
                    raise RuntimeError("The optional foo package is required for this feature") from e
                assert x > 0, "x must be a positive number of workers for this feature"
                match kind:
                    case "odd":
                        raise TypeError("An odd kind of configuration cannot be verified at all")

            def finish(self):
                raise KeyError("This statement is reached whenever finish runs to its end")
    ''')
    assert words(describe.condition(by["Pipeline parallelism is not supported for this model class here"])) == (
        "raised when `pp > 1 and (not model_cls.supports_pp)` in `ModelConfig.verify`")
    assert words(describe.condition(by["The value x must be set before verifying the configuration"])) == (
        "raised when `x` is false (the `else` of that `if`) in `ModelConfig.verify`")
    assert words(describe.condition(by["Falling back to the slow path for this kind of configuration"])) == (
        "logged when `kind == 'fast'` is false in `ModelConfig.verify` (an earlier `if` leaves the block when it "
        "holds)")
    assert words(describe.condition(by["The optional foo package is required for this feature"])) == (
        "raised while handling `ImportError` (in its `except` clause) in `ModelConfig.verify`")
    assert words(describe.condition(by["x must be a positive number of workers for this feature"])) == (
        "raised when the assertion `x > 0` fails in `ModelConfig.verify`")
    assert words(describe.condition(by["An odd kind of configuration cannot be verified at all"])) == (
        "raised in the `case 'odd'` of a `match` in `ModelConfig.verify`")
    assert words(describe.condition(by["This statement is reached whenever finish runs to its end"])) == (
        "raised whenever `ModelConfig.finish` reaches this statement (no condition guards it)")
    assert describe.guard_code(by["Pipeline parallelism is not supported for this model class here"]) == \
        "if pp > 1 and (not model_cls.supports_pp):"
    assert describe.guard_code(by["x must be a positive number of workers for this feature"]) == "assert x > 0"
    assert describe.guard_code(by["The value x must be set before verifying the configuration"]) == \
        "if x:  # false: the statement is in its else"
    assert describe.guard_code(by["Falling back to the slow path for this kind of configuration"]).startswith(
        "if kind == 'fast':  # false")
    assert describe.guard_code(by["The optional foo package is required for this feature"]) == "except ImportError:"
    assert describe.guard_code(by["This statement is reached whenever finish runs to its end"]) is None
    assert words(describe.what(by["Falling back to the slow path for this kind of configuration"])) == \
        "logged at warning level"
    assert words(describe.what(by["The value x must be set before verifying the configuration"])) == \
        "raised as `ValueError`"


def test_code_in_a_sentence_survives_backticks():
    assert describe.code_span("a `b` c") == "``a `b` c``"
    assert describe.code_span("`x`") == "`` `x` ``"
    assert describe.code_span("a\n   b") == "`a b`"


def test_a_site_at_import_of_its_module():
    _, by = sites_of('''
        import os
        if os.environ.get("VLLM_BAD"):
            raise RuntimeError("VLLM_BAD must not be set when importing this module")
    ''')
    assert words(describe.condition(by["VLLM_BAD must not be set when importing this module"])) == (
        "raised when `os.environ.get('VLLM_BAD')` at import of the module")


def test_releases_read_as_runs_of_the_same_line():
    base = 'def f(x):\n    if x:\n        raise ValueError("The value of x is not supported by this function")\n'
    moved = "# a comment\n" + base
    versions = [("1.0", base), ("1.1", base), ("1.2", moved), ("1.3", "def g():\n    pass\n"), ("1.4", moved),
                ("1.5", "def g():\n    pass\n")]
    index, by = sites_of(base, versions)
    site = by["The value of x is not supported by this function"]
    assert [(r.versions, r.line, r.count) for r in describe.runs(index, site)] == [
        ("1.0 – 1.1", 3, 2), ("1.2", 4, 1), ("1.4", 4, 1)]   # 1.3 lacks it: a run ends even at the same line
    span = describe.span(index, site)
    assert (span.first.version, span.last.version, span.releases, span.gaps) == ("1.0", "1.4", 4, 1)
    assert span.next_after_last.version == "1.5" and span.newest_indexed.version == "1.5"
    rel, line, end = describe.newest(index, site)
    assert (rel.version, line, end) == ("1.4", 4, 4)


def test_permalinks_are_pinned_to_the_release_tag():
    assert describe.permalink("vllm", "0.17.0", "vllm/config/model.py", 1065) == \
        "https://github.com/vllm-project/vllm/blob/v0.17.0/vllm/config/model.py#L1065"
    assert describe.permalink("transformers", "4.46.0", "transformers/x.py", 3) == \
        "https://github.com/huggingface/transformers/blob/v4.46.0/transformers/x.py#L3"
    assert describe.permalink("somepkg", "1.0", "somepkg/x.py", 3) is None


def test_neighbours_and_the_same_message_elsewhere(index):
    pp2 = one(index, "vllm/config/model.py", "Pipeline parallelism")
    pp1 = one(index, "vllm/config.py", "Pipeline parallelism")
    assert {s.id for s in index.same_message(pp2)} == {s.id for s in index.same_message(pp1)} == {pp1.id, pp2.id}
    two = index.by_version["2.0"]
    same_function, same_file = describe.neighbours(index, pp2, two)
    assert [s.type for s in same_function] == ["ValueError"] and "attention heads" in same_function[0].message
    assert same_file == []
    engine = one(index, "vllm/engine.py", "Engine core initialization failed")
    same_function, same_file = describe.neighbours(index, engine, two)
    assert [s.kind for s in same_function] == ["log"]
    assert [s.function for s in same_file] == ["check"]
    assert {s.file for s in index.sites_in("vllm/models/a.py")} == {"vllm/models/a.py"}


def test_a_pasted_traceback_resolves_to_its_site(index):
    line = line_of("2.0", "vllm/config/model.py", "Pipeline")
    paste = f'''(EngineCore_DP0 pid=12) ERROR 06-02 10:00:00 [core.py:700] EngineCore failed to start.
Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/vllm/engine.py", line 9, in start_engine
    core = make_core(config)
  File "/usr/lib/python3/dist-packages/vllm/config/model.py", line {line}, in verify_with_parallel_config
    raise NotImplementedError(
NotImplementedError: {PP}
'''
    found = search(index, paste, "2.0")
    assert found.of == "exception" and len(found.matches) == 1
    m = found.matches[0]
    assert (m.site.file, m.line, m.release.version, m.at_release) == ("vllm/config/model.py", line, "2.0", True)
    # the same paste at the old release: the old file
    assert search(index, paste, "1.0").matches[0].site.file == "vllm/config.py"


def test_a_bare_message_a_log_line_and_a_quote(index):
    bare = search(index, "Pipeline parallelism is not supported for this model.")
    assert bare.of == "message" and bare.matches[0].site.file == "vllm/config/model.py"   # no version: the newest
    line = line_of("2.0", "vllm/engine.py", "EngineCore failed")
    log = search(index, f"(EngineCore_DP0 pid=7) ERROR 06-02 10:00:00 [engine.py:{line}] EngineCore failed to start: "
                        "CUDA error: out of memory")
    assert log.of in ("log-line", "error-line") and log.matches[0].site.kind == "log"
    quote = search(index, f"after upgrading I get '{PP}' when I start the server")
    assert quote.of == "text" and quote.matches[0].site.file == "vllm/config/model.py"


def test_a_message_raised_in_two_places_lists_both(index):
    found = search(index, "ValueError: Unsupported checkpoint format bin for this loader")
    assert sorted(m.site.file for m in found.matches) == ["vllm/models/a.py", "vllm/models/b.py"]


def test_the_start_of_a_message_finds_the_release_searched_before_an_older_shorter_one():
    old = """
        def start(pool):
            if pool.threads:
                raise NotImplementedError("Widget pool manager is not supported yet with threads.")
    """
    new = """
        def start(pool):
            if not pool.supports_widgets:
                raise NotImplementedError(
                    "Widget pool manager is not supported for this model. Supported models implement the WidgetPool "
                    "interface, listed in the registry.")
    """
    index, by = sites_of("", [("1.0", old), ("2.0", new)])
    current = next(s for m, s in by.items() if m.startswith("Widget pool manager is not supported for"))
    older = next(s for m, s in by.items() if m.startswith("Widget pool manager is not supported yet"))
    start = "NotImplementedError: Widget pool manager is not supported"
    found = search(index, start)
    assert [(m.site.id, m.release.version, m.at_release) for m in found.matches] == [(current.id, "2.0", True)]
    # at the old release, and for the old message in full, the old site
    assert [m.site.id for m in search(index, start, "1.0").matches] == [older.id]
    whole = search(index, "NotImplementedError: Widget pool manager is not supported yet with threads.")
    assert [(m.site.id, m.at_release) for m in whole.matches] == [(older.id, False)]


def test_text_that_is_no_site_matches_nothing(index):
    for text in ("", "   ", "hello", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                 "ValueError: " + "x" * 300):
        found = search(index, text)
        assert found.matches == () and found.of is None, text


def test_a_long_paste_is_read_from_its_end(index):
    filler = "INFO 06-02 10:00:00 [core.py:1] loading weights\n" * (MAX_PASTE // 40)
    found = search(index, filler + f"NotImplementedError: {PP}\n")
    assert found.truncated and found.matches[0].site.file == "vllm/config/model.py"
    head = search(index, f"NotImplementedError: {PP}\n" + filler)   # the error scrolled out of what is read
    assert head.truncated and head.matches == ()
