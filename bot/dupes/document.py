"""One issue as the duplicate index sees it: a field-weighted term vector, signature keys, rule ids, flags.

Pure: built from a Report and its findings, no I/O.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bot.decision import Finding
from bot.dupes.request_terms import request_subject
from bot.dupes.signature import Signature, signatures, site_keys
from bot.dupes.text import (
    MAX_BODY_TOKENS,
    MAX_ERROR_TOKENS,
    clean_title,
    is_error_text,
    joined_versions,
    meaningful_lines,
    tokens,
)
from bot.glossary import english, with_english
from bot.report.asks import asks_for_support
from bot.report.entities import title_platforms
from bot.report.model import Entity, Report


@dataclass(frozen=True)
class FieldSpec:
    weight: float
    b: float          # BM25 length normalisation strength
    ref_len: float    # the length at which no normalisation applies (fixed, so stored weights never drift)


# BM25F fields. Titles carry the most meaning per word; error text next; the description is long and noisy.
FIELDS: dict[str, FieldSpec] = {
    "title": FieldSpec(weight=3.0, b=0.3, ref_len=7.0),
    "error": FieldSpec(weight=2.0, b=0.5, ref_len=25.0),
    "body": FieldSpec(weight=1.0, b=0.75, ref_len=120.0),
    "flag": FieldSpec(weight=1.0, b=0.0, ref_len=1.0),
}
FLAG_PREFIX = "flag_"
ENTITY_PREFIX = "ent:"
# flags present in nearly every report say nothing about the failure
_COMMON_FLAGS = frozenset({"model", "host", "port", "served_model_name", "model_tag", "api_key", "tokenizer",
                           "trust_remote_code_default", "download_dir", "uvicorn_log_level"})
_FLAG_OFF = (None, False, 0, 1, "", "auto", "none", "None", "false", "False")


@dataclass(frozen=True)
class IssueDoc:
    vector: dict[str, float] = field(hash=False)      # term -> saturated BM25F term weight
    signatures: tuple[Signature, ...] = ()
    rules: tuple[str, ...] = ()                        # rule ids, "id=key" for a rule with a duplicate_key
    flags: tuple[str, ...] = ()                        # notable flags set, snake_case
    title: str = ""                                     # cleaned title, for reasons
    body_key: str = ""                                  # digest of a substantial description (a re-filed report)
    entities: tuple[Entity, ...] = ()                  # what a request or question names (bot/report/entities.py)
    kind: str = ""                                      # the report kind (bug, usage, feature, new-model, ...)
    sites: tuple[str, ...] = ()                         # `site:` keys of the root cause's raise sites
    subject: tuple[str, ...] = ()                       # what the title asks about (bot/dupes/request_terms.py)
    subject_words: tuple[str, ...] = field(default=(), compare=False)   # the same as written (reasons; not stored)

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """Exact-match lookup keys: signatures, raise sites, rule ids, the description, entities."""
        out: list[str] = []
        for sig in self.signatures:
            out.extend(sig.keys())
        out.extend(self.sites)
        out.extend("rule:" + rule_id(r) for r in self.rules)
        if self.body_key:
            out.append("body:" + self.body_key)
        out.extend(ENTITY_PREFIX + e.key for e in self.entities)
        return tuple(dict.fromkeys(out))

    @cached_property
    def signature_keys(self) -> frozenset[str]:
        return frozenset(s.key for s in self.signatures)

    @cached_property
    def frame_keys(self) -> frozenset[str]:
        return frozenset(s.frame_key for s in self.signatures if s.frame_key)


def notable_flags(report: Report) -> tuple[str, ...]:
    out = []
    for name, value in report.flags.items():
        key = str(name).strip().lstrip("-").replace("-", "_").lower()
        if not key or key in _COMMON_FLAGS:
            continue
        try:
            if value in _FLAG_OFF:
                continue
        except TypeError:  # unhashable values (dicts) are "set"
            pass
        out.append(key)
    return tuple(sorted(set(out)))


def error_text(report: Report) -> str:
    parts = []
    for exc in report.exceptions[-4:]:
        parts.append(f"{exc.short_type} {exc.first_line}")
    parts.extend(line for line in report.error_lines[:8] if is_error_text(line))
    return "\n".join(parts)


def field_tokens(report: Report) -> dict[str, list[str]]:
    title = with_english(clean_title(report.title_text or report.title))
    body = meaningful_lines(report.description or "")
    extra = english(body[:MAX_GLOSSARY_CHARS])
    if extra:                                # Chinese words first, so the token limit keeps them
        body = extra + "\n" + body
    flags = notable_flags(report)
    title_terms = tokens(joined_versions(title), numbers=True, title=True)
    title_terms.extend(p for p in tokens(" ".join(title_platforms(title))) if p not in title_terms)
    return {
        "title": title_terms,
        "error": tokens(error_text(report), limit=MAX_ERROR_TOKENS),
        "body": tokens(body, limit=MAX_BODY_TOKENS),
        "flag": [FLAG_PREFIX + f for f in flags],
    }


K1 = 1.2
MAX_GLOSSARY_CHARS = 4000   # of the description read for Chinese words


def bm25f_vector(fields: dict[str, list[str]]) -> dict[str, float]:
    """Per term, the BM25F pseudo frequency tf~ = Σ_f weight_f · tf_f / (1 − b_f + b_f · len_f / ref_f),
    saturated as tf~ · (k1 + 1) / (tf~ + k1): BM25 is then a plain idf-weighted dot product."""
    vector: dict[str, float] = {}
    for name, toks in fields.items():
        if not toks:
            continue
        spec = FIELDS[name]
        norm = spec.weight / (1.0 - spec.b + spec.b * len(toks) / spec.ref_len)
        for term, tf in Counter(toks).items():
            vector[term] = vector.get(term, 0.0) + tf * norm
    return {t: round(w * (K1 + 1.0) / (w + K1), 4) for t, w in vector.items()}


# A finding below this confidence names a failure's class, not its cause (CUDA OOM outside the phases other
# rules identify, a hang at start-up, a log line that is not the error): shared, it weighs like a shared
# error, not like a diagnosis.
GENERIC_CONFIDENCE = 0.6
GENERIC_MARK = "~"


def rule_entry(finding: Finding) -> str:
    """How a diagnosis is stored: the rule id, which of the rule's root causes when the rule keys them, and a
    leading `~` for a generic finding (below GENERIC_CONFIDENCE)."""
    entry = f"{finding.rule}={finding.duplicate_key}" if finding.duplicate_key else finding.rule
    return GENERIC_MARK + entry if finding.confidence < GENERIC_CONFIDENCE else entry


def rule_id(entry: str) -> str:
    return entry.partition("=")[0].lstrip(GENERIC_MARK)


def is_generic(entry: str) -> bool:
    return entry.startswith(GENERIC_MARK)


# a description this long, with this much of the reporter's own text, is not a template or a one-liner
MIN_BODY_CHARS = 400
MIN_OWN_CHARS = 100


def body_key(report: Report) -> str:
    """The same description pasted again (a report re-filed by its author, or copied by another user), whatever
    the title and the whitespace; empty for short or template-only descriptions, which many unrelated issues share."""
    text = " ".join((report.description or "").lower().split())
    if len(text) < MIN_BODY_CHARS or len(meaningful_lines(report.description or "").strip()) < MIN_OWN_CHARS:
        return ""
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]


# Documents built elsewhere for a given Report object (replay builds them in its worker processes), handed
# over to the next build_doc of that very object. Bounded: an entry nobody asks for is dropped in time.
_PREBUILT: dict[int, tuple[Report, tuple[Finding, ...], IssueDoc]] = {}
_MAX_PREBUILT = 64


def prebuilt(report: Report, findings: tuple[Finding, ...], doc: IssueDoc) -> None:
    """`doc` is build_doc(report, findings), made in another process: use it instead of building it again."""
    while len(_PREBUILT) >= _MAX_PREBUILT:
        del _PREBUILT[next(iter(_PREBUILT))]
    _PREBUILT[id(report)] = (report, findings, doc)


def request_kind(kind: str, title: str, has_error: bool) -> str:
    """The report kind the duplicate search goes by: a bug report without an error whose title (`clean_title`)
    asks for something to be supported ("[Bug]: Qwen3 Omni Support") is a feature request filed with the bug form."""
    if kind == "bug" and not has_error and asks_for_support(title):
        return "feature"
    return kind


def build_doc(report: Report, findings: tuple[Finding, ...] = ()) -> IssueDoc:
    hit = _PREBUILT.pop(id(report), None) if _PREBUILT else None
    if hit is not None and hit[0] is report and hit[1] == findings:
        return hit[2]
    fields = field_tokens(report)
    title = report.title_text or report.title
    cleaned = clean_title(title)
    subject, subject_words = request_subject(title)
    sigs = signatures(report)
    sites = site_keys(report)
    return IssueDoc(
        vector=bm25f_vector(fields),
        signatures=sigs,
        rules=tuple(sorted({rule_entry(f) for f in findings})),
        flags=notable_flags(report),
        title=cleaned,
        body_key=body_key(report),
        entities=report.entities,
        kind=request_kind(report.kind, cleaned, bool(sigs or sites)),
        sites=sites,
        subject=subject,
        subject_words=subject_words,
    )


def doc_meta(doc: IssueDoc) -> dict[str, Any]:
    """What the store keeps besides the vector, for reasons and for exact checks at query time."""
    return {
        "sigs": [[s.type, s.message, list(s.frames), s.display] for s in doc.signatures],
        "rules": list(doc.rules),
        "flags": list(doc.flags),
        "title": doc.title,
        "body": doc.body_key,
        "ents": [[e.key, e.reason, e.strength] for e in doc.entities],
        "kind": doc.kind,
        "sites": list(doc.sites),
        "subj": list(doc.subject),
    }


def doc_from_meta(vector: dict[str, float], meta: dict[str, Any]) -> IssueDoc:
    sigs = tuple(Signature(t, m, tuple(f), d) for t, m, f, d in meta.get("sigs", ()))
    ents = tuple(Entity(k, r, s) for k, r, s in meta.get("ents", ()))
    return IssueDoc(vector=vector, signatures=sigs, rules=tuple(meta.get("rules", ())),
                    flags=tuple(meta.get("flags", ())), title=meta.get("title", ""), body_key=meta.get("body", ""),
                    entities=ents, kind=meta.get("kind", ""), sites=tuple(meta.get("sites", ())),
                    subject=tuple(meta.get("subj", ())))
