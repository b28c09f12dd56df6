"""app.yml: the App manifest registers the events and the narrow permissions the bot needs."""

from pathlib import Path

import yaml


def test_manifest():
    manifest = yaml.safe_load((Path(__file__).resolve().parents[2] / "app.yml").read_text())
    assert manifest["public"] is False and manifest["name"] and manifest["url"]
    assert manifest["default_events"] == ["issues", "issue_comment"]
    assert manifest["default_permissions"] == {"issues": "write", "metadata": "read", "contents": "read"}
    assert manifest["hook_attributes"]["url"].endswith("/webhook")


def test_the_permissions_the_bot_checks_are_the_ones_the_manifest_asks_for():
    from bot.app.permissions import OPTIONAL, REQUIRED, can_act, lacking

    manifest = yaml.safe_load((Path(__file__).resolve().parents[2] / "app.yml").read_text())
    assert manifest["default_permissions"] == {**REQUIRED, **OPTIONAL}
    assert lacking(manifest["default_permissions"]) == [] and lacking(manifest["default_permissions"], OPTIONAL) == []
    assert lacking({"issues": "admin", "metadata": "write"}) == []
    assert lacking({"issues": "read", "metadata": "read"}) == ["issues: write (granted: read)"]
    assert lacking({"issues": "bogus"}) == ["issues: write (granted: bogus)", "metadata: read (granted: none)"]
    assert can_act(None) and can_act({"issues": "write"}) and not can_act({"issues": "read"}) and not can_act({})
