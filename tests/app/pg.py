"""A real PostgreSQL server for the store tests: TEST_DATABASE_URL (set by .ci/run, which starts the server).

Each test gets a schema of its own (dropped afterwards), selected through the URL's `options`, so tests
and the replica processes of one test share it without any code in the store knowing about schemas.
Without TEST_DATABASE_URL the Postgres cases are skipped locally and fail in CI.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL")


def with_schema(url: str, schema: str) -> str:
    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}", safe="")


def need_postgres() -> str:
    if not TEST_DATABASE_URL:
        if os.environ.get("CI"):
            pytest.fail("TEST_DATABASE_URL is not set: .ci/run must start PostgreSQL and export it")
        pytest.skip("TEST_DATABASE_URL is not set (see .ci/run for a local PostgreSQL)")
    return TEST_DATABASE_URL


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A postgresql:// URL whose connections see an empty schema of their own."""
    import psycopg

    base = need_postgres()
    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_schema(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
