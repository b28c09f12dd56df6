"""The duplicate index with the maintainers' feedback (bot/app/core.Excluding): rejected candidates are never
suggested, confirmed ones are linked first, whatever their score."""

from __future__ import annotations

from bot.app.core import CONFIRMED, Excluding
from bot.dupes import DuplicateIndex
from bot.report import parse

USAGE = "### How would you like to use vllm\n\n{}\n"


def index_with_questions() -> DuplicateIndex:
    index = DuplicateIndex()
    index.add(1, parse("[Usage]: download the weights through ModelScope instead of the Hub",
                       USAGE.format("Our servers cannot reach the Hub; the mirror is the only source.")), ())
    index.add(2, parse("[Usage]: how to set max_num_seqs for throughput", USAGE.format("Batching question.")), ())
    index.add(3, parse("[Usage]: is ModelScope supported as a model source?", USAGE.format("Planning a cluster.")), ())
    return index


QUERY = parse("[Usage]: VLLM_USE_MODELSCOPE seems to have no effect", USAGE.format("Exported it, nothing changed."))


def test_related_candidates_come_back_apart_from_links():
    linked, related = index_with_questions().similar(QUERY, (), exclude=9)
    assert 1 in {c.number for c in (*linked, *related)}
    assert not {c.number for c in linked} & {c.number for c in related}


def test_rejected_candidates_are_dropped_from_links_and_related():
    linked, related = Excluding(index_with_questions(), {1, 3}).similar(QUERY, (), exclude=9)
    assert not {c.number for c in (*linked, *related)} & {1, 3}


def test_confirmed_candidates_are_linked_first_even_when_unscored():
    index = index_with_questions()
    linked, related = Excluding(index, set(), (2, 1)).similar(QUERY, (), exclude=9)
    assert [c.number for c in linked[:2]] == [2, 1]             # 2 shares nothing with the query: fetched by number
    assert linked[0].reason == CONFIRMED and linked[1].reason.startswith(CONFIRMED + "; ")
    assert 1 not in [c.number for c in related]
    # a confirmation later rejected, or pointing at the issue itself, links nothing
    linked, _ = Excluding(index, {2}, (2, 9)).similar(QUERY, (), exclude=9)
    assert not {c.number for c in linked} & {2, 9}
    assert Excluding(index, set(), (404,)).search(QUERY, (), exclude=9) == index.search(QUERY, (), exclude=9)
