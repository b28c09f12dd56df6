"""Building the index: each release's sdist downloaded and read in a worker process, stored by the caller.

`plan` picks the releases (every final release by default, or a version specifier, or the newest N) and leaves
out those already built; `build` runs them in parallel and hands each finished release to `store` in the main
process. A release that fails to download or read is reported and skipped.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from bot.sources.archive import ArchiveError, read_modules
from bot.sources.extract import ExtractError, RawSite, extract
from bot.sources.model import ReleaseBuild
from bot.sources.sdists import IndexClient, PipIndex, Sdist, SdistError, final_versions


class PlanError(ValueError):
    """The releases asked for cannot be had (a bad specifier, no such release)."""


@dataclass
class BuildSummary:
    built: list[ReleaseBuild] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)        # already built
    failed: list[tuple[str, str]] = field(default_factory=list)  # (version, why)

    def render(self) -> str:
        text = f"{len(self.built)} built, {len(self.skipped)} already built, {len(self.failed)} failed"
        unparsed = sum(len(b.unparsed) for b in self.built)
        if unparsed:
            text += f" ({unparsed} modules could not be parsed)"
        return text


def select(versions: Iterable[str], spec: str | None = None, latest: int | None = None) -> list[str]:
    """The releases asked for, oldest first: every final release; those a specifier admits (`>=0.6,<0.8`);
    a comma-separated list of versions (`0.6.3,0.17.0`, pre-releases allowed when named); or the newest
    `latest` final releases (of those the specifier admits)."""
    versions = list(versions)
    if spec:
        wanted = [s.strip() for s in spec.split(",") if s.strip()]
        if wanted and all(_valid(w) for w in wanted):
            have = {Version(v): v for v in versions if _valid(v)}
            missing = [w for w in wanted if Version(w) not in have]
            if missing:
                raise PlanError(f"no sdist of {', '.join(missing)} on the index")
            return sorted({have[Version(w)] for w in wanted}, key=Version)
        try:
            specifier = SpecifierSet(spec)
        except InvalidSpecifier:
            raise PlanError(f"not a version specifier or a list of versions: {spec!r}") from None
        finals = [v for v in final_versions(versions) if specifier.contains(v, prereleases=False)]
    else:
        finals = final_versions(versions)
    if latest is not None:
        finals = finals[-latest:] if latest > 0 else []
    return finals


def check_spec(spec: str) -> None:
    """Raise PlanError unless `spec` is a version specifier or a list of versions."""
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    if wanted and all(_valid(w) for w in wanted):
        return
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        raise PlanError(f"not a version specifier or a list of versions: {spec!r}") from None


def _valid(v: str) -> bool:
    try:
        Version(v)
    except InvalidVersion:
        return False
    return True


def read_release(package: str, sdist: Sdist, archive: Path, module: str | None = None,
                 cache: dict[str, list[RawSite]] | None = None) -> ReleaseBuild:
    """Extract every site of one downloaded sdist (pure apart from reading the archive).

    `cache` maps a module's path and text (their sha1) to its sites: a module unchanged since an earlier release
    read by this process is not parsed again. It is left holding this release's modules only."""
    modules = read_modules(archive, package, module)
    sites: list[RawSite] = []
    unparsed: list[str] = []
    files: dict[str, tuple[str, bytes]] = {}
    seen: dict[str, list[RawSite]] = {}
    for path, text in modules:
        data = text.encode("utf-8")
        sha = hashlib.sha1(data).hexdigest()
        key = hashlib.sha1(path.encode() + b"\0" + data).hexdigest()
        found = cache.get(key) if cache is not None else None
        if found is None:
            try:
                found = extract(path, text)
            except ExtractError as e:
                unparsed.append(str(e))
                continue
        seen[key] = found
        if found:
            sites.extend(found)
            files[path] = (sha, zlib.compress(data, 6))
    if cache is not None:
        cache.clear()
        cache.update(seen)
    return ReleaseBuild(package, sdist.version, sdist.upload_time or modules.newest, sdist.sha256, sites, files,
                        unparsed, len(modules.files))


_MODULES: dict[str, list[RawSite]] = {}  # this worker's modules of the release it read last


def _work(package: str, sdist: Sdist, index: PipIndex, cache: str, keep: bool, module: str | None) -> ReleaseBuild:
    start = time.perf_counter()
    client = IndexClient(index)
    archive = client.download(sdist, Path(cache))
    downloaded = time.perf_counter()
    try:
        result = read_release(package, sdist, archive, module, _MODULES)
    finally:
        if not keep:
            archive.unlink(missing_ok=True)
    result.download_seconds = downloaded - start
    result.seconds = time.perf_counter() - start
    return result


def build(package: str, sdists: list[Sdist], index: PipIndex, cache: Path, store: Callable[[ReleaseBuild], None],
          jobs: int = 2, keep_sdists: bool = False, module: str | None = None,
          progress: Callable[[int, int, str], None] | None = None) -> BuildSummary:
    """Download and read `sdists` in `jobs` processes; `store` each release as it finishes (main process)."""
    summary = BuildSummary()
    total = len(sdists)
    if not total:
        return summary
    done = 0
    if progress:
        progress(0, total, "")
    context = multiprocessing.get_context("spawn" if os.name == "nt" else "forkserver")
    pool = ProcessPoolExecutor(max_workers=max(1, min(jobs, total)), mp_context=context)
    try:
        pending: dict[Future, Sdist] = {}
        queue = list(sdists)
        while queue or pending:
            while queue and len(pending) < max(1, jobs) * 2:  # a few ahead, not every archive at once
                sdist = queue.pop(0)
                pending[pool.submit(_work, package, sdist, index, str(cache), keep_sdists, module)] = sdist
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                sdist = pending.pop(future)
                try:
                    result = future.result()
                    store(result)
                    summary.built.append(result)
                except (SdistError, ArchiveError, OSError) as e:
                    summary.failed.append((sdist.version, str(e)))
                except Exception as e:  # noqa: BLE001 - one release's failure must not lose the others
                    summary.failed.append((sdist.version, f"{e.__class__.__name__}: {e}"))
                done += 1
                if progress:
                    progress(done, total, sdist.version)
    except BaseException:  # interrupted: what is stored stays, the rest is dropped without waiting for it
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return summary


def plan(client: IndexClient, package: str, built: set[str], spec: str | None = None,
         latest: int | None = None) -> tuple[list[Sdist], list[str]]:
    """(sdists to build, versions already built) for the releases asked for."""
    available = client.list_sdists(package)
    if not available:
        raise PlanError(f"the index ({client.index.describe()}) has no sdist of {package}")
    chosen = select(available, spec, latest)
    todo = [available[v] for v in chosen if v not in built]
    return todo, [v for v in chosen if v in built]
