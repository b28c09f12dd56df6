"""The source index in Postgres (DATABASE_URL), shared by every replica: the same tables as the SQLite file.

Import only after bot.stores.database.require_postgres_driver(). Migrations: `MIGRATIONS`.
"""

from __future__ import annotations

import json
import time
import zlib
from array import array

import psycopg

from bot.sources.extract import EXTRACTOR_VERSION
from bot.sources.index import SourceIndex
from bot.sources.model import Release, ReleaseBuild, Site, keyed, pack_lines, unpack_lines, without_release
from bot.sources.store import BuiltRelease, SiteRow, merge_release
from bot.stores.migrations import migrate_postgres

STORE = "sources"
MIGRATIONS: tuple[str, ...] = (
    # 1: releases, sites with their lines per release, module texts
    """
    CREATE TABLE source_releases (
        id BIGSERIAL PRIMARY KEY, package TEXT NOT NULL, version TEXT NOT NULL, uploaded_at TEXT,
        built_at DOUBLE PRECISION NOT NULL, extractor INTEGER NOT NULL, sdist_sha256 TEXT, modules INTEGER NOT NULL,
        sites INTEGER NOT NULL, unparsed TEXT NOT NULL, seconds DOUBLE PRECISION NOT NULL,
        UNIQUE (package, version));
    CREATE TABLE source_sites (
        id TEXT PRIMARY KEY, package TEXT NOT NULL, file TEXT NOT NULL, qualname TEXT NOT NULL, kind TEXT NOT NULL,
        type TEXT, template TEXT NOT NULL, words TEXT NOT NULL, guard_kind TEXT, guard TEXT, newest TEXT NOT NULL,
        lines BYTEA NOT NULL);
    CREATE INDEX source_sites_package ON source_sites (package);
    CREATE TABLE source_texts (sha1 TEXT PRIMARY KEY, text BYTEA NOT NULL);
    CREATE TABLE source_files (
        release_id BIGINT NOT NULL, path TEXT NOT NULL, sha1 TEXT NOT NULL, PRIMARY KEY (release_id, path));
    """,
)
_CHUNK = 1000
_SITE_COLUMNS = "id, package, file, qualname, kind, type, template, words, guard_kind, guard, newest, lines"


def migrate(url: str) -> int:
    return migrate_postgres(url, STORE, MIGRATIONS)


class PostgresSourceStore:
    def __init__(self, url: str) -> None:
        self.url = url
        migrate(url)
        self._db = psycopg.connect(url, autocommit=True)

    # -- reads ----------------------------------------------------------------------------------------
    def releases(self, package: str) -> list[BuiltRelease]:
        rows = self._db.execute(
            "SELECT package, version, uploaded_at, built_at, extractor, modules, sites, unparsed, seconds"
            " FROM source_releases WHERE package = %s", (package,)).fetchall()
        out = [BuiltRelease(p, v, up, b, ex, m, s, len(json.loads(u)), sec) for p, v, up, b, ex, m, s, u, sec in rows]
        return sorted(out, key=lambda r: Release(0, r.package, r.version).key)

    def load(self, package: str) -> SourceIndex:
        releases = [Release(i, package, v, up) for i, v, up in self._db.execute(
            "SELECT id, version, uploaded_at FROM source_releases WHERE package = %s", (package,))]
        with self._db.cursor(binary=True) as cur:
            cur.execute("SELECT id, file, qualname, kind, type, template, guard_kind, guard, lines, words"
                     " FROM source_sites"
                        " WHERE package = %s", (package,))
            sites = [Site(i, package, f, q, k, t, tpl, gk, g, unpack_lines(bytes(lines)), words)
                     for i, f, q, k, t, tpl, gk, g, lines, words in cur]
        return SourceIndex(package, releases, sites)

    def source(self, package: str, version: str, path: str) -> str | None:
        row = self._db.execute(
            "SELECT t.text FROM source_releases r JOIN source_files f ON f.release_id = r.id"
            " JOIN source_texts t ON t.sha1 = f.sha1 WHERE r.package = %s AND r.version = %s AND f.path = %s",
            (package, version, path)).fetchone()
        return zlib.decompress(bytes(row[0])).decode("utf-8") if row else None

    # -- writes ---------------------------------------------------------------------------------------
    def add_release(self, build: ReleaseBuild) -> bool:
        with self._db.transaction():
            row = self._db.execute(
                "INSERT INTO source_releases (package, version, uploaded_at, built_at, extractor, sdist_sha256,"
                " modules, sites, unparsed, seconds) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (package, version) DO NOTHING RETURNING id",
                (build.package, build.version, build.uploaded_at, time.time(), EXTRACTOR_VERSION, build.sdist_sha256,
                 build.modules, len(build.sites), json.dumps(build.unparsed), build.seconds)).fetchone()
            if row is None:
                return False
            release_id = row[0]
            keys = [k for k, _ in keyed(build.package, build.sites)]
            # two builders of different releases touch the same sites: take them in one order, under lock
            existing = self._rows(sorted(keys), lock=True)
            inserts, updates = merge_release(build, release_id, existing)
            with self._db.cursor() as cur:
                cur.executemany(f"INSERT INTO source_sites ({_SITE_COLUMNS}) VALUES"
                                " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", [_values(r) for r in inserts])
                cur.executemany("UPDATE source_sites SET guard_kind = %s, guard = %s, newest = %s, lines = %s"
                                " WHERE id = %s",
                                [(r.guard_kind, r.guard, r.newest, pack_lines(array("I", r.lines)), r.id)
                                 for r in updates])
                cur.executemany("INSERT INTO source_texts (sha1, text) VALUES (%s, %s) ON CONFLICT (sha1) DO NOTHING",
                                [(sha, text) for sha, text in build.files.values()])
                cur.executemany("INSERT INTO source_files (release_id, path, sha1) VALUES (%s, %s, %s)",
                                [(release_id, path, sha) for path, (sha, _) in build.files.items()])
        return True

    def remove_release(self, package: str, version: str) -> bool:
        with self._db.transaction():
            row = self._db.execute("SELECT id FROM source_releases WHERE package = %s AND version = %s FOR UPDATE",
                                   (package, version)).fetchone()
            if row is None:
                return False
            release_id = row[0]
            changed, gone = [], []
            rows = self._db.execute("SELECT id, lines FROM source_sites WHERE package = %s ORDER BY id FOR UPDATE",
                                    (package,)).fetchall()
            for site_id, lines in rows:
                before = unpack_lines(bytes(lines))
                after = without_release(before, release_id)
                if len(after) == len(before):
                    continue
                if after:
                    changed.append((pack_lines(after), site_id))
                else:
                    gone.append((site_id,))
            with self._db.cursor() as cur:
                cur.executemany("UPDATE source_sites SET lines = %s WHERE id = %s", changed)
                cur.executemany("DELETE FROM source_sites WHERE id = %s", gone)
            self._db.execute("DELETE FROM source_files WHERE release_id = %s", (release_id,))
            self._db.execute("DELETE FROM source_texts t WHERE NOT EXISTS"
                             " (SELECT 1 FROM source_files f WHERE f.sha1 = t.sha1)")
            self._db.execute("DELETE FROM source_releases WHERE id = %s", (release_id,))
        return True

    def _rows(self, keys: list[str], lock: bool = False) -> dict[str, SiteRow]:
        out: dict[str, SiteRow] = {}
        suffix = " ORDER BY id FOR UPDATE" if lock else ""
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i:i + _CHUNK]
            for row in self._db.execute(f"SELECT {_SITE_COLUMNS} FROM source_sites WHERE id = ANY(%s){suffix}",
                                        (chunk,)):
                *head, lines = row
                out[row[0]] = SiteRow(*head, lines=list(unpack_lines(bytes(lines))))
        return out

    def close(self) -> None:
        self._db.close()


def _values(r: SiteRow) -> tuple:
    return (r.id, r.package, r.file, r.qualname, r.kind, r.type, r.template, r.words, r.guard_kind, r.guard,
            r.newest, pack_lines(array("I", r.lines)))
