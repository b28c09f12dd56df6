"""The model a report is about, and whether the report is about that model itself (label evidence, bot/labels.py).

Naming a model is not enough: most crash reports name the model they served. What says the model itself is the
subject, and so `new-model` (vLLM's label for model support):

* its output is wrong in kind, not in speed: gibberish, garbled or meaningless text, a "correctness" problem,
  empty or repeated output, or lower accuracy than (or results different from) its reference implementation, from
  a model the title names;
* the title says that model fails to load ("Gemma3 failing to load some weights", "X load error"), not an adapter
  nor a quantized checkpoint, or names its tokenizer ("X fails to start with the mistral tokenizer");
* the title says that model fails to start, run or deploy ("Can't start `vllm serve X`", "MI300X cannot deploy X"),
  not that the engine met a fault while running it (an illegal memory access, an OOM, a hang, a crash);
* the title is nothing but the model's name ("[Bug]: DeepSeek-V3").

A mixture-of-experts model the title names is the `moe` topic, unless the title is about a feature the model only
went through (a tool-call parser, the OpenAI server, structured output, speculative decoding, pipeline
parallelism), the deployment or machine it ran on (several nodes, the CPU, a TPU or Intel GPU, an old or new NVIDIA
GPU), its speed, a fault of the engine it met (an illegal memory access, a dead engine), or that model failing to
load or start itself: those reports are about that.

Pure and bounded: the title and the prose the caller passes are searched once by patterns without nested
quantifiers.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.literals import Gated
from bot.matchset import MatchSet
from bot.report.entities import model_family, title_models

MAX_TITLE = 400        # GitHub caps titles at 256 characters; a longer one is not a title
MAX_PROSE = 20_000     # the reporter's own words that are searched for wrong output

# families named without a size or a digit ("bloom's output", "Starcoder is slow", "Mistral Small fails to load")
FAMILIES = (r"(?<![\w-])(qwen|llama|glm|chatglm|gemma|mistral|mixtral|deepseek|internvl|internlm|minicpm|phi|kimi|"
            r"minimax|baichuan|falcon|olmo|granite|jamba|nemotron|ernie|hunyuan|exaone|llava|pixtral|molmo|idefics|"
            r"paligemma|cohere|command[-_ ]r|aya|starcoder\w*|codellama|gpt[-_ ]?oss|grok|seed[-_ ]oss|bloom\w*|"
            r"mpt|vicuna|gpt[-_ ]?j|gpt[-_ ]?neox|pythia|stablelm|dbrx|arctic|mamba|aquila|xverse|fuyu|"
            r"smol\w*|t5|whisper)(?![a-z])(?![-_.]?cpp\b)")

# mixture-of-experts models as people name them: "Qwen3-30B-A3B" (active parameters), "8x7B" and "17B-128E" (experts
# after the size: "H20-3e" is a GPU),
# and families whose every release is MoE (not the dense distills of DeepSeek-R1: "DeepSeek-R1-Distill-Qwen-14B")
MOE_MODELS = (r"[-_]a\d{1,2}(\.\d)?b\b|\b\d{1,2}x\d{1,3}b\b|\d(\.\d)?b-\d{1,3}e\b|\bmixtral\b|"
              r"\bdeepseek[-_ ]?(v2|v3|r1(?![-_ ]?(distill|(1\.5|7|8|14|32|70)b\b)))|"
              r"\bllama[-_ ]?4\b|\bmaverick\b|\bqwen\d?(\.\d)?[-_ ]?moe\b|\bqwen\d?(\.\d)?[-_ ]?next\b|\bkimi[-_ ]?k2|"
              r"\bdbrx\b|\bjamba\b|\bgrok[-_ ]?\d|\bminimax[-_ ]?m\d|\bglm[-_ ]?4\.[5-7](?![\d.]*v)\b|"
              r"\bhunyuan[-_ ]?a\d|\bgpt[-_ ]?oss\b|\bolmoe\b|\bphi[-_ ]?3\.5[-_ ]?moe\b")

# output that is wrong in kind: text nobody can read, or a model that answers something else than it should
WRONG_OUTPUT = (r"\b(gibberish|garbled|garbage|nonsens\w*|meaningless|messy code|unreadable|乱码|"
                r"random (tokens?|characters?|symbols?|words?|text)|correctness (issue|problem|bug)s?|"
                r"wrong (output|answer|result|generation)s?|(output|generat\w*|answers?|results?|text) "
                r"(is|are) (wrong|incorrect|broken|noise|garbage))\b|"
                # nothing, or the same thing over and over
                r"\b(empty|blank)\W{0,6}(outputs?|responses?|content|strings?|tokens?|answers?|results?|text)\b|"
                r"\b(outputs?|responses?|content|answers?|generations?|results?|text) (is|are|was|were|returns?) "
                r"(empty|blank)\b|\bno output\b|"
                r"\brepeat(ed|s|ing)?\W{0,3}(outputs?|tokens?|text|words?|sentences?|answers?|responses?|content|"
                r"itself|the same)\b|\b(outputs?|responses?|answers?|generat\w*|text)\W{0,3}(keeps? )?repeat\w*|"
                r"\brepetitive (output|generation|text|tokens?)|\bonly (generates?|outputs?|returns?|produces?) "
                r"(the same|exclamation|empty|one|a single)\b")

# answers that differ from the model's reference implementation or score lower than it
ACCURACY = (r"\b(degraded|lower|low|poor|worse|decreased?|dropp?ed) accuracy\b|\baccuracy (degradation|drop\w*|"
            r"decrease\w*|loss|regression|gap)\b|\baccuracy (is|was) (low|lower|worse|bad)\b|"
            r"\binconsistent (outputs?|results?|answers?|generations?)\b|\b(outputs?|results?|answers?) (are |is )?"
            r"inconsistent\b|\binconsistencies between\b|\b(different|mismatch\w*) (outputs?|results?|logprobs|logits|"
            r"answers?)\b")

# the title says the model fails to load (its weights, config or tokenizer), not a LoRA adapter
LOAD_FAILURE = (r"\b(fail\w*|unable|can ?not|can't|cannot|error\w*|problem|issue|crash\w*)\b[^.\n]{0,20}\bload\w*|"
                r"\bload\w*[^.\n]{0,6}\b(fail\w*|error\w*|problem|issue)\b")
# or that it fails to start, run or deploy: that model, unless the title names a fault of the engine or the machine
# it only ran into (an illegal memory access, an OOM, a hang: "CUDA errors when running X" happened where X ran; a
# crash, too, is most often the engine's: "crashes on start-up with X")
START_FAILURE = (r"\b(fail\w*|unable|can ?not|can't|cannot|error\w*|problem|issue)\b[^.\n]{0,20}"
                 r"\b(start|run|serv|deploy|launch)\w*|"
                 r"\b(start|run|serv|deploy|launch)\w*[^.\n]{0,6}\b(fail\w*|error\w*|problem|issue)\b|"
                 # "serve X error", "部署 X 报错" (not "I run X and get an error": that is any failure of any model)
                 r"\b(serv|deploy)\w*[^\n]{0,40}\b(fail\w*|error\w*|problem|issue)\b|"
                 r"(部署|启动|运行|推理)[^。\n]{0,40}(报错|失败|出错|错误|问题)")
# or, right after the model's name, that it fails ("X-8B failed", "X fails with the FlashInfer backend", "X 报错")
# (a few words later it is what the reporter did with it: "I run X and get an error")
FAILS_AFTER_NAME = (r"[^.\n]{0,8}?\b(fail\w*|errors?|no longer work\w*|stopped working|not working|"
                    r"(does not|doesn'?t) work)\b|[^。\n]{0,10}?(报错|失败|出错)")
ENGINE_FAULT = (r"\b(illegal memory access|cuda error|out of memory|oom|memory (issues?|problems?)|nccl|hangs?|hanging|"
                r"stuck|timeouts?|timed out|segfault|segmentation fault|slow\w*|(async)?enginedeaderror|"
                r"engine (is |was )?dead)\b")
TOKENIZER = r"\b\w{0,40}tokeni[sz]\w*"   # (and a tokenizer class: "MistralTokenizer not working")
NOT_A_MODEL_LOAD = r"\b(lora|adapters?|peft|plugins?|datasets?|images?|videos?|audio|library|module|extension|dll)\b"

# "Support X" / "Add X" / "support for X": a request whose object is the model (not a feature on it)
REQUEST = r"\b(support(s|ed|ing)?|add(s|ed|ing)?|implement\w*|integrat\w*|enable)\b"
REQUEST_TOPICS = frozenset({"new-model", "moe", "multi-modality"})
# another accelerator than an NVIDIA GPU, or the CPU, a model runs on (an old or new NVIDIA GPU the title names is that
# GPU's question: "cannot run X on a V100")
PLATFORM_TOPICS = frozenset({"rocm", "cpu", "intel-gpu", "tpu"})
# where a model the title says fails ran: another accelerator, or an NVIDIA GPU the title names ("X fails to start on
# 2080 Ti", "X fails with FlashInfer on SM120": that model there)
FAILS_ON_TOPICS = PLATFORM_TOPICS | {"nvidia-compat"}

# what the title is about when it is not the model itself
SUBJECT_TOPICS = frozenset({"tool-calling", "frontend", "structured-output", "speculative-decoding",
                            "pipeline-parallel"})
# what else a title naming a mixture-of-experts model can be about: where it ran and how fast (the title's own words:
# a GPU it names, "on 2 nodes", "with the CPU backend", "severe performance")
MOE_ELSEWHERE_TOPICS = frozenset({"multi-node", "performance", "cpu", "tpu", "intel-gpu", "nvidia-compat"})
# (and a model that fails to load or start itself is that model's report: model_fails_itself)

# a quantization format that only qualifies something else: the KV cache's data type ("FP8 KV cache"), or a model's
# id ("Qwen3-30B-A3B-FP8", "Mistral-7B-Instruct-AWQ", "x-bnb-4bit", "Llama 405B FP8": the report may still be about
# that checkpoint)
QUANT_FORMAT = r"(awq|gptq|gguf|bnb|fp8|fp4|nvfp4|mxfp4|int4|int8|w8a8|w4a16|w4a8|[48]bits?|autoround|hqq|exl2)"
# (also as the flag sets it: "kv-cache-dtype fp8")
KV_CACHE_TYPE = (r"\b(fp8|int8|fp4|nvfp4)(?:[-_ ]?(e4m3|e5m2)\w*)?[-_ ](kv|k/v)(?:[-_ ]?cache)?\b|"
                 # "kv_cache_dtype to fp8 or fp8_e4m3", "kv cache fp8", "KV cache in FP8"
                 r"\bkv[-_ ]?cache(?:[-_ ]dtype)?\W{0,3}(?:(?:set to|to|in|as|is|=)\W{1,3})?"
                 r"(fp8|int8|fp4|nvfp4)(?:[-_ ]?(e4m3|e5m2)\w*)?(?: or (fp8|int8)(?:[-_ ]?(e4m3|e5m2)\w*)?)?\b")
MODEL_ID_FORMAT = r"((?<=[a-z0-9.][-_])|(?<=\d[bm] ))" + QUANT_FORMAT + r"(?![a-z0-9])"
# a kind of model, not a model: "a VLM", "vision models", "multimodal LLMs"
MODEL_KIND = (r"\b(vlms?|(vision|multi[-_ ]?modal|vl|vision[-_ ]language)[-_ ](language[-_ ])?(models?|llms?))\b|"
              # or a vision-language model by its id ("Qwen3-VL-30B-A3B", "InternVL3-8B", "llava-1.5-7b")
              r"\b[a-z][a-z0-9.]{0,20}([-_]vl|\dvl|internvl|llava|[-_]vit)([-_.][a-z0-9.]{1,20}){0,6}\b|\binternvl\w*|"
              r"\bllava\w*|"
              # (written apart: "qwen 2.5 vl")
              r"\b[a-z][a-z0-9]{1,20}[-_ ]?\d{1,2}(\.\d)?[-_ ]vl\b")
# what a title is about when a quantized model only went through it (a regression, a KV connector, an adapter, running
# out of memory)
QUANT_FEATURE_TOPICS = frozenset({*SUBJECT_TOPICS, "kv-cache", "performance", "lora", "memory"})

_FAMILY = re.compile(FAMILIES, re.IGNORECASE | re.ASCII)
# (one RE2 pass, bot/matchset.py: the answers of `re`, which tries each of its alternatives at every position)
_MOE = MatchSet([MOE_MODELS])
_DENSE_DISTILL = re.compile(r"r1[-_ ]?(distill|(1\.5|7|8|14|32|70)b\b)", re.IGNORECASE | re.ASCII)
# (most titles hold none of a pattern's literal strings: bot.literals.Gated skips their scan)
_WRONG = Gated(re.compile(WRONG_OUTPUT, re.IGNORECASE))
_ACCURACY = Gated(re.compile(ACCURACY, re.IGNORECASE | re.ASCII))
# the prose (up to MAX_PROSE) is searched by one RE2 pass per pattern (bot/matchset.py: the answers of `re`)
_WRONG_IN_PROSE = MatchSet([WRONG_OUTPUT], re.IGNORECASE)
_ACCURACY_IN_PROSE = MatchSet([ACCURACY], re.IGNORECASE | re.ASCII)
_LOAD = Gated(re.compile(LOAD_FAILURE, re.IGNORECASE | re.ASCII))
_START = Gated(re.compile(START_FAILURE, re.IGNORECASE | re.ASCII))
_FAILS_AFTER_NAME = re.compile(FAILS_AFTER_NAME, re.IGNORECASE | re.ASCII)
_ENGINE_FAULT = Gated(re.compile(ENGINE_FAULT, re.IGNORECASE | re.ASCII))
_NOT_MODEL = Gated(re.compile(NOT_A_MODEL_LOAD, re.IGNORECASE | re.ASCII))
_TOKENIZER = Gated(re.compile(TOKENIZER, re.IGNORECASE | re.ASCII))
_REQUEST = Gated(re.compile(REQUEST, re.IGNORECASE | re.ASCII))
_KV_CACHE_TYPE = Gated(re.compile(KV_CACHE_TYPE, re.IGNORECASE | re.ASCII))
_MODEL_ID_FORMAT = Gated(re.compile(MODEL_ID_FORMAT, re.IGNORECASE | re.ASCII))
_MODEL_KIND = Gated(re.compile(MODEL_KIND, re.IGNORECASE | re.ASCII))
# a class of a library ("Qwen2Tokenizer", "LlamaConfig", "GPUModelRunnerV2") is not a model
_CLASS_NAME = Gated(re.compile(r"\b\w+(Tokenizer(Fast)?|Config|Processor|Runner|Worker|Executor|Scheduler|Manager)"
                               r"(V\d)?\b"))
# a release ("v0.11.x", "0.10.2", "vllm-0.7.4"), a GPU ("H20-3e", "A100-80G", "RTX-4090") or a library's version
# ("numpy2.0", "torch-2.7") written like a model id
_NOT_A_MODEL_NAME = re.compile(r"v?\d+(\.(\d+|x))+\w*|(rtx[-_ ]?)?(a|h|l|b|gb|mi)\d{2,3}\w*([-_]\w+)?|"
                               r"(rtx[-_ ]?)?[1-5]0[5-9]0(ti)?([-_]\w+)?|"
                               r"(numpy|torch|pytorch|python|py|cuda|cu|rocm|triton|transformers|nccl|gcc|glibc|ubuntu|vllm|"
                               r"wsl)"
                               r"[-_ ]?v?\d[\w.]*", re.IGNORECASE | re.ASCII)
_WORD = re.compile(r"[A-Za-z0-9]+")
_TITLE_WORD = re.compile(r"[^\W_]+")   # any script: "部署 X 报错" is more than X
# words a title holds besides the model's name when it is nothing but the name
_FILLER = frozenset({"bug", "issue", "model", "models", "error", "errors", "problem", "the", "with", "vllm", "on",
                     "in", "for", "a", "an"})


def named_models(title: str) -> list[str]:
    """The models a title names: Hub ids, words with a size, words of a known family (not a release or a GPU)."""
    title = _CLASS_NAME.sub(" ", title[:MAX_TITLE])
    names = [n for n in _title_models(title) if not _NOT_A_MODEL_NAME.fullmatch(n)]
    names += [m.group(0) for m in _FAMILY.finditer(title)]
    return names


def names_moe_model(title: str) -> bool:
    title = title[:MAX_TITLE]
    return bool(_MOE.matching(title)) or any((model_family(n) or ("", False))[1] for n in _title_models(title)
                                                 if not _DENSE_DISTILL.search(n))


@lru_cache(maxsize=1)
def _title_models(title: str) -> tuple[str, ...]:
    """`title_models(title)`; the last title's answer is kept, as labels ask both questions of one title in a row."""
    return tuple(title_models(title))


def model_is_the_subject(title: str, prose: str, title_topics: set[str] | frozenset[str] = frozenset()) -> float:
    """How strongly the report is about the model the title names failing itself, or asks for it (0, 0.5 or 1).
    `title_topics`: what else the title is about (a request for LoRA or FP8 on a model is about that feature)."""
    title, prose = title[:MAX_TITLE], prose[:MAX_PROSE]
    names = named_models(title)
    if names and _asks_for_model(title, names) and title_topics <= REQUEST_TOPICS and not _NOT_MODEL.search(title):
        return 1.0
    if not names:
        return 0.5 if _WRONG.search(title) else 0.0
    if (_WRONG.search(title) or _WRONG_IN_PROSE.matching(prose)) and not title_topics & SUBJECT_TOPICS:
        return 1.0   # (empty content through a reasoning parser, gibberish under a grammar: that feature's)
    # (lower accuracy with FP8 or a LoRA is that feature's report)
    if (_ACCURACY.search(title) or _ACCURACY_IN_PROSE.matching(prose)) and title_topics <= REQUEST_TOPICS:
        return 1.0
    if _fails_itself(title, names, title_topics):
        return 1.0
    words = [w.lower() for w in _TITLE_WORD.findall(_CLASS_NAME.sub(" ", title))]
    named = {w.lower() for n in names for w in _WORD.findall(n)}
    if words and all(w in named or w in _FILLER or w.isdigit() for w in words):
        return 1.0
    return 0.0


def model_fails_itself(title: str, title_topics: set[str] | frozenset[str] = frozenset()) -> bool:
    """The title says the model it names fails to load, start or run, or fails right after its name."""
    title = title[:MAX_TITLE]
    names = named_models(title)
    return bool(names) and _fails_itself(title, names, title_topics)


def _fails_itself(title: str, names: list[str], title_topics: set[str] | frozenset[str]) -> bool:
    # (a quantized checkpoint that fails to load is the quantization's report)
    if (_LOAD.search(title) and not _NOT_MODEL.search(title) and title_topics <= REQUEST_TOPICS) \
            or _TOKENIZER.search(title):
        return True
    # (on an AMD GPU or the CPU backend too: "X fails to start on MI300X")
    # (a quantized checkpoint that fails to start is, as one that fails to load, the quantization's report)
    # (that it fails to run on an NVIDIA GPU the title names is the GPU's question, "cannot run X on a V100", unless
    # the title says the model itself fails there)
    start = _START.search(title) is not None and title_topics <= REQUEST_TOPICS | PLATFORM_TOPICS
    fails = _fails_after_name(title, names) and title_topics <= REQUEST_TOPICS | FAILS_ON_TOPICS
    return (start or fails) and not _NOT_MODEL.search(title) and not _ENGINE_FAULT.search(title) \
        and not _MODEL_ID_FORMAT.search(title)


def _fails_after_name(title: str, names: list[str]) -> bool:
    """A failure word follows a model's name: "Qwen3-Embedding-8B failed", "Gemma-4 fails when forcing FlashInfer"."""
    for name in names:
        at = title.find(name)
        if at >= 0 and _FAILS_AFTER_NAME.match(title, at + len(name)):
            return True
    return False


def _asks_for_model(title: str, names: list[str]) -> bool:
    """A request word comes before the model's name: "Add support for Qwen3-Next", "Inquiry about support for X"."""
    request = _REQUEST.search(title)
    if request is None:
        return False
    first = min((i for i in (title.find(n) for n in names) if i >= 0), default=-1)
    return first > request.start()


def moe_is_the_subject(title: str, title_topics: set[str],
                       word_topics: set[str] | frozenset[str] = frozenset()) -> bool:
    """The title names a mixture-of-experts model and is not about a feature the model only went through, nor (by
    `word_topics`, what the title's words are about) where it ran (unless the checkpoint is quantized) or how fast,
    nor a fault of the engine it met."""
    if title_topics & SUBJECT_TOPICS or not names_moe_model(title) or _ENGINE_FAULT.search(title[:MAX_TITLE]):
        return False
    # (a quantized MoE checkpoint runs the quantized expert kernels wherever it is deployed: "5090 cannot run X-NVFP4")
    return "quantization" in title_topics or not (word_topics & MOE_ELSEWHERE_TOPICS
                                                  or model_fails_itself(title, title_topics))


def without_kv_cache_type(text: str) -> str:
    """`text` with the KV cache's data type ("FP8 KV cache") blanked out."""
    return _KV_CACHE_TYPE.sub(" ", text)


def without_model_id_formats(text: str) -> str:
    """`text` with the quantization formats written into a model's id blanked out."""
    return _MODEL_ID_FORMAT.sub(" ", text)


def quantized_model_is_the_subject(title_topics: set[str]) -> bool:
    """The title names a quantized checkpoint ("Qwen3-30B-A3B-NVFP4 fails to start") and is not about a feature the
    model only went through ("speculative decoding crash with X-FP8", "throughput regression with X-FP8")."""
    return not title_topics & QUANT_FEATURE_TOPICS


def without_model_kind(text: str) -> str:
    """`text` with the words that name a kind of model ("VLM", "vision models") or a vision-language model by its id
    ("Qwen2.5-VL-7B") blanked out."""
    return _MODEL_KIND.sub(" ", text)


def model_kind_is_the_subject(title_topics: set[str]) -> bool:
    """A kind of model the title names ("VLM streaming drops the usage") is about that model unless the title is
    about a feature the model only went through."""
    return not title_topics & SUBJECT_TOPICS
