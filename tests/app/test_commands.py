"""Maintainer commands in comments: parsed line by line, never from quotes, code or HTML comments."""

from __future__ import annotations

from bot.app.handlers.comments import parse_commands


def test_commands():
    assert parse_commands("/triage") == [("triage", None)]
    assert parse_commands("thanks\n/not-duplicate #123\n/duplicate 45  ") == [("not-duplicate", 123),
                                                                             ("duplicate", 45)]
    assert parse_commands("/not-duplicate") == []  # needs an issue number
    assert parse_commands("> /triage\n```\n/triage\n```\n<!-- /triage -->\nplease /triage") == []
    assert parse_commands("/triaged\n/triage now") == []
    assert parse_commands(None) == []


def test_huge_comment_is_bounded():
    body = ("x" * 10_000 + "\n") * 500 + "/triage"
    assert parse_commands(body) == []  # past the first 200 lines
    assert parse_commands("<!--" * 10_000) == []
