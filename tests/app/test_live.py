"""Live mode against the fake GitHub: re-read, labels in one call, one comment edited in place, humans win."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from bot.app.context import STORE
from bot.comment import MARKER, render_cleared
from bot.triage import Triage

from .conftest import comment_payload, issue_payload, live_settings
from .fakegithub import BOT_LOGIN
from .faketriage import expected_comment, fake_triage

REPO = "vllm-project/vllm"
LABELS = ["bug", "rocm", "cuda", "memory", "needs-info", "usage", "question"]
ENV = "collect_env output here"


@pytest.fixture
async def bot(tmp_path, fake, make_bot):
    fake.add_repo(REPO, LABELS)
    return await make_bot(live_settings(tmp_path, fake))


def label_posts(fake):
    return [c for c in fake.writes() if c.method == "POST" and c.path.endswith("/labels")]


async def test_opened_reads_the_issue_again_labels_once_and_comments_once(bot, fake):
    fake.add_issue(REPO, 1, "[Bug]: ROCm OOM", f"the real body, {ENV}")
    stale = issue_payload(REPO, 1, "[Bug]: stale title", "stale body")
    assert (await bot.send("issues", stale)).status == 202
    await bot.drain()
    issue = fake.repos[REPO].issues[1]
    assert issue.labels == ["bug", "rocm", "memory"]
    assert len(label_posts(fake)) == 1 and label_posts(fake)[0].body == {"labels": ["bug", "rocm", "memory"]}
    [comment] = fake.repos[REPO].bot_comments(1)
    assert comment.body == expected_comment(1, f"the real body, {ENV}")
    # a repeated event with a new delivery id changes nothing
    await bot.send("issues", stale)
    await bot.drain()
    assert len(fake.writes()) == 2
    assert not [c for c in fake.calls if c.method == "PATCH" and "/issues/1" in c.path and "comments" not in c.path]


async def test_edit_of_the_body_edits_the_one_comment_and_drops_labels_only_the_bot_added(bot, fake):
    issue = fake.add_issue(REPO, 2, "[Bug]: CUDA crash", "crash, no env", labels=["usage"])
    await bot.send("issues", issue_payload(REPO, 2, issue.title, issue.body))
    await bot.drain()
    assert issue.labels == ["usage", "bug", "cuda", "needs-info"]
    issue.body = f"crash, {ENV}"
    edited = issue_payload(REPO, 2, issue.title, issue.body, action="edited", changes={"body": {"from": "x"}})
    await bot.send("issues", edited)
    await bot.drain()
    assert issue.labels == ["usage", "bug", "cuda"]  # needs-info was the bot's; usage was a human's
    [comment] = fake.repos[REPO].bot_comments(2)
    assert comment.body == expected_comment(2, issue.body)
    assert [c.method for c in fake.writes() if "comments" in c.path] == ["POST", "PATCH"]
    # an edit that touches neither title nor body is ignored; the same body again writes nothing
    await bot.send("issues", issue_payload(REPO, 2, issue.title, issue.body, action="edited", changes={}))
    await bot.send("issues", edited)
    await bot.drain()
    assert [c.method for c in fake.writes() if "comments" in c.path] == ["POST", "PATCH"]


async def test_a_label_a_human_removed_is_never_added_again(bot, fake):
    issue = fake.add_issue(REPO, 3, "[Bug]: ROCm hang", f"{ENV}")
    await bot.send("issues", issue_payload(REPO, 3, issue.title, issue.body))
    await bot.drain()
    assert issue.labels == ["bug", "rocm"]
    issue.labels.remove("rocm")  # removed on GitHub; the unlabeled event is not even needed
    issue.body += " still ROCm"
    await bot.send("issues", issue_payload(REPO, 3, issue.title, issue.body, action="edited",
                                           changes={"body": {"from": ""}}))
    await bot.drain()
    assert issue.labels == ["bug"]
    [decision] = [d for d in await bot.get(f"/api/decisions?repo={REPO}&number=3") if d["reason"] == "issues.edited"]
    assert {"label": "rocm", "why": "a human removed it"} in decision["plan"]["skipped"]
    # and through the unlabeled event, for a label the bot never added
    issue.labels.append("cuda")
    unlabeled = issue_payload(REPO, 3, issue.title, issue.body, action="unlabeled", label={"name": "cuda"})
    unlabeled["sender"] = {"login": "maintainer", "type": "User"}
    issue.labels.remove("cuda")
    issue.body += " CUDA too"
    await bot.send("issues", unlabeled)
    await bot.send("issues", issue_payload(REPO, 3, issue.title, issue.body, action="edited",
                                           changes={"body": {"from": ""}}))
    await bot.drain()
    assert "cuda" not in issue.labels


async def test_repo_config_maps_and_restricts_labels_and_bad_config_means_shadow(tmp_path, fake, make_bot):
    fake.add_repo(REPO, LABELS, config="labels:\n  map:\n    needs-info: question\n    memory: null\n")
    fake.add_repo("org/other", LABELS, config="mode: live\nfeatures:\n  labels: yes\n  comments: true\n"
                                              "thresholds:\n  duplicate: 2\n")
    bot = await make_bot(live_settings(tmp_path, fake))
    issue = fake.add_issue(REPO, 4, "[Bug]: OOM with tools", "no env; tool calling")
    await bot.send("issues", issue_payload(REPO, 4, issue.title, issue.body))
    other = fake.add_issue("org/other", 1, "[Bug]: OOM", "no env")
    await bot.send("issues", issue_payload("org/other", 1, other.title, other.body))
    await bot.drain()
    assert issue.labels == ["bug", "question"]  # memory mapped to null, tool-calling does not exist in the repo
    assert other.labels == [] and fake.repos["org/other"].bot_comments(1) == []
    errors = (await bot.get("/api/config-errors"))["org/other"]
    assert errors == [".github/vllm-triage.yml:4: features: unknown key 'comments' "
                      "(expected one of: labels, comment, duplicates, needs_info, commands)",
                      ".github/vllm-triage.yml:6: thresholds.duplicate: expected a number between 0 and 1, got 2"]
    [decision] = await bot.get("/api/decisions?repo=org/other")
    assert decision["mode"] == "shadow" and decision["plan"]["add_labels"] == ["bug", "memory", "needs-info"]


async def test_commands(bot, fake):
    issue = fake.add_issue(REPO, 5, "[Bug]: CUDA", ENV)
    await bot.send("issues", issue_payload(REPO, 5, issue.title, issue.body))
    await bot.drain()
    [comment] = fake.repos[REPO].bot_comments(5)
    issue.comments.remove(comment)  # a maintainer deleted the bot comment
    issue.body += " more"
    await bot.send("issues", issue_payload(REPO, 5, issue.title, issue.body, action="edited",
                                           changes={"body": {"from": ""}}))
    await bot.drain()
    assert fake.repos[REPO].bot_comments(5) == []  # not posted again on its own
    # the bot's own comment mentioning a command, and a non-maintainer, are ignored
    await bot.send("issue_comment", comment_payload(REPO, 5, "/triage", login=BOT_LOGIN, user_type="Bot"))
    await bot.send("issue_comment", comment_payload(REPO, 5, "/triage", login="rando", association="NONE"))
    await bot.drain()
    assert fake.repos[REPO].bot_comments(5) == []
    await bot.send("issue_comment", comment_payload(REPO, 5, "/triage", association="COLLABORATOR"))
    await bot.send("issue_comment", comment_payload(REPO, 5, "/not-duplicate #12\n/duplicate 9"))
    await bot.drain()
    [comment] = fake.repos[REPO].bot_comments(5)
    assert comment.body.startswith(MARKER)
    assert [(f["kind"], f["target"]) for f in await bot.app[STORE].feedback(REPO, 5)] == [
        ("not-duplicate", 12), ("duplicate", 9)]


async def test_duplicate_command_links_the_confirmed_issue(bot, fake):
    """/duplicate #N re-triages: #N is linked first (its reason says a maintainer confirmed it) and stays linked."""
    for number, title in ((30, "[Usage]: how to set the chat template for a base model"),
                          (31, "[Usage]: which max_num_seqs gives the best throughput on one GPU")):
        issue = fake.add_issue(REPO, number, title, ENV)
        await bot.send("issues", issue_payload(REPO, number, issue.title, issue.body))
        await bot.drain()
    decision = (await bot.app[STORE].decisions(REPO, 31, 1))[0].plan["decision"]
    assert 30 not in decision["duplicates"]
    await bot.send("issue_comment", comment_payload(REPO, 31, "/duplicate #30"))
    await bot.drain()
    decision = (await bot.app[STORE].decisions(REPO, 31, 1))[0].plan["decision"]
    assert decision["duplicates"][0] == 30
    assert decision["candidates"][0]["reason"].startswith("confirmed by a maintainer")


async def test_crash_after_comment_created_leaves_exactly_one_comment(bot, fake):
    fake.set_faults(rate=0.0)
    fake.fail("POST", r"/issues/6/comments$", 502)  # before the effect
    issue = fake.add_issue(REPO, 6, "[Bug]: x", ENV)
    await bot.send("issues", issue_payload(REPO, 6, issue.title, issue.body))
    await bot.drain()
    assert len(fake.repos[REPO].bot_comments(6)) == 1
    # after the effect: the comment exists but the bot was told 500; the retry must find it, not post again
    fake.set_faults(rate=1.0, kinds=("500",), after_effect=1.0)
    issue7 = fake.add_issue(REPO, 7, "[Bug]: y", ENV)
    await bot.send("issues", issue_payload(REPO, 7, issue7.title, issue7.body))

    for _ in range(100):
        if fake.repos[REPO].bot_comments(7):
            break
        await asyncio.sleep(0.02)
    fake.set_faults(rate=0.0)
    await bot.drain()
    assert len(fake.repos[REPO].bot_comments(7)) == 1


async def test_failing_delivery_is_parked_and_visible_and_a_redelivery_requeues_it(tmp_path, fake, make_bot):
    fake.add_repo(REPO, LABELS)
    bot = await make_bot(live_settings(tmp_path, fake, max_attempts=3))
    issue = fake.add_issue(REPO, 8, "[Bug]: z", ENV)
    fake.fail("POST", r"/issues/8/labels$", 422, times=1)  # a 4xx retrying cannot fix: parked at once
    await bot.send("issues", issue_payload(REPO, 8, issue.title, issue.body), delivery="park-me")
    counts = await bot.drain()
    assert counts["parked"] == 1
    [parked] = await bot.get("/api/deliveries?status=parked")
    assert parked["id"] == "park-me" and "422" in parked["last_error"] and parked["attempts"] == 1
    metrics = await (await bot.client.get("/metrics")).text()
    assert 'vllm_triage_deliveries{status="parked"} 1' in metrics
    response = await bot.send("issues", issue_payload(REPO, 8, issue.title, issue.body), delivery="park-me")
    assert (await response.json())["message"] == "requeued"
    counts = await bot.drain()
    assert counts["parked"] == 0 and issue.labels == ["bug"]


async def test_deleted_issue_and_pull_requests_are_left_alone(bot, fake):
    await bot.send("issues", issue_payload(REPO, 404, "[Bug]: gone", "x"))
    pr = fake.add_issue(REPO, 9, "[Bug]: a PR", ENV)
    pr.pull_request = True
    await bot.send("issues", issue_payload(REPO, 9, pr.title, pr.body))
    counts = await bot.drain()
    assert counts["done"] == 2 and fake.writes() == []


async def test_one_installation_token_for_many_deliveries_and_a_new_one_after_expiry(bot, fake):
    for n in range(10, 16):
        issue = fake.add_issue(REPO, n, "[Bug]: t", ENV)
        await bot.send("issues", issue_payload(REPO, n, issue.title, issue.body))
    await bot.drain()
    minted = [c for c in fake.calls if c.path.endswith("/access_tokens")]
    assert len(minted) == 1
    fake.tokens.clear()  # revoked / expired on GitHub's side
    issue = fake.add_issue(REPO, 16, "[Bug]: t", ENV)
    await bot.send("issues", issue_payload(REPO, 16, issue.title, issue.body))
    await bot.drain()
    assert issue.labels == ["bug"]
    assert len([c for c in fake.calls if c.path.endswith("/access_tokens")]) == 2


async def test_an_installation_without_issues_write_is_triaged_in_dry_run_and_shown_on_healthz(tmp_path, fake,
                                                                                                make_bot):
    fake.add_repo(REPO, LABELS)
    fake.add_repo("org/readonly", LABELS, installation_id=2)
    fake.installation_permissions[2] = {"issues": "read", "metadata": "read"}  # owner has not accepted the update
    fake.app_permissions = {"issues": "write", "metadata": "read"}  # contents: read dropped: config not readable
    bot = await make_bot(live_settings(tmp_path, fake))
    ok = fake.add_issue(REPO, 1, "[Bug]: ROCm OOM", f"body, {ENV}")
    ro = fake.add_issue("org/readonly", 1, "[Bug]: ROCm OOM", f"body, {ENV}")
    await bot.send("issues", issue_payload(REPO, 1, ok.title, ok.body))
    await bot.send("issues", issue_payload("org/readonly", 1, ro.title, ro.body, installation={"id": 2}))
    await bot.drain()
    assert ok.labels == ["bug", "rocm", "memory"] and len(fake.repos[REPO].bot_comments(1)) == 1
    assert ro.labels == [] and fake.repos["org/readonly"].bot_comments(1) == []
    assert not [c for c in fake.calls if c.method != "GET" and c.path.startswith("/repos/org/readonly")]
    [decision] = await bot.get("/api/decisions?repo=org/readonly")
    assert decision["mode"] == "dry-run" and decision["reason"].endswith("(installation lacks issues: write)")
    assert decision["plan"]["add_labels"] == ["bug", "rocm", "memory"]  # what it would have done
    health = await bot.get("/healthz")
    assert health["permissions_lacking"] == {"installations": {"2": ["issues: write (granted: read)"]}}


async def test_the_app_lacking_issues_write_is_reported_at_start(tmp_path, fake, make_bot, caplog):
    fake.add_repo(REPO, LABELS)
    fake.app_permissions = {"metadata": "read"}
    bot = await make_bot(live_settings(tmp_path, fake))
    await bot.drain()
    for _ in range(100):
        if "permissions_lacking" in await bot.get("/healthz"):
            break
        await asyncio.sleep(0.05)
    assert (await bot.get("/healthz"))["permissions_lacking"] == {"app": ["issues: write (granted: none)"]}
    assert "the GitHub App lacks issues: write (granted: none)" in caplog.text


async def test_an_edit_that_leaves_nothing_to_say_clears_the_comment(tmp_path, fake, make_bot):
    def triage_until_fixed(number, title, body, rules, similar=None, **context):
        result = fake_triage(number, title, body, rules, similar)
        if "collect_env" in body:  # the reporter filled in the environment: nothing left to ask or explain
            return Triage(number, result.report, replace(result.decision, comment=None))
        return result

    fake.add_repo(REPO, LABELS)
    bot = await make_bot(live_settings(tmp_path, fake), triage_fn=triage_until_fixed)
    issue = fake.add_issue(REPO, 8, "[Bug]: crash", "crash, no env")
    await bot.send("issues", issue_payload(REPO, 8, issue.title, issue.body))
    await bot.drain()
    [comment] = fake.repos[REPO].bot_comments(8)
    assert issue.labels == ["bug", "needs-info"] and "Triage of #8" in comment.body
    issue.body = f"crash, {ENV}"
    await bot.send("issues", issue_payload(REPO, 8, issue.title, issue.body, action="edited",
                                          changes={"body": {"from": "crash, no env"}}))
    await bot.drain()
    [comment] = fake.repos[REPO].bot_comments(8)
    assert comment.body == render_cleared() and issue.labels == ["bug"]
    await bot.send("issues", issue_payload(REPO, 8, issue.title, issue.body, action="edited",
                                          changes={"body": {"from": "crash, no env"}}))
    await bot.drain()
    assert [c.method for c in fake.writes() if "comments" in c.path] == ["POST", "PATCH"]  # cleared once
