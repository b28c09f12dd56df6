"""app.yml: the App manifest registers the events and the narrow permissions the bot needs."""

from pathlib import Path

import yaml


def test_manifest():
    manifest = yaml.safe_load((Path(__file__).resolve().parents[2] / "app.yml").read_text())
    assert manifest["public"] is False and manifest["name"] and manifest["url"]
    assert manifest["default_events"] == ["issues", "issue_comment"]
    assert manifest["default_permissions"] == {"issues": "write", "metadata": "read", "contents": "read"}
    assert manifest["hook_attributes"]["url"].endswith("/webhook")
