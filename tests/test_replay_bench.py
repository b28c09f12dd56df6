"""The replay bench's new issues can come from an issue export (real reports) instead of the synthetic corpus."""

import pytest

from bench import replay_bench
from bench.__main__ import main as bench_main
from bot.paths import REPO_ROOT

SAMPLE = str(REPO_ROOT / "samples" / "issues.jsonl")


def test_export_sets_are_disjoint_renumbered_and_span_the_export():
    issues = replay_bench.export_records(SAMPLE)
    sets = replay_bench.export_sets(issues, 4, 1_000)
    numbers = [i.number for s in sets for i in s]
    assert len(numbers) == len(set(numbers)) == 12
    assert min(numbers) >= 1_000
    titles = {i.title for i in issues}
    assert all(i.title in titles for s in sets for i in s)
    assert [i.title for i in sets[0]] == [i.title for i in issues[0::3][:4]]


def test_the_bench_replays_the_export_over_the_synthetic_history():
    result = replay_bench.run([40], 4, 1, log=lambda m: None, export=SAMPLE)
    row = result["sizes"][40]
    assert row["history"] == 40
    assert row["replay_1"]["issues"] == row["replay_n"]["issues"] == 4
    assert row["latency"]["total"]["cpu_mean_ms"] > 0


def test_an_unreadable_export_is_one_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench_main(["--only", "replay", "--export", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.md")])
    assert exit_.value.code == 2
    assert "not a readable file" in capsys.readouterr().err


def test_every_rule_template_is_compiled_before_the_measurements():
    from bot.rules import load_rules

    rules = load_rules()
    assert replay_bench.templates_compiled(rules) >= 2 * len(rules.rules)
    assert all(rule.explanation._template is not None and rule.workaround._template is not None
               for rule in rules.rules)
