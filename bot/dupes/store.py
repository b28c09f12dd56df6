"""The duplicate index's store: the contract (`IndexStore`) and the in-memory implementation, replay's default.

The index (bot/dupes/index.py) does all the scoring; a store only keeps issues, an inverted index of their
term weights, document frequencies and exact-match keys (signatures, rule ids). The durable backends, SQLite
and Postgres, implement the same contract in bot/stores/dupes/. Pure: no I/O here.
"""

from __future__ import annotations

import marshal
import sys
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

KEY_LIMIT = 50          # issues remembered per key at query time, newest first
DECODED_ISSUES = 2048   # MemoryIndexStore: decoded issues kept for the next queries (~9 KB each)
COMPILED_SUMS_FROM = 400   # postings in a query from which stage 1 is summed by NumPy (postings_sums.py)
# `before=(created_at, number)` on a read: only issues created earlier, in the order (created_at, number)
Before = tuple[str, int] | None


@dataclass(frozen=True)
class StoredIssue:
    number: int
    title: str = ""
    state: str = "open"
    url: str | None = None
    created_at: str = ""
    duplicate_of: int | None = None
    vector: dict[str, float] = field(default_factory=dict, hash=False)
    meta: dict[str, Any] = field(default_factory=dict, hash=False)   # see document.doc_meta
    keys: tuple[str, ...] = ()


class IndexStore(Protocol):
    def put(self, issue: StoredIssue) -> None:
        """Insert, or replace the issue with the same number (an edit)."""

    def get_many(self, numbers: Iterable[int]) -> dict[int, StoredIssue]: ...

    def count(self) -> int: ...

    def df(self, terms: Sequence[str]) -> dict[str, int]:
        """Document frequency of each term that occurs in at least one issue."""

    def postings(self, terms: Sequence[str], before: Before = None) -> Iterator[tuple[str, int, float]]:
        """(term, number, weight) for every issue holding one of the terms (created before `before`)."""

    def numbers_by_key(self, keys: Sequence[str], limit: int = KEY_LIMIT,
                       before: Before = None) -> dict[str, list[int]]:
        """The newest `limit` issues holding each key (among those created before `before`)."""

    def set_duplicate_of(self, number: int, target: int | None) -> None: ...

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group many puts (a bulk build); queries inside a batch see what was put so far."""

    def close(self) -> None: ...


_SCALE = 10000            # document weights are rounded to 4 decimals (document.bm25f_vector)
_DECODE = [k / _SCALE for k in range(1 << 16)]   # k / 10000 is the same float as round(w, 4) for w = that value


def _encode(weights: Iterable[float]) -> array:
    """Weights as uint16 multiples of 1e-4 when each one decodes to exactly the same float, else float64."""
    ws = list(weights)
    try:
        quantised = array("H", [round(w * _SCALE) for w in ws])
    except (OverflowError, ValueError, TypeError):
        return array("d", ws)
    if all(_DECODE[k] == w for k, w in zip(quantised, ws, strict=True)):
        return quantised
    return array("d", ws)


def _decode(ws: array) -> list[float]:
    return list(map(_DECODE.__getitem__, ws)) if ws.typecode == "H" else ws.tolist()


class _Postings:
    """One term's postings: the store's document ids of its issues and their weights, in the order they were put."""

    __slots__ = ("docs", "weights")

    def __init__(self) -> None:
        self.docs = array("i")
        self.weights = array("H")

    def add(self, doc: int, w: float) -> None:
        if self.weights.typecode == "H":
            k = round(w * _SCALE) if isinstance(w, float | int) and 0 <= w < 6.5 else -1
            if k >= 0 and _DECODE[k] == w:
                self.docs.append(doc)
                self.weights.append(k)
                return
            self.weights = array("d", _decode(self.weights))
        self.docs.append(doc)
        self.weights.append(w)

    def remove(self, doc: int) -> None:
        i = self.docs.index(doc)
        del self.docs[i]
        del self.weights[i]

    def items(self) -> Iterator[tuple[int, float]]:
        if self.weights.typecode == "H":
            return zip(self.docs, map(_DECODE.__getitem__, self.weights), strict=True)
        return zip(self.docs, self.weights, strict=True)


def _summed_best(postings: list[tuple[array, array, float]], size: int, limit: int,
                 left_out: set[int] | None = None) -> list[int]:
    """postings_sums.best_sums as a plain loop."""
    acc: dict[int, float] = {}
    get = acc.get
    for docs, weights, q in postings:
        for doc, w in zip(docs, _decode(weights), strict=True):
            acc[doc] = get(doc, 0.0) + q * w
    for doc in left_out or ():
        acc.pop(doc, None)
    return sorted(acc, key=acc.__getitem__, reverse=True)[:limit]


class MemoryIndexStore:
    """Everything in memory, compactly: the default for replay and tests.

    Terms and keys are interned to ints once; an issue keeps its term ids, weights, key ids and meta packed in
    bytes (decoded by get_many), and each term's postings are two parallel arrays: document ids (an issue's
    place in the order of first puts: dense, so `best` sums them in compiled code) and weights. Weights are stored
    as uint16 multiples of 1e-4 when that is exact (document weights are rounded to 4 decimals), else as float64,
    so every read returns the floats that were put and every sum is the same. About 1 KB per issue instead of
    9 KB."""

    def __init__(self) -> None:
        # number -> (title, state, url, created_at, duplicate_of, term ids, weights, meta, key ids)
        self._issues: dict[int, tuple[Any, ...]] = {}
        self._doc_ids: dict[int, int] = {}          # number -> document id, kept through edits
        self._numbers = array("i")                  # document id -> number
        self._term_ids: dict[str, int] = {}
        self._terms: list[str] = []
        self._postings: list[_Postings] = []
        self._key_ids: dict[str, int] = {}
        self._key_names: list[str] = []
        self._keys: list[array] = []
        # the issues get_many decoded last: candidates repeat from query to query (a popular failure's reports)
        self._decoded: OrderedDict[int, StoredIssue] = OrderedDict()
        # the latest (created_at, number) ever put: a `before` after it filters nothing (a replay from scratch)
        self._newest: tuple[str, int] | None = None

    def _term_id(self, term: str) -> int:
        tid = self._term_ids.get(term)
        if tid is None:
            tid = self._term_ids[term] = len(self._terms)
            self._terms.append(term)
            self._postings.append(_Postings())
        return tid

    def _key_id(self, key: str) -> int:
        kid = self._key_ids.get(key)
        if kid is None:
            kid = self._key_ids[key] = len(self._key_names)
            self._key_names.append(key)
            self._keys.append(array("i"))
        return kid

    def put(self, issue: StoredIssue) -> None:
        number = issue.number
        self._decoded.pop(number, None)
        if self._newest is None or (issue.created_at, number) > self._newest:
            self._newest = (issue.created_at, number)
        if number in self._issues:
            self._unindex(number)
        doc = self._doc_ids.get(number)
        if doc is None:
            doc = self._doc_ids[number] = len(self._numbers)
            self._numbers.append(number)
        tids = array("I", [self._term_id(t) for t in issue.vector])
        weights = _encode(issue.vector.values())
        kids = array("I", [self._key_id(k) for k in issue.keys])
        postings = self._postings
        if weights.typecode == "H":
            for tid, k in zip(tids, weights, strict=True):
                plist = postings[tid]
                plist.docs.append(doc)
                if plist.weights.typecode == "H":
                    plist.weights.append(k)
                else:
                    plist.weights.append(_DECODE[k])
        else:
            for tid, w in zip(tids, issue.vector.values(), strict=True):
                postings[tid].add(doc, w)
        for kid in kids:
            self._keys[kid].append(number)
        try:
            meta: Any = marshal.dumps(issue.meta)
        except ValueError:   # not plain data: kept as is
            meta = issue.meta
        self._issues[number] = (issue.title, sys.intern(issue.state), issue.url, issue.created_at,
                                issue.duplicate_of, tids.tobytes(), weights, meta, kids.tobytes())

    def _unindex(self, number: int) -> None:
        record = self._issues.pop(number)
        tids, kids = array("I"), array("I")
        tids.frombytes(record[5])
        kids.frombytes(record[8])
        doc = self._doc_ids[number]
        for tid in tids:
            self._postings[tid].remove(doc)
        for kid in kids:
            numbers = self._keys[kid]
            del numbers[numbers.index(number)]

    def _issue(self, number: int, record: tuple[Any, ...]) -> StoredIssue:
        title, state, url, created_at, duplicate_of, tid_bytes, weights, meta, kid_bytes = record
        tids, kids = array("I"), array("I")
        tids.frombytes(tid_bytes)
        kids.frombytes(kid_bytes)
        names = self._key_names
        return StoredIssue(number, title, state, url, created_at, duplicate_of,
                           dict(zip(map(self._terms.__getitem__, tids), _decode(weights), strict=True)),
                           marshal.loads(meta) if isinstance(meta, bytes) else meta,
                           tuple(names[k] for k in kids))

    def get_many(self, numbers: Iterable[int]) -> dict[int, StoredIssue]:
        issues, decoded = self._issues, self._decoded
        out = {}
        for n in numbers:
            issue = decoded.get(n)
            if issue is not None:
                decoded.move_to_end(n)
            elif n in issues:
                issue = decoded[n] = self._issue(n, issues[n])
                if len(decoded) > DECODED_ISSUES:
                    decoded.popitem(last=False)
            else:
                continue
            out[n] = issue
        return out

    def count(self) -> int:
        return len(self._issues)

    def _live(self, term: str) -> _Postings | None:
        tid = self._term_ids.get(term)
        return None if tid is None else self._postings[tid]

    def df(self, terms: Sequence[str]) -> dict[str, int]:
        out = {}
        term_ids, postings = self._term_ids, self._postings
        for t in terms:
            tid = term_ids.get(t)
            if tid is not None and (df := len(postings[tid].docs)):
                out[t] = df
        return out

    def _earlier(self, number: int, before: tuple[str, int]) -> bool:
        return (self._issues[number][3], number) < before

    def _filter(self, before: Before) -> Before:
        """`before`, or None when every issue held was created before it."""
        return None if before is None or self._newest is None or self._newest < before else before

    def postings(self, terms: Sequence[str], before: Before = None) -> Iterator[tuple[str, int, float]]:
        before = self._filter(before)
        numbers = self._numbers
        for t in terms:
            plist = self._live(t)
            if plist is None:
                continue
            for doc, w in plist.items():
                number = numbers[doc]
                if before is None or self._earlier(number, before):
                    yield t, number, w

    def best(self, weights: dict[str, float], limit: int, exclude: int | None = None,
             before: Before = None) -> list[int]:
        """The `limit` issues (not `exclude`, created before `before`) with the largest Σ weight(term) · w(term,
        issue) over the terms' postings, best first, ties in the order `postings` first yields them: what sorting
        the sums that a loop over `postings` adds gives, summed in compiled code (bot/dupes/postings_sums.py)."""
        before = self._filter(before)
        postings = [(plist.docs, plist.weights, q) for t, q in weights.items()
                    if (plist := self._live(t)) is not None and plist.docs]
        best_sums = _summed_best      # a few postings (a small history) cost less in a loop than NumPy's calls
        if sum(len(docs) for docs, _, _ in postings) >= COMPILED_SUMS_FROM:
            from bot.dupes.postings_sums import best_sums
        numbers = self._numbers
        left_out: set[int] = set()
        if exclude is not None and exclude in self._doc_ids:
            left_out.add(self._doc_ids[exclude])
        if before is not None:
            left_out.update(d for docs, _, _ in postings for d in docs if not self._earlier(numbers[d], before))
        return [numbers[d] for d in best_sums(postings, len(numbers), limit, left_out)]

    def numbers_by_key(self, keys: Sequence[str], limit: int = KEY_LIMIT,
                       before: Before = None) -> dict[str, list[int]]:
        before = self._filter(before)
        out = {}
        for k in keys:
            kid = self._key_ids.get(k)
            if kid is None:
                continue
            numbers: Iterable[int] = self._keys[kid]
            if before is not None:
                numbers = [n for n in numbers if self._earlier(n, before)]
            if numbers:
                out[k] = sorted(numbers, reverse=True)[:limit]
        return out

    def set_duplicate_of(self, number: int, target: int | None) -> None:
        record = self._issues.get(number)
        if record is not None:
            self._issues[number] = (*record[:4], target, *record[5:])
            self._decoded.pop(number, None)

    @contextmanager
    def batch(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        return None
