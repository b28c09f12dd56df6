"""plan(): the pure decision of what to change on one issue."""

from __future__ import annotations

from bot.app.plan import BotComment, plan, reconcile
from bot.app.repo_config import DEFAULT, parse_config
from bot.comment import MARKER, render_cleared
from bot.stores.deliveries import IssueState

BODY = f"{MARKER}\nhello"


def state(**kw) -> IssueState:
    return IssueState(repo="o/r", number=1, **kw)


def test_adds_only_missing_allowed_labels_in_one_list():
    p = plan(topics=["bug", "rocm", "memory"], comment=None, current_labels=["bug"], bot_comments=[],
             state=state(), config=DEFAULT, repo_labels=["bug", "rocm"])
    assert p.add_labels == ("rocm",)
    assert ("memory", "no such label in the repository") in p.skipped
    assert p.remove_labels == ()


def test_never_re_adds_a_label_a_human_removed():
    s = state(labels_added=["rocm", "bug"])
    p = plan(topics=["bug", "rocm"], comment=None, current_labels=["bug"], bot_comments=[], state=s, config=DEFAULT)
    assert p.add_labels == ()
    assert ("rocm", "a human removed it") in p.skipped
    assert p.state.labels_suppressed == ["rocm"] and p.state.labels_added == ["bug"]


def test_removes_only_labels_the_bot_added():
    s = state(labels_added=["needs-info"])
    p = plan(topics=["bug"], comment=None, current_labels=["needs-info", "usage", "bug"], bot_comments=[],
             state=s, config=DEFAULT)
    assert p.remove_labels == ("needs-info",)  # "usage" is a human's
    assert p.add_labels == ()


def test_pending_labels_are_confirmed_or_dropped():
    s = state(labels_pending=["rocm", "cuda"])  # the bot crashed between sending and recording
    r = reconcile(s, ["rocm"])
    assert r.labels_added == ["rocm"] and r.labels_pending == [] and r.labels_suppressed == []


def test_label_map_allow_and_switches():
    config = parse_config("labels:\n  map:\n    needs-info: 'needs more info'\n    memory: null\n"
                          "  allow: ['needs more info', bug]\nfeatures:\n  needs_info: true\n")
    p = plan(topics=["bug", "memory", "needs-info", "rocm"], comment=None, current_labels=[], bot_comments=[],
             state=state(), config=config)
    assert p.add_labels == ("bug", "needs more info")
    assert ("memory", "mapped to null in the repo config") in p.skipped and ("rocm", "not in labels.allow") in p.skipped
    off = parse_config("features:\n  labels: false\n  comment: false\n")
    p = plan(topics=["bug"], comment=BODY, current_labels=[], bot_comments=[], state=state(), config=off)
    assert p.empty


def test_comment_create_edit_noop_and_duplicates():
    p = plan(topics=[], comment=BODY, current_labels=[], bot_comments=[], state=state(), config=DEFAULT)
    assert p.comment.kind == "create" and p.comment.body == BODY
    p = plan(topics=[], comment=BODY, current_labels=[], bot_comments=[BotComment(5, BODY + "\n")],
             state=state(comment_id=5), config=DEFAULT)
    assert p.comment.kind == "none" and p.empty
    p = plan(topics=[], comment=BODY + "!", current_labels=[], bot_comments=[BotComment(7, BODY), BotComment(5, BODY)],
             state=state(comment_id=7), config=DEFAULT)
    assert (p.comment.kind, p.comment.comment_id, p.delete_comments) == ("edit", 7, (5,))
    # the comment is found by its marker even when the bot lost track of its id (crash after posting)
    p = plan(topics=[], comment=BODY, current_labels=[], bot_comments=[BotComment(9, BODY)], state=state(),
             config=DEFAULT)
    assert p.comment.kind == "none" and p.state.comment_id == 9


def test_a_deleted_comment_is_not_posted_again_and_a_missing_marker_is_added():
    p = plan(topics=[], comment=BODY, current_labels=[], bot_comments=[], state=state(comment_id=3), config=DEFAULT)
    assert p.comment.kind == "none" and ("comment", "a human deleted the bot comment (/triage posts it again)") \
        in p.skipped
    p = plan(topics=[], comment="no marker", current_labels=[], bot_comments=[], state=state(), config=DEFAULT)
    assert p.comment.body.startswith(MARKER)


def test_nothing_left_to_say_clears_the_existing_comment_and_never_posts_one():
    cleared = render_cleared()
    p = plan(topics=[], comment=None, current_labels=[], bot_comments=[BotComment(5, BODY)], state=state(),
             config=DEFAULT, cleared=cleared)
    assert (p.comment.kind, p.comment.comment_id, p.comment.body) == ("edit", 5, cleared)
    p = plan(topics=[], comment=None, current_labels=[], bot_comments=[BotComment(5, cleared)],
             state=state(comment_id=5), config=DEFAULT, cleared=cleared)
    assert p.empty  # already cleared
    p = plan(topics=[], comment=None, current_labels=[], bot_comments=[], state=state(), config=DEFAULT,
             cleared=cleared)
    assert p.empty  # no comment to clear: none is posted
    no_comments = parse_config("features:\n  comment: false\n")
    p = plan(topics=[], comment=None, current_labels=[], bot_comments=[BotComment(5, BODY)], state=state(),
             config=no_comments, cleared=cleared)
    assert p.empty  # comments switched off: the old one is left alone
    p = plan(topics=[], comment=None, current_labels=[], bot_comments=[BotComment(5, BODY)], state=state(),
             config=DEFAULT)
    assert p.empty  # without a cleared text the comment stays as it is


def test_the_cleared_note_is_one_marker_and_no_live_mention():
    text = render_cleared()
    assert text.startswith(MARKER) and text.count(MARKER) == 1 and "@" not in text and "no longer applies" in text
