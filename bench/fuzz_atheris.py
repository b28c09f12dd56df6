"""Coverage-guided fuzzing of the whole core with atheris (libFuzzer), for long runs outside CI.

    .venv/bin/pip install -e '.[fuzz]'
    .venv/bin/python bench/fuzz_atheris.py -runs=100000 [-max_len=65536] [CORPUS_DIR]

Each input is split into a title and a body, run through parse -> rules -> labels -> duplicate index (search,
then add: the index grows over the run) -> comment, and the comment is checked: one marker at the start, no
live @mention, no raw HTML tag besides the template's own. The signed-webhook reader (`sansio.Event.from_http`
plus the payload readers the server applies before recording a delivery) gets the same bytes as a body.
Any exception is a crash that libFuzzer reports with the input that caused it. The seed corpus is a handful
of synthetic vLLM reports (bench/corpus.py), so mutations start from realistic shapes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports(include=["bot"]):  # our code; instrumenting jinja2/packaging costs 2-3x
    from gidgethub import BadRequest, ValidationFailure, sansio

    from bot.app.handlers import installation_of, issue_number_of, repo_of
    from bot.comment import MARKER
    from bot.dupes import DuplicateIndex
    from bot.labels import topic_labels
    from bot.report import parse
    from bot.rules import load_rules
    from bot.triage import triage

RULES = load_rules()
INDEX = DuplicateIndex()
SECRET = b"fuzz"
OWN_TAGS = ("<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>")
_TAG = re.compile(r"<[A-Za-z/!?]")
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]")
_count = 0


def check_comment(comment: str | None) -> None:
    if comment is None:
        return
    if not comment.startswith(MARKER) or comment.count(MARKER) != 1:
        raise AssertionError("marker")
    rest = comment.replace(MARKER, "", 1)
    for tag in OWN_TAGS:
        rest = rest.replace(tag, "")
    if _TAG.search(rest):
        raise AssertionError(f"raw HTML in comment: {_TAG.search(rest).group(0)!r}")
    if _MENTION.search(comment):
        raise AssertionError("live mention in comment")


def webhook(data: bytes) -> None:
    headers = {"content-type": "application/json", "x-github-event": "issues", "x-github-delivery": "d",
               "x-hub-signature-256": "sha256=" + hmac.new(SECRET, data, hashlib.sha256).hexdigest()}
    try:
        event = sansio.Event.from_http(headers, data, secret=SECRET.decode())
    except (ValidationFailure, BadRequest, KeyError, ValueError):
        return
    payload = event.data if isinstance(event.data, dict) else {}
    repo_of(payload), installation_of(payload), issue_number_of(event.event, payload)


def one(data: bytes) -> None:
    global _count
    fdp = atheris.FuzzedDataProvider(data)
    title = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 300))
    body = fdp.ConsumeUnicodeNoSurrogates(len(data))
    _count += 1
    result = triage(_count, title, body, RULES, INDEX)
    topic_labels(result.report, result.decision.findings)
    check_comment(result.decision.comment)
    INDEX.add(_count, result.report, result.decision.findings)
    webhook(data)
    if _count % 5000 == 0:  # the index would otherwise grow without bound over a long run
        INDEX.__init__()
    parse(None, body[: len(body) // 2])


def seed_corpus() -> str:
    from bench.corpus import Generator

    folder = Path(tempfile.mkdtemp(prefix="fuzz-seeds-"))
    for issue in Generator(3).issues(40, failure_share=0.7):
        text = issue["title"] + "\n" + issue["body"]
        (folder / f"seed-{issue['number']}").write_bytes(bytes([len(issue["title"]) % 256]) + text.encode())
    return str(folder)


def main() -> None:
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        argv.append(seed_corpus())
    atheris.Setup(argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
