"""Every relative link in README.md and docs/*.md resolves: the file exists, and a #fragment names one of its
headings (GitHub's anchors); the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    out = set()
    for heading in re.findall(r"^#+\s+(.+?)\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        out.add(slug)
    return out


def links(path: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_relative_link_resolves(document):
    broken = []
    for target in links(document):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, fragment = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{target}: no heading #{fragment} in {path.name}")
    assert broken == []


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_bytes()) < 12_000


def test_the_check_sees_links_and_anchors():
    readme = ROOT / "README.md"
    assert "docs/architecture.md" in links(readme)
    assert "per-repository-config-githubvllm-triageyml" in anchors(ROOT / "docs" / "app.md")
