"""`.github/vllm-triage.yml`: strict validation with line numbers; errors make the repository cautious."""

from __future__ import annotations

from bot.app.repo_config import DEFAULT, parse_config


def test_defaults_and_a_full_valid_file():
    assert DEFAULT.mode == "live" and DEFAULT.enabled("comment") and DEFAULT.allow is None
    c = parse_config("mode: shadow\nfeatures:\n  duplicates: false\nlabels:\n  map:\n    rocm: 'platform: rocm'\n"
                     "  allow: ['platform: rocm']\nthresholds:\n  diagnosis: 0.6\n  duplicate: 0.8\n")
    assert c.errors == () and c.mode == "shadow" and not c.enabled("duplicates") and c.enabled("labels")
    assert c.repo_label("rocm") == "platform: rocm" and c.repo_label("bug") == "bug"
    assert (c.diagnosis_threshold, c.duplicate_threshold, c.allow) == (0.6, 0.8, ("platform: rocm",))
    assert parse_config("").errors == () and parse_config("# nothing\n").mode == "live"


def test_unknown_keys_and_wrong_types_are_reported_with_line_numbers():
    c = parse_config("mode: loud\nfeatures:\n  labels: 'yes'\n  comments: true\nlabels:\n  allow: bug\n"
                     "thresholds:\n  diagnosis: high\nextra: 1\n")
    assert list(c.errors) == [
        ".github/vllm-triage.yml:1: mode: expected live, shadow or dry-run, got 'loud'",
        ".github/vllm-triage.yml:3: features.labels: expected a boolean, got 'yes'",
        ".github/vllm-triage.yml:4: features: unknown key 'comments' "
        "(expected one of: labels, comment, duplicates, needs_info, commands)",
        ".github/vllm-triage.yml:6: labels.allow: expected a list of label names",
        ".github/vllm-triage.yml:8: thresholds.diagnosis: expected a number, got 'high'",
        ".github/vllm-triage.yml:9: top level: unknown key 'extra' (expected one of: mode, features, labels, "
        "thresholds)",
    ]
    assert c.mode == "shadow"


def test_yaml_errors_duplicates_and_non_mappings():
    c = parse_config("mode: live\n  bad: [\n")
    assert len(c.errors) == 1 and c.errors[0].startswith(".github/vllm-triage.yml:2: invalid YAML")
    assert c.mode == "shadow"
    c = parse_config("mode: live\nmode: shadow\n")
    assert c.errors == (".github/vllm-triage.yml:2: top level: duplicate key 'mode'",)
    assert parse_config("- a\n- b\n").errors == (".github/vllm-triage.yml:1: top level: expected a mapping",)
    assert parse_config("labels:\n  map:\n    bug: [a]\n").errors == (
        ".github/vllm-triage.yml:3: labels.map.bug: expected a string or null",)
    assert parse_config("features:\n  labels: 1\n").errors == (
        ".github/vllm-triage.yml:2: features.labels: expected a boolean, got 1",)
