"""Stage 1 of the duplicate search over the in-memory store's postings, in compiled code (NumPy), exact.

`np.bincount(bins, weights)` adds each bin's weights one after another in input order, starting from 0.0: the
same floats, in the same order, as a loop `acc[d] = acc.get(d, 0.0) + q * w` over the postings, so every sum is
the same. Imported on a store's first query, not at start-up (NumPy takes ~0.1 s of CPU to import), and only by
MemoryIndexStore.best.
"""

from __future__ import annotations

from array import array

import numpy as np

# a uint16 weight k stands for k / 10000 (bot/dupes/store.py); IEEE division is correctly rounded, as Python's is
DECODE = np.arange(1 << 16, dtype=np.float64) / 10000


def weights_of(parts: list[array]) -> np.ndarray:
    """The weights arrays (uint16 multiples of 1e-4, or float64) joined, as the floats they hold."""
    if all(ws.typecode == "H" for ws in parts):
        return DECODE[np.concatenate([np.frombuffer(ws, dtype=np.uint16) for ws in parts])]
    return np.concatenate([DECODE[np.frombuffer(ws, dtype=np.uint16)] if ws.typecode == "H"
                           else np.frombuffer(ws, dtype=np.float64) for ws in parts])


def best_sums(postings: list[tuple[array, array, float]], size: int, limit: int,
              left_out: set[int] | None = None) -> list[int]:
    """`postings`: per term, in the query's order, its document ids (int32, each below `size`), their weights and
    the term's query weight. The `limit` documents (none of `left_out`) with the largest Σ q · w, best first, ties
    in the order the postings first name them: `sorted(acc, key=acc.__getitem__, reverse=True)[:limit]` for the
    dict `acc` the loop over the postings fills."""
    if not postings:
        return []
    docs = np.concatenate([np.frombuffer(ds, dtype=np.int32) for ds, _, _ in postings])
    query = np.repeat([q for _, _, q in postings], [len(ds) for ds, _, _ in postings])
    sums = np.bincount(docs, weights=query * weights_of([ws for _, ws, _ in postings]), minlength=size)
    held = np.bincount(docs, minlength=size) > 0
    if left_out:
        held[list(left_out)] = False
    found = np.flatnonzero(held)
    if len(found) > limit:               # those at least as large as the limit-th largest sum (ties included)
        found_sums = sums[found]
        kth = np.partition(found_sums, len(found) - limit)[len(found) - limit]
        found = found[found_sums >= kth]
    chosen = np.zeros(size, dtype=bool)
    chosen[found] = True
    in_order = list(dict.fromkeys(docs[chosen[docs]].tolist()))     # as the postings first name them
    total = dict(zip(found.tolist(), sums[found].tolist(), strict=True))
    return sorted(in_order, key=total.__getitem__, reverse=True)[:limit]
