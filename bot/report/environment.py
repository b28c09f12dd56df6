"""Environment: collect_env (both formats) and the fallbacks users give instead."""

from __future__ import annotations

import re

from bot.report import hardware
from bot.report.collect_env import CollectEnv, parse_collect_env
from bot.report.model import Environment, Section
from bot.report.sections import is_env_heading, layout
from bot.report.versions import Mention, bare_mentions, classify, commit_of, valid_version, vllm_mentions

MAX_LINE = 2000

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]{0,20}[A-Za-z]|\[[0-9;]{1,12}m")
_TAG_RE = re.compile(r"^\s*\([A-Za-z][\w .=-]{0,60} pid=\d{1,10}(?:, ip=[0-9a-fA-F.:]{1,45})?\)\s?")
_HEADER_RE = re.compile(
    r"^\s*(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s{1,4}\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?\s{1,4}"
    r"\[?[\w./-]{1,160}:\d{1,6}\]\s?"
)
_RANK_RE = re.compile(r"^\s*\[rank\d{1,5}\]:\s?")

_BANNER_RES = (
    (re.compile(r"vLLM API server version:?\s+v?([0-9][0-9A-Za-z.+]{0,80})"), "banner"),
    (re.compile(r"vLLM server version\s+v?([0-9][0-9A-Za-z.+]{0,80})"), "banner"),
    (re.compile(r"Initializing an? (?:V1 )?LLM engine \(v([0-9][0-9A-Za-z.+]{0,80})\)"), "engine-config"),
    (re.compile(r"for V1 LLM engine \(v([0-9][0-9A-Za-z.+]{0,80})\)"), "engine-config"),
)
_LOGO_RE = re.compile(r"version\s+v?([0-9][0-9A-Za-z.+]{0,80})\s*$")
_LOGO_CHARS = frozenset("█▄▀ \t")
_PIP_SHOW_NAME_RE = re.compile(r"^\s*Name:\s*vllm\s*$", re.IGNORECASE)
_PIP_SHOW_VER_RE = re.compile(r"^\s*Version:\s*v?([0-9][0-9A-Za-z.+]{0,80})\s*$")
_IMAGE_RE = re.compile(r"(?<![\w-])((?:[\w.-]{1,60}/)?vllm[\w.-]{0,40}):([\w.+-]{1,128})", re.IGNORECASE)
_IMAGE_SKIP = ("ascend", "omni", "gaudi", "spyre", "mindspore", "musa", "metax", "hpu")
_IMAGE_INNER_RE = re.compile(r"vllm[_-]v?(\d{1,3}\.\d[0-9A-Za-z.]{0,40})", re.IGNORECASE)
_PLATFORM_RE = re.compile(r"Automatically detected platform ([a-z]{2,10})\.?")
_GIT_SHA_RE = re.compile(r"git sha:\s*([0-9a-f]{7,40})")
_AT_SHA_RE = re.compile(r"@([0-9a-f]{7,40})")
# lines with version-like text read for prose candidates; past this a report that never settled on a
# current version falls back to the first one it named
_MAX_CANDIDATE_LINES = 2000
_BRACKET_TAG_RE = re.compile(r"[\[【]([^\]】\n]{1,40})[\]】]")
_PREFIX_RE = re.compile(r"^\s*(?:[\[【][^\]】\n]{1,40}[\]】]\s*[:：-]?\s*)+")



def _clean(line: str) -> str:
    line = line[:MAX_LINE]
    if "\r" in line:
        line = line.replace("\r", "")
    if "\x1b" in line or "[" in line:
        line = _ANSI_RE.sub("", line)
    # each pattern needs the text tested first ("pid=", the "]" after the logger's file, "[rank")
    if "pid=" in line:
        for _ in range(6):
            m = _TAG_RE.match(line)
            if not m:
                break
            line = line[m.end():]
    if "]" in line:
        m = _HEADER_RE.match(line)
        if m:
            line = line[m.end():]
    if "[rank" in line:
        m = _RANK_RE.match(line)
        if m:
            line = line[m.end():]
    return line


def _from_collect_env_value(value: str) -> tuple[str | None, str | None]:
    """`0.16.0rc1.dev136+gdad2d6a59 (git sha: dad2d6a59)`, `0.5.4@4db5176…`, `N/A (dev)` -> (version, commit)."""
    token = value.strip().lstrip("vV").split()[0] if value.strip() else ""
    version_part, _, at_sha = token.partition("@")
    version = valid_version(version_part) if version_part else None
    commit = None
    m = _GIT_SHA_RE.search(value)
    if m:
        commit = m.group(1)
    elif at_sha:
        m = _AT_SHA_RE.search("@" + at_sha)
        commit = m.group(1) if m else None
    if commit is None and version:
        commit = commit_of(version)
    return version, commit


def _banner_version(line: str) -> tuple[str, str] | None:
    if "version" not in line and "engine (v" not in line:
        return None
    for rx, source in _BANNER_RES:
        m = rx.search(line)
        if m:
            v = valid_version(m.group(1))
            if v:
                return v, source
    m = _LOGO_RE.search(line)
    if m:
        before = line[:m.start()]
        drawn = "█" in before or "▄" in before or "▀" in before or not before.strip()
        if drawn and all(c in _LOGO_CHARS for c in before[-40:]):
            v = valid_version(m.group(1))
            if v:
                return v, "banner"
    return None


def _image_version(line: str) -> str | None:
    if "vllm" not in line.lower() or ":" not in line:
        return None
    for m in _IMAGE_RE.finditer(line):
        name = m.group(1).lower()
        if any(s in name for s in _IMAGE_SKIP) or name.endswith(".py"):
            continue
        tag = m.group(2)
        v = valid_version(tag.lstrip("vV")) if tag[:1] in "vV0123456789" else None
        if v and v.startswith("0."):
            return v
        inner = _IMAGE_INNER_RE.search(tag)
        if inner:
            v = valid_version(inner.group(1))
            if v:
                return v
    return None


# a link to vLLM's code or release notes at some tag names where to look, not the version the reporter runs
_CODE_LINK_RE = re.compile(r"https?://github\.com/[^\s)\]>]{1,200}?/(?:blob|tree|releases/tag|compare|commits?|raw)/"
                           r"[^\s)\]>]{0,300}")


def _line_candidates(line: str, *, title: bool) -> list[tuple[str, str, bool]]:
    if "github.com/" in line:
        line = _CODE_LINK_RE.sub(lambda m: " " * len(m.group(0)), line)
    mentions: list[Mention] = vllm_mentions(line)
    taken = {(m.start, m.end) for m in mentions}
    for m in bare_mentions(line, need_v=False, lenient_v=title):
        if (m.start, m.end) not in taken and not any(a.start <= m.start < a.end for a in mentions):
            mentions.append(m)
    out = []
    low = line.lower()
    for m, previous in classify(line, mentions):
        if not m.anchored and not title:
            source = "weak"
        elif "==" in line[max(0, m.start - 4):m.start] or "pip" in low or ".whl" in low:
            source = "pip"
        else:
            source = "title" if title else "prose"
        out.append((m.version, source, previous))
    return out


def _find_version(
    title: str, lines: list[str], ce: CollectEnv, env_range: tuple[int, int] | None, skip: list[bool]
) -> tuple[str | None, str | None, str | None]:
    """(version, source, commit) by tier: collect_env, running banner, env section, title, body, weak shapes."""
    raw = ce.fields.get("vllm")
    if raw:
        v, commit = _from_collect_env_value(raw)
        if v:
            return v, "collect_env", commit
    for line in lines:
        hit = _banner_version(line) if "version" in line or "engine (v" in line else None
        if hit:
            return hit[0], hit[1], commit_of(hit[0])

    env_cands: list[tuple[str, str, bool]] = []
    body_cands: list[tuple[str, str, bool]] = []
    weak_cands: list[tuple[str, str, bool]] = []
    pip_show = -10
    settled = False
    scanned = 0
    for i, line in enumerate(lines):
        if skip[i]:
            continue
        in_env = env_range is not None and env_range[0] <= i < env_range[1]
        found: list[tuple[str, str, bool]] = []
        colon = ":" in line   # in every `pip show` line and image name
        if colon and _PIP_SHOW_NAME_RE.match(line):
            pip_show = i
            continue
        if i - pip_show <= 3 and colon:
            m = _PIP_SHOW_VER_RE.match(line)
            if m and valid_version(m.group(1)):
                found.append((valid_version(m.group(1)) or "", "pip", False))
        img = _image_version(line) if colon else None
        if img:
            found.append((img, "image", False))
        if scanned < _MAX_CANDIDATE_LINES and ("0." in line or "vllm" in line.lower()):
            scanned += 1
            for c in _line_candidates(line, title=False):
                if img and c[0] == img:
                    continue
                found.append(c)
        for c in found:
            if c[1] == "weak":
                weak_cands.append(c)
                continue
            (env_cands if in_env else body_cands).append(c)
            settled = settled or not c[2]
        if settled and (env_range is None or i >= env_range[1]):
            break   # nothing later can outrank it
    t = _PREFIX_RE.sub("", title[:MAX_LINE], count=1)
    title_cands = _line_candidates(t, title=True)
    prefix = title[:MAX_LINE][:len(title[:MAX_LINE]) - len(t)]
    if not title_cands and "vllm" in prefix.lower():
        title_cands = _line_candidates(prefix, title=True)   # "[vLLM v0.11.0 + some-model]: …"
    if not title_cands:   # a tag that is a version: "[Bug][v0.8.5]: …", "[0.9.2] …"
        for tag in _BRACKET_TAG_RE.findall(prefix):
            v = valid_version(tag.strip().lstrip("vV")) if tag.strip()[:1] in "vV0" else None
            if v and v.startswith("0.") and v == tag.strip().lstrip("vV"):
                title_cands.append((v, "title", False))
    img = _image_version(t)
    if img:
        title_cands.insert(0, (img, "image", False))
    groups = (env_cands, title_cands, body_cands, weak_cands)
    choice = next((c for g in groups for c in g if not c[2]), None) or next((c for g in groups for c in g), None)
    if choice:
        source = "prose" if choice[1] == "weak" else choice[1]
        return choice[0], source, commit_of(choice[0])
    return None, None, None


def parse_environment(
    title: str, body: str, sections: tuple[Section, ...], lines: tuple[str, ...]
) -> tuple[Environment, bool]:
    """Return (environment, environment_section_is_placeholder)."""
    title = title or ""
    body = body or ""
    raw_lines, spans, dumps = layout(body)
    source_lines = lines if lines and len(lines) == len(raw_lines) else raw_lines
    # a line without these is one _clean leaves as it is
    clean = [_clean(x) if len(x) > MAX_LINE or "[" in x or "]" in x or "\x1b" in x or "\r" in x or "pid=" in x
             else x for x in source_lines]

    env_section = next((s for s in sections if is_env_heading(s.heading)), None)
    placeholder = env_section is not None and env_section.empty

    ce = parse_collect_env(clean)
    env_range = next(((start, end) for heading, start, end in spans if is_env_heading(heading)), None)
    skip = [False] * len(clean)
    for start, end in dumps:
        for i in range(start, end):
            skip[i] = True

    version, vsource, commit = _find_version(title, clean, ce, env_range, skip)
    if env_range is not None:
        for i in range(*env_range):
            k, sep, v = clean[i].strip().partition("=")
            if sep and hardware.is_env_var_name(k) and not hardware.is_secret(k):
                ce.env_vars.setdefault(k, v.strip())

    hw = hardware.read(title, clean, ce, version, skip)
    env = Environment(
        vllm_version=version,
        vllm_version_source=vsource,
        vllm_commit=commit,
        torch_version=hw.torch,
        cuda_version=hw.cuda,
        rocm_version=hw.rocm,
        driver_version=hw.driver,
        gpus=tuple(hw.gpus),
        platform=hw.platform,
        os=hw.os,
        python_version=hw.python,
        transformers_version=hw.transformers,
        env_vars=dict(ce.env_vars),
    )
    return env, placeholder
