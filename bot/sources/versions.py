"""Which indexed release a report is about: its version mapped to a release, or the date it was filed."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from bot.sources.model import Release


def base_version(text: str) -> Version | None:
    """The release a version string stands for: dev, rc and +local builds map to their base release
    (`0.16.0rc1.dev136+gdad2d6a59` -> 0.16.0); a post-release stays itself."""
    text = text.strip().lstrip("vV")
    try:
        v = Version(text)
    except InvalidVersion:
        return None
    if v.is_devrelease or v.is_prerelease:
        return Version(v.base_version)
    if v.local:
        return Version(v.public)
    return v


def release_for(releases: Sequence[Release], version: str | None = None,
                created_at: str | None = None) -> Release | None:
    """The release a report is about. `releases` oldest first.

    A version maps to that release, else the newest indexed one before it; without a usable version, the
    newest release uploaded before the report was filed (`created_at`, ISO 8601); without either, None.
    """
    if not releases:
        return None
    if version:
        wanted = base_version(version)
        if wanted is not None:
            best = None
            for release in releases:
                if release.key <= wanted:
                    best = release
            if best is not None:
                return best
    if created_at:
        day = created_at[:19]
        best = None
        for release in releases:
            if release.uploaded_at and release.uploaded_at[:19] <= day:
                best = release
        return best
    return None
