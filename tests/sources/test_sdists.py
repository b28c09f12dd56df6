"""Finding sdists where pip is configured to look, and downloading them with their hash checked."""

import hashlib
import json
import sys

import pytest
from releases import RELEASES, write_index, write_sdist

from bot.sources.build import PlanError, select
from bot.sources.sdists import (
    IndexClient,
    PipIndex,
    Sdist,
    SdistError,
    final_versions,
    index_from_config,
    parse_simple_page,
    pip_index,
    sdist_version,
)


def test_pip_precedence_environment_then_download_section_then_global():
    config = {"global.index-url": "https://global.invalid/simple", "download.index-url": "https://dl.invalid/simple",
              "global.extra-index-url": "file:///a/simple file:///b/simple", "global.cert": "/etc/ca.pem",
              ":env:.default-timeout": "30", "global.find-links": "/opt/wheels"}
    got = index_from_config(config, lambda: "https://default.invalid/simple", environ={})
    assert got == PipIndex(("https://dl.invalid/simple", "file:///a/simple", "file:///b/simple"), ("/opt/wheels",),
                           "/etc/ca.pem", 30.0)
    config[":env:.index-url"] = "https://env.invalid/simple"
    assert index_from_config(config, lambda: "x", environ={}).index_urls[0] == "https://env.invalid/simple"


def test_pip_default_index_when_none_is_configured_and_no_index():
    asked = []
    got = index_from_config({}, lambda: asked.append(1) or "https://default.invalid/simple", environ={})
    assert got.index_urls == ("https://default.invalid/simple",) and asked == [1]
    assert index_from_config({"global.no-index": "true", "global.find-links": "/w"}, lambda: "x",
                             environ={}).index_urls == ()


def test_the_real_pip_configuration_is_read():
    index = pip_index(sys.executable)
    assert index.index_urls or index.find_links
    assert all("://" in url for url in index.index_urls)


def test_sdist_versions_from_file_names():
    assert sdist_version("vllm-0.6.3.post1.tar.gz", "vllm") == "0.6.3.post1"
    assert sdist_version("vllm_flash_attn-2.5.tar.gz", "vllm") is None
    assert sdist_version("vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl", "vllm") is None
    assert sdist_version("Foo_Bar-1.0.tar.gz", "foo-bar") == "1.0"
    assert sdist_version("vllm-notaversion.tar.gz", "vllm") is None


def test_json_and_html_pages_yanked_files_left_out():
    page = {"files": [
        {"filename": "vllm-0.1.0.tar.gz", "url": "../../packages/vllm-0.1.0.tar.gz", "hashes": {"sha256": "ab"},
         "upload-time": "2023-06-20T01:02:03.4Z", "size": 10},
        {"filename": "vllm-0.1.1.tar.gz", "url": "https://files.invalid/vllm-0.1.1.tar.gz", "hashes": {},
         "yanked": "broken"},
        {"filename": "vllm-0.1.0-py3-none-any.whl", "url": "x.whl", "hashes": {}},
    ]}
    got = parse_simple_page(json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json",
                            "https://index.invalid/simple/vllm/", "vllm")
    assert got == [Sdist("vllm", "0.1.0", "vllm-0.1.0.tar.gz", "https://index.invalid/packages/vllm-0.1.0.tar.gz",
                         "ab", "2023-06-20T01:02:03.4Z", 10)]
    html = (b'<a href="/f/vllm-0.2.0.tar.gz#sha256=cd">vllm-0.2.0.tar.gz</a>'
            b'<a href="/f/vllm-0.2.1.tar.gz" data-yanked="">vllm-0.2.1.tar.gz</a>')
    got = parse_simple_page(html, "text/html", "https://index.invalid/simple/vllm/", "vllm")
    assert got == [Sdist("vllm", "0.2.0", "vllm-0.2.0.tar.gz", "https://index.invalid/f/vllm-0.2.0.tar.gz", "cd")]


def test_listing_and_downloading_from_an_index_on_disk(tmp_path):
    url = write_index(tmp_path / "index")
    client = IndexClient(PipIndex((url,)))
    found = client.list_sdists("vllm")
    assert sorted(found) == ["1.0", "2.0"]
    sdist = found["2.0"]
    path = client.download(sdist, tmp_path / "cache")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sdist.sha256
    assert client.download(sdist, tmp_path / "cache") == path  # kept, not fetched again
    assert IndexClient(PipIndex((url,))).list_sdists("transformers") == {}


def test_a_download_whose_hash_differs_is_refused_and_nothing_is_left(tmp_path):
    url = write_index(tmp_path / "index")
    client = IndexClient(PipIndex((url,)))
    sdist = client.list_sdists("vllm")["1.0"]
    bad = Sdist(sdist.package, sdist.version, sdist.filename, sdist.url, "0" * 64)
    with pytest.raises(SdistError, match="sha256"):
        client.download(bad, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_find_links_directories_and_the_first_index_wins(tmp_path):
    links = tmp_path / "links"
    links.mkdir()
    write_sdist(links, "1.0", {"vllm/__init__.py": "", "vllm/a.py": "raise ValueError('from find-links')"})
    write_sdist(links, "3.0", RELEASES["2.0"])
    url = write_index(tmp_path / "index")
    found = IndexClient(PipIndex((url,), (str(links),))).list_sdists("vllm")
    assert sorted(found) == ["1.0", "2.0", "3.0"]
    assert "/index/files/" in found["1.0"].url and found["3.0"].url.startswith("file://")


def test_selecting_releases():
    versions = ["0.1.0", "0.2.0", "0.2.1rc1", "0.2.1.dev3", "0.2.1", "0.3.0.post1", "0.3.0", "0.4.0"]
    assert final_versions(versions) == ["0.1.0", "0.2.0", "0.2.1", "0.3.0", "0.3.0.post1", "0.4.0"]
    assert select(versions) == ["0.1.0", "0.2.0", "0.2.1", "0.3.0", "0.3.0.post1", "0.4.0"]
    assert select(versions, ">=0.2,<0.3.0.post1") == ["0.2.0", "0.2.1", "0.3.0"]
    assert select(versions, latest=2) == ["0.3.0.post1", "0.4.0"]
    assert select(versions, ">=0.2,<0.4", latest=1) == ["0.3.0.post1"]
    assert select(versions, "0.4.0, 0.2.1rc1") == ["0.2.1rc1", "0.4.0"]
    with pytest.raises(PlanError, match="0.9.9"):
        select(versions, "0.4.0,0.9.9")
    with pytest.raises(PlanError, match="not a version specifier"):
        select(versions, "latest please")


def test_build_runs_releases_in_worker_processes_and_reports_a_failed_one(tmp_path):
    from bot.sources.build import build, plan

    url = write_index(tmp_path / "index")
    client = IndexClient(PipIndex((url,)))
    todo, done = plan(client, "vllm", built={"1.0"})
    assert [s.version for s in todo] == ["2.0"] and done == ["1.0"]
    todo, _ = plan(client, "vllm", built=set())
    broken = Sdist("vllm", "9.9", "vllm-9.9.tar.gz", (tmp_path / "missing.tar.gz").as_uri())
    stored, seen = [], []
    summary = build("vllm", todo + [broken], client.index, tmp_path / "cache", stored.append, jobs=2,
                    progress=lambda n, total, version: seen.append((n, total)))
    assert sorted(b.version for b in stored) == ["1.0", "2.0"] == sorted(b.version for b in summary.built)
    assert [v for v, _ in summary.failed] == ["9.9"]
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert list((tmp_path / "cache").glob("*.tar.gz")) == []  # sdists are not kept unless asked
    assert summary.render() == "2 built, 0 already built, 1 failed (1 modules could not be parsed)"
    with pytest.raises(PlanError, match="no sdist of transformers"):
        plan(client, "transformers", built=set())
