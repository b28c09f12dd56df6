"""The delivery store: the webhook deliveries GitHub sent (a queue with leases) and what the bot decided and
learned handling them (per-issue state, decisions, maintainers' feedback, installations, config errors).

    records.py    the contract (`DeliveryStore`) and its records
    rows.py       what both backends share (row mapping, common SQL, group commit)
    sqlite.py     `SqliteDeliveryStore`: one SQLite file, the default (one replica)
    postgres.py   `PostgresDeliveryStore`: several replicas share it (needs the `postgres` extra)

`open_delivery_store(DATABASE_URL)` picks the backend; call `migrate()` next.
"""

from __future__ import annotations

from bot.stores.database import is_postgres, require_postgres_driver, sqlite_path
from bot.stores.deliveries.records import (
    DONE,
    PARKED,
    QUEUED,
    RUNNING,
    DecisionRecord,
    Delivery,
    DeliveryStore,
    IssueState,
)
from bot.stores.deliveries.sqlite import SqliteDeliveryStore

__all__ = ["DONE", "PARKED", "QUEUED", "RUNNING", "DecisionRecord", "Delivery", "DeliveryStore", "IssueState",
           "SqliteDeliveryStore", "open_delivery_store"]


def open_delivery_store(database_url: str, *, pool_size: int = 10) -> DeliveryStore:
    """The store DATABASE_URL names: SQLite (`sqlite:///path`, the default: one replica) or Postgres
    (`postgresql://user:pass@host/db`: any number of replicas). Call migrate() next."""
    if is_postgres(database_url):
        require_postgres_driver()
        from bot.stores.deliveries.postgres import PostgresDeliveryStore

        return PostgresDeliveryStore(database_url, pool_size=pool_size)
    return SqliteDeliveryStore(sqlite_path(database_url))
