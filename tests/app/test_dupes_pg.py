"""The duplicate index on Postgres (bot/stores/dupes/postgres.py) ranks exactly like the in-memory one, keeps document
frequencies right through edits, is shared by replicas, and survives replicas indexing at the same time."""

from __future__ import annotations

import threading

import pytest

from bench.corpus import Generator
from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.dupes.document import build_doc
from bot.report import parse
from bot.stores.dupes.postgres import PostgresIndexes, migrate

from .pg import pg_url  # noqa: F401 - fixture


@pytest.fixture
def indexes(pg_url):  # noqa: F811
    migrate(pg_url)
    owner = PostgresIndexes(pg_url)
    yield owner
    owner.release()


@pytest.fixture(scope="module")
def corpus():
    """vLLM-shaped reports (bench/corpus.py: issue forms, collect_env dumps, prefixed logs, tracebacks)."""
    gen = Generator(11)
    issues = list(gen.issues(160))
    docs = [(i, build_doc(parse(i["title"], i["body"]))) for i in issues]
    queries = [build_doc(parse(i["title"], i["body"])) for i in gen.issues(25, start=1000, failure_share=0.8)]
    return docs, queries


def fill(index: DuplicateIndex, docs) -> None:
    for issue, doc in docs:
        index.add_doc(issue["number"], doc, title=issue["title"], state=issue["state"],
                      created_at=issue["created_at"], url=issue["html_url"])


def ranking(index: DuplicateIndex, queries) -> list[list[tuple[int, float]]]:
    return [[(s.candidate.number, s.candidate.score) for s in index.search_doc(q, limit=5, near_misses=True)]
            for q in queries]


def test_postgres_index_ranks_like_the_memory_index(indexes, corpus):
    docs, queries = corpus
    memory, pg = DuplicateIndex(MemoryIndexStore()), DuplicateIndex(indexes.store("vllm-project/vllm"))
    fill(memory, docs)
    with pg.batch():
        fill(pg, docs[:80])
    fill(pg, docs[80:])
    assert len(pg) == len(memory) == len(docs)
    expected = ranking(memory, queries)
    assert any(expected), "the queries find candidates at all"
    assert ranking(pg, queries) == expected
    # edits: re-adding an issue with another text replaces its postings and document frequencies
    for (issue, _), (_, other) in zip(docs[:30], docs[30:60], strict=True):
        memory.add_doc(issue["number"], other, title=issue["title"])
        pg.add_doc(issue["number"], other, title=issue["title"])
    assert len(pg) == len(docs)
    assert ranking(pg, queries) == ranking(memory, queries)
    terms = sorted({t for _, d in docs for t in d.vector})
    assert pg.store.df(terms) == memory.store.df(terms)
    # a closed-as-duplicate issue redirects to its target, as in memory
    target = ranking(memory, queries[:1])[0]
    if target:
        memory.mark_duplicate(target[0][0], 1)
        pg.mark_duplicate(target[0][0], 1)
        assert ranking(pg, queries) == ranking(memory, queries)
    pg.close()


def test_repositories_are_separate_and_replicas_share_one_index(indexes, pg_url, corpus):  # noqa: F811
    docs, queries = corpus
    a = DuplicateIndex(indexes.store("o/a"))
    fill(a, docs[:50])
    assert len(DuplicateIndex(indexes.store("o/b"))) == 0
    other_replica = PostgresIndexes(pg_url)
    seen = DuplicateIndex(other_replica.store("o/a"))
    assert len(seen) == 50 and ranking(seen, queries) == ranking(a, queries)
    seen.close()


def test_replicas_indexing_at_once_keep_counts_right(indexes, pg_url, corpus):  # noqa: F811
    docs, _ = corpus
    errors: list[BaseException] = []

    def replica(part) -> None:
        owner = PostgresIndexes(pg_url)
        index = DuplicateIndex(owner.store("o/r"))
        try:
            fill(index, part)
            fill(index, part[:10])  # edits racing the other replica's inserts of shared terms
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            index.close()

    threads = [threading.Thread(target=replica, args=(docs[i::3],)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    memory = DuplicateIndex(MemoryIndexStore())
    fill(memory, docs)
    pg = DuplicateIndex(indexes.store("o/r"))
    terms = sorted({t for _, d in docs for t in d.vector})
    assert len(pg) == len(docs) and pg.store.df(terms) == memory.store.df(terms)


def test_chronological_view_ranks_like_the_memory_index(indexes, corpus):
    """`before=` (replay over a reused index) filters inside candidate selection, as in memory."""
    docs, _ = corpus
    memory, pg = DuplicateIndex(MemoryIndexStore()), DuplicateIndex(indexes.store("o/chrono"))
    fill(memory, docs)
    with pg.batch():
        fill(pg, docs)
    found = 0
    for issue, doc in docs[20:140:6]:
        before = (issue["created_at"], issue["number"])
        expected = [(s.candidate.number, s.candidate.score)
                    for s in memory.search_doc(doc, exclude=issue["number"], near_misses=True, before=before)]
        assert all(n < issue["number"] for n, _ in expected)
        found += bool(expected)
        assert [(s.candidate.number, s.candidate.score)
                for s in pg.search_doc(doc, exclude=issue["number"], near_misses=True, before=before)] == expected
    assert found >= 5
    pg.close()
