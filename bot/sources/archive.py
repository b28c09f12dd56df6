"""The Python modules of a package inside its sdist (a .tar.gz), read without unpacking it to disk."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

SKIP_DIRS = frozenset({"third_party"})   # vendored code: not the package's own errors
MAX_MODULE_BYTES = 4 << 20               # larger .py files are generated tables, not code that raises


class ArchiveError(ValueError):
    """The archive is not a readable sdist of the package."""


@dataclass(frozen=True)
class Modules:
    root: str                        # where the package directory lies in the archive, e.g. "vllm-0.6.3/"
    files: list[tuple[str, str]]     # (path from the package directory's parent, e.g. "vllm/config.py", text)
    newest: str | None               # the newest file's time in the archive (ISO 8601): the release's date

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.files)


def import_name(package: str) -> str:
    return package.lower().replace("-", "_").replace(".", "_")


def read_modules(path: Path | str, package: str, module: str | None = None) -> Modules:
    """Every `<module>/**/*.py` in the sdist at `path` (skipping third_party/), with its text."""
    module = module or import_name(package)
    try:
        tar = tarfile.open(path, "r:*")  # noqa: SIM115 - closed by the `with tar` below
    except (tarfile.TarError, OSError) as e:
        raise ArchiveError(f"{Path(path).name}: not a readable archive ({e})") from None
    with tar:
        try:
            members = [m for m in tar.getmembers() if m.isfile()]
        except (tarfile.TarError, OSError, EOFError) as e:
            raise ArchiveError(f"{Path(path).name}: broken archive ({e})") from None
        roots = sorted((m.name[: -len(f"{module}/__init__.py")] for m in members
                        if m.name.endswith(f"{module}/__init__.py")
                        and (m.name == f"{module}/__init__.py" or m.name.endswith(f"/{module}/__init__.py"))),
                       key=len)
        if not roots:
            raise ArchiveError(f"{Path(path).name}: no {module}/__init__.py inside")
        root = roots[0]
        files = []
        newest = 0
        for m in members:
            if not m.name.startswith(root) or not m.name.endswith(".py"):
                continue
            rel = m.name[len(root):]
            parts = rel.split("/")
            if parts[0] != module or SKIP_DIRS.intersection(parts[:-1]) or m.size > MAX_MODULE_BYTES:
                continue
            f = tar.extractfile(m)
            if f is None:
                continue
            files.append((rel, f.read().decode("utf-8", errors="replace")))
            newest = max(newest, int(m.mtime))
    files.sort()
    when = datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if newest else None
    return Modules(root, files, when)
