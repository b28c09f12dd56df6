"""What the image installs is pinned: constraints.txt holds an exact version of every runtime dependency and of
the postgres extra (regenerate it with .ci/lock-constraints), and the Dockerfile installs from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            out[canonicalize_name(name)] = version
    return out


def test_every_runtime_dependency_is_pinned_in_constraints():
    needed = [Requirement(r) for r in PROJECT["project"]["dependencies"]
              + PROJECT["project"]["optional-dependencies"]["postgres"]]
    pinned = pins()
    assert all(re.fullmatch(r"[\w.+!]+", v) for v in pinned.values())
    missing = [str(r) for r in needed if canonicalize_name(r.name) not in pinned]
    assert missing == []
    wrong = [f"{r.name}=={pinned[canonicalize_name(r.name)]} is outside {r.specifier}" for r in needed
             if not r.specifier.contains(pinned[canonicalize_name(r.name)], prereleases=True)]
    assert wrong == []


def test_the_image_installs_the_pinned_versions_with_the_postgres_extra():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"pip install [^\n]*--constraint constraints\.txt '\.\[postgres\]'", dockerfile)
    assert "COPY pyproject.toml README.md constraints.txt" in dockerfile


def test_the_license_is_an_spdx_expression_and_the_backend_reads_it():
    assert PROJECT["project"]["license"] == "Apache-2.0"
    [backend] = [Requirement(r) for r in PROJECT["build-system"]["requires"]]
    assert backend.name == "setuptools" and not backend.specifier.contains("76.9")  # PEP 639 needs 77


def test_ci_apt_calls_wait_for_the_dpkg_lock():
    """Another apt job (unattended upgrades) may hold the dpkg lock on a fresh machine: CI waits instead of failing."""
    calls = [(script.name, line.strip()) for script in sorted((ROOT / ".ci").iterdir()) if script.is_file()
             for line in script.read_text(encoding="utf-8").splitlines()
             if re.search(r"\bapt-get\b", line) and not line.lstrip().startswith("#")]
    assert calls, "CI installs chromium and PostgreSQL with apt-get"
    assert [c for c in calls if "DPkg::Lock::Timeout=" not in c[1]] == []
