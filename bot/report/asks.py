"""What a question asks, as an action on a thing of vLLM: `ask:select=gpu`, `ask:free=gpu-memory`,
`ask:disable=thinking`, `ask:set=id:max_tokens`.

A question names what it wants done (choose, free, turn off, get, limit, load, change) to something of vLLM: a GPU,
its memory, the thinking mode, logprobs, the chat template, or a flag, parameter or environment variable it quotes.
"How to specify which gpu to use?", "Can you choose which GPU to use" and "how to set gpu id in code" all ask
`select=gpu`, however the rest is worded. The vocabulary is the English verbs people use for these actions and
vLLM's nouns, never the wording of particular reports; a question about something outside it gets no key (its
wording still counts). The key is read from the title, where a question is stated; a title that states none
lends the first question sentence of the description ("how to free up gpu memory …").

Pure and bounded: the title and the first lines of the description as token strings (bot.report.entities.token_text),
scanned once per action and thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# action -> the words that ask for it (token_text form: lower case, plural -s dropped; `x~` a word starting with x)
ACTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("select", ("specify", "specifie~", "choose", "choosing", "chose", "select~", "pick", "pin", "pinning",
                "assign~", "designat~", "dedicat~")),
    ("free", ("free", "freeing", "release~", "unload~", "clear~", "terminat~", "destroy~", "destruct~", "delete~",
              "deleting", "del", "kill~", "shutdown", "shut down", "clean up", "cleanup", "recycl~", "reclaim~")),
    ("disable", ("disable~", "disabling", "turn off", "switch off", "deactivat~", "suppress~", "hide", "hiding",
                 "stop showing", "without")),
    ("enable", ("enable~", "enabling", "turn on", "switch on", "activat~")),
    ("get", ("get", "getting", "obtain~", "acquir~", "return~", "extract~", "retriev~", "access~", "fetch~",
             "expose~", "print~", "show~", "include~", "output~", "missing", "lack~")),
    ("abort", ("abort~", "cancel~", "interrupt~", "terminat~")),
    ("limit", ("limit~", "reduc~", "lower~", "decreas~", "restrict~", "cap", "control~")),
    ("load", ("load~", "mount~")),
    ("set", ("set", "setting", "change~", "changing", "modif~", "overrid~", "customi~", "configur~", "pass~")),
    ("install", ("install~", "build", "building", "compil~", "wheel", "pip")),
    ("run", ("run", "running", "serve", "serving", "deploy~", "host", "hosting", "start~", "launch~", "use",
             "using", "inference")),
)
# thing -> the words that name it
THINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu-memory", ("gpu memory", "vram", "memory", "kv cache memory", "gpu resource", "resource")),
    ("gpu", ("gpu", "device", "card", "cuda device", "accelerator")),
    ("thinking", ("thinking", "think", "reasoning")),
    ("logprobs", ("logprob~", "log prob~", "token probabilit~")),
    ("logits", ("logit", "logits", "raw logit~", "output logit~")),
    ("class-logits", ("classification model~", "classification task~", "classifier~", "sequence classification",
                      "reward model~")),
    ("request", ("request", "generation", "inference")),
    ("hidden-states", ("hidden state", "embedding~")),
    ("chat-template", ("chat template", "prompt template")),
    ("system-prompt", ("system prompt", "system message")),
    ("stop", ("stop token", "stop sequence", "stop word", "eos token", "eos")),
    ("log", ("log", "logging", "request log", "log output")),
    ("seed", ("seed", "random seed")),
    ("prefix-cache", ("prefix cach~", "automatic prefix")),
    ("lora", ("lora", "adapter")),
    ("image", ("image", "picture", "multi image")),
    ("usage", ("token usage", "usage info~", "usage stat~", "token count~", "prompt token", "completion token",
               "usage")),
    ("offline", ("offline", "without internet", "without an internet", "no internet", "air gap~", "airgap~",
                 "without network", "no network", "intranet")),
)
# a CUDA version a build or a wheel is asked for: `CUDA 11.8`, `cuda11.8`, `cu118` -> `cuda:11.8`
_CUDA = re.compile(r"(?<![a-z0-9])(?:cuda ?(\d{2})(?: ?\.? ?(\d))?|cu ?(\d{2})(?: ?\.? ?)(\d))(?![0-9])")
# a model, an engine or a client: freeing one (the verb first: "release the model", not "model release") frees GPU
# memory; for any other action it is too general a thing
INSTANCE = ("llm", "model", "engine", "instance", "client", "object", "worker")
# phrases that ask to choose a GPU without the verb (token_text form: `CUDA_VISIBLE_DEVICES` -> "cuda visible device")
SELECTING = ("gpu id", "device id", "gpu index", "which gpu", "specific gpu", "certain gpu", "particular gpu",
             "second gpu", "specific device", "certain device",
             "specific cuda device", "cuda visible device", "device map")
# the things each action is asked of (an identifier `id:…` goes with any action but choosing and freeing)
FITS: dict[str, tuple[str, ...]] = {
    "select": ("gpu",),
    "free": ("gpu-memory", "gpu"),
    "disable": ("thinking", "log", "prefix-cache", "lora", "stop", "system-prompt", "chat-template", "image"),
    "enable": ("thinking", "log", "prefix-cache", "lora", "stop", "system-prompt", "chat-template", "image"),
    "get": ("logprobs", "logits", "class-logits", "hidden-states", "log", "image", "usage"),
    "abort": ("request",),
    "limit": ("gpu-memory", "log", "image"),
    "load": ("lora", "chat-template", "image"),
    "set": ("gpu", "gpu-memory", "thinking", "chat-template", "system-prompt", "stop", "seed", "log", "logprobs"),
    "install": ("cuda", "offline"),
    "run": ("offline",),
}
# things that are a question by themselves, whatever the verb: running without internet access
IMPLIED = {"offline": "run"}
# things that name several objects, each with its own answer: "the logs" are the request log, the HTTP access log,
# the periodic stats, the progress bar of the offline class or the log level; asking about one is only the area
SEVERAL = frozenset({"log"})
WINDOW = 5            # words between the action and the thing
MAX_TITLE = 300
MAX_LEAD = 600

# A title that reports something going wrong describes a failure, which has many causes, not a request or a
# question with one answer: "vllm in WSL2 cannot find the GPU", "memory use is still huge", "install fails".
SYMPTOM = re.compile(r"\b(?:cannot|can ?'?t|can not|unable|fail\w*|error\w*|crash\w*|broken|not work\w*|"
                     r"doesn'?t work|does not work|stuck|hang\w*|freez\w*|wrong|slow\w*|still|no longer|"
                     r"incorrect|garbled|endless|exception)\b", re.IGNORECASE)
# A title that asks for something to be supported or added ("Qwen3 Omni Support", "please add X"): a request,
# whichever form it was filed with, unless it reports something going wrong
_ASKS_FOR = re.compile(r"\b(?:support\w*|add|adding|request\w*|implement\w*|adapt\w*|plan\w*)\b", re.IGNORECASE)


def asks_for_support(title: str) -> bool:
    """The title asks for something to be supported or added, and reports nothing going wrong."""
    title = title[:MAX_TITLE]
    return _ASKS_FOR.search(title) is not None and SYMPTOM.search(title) is None


_QUESTION = re.compile(r"^\s*(?:how|can|could|is there|is it|are there|what|which|why|where|does|do|should|any way)\b|"
                       r"\?|\bhow to\b|\bhow can\b|\bhow do\b|\bis it possible\b|\bis there a way\b")
_IDENT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]{2,40}|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+){1,5})(?![\w-])")
_WORDS = re.compile(r"[a-z0-9_]+")
_SENTENCE = re.compile(r"[^.?!\n]{0,300}[.?!\n]?")


def _alternation(phrases: tuple[str, ...]) -> str:
    out = []
    for p in phrases:
        words = [re.escape(w) for w in p.rstrip("~").split()]
        out.append(r" ".join(words) + (r"[a-z0-9_]*" if p.endswith("~") else ""))
    return r"(?<![a-z0-9_])(?:" + "|".join(out) + r")(?![a-z0-9_])"


# what is not a word character of the patterns: a phrase's first word stands between two of them (or an end)
_NOT_WORD_CHAR = re.compile(r"[^a-z0-9_]")


class _Words:
    """Phrases as one pattern, searched only when the text holds the first word of one of them (`gate`)."""

    def __init__(self, phrases: tuple[str, ...], pattern: re.Pattern[str] | None = None) -> None:
        self.pattern = pattern or re.compile(_alternation(phrases))
        # " word " for a first word matched whole, " word" for one that may go on (a single word with `~`)
        self.needles = tuple(sorted({" " + p.rstrip("~").split()[0] + ("" if p.endswith("~") and " " not in p else " ")
                                     for p in phrases}))

    def positions(self, text: str, gate: str) -> list[int]:
        """Word positions of the matches in `text`; `gate` is `text` as `gate(text)` gives it."""
        if not any(n in gate for n in self.needles):
            return []
        return [text.count(" ", 0, m.start()) for m in self.pattern.finditer(text)]


def gate(text: str) -> str:
    """`text` with every character that is not a word character of the patterns a space, between two spaces: a
    phrase's first word is in it between spaces wherever the phrase's pattern matches `text`."""
    return f" {_NOT_WORD_CHAR.sub(' ', text)} "


def _phrase(p: str) -> re.Pattern[str]:
    return re.compile(_alternation((p,)))


def _compile(groups: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[tuple[str, _Words], ...]:
    """One alternation per action or thing: the title is scanned once for each that it may hold."""
    return tuple((name, _Words(phrases)) for name, phrases in groups)


# "offline inference", "offline batch", "offline LLM" name vLLM's offline API (the `LLM` class), not running without
# internet access; "offline mode" (HF_HUB_OFFLINE) and "run offline" still do
OFFLINE_API = ("inference", "infer", "batch~", "generat~", "llm", "engine", "api", "serving", "server", "usage",
               "example", "script", "scoring", "embedding~", "rollout~", "evaluation", "eval", "decoding", "chat")


def _offline_thing(phrases: tuple[str, ...]) -> _Words:
    api = _alternation(OFFLINE_API)
    pattern = _alternation(phrases).replace(r"(?:offline|", r"(?:offline(?! " + api + r")|", 1)
    return _Words(phrases, re.compile(pattern))


_ACTIONS = _compile(ACTIONS)
_CLASS_LOGITS = re.compile(_alternation(dict(THINGS)["class-logits"]))
_THINGS = tuple((name, _offline_thing(phrases) if name == "offline" else _Words(phrases)) for name, phrases in THINGS)
_INSTANCE = _Words(INSTANCE)
_SELECTING = _Words(SELECTING)


def _positions(text: str, patterns: tuple[re.Pattern[str], ...]) -> list[int]:
    """Word positions of the pattern matches in a token string."""
    out = []
    for p in patterns:
        for m in p.finditer(text):
            out.append(text.count(" ", 0, m.start()))
    return out


def identifiers(raw_title: str) -> list[str]:
    """Flags, parameters and environment variables a title quotes: `--max-model-len`, `max_tokens`,
    `CUDA_VISIBLE_DEVICES` (snake_case or a flag; a model id or a file name is not one)."""
    out = []
    for m in _IDENT.finditer(raw_title[:MAX_TITLE]):
        word = m.group(1)
        if "/" in word or "." in word:
            continue
        ident = word.lstrip("-").replace("-", "_").lower()
        if "_" in ident:                  # one word (`--model`) is too general a thing
            out.append(ident)
    return out


def _cuda_versions(tokens: str) -> list[tuple[int, str]]:
    out = []
    for m in _CUDA.finditer(tokens):
        major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out.append((tokens.count(" ", 0, m.start()), f"cuda:{major}.{minor or 0}"))
    return out


def frame(tokens: str, raw: str = "", tokenise: Callable[[str], str] = str.lower,
          installing: bool = False) -> tuple[str, str] | None:
    """(action, thing) of the first question in a token string: an action with a thing of vLLM within WINDOW
    words (either order); `raw` is the same text as written, for the identifiers it quotes, and `tokenise` what
    made the token string of it (bot.report.entities.token_text). An installation report that names a CUDA
    version asks for a build for it, whatever its verb ("Is CUDA 12.1 supported?")."""
    gated = gate(tokens)
    if _SELECTING.positions(tokens, gated):
        return "select", "gpu"
    if installing:
        cuda = _cuda_versions(tokens)
        if cuda:
            return "install", cuda[0][1]
    things = [(pos, name) for name, words in _THINGS for pos in words.positions(tokens, gated)]
    things += _cuda_versions(tokens)
    for ident in identifiers(raw):
        things += [(pos, "id:" + ident) for pos in _positions(tokens, (_phrase(tokenise(ident).strip()),))]
    instances = _INSTANCE.positions(tokens, gated)
    best: tuple[int, int, str, str] | None = None
    for action, words in _ACTIONS:
        for a in words.positions(tokens, gated):
            candidates = list(things)
            if action == "free":
                candidates += [(i, "gpu-memory") for i in instances if i > a]
            for t, thing in candidates:
                kind = "cuda" if thing.startswith("cuda:") else thing
                if kind not in FITS[action] and not (thing.startswith("id:") and action not in ("select", "free")):
                    continue
                gap = abs(t - a)
                if 0 < gap <= WINDOW and (best is None or (a, gap) < best[:2]):
                    best = (a, gap, action, thing)
    if best is None:
        implied = next((thing for _, thing in things if thing in IMPLIED), None)
        return (IMPLIED[implied], implied) if implied else None
    action, thing = best[2], best[3]
    if thing == "logits" and any(name == "class-logits" for _, name in things):
        thing = "class-logits"            # a classifier's logits come from the pooling API, not from generation
    if action == "free" and thing == "gpu":
        thing = "gpu-memory"              # "free the GPU" is its memory
    if action == "set" and thing in ("gpu", "gpu-memory"):
        action = "select" if thing == "gpu" else "limit"   # "set the gpu id", "set the memory it may use"
    return action, thing


def in_title(found: tuple[str, str], title_tokens: str) -> tuple[str, str]:
    """A question read from the description, narrowed by what the title names: the logits of a classification
    model the title names are a classifier's."""
    if found[1] == "logits" and _CLASS_LOGITS.search(title_tokens):
        return found[0], "class-logits"
    return found


def is_question(raw: str) -> bool:
    """Phrased as a question: "how to …", "can vLLM …", "is it possible …", a question mark."""
    return bool(_QUESTION.search(raw[:MAX_TITLE].lower()))


def question_sentence(raw_lead: str) -> str:
    """The first sentence of a description that asks how to do something ("" when none does)."""
    for m in _SENTENCE.finditer(raw_lead[:MAX_LEAD]):
        sentence = m.group(0).strip()
        if sentence and _QUESTION.search(sentence.lower()):
            return sentence
    return ""
