"""The error catalog: one entry per rule, in the shape of an error-explainer page."""

from __future__ import annotations

import pytest

from bot.dashboard.catalog import Catalog, build_entry, condition_tree, error_conditions, reference
from bot.report import parse
from bot.rules import DEFAULT_RULES_DIR, load_rules
from bot.rules.conditions import ExceptionCond

RULE_FILES = sorted(p.stem for p in DEFAULT_RULES_DIR.glob("*.y*ml"))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog(load_rules())


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_every_rule_has_a_complete_entry(catalog):
    assert catalog.ids() and len(catalog.ids()) == len(RULE_FILES)
    for rid in catalog.ids():
        e = catalog.entry(rid)
        assert e.meaning.strip() and e.solutions.strip(), rid
        assert e.example_fix.strip(), rid        # the workaround computed for the example report
        assert e.trigger["op"] or e.trigger["text"], rid
        assert rid not in {r for r, _ in e.related}
    with_related = [rid for rid in catalog.ids() if catalog.entry(rid).related]
    assert len(with_related) >= 0.95 * len(catalog.ids())


@pytest.mark.parametrize("rule_id", RULE_FILES)
def test_error_message_is_an_error_the_rule_matched_never_a_title(catalog, rule_id):
    rule, e = catalog.rules.get(rule_id), catalog.entry(rule_id)
    bodies = [_squash(x.body) for x in rule.examples_match]
    if e.message_from == "example":
        for line in e.message.splitlines():
            piece = _squash(line.strip("…"))
            quoted = piece.split(": ", 1)[-1]  # an exception quoted by its repr, Type("message"), shows its message
            assert any(piece in body or quoted in body for body in bodies), \
                f"{rule_id}: {line!r} is in no example's body"
    if any(isinstance(c, ExceptionCond) for c in error_conditions(rule.match)):
        assert e.message_from in ("example", "pattern"), rule_id   # an exception rule always names its error
    for x in rule.examples_match:
        title = _squash(parse(x.title, "").title_text)
        in_a_body = e.message_from == "example" and any(_squash(e.message or "") in body for body in bodies)
        assert not title or in_a_body or _squash(e.message or "") != title, \
            f"{rule_id}: the message is an example's title"  # (a title may quote the body's error exactly)


@pytest.mark.parametrize("rule_id", RULE_FILES)
def test_example_fix_shows_an_example_with_a_command(catalog, rule_id):
    rule, e = catalog.rules.get(rule_id), catalog.entry(rule_id)
    commands = [r.commands[0].raw for r in (parse(x.title, x.body) for x in rule.examples_match) if r.commands]
    if commands:
        assert e.example_command in commands, f"{rule_id}: an example has a command, the fix shows none"
    else:
        assert e.example_command is None
    assert e.example_fix.strip()


def test_pp_model_not_supported_shows_the_supports_pp_error(catalog):
    e = catalog.entry("pp-model-not-supported")
    assert e.message.startswith("NotImplementedError: Pipeline parallelism is not supported for this model")
    assert "SupportsPP" in e.message and e.message_from == "example"
    assert "--pipeline-parallel-size" in e.example_command


def test_a_site_index_gives_the_message_when_it_knows_the_site():
    class Sites:   # the seam the raise-site index plugs into: rule + the example's error -> the source's message
        def __init__(self) -> None:
            self.asked: list[tuple[str, str | None]] = []

        def message(self, rule, error):
            self.asked.append((rule.id, error))
            return "Pipeline parallelism is not supported for this model. Supported models implement the " \
                   "`SupportsPP` interface." if rule.raised_in and "model.py" in rule.raised_in else None

        def links(self, rule, errors):
            return ()

    sites = Sites()
    catalog = Catalog(load_rules(), sites)
    pp = catalog.entry("pp-model-not-supported")
    assert pp.message_from == "site" and pp.message.startswith("Pipeline parallelism is not supported")
    assert sites.asked[-1][1].startswith("NotImplementedError: Pipeline parallelism is not supported")
    other = next(rid for rid in catalog.ids() if "model.py" not in (catalog.rules.get(rid).raised_in or "")
                 and catalog.entry(rid).message_from != "none")
    assert catalog.entry(other).message_from in ("example", "pattern")


def test_pp_entry_reads_like_an_error_explainer(catalog):
    e = catalog.entry("pp-with-draft-model-without-pp")
    assert "Pipeline parallelism is not supported" in e.message
    assert e.raised_in.startswith("vllm/config/")
    assert e.source_url == "https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py"
    assert e.example_command and "--pipeline-parallel-size" in e.example_command
    assert "--tensor-parallel-size" in e.example_fix
    # the generic texts do not invent flag values for a report that gave none
    assert "--speculative-config '" not in e.solutions
    j = e.as_json([{"number": 1}])
    assert j["example_fix"]["before"] == e.example_command and j["matched_issues"] == [{"number": 1}]
    assert {"message", "meaning", "raised_in", "solutions", "when", "related", "affects", "fixed_in"} <= set(j)


def test_versions_and_supersedes_are_shown():
    rules = load_rules()
    versioned = [r for r in rules.rules if r.fixed_in is not None or r.affects is not None]
    if versioned:
        e = build_entry(versioned[0], rules)
        assert e.fixed_in or e.affects
    superseding = next(r for r in rules.rules if r.supersedes)
    e = build_entry(superseding, rules)
    assert set(e.supersedes) == set(superseding.supersedes)
    assert e.related[0][0] in superseding.supersedes
    other = build_entry(rules.get(superseding.supersedes[0]), rules)
    assert superseding.id in other.superseded_by


def test_condition_tree_and_references():
    rules = load_rules()
    tree = condition_tree(rules.get("pp-with-draft-model-without-pp").match)
    assert tree["op"] == "all of" and any("NotImplementedError" in (c["text"] or "") for c in tree["children"])
    assert reference("vllm-project/vllm#36643").url == "https://github.com/vllm-project/vllm/issues/36643"
    assert reference("https://docs.vllm.ai/en/latest/").url == "https://docs.vllm.ai/en/latest/"
    assert reference("javascript:alert(1)").url is None
    assert reference("see the docs").url is None
