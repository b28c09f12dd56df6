"""What a request or a question asks about, as the words of its title: "[Feature]: vllm support for Ascend NPU" and
"Request for Ascend NPU support" both ask about `ascend npu`; "support whisper?" and "Whisper support" about `whisper`.

A title names its subject in a few words surrounded by the wording of asking: the template prefix, question words,
request verbs ("support", "add", "please", "is it possible"), vLLM's generic nouns (model, server, API, inference).
What is left, compared across two reports with idf weights, says whether they ask for the same thing however the
rest is worded; the same name with another version number ("Qwen2-VL" / "Qwen2.5-VL", "Python 3.12" / "3.13") is
another request. Chinese words go through the glossary first ("支持internlm2" asks about `internlm2`).

Pure: token lists in, a similarity out; idf comes from the caller (the duplicate index).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from bot.dupes.text import clean_title, joined_versions, words_and_terms
from bot.glossary import with_english
from bot.report.asks import SYMPTOM

MAX_TERMS = 8

# The wording of asking, as index terms (lower case, light stem): request verbs, question words that are not stop
# words already, and vLLM's generic nouns. Never the subject of a request.
_ASKING_WORDS = """
support supported supporting request requested feature add adding added implement implementation implemented please
plan planned possible possibility help question want wanted need able whether available availability ready hope wish
thank consider provide allow integrate integration integrated compatible compatibility enable enabling adapt
adaptation vllm model llm inference infer serv server api openai endpoint engine usage work new current currently
instead doesn don isn didn won ask inquiry regarding issue problem use using get gett obtain acquire acquir
retrieve retriev make serve deploy deployment requir require mode method
"""
# A model's variant and size say which checkpoint, not which model is asked for: "Kimi-K2-Instruct" and "Kimi K2",
# "BaiChuan-13B-Chat" and "baichuan" ask for the same support
_VARIANT_WORDS = "instruct chat it hf base preview latest sft dpo"
ASKING = frozenset(_ASKING_WORDS.split() + _VARIANT_WORDS.split())
# The kind of thing a name is, as index terms: after the name it classifies ("GPTQ quantization", "Metal backend",
# "Gaudi accelerators", "Jamba architecture") it adds nothing to what is asked; alone or first ("quantization
# support for LoRA") it is what is asked about
_CATEGORY_WORDS = """
quantization quantisation quant backend format hardware accelerator device chip architecture family serie kernel
"""
CATEGORY = frozenset(_CATEGORY_WORDS.split())
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:\d+x)?[Aa]?\d+(?:\.\d+)?[BbMm](?![A-Za-z0-9])")
# the organisation of a Hub id (`deepseek-ai/` of `deepseek-ai/DeepSeek-OCR`) names who published it, not the model
_HUB_ORG = re.compile(r"(?<![\w/.-])[A-Za-z][\w.-]{1,38}/(?=[A-Za-z0-9][\w.]*-)")
_NAME_VERSION = re.compile(r"^([a-z]+)(\d[a-z0-9]*)$")


def request_subject(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(terms, words): the title's index terms that say what it asks about, in order, at most MAX_TERMS, and each
    one as the title writes it (for a reason a maintainer reads); none for a title that reports a failure."""
    text = with_english(clean_title(title))
    if SYMPTOM.search(text):
        return (), ()
    if "/" in text:
        text = _HUB_ORG.sub("", text)
    text = joined_versions(_SIZE.sub(" ", text))
    seen: dict[str, str] = {}
    after_name = False
    for word, term in words_and_terms(text.replace("\n", " ")):
        if term in ASKING or (after_name and term in CATEGORY):
            after_name = False
            continue
        after_name = True
        if term not in seen:
            seen[term] = word.lower()
            if len(seen) == MAX_TERMS:
                break
    return tuple(seen), tuple(seen.values())


def request_terms(title: str) -> tuple[str, ...]:
    return request_subject(title)[0]


@lru_cache(maxsize=65536)
def _versioned(term: str) -> tuple[str, bool]:
    """(name, is a number) of a term: `qwen25` -> ("qwen", False), `312` -> ("", True), `npu` -> ("", False)."""
    m = _NAME_VERSION.match(term)
    return (m.group(1) if m else ""), term[0].isdigit()


def other_version(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same name with different versions: a number on each side and none shared, or a name carried by both
    with different version suffixes and not the other's one (`qwen2` vs `qwen25`, `exl2` vs `exl3`)."""
    numbers_a = {t for t in a if _versioned(t)[1]}
    numbers_b = {t for t in b if _versioned(t)[1]}
    if numbers_a and numbers_b and numbers_a.isdisjoint(numbers_b):
        return True
    names: dict[str, set[str]] = {}
    for t in a:
        name = _versioned(t)[0]
        if name:
            names.setdefault(name, set()).add(t)
    if not names:
        return False
    for t in b:
        name = _versioned(t)[0]
        if name in names and t not in names[name] and names[name].isdisjoint(b):
            return True
    return False


def overlap(a: tuple[str, ...], b: tuple[str, ...], idf: Mapping[str, float]) -> float:
    """Weighted overlap of two subjects: the idf of the shared terms over the larger side's; 0 for other versions
    or when only a number is shared."""
    return Asked(a, a, idf, 0.0).overlap(b, idf)[0]


class Asked:
    """One request's or question's subject, weighed once for every earlier report it is compared with."""

    __slots__ = ("terms", "words", "weights", "total", "minimum")

    def __init__(self, terms: tuple[str, ...], words: tuple[str, ...], idf: Mapping[str, float],
                 minimum: float) -> None:
        self.terms = terms
        self.words = words if len(words) == len(terms) else terms
        self.weights = {t: idf.get(t, 0.0) for t in terms}
        self.total = sum(self.weights.values())
        self.minimum = minimum          # the overlap that counts (Policy.min_subject)

    def overlap(self, other: tuple[str, ...], idf: Mapping[str, float]) -> tuple[float, tuple[str, ...]]:
        """(overlap with another subject, the shared words as this report writes them when it reaches `minimum`)."""
        weights = self.weights
        shared = sum(weights[t] for t in other if t in weights)
        if shared <= 0:
            return 0.0, ()
        top = max(self.total, sum(idf.get(t, 0.0) for t in other))
        value = shared / top if top > 0 else 0.0
        if value < self.minimum:
            return value, ()              # too low to count: no version check, no words
        if all(t[0].isdigit() for t in self.terms if t in other) or other_version(self.terms, other):
            return 0.0, ()                # a version number alone names nothing; another version is another request
        return value, tuple(w for t, w in zip(self.terms, self.words, strict=True) if t in other)
