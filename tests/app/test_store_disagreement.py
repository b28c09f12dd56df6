"""Maintainers' disagreement on the dashboard is kept up to date as it is written (disagreement_counts, on SQLite and
Postgres): after every step of a random run of decisions, feedback and removed labels it equals the fold of every
feedback row joined to the issue's findings, links, summary and state, the reads the overview used to make; the
migration that adds the counters fills them with the same answer."""

from __future__ import annotations

import random

import pytest

from bot.stores.deliveries import IssueState, open_delivery_store
from bot.stores.deliveries.summary import Disagreement, disagreement

from .pg import pg_url  # noqa: F401 - fixture
from .test_store_summary import delivery_store, plan  # noqa: F401 - delivery_store: the `store` fixture

# the oracle: the reads of every feedback row the overview made before the counters
SUPPRESSED = ("SELECT f.repo, f.number, f.kind, (SELECT COUNT(*) FROM issue_findings i WHERE i.repo = f.repo"
              " AND i.number = f.number AND i.rule = substr(f.kind, 15)) AS present FROM feedback f"
              " WHERE f.kind >= 'suppress-rule:' AND f.kind < 'suppress-rule;' GROUP BY f.repo, f.number, f.kind")
NOT_DUPLICATE = ("SELECT DISTINCT f.repo, f.number, f.target, l.rule, s.candidates FROM feedback f"
                 " LEFT JOIN candidate_links l ON l.repo = f.repo AND l.number = f.number AND l.target = f.target"
                 " LEFT JOIN issue_summary s ON s.repo = f.repo AND s.number = f.number"
                 " WHERE f.kind = 'not-duplicate' AND f.target IS NOT NULL")
CONFIRMED = ("SELECT COUNT(*) AS n FROM (SELECT DISTINCT repo, number, target FROM feedback"
             " WHERE kind = 'duplicate') d")
LABELS_REMOVED = ("SELECT st.labels_suppressed, i.rule, i.labels FROM issue_state st CROSS JOIN issue_findings i"
                  " WHERE st.labels_suppressed <> '[]' AND i.repo = st.repo AND i.number = st.number")

RULES = ("oom", "pp", "nccl", "rocm-build")
LABELS = ("memory", "distributed", "rocm", "bug")
REPOS = ("o/r", "o/other")


async def rows(store, sql: str) -> list:
    if hasattr(store, "_db"):
        return store._db.execute(sql).fetchall()
    return await store._fetch(sql)


async def recomputed(store) -> Disagreement:
    return disagreement(await rows(store, SUPPRESSED), await rows(store, NOT_DUPLICATE),
                        await rows(store, LABELS_REMOVED), (await rows(store, CONFIRMED))[0]["n"])


def same(a: Disagreement, b: Disagreement) -> bool:
    plus = lambda c: {k: v for k, v in c.items() if v}   # noqa: E731 - a Counter's zero entries are no difference
    return all(plus(getattr(a, f)) == plus(getattr(b, f)) for f in ("label_removed", "suppressed", "suppressed_gone",
                                                                     "not_duplicate")) \
        and (a.rejected, a.rejected_issues_without_links, a.confirmed) \
        == (b.rejected, b.rejected_issues_without_links, b.confirmed)


async def random_run(store, rng: random.Random, steps: int) -> None:
    """Decisions (findings with labels, candidates with and without a supporting rule), feedback (suppressed rules,
    rejected and confirmed links, some sent twice) and issue states (removed labels, closed), checked each step."""
    for step in range(steps):
        repo, number = rng.choice(REPOS), rng.randint(1, 8)
        what = rng.random()
        if what < 0.35:
            findings = [(r, rng.choice([0.5, 0.9]), tuple(rng.sample(LABELS, rng.randint(0, 2))))
                        for r in rng.sample(RULES, rng.randint(0, 3))]
            candidates = [(t, rng.choice([f"same error: X; same diagnosis: {rng.choice(RULES)}; similar wording",
                                          "similar wording (70%)"]))
                          for t in rng.sample(range(20, 30), rng.randint(0, 3))]
            p = plan(number, findings=findings, candidates=candidates,
                     labels=sorted({lb for _, _, lbs in findings for lb in lbs}))
            await store.record_decision(f"d{step}", repo, number, "live", "issues.edited", p, True)
        elif what < 0.75:
            kind = rng.choice([f"suppress-rule:{rng.choice(RULES)}", "not-duplicate", "duplicate"])
            target = None if kind.startswith("suppress") or rng.random() < 0.1 else rng.randint(20, 29)
            delivery = rng.choice([f"f{step}", "again", None])   # "again": the same delivery's feedback is kept once
            await store.add_feedback(repo, number, kind, target, "alice", delivery)
        else:
            state = await store.issue_state(repo, number) or IssueState(repo, number)
            state.labels_suppressed = rng.sample(LABELS, rng.choice([0, 0, 1, 2]))
            state.state = rng.choice(["open", "closed"])
            await store.save_issue_state(state)
        expected, got = await recomputed(store), await store.disagreement()
        assert same(got, expected), (step, got, expected)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_disagreement_follows_every_write(store, seed):
    rng = random.Random(seed)
    await random_run(store, rng, 150)
    final = await store.disagreement()
    assert final.rejected and final.confirmed and final.suppressed and final.label_removed   # the run covered each


async def test_the_migration_fills_the_counters_from_the_rows_recorded_before_it(store):
    await random_run(store, random.Random(7), 120)
    expected = await recomputed(store)
    url = store.test_url
    if hasattr(store, "_db"):
        from bot.stores.deliveries.sqlite import MIGRATIONS
        version = len(MIGRATIONS) - 2
        store._db.execute("DROP TABLE disagreement_counts")
        store._db.execute("UPDATE store_versions SET version = ? WHERE store = 'deliveries'", (version,))
    else:
        from bot.stores.deliveries.postgres import MIGRATIONS
        version = len(MIGRATIONS) - 2
        async with store._conn() as conn:
            await conn.execute("DROP TABLE disagreement_counts")
            await conn.execute("UPDATE store_versions SET version = %s WHERE store = 'deliveries'", (version,))
    await store.close()
    again = open_delivery_store(url)
    try:
        assert await again.migrate() == version + 2
        assert same(await again.disagreement(), expected) and expected.rejected and expected.suppressed
    finally:
        await again.close()
