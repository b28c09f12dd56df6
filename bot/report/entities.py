"""Entity keys: what a report without an error is about, as exact keys a maintainer can check.

A report with a traceback is matched by its error and its diagnosis; a request or a question has neither. What
identifies it is what it names, in vLLM's own vocabulary:

  model=<id>          a model requested ("[New Model]: …", "support for …"), its id normalised:
                      `microsoft/phi-4`, `Phi-4` and `phi4` are all `model=phi4` (org, sizes, variants dropped)
  arch=<Class>        that model's vLLM architecture class, when its family is known (`T5ForConditionalGeneration`)
  cap:<what>=<on>     a capability asked for a model: LoRA / pipeline parallelism / a quantisation / … on an
                      architecture, or on MoE models (`cap:lora=moe`, `cap:pp=Gemma3ForConditionalGeneration`)
  platform=<p>        where vLLM is installed or run: windows, wsl, macos, jetson, rocm, cpu, tpu, xpu
  gfx=<target>        the ROCm GPU target, named or implied by the product (Strix Halo -> gfx1151)
  step=<s>            the installation step that fails: pip (a prebuilt wheel), build (from source), docker, import
  topic:<t>=<v>       what a question or a feature request asks about, from vLLM's APIs, flags and endpoints
                      (`topic:streaming=offline-llm`, `topic:serving=several-models`, `topic:model-source=local`)

Keys of one group with different values are a near miss, not a duplicate: two models asking for the same
capability (`cap:lora=MixtralForCausalLM` vs `cap:lora=Gemma2ForCausalLM`), streaming from the offline `LLM`
vs through LangChain, gfx1151 vs gfx906.

Pure and bounded: the title and the first part of the description (environment dump, logs and code already cut
by the parser) are tokenised once; every pattern runs over that token string with bounded gaps, no nested
quantifiers. Misspelt words are corrected toward the vocabulary first (bot.wording: doubled letters, one edit in
a long word, words joined or split).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from bot.glossary import with_english
from bot.matchset import MatchSet
from bot.report import asks
from bot.report.model import Entity, Report
from bot.wording import Wording

MAX_LEAD = 1500        # characters of the description read besides the title
MAX_TITLE = 300
MAX_MODEL_TOKENS = 8

# How much a shared key says, decided by what it names (not measured on any report set):
STRONG = "strong"      # one thing with one answer, as specific as a diagnosis: the same requested model, ROCm target
QUESTION = "question"  # one use of one API with one known answer (stream from the offline LLM class; serve several
                       # models from one server): a duplicate when a little wording is shared too
AREA = "area"          # where a question lies, with many different answers (logprobs, context length, a platform,
                       # an install step): only adds to shared wording

# ------------------------------------------------------------------------------------------- tokens

def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


# ------------------------------------------------------------------------------------------- vocabulary

@dataclass(frozen=True)
class Topic:
    group: str                            # topic:<group>
    value: str
    label: str                            # for the reason: "both ask about <label>"
    all: tuple[tuple[str, ...], ...]      # each tuple must match one of its phrases; the first one in the title
    unless: tuple[str, ...] = ()          # phrases that mean another question
    tier: str = "question"                # question | area (see STRONG / QUESTION / AREA)
    # only when asked: a title phrased as a question, or a report of one of these kinds, reporting nothing wrong
    asked: tuple[str, ...] = ()


# kinds that ask about a server feature whatever their title's wording (a topic that is only `asked`)
_ASKING_TOPIC_KINDS = ("usage", "feature", "docs")

# Phrases: `a b` = the words in a row, `a * b` = b within four words after a, `x~` = a word starting with x.
# Order matters within a group: the more specific value first (every layer's hidden states before the last one).
TOPICS: tuple[Topic, ...] = (
    # the offline API
    Topic("streaming", "integration", "streaming through a framework integration (LangChain, LlamaIndex)",
          (("stream~",), ("langchain", "llamaindex", "llama index", "litellm"))),
    Topic("streaming", "offline-llm", "streaming output from the offline LLM class",
          (("stream~", "token by token", "incremental output"),
           ("llm class", "offline", "llm generate", "python api", "llmengine", "llm engine", "llm object",
            "import llm", "vllm llm", "llm instance", "llm chat", "sdk", "in llm", "llm("))),
    Topic("chat", "offline-llm", "chat messages (the chat template) through the offline LLM class",
          (("chat", "chat template", "chat function", "chat method", "apply_chat_template", "chat format"),
           ("llm class", "offline", "llm generate", "llm chat", "generate method", "generate function", "python api",
            "llmengine", "llm engine", "llm object", "llm instance", "vllm llm", "llm(", "sdk")),
          asked=_ASKING_TOPIC_KINDS),
    Topic("hidden-states", "last", "the last hidden state, or an embedding from a generative model",
          (("last hidden", "last layer", "final hidden", "final layer", "last_hidden_state"),)),
    Topic("hidden-states", "every-layer", "the hidden states of every or of an intermediate layer",
          (("hidden state", "hidden_states", "activation"),
           ("all layer", "every layer", "each layer", "intermediate layer", "specific layer", "middle layer",
            "layer wise", "per layer", "all the layer", "hidden layer"))),
    Topic("hidden-states", "last", "the last hidden state, or an embedding from a generative model",
          (("hidden state", "last_hidden_state", "output_hidden_states", "embedding * generation model",
            "embedding * generative", "embedding * causal", "embedding * decoder", "embedding * chat model",
            "embedding * for llm", "embedding * of llm", "embedding * from llm", "embedding * text generation",
            "embedding vector", "llm * embedding vector", "output embedding", "sentence embedding * llm"),)),
    Topic("hidden-states", "attention", "attention weights or scores",
          (("attention weight", "attention score", "attention map", "output_attentions", "attention matrix"),),
          tier=AREA),
    # serving
    Topic("serving", "several-models", "serving several models from one server",
          (("multiple model", "several model", "many model", "two model", "2 model", "more than one model",
            "different model", "multi model", "multiple llm", "several llm", "multiple base model", "multiple * model",
            "co host~", "cohost~", "model * and llm * same time", "llm * and * model * same time",
            "model * simultaneous~", "model * single server", "model registry", "worker registry",
            "model router", "route * model", "model swap~", "switch * model * without restart"),
           ("serve", "server", "serving", "host~", "deploy~", "api", "endpoint", "gateway", "instance", "load~", "port",
            "same time", "simultaneous~", "one"))),
    Topic("serving", "embedding-model", "serving an embedding (encoder) model",
          (("embedding model", "encoder only", "encoder model", "sentence transformer~", "v1 embedding",
            "embeddings endpoint", "embedding endpoint", "embedding api", "task embed", "runner pooling",
            "bert", "bge", "e5", "gte", "text embedding", "embedding * model"),),
          unless=("hidden state", "generation model", "generative", "causal", "decoder")),
    Topic("serving", "reranker", "serving a reranker or a scoring model",
          (("reranker", "rerank~", "cross encoder", "v1 score", "score endpoint"),), tier=AREA),
    Topic("embedding", "sparse", "sparse or multi-vector embedding output",
          (("sparse", "colbert", "multi vector", "lexical weight"), ("embedding", "bge", "vector"))),
    Topic("model-source", "modelscope", "loading models through ModelScope",
          (("modelscope", "vllm_use_modelscope", "download dir", "download_dir"),)),
    Topic("model-source", "object-storage", "loading a model from object storage (S3, GCS)",
          (("s3", "gcs", "gcp storage", "storage bucket", "bucket", "blob storage", "runai streamer"),
           ("model", "weight", "checkpoint"))),
    Topic("model-source", "local", "loading a model from a local directory instead of the Hub",
          (("local model", "local path", "local directory", "local dir", "local folder", "local file",
            "model * locally", "locally", "local checkpoint", "local weight", "from disk", "offline mode",
            "hf_hub_offline", "without internet", "instead of huggingface", "instead of hugging face",
            "not from huggingface", "model path", "model file", "model folder", "model directory"),
           ("load~", "use", "serve", "run", "model", "download~", "path"))),
    Topic("lora", "runtime-loading", "loading LoRA adapters at runtime, without a restart",
          (("lora", "adapter"),
           ("runtime", "without restart~", "dynamic~", "on the fly", "while serving", "hot swap~", "hot load~",
            "load_lora_adapter", "unload~", "without reload~", "runtime_lora", "load~ new", "add~ new", "new lora",
            "new adapter", "per request", "on request"))),
    Topic("memory", "preallocation", "why GPU memory is taken up front (the KV cache is preallocated)",
          (("memory", "vram", "ram", "gpu consum~", "gpu usage", "gpu utili~"),
           ("so much", "too much", "much more", "much memory", "high memory", "huge", "90", "as much as",
            "entire", "whole", "occup~", "consum~", "take up", "takes", "all the gpu", "all gpu",
            "preallocat~", "pre allocat~", "reserve~", "reduce", "limit~", "lower", "why")),
          unless=("leak~", "out of memory", "oom", "cpu memory", "swap", "offload~")),
    Topic("parallel", "multi-node", "running across several nodes",
          (("multi node", "multiple node", "several node", "two node", "2 node", "across node", "multi host",
            "multiple machine", "two machine", "ray cluster"),), tier=AREA),
    Topic("parallel", "data-parallel", "one model replicated on several GPUs (data parallel)",
          (("data parallel", "data_parallel_size", "replica~", "one model per gpu", "each gpu * copy"),), tier=AREA),
    # one answer, --tensor-parallel-size; across machines it is the multi-node question above
    Topic("parallel", "multi-gpu", "running one model on several GPUs of a machine (tensor parallelism)",
          (("multi gpu~", "multigpu~", "multiple gpu~", "several gpu~", "many gpu~", "more than one gpu~",
            "two gpu~", "2 gpu~", "4 gpu~", "8 gpu~", "model parallel~", "tensor parallel~", "across * gpu~",
            "split * model * gpu~"),),
          unless=("node~", "machine~", "different gpu~", "mixed gpu~", "heterogeneous"), asked=("usage",)),
    # the OpenAI-compatible server's features, asked about as such (a model's own tool calling is a capability)
    Topic("api", "tool-calling", "tool (function) calling through the OpenAI-compatible API",
          (("tool call~", "function call~", "tools", "function_call", "tool use"),),
          unless=("parser~", "stream~", "parallel tool~", "required", "named function~", "auto tool~", "optional"),
          asked=_ASKING_TOPIC_KINDS),
    Topic("auth", "per-user", "API keys per user (several keys, usage per key)",
          (("api key~", "api_key", "secret key~", "authenticat~", "authoriz~", "multiple key~"),
           ("user~", "multiple key~", "several key~", "multiple secret~", "different key~"))),
    Topic("auth", "server", "securing the server with authentication (an API key)",
          (("api key~", "api_key", "secret key~", "authenticat~", "authoriz~"),), asked=_ASKING_TOPIC_KINDS),
    Topic("output", "logprobs", "log probabilities of tokens",
          (("logprob~", "log prob~", "token probabilit~"),), tier=AREA),
    Topic("generation", "beam-search", "beam search", (("beam search", "use_beam_search", "best_of"),), tier=AREA),
    Topic("generation", "stop", "generation that does not stop (stop tokens, EOS)",
          (("stop token", "stop sequence", "stop_token_ids", "eos token", "not stop", "never stop",
            "doesn t stop", "won t stop", "endless", "infinite generation", "keeps generating"),), tier=AREA),
    Topic("offload", "cpu", "offloading weights or the KV cache to CPU memory",
          (("cpu offload~", "cpu_offload_gb", "offload~ * cpu", "swap space", "swap_space", "kv offload~"),),
          tier=AREA),
    Topic("reasoning", "thinking-switch", "switching the reasoning (thinking) mode on or off",
          (("enable_thinking", "disable thinking", "thinking mode", "no think", "reasoning effort",
            "turn off thinking", "without thinking"),)),
    Topic("context", "length", "the context length (max_model_len, RoPE scaling)",
          (("max_model_len", "max model len", "context length", "context window", "rope scaling", "long context",
            "yarn"),), tier=AREA),
    Topic("determinism", "seed", "reproducible outputs (seed, temperature 0)",
          (("deterministic", "reproducib~", "same output", "seed"),), tier=AREA),
    Topic("metrics", "prometheus", "the Prometheus metrics endpoint", (("prometheus", "metrics endpoint"),), tier=AREA),
    Topic("batch", "openai-batch", "the OpenAI batch API (run_batch)", (("run_batch", "batch api", "batch file"),)),
    Topic("batch", "server-prompts", "several prompts in one request to the server (batching through the API)",
          (("batch~", "multiple prompt~", "several prompt~", "list of prompt~", "many prompt~"),
           ("api", "server", "serve", "openai", "endpoint", "request~", "curl", "client")),
          unless=("size~", "max num", "continuous", "file~", "jsonl", "run batch", "invarian~", "offline",
                  "llm generate", "embedding~"),
          asked=(*_ASKING_TOPIC_KINDS, "other", "misc")),
    Topic("image", "arm64", "an arm64 (aarch64) image or build of vLLM",
          (("arm~", "aarch64", "gh200", "gb200", "grace hopper"),
           ("docker~", "image~", "container~", "build~", "wheel~")),
          unless=("cpu~",), asked=(*_ASKING_TOPIC_KINDS, "installation")),
    Topic("image", "cpu", "an image or build of vLLM's CPU backend",
          (("cpu~",), ("docker~", "image~", "container~", "build~", "wheel~")),
          unless=("offload~",), tier=AREA, asked=(*_ASKING_TOPIC_KINDS, "installation")),
    Topic("deploy", "kubernetes", "deploying on Kubernetes", (("kubernetes", "k8s", "helm", "kserve"),), tier=AREA),
)

# Capabilities asked for a model (a feature request or "model X does not support …").
CAPABILITIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("lora", "LoRA adapters", ("lora", "qlora", "peft", "adapter", "linear adapter")),
    ("pp", "pipeline parallelism", ("pipeline parallel~", "pipeline_parallel", "pp")),
    ("tp", "tensor parallelism", ("tensor parallel~", "tensor_parallel")),
    ("spec-decode", "speculative decoding", ("speculative", "spec decode", "eagle", "mtp", "draft model", "medusa")),
    ("gguf", "GGUF checkpoints", ("gguf",)),
    ("awq", "AWQ quantisation", ("awq",)),
    ("gptq", "GPTQ quantisation", ("gptq",)),
    ("fp8", "FP8 quantisation", ("fp8",)),
    ("bnb", "bitsandbytes quantisation", ("bitsandbytes", "bnb", "4bit", "qlora")),
    ("tool-calling", "tool calling", ("tool call", "function call", "tool parser", "tool use")),
    ("structured-output", "structured output", ("structured output", "guided decoding", "json schema",
                                                "guided json", "json mode")),
    ("vision", "image input", ("image input", "vision input", "multimodal input", "multi modal input", "multi image")),
    ("prefix-caching", "prefix caching", ("prefix caching", "prefix cache", "enable_prefix_caching")),
    ("cuda-graph", "CUDA graphs", ("cuda graph", "cudagraph")),
)
_REQUEST = ("support", "supported", "add", "request", "implement", "adapt", "compatib", "enable", "plan", "work with",
            "does not support", "doesn t support", "not supported", "unsupported", "available for")

# Model families: the token that names a family in a model id -> vLLM's architecture class and whether it is MoE.
# Tokens are those of the normalised id (`Qwen3-30B-A3B` -> qwen3 a3b; `flan-t5-xl` -> flan t5).
_FAMILIES: tuple[tuple[str, str, bool], ...] = (
    (r"t5|flan t5|mt0", "T5ForConditionalGeneration", False),
    (r"mt5", "MT5ForConditionalGeneration", False),
    (r"bart|mbart", "BartForConditionalGeneration", False),
    (r"whisper", "WhisperForConditionalGeneration", False),
    (r"mixtral", "MixtralForCausalLM", True),
    (r"deepseek v2|deepseek coder v2|deepseekv2", "DeepseekV2ForCausalLM", True),
    (r"deepseek v3|deepseek r1|deepseekv3|deepseek v3\.\d", "DeepseekV3ForCausalLM", True),
    (r"qwen3 moe|qwen3 (\d+b )?a\d+b", "Qwen3MoeForCausalLM", True),
    (r"qwen2 moe|qwen1\.5 moe|qwen2 (\d+b )?a\d+b", "Qwen2MoeForCausalLM", True),
    (r"qwen3\.5 moe|qwen3\.5 (\d+b )?a\d+b", "Qwen3_5MoeForCausalLM", True),
    (r"qwen3 next", "Qwen3NextForCausalLM", True),
    (r"gpt oss", "GptOssForCausalLM", True),
    (r"dbrx", "DbrxForCausalLM", True),
    (r"jamba", "JambaForCausalLM", True),
    (r"olmoe", "OlmoeForCausalLM", True),
    (r"phi 3\.5 moe|phimoe", "PhiMoEForCausalLM", True),
    (r"granite moe|granitemoe", "GraniteMoeForCausalLM", True),
    (r"arctic", "ArcticForCausalLM", True),
    (r"grok", "Grok1ModelForCausalLM", True),
    (r"minimax", "MiniMaxText01ForCausalLM", True),
    (r"kimi k2", "DeepseekV3ForCausalLM", True),
    (r"glm 4\.5|glm 4\.6|glm4 moe", "Glm4MoeForCausalLM", True),
    (r"llama 4|llama4", "Llama4ForConditionalGeneration", True),
    (r"minicpm v|minicpm llama3 v|minicpm o", "MiniCPMV", False),
    (r"minicpm", "MiniCPMForCausalLM", False),
    (r"florence", "Florence2ForConditionalGeneration", False),
    (r"t5gemma", "T5GemmaForConditionalGeneration", False),
    (r"llava", "LlavaForConditionalGeneration", False),
    (r"internvl", "InternVLChatModel", False),
    (r"qwen2 vl|qwen2\.5 vl|qwen2\.5vl", "Qwen2VLForConditionalGeneration", False),
    (r"gemma 3|gemma3", "Gemma3ForConditionalGeneration", False),
    (r"gemma 2|gemma2", "Gemma2ForCausalLM", False),
    (r"mistral", "MistralForCausalLM", False),
    (r"mamba", "MambaForCausalLM", False),
    (r"chatglm", "ChatGLMModel", False),
    (r"baichuan", "BaichuanForCausalLM", False),
    (r"falcon", "FalconForCausalLM", False),
    (r"bloom", "BloomForCausalLM", False),
    (r"bge m3|xlm roberta", "XLMRobertaModel", False),
    (r"bert|bge|e5|gte", "BertModel", False),
)
# words around a model name that are not part of it
_NOT_MODEL = _word_set("""
support supported supporting add adding please request new model models the for of a an to in on with and or is
are does do vllm llm llms multimodal multi modal finetuned fine tuned like encoder decoder architecture family
series version versions feature inference serving serve use using run running when will can could would any plan
plans eta lora adapter adapters moe mixture experts expert quantized quantization weights checkpoint hf hub
huggingface inquiry about question issue bug how what which why that this it be via by from into as at
there way possible possibility
""")
_SIZE = re.compile(r"^(?:\d+(?:\.\d+)?[bmk]|a\d+(?:\.\d+)?b|\d+x\d+(?:\.\d+)?b|e\d+b|small|base|large|xl|xxl|medium)$")
_VARIANT = _word_set("""
instruct chat it hf gguf awq gptq fp8 fp16 bf16 int4 int8 w4a16 w8a8 bnb 4bit 8bit preview latest base sft dpo
""")
_MOE_WORDS = (" moe ", " mixture of expert", " expert ", " experts ", " fused moe ", " moe model")
_URL = re.compile(r"(?:https?://|www\.)\S{1,500}")
_HF_URL = re.compile(r"(?:huggingface\.co|hf\.co)/([A-Za-z0-9][\w.-]{0,60})/([A-Za-z0-9][\w.-]{0,80})")
_HF_PAGES = frozenset({"collections", "spaces", "datasets", "docs", "papers", "blog", "models", "organizations"})
_BARE_ID = re.compile(r"(?<![\w./:-])([A-Za-z0-9][\w-]{0,60})/([A-Za-z0-9][\w.-]{0,80})(?![\w/])")
_MODEL_TOKEN = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+\b|\b[A-Za-z]+\d[\w.]*\b")
_NOT_ORGS = frozenset({"v1", "docs", "blob", "tree", "issues", "pull", "usr", "home", "lib", "site-packages",
                       "vllm-project", "vllm", "pytorch", "actions", "and", "or"})
_NOT_MODEL_TOKEN = re.compile(
    r"^(?:v?\d[\d.]*|cuda\d*[\d.]*|cu\d+(?:\.\d+)?|py\d+|python\d[\d.]*|sm_?\d+|gfx\d+\w*|rtx\w*|[ahlbt]\d{2,4}\w*|"
    r"mi\d{2,3}\w*|[pvk]\d{2,3}|x86(?:_64)?|aarch64|arm64|utf-8|e\.g|i\.e|torch\d*[\d.]*|rocm\d*[\d.]*|gpu\d*|"
    r"v\d+(?:\.\d+)*|fp\d+|int\d+|bf16|w\d+a\d+|\d+(?:\.\d+)?[bmkgt]b?|"
    r"g[bh]\d{2,3}\w*|"                                # NVIDIA's Grace superchips (GH200, GB200, GB10)
    r"m[1-5](?:pro|max|ultra)?)$",                    # Apple's M1-M5 chips, not models
    re.IGNORECASE)

# ------------------------------------------------------------------------------------------- platforms

_PLATFORMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("wsl", ("wsl", "wsl2", "windows subsystem")),
    ("windows", ("windows", "win10", "win11", "win 10", "win 11", "powershell", "msvc", "visual studio")),
    ("macos", ("macos", "mac os", "mac", "macbook", "apple device", "apple silicon", "apple m1", "apple m2",
               "apple m3", "apple m4", "m1 mac", "m2 mac", "m3 mac", "m4 mac", "mps", "osx", "darwin", "mac mini",
               "mac studio", "apple metal", "metal support", "metal backend", "metal kernel", "metal kernels",
               "metal gpu")),    # Apple's GPU API, not "bare metal"
    ("jetson", ("jetson", "orin", "agx", "jetpack", "l4t", "dgx spark", "gb10")),
    ("tpu", ("tpu", "tpu v4", "tpu v5e", "tpu v6e", "libtpu")),
    ("xpu", ("xpu", "intel gpu", "intel arc", "arc a770", "data center gpu max", "gaudi", "hpu", "ipex")),
    ("rocm", ("rocm", "amd gpu", "radeon", "instinct", "hip", "gfx~", "strix", "ryzen ai", "amd apu", "mi300",
              "mi250", "mi210", "mi100", "mi50", "mi60", "rdna", "cdna", "7900 xtx", "amd instinct", "amd radeon")),
    ("cpu", ("cpu only", "cpu backend", "cpu inference", "on cpu", "cpu version", "device cpu", "avx512",
             "avx2", "ppc64le", "s390x", "no gpu", "without gpu", "cpu docker", "cpu build")),
    ("aarch64", ("aarch64", "arm64", "grace hopper", "gh200", "gb200", "graviton", "arm server", "arm")),
)
# ROCm GPU targets named by product (LLVM AMDGPU processor names)
_GFX_PRODUCTS: tuple[tuple[str, str], ...] = (
    ("strix halo", "gfx1151"), ("ryzen ai max", "gfx1151"), ("8060s", "gfx1151"), ("strix point", "gfx1150"),
    ("ryzen ai 9", "gfx1150"), ("890m", "gfx1150"), ("mi300", "gfx942"), ("mi325", "gfx942"), ("mi355", "gfx950"),
    ("mi350", "gfx950"), ("mi250", "gfx90a"), ("mi210", "gfx90a"), ("mi100", "gfx908"), ("mi50", "gfx906"),
    ("mi60", "gfx906"), ("radeon vii", "gfx906"), ("rx 7900", "gfx1100"), ("w7900", "gfx1100"),
    ("rx 7800", "gfx1101"), ("rx 7600", "gfx1102"), ("rx 9070", "gfx1201"), ("rx 9060", "gfx1200"),
    ("rx 6900", "gfx1030"), ("rx 6800", "gfx1030"), ("780m", "gfx1103"),
)
_GFX = re.compile(r"\bgfx ?(\d{3,4}[a-z]?)\b")
_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("docker", ("docker", "dockerfile", "container image", "podman")),
    ("build", ("build from source", "building from source", "from source", "setup py", "cmake", "compile",
               "compiling", "nvcc", "building wheel", "build wheel", "python setup", "pip install e",
               "no build isolation", "editable")),
    ("pip", ("pip install", "uv pip", "prebuilt wheel", "pre built wheel", "wheel", "no matching distribution",
             "conda install", "pypi")),
    ("import", ("import vllm", "importerror", "modulenotfounderror", "undefined symbol")),
)


# ------------------------------------------------------------------------------------------- compiled patterns

def _phrase_regex(phrase: str) -> str:
    """`a b` = the words in a row; `a * b` = b within four words after a; a trailing `~` = the word may go on."""
    parts = []
    for part in phrase.lower().split(" * "):
        prefix = part.endswith("~")
        words = [_stem(w) for w in _WORD.findall(part.rstrip("~").replace("_", " "))]
        parts.append(" ".join(re.escape(w) for w in words) + ("" if prefix else r"(?![a-z0-9])"))
    return r"(?<![a-z0-9])" + r"(?: [^ ]{1,40}){0,4} ".join(parts)


class _Phrases:
    """Alternative phrases as one pattern, tried only when the text holds the first word of one of them."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        self.pattern = re.compile("|".join(_phrase_regex(p) for p in phrases))
        firsts = {" " + _stem(_WORD.findall(p.lower().rstrip("~").replace("_", " "))[0]) for p in phrases}
        self.needles = tuple(sorted(firsts))

    def search(self, text: str) -> bool:
        return any(n in text for n in self.needles) and self.pattern.search(text) is not None


def _alternatives(phrases: tuple[str, ...]) -> _Phrases:
    return _Phrases(phrases)


class _FirstWords:
    """Whether a token text (token_text: words joined by single spaces, a space first) holds one of many phrases:
    only the phrases whose first word is in the text are tried, one pattern per first word (one pattern of
    hundreds of alternatives is tried at every position of the text); which first words the text holds is one RE2
    pass over it (bot/matchset.py), not one substring test per first word."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        by_first: dict[str, list[str]] = {}
        for phrase in phrases:
            by_first.setdefault(_Phrases((phrase,)).needles[0], []).append(phrase)
        self.groups = tuple((first, _Phrases(tuple(group)).pattern) for first, group in sorted(by_first.items()))
        self._firsts = MatchSet([re.escape(first) for first, _ in self.groups], 0)

    def search(self, tokens: str) -> bool:
        return any(self.groups[k][1].search(tokens) is not None for k in self._firsts.matching(tokens))


_TOPIC_PATTERNS = tuple((t, tuple(_alternatives(group) for group in t.all),
                         _alternatives(t.unless) if t.unless else None) for t in TOPICS)
_CAP_PATTERNS = tuple((cid, label, _alternatives(words)) for cid, label, words in CAPABILITIES)
_REQUEST_PATTERN = _alternatives(_REQUEST)
# one pattern for every family (the first family named wins); group i + 1 is _FAMILIES[i]
_FAMILY_RE = re.compile(r"(?<![a-z0-9.])(?:" + "|".join(f"(?P<f{i}>{f})" for i, (f, _, _) in enumerate(_FAMILIES))
                        + r")(?![a-z0-9])")
_PLATFORM_PATTERNS = tuple((p, _alternatives(words)) for p, words in _PLATFORMS)
_ANY_PLATFORM = _FirstWords(tuple(w for _, words in _PLATFORMS for w in words))
_ANY_TOPIC = _FirstWords(tuple(p for t in TOPICS for p in t.all[0]))   # a title that names no topic skips them
_STEP_PATTERNS = tuple((s, _alternatives(words)) for s, words in _STEPS)
_GFX_PRODUCT_PATTERN = tuple((_alternatives((name,)), gfx) for name, gfx in _GFX_PRODUCTS)


def _keyword_patterns() -> list[str]:
    """Every phrase of the vocabulary as the plain pattern bot.wording reads its keywords from."""
    phrases = [p for t in TOPICS for g in t.all for p in g] + [w for _, _, ws in CAPABILITIES for w in ws] \
        + [w for _, ws in _PLATFORMS for w in ws] + [w for _, ws in _STEPS for w in ws] + list(_REQUEST)
    out = []
    for phrase in phrases:
        for part in phrase.split(" * "):
            words = " ".join(_WORD.findall(part.rstrip("~").lower().replace("_", " ")))
            if words:
                out.append(re.escape(words).replace("\\ ", " ") + (r"\w*" if part.endswith("~") else ""))
    return out


_WORDING = Wording(_keyword_patterns())


@lru_cache(maxsize=100_000)
def _token(word: str) -> str:
    return _stem(word)


def token_text(text: str) -> str:
    """Words as people write them corrected toward the vocabulary (bot.wording), lower-cased, plurals dropped,
    joined by single spaces: what every pattern runs over."""
    text = _WORDING.correct(text.lower())
    words = [_token(w) for w in _WORD.findall(text.replace("'", " ").replace("_", " "))]
    return " " + " ".join(words) + " "


# ------------------------------------------------------------------------------------------- models

# the class part of a generative architecture's name: `Gemma2ForCausalLM` names the family `Gemma2` (a pooling
# class such as `…ForEmbedding` or `…ForSequenceClassification` is another model, and keeps its name)
_ARCH_SUFFIX = re.compile(r"(?<=[A-Za-z0-9])(?:For(?:CausalLM|ConditionalGeneration)|LMHeadModel)$")


def normalise_model(name: str) -> str:
    """A model id as one key: org, sizes and variant suffixes dropped, case and punctuation ignored.

    `microsoft/phi-4`, `Phi-4`, `phi4` -> `phi4`; `Qwen/Qwen2.5-7B-Instruct` -> `qwen25`; an architecture class
    names its family: `Gemma2ForCausalLM` -> `gemma2`, like `google/gemma-2-9b-it`."""
    name = _ARCH_SUFFIX.sub("", name.strip().strip("/").rsplit("/", 1)[-1]).lower()
    name = re.sub(r"(?<=\d)_(?=\d)", ".", name)
    tokens = [t for t in re.split(r"[-_\s]+", name) if t]
    kept = [t for t in tokens if not _SIZE.match(t) and t not in _VARIANT]
    return re.sub(r"[^a-z0-9]", "", "".join(kept or tokens))


def model_family(name: str) -> tuple[str, bool] | None:
    """(vLLM architecture class, is MoE) of a model name, when its family is known."""
    spaced = " " + " ".join(re.split(r"[-_\s/]+", re.sub(r"(?<=\d)_(?=\d)", ".", name.lower()))) + " "
    return _family_in(spaced)


def title_models(title: str) -> list[str]:
    """The model names a title names (Hub ids, or words with a size or of a known family)."""
    return _model_names(title, "", False)


def _model_names(title: str, lead: str, new_model: bool) -> list[str]:
    """Model names a request names: Hub ids (in the lead only for a model request), then model-like title words."""
    names: list[str] = []
    for text in (title, lead[:600]) if new_model else (title,):
        for m in _HF_URL.finditer(text):
            if m.group(1).lower() not in _HF_PAGES:
                names.append(m.group(2))
        for m in _BARE_ID.finditer(_URL.sub(" ", text)):
            org, name = m.group(1), m.group(2).rstrip(".")
            if org.lower() not in _NOT_ORGS and _model_like(name) and org.lower() != name.lower():
                names.append(name)
    if names:
        return names
    names = _ARCH_CLASS.findall(title)        # "Model architectures ['BaichuanForCausalLM'] are not supported"
    if names:
        return names
    for m in _MODEL_TOKEN.finditer(_URL.sub(" ", title)):
        word = m.group(0).strip(".-_")
        if _model_like(word):
            names.append(word)
    if not names:   # "[New Model]: Florence 2", "Support for baichuan models" -> the title minus the request words
        rest = [w for w in title.replace("/", " ").split()
                if not all(p in _NOT_MODEL for p in re.split(r"[-_]", w.lower().strip("?!.,:()`'\"")) if p)]
        family = bool(rest) and model_family(" ".join(rest[:MAX_MODEL_TOKENS])) is not None
        if rest and (len(rest) <= 2 or new_model) and (family or new_model):
            names.append(" ".join(rest[:MAX_MODEL_TOKENS]))
    return names


# words that name another model of a family, written after its name as separate words ("Qwen3 Omni", "qwen3
# embedding", "Llama 3.2 Vision"): part of the name, unlike sizes and variants ("Instruct", "Chat")
_LINE_WORDS = _word_set("omni vl vision audio embedding embed reranker rerank coder math ocr guard reward tts asr")
_LINE_AFTER = re.compile(r"^[ -]{1,3}([A-Za-z]{2,10})\b")
_NAME_BEFORE = re.compile(r"\b([A-Za-z]{3,20})[ -]{1,3}$")
_SHORT_NAME = re.compile(r"^[A-Za-z]{1,2}\d{1,2}$")
# a number format is what a model is quantized to, not a model: NVFP4, MXFP4, NF4, FP8
# vLLM's architecture class, as an unsupported-architecture error or a request names it
_ARCH_CLASS = re.compile(r"\b[A-Z][A-Za-z0-9_]*For(?:CausalLM|ConditionalGeneration)\b")
_QUANT_FORMAT = re.compile(r"^(?:nv|mx)?fp\d+|nf4$", re.IGNORECASE)


def _named_in_title(title: str, name: str) -> str:
    """A model name as the title writes it in separate words: the words of a model line that follow it ("Qwen3"
    -> "Qwen3 Omni") and, for a bare version such as "K2" or "V3", the name before it ("Kimi K2")."""
    at = title.lower().find(name.lower())
    if at < 0:
        return name
    end = at + len(name)
    for _ in range(2):
        m = _LINE_AFTER.match(title[end:end + 16])
        if m is None or m.group(1).lower() not in _LINE_WORDS:
            break
        name += " " + m.group(1)
        end += m.end()
    if _SHORT_NAME.match(name.split()[0]):
        m = _NAME_BEFORE.search(title[max(0, at - 24):at])
        if m is not None and m.group(1).lower() not in _NOT_MODEL:
            name = m.group(1) + " " + name
    return name


def _model_like(word: str) -> bool:
    """A model name: not a version, GPU, flag or snake_case API name, and with a digit or a known family."""
    low = word.lower()
    if _NOT_MODEL_TOKEN.match(word) or re.fullmatch(r"[a-z_]+", word) or "_" in low.strip("_") and not \
            re.search(r"\d_\d", low):
        return False
    parts = [p for p in re.split(r"[-_.]", low) if p]
    if all(p in _NOT_MODEL for p in parts):
        return False
    return any(c.isdigit() for c in low) or model_family(low) is not None


def _family_in(spaced: str) -> tuple[str, bool] | None:
    """A model family named in spaced words ("deepseek v2", "qwen 3 moe" as well as "qwen3 moe")."""
    for text in (spaced, re.sub(r"(?<=[a-z]) (?=\d)", "", spaced)):
        m = _FAMILY_RE.search(text)
        if m is not None:
            family = _FAMILIES[next(int(k[1:]) for k, v in m.groupdict().items() if v is not None)]
            return family[1], family[2]
    return None


# ------------------------------------------------------------------------------------------- extraction

def _has_error(report: Report) -> bool:
    return bool(report.exceptions) or bool(report.error_lines)


MAX_LEAD_LINES = 300


def _lead(report: Report) -> str:
    """The first part of the description in the reporter's words, for a Report built without `prose`: code
    fences and log-looking lines dropped."""
    out: list[str] = []
    size = 0
    fenced = False
    text = report.description or ""
    start = 0
    for _ in range(MAX_LEAD_LINES):
        end = text.find("\n", start)
        line = text[start:end if end >= 0 else len(text)][:400]
        start = end + 1
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and stripped and not stripped.startswith(_NOT_PROSE):
            out.append(stripped)
            size += len(stripped)
            if size >= MAX_LEAD:
                break
        if end < 0:
            break
    return "\n".join(out)[:MAX_LEAD]


_NOT_PROSE = ("(", "[", "File ", "Traceback", "INFO", "WARNING", "ERROR", "DEBUG", "$ ", ">>>", "<")


def _topics(title: str, text: str, asking: str = "") -> list[Entity]:
    """The questions asked: the first words of a topic in the title, the others in the title or the lead; a topic
    that is only `asked` needs `asking` to be one of its kinds ("question" for a title phrased as one, else the
    report's kind; "" when the title reports a failure: "how to run a model on two GPUs", not "hang when using
    multiple GPUs")."""
    out: list[Entity] = []
    if not _ANY_TOPIC.search(title):
        return out
    groups: set[str] = set()
    for topic, (first, *rest), unless in _TOPIC_PATTERNS:
        if topic.group in groups or (topic.asked and asking not in (*topic.asked, "question")) \
                or not first.search(title) \
                or not all(p.search(text) for p in rest):
            continue
        if unless is not None and unless.search(title):
            continue
        groups.add(topic.group)
        out.append(Entity(f"topic:{topic.group}={topic.value}", f"both ask about {topic.label}", topic.tier))
    return out


# LangChain's wrappers of vLLM (`from langchain_community.llms import VLLM`) and its callback handlers: a report
# that uses them asks about the integration, not about vLLM's own `LLM` class.
_INTEGRATION_CODE = re.compile(r"\bVLLM(?:OpenAI)?\(|CallbackHandler\b|\blangchain")
# the one answer to "why is all the GPU memory taken" is --gpu-memory-utilization; already lowered, it is
# another question
_LOW_UTILISATION = 0.5


def _refine(entities: list[Entity], report: Report, for_model: bool = False) -> list[Entity]:
    out = []
    for e in entities:
        if for_model and e.key.startswith("topic:api="):
            continue                      # a server feature asked for one model is that model's question
        if e.key == "topic:memory=preallocation" and _flag_below(report, "gpu_memory_utilization", _LOW_UTILISATION):
            e = Entity("topic:memory=already-limited",
                       "both ask about GPU memory use with --gpu-memory-utilization already lowered", AREA)
        out.append(e)
    return out


def _flag_below(report: Report, name: str, limit: float) -> bool:
    try:
        return float(report.flags.get(name, 1.0)) < limit
    except (TypeError, ValueError):
        return False


def title_platforms(title: str) -> tuple[str, ...]:
    """The platforms a title names, by their key's name ("arm docker image" and "Dockerfile for aarch64" both name
    `aarch64`, "Metal support" and "MPS backend" `macos`): the vocabulary's synonyms, for the duplicate index."""
    tokens = token_text(with_english(title[:MAX_TITLE]))
    if not _ANY_PLATFORM.search(tokens):
        return ()
    return tuple(name for name, pattern in _PLATFORM_PATTERNS if pattern.search(tokens))


def _platform_entities(report: Report, title: str, text: str) -> list[Entity]:
    env = report.environment
    found: list[str] = []
    for name, pattern in _PLATFORM_PATTERNS:
        if pattern.search(title):
            found.append(name)
    in_title = bool(found)
    for name, pattern in _PLATFORM_PATTERNS if not in_title else ():
        if pattern.search(text):
            found.append(name)
    if not in_title:   # what the title names wins over the environment dump's guess
        if env.os in ("windows", "wsl", "macos") and env.os not in found:
            found.insert(0, env.os)
        if env.platform in ("rocm", "xpu", "tpu", "cpu") and env.platform not in found:
            found.append(env.platform)
    if "wsl" in found and "windows" in found:
        found.remove("windows")        # WSL is Linux on Windows: another platform
    if "rocm" in found and "cpu" in found:
        found.remove("cpu")
    out: list[Entity] = []
    platform = found[0] if found else None
    if platform is not None:
        # installing natively on Windows, on macOS or on a Jetson, or asking for it to be supported, each has one
        # answer; a title naming two platforms asks for the one on the other ("the CPU backend on macOS x86")
        one_answer = report.kind == "installation" or (in_title and len(found) == 1 and asks.asks_for_support(title)
                                                       and not any(p.search(title) for _, _, p in _CAP_PATTERNS))
        strength = QUESTION if platform in ("windows", "macos", "jetson") and one_answer else AREA
        out.append(Entity(f"platform={platform}", f"both on {_PLATFORM_NAMES.get(platform, platform)}", strength))
    for gfx in _gfx_targets(text):
        out.append(Entity(f"gfx={gfx}", f"both on the ROCm target {gfx}", STRONG))
    if report.kind == "installation":
        for step, pattern in _STEP_PATTERNS:
            if pattern.search(text):
                out.append(Entity(f"step={step}", f"both fail at {_STEP_NAMES[step]}", AREA))
                break
    return out


_PLATFORM_NAMES = {"windows": "native Windows", "wsl": "WSL", "macos": "macOS",
                   "jetson": "Jetson / DGX Spark (aarch64)", "rocm": "ROCm", "cpu": "the CPU backend", "tpu": "TPU",
                   "xpu": "Intel XPU", "aarch64": "aarch64"}
_STEP_NAMES = {"docker": "the Docker image", "build": "a build from source", "pip": "pip install of a wheel",
               "import": "import"}


def _gfx_targets(text: str) -> list[str]:
    found = ["gfx" + m.group(1) for m in _GFX.finditer(text)]
    found += [gfx for pattern, gfx in _GFX_PRODUCT_PATTERN if pattern.search(text)]
    return list(dict.fromkeys(found))[:4]


def _subject(names: list[str], text: str) -> tuple[str | None, bool]:
    """The architecture a request is about (from the model names, else from family words) and whether it is MoE."""
    moe = any(w in text for w in _MOE_WORDS)
    for name in names:
        fam = model_family(name)
        if fam is not None:
            return fam[0], moe or fam[1]
    fam = _family_in(text)
    if fam is not None:
        return fam[0], moe or fam[1]
    return None, moe


_ASKING = ("usage", "misc", "other", "docs")   # kinds that may ask for a model or a capability in their title


def extract(report: Report) -> tuple[Entity, ...]:
    """The report's entity keys (empty for a failure report with an error: its error and diagnosis identify it)."""
    kind = report.kind
    if kind in ("bug", "ci-failure", "performance") and _has_error(report):
        return ()
    title = with_english((report.title_text or report.title or "")[:MAX_TITLE])
    lead = with_english(report.prose[:MAX_LEAD] if report.prose is not None else _lead(report))
    title_tokens = token_text(title)
    text = token_text(title + "\n" + lead)
    out = _requests(report, title, title_tokens, lead, text)
    out.extend(_asked(report, title, title_tokens, lead))
    if kind == "installation" or _ANY_PLATFORM.search(title_tokens):
        out.extend(_platform_entities(report, title_tokens, text))
    if not _has_error(report) or kind in ("usage", "feature", "misc"):
        if "stream" in text and _INTEGRATION_CODE.search(report.description[:20_000]):
            text += "langchain "
        asking = "" if asks.SYMPTOM.search(title) else "question" if asks.is_question(title) else kind
        for_model = any(e.key.startswith(("model=", "cap:")) for e in out)
        out.extend(_refine(_topics(title_tokens, text, asking), report, for_model))
    seen: set[str] = set()
    return tuple(e for e in out if not (e.key in seen or seen.add(e.key)))   # type: ignore[func-returns-value]


_ACTION_WORDS = {"select": "choose", "free": "free", "disable": "turn off", "enable": "turn on", "get": "get",
                 "limit": "limit", "load": "load", "set": "set", "install": "install for", "run": "run",
                 "abort": "abort"}
_THING_WORDS = {"gpu": "the GPU to run on", "gpu-memory": "the GPU memory a model holds", "thinking": "thinking mode",
                "hidden-states": "hidden states or embeddings", "chat-template": "the chat template",
                "system-prompt": "the system prompt", "stop": "stop tokens", "log": "logging", "prefix-cache":
                "prefix caching", "lora": "LoRA adapters", "image": "image input", "usage": "token usage",
                "offline": "offline, without internet access", "logits": "the logits",
                "class-logits": "a classification model's logits",
                "request": "a running request"}
_ASKING_KINDS = ("usage", "docs", "other", "misc")
# a question about a build or a release (for a CUDA version, say) rather than about running a model
_BUILD_WORDS = re.compile(r" (?:support\w*|wheel|version|release|build\w*|compatib\w*|install\w*) ")


def _asked(report: Report, title: str, title_tokens: str, lead: str) -> list[Entity]:
    """What the report asks to do, as an action on a thing (bot/report/asks.py): a question when it is phrased as
    one (or filed as a usage question), else only the area it lies in."""
    asked = asks.is_question(title) or report.kind in _ASKING_KINDS
    installing = report.kind == "installation" or (asked and bool(_BUILD_WORDS.search(title_tokens)))
    found = asks.frame(title_tokens, title, token_text, installing=installing)
    if found is None:
        sentence = asks.question_sentence(lead)
        found = asks.frame(token_text(sentence), sentence, token_text) if sentence else None
        found = asks.in_title(found, title_tokens) if found else None
        asked = True
    if found is None:
        return []
    action, thing = found
    if action == "install" and report.kind == "installation":
        asked = True                      # an installation report asks how to install
    label = thing[3:] if thing.startswith("id:") else thing.replace("cuda:", "CUDA ") if thing.startswith("cuda:") \
        else _THING_WORDS.get(thing, thing)
    return [Entity(f"ask:{action}={thing}", f"both ask how to {_ACTION_WORDS[action]} {label}",
                   QUESTION if asked and thing not in asks.SEVERAL else AREA)]


def _requests(report: Report, title: str, title_tokens: str, lead: str, text: str) -> list[Entity]:
    """A model requested, or a capability asked for a model."""
    kind = report.kind
    if kind == "bug" and asks.asks_for_support(title):
        kind = "feature"          # a request filed with the bug form ("[Bug]: Qwen3 Omni Support"; no error here)
    requestish = kind in ("new-model", "feature") or (kind in _ASKING and bool(_REQUEST_PATTERN.search(title_tokens)))
    if not requestish:
        return []
    caps = [(cid, label) for cid, label, p in _CAP_PATTERNS if p.search(title_tokens)]
    names = [n for n in _model_names(title, lead, kind == "new-model") if not _QUANT_FORMAT.match(n)]
    if names:
        names[0] = _named_in_title(title, names[0])
    if not caps and not names:
        return []
    arch, moe = _subject(names, title_tokens if caps else text)
    out: list[Entity] = []
    if caps:
        cid, label = caps[0]
        if arch:
            out.append(Entity(f"cap:{cid}={arch}", f"both ask for {label} on {arch}", STRONG))
        if moe:
            out.append(Entity(f"cap:{cid}=moe", f"both ask for {label} on MoE models", QUESTION))
        if not arch and not moe and names:
            model = normalise_model(names[0])
            if model:
                out.append(Entity(f"cap:{cid}=model:{model}", f"both ask for {label} on {names[0][:60]}", STRONG))
    elif kind in ("new-model", "feature", "usage", "misc", "other"):
        model = normalise_model(names[0])
        if len(model) >= 2:
            out.append(Entity(f"model={model}", f"both request the model {names[0][:60]}", STRONG))
        if arch:
            out.append(Entity(f"arch={arch}", f"both request the architecture {arch}", AREA))
    return out
