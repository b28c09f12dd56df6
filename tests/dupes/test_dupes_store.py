"""The compact in-memory store returns exactly what was put, and agrees with SQLite on every read."""

from unittest.mock import patch

import pytest
from dupes_reports import ENV_DUMP, finding, report
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.dupes import MemoryIndexStore, StoredIssue
from bot.dupes.document import build_doc, doc_meta
from bot.dupes.store import _DECODE
from bot.stores.dupes.sqlite import SqliteIndexStore


def stored(number: int, title: str, body: str, rules: tuple[str, ...] = (), created: str = "") -> StoredIssue:
    doc = build_doc(report(title, body), tuple(finding(r) for r in rules))
    return StoredIssue(number=number, title=title, state="open", created_at=created or f"2025-03-{number % 28 + 1:02d}",
                       vector=doc.vector, meta=doc_meta(doc), keys=doc.keys)


OOM = ("[Bug]: CUDA out of memory during cudagraph capture on A100",
       ENV_DUMP + "\nvllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.95\n"
       "ERROR 03-01 10:12:01 [core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
TOOLS = ("[Bug]: hermes tool parser returns empty arguments when streaming on A100",
         ENV_DUMP + "\nThe streamed tool call has arguments '' while the non-streamed call is complete.")


def test_round_trip_is_exact_for_rounded_and_arbitrary_weights():
    store = MemoryIndexStore()
    issue = stored(7, *OOM, rules=("cuda-oom-during-cudagraph-capture",))
    odd = StoredIssue(8, "odd weights", vector={"oom": 1 / 3, "cudagraph": 0.1234, "huge": 1e6, "neg": -0.5},
                      meta={"custom": [1, 2.5, None]}, keys=("rule:x",))
    store.put(issue)
    store.put(odd)
    got = store.get_many([7, 8, 9])
    assert got == {7: issue, 8: odd}
    assert list(got[7].vector) == list(issue.vector)          # term order kept
    assert all(type(w) is float for w in got[8].vector.values())
    posted = {(t, n): w for t, n, w in store.postings(["cudagraph", "huge"])}
    assert posted[("cudagraph", 8)] == 0.1234 and posted[("huge", 8)] == 1e6
    assert posted[("cudagraph", 7)] == issue.vector["cudagraph"]


def test_edit_removes_old_postings_and_keys_and_appends_the_new_ones():
    store = MemoryIndexStore()
    store.put(stored(1, *OOM, rules=("cuda-oom-during-cudagraph-capture",)))
    store.put(stored(2, *OOM, rules=("cuda-oom-during-cudagraph-capture",)))
    store.put(stored(1, *TOOLS))                     # issue 1 edited into another report
    assert store.count() == 2
    assert store.numbers_by_key(["rule:cuda-oom-during-cudagraph-capture"]) == {
        "rule:cuda-oom-during-cudagraph-capture": [2]}
    assert [n for _, n, _ in store.postings(["cudagraph"])] == [2]
    assert [n for _, n, _ in store.postings(["a100"])] == [2, 1]     # the edit goes last, as a new put
    assert store.get_many([1])[1].title == TOOLS[0]
    store.put(stored(2, *TOOLS))
    assert "cudagraph" not in store.df(["cudagraph", "parser"])
    assert store.df(["parser"]) == {"parser": 2}


def test_duplicate_of_is_kept_through_reads():
    store = MemoryIndexStore()
    store.put(stored(1, *OOM))
    store.put(stored(2, *OOM))
    store.set_duplicate_of(2, 1)
    store.set_duplicate_of(99, 1)
    assert store.get_many([2])[2].duplicate_of == 1
    assert store.get_many([1])[1].duplicate_of is None


def test_decoded_issues_kept_for_the_next_query_never_go_stale(monkeypatch):
    monkeypatch.setattr("bot.dupes.store.DECODED_ISSUES", 2)
    store = MemoryIndexStore()
    for n in (1, 2, 3):
        store.put(stored(n, *OOM))
    assert store.get_many([1, 2]) == store.get_many([1, 2])   # the second read comes from the kept copies
    assert store.get_many([1])[1] is store.get_many([1])[1]
    store.get_many([3])                                         # over the limit: the least recently read goes
    assert list(store._decoded) == [1, 3]
    store.set_duplicate_of(1, 3)
    assert store.get_many([1])[1].duplicate_of == 3
    store.put(stored(3, *TOOLS))                                # an edit
    assert store.get_many([3])[3].title == TOOLS[0]
    assert store.get_many([2, 3]) == {2: stored(2, *OOM), 3: stored(3, *TOOLS)}


# after every issue (a replay from scratch: nothing to filter), at the newest issue itself, in the middle
@pytest.mark.parametrize("before", [None, ("2025-03-05", 4), ("2025-03-09", 8), ("2025-03-09", 9), ("2099-01-01", 1)])
def test_memory_and_sqlite_reads_agree(tmp_path, before):
    mem, sql = MemoryIndexStore(), SqliteIndexStore(tmp_path / "s.db")
    issues = [stored(n, *(OOM if n % 2 else TOOLS), rules=("cuda-oom-during-cudagraph-capture",) if n % 3 else ())
              for n in range(1, 9)]
    issues.append(stored(3, *TOOLS))                 # an edit
    for store in (mem, sql):
        for issue in issues:
            store.put(issue)
    terms = sorted({t for i in issues for t in i.vector})
    keys = sorted({k for i in issues for k in i.keys})
    assert mem.df(terms) == sql.df(terms)
    assert sorted(mem.postings(terms, before)) == sorted(sql.postings(terms, before))
    assert mem.numbers_by_key(keys, before=before) == sql.numbers_by_key(keys, before=before)
    assert mem.get_many(range(10)) == sql.get_many(range(10))
    weights = {t: 0.5 for t in terms[:20]}
    assert mem.best(weights, 5, 3, before) == summed_best(mem, weights, 5, 3, before)
    sql.close()


def summed_best(store: MemoryIndexStore, weights: dict[str, float], limit: int, exclude: int | None,
                before: tuple[str, int] | None) -> list[int]:
    """What MemoryIndexStore.best computes in compiled code, as a plain loop over the postings."""
    acc: dict[int, float] = {}
    for t, n, w in store.postings(list(weights), before):
        acc[n] = acc.get(n, 0.0) + weights[t] * w
    acc.pop(exclude, None)  # type: ignore[arg-type]
    return sorted(acc, key=acc.__getitem__, reverse=True)[:limit]


TERMS = [f"t{k}" for k in range(8)]
# weights on a coarse grid, so that many sums tie; a few arbitrary floats (stored as float64)
WEIGHT = st.one_of(st.sampled_from([0.25, 0.5, 1.0, 1.5, 0.1234]), st.floats(0.0001, 6.0))


@settings(max_examples=150, deadline=None)
@given(issues=st.lists(st.tuples(st.integers(1, 30), st.dictionaries(st.sampled_from(TERMS), WEIGHT, min_size=1)),
                       min_size=1, max_size=40),
       query=st.dictionaries(st.sampled_from(TERMS), st.sampled_from([0.5, 1.0, 2.0, 0.3]), min_size=1),
       limit=st.integers(1, 8), exclude=st.one_of(st.none(), st.integers(1, 30)),
       cut=st.one_of(st.none(), st.integers(1, 30)))
def test_best_is_the_sorted_sums_of_the_postings_loop(issues, query, limit, exclude, cut):
    """Same numbers, same order (ties in the order the postings first name them), through edits, `exclude` and
    `before`: the compiled sums add the same floats in the same order."""
    store = MemoryIndexStore()
    for number, vector in issues:                     # a number put again is an edit
        store.put(StoredIssue(number, created_at=f"2025-01-{number:02d}", vector=vector))
    before = None if cut is None else (f"2025-01-{cut:02d}", cut)
    expected = summed_best(store, query, limit, exclude, before)
    assert store.best({}, limit) == []
    with patch("bot.dupes.store.COMPILED_SUMS_FROM", 0):                   # NumPy's sums
        assert store.best(query, limit, exclude, before) == expected
    with patch("bot.dupes.store.COMPILED_SUMS_FROM", 1 << 30):             # few postings: the plain loop
        assert store.best(query, limit, exclude, before) == expected


def test_the_compiled_weight_table_is_the_store_s():
    from bot.dupes.postings_sums import DECODE

    assert DECODE.tolist() == _DECODE
