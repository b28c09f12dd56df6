"""The raise site of a report's root cause in triage: located before the rules run, the exception type inferred when
the report shows only the message, kept out of the way by wrapper errors, shown by explain and the replay JSON."""

import json

import pytest
from releases import line_of
from sources.small import small_index

from bot.explain import explain
from bot.report import parse
from bot.rules import RuleSet, load_rule_file
from bot.sources.locate import is_wrapper, locate
from bot.triage import analyse, triage

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")
ENV_2 = "### Your current environment\n\n```text\nvLLM Version                 : 2.0\n```\n\n"
ENV_1 = ENV_2.replace(": 2.0", ": 1.0")
CONFIG_2 = "vllm/config/model.py"
LINE_2 = line_of("2.0", CONFIG_2, "Pipeline")

RULE = """\
id: pp-unsupported-model
title: Pipeline parallelism on a model without SupportsPP
labels: [pipeline-parallel]
match:
  exception:
    type: NotImplementedError
    message: 'Pipeline parallelism is not supported for this model'
explanation: The model does not implement SupportsPP.
workaround: Use tensor parallelism instead.
examples:
  match:
    - body: |
        Traceback (most recent call last):
          File "/x/vllm/config/model.py", line 18, in verify_with_parallel_config
            raise NotImplementedError(
        NotImplementedError: Pipeline parallelism is not supported for this model. Supported models
  no_match:
    - body: nothing here
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return small_index(tmp_path_factory.mktemp("sdists"))


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "pp-unsupported-model.yaml"
    path.write_text(RULE)
    return RuleSet((load_rule_file(path),))


def traceback_body(version_env: str = ENV_2, cut: bool = False) -> str:
    tb = ("```\nTraceback (most recent call last):\n"
          '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py", line 1729, '
          "in create_engine_config\n"
          "    config = self.create()\n"
          f'  File "/usr/local/lib/python3.12/dist-packages/vllm/config/model.py", line {LINE_2}, '
          "in verify_with_parallel_config\n"
          "    raise NotImplementedError(\n")
    if not cut:
        tb += f"NotImplementedError: {PP}\n"
    return version_env + "### 🐛 Describe the bug\n\nvllm serve some/model -pp 2\n\n" + tb + "```\n"


def test_a_full_traceback_resolves_to_its_site_and_keeps_its_own_type(index):
    report = locate(index, parse("[Bug]: pp fails", traceback_body()))
    site = report.site
    assert site is not None
    assert (site.file, site.line, site.qualname) == (CONFIG_2, LINE_2, "ModelConfig.verify_with_parallel_config")
    assert (site.type, site.kind, site.release, site.at_release, site.reporter_release) == (
        "NotImplementedError", "raise", "2.0", True, "2.0")
    assert (site.first, site.last, site.releases, site.newest, site.raised_after) == ("2.0", "2.0", 1, "2.0", False)
    assert site.of == "exception" and site.by.startswith("message") and not site.wrapper
    assert not site.changed_since  # the reporter runs the newest release: nothing after it to compare
    assert [e.inferred for e in report.exceptions] == [False]


def test_a_message_quoted_only_in_the_title_gets_its_type_inferred(index, rules):
    title = "[Bug]: Pipeline parallelism is not supported for this model. Supported models implement the SupportsPP"
    body = ENV_2 + "### 🐛 Describe the bug\n\nvllm serve some/model --pipeline-parallel-size 2 fails at start.\n"
    without = analyse(title, body, rules)
    assert without.report.exceptions == () and without.report.sites == ()
    assert [e.where for e in without.findings[0].evidence] == ["title"]  # the title as evidence, type unknown
    with_index = analyse(title, body, rules, index)
    report = with_index.report
    assert report.site.file == CONFIG_2 and report.site.of == "title"
    root = report.root_cause
    assert (root.type, root.inferred, root.source) == ("NotImplementedError", True, "title")
    assert root.message.startswith("Pipeline parallelism is not supported")
    [finding] = with_index.findings
    assert finding.rule == "pp-unsupported-model" and [e.where for e in finding.evidence] == ["exception"]
    assert "NotImplementedError: Pipeline parallelism" in finding.evidence[0].matched


def test_an_inferred_type_keeps_a_rule_for_another_type_from_firing_on_the_title(index, tmp_path):
    path = tmp_path / "pp-as-value-error.yaml"
    path.write_text(RULE.replace("id: pp-unsupported-model", "id: pp-as-value-error")
                    .replace("type: NotImplementedError", "type: ValueError"))
    wrong = RuleSet((load_rule_file(path),))
    title = "[Bug]: Pipeline parallelism is not supported for this model. Supported models implement the SupportsPP"
    assert [f.rule for f in analyse(title, ENV_2, wrong).findings] == ["pp-as-value-error"]
    assert analyse(title, ENV_2, wrong, index).findings == ()  # vLLM raises it as NotImplementedError


def test_an_error_line_without_a_type_gets_its_type_inferred(index, rules):
    body = ENV_2 + ("```\n(EngineCore_DP0 pid=7) ERROR 03-10 19:20:41 [core.py:700] " + PP + "\n```\n")
    result = analyse("[Bug]: server does not start", body, rules, index)
    assert result.report.site.of == "error-line"
    assert result.report.root_cause.type == "NotImplementedError" and result.report.root_cause.inferred
    assert [f.rule for f in result.findings] == ["pp-unsupported-model"]


def test_a_traceback_cut_before_its_exception_line_resolves_by_its_innermost_frame(index, rules):
    body = traceback_body(cut=True)
    assert parse("[Bug]: pp fails", body).exceptions == ()
    result = analyse("[Bug]: pp fails", body, rules, index)
    site = result.report.site
    assert (site.file, site.line, site.of, site.by) == (CONFIG_2, LINE_2, "traceback", "frame")
    root = result.report.root_cause
    assert (root.type, root.inferred, root.source) == ("NotImplementedError", True, "traceback")
    assert root.message.startswith("Pipeline parallelism is not supported for this model")
    assert [f.file for f in root.frames][-1].endswith("vllm/config/model.py")
    assert [f.rule for f in result.findings] == ["pp-unsupported-model"]


def test_a_frame_in_another_release_at_the_same_line_is_not_taken_for_the_site(index):
    # the same frame at release 1.0: vllm/config/model.py does not exist there
    report = locate(index, parse("[Bug]: pp fails", traceback_body(ENV_1, cut=True)))
    assert report.sites == () and report.exceptions == ()


def test_a_wrapper_error_gives_way_to_the_error_the_title_quotes(index):
    title = "[Bug]: moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton']"
    body = ENV_2 + ("```\nRuntimeError: Engine core initialization failed. See root cause above. "
                    "Failed core proc(s): {}\n```\n")
    report = locate(index, parse(title, body))
    assert report.site.file == "vllm/moe.py" and report.site.of == "title" and not report.site.wrapper
    types = [(e.type, e.inferred) for e in report.exceptions]
    assert types == [("RuntimeError", False), ("ValueError", True)]  # the inferred cause is the root


def test_a_wrapper_alone_is_kept_but_marked(index):
    body = ENV_2 + "```\nRuntimeError: Engine core initialization failed. See root cause above.\n```\n"
    report = locate(index, parse("[Bug]: it does not start", body))
    assert report.site is not None and report.site.wrapper and report.site.file == "vllm/engine.py"
    assert [e.inferred for e in report.exceptions] == [False]


def test_wrappers_are_told_by_type_message_or_announcement():
    assert is_wrapper("RuntimeError", "Engine core initialization failed. See root cause above.")
    assert is_wrapper("error", "EngineCore failed to start: {e}")
    assert is_wrapper("error", "Exception in worker {rank} while processing method {method}.")
    assert not is_wrapper("ValueError", "moe_backend={b} is not supported for unquantized MoE.")


def test_a_cause_shown_in_the_body_stays_the_root_and_error_lines_are_not_asked(index):
    # the body's own cause (not vLLM's) does not resolve; the title's vLLM error is added before it
    title = "[Bug]: " + PP
    body = ENV_2 + "```\nKeyError: 'model.layers.0.mlp.gate'\n```\n"
    report = locate(index, parse(title, body))
    assert [(e.type, e.inferred) for e in report.exceptions] == [("NotImplementedError", True), ("KeyError", False)]
    assert report.root_cause.type == "KeyError"
    body_with_line = body + "```\nERROR 03-10 19:20:41 [core.py:700] " + PP + "\n```\n"
    report = locate(index, parse("[Bug]: crash", body_with_line))
    assert report.sites == ()


def test_tied_sites_infer_only_the_type_they_agree_on(index):
    # the same message in vllm/models/a.py and b.py, quoted without a frame: both kept, the type they share inferred
    title = "[Bug]: Unsupported checkpoint format bin for this loader"
    report = locate(index, parse(title, ENV_2 + "### 🐛 Describe the bug\n\nloading fails\n"))
    assert sorted(s.file for s in report.sites) == ["vllm/models/a.py", "vllm/models/b.py"] and report.site is None
    assert report.root_cause.type == "ValueError" and report.root_cause.inferred


def test_a_release_after_the_reporters_that_no_longer_raises_it(index):
    body = ENV_1 + "```\nValueError: The legacy block manager was removed; this path is gone.\n```\n"
    site = locate(index, parse("[Bug]: old path", body)).site
    assert (site.file, site.release, site.at_release, site.last, site.newest) == ("vllm/gone.py", "1.0", True, "1.0",
                                                                                  "2.0")
    assert not site.raised_after and site.changed_since
    moved = locate(index, parse("[Bug]: pp", traceback_body(ENV_1).replace(
        "vllm/config/model.py", "vllm/config.py").replace(f"line {LINE_2}", "line 17"))).site
    # 2.0 raises it from another file: another site, the same message, so the code did not stop raising it
    assert (moved.file, moved.last, moved.message_first, moved.message_last) == ("vllm/config.py", "1.0", "1.0", "2.0")
    assert moved.raised_after and not moved.changed_since
    assert (site.message_first, site.message_last) == ("1.0", "1.0")


def test_without_an_index_nothing_changes(rules):
    title, body = "[Bug]: " + PP, traceback_body(cut=True)
    assert locate(None, parse(title, body)) == parse(title, body)
    assert analyse(title, body, rules).report == parse(title, body)


def test_the_replay_json_marks_the_inferred_type_and_names_the_site(index, rules):
    title = "[Bug]: " + PP
    out = triage(5, title, ENV_2 + "### 🐛 Describe the bug\n\nfails\n", rules, sources=index).as_dict()
    assert out["exceptions"] == [{"type": "NotImplementedError", "message": title[7:], "inferred": True}]
    assert out["site"]["file"] == CONFIG_2 and out["site"]["line"] == LINE_2 and out["site"]["tied"] == 1
    json.dumps(out)
    plain = triage(5, "[Bug]: x", traceback_body(), rules).as_dict()
    assert plain["exceptions"] == [{"type": "NotImplementedError", "message": PP}] and plain["site"] is None


def test_explain_shows_the_site_and_marks_the_inferred_type(index, rules):
    text = explain("[Bug]: " + PP, ENV_2 + "### 🐛 Describe the bug\n\nfails\n", rules, sources=index)
    assert f"  {CONFIG_2}:{LINE_2} in ModelConfig.verify_with_parallel_config" in text
    assert "NotImplementedError: Pipeline parallelism" in text and "[title, type inferred from the raise site]" in text
    assert "pp-unsupported-model" in text
    assert "raise site:   (no source index)" in explain("[Bug]: " + PP, "", rules)


def test_a_quote_in_free_text_resolves_only_at_the_reporters_release(index):
    title = "[Bug]: moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton']"
    assert locate(index, parse(title, ENV_2)).site.file == "vllm/moe.py"
    assert locate(index, parse(title, ENV_1)).sites == ()  # 1.0 has no vllm/moe.py: a fit elsewhere is not taken
    # a printed exception still names the nearest release that raises it
    body = ENV_1 + ("```\nValueError: moe_backend='marlin' is not supported for unquantized MoE. "
                    "Expected one of [].\n```")
    site = locate(index, parse("[Bug]: x", body)).site
    assert (site.file, site.release, site.at_release) == ("vllm/moe.py", "2.0", False)


def test_the_comment_links_the_site_at_the_reporters_tag_and_hints_at_an_upgrade(index, rules):
    out = triage(5, "[Bug]: " + PP, ENV_2 + "### 🐛 Describe the bug\n\nfails\n", rules, sources=index).decision
    link = f"https://github.com/vllm-project/vllm/blob/v2.0/{CONFIG_2}#L{LINE_2}"
    assert f"[`{CONFIG_2}#L{LINE_2}`]({link}) in `ModelConfig.verify_with_parallel_config`" in out.comment
    # 1.0 raises the message from vllm/config.py: the message's releases are 1.0 to 2.0
    assert "at v2.0 (your release). Releases v1.0 to v2.0 raise this message." in out.comment
    assert "upgrading" not in out.comment
    # 1.0's error that 2.0 no longer raises: no rule knows it, the site alone makes the comment, with the hint
    gone = ENV_1 + "```\nValueError: The legacy block manager was removed; this path is gone.\n```\n"
    comment = triage(6, "[Bug]: old path", gone, rules, sources=index).decision.comment
    assert "/blob/v1.0/vllm/gone.py#L2" in comment
    assert "No release after v1.0 raises this message, so the code has changed since: upgrading may help." in comment
    assert triage(6, "[Bug]: old path", gone, rules).decision.comment is None  # without the index: nothing to say
