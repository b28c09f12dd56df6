"""Getting a package's source distributions from the package index pip is configured with.

`pip download` of an sdist builds its metadata first, which fails for vLLM without torch and deletes the
archive. So pip is asked only where to look (`pip config list`: index-url, extra-index-url, find-links, cert,
timeout, with pip's own precedence: environment over the `download` section over `global`; pip's built-in
default index when none is set), and the files are listed through the index's Simple API (PEP 691 JSON, or
the PEP 503 HTML page; a file:// index or find-links directory is read from disk) and downloaded with urllib,
checked against the hash the index publishes.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
CHUNK = 1 << 16


class SdistError(RuntimeError):
    """The index could not be read, or a file could not be had from it."""


@dataclass(frozen=True)
class PipIndex:
    """Where pip looks for packages, as its configuration says."""

    index_urls: tuple[str, ...]
    find_links: tuple[str, ...] = ()
    cert: str | None = None
    timeout: float = 60.0

    def describe(self) -> str:
        return ", ".join(self.index_urls + self.find_links) or "(no index)"


@dataclass(frozen=True)
class Sdist:
    """One source archive of one release on the index."""

    package: str
    version: str
    filename: str
    url: str
    sha256: str | None = None
    upload_time: str | None = None  # ISO 8601, when the index says (PEP 700)
    size: int | None = None


def _pip_config(python: str) -> dict[str, str]:
    out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SdistError(f"`pip config list` failed: {out.stderr.strip()[:300]}")
    values: dict[str, str] = {}
    for line in out.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("'\"")
    return values


def _pip_default_index(python: str) -> str:
    """pip's built-in index URL, asked of pip itself (its constant, else its documented --index-url default)."""
    code = "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.strip()
    out = subprocess.run([python, "-m", "pip", "download", "--help"], capture_output=True, text=True, timeout=60)
    m = re.search(r"--index-url <url>\s+Base URL of the Python Package\s+Index \(default\s+(\S+?)\)", out.stdout)
    if m:
        return m.group(1)
    raise SdistError("cannot tell which index pip uses: set PIP_INDEX_URL")


def pip_index(python: str | None = None, environ: dict[str, str] | None = None) -> PipIndex:
    """The index settings of the pip that runs under `python` (default: this interpreter)."""
    python = python or sys.executable
    return index_from_config(_pip_config(python), lambda: _pip_default_index(python), environ)


def index_from_config(config: dict[str, str], default_index, environ: dict[str, str] | None = None) -> PipIndex:
    """PipIndex from `pip config list` values (`:env:.x`, `download.x`, `global.x`), the first that is set."""
    environ = os.environ if environ is None else environ

    def get(name: str) -> str | None:
        for key in (f":env:.{name}", f"download.{name}", f"global.{name}"):
            if key in config:
                return config[key]
        env = environ.get("PIP_" + name.upper().replace("-", "_"))
        return env

    if (get("no-index") or "").lower() in ("1", "true", "yes", "on"):
        index_urls: list[str] = []
    else:
        index_urls = [get("index-url") or default_index()]
        index_urls += (get("extra-index-url") or "").split()
    find_links = tuple((get("find-links") or "").split())
    timeout = get("timeout") or get("default-timeout")
    try:
        seconds = float(timeout) if timeout else 60.0
    except ValueError:
        seconds = 60.0
    return PipIndex(tuple(index_urls), find_links, get("cert") or None, seconds)


# ---- reading a Simple API page -------------------------------------------------------------------------------

class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            d = dict(attrs)
            if d.get("href"):
                self.links.append((d["href"] or "", d))


def sdist_version(filename: str, package: str) -> str | None:
    """The version in an sdist's file name `name-version.tar.gz` (the name in any normalisation), else None."""
    if not filename.endswith(".tar.gz"):
        return None
    stem = filename[: -len(".tar.gz")]
    want = canonicalize_name(package)
    for i, ch in enumerate(stem):
        if ch == "-" and canonicalize_name(stem[:i]) == want:
            version = stem[i + 1:]
            try:
                Version(version)
            except InvalidVersion:
                return None
            return version
    return None


def _hash_of(url: str, hashes: dict | None) -> tuple[str, str | None]:
    parsed = urllib.parse.urldefrag(url)
    sha = (hashes or {}).get("sha256")
    if not sha and parsed.fragment.startswith("sha256="):
        sha = parsed.fragment[len("sha256="):]
    return parsed.url, sha


def parse_simple_page(body: bytes, content_type: str, base_url: str, package: str) -> list[Sdist]:
    """The sdists on one project page of a Simple API index (JSON or HTML), yanked files left out."""
    found: list[Sdist] = []
    if content_type.split(";")[0].strip() == JSON_TYPE:
        data = json.loads(body)
        for f in data.get("files", []):
            if f.get("yanked"):
                continue
            version = sdist_version(f.get("filename", ""), package)
            if version is None:
                continue
            url, sha = _hash_of(urllib.parse.urljoin(base_url, f["url"]), f.get("hashes"))
            found.append(Sdist(package, version, f["filename"], url, sha, f.get("upload-time"), f.get("size")))
        return found
    parser = _Links()
    parser.feed(body.decode("utf-8", errors="replace"))
    for href, attrs in parser.links:
        if "data-yanked" in attrs:
            continue
        url, sha = _hash_of(urllib.parse.urljoin(base_url, href), None)
        filename = urllib.parse.unquote(url.rsplit("/", 1)[-1])
        version = sdist_version(filename, package)
        if version is not None:
            found.append(Sdist(package, version, filename, url, sha))
    return found


# ---- talking to the index ------------------------------------------------------------------------------------

@dataclass
class IndexClient:
    """Lists and downloads sdists through a PipIndex."""

    index: PipIndex
    retries: int = 3
    _ssl: ssl.SSLContext | None = field(default=None, init=False, repr=False)

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=self.index.cert) if self.index.cert \
                else ssl.create_default_context()
        return self._ssl

    def _open(self, url: str, accept: str | None = None):
        parsed = urllib.parse.urlsplit(url)
        headers = {"User-Agent": "vllm-triage (sources build)"}
        if accept:
            headers["Accept"] = accept
        if parsed.username is not None:  # credentials in the index URL, as pip accepts them
            netloc = parsed.hostname or ""
            if parsed.port:
                netloc += f":{parsed.port}"
            url = urllib.parse.urlunsplit(parsed._replace(netloc=netloc))
            token = f"{urllib.parse.unquote(parsed.username)}:{urllib.parse.unquote(parsed.password or '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        request = urllib.request.Request(url, headers=headers)
        delay = 1.0
        for attempt in range(self.retries):
            try:
                return urllib.request.urlopen(request, timeout=self.index.timeout, context=self._context())
            except urllib.error.HTTPError as e:
                if e.code < 500 or attempt == self.retries - 1:
                    raise
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == self.retries - 1:
                    raise
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _page(self, url: str, package: str) -> list[Sdist]:
        if url.startswith("file:"):
            path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
            if (path / "index.html").is_file():
                path = path / "index.html"
            if not path.is_file():
                return []
            return parse_simple_page(path.read_bytes(), "text/html", path.as_uri(), package)
        try:
            with self._open(url, ACCEPT) as response:
                return parse_simple_page(response.read(), response.headers.get("Content-Type", ""),
                                         response.geturl(), package)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return []
            raise SdistError(f"{url}: HTTP {e.code}") from e
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            raise SdistError(f"{url}: {getattr(e, 'reason', e)}") from e

    def _find_links(self, location: str, package: str) -> list[Sdist]:
        if "://" not in location or location.startswith("file:"):
            path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(location).path)
                        if location.startswith("file:") else location)
            if path.is_dir():
                found = []
                for entry in sorted(path.iterdir()):
                    version = sdist_version(entry.name, package)
                    if version is not None:
                        found.append(Sdist(package, version, entry.name, entry.resolve().as_uri()))
                return found
            return self._page(path.as_uri(), package) if path.is_file() else []
        return self._page(location, package)

    def list_sdists(self, package: str) -> dict[str, Sdist]:
        """version -> sdist, over every index and find-links location (the first that has a version wins)."""
        name = canonicalize_name(package)
        found: dict[str, Sdist] = {}
        for base in self.index.index_urls:
            for sdist in self._page(base.rstrip("/") + f"/{name}/", package):
                found.setdefault(sdist.version, sdist)
        for location in self.index.find_links:
            for sdist in self._find_links(location, package):
                found.setdefault(sdist.version, sdist)
        return found

    def download(self, sdist: Sdist, dest_dir: Path) -> Path:
        """Download `sdist` into dest_dir (kept when already there with the right hash); returns its path."""
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / sdist.filename
        if dest.exists() and (sdist.sha256 is None or file_sha256(dest) == sdist.sha256):
            return dest
        fd, tmp = tempfile.mkstemp(dir=dest_dir, suffix=".part")
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out:
                if sdist.url.startswith("file:"):
                    source = Path(urllib.request.url2pathname(urllib.parse.urlsplit(sdist.url).path))
                    with open(source, "rb") as f:
                        _copy(f, out, digest)
                else:
                    try:
                        with self._open(sdist.url) as response:
                            _copy(response, out, digest)
                    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                        raise SdistError(f"{sdist.filename}: {getattr(e, 'reason', e)}") from e
            if sdist.sha256 and digest.hexdigest() != sdist.sha256.lower():
                raise SdistError(f"{sdist.filename}: sha256 {digest.hexdigest()} is not the index's {sdist.sha256}")
            os.replace(tmp, dest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return dest


def _copy(src, out, digest) -> None:
    while chunk := src.read(CHUNK):
        digest.update(chunk)
        out.write(chunk)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        shutil.copyfileobj(f, _Hasher(digest), CHUNK)
    return digest.hexdigest()


class _Hasher:
    def __init__(self, digest) -> None:
        self.digest = digest

    def write(self, data: bytes) -> None:
        self.digest.update(data)


def final_versions(versions: Iterable[str]) -> list[str]:
    """The final releases (no pre- or dev-release; post-releases are final), oldest first."""
    parsed = []
    for v in versions:
        try:
            pv = Version(v)
        except InvalidVersion:
            continue
        if not pv.is_prerelease and not pv.is_devrelease and not pv.local:
            parsed.append((pv, v))
    return [v for _, v in sorted(parsed)]
