"""Scoring: BM25 over the field-weighted vectors, the signals combined into one score, and the reason.

Pure. The link rule is deliberately simple (precision first):
  * a strong signal — the same diagnosis (rule id) or the same normalised error — plus some shared wording, or
  * very similar wording alone;
  * a signature shared by two reports whose diagnoses differ is a near miss, not a duplicate: when both
    reports have diagnoses and none is shared, the pair is never linked;
  * two requests or questions whose titles ask about the same thing (request_terms) count as a shared question key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from bot.dupes.document import FLAG_PREFIX, GENERIC_MARK, IssueDoc, is_generic, rule_id
from bot.dupes.request_terms import Asked
from bot.dupes.signature import Signature, describe_site
from bot.report.model import Entity


@dataclass(frozen=True)
class Policy:
    """Signal weights and the link threshold (calibrated on the dev set; see README "Duplicate detection").

    score = w_text·text + w_rule·[same diagnosis] + (w_signature + w_frames·[same frames])·[same error or site],
    capped at 1, linked at `threshold`. With the defaults:
      * the same diagnosis (rule id) links by itself: a rule names the root cause; a generic finding (below
        document.GENERIC_CONFIDENCE) names only the failure's class and weighs like the same error;
      * the same normalised error needs text ≥ (threshold − w_signature) / w_text ≈ 0.36 as well, because
        generic errors (CUDA OOM, a failed import) are shared by unrelated root causes; the same raise site in
        vLLM (the source index's `site:` key: the same statement, whatever its line, hole values or where the
        report quotes it) counts as the same error, at the same place;
      * text alone needs text ≥ threshold / w_text ≈ 0.86;
      * when both reports are diagnosed and no diagnosis is shared (a near miss: the same error for another
        reason), the error signal does not count; only the text-alone path is left;
      * the text-alone path needs a query of at least `min_text_terms` distinct terms: a near-empty report (a
        bare title, a wrapper traceback, an unfilled template) is "similar" to every report that repeats its few
        words, so its text score is scaled down by terms / min_text_terms.
    """

    w_text: float = 0.7
    w_rule: float = 0.6
    w_signature: float = 0.35
    w_frames: float = 0.05
    # shared entity keys (bot/report/entities.py), by what they name: the same requested model or ROCm target
    # (strong), one API use with one answer (question), where a question lies (area)
    w_entity: tuple[tuple[str, float], ...] = (("strong", 0.75), ("question", 0.65), ("area", 0.15))
    # two requests or questions whose titles ask about the same thing (request_terms.overlap at least
    # `min_subject`), neither of them a bug or performance report: weighs as a shared question key
    w_subject: float = 0.65
    min_subject: float = 0.75
    threshold: float = 0.6
    # A pair without a shared error, diagnosis or description (a request or a question) is linked at a stricter
    # threshold, by the query's kind: see README "Duplicate detection" for the argument.
    no_error_thresholds: tuple[tuple[str, float], ...] = (
        ("new-model", 0.7), ("feature", 0.7), ("usage", 0.72), ("installation", 0.72),
        ("docs", 0.75), ("misc", 0.75), ("other", 0.75), ("rfc", 0.75))
    related_margin: float = 0.25     # "possibly related": not linked, but within this much of the pair's threshold
    veto_rule_conflict: bool = True
    veto_entity_conflict: bool = True
    min_text_terms: int = 12

    def threshold_for(self, m: Match) -> float:
        """The score a pair needs to be linked: the stricter one of the query's kind when the query carries no
        error and the pair shares no error, diagnosis or description (failure reports keep `threshold`)."""
        if m.strong or m.query_has_error:
            return self.threshold
        return self._no_error_thresholds.get(m.kind, self.threshold)

    @cached_property
    def _no_error_thresholds(self) -> dict[str, float]:
        return dict(self.no_error_thresholds)

    @cached_property
    def entity_weights(self) -> dict[str, float]:
        return dict(self.w_entity)


DEFAULT_POLICY = Policy()


def idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def bm25(query: Mapping[str, float], doc: Mapping[str, float], idfs: Mapping[str, float]) -> float:
    """BM25 of two saturated weight vectors (see document.bm25f_vector): Σ idf(t) · q(t) · d(t)."""
    if len(doc) < len(query):
        query, doc = doc, query
    return sum(idfs.get(t, 0.0) * w * doc[t] for t, w in query.items() if t in doc)


def self_score(query: Mapping[str, float], idfs: Mapping[str, float]) -> float:
    return sum(idfs.get(t, 0.0) * w * w for t, w in query.items())


def contributions(query: Mapping[str, float], doc: Mapping[str, float], idfs: Mapping[str, float],
                  limit: int = 4) -> tuple[str, ...]:
    """The shared words that weigh most, for the reason."""
    scored = sorted(((idfs.get(t, 0.0) * w * doc[t], t) for t, w in query.items()
                     if t in doc and not t.startswith(FLAG_PREFIX)), reverse=True)
    return tuple(t for _, t in scored[:limit])


@dataclass(frozen=True)
class Match:
    """Everything known about one (query, earlier issue) pair."""

    text: float                              # BM25 normalised by the query's self-score, 0..1
    signature: Signature | None = None       # a shared normalised error (the query's side)
    same_frames: bool = False
    site: str | None = None                  # a shared raise site's key (bot/dupes/signature.py site_key)
    shared_rules: tuple[str, ...] = ()
    generic_rules: bool = False              # every shared diagnosis is a generic finding (document.is_generic)
    same_body: bool = False                  # the same substantial description (a re-filed report)
    rule_conflict: bool = False              # both diagnosed, no diagnosis in common
    shared_flags: tuple[str, ...] = ()
    shared_terms: tuple[str, ...] = ()
    query_terms: int = 1 << 30               # distinct terms of the query's vector (its information content)
    entities: tuple[Entity, ...] = ()        # shared entity keys, each with the weaker side's strength
    entity_conflict: bool = False            # both name e.g. a model, a platform or a question, and differ
    kind: str = ""                           # the query's report kind
    query_has_error: bool = True             # the query carries an error signature (then no stricter threshold)
    subject: tuple[str, ...] = ()            # the title words both ask about (bot/dupes/request_terms.py)
    subject_overlap: float = 0.0             # how much of the two titles' subjects is shared, 0..1

    def same_subject(self, policy: Policy) -> bool:
        return bool(self.subject) and self.subject_overlap >= policy.min_subject

    @property
    def strong(self) -> bool:
        return bool(self.shared_rules) or self.signature is not None or self.site is not None or self.same_body


FAILURE_KINDS = ("bug", "performance")


def subject_match(query: IssueDoc, doc: IssueDoc, asked: Asked | None,
                  idfs: Mapping[str, float]) -> tuple[float, tuple[str, ...]]:
    """How much two requests or questions ask about the same thing (request_terms.Asked) and the words they share;
    (0, ()) when either is a failure report or either title names nothing."""
    if asked is None or not doc.subject or doc.kind in FAILURE_KINDS:
        return 0.0, ()
    return asked.overlap(doc.subject, idfs)


def asked_of(query: IssueDoc, idfs: Mapping[str, float], policy: Policy = DEFAULT_POLICY) -> Asked | None:
    """The query's subject, prepared for comparisons, when it is a request or a question (no error, no failure
    kind); `idfs` must cover its terms."""
    if not query.subject or query.signatures or query.sites or query.kind in FAILURE_KINDS:
        return None
    return Asked(query.subject, query.subject_words, idfs, policy.min_subject)


def compare(query: IssueDoc, doc: IssueDoc, text: float, shared_terms: tuple[str, ...] = (),
            asked: Asked | None = None, idfs: Mapping[str, float] | None = None) -> Match:
    """`asked` (asked_of the query) and `idfs` (covering the doc's subject terms) enable the subject signal."""
    sig = None
    same_frames = False
    if query.signatures and doc.signatures:
        doc_keys = doc.signature_keys
        for s in query.signatures:
            if s.key in doc_keys:
                sig = s
                same_frames = s.frame_key is not None and s.frame_key in doc.frame_keys
                break
    site = next((k for k in query.sites if k in doc.sites), None) if query.sites and doc.sites else None
    shared_rules = shared_diagnoses(query.rules, doc.rules) if query.rules and doc.rules else ()
    generic = bool(shared_rules) and all(generic_diagnosis(r, query.rules, doc.rules) for r in shared_rules)
    conflict = bool(query.rules) and bool(doc.rules) and not shared_rules
    shared_flags = tuple(f for f in query.flags if f in doc.flags) if query.flags and doc.flags else ()
    same_body = bool(query.body_key) and query.body_key == doc.body_key
    entities, entity_conflict = shared_entities(query.entities, doc.entities)
    subject_overlap, subject = subject_match(query, doc, asked, idfs or {}) if asked is not None else (0.0, ())
    return Match(text=text, signature=sig, same_frames=same_frames, site=site, shared_rules=shared_rules,
                 generic_rules=generic, same_body=same_body, rule_conflict=conflict, shared_flags=shared_flags,
                 shared_terms=shared_terms,
                 query_terms=len(query.vector), entities=entities, entity_conflict=entity_conflict,
                 kind=query.kind, query_has_error=bool(query.signatures or query.sites),
                 subject=subject, subject_overlap=subject_overlap)


_ASKS = ("topic:", "cap:")   # groups that say what is asked about a model
_FREE_GROUPS = ("ask:",)     # what a question asks to do: another action or thing is no near miss, only no match
STRENGTHS = ("area", "question", "strong")


def weaker(a: str, b: str) -> str:
    return min(a, b, key=lambda s: STRENGTHS.index(s) if s in STRENGTHS else -1)


def shared_entities(query: tuple[Entity, ...], doc: tuple[Entity, ...]) -> tuple[tuple[Entity, ...], bool]:
    """The entity keys both reports carry (with the weaker side's strength), and whether they are a near miss:
    both name something of one group (a model, a platform, a question) and none of it is shared. Two requests
    of different models with the same architecture class are not a near miss; the same model asked about
    different things (one report asks about a capability or a question the other does not) is not strong."""
    if not query or not doc:
        return (), False
    doc_by_key = {e.key: e for e in doc}
    shared: list[Entity] = []
    for e in query:
        other = doc_by_key.get(e.key)
        if other is not None:
            shared.append(Entity(e.key, e.reason, weaker(e.strength, other.strength)))
    q_groups = {e.group for e in query}
    d_groups = {e.group for e in doc}
    conflict = False
    for group in q_groups & d_groups:
        if group.startswith(_FREE_GROUPS):
            continue
        if not any(e.group == group for e in shared):
            if group == "model" and "arch" in {e.group for e in shared}:
                continue
            conflict = True
    asked_q = {e.key for e in query if e.key.startswith(_ASKS)}
    asked_d = {e.key for e in doc if e.key.startswith(_ASKS)}
    if asked_q != asked_d:
        shared = [Entity(e.key, e.reason, weaker(e.strength, "question")) if e.group == "model" else e
                  for e in shared]
    # one of them asks a further question the other does not ask: what they share is only the area
    shared_groups = {e.group for e in shared}
    further = {e.key for e in (*query, *doc)
               if e.strength != "area" and e.key.startswith(_ASKS) and e.group not in shared_groups}
    if further:
        shared = [Entity(e.key, e.reason, "area") if e.key.startswith(_ASKS + _FREE_GROUPS) or e.group == "model"
                  else e for e in shared]
    return tuple(shared), conflict



def shared_diagnoses(query: tuple[str, ...], doc: tuple[str, ...]) -> tuple[str, ...]:
    """Rule ids both reports were diagnosed with. A rule with a duplicate_key ("id=key") is shared only when the keys
    agree: the same rule for another architecture or library is another root cause. A missing key agrees with any."""
    out: list[str] = []
    for q in query:
        qid, _, qkey = q.lstrip(GENERIC_MARK).partition("=")
        for d in doc:
            did, _, dkey = d.lstrip(GENERIC_MARK).partition("=")
            if qid == did and (not qkey or not dkey or qkey == dkey) and qid not in out:
                out.append(qid)
    return tuple(out)


def generic_diagnosis(rule: str, query: tuple[str, ...], doc: tuple[str, ...]) -> bool:
    """Whether either report's finding of `rule` is generic: it names the failure's class, not its cause."""
    return any(is_generic(e) and rule_id(e) == rule for e in (*query, *doc))


def combine(m: Match, policy: Policy = DEFAULT_POLICY) -> float:
    """One score in [0, 1]; a pair is linked when it reaches policy.threshold_for(m)."""
    near_miss = m.entity_conflict and policy.veto_entity_conflict and not m.strong
    score = 0.0 if near_miss else policy.w_text * m.text
    if not m.strong and m.query_terms < policy.min_text_terms:
        score *= m.query_terms / policy.min_text_terms
    same_subject = m.same_subject(policy)
    if (m.entities or same_subject) and not near_miss:
        weights = policy.entity_weights
        best = max((weights.get(e.strength, 0.0) for e in m.entities), default=0.0)
        score += max(best, policy.w_subject) if same_subject else best
    if m.same_body or (m.shared_rules and not m.generic_rules):
        score += policy.w_rule
    elif m.shared_rules and not (m.signature is not None or m.site is not None):
        score += policy.w_signature
    if (m.signature is not None or m.site is not None) and not (m.rule_conflict and policy.veto_rule_conflict):
        score += policy.w_signature + (policy.w_frames if m.same_frames or m.site is not None else 0.0)
    return min(score, 1.0)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _safe(text: str) -> str:
    """Reasons end up in a GitHub comment: no mentions, no HTML, no code fences."""
    return (text.replace("@", "@\u200b").replace("<", "‹").replace(">", "›").replace("`", "'")
            .replace("\n", " ").strip())


def reason(m: Match) -> str:
    parts: list[str] = []
    if m.same_body:
        parts.append("same description")
    if m.signature is not None:
        where = " (same place in vLLM)" if m.same_frames or m.site is not None else ""
        parts.append(f"same error: {m.signature.describe()}{where}")
    elif m.site is not None:
        parts.append(f"same error raised in vLLM at {describe_site(m.site)}")
    if m.shared_rules:
        parts.append("same diagnosis: " + ", ".join(m.shared_rules))
    parts.extend(e.reason for e in m.entities[:2])
    if m.same_subject(DEFAULT_POLICY):
        parts.append("both titles ask about " + " ".join(m.subject))
    if m.shared_flags:
        parts.append("both use " + " and ".join(_flag(f) for f in m.shared_flags[:2]))
    if m.shared_terms and (not parts or m.text >= 0.3):
        parts.append(f"similar wording ({m.text:.0%}): " + ", ".join(m.shared_terms))
    return _safe("; ".join(parts)) or "similar report"
