"""The webhook endpoint over HTTP, fed GitHub's own example payloads (npm @octokit/webhooks-examples)."""

from __future__ import annotations

import json
import subprocess

import pytest

from bot.app.settings import SettingsError

from .conftest import NODE_DIR, SECRET, comment_payload, headers, issue_payload, make_settings


async def test_every_issue_example_is_acknowledged_and_processed(tmp_path, make_bot, examples):
    bot = await make_bot(make_settings(tmp_path))
    sent = 0
    for event in ("issues", "issue_comment", "installation", "installation_repositories", "label"):
        for i, payload in enumerate(examples[event]):
            response = await bot.send(event, payload, delivery=f"{event}-{i}")
            assert response.status == 202, (event, i, await response.text())
            assert (await response.json())["message"] == "queued"
            sent += 1
    counts = await bot.drain()
    assert counts["done"] == sent and counts["parked"] == 0
    decisions = await bot.get("/api/decisions?limit=1000")
    triaged = [p for p in examples["issues"] if p["action"] in ("opened", "reopened")
               and p["issue"]["state"] == "open"]
    triaged += [p for p in examples["issues"] if p["action"] == "edited" and p["issue"]["state"] == "open"
                and ({"title", "body"} & set(p.get("changes") or {}))]
    assert len(decisions) == len(triaged) > 0
    assert all(d["mode"] == "dry-run" and not d["applied"] for d in decisions)
    installations = await bot.get("/api/installations")
    assert {i["id"] for i in installations} >= {p["installation"]["id"] for p in examples["installation"]}


async def test_ping_signature_content_type_size_and_headers(tmp_path, make_bot, examples):
    bot = await make_bot(make_settings(tmp_path, max_body_bytes=50_000))
    assert (await bot.send("ping", examples["ping"][0])).status == 200
    body = json.dumps(examples["issues"][0]).encode()
    bad = headers("issues", body)
    bad["X-Hub-Signature-256"] = "sha256=" + "0" * 64
    response = await bot.client.post("/webhook", data=body, headers=bad)
    assert response.status == 401
    assert (await bot.send("issues", body, secret=None)).status == 401  # no signature at all
    assert (await bot.send("issues", body, extra={"Content-Type": "text/plain"})).status == 415
    big = b'{"a": "' + b"x" * 60_000 + b'"}'
    assert (await bot.send("issues", big)).status == 413
    no_delivery = headers("issues", body)
    del no_delivery["X-GitHub-Delivery"]
    assert (await bot.client.post("/webhook", data=body, headers=no_delivery)).status == 400
    assert (await bot.send("issues", b"{not json")).status == 415  # gidgethub: body is not JSON
    assert (await bot.get("/healthz"))["deliveries"] == {"queued": 0, "running": 0, "done": 0, "parked": 0}
    metrics = await (await bot.client.get("/metrics")).text()
    assert 'vllm_triage_webhooks_total{event="issues",outcome="bad-signature"} 2' in metrics
    assert "vllm_triage_webhook_seconds_bucket" in metrics


async def test_body_over_25_mb_is_refused(tmp_path, make_bot):
    bot = await make_bot(make_settings(tmp_path))
    big = b'{"a": "' + b"x" * (25 * 1024 * 1024) + b'"}'
    assert (await bot.send("issues", big)).status == 413


async def test_redelivery_of_a_done_delivery_does_not_act_twice(tmp_path, make_bot):
    bot = await make_bot(make_settings(tmp_path))
    payload = issue_payload("o/r", 7, "[Bug]: CUDA OOM", "it crashes")
    assert (await (await bot.send("issues", payload, delivery="d-1")).json())["message"] == "queued"
    await bot.drain()
    again = await bot.send("issues", payload, delivery="d-1")
    assert again.status == 202 and (await again.json())["message"] == "duplicate"
    await bot.drain()
    assert len(await bot.get("/api/decisions")) == 1


async def test_signature_made_by_octokit_webhooks_methods_in_node(tmp_path, make_bot, examples, node):
    bot = await make_bot(make_settings(tmp_path))
    body = json.dumps(examples["issues"][0])
    script = ("import {sign} from '@octokit/webhooks-methods';"
              "let data='';process.stdin.on('data',c=>data+=c);"
              "process.stdin.on('end',async()=>{process.stdout.write(await sign(process.argv[1],data));});")
    signature = subprocess.run([node, "--input-type=module", "-e", script, SECRET], input=body, text=True,
                               capture_output=True, cwd=NODE_DIR, check=True, timeout=60).stdout.strip()
    assert signature.startswith("sha256=")
    h = headers("issues", body.encode(), secret=None)
    h["X-Hub-Signature-256"] = signature
    response = await bot.client.post("/webhook", data=body.encode(), headers=h)
    assert response.status == 202, await response.text()
    h["X-Hub-Signature-256"] = signature[:-2] + ("00" if not signature.endswith("00") else "11")
    h["X-GitHub-Delivery"] = "other"
    assert (await bot.client.post("/webhook", data=body.encode(), headers=h)).status == 401


async def test_comments_by_bots_and_non_maintainers_are_ignored(tmp_path, make_bot):
    bot = await make_bot(make_settings(tmp_path))
    for payload in (comment_payload("o/r", 3, "/triage", login="vllm-triage[bot]", user_type="Bot"),
                    comment_payload("o/r", 3, "/triage", login="someone", association="NONE"),
                    comment_payload("o/r", 3, "> /triage\nquoting the bot"),
                    comment_payload("o/r", 3, "```\n/triage\n```")):
        assert (await bot.send("issue_comment", payload)).status == 202
    await bot.drain()
    assert await bot.get("/api/decisions") == []
    assert (await bot.send("issue_comment", comment_payload("o/r", 3, "thanks!\n/triage"))).status == 202
    await bot.drain()
    [decision] = await bot.get("/api/decisions")
    assert decision["reason"] == "command"


@pytest.mark.parametrize(("env", "message"), [
    ({"VLLM_TRIAGE_MODE": "live", "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": "k"}, "GITHUB_WEBHOOK_SECRET"),
    ({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": "k"}, "GITHUB_WEBHOOK_SECRET"),
    ({}, "--insecure-no-secret"),
    ({"VLLM_TRIAGE_MODE": "live", "GITHUB_WEBHOOK_SECRET": "s"}, "GITHUB_APP_ID"),
    ({"GITHUB_APP_ID": "1", "GITHUB_WEBHOOK_SECRET": "s"}, "both"),
])
def test_refuses_to_start_unverified_or_without_credentials(env, message):
    from bot.app.settings import from_env

    with pytest.raises(SettingsError, match=message):
        from_env(env).check()


def test_insecure_no_secret_only_on_loopback():
    from bot.app.settings import from_env

    from_env({}, insecure_no_secret=True).check()
    with pytest.raises(SettingsError, match="loopback"):
        from_env({"HOST": "0.0.0.0"}, insecure_no_secret=True).check()
    assert from_env({}).mode == "dry-run"
    assert from_env({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": "k", "GITHUB_WEBHOOK_SECRET": "s"}).mode == "live"


async def test_metrics_label_only_known_event_names_and_count_refusals(tmp_path, make_bot, examples):
    """An unauthenticated client choosing X-GitHub-Event cannot make a series per value it sends."""
    bot = await make_bot(make_settings(tmp_path))
    body = json.dumps(examples["issues"][0]).encode()
    for i in range(30):
        assert (await bot.send(f"made-up-{i}", body, secret=None)).status == 401
    assert (await bot.send("issues", body, secret=None)).status == 401
    assert (await bot.send("push", {"ref": "x"})).status == 202
    text = await (await bot.client.get("/metrics")).text()
    assert "made-up" not in text
    assert 'vllm_triage_webhooks_total{event="other",outcome="bad-signature"} 30' in text
    assert 'vllm_triage_webhooks_total{event="issues",outcome="bad-signature"} 1' in text
    assert 'vllm_triage_webhooks_total{event="other",outcome="queued"} 1' in text
    assert "vllm_triage_webhook_seconds_count 32" in text
    assert '# TYPE vllm_triage_deliveries gauge' in text and 'vllm_triage_deliveries{status="queued"}' in text
