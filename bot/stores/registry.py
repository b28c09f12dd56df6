"""Every store, and `migrate_all`: what `vllm-triage migrate` runs. A new store adds its line here."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.stores.database import is_postgres, require_postgres_driver
from bot.stores.deliveries import open_delivery_store


def migrate_all(database_url: str, data_dir: Path | str) -> list[tuple[str, str, int]]:
    """Apply every store's missing migrations: (store, where, version) for each database or file migrated."""
    done: list[tuple[str, str, int]] = []
    where = database_url.split("://")[0]

    async def deliveries() -> int:
        store = open_delivery_store(database_url)
        try:
            return await store.migrate()
        finally:
            await store.close()

    done.append(("deliveries", where, asyncio.run(deliveries())))
    if is_postgres(database_url):
        require_postgres_driver()
        from bot.stores.dupes import postgres as dupes_pg
        from bot.stores.sources import postgres as sources_pg

        done.append(("dupes", where, dupes_pg.migrate(database_url)))
        done.append(("sources", where, sources_pg.migrate(database_url)))
    else:
        from bot.stores.dupes import sqlite as dupes_sqlite
        from bot.stores.sources import sqlite as sources_sqlite

        for path in sorted((Path(data_dir) / "dupes").glob("*.sqlite3")):
            done.append(("dupes", str(path), dupes_sqlite.migrate(path)))
        sources = sources_sqlite.index_file(data_dir)
        if sources.exists():
            done.append(("sources", str(sources), sources_sqlite.migrate(sources)))
    return done
