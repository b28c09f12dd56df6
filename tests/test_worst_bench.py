"""The worst-case bench runs over every rule and label pattern (its timings are the bench's business, not a test's)."""

from bench import worst_bench
from bot import labels
from bot.rules import load_rules


def test_every_regex_reaches_every_rule_and_label_pattern():
    rules = load_rules()
    result = worst_bench.every_regex(rules, 2_000)
    tables = (labels.WORDS, labels.FAILURE, labels._MODEL, labels._FRAMES, labels._EXC_TYPES)
    assert result["label_patterns"] == sum(len(t) for t in tables)
    assert result["rule_patterns"] == sum(len(list(r.match.patterns())) for r in rules.rules)
    assert result["worst_rule"] in {r.id for r in rules.rules}
