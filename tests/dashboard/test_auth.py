"""Tokens, signed sessions and CSRF tokens of the dashboard."""

from __future__ import annotations

import pytest

from bot.app.settings import SettingsError
from bot.dashboard.auth import Session, csrf_token, decode_session, encode_session, new_session
from bot.dashboard.settings import DashboardSettings, dashboard_settings, parse_tokens, token_digest


def test_tokens_plain_and_hashed():
    digest = token_digest("bob-secret-token-123456")
    tokens = parse_tokens(f"alice:alice-token-0123456789, bob:sha256:{digest.upper()}")
    s = DashboardSettings(tokens=tokens)
    assert s.maintainer("alice-token-0123456789") == "alice"
    assert s.maintainer("bob-secret-token-123456") == "bob"
    assert s.maintainer("bob") is None and s.maintainer("") is None


@pytest.mark.parametrize("raw", ["alice", "alice:short", "bad name:abcdefghijklmnopq", "bob:sha256:1234",
                                 ":abcdefghijklmnopqrst"])
def test_bad_token_entries_are_refused(raw):
    with pytest.raises(SettingsError):
        parse_tokens(raw)


def test_settings_from_env():
    s = dashboard_settings({"DASHBOARD_PUBLIC": "1", "DASHBOARD_SECRET": "x" * 20, "DASHBOARD_SESSION_HOURS": "2",
                            "DASHBOARD_COOKIE_SECURE": "yes"})
    assert s.public and s.cookie_secure and s.session_seconds == 7200 and not s.tokens
    assert s.secret == dashboard_settings({"DASHBOARD_SECRET": "x" * 20}).secret   # shared by replicas
    assert dashboard_settings({}).secret != dashboard_settings({}).secret          # random per process
    with pytest.raises(SettingsError):
        dashboard_settings({"DASHBOARD_PUBLIC": "maybe"})
    with pytest.raises(SettingsError):
        dashboard_settings({"DASHBOARD_SECRET": "short"})


def test_session_cookie_is_signed_and_expires():
    s = DashboardSettings()
    session = new_session(s, "alice")
    value = encode_session(s.secret, session)
    assert decode_session(s.secret, value) == session
    data, sig = value.split(".")
    forged = encode_session(b"other secret", Session(session.sid, "mallory", session.exp))
    assert decode_session(s.secret, forged) is None
    assert decode_session(s.secret, data + "." + "0" * len(sig)) is None
    assert decode_session(s.secret, value, now=session.exp + 1) is None
    for junk in ("", "abc", "a.b.c", "x" * 2000):
        assert decode_session(s.secret, junk) is None


def test_csrf_token_is_tied_to_the_session():
    s = DashboardSettings()
    a, b = new_session(s), new_session(s)
    assert csrf_token(s, a) != csrf_token(s, b)
    assert csrf_token(s, a) == csrf_token(s, Session(a.sid, "alice", a.exp))
    assert csrf_token(DashboardSettings(), a) != csrf_token(s, a)
