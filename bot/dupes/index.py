"""The duplicate index: add issues as they are opened or edited, search earlier issues for one report.

Search is two-stage so its cost does not grow with the history:
  1. candidates: issues sharing a signature or a rule id (exact keys), and issues sharing the query's rarest
     terms (postings read only while their total length stays under a fixed budget);
  2. exact scoring of the best candidates: BM25 over the whole query vector, normalised by the query's own
     score, combined with the signature / rule signals (bot/dupes/scoring.py), then the redirect of issues
     closed as duplicates to the issue they duplicate.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from bot.decision import Candidate, Finding
from bot.dupes.document import IssueDoc, build_doc, doc_from_meta, doc_meta
from bot.dupes.scoring import (
    DEFAULT_POLICY,
    FAILURE_KINDS,
    Match,
    Policy,
    asked_of,
    bm25,
    combine,
    compare,
    contributions,
    idf,
    reason,
    self_score,
)
from bot.dupes.store import IndexStore, MemoryIndexStore, StoredIssue
from bot.report.model import Report

POSTINGS_BUDGET = 1200     # postings read per query in stage 1, whatever the size of the history
MAX_QUERY_TERMS = 32       # rarest query terms used to find candidates
RESCORE = 16               # candidates scored exactly in stage 2 (besides the exact-key ones)
MAX_KEY_CANDIDATES = 16
STORED_DOCS = 2048         # candidates' documents kept for the next queries (the store hands out the same issues)


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    match: Match
    linked: bool


def budgeted_terms(present: list[str], dfs: dict[str, int]) -> list[str]:
    """Stage 1's query terms: the rarest first (`present` is sorted by df), while their postings fit the budget."""
    chosen: list[str] = []
    budget = POSTINGS_BUDGET
    for term in present[:MAX_QUERY_TERMS]:
        if dfs[term] > budget:
            break
        budget -= dfs[term]
        chosen.append(term)
    return chosen


class DuplicateIndex:
    """Implements the pipeline's SimilarIssues (search) and the replay's add."""

    def __init__(self, store: IndexStore | None = None, policy: Policy = DEFAULT_POLICY) -> None:
        self.store: IndexStore = store if store is not None else MemoryIndexStore()
        self.policy = policy
        self._last: tuple[Report, tuple[Finding, ...], IssueDoc] | None = None
        # id(stored issue) -> (that issue, its document): rebuilt only for an issue object not seen lately
        self._stored_docs: OrderedDict[int, tuple[StoredIssue, IssueDoc]] = OrderedDict()

    def _doc(self, report: Report, findings: tuple[Finding, ...]) -> IssueDoc:
        """build_doc, remembered for the last report: the pipeline searches with a report, then adds it."""
        last = self._last
        if last is not None and last[0] is report and last[1] == findings:
            return last[2]
        doc = build_doc(report, findings)
        self._last = (report, findings, doc)
        return doc

    def _stored_doc(self, issue: StoredIssue) -> IssueDoc:
        docs = self._stored_docs
        hit = docs.get(id(issue))
        if hit is not None and hit[0] is issue:
            docs.move_to_end(id(issue))
            return hit[1]
        doc = doc_from_meta(issue.vector, issue.meta)
        docs[id(issue)] = (issue, doc)
        if len(docs) > STORED_DOCS:
            docs.popitem(last=False)
        return doc

    def close(self) -> None:
        self.store.close()

    def __len__(self) -> int:
        return self.store.count()

    @contextmanager
    def batch(self) -> Iterator[None]:
        with self.store.batch():
            yield

    # -- writes ---------------------------------------------------------------------------------------
    def add(self, number: int, report: Report, findings: tuple[Finding, ...] = (), *, state: str = "open",
            created_at: str = "", url: str | None = None, duplicate_of: int | None = None) -> None:
        self.add_doc(number, self._doc(report, findings), title=report.title, state=state, created_at=created_at,
                     url=url, duplicate_of=duplicate_of)

    def add_doc(self, number: int, doc: IssueDoc, *, title: str = "", state: str = "open", created_at: str = "",
                url: str | None = None, duplicate_of: int | None = None) -> None:
        self.store.put(StoredIssue(number=number, title=title or doc.title, state=state, url=url,
                                   created_at=created_at, duplicate_of=duplicate_of, vector=doc.vector,
                                   meta=doc_meta(doc), keys=doc.keys))

    def mark_duplicate(self, number: int, of: int | None) -> None:
        self.store.set_duplicate_of(number, of)

    # -- reads ----------------------------------------------------------------------------------------
    def search(self, report: Report, findings: tuple[Finding, ...] = (), *, exclude: int | None = None,
               limit: int = 3, before: tuple[str, int] | None = None) -> tuple[Candidate, ...]:
        scored = self.search_doc(self._doc(report, findings), exclude=exclude, limit=limit, before=before)
        return tuple(s.candidate for s in scored if s.linked)

    def candidate(self, number: int, reason: str) -> Candidate | None:
        """Issue `number` as a candidate with the given reason (a link a maintainer confirmed), if indexed."""
        issue = self.store.get_many([number]).get(number)
        if issue is None:
            return None
        return Candidate(number=number, score=1.0, reason=reason, title=issue.title, state=issue.state, url=issue.url)

    def similar(self, report: Report, findings: tuple[Finding, ...] = (), *, exclude: int | None = None,
                limit: int = 3, before: tuple[str, int] | None = None) -> tuple[tuple[Candidate, ...],
                                                                                 tuple[Candidate, ...]]:
        """(linked, possibly related): the links, and the best pairs just below their threshold."""
        scored = self.search_doc(self._doc(report, findings), exclude=exclude, limit=limit, before=before,
                                 related=True)
        return (tuple(s.candidate for s in scored if s.linked),
                tuple(s.candidate for s in scored if not s.linked))

    def search_doc(self, doc: IssueDoc, *, exclude: int | None = None, limit: int = 3,
                   near_misses: bool = False, before: tuple[str, int] | None = None,
                   related: bool = False) -> list[Scored]:
        """Linked candidates, best first; with near_misses, also the best pairs that stayed below the threshold;
        with related, the best pairs within policy.related_margin below their threshold (at most `limit`).

        `before` = (created_at, number): only issues created earlier count (a replay over a full index). The
        filter applies inside candidate selection, so later issues never take the candidates' places; document
        frequencies (idf, the postings budget) stay those of the whole index."""
        pairs, idfs = self._rank(doc, exclude, before)
        results = [(combine(m, self.policy), m, i) for m, i in pairs]
        results.sort(key=lambda r: (r[0], r[2].number), reverse=True)
        return self._finish(doc, idfs, results, exclude, limit, near_misses, related)

    def candidates(self, doc: IssueDoc, *, exclude: int | None = None) -> list[tuple[Match, StoredIssue]]:
        """Every pair scored exactly in stage 2, unsorted and not yet thresholded."""
        return self._rank(doc, exclude)[0]

    def _rank(self, doc: IssueDoc, exclude: int | None,
              before: tuple[str, int] | None = None) -> tuple[list[tuple[Match, StoredIssue]], dict[str, float]]:
        n = self.store.count()
        if n == 0 or (not doc.vector and not doc.keys):
            return [], {}
        dfs = self.store.df(list(doc.vector))
        idfs = {t: idf(dfs.get(t, 1), n) for t in doc.vector}
        norm = self_score(doc.vector, idfs)

        best = self._term_candidates(doc, dfs, idfs, exclude, before)
        by_key = self.store.numbers_by_key(doc.keys, before=before) if before is not None \
            else self.store.numbers_by_key(doc.keys)
        keyed: set[int] = set()
        for numbers in by_key.values():
            keyed.update(numbers[:MAX_KEY_CANDIDATES])
        if exclude is not None:
            keyed.discard(exclude)
        numbers = set(best) | set(sorted(keyed, reverse=True)[:MAX_KEY_CANDIDATES])
        stored = self.store.get_many(numbers)

        others = [(issue, self._stored_doc(issue)) for issue in stored.values()]
        asked = asked_of(doc, idfs, self.policy)
        subject_idfs = self._subject_idfs(doc, [o for _, o in others], idfs, n) if asked is not None else idfs
        out: list[tuple[Match, StoredIssue]] = []
        for issue, other in others:
            text = bm25(doc.vector, issue.vector, idfs) / norm if norm > 0 else 0.0
            out.append((compare(doc, other, min(text, 1.0), asked=asked, idfs=subject_idfs), issue))
        return out, idfs

    def _subject_idfs(self, doc: IssueDoc, others: list[IssueDoc], idfs: dict[str, float],
                      n: int) -> dict[str, float]:
        """`idfs` plus the idf of the subject terms of the candidates that share one with the query (their other
        terms weigh in scoring.subject_match), in one df look-up."""
        asked = set(doc.subject)
        missing = {t for o in others if o.kind not in FAILURE_KINDS and not asked.isdisjoint(o.subject)
                   for t in o.subject if t not in idfs}
        if not missing:
            return idfs
        dfs = self.store.df(sorted(missing))
        return {**idfs, **{t: idf(dfs.get(t, 1), n) for t in missing}}

    def _term_candidates(self, doc: IssueDoc, dfs: dict[str, int], idfs: dict[str, float], exclude: int | None,
                         before: tuple[str, int] | None = None) -> list[int]:
        """Stage 1: the RESCORE issues whose postings of the query's rarest terms weigh most, best first."""
        present = sorted((t for t in doc.vector if t in dfs), key=lambda t: (dfs[t], t))
        chosen = budgeted_terms(present, dfs)
        qw = {t: idfs[t] * doc.vector[t] for t in chosen}
        best = getattr(self.store, "best", None)
        if best is not None:
            return best(qw, RESCORE, exclude, before) if before is not None else best(qw, RESCORE, exclude)
        acc: dict[int, float] = {}
        get = acc.get
        for term, number, w in (self.store.postings(chosen, before) if before is not None
                                else self.store.postings(chosen)):
            acc[number] = get(number, 0.0) + qw[term] * w
        if exclude is not None:
            acc.pop(exclude, None)
        return sorted(acc, key=acc.__getitem__, reverse=True)[:RESCORE]   # heapq.nlargest's order, faster

    def _finish(self, doc: IssueDoc, idfs: dict[str, float], results: list[tuple[float, Match, StoredIssue]],
                exclude: int | None, limit: int, near_misses: bool, related: bool = False) -> list[Scored]:
        def explained(match: Match, issue: StoredIssue) -> Match:
            return replace(match, shared_terms=contributions(doc.vector, issue.vector, idfs))

        policy = self.policy
        thresholds = [policy.threshold_for(m) for _, m, _ in results]
        linked = [(s, m, i) for (s, m, i), t in zip(results, thresholds, strict=True) if s >= t]
        targets = {i.duplicate_of for _, _, i in linked if i.duplicate_of and i.duplicate_of != exclude}
        target_issues = self.store.get_many(targets) if targets else {}
        out: list[Scored] = []
        seen: set[int] = set()
        for score, match, issue in linked:
            match = explained(match, issue)
            via = None
            if issue.duplicate_of in target_issues:
                via, issue = issue.number, target_issues[issue.duplicate_of]
            if issue.number in seen:
                continue
            seen.add(issue.number)
            why = reason(match) + (f" (via #{via}, closed as its duplicate)" if via else "")
            out.append(Scored(Candidate(number=issue.number, score=round(score, 3), reason=why, title=issue.title,
                                        state=issue.state, url=issue.url, via=via), match, True))
            if len(out) >= limit:
                break
        if related:
            below = [(s, m, i) for (s, m, i), t in zip(results, thresholds, strict=True)
                     if t - policy.related_margin <= s < t and i.number not in seen]
            for score, match, issue in below[:limit]:
                match = explained(match, issue)
                out.append(Scored(Candidate(number=issue.number, score=round(score, 3), reason=reason(match),
                                            title=issue.title, state=issue.state, url=issue.url), match, False))
        if near_misses:
            for (score, match, issue), t in zip(results, thresholds, strict=True):
                if score < t and len(out) < limit + 3:
                    match = explained(match, issue)
                    out.append(Scored(Candidate(number=issue.number, score=round(score, 3), reason=reason(match),
                                                title=issue.title, state=issue.state, url=issue.url), match, False))
        return out
