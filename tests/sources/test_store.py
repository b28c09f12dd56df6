"""The source index's store on real SQLite and Postgres: releases built from sdists the tests write, served by an
index on disk, stored, loaded back and matched; incremental builds, removal, texts for excerpts; the CLI."""

import hashlib

import pytest
from app.pg import pg_url  # noqa: F401 - fixture
from releases import CONFIG, ENGINE_2, RELEASES, line_of, write_index, write_sdist

from bot.cli import main
from bot.sources.build import build, plan
from bot.sources.index import Query
from bot.sources.model import Release, add_release, excerpt
from bot.sources.sdists import IndexClient, PipIndex
from bot.stores.sources.sqlite import SqliteSourceStore, index_file

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    if request.param == "sqlite":
        s = SqliteSourceStore(tmp_path / "sources" / "index.sqlite3")
    else:
        from bot.stores.sources.postgres import PostgresSourceStore

        s = PostgresSourceStore(request.getfixturevalue("pg_url"))
    yield s
    s.close()


@pytest.fixture(scope="module")
def index_url(tmp_path_factory):
    return write_index(tmp_path_factory.mktemp("index"))


def fill(store, index_url, cache, versions=None):
    client = IndexClient(PipIndex((index_url,)))
    todo, _ = plan(client, "vllm", {r.version for r in store.releases("vllm")})
    if versions:
        todo = [s for s in todo if s.version in versions]
    return build("vllm", todo, client.index, cache, store.add_release, jobs=2)


def snapshot(index):
    return {sid: (s.file, s.qualname, s.kind, s.type, s.template, s.guard_kind, s.guard,
                  [(r.version, line) for r, line in index.lines_of(s)]) for sid, s in index.sites.items()}


def test_built_releases_load_back_as_the_index_the_sites_make(store, index_url, tmp_path):
    summary = fill(store, index_url, tmp_path / "cache")
    assert not summary.failed
    built = store.releases("vllm")
    assert [(r.version, r.sites, r.modules, r.unparsed, r.current) for r in built] == [
        ("1.0", 9, 9, 1, True), ("2.0", 9, 9, 0, True)]
    assert built[0].uploaded_at == "2024-01-10T00:00:00Z"
    loaded = store.load("vllm")
    # the same index as folding the builds in memory
    sites = {}
    for i, b in enumerate(sorted(summary.built, key=lambda b: b.version), start=1):
        add_release(sites, "vllm", Release(i, "vllm", b.version), b.sites)
    by_id = {r.version: r for r in loaded.releases}
    expected = {sid: (s.file, s.qualname, s.kind, s.type, s.template, s.guard_kind, s.guard,
                      [(v, line) for v, line in sorted(
                          ((("1.0", "2.0")[rid - 1], line) for rid, line in zip(s.lines[0::3], s.lines[1::3],
                                                                                 strict=True)))])
                for sid, s in sites.items()}
    assert snapshot(loaded) == expected and len(loaded) == 12 and set(by_id) == {"1.0", "2.0"}
    m = loaded.match(Query(PP, type="NotImplementedError", version="2.0")).site
    assert (m.file, m.line) == ("vllm/config/model.py", line_of("2.0", "vllm/config/model.py", "Pipeline"))


def test_a_release_is_stored_once_and_the_next_build_skips_it(store, index_url, tmp_path):
    fill(store, index_url, tmp_path / "cache", versions={"1.0"})
    client = IndexClient(PipIndex((index_url,)))
    todo, done = plan(client, "vllm", {r.version for r in store.releases("vllm")})
    assert [s.version for s in todo] == ["2.0"] and done == ["1.0"]
    again = fill(store, index_url, tmp_path / "cache2")
    assert [b.version for b in again.built] == ["2.0"]
    assert store.add_release(again.built[0]) is False
    assert [r.version for r in store.releases("vllm")] == ["1.0", "2.0"]


def test_module_texts_for_excerpts(store, index_url, tmp_path):
    fill(store, index_url, tmp_path / "cache")
    assert store.source("vllm", "1.0", "vllm/config.py") == CONFIG
    assert store.source("vllm", "2.0", "vllm/config.py") is None  # moved in 2.0
    text = store.source("vllm", "2.0", "vllm/engine.py")
    assert text == ENGINE_2
    line = line_of("2.0", "vllm/engine.py", "Engine core init")
    around = excerpt(text, line, around=3)
    assert [n for n, _ in around] == list(range(line - 3, line + 4))
    assert "raise RuntimeError" in dict(around)[line]
    assert excerpt(text, 1, around=2)[0] == (1, "import logging")


def test_removing_a_release_and_building_it_again(store, index_url, tmp_path):
    fill(store, index_url, tmp_path / "cache")
    before = snapshot(store.load("vllm"))
    assert store.remove_release("vllm", "2.0") is True
    assert store.remove_release("vllm", "2.0") is False
    after = store.load("vllm")
    assert [r.version for r in after.releases] == ["1.0"]
    assert not [s for s in after.sites.values() if "moe_backend" in s.message]
    assert all(versions == [("1.0", versions[0][1])] for *_, versions in snapshot(after).values())
    assert store.source("vllm", "2.0", "vllm/engine.py") is None
    assert store.source("vllm", "1.0", "vllm/engine.py") is not None
    fill(store, index_url, tmp_path / "cache2")
    assert snapshot(store.load("vllm")) == before


def test_the_order_releases_are_built_in_does_not_matter(store, index_url, tmp_path):
    fill(store, index_url, tmp_path / "cache", versions={"2.0"})
    fill(store, index_url, tmp_path / "cache2", versions={"1.0"})
    got = snapshot(store.load("vllm"))
    other = SqliteSourceStore(tmp_path / "other.sqlite3")
    fill(other, index_url, tmp_path / "cache3")
    assert got == snapshot(other.load("vllm"))
    other.close()


@pytest.fixture
def cli_env(monkeypatch, tmp_path):
    """pip configured with only the test index; the data dir in tmp_path."""
    url = write_index(tmp_path / "index")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("VLLM_TRIAGE_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_cli_build_status_and_mistakes(cli_env, capsys):
    assert main(["sources", "status"]) == 0
    assert "no source index" in capsys.readouterr().out
    assert main(["sources", "build", "--versions", "1.0"]) == 0
    out = capsys.readouterr()
    assert "vllm: 1 built, 0 already built, 0 failed" in out.out and "vllm/broken.py" in out.err
    assert main(["sources", "build"]) == 0
    assert "vllm: 1 built, 1 already built, 0 failed" in capsys.readouterr().out
    assert main(["sources", "status"]) == 0
    out = capsys.readouterr().out
    assert "1.0 " in out and "2.0 " in out and "2 releases, 12 distinct sites" in out
    assert index_file(cli_env / "data").exists()
    assert not list((cli_env / "data" / "sources" / "sdists").glob("*.tar.gz"))
    for argv, message in ((["--versions", "9.9"], "no sdist of 9.9"), (["--latest", "0"], "positive"),
                          (["--versions", ">=x"], "not a version specifier"),
                          (["--package", "nothing-here"], "has no sdist of nothing-here")):
        assert main(["sources", "build", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


def test_cli_reports_a_release_that_fails_and_exits_1(cli_env, capsys, monkeypatch):
    files = cli_env / "bad" / "files"
    files.mkdir(parents=True)
    good = write_sdist(files, "2.0")
    bad = write_sdist(files, "1.0", RELEASES["1.0"])
    page = cli_env / "bad" / "simple" / "vllm"
    page.mkdir(parents=True)
    sha = hashlib.sha256(good.read_bytes()).hexdigest()
    page.joinpath("index.html").write_text(
        f'<a href="../../files/{good.name}#sha256={sha}">x</a><a href="../../files/{bad.name}#sha256={"0" * 64}">y</a>')
    monkeypatch.setenv("PIP_INDEX_URL", (cli_env / "bad" / "simple").as_uri())
    assert main(["sources", "build", "--jobs", "1"]) == 1
    out = capsys.readouterr()
    assert "vllm: 1 built, 0 already built, 1 failed" in out.out
    assert "vllm 1.0:" in out.err and "sha256" in out.err and "(skipped)" in out.err


def test_vllm_triage_migrate_includes_the_source_index(tmp_path):
    from bot.stores.registry import migrate_all

    SqliteSourceStore(index_file(tmp_path)).close()
    done = migrate_all(f"sqlite:///{tmp_path / 'bot.sqlite3'}", tmp_path)
    assert ("sources", str(index_file(tmp_path)), 1) in done
    assert all(store != "sources" for store, *_ in migrate_all(f"sqlite:///{tmp_path / 'b2.sqlite3'}",
                                                                tmp_path / "empty"))
