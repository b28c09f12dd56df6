"""The runtime/configuration rule pack on whole, report-shaped issues: the right rule wins, look-alikes stay quiet.

Each fixture under fixtures/runtime/ starts with HTML comments naming the title, the rules that must fire
(`expect`), the rules that must not (`not`) and text the rendered workaround must contain (`workaround-has`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.report import parse
from bot.rules import load_rules

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "runtime").glob("*.md"))
RULES = load_rules()


def _split(text: str) -> tuple[dict[str, str], str]:
    """The header comments as a mapping, and the issue body below them."""
    meta: dict[str, str] = {}
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("<!-- "):
        key, _, value = lines.pop(0).strip()[5:].removesuffix(" -->").partition(":")
        meta[key.strip()] = value.strip()
    return meta, "".join(lines)


def _ids(value: str) -> set[str]:
    return {v.strip() for v in value.split(",") if v.strip()}


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture(path: Path) -> None:
    meta, body = _split(path.read_text(encoding="utf-8"))
    findings = RULES.evaluate(parse(meta.get("title", ""), body))
    fired = {f.rule for f in findings}
    expected = _ids(meta.get("expect", ""))
    assert expected <= fired, f"missing {expected - fired}; fired {fired}"
    assert not (_ids(meta.get("not", "")) & fired), f"look-alike fired: {fired}"
    if not expected:
        assert not fired, f"expected no diagnosis, got {fired}"
    if "workaround-has" in meta:
        workarounds = " ".join(f.workaround for f in findings if f.rule in expected)
        assert meta["workaround-has"] in workarounds, workarounds


def test_fixtures_present() -> None:
    assert len(FIXTURES) >= 10
