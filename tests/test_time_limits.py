"""Tests whose only check is that they finish (hostile input against regexes and parsers) carry a time limit
(pytest-timeout), so a regression fails the test instead of hanging the suite. The plugin's signal method
interrupts even a regex that backtracks: CPython's regex engine checks for signals while it matches."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
LIMITED = [  # (file, test): the tests whose only check is that they end
    ("test_labels.py", "test_patterns_stay_linear_on_hostile_text"),
    ("test_wording.py", "test_correction_is_linear_on_hostile_text"),
    ("report/test_sections.py", "test_hostile_bodies"),
    ("dupes/test_dupes_normalise.py", "test_long_and_hostile_lines_are_bounded"),
]


@pytest.mark.parametrize(("path", "name"), LIMITED)
def test_tests_that_only_have_to_finish_have_a_time_limit(path, name):
    source = (ROOT / path).read_text(encoding="utf-8")
    head = source.split(f"def {name}(", 1)[0].rsplit("\n\n\n", 1)[-1]  # the decorators above the function
    assert "@pytest.mark.timeout(" in head, f"{path}::{name} has no time limit"


def test_the_time_limit_stops_a_hanging_regex(tmp_path, pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    (tmp_path / "test_hang.py").write_text(textwrap.dedent("""
        import re
        import pytest

        @pytest.mark.timeout(1)
        def test_backtracks():
            re.match(r"(a+)+$", "a" * 64 + "b")
    """), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                           "-c", "/dev/null", str(tmp_path / "test_hang.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "Timeout" in done.stdout and "1 failed" in done.stdout


def test_the_summary_line_shows_with_the_documented_command(tmp_path):
    """`pytest -q` (README) prints the pass/fail summary: the project's config adds no second -q."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                           str(ROOT.parent / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "1 passed" in done.stdout
