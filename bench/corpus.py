# ruff: noqa: E501  (catalogue and template strings read better unbroken)
"""A synthetic corpus of vLLM-shaped issue reports, deterministic from a seed (sizes 1k / 10k / 100k and up).

    .venv/bin/python -m bench.corpus --n 1000 --seed 7 --out /tmp/corpus.jsonl

Each issue is a GitHub-REST-shaped object (number, title, body, state, created_at, html_url, labels, user)
built from the real shapes: every issue-form template (bug, usage, installation, feature, performance, new model,
doc, RFC, with `_No response_` fields and the checklist) plus free-form reports, `collect_env.py` dumps in the
old and the banner format (in `<details>`, in a bare fence, or left as the placeholder), commands (`vllm serve`,
the api_server module, `docker run vllm/vllm-openai`, `LLM(...)`), logs with `(APIServer pid=…)` /
`(EngineCore_DP0 pid=…)` tags and logger headers, and tracebacks with vLLM frames, a quarter of them chained
("The above exception was the direct cause ...") with the catalogue failure as the root cause.
Failures come from a catalogue of known vLLM errors with variable parts (sizes, ranks, models, paths), so
reports of the same failure differ the way real duplicates do. Prose draws on a Zipf-distributed vocabulary
with a long tail, so postings lists have a realistic length distribution at 100k issues.

Requests and questions without an error (a model asked for under several spellings, a capability on a model
family, a usage question, an install platform; REQUESTS) are planted duplicates of the earlier ones of the
same id, with near misses among them: the same capability on another family, the same question through
another API, Windows vs WSL, another ROCm target.

`issue["synthetic"]` = {"failure": id or None, "request": id or None, "group": ..., "template": kind} says what
was generated (for sanity checks of duplicate recall); readers of the export ignore it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

MODELS = (
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
    "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    "google/gemma-3-27b-it", "openai/gpt-oss-20b", "openai/gpt-oss-120b", "microsoft/Phi-4-mini-instruct",
    "zai-org/GLM-4.6", "moonshotai/Kimi-K2-Instruct", "ibm-granite/granite-3.3-8b-instruct", "THUDM/glm-4v-9b",
    "internlm/internlm2-chat-7b", "stepfun-ai/Step3p5-Flash", "MiniMaxAI/MiniMax-M2", "allenai/OLMo-2-1124-7B",
)
ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM",
         "Gemma3ForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "GptOssForCausalLM",
         "Step3p5ForCausalLM", "MiniMaxM2ForCausalLM", "Olmo2ForCausalLM", "InternLM2ForCausalLM")
GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S", "NVIDIA GeForce RTX 4090",
        "NVIDIA GeForce RTX 5090", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "Tesla V100-SXM2-32GB",
        "Tesla T4", "NVIDIA GeForce RTX 3090", "NVIDIA A10G", "NVIDIA H200", "NVIDIA GeForce RTX 2080 Ti")
VERSIONS = ("0.4.3", "0.5.4", "0.6.3.post1", "0.6.6", "0.7.3", "0.8.4", "0.8.5.post1", "0.9.2", "0.10.1.1",
            "0.10.2", "0.11.0", "0.11.2", "0.12.0", "0.13.0", "0.14.1", "0.15.1", "0.16.0", "0.17.1")
TORCH = ("2.3.0+cu121", "2.4.0+cu121", "2.5.1+cu124", "2.6.0+cu124", "2.7.0+cu126", "2.8.0+cu128", "2.9.0+cu129")
PREFIXES = {"bug": "[Bug]: ", "usage": "[Usage]: ", "installation": "[Installation]: ", "feature": "[Feature]: ",
            "performance": "[Performance]: ", "new-model": "[New Model]: ", "doc": "[Doc]: ", "rfc": "[RFC]: ",
            "free": ""}
# share of each template among issues without a planted failure (bug reports dominate, as on vLLM's tracker)
KINDS = (("bug", 30), ("usage", 18), ("installation", 10), ("feature", 12), ("performance", 8), ("new-model", 6),
         ("doc", 3), ("rfc", 3), ("free", 10))
CHECKLIST = ("### Before submitting a new issue...\n\n- [x] Make sure you already searched for relevant issues, and "
             "asked the chatbot living at the bottom right corner of the [documentation page]"
             "(https://docs.vllm.ai/en/latest/), which can answer lots of frequently asked questions.")


@dataclass(frozen=True)
class Failure:
    id: str
    type: str
    message: str                  # str.format fields: model, arch, gb, gb2, n, m, rank, path, tp, pp, dtype, cc, ver
    titles: tuple[str, ...]
    frames: tuple[tuple[str, str], ...]      # (vllm-relative file, function), outermost first
    flags: tuple[str, ...] = ()
    words: tuple[str, ...] = ()   # what reporters say about it


CATALOGUE: tuple[Failure, ...] = (
    Failure("pp-not-supported", "NotImplementedError",
            "Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
            "interface.",
            ("{short} does not work with pipeline parallelism", "PP={pp} fails for {short}",
             "NotImplementedError: Pipeline parallelism is not supported for this model"),
            (("engine/arg_utils.py", "create_engine_config"), ("config/model.py", "verify_with_parallel_config")),
            ("--pipeline-parallel-size {pp}",), ("pipeline", "parallel", "nodes", "split", "layers")),
    Failure("pp-spec-draft", "NotImplementedError",
            "Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
            "interface.",
            ("MTP drafting and PP>1 fail together on {short}", "{short} with pipeline parallel and MTP fails",
             "draft model and -pp together crash at startup"),
            (("v1/spec_decode/eagle.py", "load_model"), ("config/model.py", "verify_with_parallel_config")),
            ("--pipeline-parallel-size {pp}", "--speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": 1}}'"),
            ("speculative", "draft", "mtp", "pipeline", "acceptance")),
    Failure("no-cache-blocks", "ValueError",
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
            "the engine.",
            ("No available memory for the cache blocks with {short}", "{short} fails on {gpu_short}: no memory for KV cache",
             "cannot start {short}, cache blocks error"),
            (("v1/engine/core.py", "_initialize_kv_caches"), ("v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory")),
            ("--gpu-memory-utilization 0.{n}",), ("memory", "card", "vram", "small", "cache")),
    Failure("max-len-kv", "ValueError",
            "The model's max seq len ({m}) is larger than the maximum number of tokens that can be stored in KV cache "
            "({n}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            ("max seq len larger than KV cache for {short}", "{short}: model's max seq len is larger than KV cache",
             "how is max-model-len limited by GPU memory?"),
            (("v1/engine/core.py", "_initialize_kv_caches"), ("v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory")),
            ("--max-model-len {m}",), ("context", "length", "tokens", "long", "cache")),
    Failure("cuda-oom-graph", "torch.OutOfMemoryError",
            "CUDA out of memory. Tried to allocate {gb} GiB. GPU {rank} has a total capacity of {gb2} GiB of which "
            "{gb} MiB is free. Including non-PyTorch memory, this process has {gb2} GiB memory in use.",
            ("CUDA OOM during CUDA graph capture with {short}", "{short} OOM when capturing cudagraphs",
             "V1 engine OOM at graph capture but V0 works"),
            (("v1/worker/gpu_model_runner.py", "capture_model"), ("compilation/cuda_graph.py", "__call__")),
            ("--gpu-memory-utilization 0.9{n}",), ("graph", "capture", "eager", "oom", "memory")),
    Failure("cuda-reinit", "RuntimeError",
            "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
            "'spawn' start method",
            ("Cannot re-initialize CUDA in forked subprocess", "multi-GPU fails: CUDA re-initialize error with {short}",
             "RuntimeError CUDA forked subprocess when tensor parallel {tp}"),
            (("v1/executor/multiproc_executor.py", "worker_main"), ("platforms/cuda.py", "get_device_capability")),
            ("--tensor-parallel-size {tp}",), ("fork", "spawn", "multiprocessing", "notebook", "script")),
    Failure("heads-tp", "ValueError",
            "Total number of attention heads ({m}) must be divisible by tensor parallel size ({tp}).",
            ("attention heads must be divisible by tensor parallel size", "can't run {short} on {tp} GPUs",
             "uneven head split across {tp} GPUs"),
            (("engine/arg_utils.py", "create_engine_config"), ("config/model.py", "verify_with_parallel_config")),
            ("--tensor-parallel-size {tp}",), ("heads", "divisible", "gpus", "tensor", "split")),
    Failure("bf16-old-gpu", "ValueError",
            "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu} GPU has compute "
            "capability {cc}. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
            "--dtype=half.",
            ("bfloat16 not supported on {gpu_short}", "{short} refuses to start on {gpu_short}",
             "{gpu_short} compute capability error with dtype"),
            (("worker/worker.py", "init_device"), ("platforms/cuda.py", "check_if_supports_dtype")),
            (), ("dtype", "half", "float16", "bfloat16", "older")),
    Failure("sm120-kernel", "RuntimeError",
            "CUDA error: no kernel image is available for execution on the device\nCUDA kernel errors might be "
            "asynchronously reported at some other API call",
            ("no kernel image is available on {gpu_short}", "fresh wheel crashes on first launch on {gpu_short}",
             "sm_120 not supported, RuntimeError on {gpu_short}"),
            (("v1/worker/gpu_worker.py", "determine_available_memory"), ("_custom_ops.py", "rms_norm")),
            (), ("blackwell", "sm120", "cu128", "nightly", "wheel")),
    Failure("chat-template", "ValueError",
            "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat "
            "template if the tokenizer does not define one.",
            ("chat completions rejected for {short}: no chat template", "missing chat template when serving {short}",
             "chat completions fails without template"),
            (("entrypoints/openai/serving_chat.py", "create_chat_completion"), ("entrypoints/chat_utils.py",
                                                                                "apply_hf_chat_template")),
            (), ("template", "jinja", "chat", "tokenizer", "completions")),
    Failure("trust-remote-code", "ValueError",
            "The repository for {model} contains custom code which must be executed to correctly load the model. "
            "Please pass the argument `trust_remote_code=True` to allow custom code to be run.",
            ("{short} needs trust_remote_code", "where does the trust-remote-code switch go for {short}?",
             "custom code error loading {short}"),
            (("transformers_utils/config.py", "get_config"), ("transformers_utils/config.py", "_maybe_remap")),
            (), ("remote", "custom", "trust", "repository", "code")),
    Failure("python-h", "",
            "fatal error: Python.h: No such file or directory",
            ("Triton build step cannot find Python.h", "source build stops at a missing Python header",
             "triton compile error Python.h"),
            (), (), ("headers", "dev", "compile", "gcc", "triton")),
    Failure("gguf-arch", "ValueError",
            "GGUF model with architecture {archlow} is not supported yet.",
            ("GGUF model with architecture {archlow} is not supported yet", "{short} GGUF fails to load",
             "gguf architecture error for {archlow}"),
            (("model_executor/model_loader/gguf_loader.py", "_get_gguf_weights_map"),), (),
            ("gguf", "quantized", "q4", "llama", "convert")),
    Failure("transformers-old", "ValueError",
            "The checkpoint you are trying to load has model type `{archlow}` but Transformers does not recognize "
            "this architecture.",
            ("model type {archlow} not recognized by Transformers", "KeyError {archlow} when loading {short}",
             "Transformers does not recognize this architecture"),
            (("transformers_utils/config.py", "get_config"),), (), ("transformers", "upgrade", "recognize", "type")),
    Failure("harmony", "openai_harmony.HarmonyError",
            "unexpected tokens remaining in message header: Some(\"to=functions.{archlow}\")",
            ("HarmonyError unexpected tokens remaining in message header", "gpt-oss tool call HarmonyError",
             "openai_harmony.HarmonyError with {short}"),
            (("entrypoints/openai/serving_chat.py", "chat_completion_stream_generator"),
             ("entrypoints/harmony_utils.py", "parse_output_into_messages")),
            ("--tool-call-parser openai", "--enable-auto-tool-choice"), ("harmony", "tool", "stream", "reasoning")),
    Failure("hermes-stream", "",
            "Error trying to handle streaming tool call.",
            ("hermes tool parser streaming arguments broken", "streamed tool arguments truncated with hermes",
             "{short}: broken tool-call deltas when streaming"),
            (), ("--tool-call-parser hermes", "--enable-auto-tool-choice"), ("hermes", "arguments", "delta", "stream")),
    Failure("xgrammar-schema", "ValueError",
            "The provided JSON schema contains features not supported by xgrammar.",
            ("array length limits in the schema are not enforced", "structured output with xgrammar not enforced",
             "json_schema response_format constraint not applied"),
            (("v1/structured_output/backend_xgrammar.py", "compile_grammar"),), ("--guided-decoding-backend xgrammar",),
            ("schema", "json", "constraint", "xgrammar", "guided")),
    Failure("moe-marlin", "ValueError",
            "moe_backend='marlin' is not supported for unquantized MoE. Expected one of ['triton', "
            "'batched_triton', 'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter'].",
            ("moe-backend marlin fails for unquantized {short}", "unsupported moe_backend for {short}",
             "marlin MoE error with bf16 checkpoint"),
            (("model_executor/layers/fused_moe/oracle/unquantized.py", "map_unquantized_backend"),),
            ("--moe-backend marlin",), ("moe", "marlin", "experts", "backend")),
    Failure("world-size", "ValueError",
            "World size ({tp}) is larger than the number of available GPUs ({n}) in this node.",
            ("World size larger than number of available GPUs", "tensor parallel {tp} fails on {n} GPU node",
             "multi-node ray setup world size error"),
            (("config/parallel.py", "__post_init__"),), ("--tensor-parallel-size {tp}",), ("ray", "node", "cluster")),
    Failure("c-undefined", "ImportError",
            "{path}/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
            ("_C.abi3.so undefined symbol after install", "ImportError undefined symbol with torch {torch}",
             "vllm import fails: undefined symbol"),
            (("platforms/cuda.py", "<module>"),), (), ("torch", "abi", "wheel", "build", "reinstall")),
    Failure("arch-unsupported", "ValueError",
            "Model architectures ['{arch}'] are not supported for now. Supported architectures: dict_keys([...])",
            ("Model architectures {arch} are not supported for now", "{short} architecture not supported",
             "ValueError architectures not supported"),
            (("model_executor/models/registry.py", "_raise_for_unsupported"),), (),
            ("architecture", "registry", "support", "upgrade")),
    Failure("lora-dynamic", "",
            "",
            ("load LoRA adapters without restarting the server", "dynamic LoRA loading at runtime",
             "swap adapters in while serving"),
            (), ("--enable-lora",), ("lora", "adapter", "runtime", "restart", "load")),
)


@dataclass(frozen=True)
class Request:
    """A request or a question without an error. Reports of one id are planted duplicates; ids of one `group`
    are near misses of each other (the same capability for another model, the same question through another API)."""

    id: str
    kind: str
    titles: tuple[str, ...]       # str.format fields: name (one spelling of the model), family
    sentences: tuple[str, ...]    # what reporters say, one or two of them per report
    words: tuple[str, ...] = ()
    group: str = ""
    command: str = ""             # a command line the reporter pastes, if any
    planted: bool = True          # False: a near miss of its group only (many answers, not one root cause)


# Model ids of requests: made-up names in the Hub's style, so that nothing depends on a family the bot knows.
REQUESTED_MODELS = (
    "acme-ai/Zephyrine-2-9B-Instruct", "northwind/Corvid-3-70B", "lumen-labs/Halcyon-1.5-14B-Chat",
    "tidewater/Marlowe-7B-v2", "quasar-ml/Octans-4-32B-Instruct", "brightline/Kestrel-MoE-16x3B",
    "openfjord/Skald-2-27B", "sundial/Verbena-3.1-8B", "cobalt-ai/Ferrous-12B-Base", "meridian/Tessera-V-2-11B",
    "fieldstone/Quillon-1-3B", "parallax/Nimbus-4-120B-A12B", "harbor/Selkie-2.5-VL-7B", "ironwood/Basalt-1-1B",
)
_SIZE_OR_VARIANT = re.compile(r"(?i)^(?:\d+(?:\.\d+)?b|a\d+b|\d+x\d+b|instruct|chat|base)$")
# Families with a known vLLM architecture: capability requests on them (MoE ones share the MoE key)
CAP_FAMILIES = (("Mixtral 8x7B", True), ("DeepSeek-V2-Lite", True), ("Qwen3-30B-A3B", True), ("Gemma 3", False),
                ("Mistral 7B", False), ("Falcon 40B", False), ("Baichuan2 13B", False))
CAPABILITIES_ASKED = (
    ("lora", ("LoRA support for {family}", "Please enable LoRA adapters on {family}",
              "{family}: LoRA adapters are not supported yet"), ("lora", "adapter", "rank", "peft")),
    ("pp", ("pipeline parallel support for {family}", "{family} with pipeline parallelism across nodes",
            "Please support pipeline parallel for {family}"), ("pipeline", "stages", "nodes")),
)
REQUESTS: tuple[Request, ...] = (
    Request("q-stream-offline", "usage",
            ("how to stream tokens from the offline LLM class", "streaming output with LLM.generate in offline inference",
             "is token by token output possible with the Python API?"),
            ("I call llm.generate and only get the text when everything is finished.",
             "Offline inference returns the whole completion at once; I want an iterator over new tokens."),
            ("stream", "tokens", "iterator", "offline"), group="streaming"),
    Request("q-stream-langchain", "usage",
            ("streaming with the LangChain VLLM wrapper does not stream", "LangChain VLLM streaming callback gets one chunk"),
            ("```python\nfrom langchain_community.llms import VLLM\nllm = VLLM(model='m', streaming=True)\n```\n"
             "The callback handler fires once with the whole text.",),
            ("langchain", "callback", "chunk"), group="streaming"),
    Request("q-several-models", "usage",
            ("can one vllm server host several models?", "serve multiple models behind one endpoint",
             "[Feature] multiple models in one server"),
            ("I would like one API endpoint for two models instead of two ports.",
             "Is there a way to load more than one model in the same server process?"),
            ("models", "endpoint", "router", "port")),
    Request("q-hidden-last", "usage",
            ("how to get the last hidden state from a causal LM", "embedding vector from a text generation model",
             "output_hidden_states with the LLM class"),
            ("I want a sentence vector from the final layer for retrieval.",
             "Is there an API to return the last hidden states instead of tokens?"),
            ("hidden", "vector", "layer", "retrieval"), group="hidden-states"),
    Request("q-hidden-layers", "usage",
            ("hidden states of all layers", "how to read intermediate layer activations"),
            ("I need the hidden states of every layer for probing, not only the last one.",),
            ("layers", "probing", "activations"), group="hidden-states"),
    Request("q-memory", "usage",
            ("why does vllm take 90% of GPU memory for a small model?", "GPU memory usage is huge even for opt-125m",
             "how to limit the memory vllm takes up"),
            ("nvidia-smi shows almost the whole card used although the model is tiny.",
             "A 1B model occupies 70 GB; I expected a few GB."),
            ("memory", "card", "nvidia-smi", "utilization"), group="memory"),
    Request("q-memory-limited", "usage",
            ("GPU memory use is still huge with a low --gpu-memory-utilization",),
            ("Memory stays high even though I lowered the utilization flag.",),
            ("memory", "eager", "graphs"), group="memory",
            command="vllm serve facebook/opt-125m --gpu-memory-utilization 0.2", planted=False),
    Request("q-local-model", "usage",
            ("how do I load a model from a local directory?", "use a local model path instead of the Hub",
             "load local model files without internet"),
            ("The cluster has no internet access; the weights are already on disk.",
             "I downloaded the checkpoint into a folder and want vllm to use it."),
            ("local", "path", "folder", "offline"), group="model-source"),
    Request("q-modelscope", "usage",
            ("download models through ModelScope", "VLLM_USE_MODELSCOPE still downloads from the Hub"),
            ("Setting VLLM_USE_MODELSCOPE=True does not change where the weights come from.",),
            ("modelscope", "mirror"), group="model-source"),
    Request("q-embedding-serving", "feature",
            ("support embedding models", "serve BGE embedding models", "encoder-only embedding model support"),
            ("We would like /v1/embeddings for sentence-transformer style encoders.",
             "Please add serving of text embedding models next to the LLMs."),
            ("embeddings", "encoder", "bge", "retrieval")),
    Request("q-lora-runtime", "feature",
            ("load LoRA adapters at runtime without restarting", "dynamic LoRA adapter loading while serving"),
            ("Adding a new adapter requires restarting the server today.",
             "We want to add and unload adapters on the fly."),
            ("adapter", "restart", "runtime", "reload")),
    Request("inst-windows", "installation",
            ("pip install vllm fails on Windows 11", "building vllm natively on Windows", "Windows prebuilt wheels?"),
            ("I run native Windows with PowerShell, not WSL.", "The wheel build stops on Windows 10."),
            ("windows", "wheel", "powershell", "msvc"), group="windows"),
    Request("inst-wsl", "installation",
            ("install fails in WSL2 on Windows 11", "vllm in WSL2 cannot find the GPU after pip install"),
            ("Ubuntu under WSL2, the driver is installed on the Windows side.",),
            ("wsl2", "ubuntu", "driver"), group="windows", planted=False),
    Request("inst-jetson", "installation",
            ("install vllm on Jetson AGX Orin", "building vllm on a Jetson Orin with JetPack 6"),
            ("aarch64 with JetPack 6, pip finds no wheel for this board.",),
            ("jetson", "aarch64", "jetpack", "orin")),
    Request("rocm-gfx1151", "feature",
            ("support for AMD Ryzen AI Max 395 (gfx1151)", "Strix Halo gfx1151 support on ROCm"),
            ("The APU has 128 GB of unified memory and ROCm 6.4 sees it as gfx1151.",),
            ("strix", "apu", "unified", "rocm"), group="rocm"),
    Request("rocm-gfx906", "feature",
            ("support AMD Instinct MI50 (gfx906)", "gfx906 support for MI50 cards"),
            ("ROCm dropped gfx906 but the cards still work with older releases.",),
            ("mi50", "vega", "rocm"), group="rocm"),
)


class _Vocab:
    """Zipf-distributed pseudo-words: a few hundred frequent ones and a long tail."""

    SYLLABLES = ("ka", "lo", "mi", "ten", "ru", "sa", "vel", "do", "ne", "pri", "qua", "zo", "bel", "cur", "fan",
                 "gri", "hul", "jas", "mor", "nix", "pol", "ras", "sti", "tor", "ul", "ver", "wen", "yal")

    def __init__(self, rng: random.Random, size: int = 60_000) -> None:
        self.words = []
        seen = set()
        while len(self.words) < size:
            w = "".join(rng.choice(self.SYLLABLES) for _ in range(rng.randint(2, 4)))
            if w not in seen:
                seen.add(w)
                self.words.append(w)
        self.weights = [1.0 / (i + 1) ** 1.05 for i in range(size)]
        self.cum = []
        total = 0.0
        for w in self.weights:
            total += w
            self.cum.append(total)

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)


COMMON = ("I", "am", "trying", "to", "run", "the", "model", "with", "vllm", "but", "it", "fails", "when", "after",
          "server", "start", "using", "docker", "image", "on", "my", "machine", "please", "help", "error", "same",
          "works", "fine", "with", "previous", "version", "log", "below", "also", "tried", "setting", "does", "not")


class Generator:
    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.vocab = _Vocab(random.Random(seed + 1))
        self.start = datetime(2023, 6, 1)

    # -- pieces ---------------------------------------------------------------------------------------
    def prose(self, n: int, words: tuple[str, ...] = ()) -> str:
        rng = self.rng
        out = []
        tail = self.vocab.sample(rng, n)
        for i in range(n):
            r = rng.random()
            if words and r < 0.12:
                out.append(rng.choice(words))
            elif r < 0.55:
                out.append(rng.choice(COMMON))
            else:
                out.append(tail[i])
        sentences = []
        i = 0
        while i < len(out):
            k = rng.randint(6, 16)
            sentences.append(" ".join(out[i:i + k]).capitalize() + ".")
            i += k
        return " ".join(sentences)

    def collect_env(self, ver: str, gpu: str, n_gpus: int) -> str:
        rng = self.rng
        torch = rng.choice(TORCH)
        gpus = "\n".join(f"GPU {i}: {gpu}" for i in range(n_gpus))
        if rng.random() < 0.5:
            return (f"Collecting environment information...\nPyTorch version: {torch}\nIs debug build: False\n"
                    f"CUDA used to build PyTorch: 12.{rng.randint(1, 9)}\nROCM used to build PyTorch: N/A\n\n"
                    f"OS: Ubuntu 22.04.{rng.randint(1, 5)} LTS (x86_64)\nGCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) "
                    f"11.4.0\nPython version: 3.{rng.randint(9, 12)}.{rng.randint(0, 12)} (main) [GCC 11.4.0] "
                    f"(64-bit runtime)\nIs CUDA available: True\nGPU models and configuration: \n{gpus}\n\n"
                    f"Nvidia driver version: 5{rng.randint(35, 80)}.{rng.randint(10, 99)}\n"
                    f"Versions of relevant libraries:\n[pip3] numpy==1.26.4\n[pip3] torch=={torch}\n"
                    f"[pip3] transformers==4.{rng.randint(40, 57)}.{rng.randint(0, 3)}\n[pip3] triton==3.{rng.randint(0, 5)}.0\n"
                    f"[conda] Could not collectROCM Version: Could not collect\nNeuron SDK Version: N/A\n"
                    f"vLLM Version: {ver}\nvLLM Build Flags:\nCUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled\n"
                    f"GPU Topology:\n\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-{rng.randint(15, 127)}\t0\n")
        banner = lambda t: f"==============================\n{t:^30}\n==============================\n"  # noqa: E731
        return (banner("System Info") + f"OS                           : Ubuntu 24.04.{rng.randint(1, 3)} LTS (x86_64)\n"
                f"GCC version                  : (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0\n"
                f"Libc version                 : glibc-2.39\n\n" + banner("PyTorch Info")
                + f"PyTorch version              : {torch}\nIs debug build               : False\n"
                f"CUDA used to build PyTorch   : 12.{rng.randint(4, 9)}\n\n" + banner("Python Environment")
                + f"Python version               : 3.12.{rng.randint(0, 11)} (main) [GCC 13.3.0] (64-bit runtime)\n\n"
                + banner("CUDA / GPU Info") + f"Is CUDA available            : True\n"
                f"GPU models and configuration : \n{gpus}\n\nNvidia driver version        : 5{rng.randint(50, 90)}.{rng.randint(10, 99)}\n\n"
                + banner("CPU Info") + f"Architecture:                         x86_64\nCPU(s):                               "
                f"{rng.choice((32, 64, 128, 192))}\nModel name:                           AMD EPYC {rng.randint(7000, 9999)}\n\n"
                + banner("Versions of relevant libraries") + f"[pip3] torch=={torch}\n[pip3] transformers==4.{rng.randint(50, 57)}.0\n"
                "[pip3] flashinfer-python==0.3.1\n[conda] Could not collect\n\n" + banner("vLLM Info")
                + f"ROCM Version                 : Could not collect\nvLLM Version                 : {ver}\n"
                "vLLM Build Flags:\n  CUDA Archs: Not Set; ROCm: Disabled\n\n" + banner("Environment Variables")
                + f"CUDA_VISIBLE_DEVICES={','.join(str(i) for i in range(n_gpus))}\nNCCL_CUMEM_ENABLE=0\n")

    def values(self, model: str, gpu: str, ver: str) -> dict[str, Any]:
        rng = self.rng
        arch = rng.choice(ARCHS)
        return {
            "model": model, "short": model.split("/")[-1], "arch": arch, "archlow": arch.lower().split("for")[0],
            "gb": f"{rng.uniform(0.1, 40):.2f}", "gb2": f"{rng.choice((23.5, 39.4, 79.1, 47.4, 31.4)):.2f}",
            "n": rng.randint(2, 8) * 1024 if rng.random() < 0.5 else rng.randint(1, 9), "m": rng.choice(
                (32768, 40960, 131072, 262144, 40, 64, 28)), "rank": rng.randint(0, 7),
            "path": rng.choice(("/usr/local/lib/python3.12/dist-packages", "/opt/conda/lib/python3.11/site-packages",
                                f"/home/{self.vocab.sample(rng, 1)[0]}/venv/lib/python3.10/site-packages")),
            "tp": rng.choice((2, 3, 4, 6, 8)), "pp": rng.choice((2, 3, 4)), "gpu": gpu, "gpu_short":
                gpu.replace("NVIDIA ", "").replace("GeForce ", ""), "cc": rng.choice(("7.0", "7.5", "6.1")),
            "torch": rng.choice(TORCH), "ver": ver,
        }

    def traceback(self, f: Failure, v: dict[str, Any], tag: str) -> str:
        rng = self.rng
        header = f"({tag} pid={rng.randint(100, 99999)}) ERROR {rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} " \
                 f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} [core.py:{rng.randint(500, 900)}] "
        frames = [("v1/engine/core.py", "run_engine_core"), ("v1/engine/core.py", "__init__"), *f.frames]
        lines = [header + "EngineCore failed to start.", header + "Traceback (most recent call last):"]
        for file, func in frames:
            lines.append(header + f'  File "{v["path"]}/vllm/{file}", line {rng.randint(20, 3000)}, in {func}')
            lines.append(header + f"    {func}(self.vllm_config)")
        message = f.message.format(**v)
        lines.append(header + f"{f.type}: {message}" if f.type else header + message)
        return "\n".join(lines)

    def logs(self, ver: str, model: str, k: int) -> str:
        rng = self.rng
        out = []
        for _ in range(k):
            out.append(f"(APIServer pid={rng.randint(100, 99999)}) INFO {rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                       f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 [{rng.choice(('api_server.py', 'utils.py', 'model.py', 'gpu_worker.py'))}:"
                       f"{rng.randint(10, 2000)}] " + rng.choice((
                           f"vLLM API server version {ver}", f"Resolved architecture: {rng.choice(ARCHS)}",
                           f"Using max model len {rng.choice((4096, 32768, 131072))}",
                           f"Available KV cache memory: {rng.uniform(1, 60):.2f} GiB",
                           f"non-default args: {{'model': '{model}', 'port': 8000}}",
                           "Automatically detected platform cuda.", f"GPU KV cache size: {rng.randint(1000, 900000)} tokens")))
        return "\n".join(out)

    def command(self, model: str, ver: str, flags: str) -> str:
        """The command in one of the shapes reporters paste: vllm serve, the module entry point, docker, LLM()."""
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return f"```bash\nvllm serve {model} --port 8000 {flags}\n```"
        if r < 0.7:
            return (f"```bash\npython -m vllm.entrypoints.openai.api_server \\\n    --model {model} \\\n"
                    f"    --port 8000 {flags}\n```")
        if r < 0.85:
            return (f"```bash\ndocker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface "
                    f"-p 8000:8000 --ipc=host vllm/vllm-openai:v{ver} --model {model} {flags}\n```")
        args = ", ".join(f"{f.split()[0].lstrip('-').replace('-', '_')}={f.split()[1] if ' ' in f else 'True'}"
                         for f in flags.split(" --") if f.strip() and not f.strip().startswith("'"))
        return f"```python\nfrom vllm import LLM\n\nllm = LLM(model=\"{model}\"{', ' + args if args else ''})\n```"

    def cause(self, v: dict[str, Any], header: str) -> str:
        """An earlier exception in a chain ("The above exception was the direct cause ...")."""
        rng = self.rng
        exc, msg = rng.choice((("RuntimeError", "Worker failed with error '{short} load failed', please check the "
                                                "stack trace above for the root cause"),
                               ("KeyError", "'model.layers.{rank}.mlp.experts'"),
                               ("OSError", "[Errno 12] Cannot allocate memory")))
        return "\n".join((header + "Traceback (most recent call last):",
                          header + f'  File "{v["path"]}/vllm/v1/executor/multiproc_executor.py", line '
                                   f'{rng.randint(20, 900)}, in wait_for_ready',
                          header + "    raise e", header + f"{exc}: {msg.format(**v)}", header,
                          header + "The above exception was the direct cause of the following exception:", header))

    # -- issues ---------------------------------------------------------------------------------------
    def _env_block(self, env: str, shape: str) -> str:
        if shape == "details":
            return (f"<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n```text\n{env}"
                    "```\n\n</details>")
        if shape == "fence":
            return f"```text\n{env}```"
        return "```text\nThe output of `python collect_env.py`\n```"  # left as the template's placeholder

    def request(self, number: int) -> dict[str, Any]:
        """A request or a question without an error: a model asked for, a capability on a model family, or one
        of REQUESTS."""
        rng = self.rng
        ver = rng.choice(VERSIONS)
        gpu = rng.choice(GPUS)
        env = self._env_block(self.collect_env(ver, gpu, 1), rng.choices(("details", "placeholder"), (60, 40))[0])
        pick = rng.random()
        if pick < 0.3:
            model = rng.choice(REQUESTED_MODELS)
            org, name = model.split("/")
            base = "-".join(p for p in name.split("-") if not _SIZE_OR_VARIANT.match(p))
            spelling = rng.choice((model, name, base, base.replace("-", " "), base.replace("-", "").lower()))
            kind, rid, group = "new-model", "model:" + model, ""
            title = rng.choice(("{name}", "Support for {name}", "Please add {name}", "{name} support")).format(
                name=spelling)
            describe = f"{rng.choice(('It is a new open model.', 'Weights are on the Hub.'))} {self.prose(rng.randint(10, 60))}"
            body = self._body(kind, env, describe, model)
        elif pick < 0.45:
            family, moe = rng.choice(CAP_FAMILIES)
            cap, titles, words = rng.choice(CAPABILITIES_ASKED)
            kind, group = "feature", "cap:" + cap
            rid = f"cap:{cap}:" + ("moe" if moe else family)
            title = rng.choice(titles).format(family=family)
            describe = self.prose(rng.randint(15, 80), words)
            body = self._body(kind, env, describe, MODELS[0])
        else:
            req = rng.choice(REQUESTS)
            kind, rid, group = req.kind, req.id if req.planted else None, req.group or req.id
            title = rng.choice(req.titles)
            said = " ".join(rng.sample(req.sentences, min(len(req.sentences), rng.randint(1, 2))))
            describe = f"{said} {self.prose(rng.randint(10, 80), req.words)}"
            if req.command:
                describe += f"\n\n```sh\n{req.command}\n```"
            body = self._body(kind, env, describe, MODELS[0])
        created = self.start + timedelta(minutes=number * 7)
        return {
            "number": number, "title": PREFIXES[kind] + title, "body": body,
            "state": "closed" if rng.random() < 0.6 else "open", "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "html_url": f"https://github.com/vllm-project/vllm/issues/{number}",
            "labels": [{"name": {"new-model": "new model", "feature": "feature request"}.get(kind, kind)}],
            "user": {"login": "user" + str(rng.randint(1, 50_000))},
            "synthetic": {"failure": None, "request": rid, "group": group, "template": kind},
        }

    def issue(self, number: int, failure: Failure | None = None) -> dict[str, Any]:
        rng = self.rng
        model = rng.choice(MODELS)
        gpu = rng.choice(GPUS)
        ver = rng.choice(VERSIONS)
        if failure is not None:
            kind = rng.choices(("bug", "usage", "installation", "free"), (80, 8, 4, 8))[0]
        else:
            kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        v = self.values(model, gpu, ver)
        env = self.collect_env(ver, gpu, rng.choice((1, 1, 2, 4, 8)))
        shape = rng.choices(("details", "fence", "placeholder"), (70, 22, 8))[0]
        env_block = self._env_block(env, shape)
        if failure is not None:
            title = rng.choice(failure.titles).format(**v)
            flags = " ".join(fl.format(**v) for fl in failure.flags)
            story = self.prose(rng.randint(20, 90), failure.words)
            tag = rng.choice(("EngineCore_DP0", "Worker_TP0", "VllmWorker rank=0"))
            if failure.type:
                detail = self.traceback(failure, v, tag)
                if rng.random() < 0.25:
                    first, rest = detail.split("\n", 1)  # chained: the same process, without the start banner
                    detail = self.cause(v, first.removesuffix("EngineCore failed to start.")) + "\n" + rest
            else:
                detail = failure.message.format(**v) if failure.message else self.prose(20, failure.words)
            describe = (f"{story}\n\n{self.command(model, ver, flags)}\n\n```text\n"
                        f"{self.logs(ver, model, rng.randint(3, 25))}\n{detail}\n```\n\n{self.prose(rng.randint(5, 40))}")
        else:
            title = self.prose(rng.randint(5, 12)).rstrip(".")
            describe = self.prose(rng.randint(40, 250))
            if rng.random() < 0.3:
                describe += f"\n\n```text\n{self.logs(ver, model, rng.randint(3, 30))}\n```"
            if rng.random() < 0.3:
                describe += "\n\n" + self.command(model, ver, "")
        body = self._body(kind, env_block, describe, model)
        created = self.start + timedelta(minutes=number * 7)
        label = {"free": "bug", "new-model": "new model", "doc": "documentation", "rfc": "RFC",
                 "feature": "feature request"}.get(kind, kind)
        return {
            "number": number, "title": PREFIXES[kind] + title, "body": body,
            "state": "closed" if rng.random() < 0.6 else "open", "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "html_url": f"https://github.com/vllm-project/vllm/issues/{number}",
            "labels": [] if kind == "free" else [{"name": label}],
            "user": {"login": "user" + str(rng.randint(1, 50_000))},
            "synthetic": {"failure": failure.id if failure else None, "request": None, "template": kind},
        }

    def _body(self, kind: str, env: str, describe: str, model: str) -> str:
        """The Markdown GitHub renders from each issue form (`### <label>` sections, `_No response_`)."""
        env_section = f"### Your current environment\n\n{env}\n\n"
        if kind == "bug":
            return f"{env_section}### 🐛 Describe the bug\n\n{describe}\n\n{CHECKLIST}"
        if kind == "usage":
            return f"{env_section}### How would you like to use vllm\n\n{describe}\n\n{CHECKLIST}"
        if kind == "installation":
            return (f"{env_section}### How you are installing vllm\n\n```sh\npip install -vvv vllm\n```\n\n"
                    f"{describe}\n\n{CHECKLIST}")
        if kind == "feature":
            return (f"### 🚀 The feature, motivation and pitch\n\n{describe}\n\n### Alternatives\n\n_No response_\n\n"
                    f"### Additional context\n\n_No response_\n\n{CHECKLIST}")
        if kind == "performance":
            return (f"### Proposal to improve performance\n\n_No response_\n\n### Report of performance regression\n\n"
                    f"{describe}\n\n### Misc discussion on performance\n\n_No response_\n\n"
                    f"### Your current environment (if you think it is necessary)\n\n{env}\n\n{CHECKLIST}")
        if kind == "new-model":
            return (f"### The model to consider.\n\nhttps://huggingface.co/{model}\n\n"
                    f"### The closest model vllm already supports.\n\n_No response_\n\n"
                    f"### What's your difficulty of supporting the model you want?\n\n{describe}\n\n{CHECKLIST}")
        if kind == "doc":
            return f"### 📚 The doc issue\n\n{describe}\n\n### Suggest a potential alternative/fix\n\n_No response_\n\n{CHECKLIST}"
        if kind == "rfc":
            return (f"### Motivation.\n\n{describe}\n\n### Proposed Change.\n\n{self.prose(30)}\n\n### Feedback Period.\n\n"
                    f"_No response_\n\n### CC List.\n\n_No response_\n\n### Any Other Things.\n\n_No response_\n\n{CHECKLIST}")
        return f"{describe}\n\n{env}" if self.rng.random() < 0.5 else describe  # no template at all

    def issues(self, n: int, start: int = 1, failure_share: float = 0.45,
               request_share: float = 0.15) -> Iterator[dict[str, Any]]:
        """`failure_share` of the issues report a catalogue failure, `request_share` are requests and questions
        (REQUESTS, a model asked for, a capability on a family), the rest free reports of every template."""
        for number in range(start, start + n):
            r = self.rng.random()
            if r < failure_share:
                yield self.issue(number, self.rng.choice(CATALOGUE))
            elif r < failure_share + request_share:
                yield self.request(number)
            else:
                yield self.issue(number, None)


def generate(n: int, seed: int = 0, start: int = 1) -> Iterator[dict[str, Any]]:
    """n issues numbered from `start`, the same for the same seed."""
    return Generator(seed).issues(n, start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.out, "w", encoding="utf-8") as f:
        for issue in generate(a.n, a.seed):
            f.write(json.dumps(issue, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
