"""The source index in one SQLite file under the data dir (`<data dir>/sources/index.sqlite3`).

Tables: `source_releases` (what was built, when, how), `source_sites` (one row per site across releases; its
lines per release packed in `lines`), `source_texts` (module texts, zlib, one row per distinct text) and
`source_files` (which text each release's module has). Migrations: `MIGRATIONS` (bot/stores/migrations.py).
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from array import array
from pathlib import Path

from bot.sources.extract import EXTRACTOR_VERSION
from bot.sources.index import SourceIndex
from bot.sources.model import Release, ReleaseBuild, Site, keyed, pack_lines, unpack_lines, without_release
from bot.sources.store import BuiltRelease, SiteRow, merge_release
from bot.stores.migrations import migrate_sqlite

STORE = "sources"
MIGRATIONS: tuple[str, ...] = (
    # 1: releases, sites with their lines per release, module texts
    """
    CREATE TABLE source_releases (
        id INTEGER PRIMARY KEY, package TEXT NOT NULL, version TEXT NOT NULL, uploaded_at TEXT,
        built_at REAL NOT NULL, extractor INTEGER NOT NULL, sdist_sha256 TEXT, modules INTEGER NOT NULL,
        sites INTEGER NOT NULL, unparsed TEXT NOT NULL, seconds REAL NOT NULL, UNIQUE (package, version));
    CREATE TABLE source_sites (
        id TEXT PRIMARY KEY, package TEXT NOT NULL, file TEXT NOT NULL, qualname TEXT NOT NULL, kind TEXT NOT NULL,
        type TEXT, template TEXT NOT NULL, words TEXT NOT NULL, guard_kind TEXT, guard TEXT, newest TEXT NOT NULL,
        lines BLOB NOT NULL)
        WITHOUT ROWID;
    CREATE INDEX source_sites_package ON source_sites (package);
    CREATE TABLE source_texts (sha1 TEXT PRIMARY KEY, text BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE source_files (
        release_id INTEGER NOT NULL, path TEXT NOT NULL, sha1 TEXT NOT NULL, PRIMARY KEY (release_id, path))
        WITHOUT ROWID;
    """,
)
_CHUNK = 500
_SITE_COLUMNS = "id, package, file, qualname, kind, type, template, words, guard_kind, guard, newest, lines"


def index_file(data_dir: Path | str) -> Path:
    return Path(data_dir) / "sources" / "index.sqlite3"


def migrate(path: str | Path) -> int:
    SqliteSourceStore(path).close()
    return len(MIGRATIONS)


class SqliteSourceStore:
    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        migrate_sqlite(self._db, STORE, MIGRATIONS)

    # -- reads ----------------------------------------------------------------------------------------
    def releases(self, package: str) -> list[BuiltRelease]:
        rows = self._db.execute(
            "SELECT package, version, uploaded_at, built_at, extractor, modules, sites, unparsed, seconds"
            " FROM source_releases WHERE package = ?", (package,)).fetchall()
        out = [BuiltRelease(p, v, up, b, ex, m, s, len(json.loads(u)), sec) for p, v, up, b, ex, m, s, u, sec in rows]
        return sorted(out, key=lambda r: Release(0, r.package, r.version).key)

    def load(self, package: str) -> SourceIndex:
        releases = [Release(i, package, v, up) for i, v, up in self._db.execute(
            "SELECT id, version, uploaded_at FROM source_releases WHERE package = ?", (package,))]
        sites = [Site(i, package, f, q, k, t, tpl, gk, g, unpack_lines(lines), words)
                 for i, f, q, k, t, tpl, gk, g, lines, words in self._db.execute(
                     "SELECT id, file, qualname, kind, type, template, guard_kind, guard, lines, words"
                     " FROM source_sites"
                     " WHERE package = ?", (package,))]
        return SourceIndex(package, releases, sites)

    def source(self, package: str, version: str, path: str) -> str | None:
        row = self._db.execute(
            "SELECT t.text FROM source_releases r JOIN source_files f ON f.release_id = r.id"
            " JOIN source_texts t ON t.sha1 = f.sha1 WHERE r.package = ? AND r.version = ? AND f.path = ?",
            (package, version, path)).fetchone()
        return zlib.decompress(row[0]).decode("utf-8") if row else None

    def size(self) -> dict[str, int]:
        """Rows per table, and bytes on disk."""
        out = {t: self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
               for t in ("source_releases", "source_sites", "source_texts", "source_files")}
        if self.path != ":memory:":
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            out["bytes"] = Path(self.path).stat().st_size
        return out

    # -- writes ---------------------------------------------------------------------------------------
    def add_release(self, build: ReleaseBuild) -> bool:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            cur = db.execute(
                "INSERT INTO source_releases (package, version, uploaded_at, built_at, extractor, sdist_sha256,"
                " modules, sites, unparsed, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (package, version) DO NOTHING",
                (build.package, build.version, build.uploaded_at, time.time(), EXTRACTOR_VERSION, build.sdist_sha256,
                 build.modules, len(build.sites), json.dumps(build.unparsed), build.seconds))
            if cur.rowcount == 0:
                db.execute("ROLLBACK")
                return False
            release_id = cur.lastrowid
            keys = [k for k, _ in keyed(build.package, build.sites)]
            existing = self._rows(keys)
            inserts, updates = merge_release(build, release_id, existing)
            db.executemany(f"INSERT INTO source_sites ({_SITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [_values(r) for r in inserts])
            db.executemany("UPDATE source_sites SET guard_kind = ?, guard = ?, newest = ?, lines = ? WHERE id = ?",
                           [(r.guard_kind, r.guard, r.newest, pack_lines(array("I", r.lines)), r.id)
                            for r in updates])
            db.executemany("INSERT INTO source_texts (sha1, text) VALUES (?, ?) ON CONFLICT (sha1) DO NOTHING",
                           [(sha, text) for sha, text in build.files.values()])
            db.executemany("INSERT INTO source_files (release_id, path, sha1) VALUES (?, ?, ?)",
                           [(release_id, path, sha) for path, (sha, _) in build.files.items()])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return True

    def remove_release(self, package: str, version: str) -> bool:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT id FROM source_releases WHERE package = ? AND version = ?",
                             (package, version)).fetchone()
            if row is None:
                db.execute("ROLLBACK")
                return False
            release_id = row[0]
            changed, gone = [], []
            for site_id, lines in db.execute("SELECT id, lines FROM source_sites WHERE package = ?", (package,)):
                before = unpack_lines(lines)
                after = without_release(before, release_id)
                if len(after) == len(before):
                    continue
                if after:
                    changed.append((pack_lines(after), site_id))
                else:
                    gone.append((site_id,))
            db.executemany("UPDATE source_sites SET lines = ? WHERE id = ?", changed)
            db.executemany("DELETE FROM source_sites WHERE id = ?", gone)
            db.execute("DELETE FROM source_files WHERE release_id = ?", (release_id,))
            db.execute("DELETE FROM source_texts WHERE sha1 NOT IN (SELECT sha1 FROM source_files)")
            db.execute("DELETE FROM source_releases WHERE id = ?", (release_id,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return True

    def _rows(self, keys: list[str]) -> dict[str, SiteRow]:
        out: dict[str, SiteRow] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT {_SITE_COLUMNS} FROM source_sites WHERE id IN ({marks})", chunk):
                *head, lines = row
                out[row[0]] = SiteRow(*head, lines=list(unpack_lines(lines)))
        return out

    def close(self) -> None:
        self._db.close()


def _values(r: SiteRow) -> tuple:
    return (r.id, r.package, r.file, r.qualname, r.kind, r.type, r.template, r.words, r.guard_kind, r.guard,
            r.newest, pack_lines(array("I", r.lines)))
