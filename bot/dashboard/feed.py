"""Fill a running server from an export: every issue is delivered as a signed `issues.opened` webhook (and
`issues.closed` after it for closed issues), oldest first, then we wait until the worker has processed them all.

    python -m bot.dashboard.feed EXPORT --url http://127.0.0.1:8080 [--repo OWNER/NAME] [--no-wait]

The secret comes from GITHUB_WEBHOOK_SECRET (unset: unsigned, for a server started with --insecure-no-secret).
Used by the dashboard's browser tests and for a local demo of the dashboard in dry-run mode.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterable
from typing import Any

from bot.export import IssueRecord
from bot.replay import load_sorted


def issue_payload(issue: IssueRecord, repo: str, action: str) -> dict[str, Any]:
    state = "closed" if action == "closed" else "open"
    owner = repo.split("/", 1)[0]
    return {
        "action": action,
        "issue": {
            "number": issue.number, "title": issue.title, "body": issue.body, "state": state,
            "labels": [{"name": name} for name in issue.labels], "created_at": issue.created_at or None,
            "html_url": issue.url,   # none for made-up issues: never a link to someone else's issue
            "user": {"login": issue.author or "reporter", "type": "User"},
        },
        "repository": {"full_name": repo, "name": repo.split("/", 1)[-1], "owner": {"login": owner}},
        "sender": {"login": issue.author or "reporter", "type": "User"},
    }


def deliver(url: str, event: str, payload: dict[str, Any], secret: str | None, timeout: float = 30) -> int:
    body = json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event,
               "X-GitHub-Delivery": str(uuid.uuid4()), "User-Agent": "vllm-triage-feed"}
    if secret:
        headers["X-Hub-Signature-256"] = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    req = urllib.request.Request(url.rstrip("/") + "/webhook", data=body, headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - a URL the operator gave
        return resp.status


def pending(url: str) -> int:
    with urllib.request.urlopen(url.rstrip("/") + "/healthz", timeout=10) as resp:  # noqa: S310
        counts = json.loads(resp.read())["deliveries"]
    return int(counts.get("queued", 0)) + int(counts.get("running", 0))


def feed(url: str, issues: Iterable[IssueRecord], repo: str, secret: str | None, *, wait: float = 120.0) -> int:
    sent = 0
    for issue in issues:
        deliver(url, "issues", issue_payload(issue, repo, "opened"), secret)
        sent += 1
        if issue.state == "closed":
            deliver(url, "issues", issue_payload(issue, repo, "closed"), secret)
            sent += 1
    deadline = time.monotonic() + wait
    while wait and pending(url):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{pending(url)} deliveries still pending after {wait:.0f}s")
        time.sleep(0.2)
    return sent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bot.dashboard.feed", description=__doc__.split("\n\n")[0])
    p.add_argument("export")
    p.add_argument("--url", default="http://127.0.0.1:8080")
    p.add_argument("--repo", default="vllm-project/vllm")
    p.add_argument("--no-wait", action="store_true")
    args = p.parse_args(argv)
    problems: list = []
    issues = load_sorted(args.export, problems)
    for problem in problems:
        print(f"{args.export}: {problem} (skipped)", file=sys.stderr)
    n = feed(args.url, issues, args.repo, os.environ.get("GITHUB_WEBHOOK_SECRET") or None,
             wait=0 if args.no_wait else 300)
    print(f"delivered {n} webhooks for {len(issues)} issues to {args.url}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
