"""The one bot comment: what it says for a known failure, duplicates and missing information, and that
nothing from the issue can ping, inject HTML or fake the bot's marker."""

from __future__ import annotations

import pickle
import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.comment import (
    MARKER,
    PRERENDERED,
    Safe,
    _known_and_rest,
    _template,
    comment_context,
    render_comment,
)
from bot.decision import Candidate, Evidence, Finding
from bot.report import parse
from bot.report.model import RaiseSite

SEED_TITLE = "[Bug]: Qwen3-Next with -pp 2 and MTP fails at startup"
SEED_BODY = """\
### Your current environment

<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
Collecting environment information...
==============================
        System Info
==============================
OS                           : Ubuntu 22.04.5 LTS (x86_64)
==============================
       PyTorch Info
==============================
PyTorch version              : 2.9.0+cu128
CUDA used to build PyTorch   : 12.8
ROCM used to build PyTorch   : N/A
==============================
       CUDA / GPU Info
==============================
Is CUDA available            : True
GPU models and configuration :
GPU 0: NVIDIA H100 80GB HBM3
GPU 1: NVIDIA H100 80GB HBM3
Nvidia driver version        : 570.124.06
==============================
         vLLM Info
==============================
ROCM Version                 : Could not collect
vLLM Version                 : 0.18.1
```

</details>

### 🐛 Describe the bug

```bash
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct -pp 2 \\
  --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'
```

```
(APIServer pid=3141) INFO 06-01 12:00:01 [api_server.py:1805] vLLM API server version 0.18.1
(APIServer pid=3141) Traceback (most recent call last):
(APIServer pid=3141)   File "/venv/lib/python3.12/site-packages/vllm/config/model.py", line 65, in verify_with_parallel
(APIServer pid=3141)     raise NotImplementedError(
(APIServer pid=3141) NotImplementedError: Pipeline parallelism is not supported for this model. Supported models \
implement the `SupportsPP` interface.
```
"""


def seed_finding(confidence: float = 0.9, upgrade: str | None = "fixed in 0.19.0: upgrade from 0.18.1") -> Finding:
    return Finding(
        rule="pp-with-draft-model-without-pp",
        title="Pipeline parallelism with a speculative draft (MTP) model that lacks SupportsPP",
        labels=("pipeline-parallel", "speculative-decoding"),
        confidence=confidence,
        explanation="The draft model (`qwen3_next_mtp`) does not implement `SupportsPP`.",
        workaround="- use `--tensor-parallel-size 2` instead of `--pipeline-parallel-size 2`, or\n"
                   "- drop `--speculative-config`.",
        references=("vllm-project/vllm#36643",),
        evidence=(Evidence("exception.message ~ /Pipeline parallelism is not supported/",
                           "Pipeline parallelism is not supported for this model.", "exception"),
                  Evidence("flag pipeline_parallel_size > 1", "2", "flag")),
        upgrade=upgrade,
    )


def test_seed_shaped_report_gets_the_diagnosis_with_its_workaround() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    dup = Candidate(number=40118, score=0.91, reason="same root-cause error and PP + MTP flags",
                    title="MTP draft with -pp 2 stops during config validation", state="closed")
    out = render_comment(report, (seed_finding(),), (dup,), ())
    assert out is not None
    assert out.startswith(MARKER + "\n") and out.count(MARKER) == 1
    summary = out.split("\n")[1]
    assert "Pipeline parallelism with a speculative draft (MTP) model that lacks SupportsPP" in summary
    assert "`--tensor-parallel-size 2` instead of `--pipeline-parallel-size 2`" in out
    assert "fixed in 0.19.0: upgrade from 0.18.1" in out
    assert "[vllm-project/vllm#36643](https://github.com/vllm-project/vllm/issues/36643)" in out
    assert "- #40118 (closed) MTP draft with -pp 2 stops during config validation: same root-cause error" in out
    # evidence collapsed, with what was read from the report
    details = out[out.index("<details>"):out.index("</details>")]
    assert "`0.18.1`" in details and "NotImplementedError: Pipeline parallelism" in details
    assert "`flag pipeline_parallel_size > 1` → `2`" in details
    # how to tell the bot it is wrong
    assert "/not-duplicate #N" in out and "/triage" in out and "remove a label" in out
    assert "Missing information" not in out


def test_nothing_known_means_no_comment() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    assert render_comment(report, (), (), ()) is None


def test_low_confidence_findings_are_not_commented() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    assert render_comment(report, (seed_finding(confidence=0.4),), (), ()) is None
    out = render_comment(report, (seed_finding(confidence=0.4),), (), ("environment",))
    assert out is not None and "pp-with-draft-model-without-pp" not in out and "What you can do" not in out


def test_upgrade_note_only_when_the_finding_has_one() -> None:
    out = render_comment(parse(SEED_TITLE, SEED_BODY), (seed_finding(upgrade=None),), (), ())
    assert out is not None and "fixed in" not in out


def test_needs_info_asks_for_collect_env_or_at_least_the_version() -> None:
    body = ("### Your current environment\n\n```text\nThe output of `python collect_env.py`\n```\n\n"
            "### 🐛 Describe the bug\n\nThe server crashes after a few requests.\n")
    report = parse("[Bug]: server crashes", body)
    out = render_comment(report, (), (), ("environment",))
    assert out is not None and out.count(MARKER) == 1
    assert "Missing information" in out
    assert "vllm collect-env" in out and "python collect_env.py" in out
    assert 'python -c "import vllm; print(vllm.__version__)"' in out
    assert "Your current environment" in out


def test_an_environment_cut_before_the_vllm_line_asks_for_the_version_only() -> None:
    body = """### Your current environment

```text
PyTorch version: 2.6.0+rocm6.2
Is debug build: False
ROCM used to build PyTorch: 6.2.41133

OS: Ubuntu 22.04.5 LTS (x86_64)
Python version: 3.12.8 (main, Dec  4 2024, 08:54:12) [GCC 11.4.0] (64-bit runtime)
GPU models and configuration: AMD Instinct MI210 (gfx90a:sramecc+:xnack-)
HIP runtime version: 6.2.41133
```

### 🐛 Describe the bug

Serving fails after the first request.
"""
    report = parse("[Bug]: crash on MI210", body)
    assert report.environment.vllm_version is None and report.needs_info == ("environment",)
    out = render_comment(report, (), (), report.needs_info)
    assert out is not None
    assert "does not show the vLLM version" in out
    assert 'python -c "import vllm; print(vllm.__version__)"' in out
    assert "vllm collect-env" not in out


def test_duplicates_alone_make_a_comment_that_links_them() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    dups = (Candidate(number=120, score=0.8, reason="same error signature", title="PP + MTP fails", state="open"),
            Candidate(number=77, score=0.7, reason="similar title", state="closed", via=90))
    out = render_comment(report, (), dups, ())
    assert out is not None
    assert "same problem as #120, #77" in out
    assert "- #120 (open) PP + MTP fails: same error signature" in out
    assert "- #77 (closed): similar title (found through #90" in out


def test_a_context_built_beforehand_and_pickled_renders_the_same_comment() -> None:
    """Replay's workers build the comment context and send it pickled; the main process renders with it."""
    report = parse(SEED_TITLE, SEED_BODY)
    dup = Candidate(number=120, score=0.8, reason="same error signature", title="PP + MTP fails", state="open")
    others = (dup, Candidate(number=77, score=0.7, reason="", title="[Bug]:", state="closed", via=90),
              Candidate(number=5, score=0.6, reason="similar *title*", title="@bob <b>boom</b> #3"))
    two = (seed_finding(), replace(seed_finding(), rule="other-rule", title="Another known problem"))
    cases = [((seed_finding(),), (dup,), ()), ((seed_finding(),), (), ("environment",)), ((), (dup,), ()),
             ((), (), ()), ((seed_finding(confidence=0.4),), (), ()), (two, others, ()), (two, (), ()),
             ((), others, ("environment",)), ((), (), ("environment",))]
    prerendered = 0
    for findings, dups, needs_info in cases:
        whole = render_comment(report, findings, dups, needs_info, number=36643)
        for prerender in (False, True):
            built = comment_context(report, findings, needs_info, number=36643, prerender=prerender)
            context = pickle.loads(pickle.dumps(built))
            if PRERENDERED in context:
                prerendered += 1
                assert all(isinstance(text, str) for text in context[PRERENDERED])
                assert findings == () or isinstance(context["summary"][1], Safe)
            else:
                assert isinstance(context["kind"], Safe)
            assert render_comment(report, findings, dups, needs_info, number=36643, context=context) == whole
    assert prerendered == 6   # the cases with something to say whatever the duplicates


def test_the_template_is_what_is_known_then_the_rest() -> None:
    """The summary goes before the template's `known` block and the duplicates between it and `rest`: the
    template holds those two blocks and nothing outside them."""
    report = parse(SEED_TITLE, SEED_BODY)
    context = comment_context(report, (seed_finding(),), ("environment",), number=36643)
    assert tuple(_template().blocks) == ("known", "rest")
    known, rest = _known_and_rest(context)
    assert known and rest and _template().render(context) == known + rest


# -- nothing from the issue can ping, inject HTML or fake the marker -------------------------------------------

OWN_TAGS = ("<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>")
hostile = st.lists(st.sampled_from([
    "@octocat", "@org/team", "<details>", "</summary>", "<img src=x>", "<script>", MARKER, "<!--", "```", "`",
    "#12", "&#64;x", "\n", " ", "word", "ValueError: x", "--flag", "|", "_", "\u202e",
]), max_size=30).map("".join)
text = st.one_of(st.text(max_size=200), hostile)


def own_tags_removed(comment: str) -> str:
    body = comment.replace(MARKER, "", 1)
    for tag in OWN_TAGS:
        body = body.replace(tag, "")
    return body


@settings(max_examples=150, deadline=None)
@given(title=text, body=text, capture=text, cand_title=text, reason=text, matched=text)
def test_hostile_text_anywhere_cannot_ping_inject_or_fake_the_marker(title, body, capture, cand_title, reason,
                                                                     matched) -> None:
    report = parse(title, body + "\nValueError: " + capture)
    finding = Finding(rule="r", title="T " + capture, labels=(), confidence=0.9,
                      explanation=f"The value `{capture}` is wrong: {capture}",
                      workaround=f"- pass `--x {capture}`\n```sh\nvllm serve {capture}\n```",
                      references=(capture,), evidence=(Evidence("c " + capture, matched, "log"),),
                      captures={"v": capture}, upgrade="fixed in 9: " + capture)
    cand = Candidate(number=5, score=0.9, reason=reason, title=cand_title, state="closed")
    out = render_comment(report, (finding,), (cand,), ("environment", capture))
    assert out is not None
    assert out.count(MARKER) == 1 and out.startswith(MARKER)
    rest = own_tags_removed(out)
    assert not re.search(r"<[A-Za-z/!?]", rest), rest
    assert not re.search(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]", out)
    assert not re.search(r"&(?!(?:lt|gt|amp|quot);)[#A-Za-z]", out)
    assert out.count("<details>") == 1 and out.count("</details>") == 1
    assert len(out) < 65_536


def test_placeholder_environment_is_noted_when_the_version_came_from_the_log():
    from bot.report import parse
    from bot.rules import load_rules

    body = (
        "### Your current environment\n\n<details>\n"
        "<summary>The output of <code>python collect_env.py</code></summary>\n\n"
        "```text\nYour output of `python collect_env.py` here\n```\n\n</details>\n\n### 🐛 Describe the bug\n\n"
        "```\n(APIServer pid=77) INFO 01-02 03:04:05 [api_server.py:1805] vLLM API server version 0.12.0\n"
        "(EngineCore_DP0 pid=91) ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine.\n```\n"
    )
    report = parse("[Bug]: engine fails to start", body)
    assert report.environment_placeholder and not report.needs_info
    findings = load_rules().evaluate(report)
    comment = render_comment(report, findings, (), report.needs_info)
    assert comment is not None
    assert "still holds the template placeholder" in comment
    assert "`0.12.0`) was read from your server log" in comment


def test_a_rule_reference_to_the_issue_itself_is_left_out() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    f = seed_finding()
    own = render_comment(report, (f,), (), (), number=36643)
    other = render_comment(report, (f,), (), (), number=40001)
    assert own is not None and other is not None
    assert "vllm-project/vllm#36643" not in own
    assert "[vllm-project/vllm#36643](https://github.com/vllm-project/vllm/issues/36643)" in other


def test_a_bare_template_title_of_a_linked_issue_is_not_shown() -> None:
    report = parse(SEED_TITLE, SEED_BODY)
    dups = (Candidate(number=501, score=0.7, reason="same diagnosis: x", title="[Bug]:", state="open"),
            Candidate(number=502, score=0.7, reason="same diagnosis: x", title="[Usage]: serve fails:", state="open"))
    out = render_comment(report, (), dups, ())
    assert out is not None
    assert "- #501 (open): same diagnosis: x" in out
    assert "- #502 (open) \\[Usage\\]: serve fails: same diagnosis: x" in out


# ---------------------------------------------------------------------------------------------------------------
# The root cause's raise site (bot/sources/locate.py puts it on the Report; the comment names it)

SITE = RaiseSite(id="s1", file="vllm/config/model.py", line=1065, end_line=1068,
                 qualname="ModelConfig.verify_with_parallel_config", kind="raise", type="NotImplementedError",
                 message="Pipeline parallelism is not supported for this model.", release="0.18.1", at_release=True,
                 reporter_release="0.18.1", first="0.6.3", last="0.18.1", releases=31, newest="0.19.0",
                 raised_after=True, of="exception", by="message")
LINK = "https://github.com/vllm-project/vllm/blob/v0.18.1/vllm/config/model.py#L1065"


def with_sites(*sites: RaiseSite):
    return replace(parse(SEED_TITLE, SEED_BODY), sites=sites)


def test_the_site_is_a_permalink_at_the_reporters_tag_with_the_releases_that_raise_it() -> None:
    out = render_comment(with_sites(SITE), (seed_finding(),), (), ())
    assert f"[`vllm/config/model.py#L1065`]({LINK}) in `ModelConfig.verify_with_parallel_config`" in out
    assert "at v0.18.1 (your release). Releases v0.6.3 to v0.18.1 raise this message." in out
    assert "upgrading" not in out.split("Where vLLM")[1].split("\n\n")[0]  # 0.19.0 still raises it: no hint


def test_a_site_only_another_release_has_is_named_at_the_nearest_release_and_said_so() -> None:
    site = replace(SITE, release="0.17.0", at_release=False, line=1040)
    out = render_comment(with_sites(site), (seed_finding(),), (), ())
    assert "/blob/v0.17.0/vllm/config/model.py#L1040" in out
    assert "at v0.17.0, the nearest release that has it (v0.18.1, your release, does not)" in out


def test_no_later_release_raising_it_is_a_hint_to_upgrade_and_worth_a_comment_alone() -> None:
    site = replace(SITE, last="0.18.1", raised_after=False)
    assert site.changed_since
    out = render_comment(with_sites(site), (), (), ())
    assert out is not None and "error is vLLM's own" in out
    assert "No release after v0.18.1 raises this message, so the code has changed since: upgrading may help." in out
    # a site that later releases still raise is no reason to comment on its own
    assert render_comment(with_sites(SITE), (), (), ()) is None


def test_tied_sites_are_named_only_when_they_are_in_one_function() -> None:
    second = replace(SITE, id="s2", line=1050, first="0.5.0")
    out = render_comment(with_sites(SITE, second), (seed_finding(),), (), ())
    assert "model.py#L1050" in out and "(one of 2 places in it with this message)" in out
    assert "Releases v0.5.0 to v0.18.1 raise this message" in out
    # the message raised from elsewhere too (before a module split, after a move): its releases are the message's
    moved = replace(SITE, message_first="0.2.0", message_last="0.19.0")
    assert "Releases v0.2.0 to v0.19.0 raise this message" in render_comment(with_sites(moved), (seed_finding(),),
                                                                             (), ())
    elsewhere = replace(SITE, id="s3", file="vllm/config/parallel.py", qualname="ParallelConfig.check")
    assert "Where vLLM" not in render_comment(with_sites(SITE, elsewhere), (seed_finding(),), (), ())


def test_a_wrapper_site_or_an_unknown_release_is_said_as_such() -> None:
    wrapper = replace(SITE, wrapper=True, last="0.18.1", raised_after=False)
    assert render_comment(with_sites(wrapper), (), (), ()) is None
    undated = replace(SITE, reporter_release=None)
    out = render_comment(with_sites(undated), (seed_finding(),), (), ())
    assert "at v0.18.1." in out and "your release" not in out
    by_date = replace(parse("[Bug]: it fails", "```\nNotImplementedError: Pipeline parallelism\n```"),
                      sites=(SITE,))
    assert by_date.environment.vllm_version is None
    assert "(the newest release when this was filed)" in render_comment(by_date, (seed_finding(),), (), ())


def test_a_logged_message_is_said_to_be_logged() -> None:
    out = render_comment(with_sites(replace(SITE, kind="log", type="error")), (seed_finding(),), (), ())
    assert "**Where vLLM logs this error:**" in out and "Releases v0.6.3 to v0.18.1 log this message" in out
