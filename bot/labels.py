"""Topic labels from findings and reliable signals in the Report (never from words in an env dump).

A label is the sum of evidence from independent *sources*; a topic is labelled when its score reaches
`THRESHOLD`. Within one source only the strongest signal counts, so the same word repeated, or two weak
words in the description, never add up to a label on their own. The sources:

| source      | what it reads                                                                           |
|-------------|-----------------------------------------------------------------------------------------|
| `finding`   | labels of the rules that fired (confidence >= 0.5)                                      |
| `kind`      | the report kind (installation, new-model, performance)                                  |
| `platform`  | the platform the failure is on (collect_env: ROCm, XPU, TPU, CPU-only)                   |
| `title`     | words in the title (template prefix removed)                                            |
| `prose`     | words in the description, with code blocks, log/traceback lines, pip lists, env dumps   |
|             | and `key=value` config lines removed                                                    |
| `failure`   | the root-cause exception (type and message) and bare error lines                        |
| `frame`     | files of the root-cause traceback (the innermost vLLM frame counts more), and the       |
|             | root cause's raise site from the source index: its file and function, read as the       |
|             | innermost vLLM frame (not a wrapper's or a log call's; of tied sites, what they share)  |
| `flag`      | the reporter's own flags (command line, `non-default args`)                             |
| `model`     | the served model name and resolved architectures, only next to evidence from a finding, |
|             | the kind, the title, the failure, a frame or a flag (it says what ran); a quantization   |
|             | format in a model id or a kind of model ("VLM") in the title counts here, not as title,  |
|             | when the title is about a feature that model only went through                          |
| `subject`   | the model the title names failing itself (bot/subject.py: wrong output, it fails to     |
|             | load or start or "fails" right after its name, only this model, a title that is the      |
|             | model's name)                                                                             |

The tables (`WORDS`, `FAILURE`, `FRAMES`, `FLAGS`, `MODEL`, `PLATFORMS`, `KINDS`) are the whole policy;
`docs/rules.md` lists the taxonomy. A repository can rename topics with `repo_labels()`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.decision import Finding
from bot.literals import Gated
from bot.matchset import MatchSet
from bot.report.model import Frame, Report
from bot.report.prose import prose_lines
from bot.subject import (
    MOE_MODELS,
    SUBJECT_TOPICS,
    model_is_the_subject,
    model_kind_is_the_subject,
    moe_is_the_subject,
    quantized_model_is_the_subject,
    without_kv_cache_type,
    without_model_id_formats,
    without_model_kind,
)
from bot.wording import Wording

TOPICS: tuple[str, ...] = (
    "speculative-decoding", "pipeline-parallel", "tensor-parallel", "ray", "quantization", "moe", "memory",
    "installation", "rocm", "tpu", "cpu", "intel-gpu", "structured-output", "tool-calling", "multi-modality",
    "torch.compile", "lora", "frontend", "new-model", "performance", "kv-cache", "multi-node", "nvidia-compat",
)
NEEDS_INFO = "needs-info"
ALL_LABELS: tuple[str, ...] = (*TOPICS, NEEDS_INFO)

THRESHOLD = 1.0
MIN_FINDING_CONFIDENCE = 0.5


def repo_labels(labels: tuple[str, ...], mapping: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Topic names -> the repository's label names (a per-repo config supplies `mapping`)."""
    if not mapping:
        return labels
    out: list[str] = []
    for label in labels:
        name = mapping.get(label, label)
        if name and name not in out:
            out.append(name)
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------
# Signal tables. Patterns are searched case-insensitively unless they start with "(?-i)"; keep them free of
# nested quantifiers (issue text is untrusted).

@dataclass(frozen=True)
class Word:
    """A phrase in the title or the prose of the description."""

    topic: str
    pattern: str
    title: float = 1.0      # weight when found in the title
    prose: float = 0.5      # weight when found in the description prose
    # topics a title can be about that this word then only qualifies ("streaming" of a tool call): with one of them
    # in the title the word does not count there
    qualifies: tuple[str, ...] = ()
    # a title this pattern matches uses the word for something else than the topic ("crashes during a benchmark": the
    # benchmark is only the load); the word does not count in that title
    unless_title: str = ""


# model families, for "support <family…>" / "is <family…> supported"
_FAMILIES = (r"\b(qwen|llama|glm|chatglm|gemma|mistral|mixtral|deepseek|internvl|internlm|minicpm|phi|kimi|minimax|"
             r"baichuan|falcon|olmo|granite|jamba|nemotron|ernie|hunyuan|exaone|llava|pixtral|molmo|idefics|"
             r"paligemma|cohere|aya|starcoder|codellama|gpt-oss|grok|seed-oss|step\d?)"
             # (not a project named after one: "llama.cpp", "llama-cpp-python")
             r"(?![-_.]?cpp\b)")

WORDS: tuple[Word, ...] = (
    Word("speculative-decoding", r"\bspec\w{0,12}\s*[-_ ]?decod\w*|\bspec[-_ ]?dec\b|\bspeculat\w*"),
    Word("speculative-decoding", r"\b(eagle-?3?(?![-_]?\d+b)|medusa|mtp|draft model|ngram speculat\w*)\b", 1.0, 0.3),
    Word("pipeline-parallel", r"\bpipeline[-_ ]parallel\w*"),
    # "TP=1" / "PP = 1" say the feature is off
    Word("pipeline-parallel", r"(?-i:\bPP\b)(?!\s*[=:]?\s*1\b)|\bpp\s*(=\s*([2-9]|\d\d)|>\s*\d)|\bpp[2-9]\b",
         1.0, 0.3),
    Word("tensor-parallel", r"\btensor[-_ ]parallel\w*|\btp[-_ ]?size\b"),
    Word("tensor-parallel", r"\b(attention|kv|query) heads?\b.{0,40}\bdivisib\w*|\bdivisib\w*.{0,40}\bheads\b"),
    Word("tensor-parallel", r"\b(using|use|with|enable|enabling) tp\b(?!\s*[=:]?\s*1\b)|\btp (inference|mode|group)\b"),
    Word("tensor-parallel", r"(?-i:\bTP\b)(?!\s*[=:]?\s*1\b)|\btp\s*(=\s*([2-9]|\d\d)|>\s*\d)|\bmulti[-_ ]?gpus?\b|"
                            r"\b(multiple|several|more than \d+|[2-8]) gpus\b", 1.0, 0.3),
    # (and the Ray executor's classes: RayWorkerWrapper, RayDistributedExecutor)
    Word("ray", r"\bray\b(?![-_ ]?tracing)|\bplacement[-_ ]?groups?\b|\bray\w{0,20}(worker|executor|actor)\w*|"
                r"\bkuberay\b|\b(worker|engine)[-_]use[-_]ray\b(?!\W{0,3}[=:]\W{0,3}false)"),
    # saying the deployment spans nodes is the reporter's own setup, not a passing word
    # ("2 H100 nodes", "multiple single-GPU machines")
    Word("multi-node", r"\b(multiple|several|multi|many|two|three|four|[2-9]|across)( [\w-]+){0,2} "
                       r"(machines|nodes|hosts)\b|"
                       r"\b(each|every|worker|head) node\b", 1.0, 1.0),
    Word("multi-node", r"\bmulti[-_ ]?nodes?\b|\bray cluster\b|多机|多节点|跨节点|多台(机器|服务器)"),
    # nodes x GPUs per node ("2 * 8 A100", "2x8 H100"), or more data-center GPUs than one node holds ("H800*16")
    Word("multi-node", r"(?<![\w.])[2-9] ?[x*×] ?8 ?[x*×]? ?(nvidia )?(a|h|b|mi)\d{2,3}\w*|"
                       r"\b(a|h|b)\d{3}\w* ?[x*×] ?(1[6-9]|[2-9]\d)\b|"
                       r"(?<![\w.])(1[6-9]|[2-9]\d) ?[x*×] ?(a|h|b)\d{3}\b", 1.0, 0.5),
    # `ray start --head` / `--address`: the reporter built a Ray cluster
    Word("ray", r"\bray start\b", 1.0, 1.0),
    Word("quantization", r"\bquantiz\w*|\b(awq|gptq|gguf|bitsandbytes|bnb|nvfp4\w*|mxfp4\w*|fp4|int4|int8|w8a8|w4a16|"
                         r"w4a8|compressed[-_ ]tensors|marlin|fp8|deep[-_ ]?gemm)\b|"
                         # the other formats and toolkits a checkpoint is quantized with
                         r"\b(hqq|quanto|quark|exl2|autoround|torchao|modelopt|aqlm|squeezellm|machete|nf4|mxfp[68]|"
                         r"fp6)\b"),
    # (DeepEP, PPLX: the all-to-all kernels of expert parallelism)
    Word("moe", r"\bmoe\b|(?-i:\bEP\b)(?!\s*rank)|\bmixture[-_ ]of[-_ ]experts\b|\bexpert[-_ ]parallel\w*|"
                r"\bfused[-_ ]?moe\b|[a-z0-9]moe\b|\bdeep[-_ ]?ep\b|\bpplx\b|\ball[-_ ]?2[-_ ]?all\b"),
    # a model named by its id: "-A3B" active-parameter names, expert counts, and the MoE families (in the title, it
    # is the subject unless the title is about a feature the model went through: bot/subject.py)
    Word("moe", MOE_MODELS, 0.0, 0.3),
    Word("memory", r"\bout of memory\b|\boom\b|\bcuda oom\b|\bno available memory\b|\bnot enough memory\b|"
                   r"\b(gpu |vram |ram )?memory (leak|usage|footprint|consumption|requirements?|allocation)\b|"
                   r"\bgpu[-_ ]memory[-_ ]utili[sz]ation\b|\b(gpu|vram|memory) consumption\b|"
                   r"\b(much|more|less|high|higher|reduce|lower|limit|save|saving)( the)? (gpu |cpu )?"
                   r"(memory|vram|ram)\b|"
                   r"\b(memory|vram|ram) (is not released|keeps growing)\b|\bcpu[-_ ]offload\w*|"
                   # "consuming (a lot of) GPU memory", "occupies all the VRAM"
                   r"\b(consum|occup|hog)\w*( [\w-]+){0,3} (gpu |vram |video )?(memory|vram)\b|"
                   r"\b(gpu |vram |host |device )?memory (issues?|problems?|shortage|pressure)\b"),
    # KV-cache sizing is a memory question (not prefix-caching bugs)
    Word("memory", r"\bkv[-_ ]?cache\b.{0,60}\b(memory|\w*allocat\w*|capacity|max[-_ ]?(model|seq\w*)[-_ ]?len\w*)|"
                   r"\b(memory|\w*allocat\w*)\b.{0,60}\bkv[-_ ]?cache\b"),
    Word("kv-cache", r"\bkv[-_ ]?cache\b|\bprefix[-_ ]cach\w*|\bkv blocks?\b"),
    # disaggregated prefill moves the KV cache between engines through a KV connector
    Word("kv-cache", r"\bkv[-_ ]?(transfer|connector)s?\b|\bdisaggregat\w*|\bp/?d disagg\w*|\b(nixl|lmcache|mooncake)"
                     r"(connector\w*)?\b"),
    Word("installation", r"\binstall\w*|\bbuild(ing)? (from|vllm from) source\b|\bcompil\w* (from )?(the )?source\b|"
                         r"\bpip wheel\b|\bwheels?\b|\bsetup\.py\b|\bundefined symbol\b|"
                         r"\b(on|native|natively|for) windows\b|\b(build|compil)\w* (the )?vllm\b|"
                         r"\bwindows (\d+|native|support|wheels?|build)\b|"
                         # building vLLM's image is installing it
                         r"\bdockerfile\w*|\bdocker build\b|"
                         r"\b(build(ing)?|(?<!pre-)(?<!pre)built) (the |a |an )?(\w+ )?(docker )?image\b",
         1.0, 0.3,
         # "installed successfully, but inference fails": the installation is what went right
         unless_title=r"\binstall\w* (\w+ )?successfully\b|\bsuccessfully install\w*"),
    # an AMD CPU ("AMD Ryzen", "AMD 7940HS") is not ROCm
    Word("rocm", r"\brocm\b|\bamd\b(?!\s+(ryzen|epyc|threadripper|athlon|\d{4}\w{0,2}\b|cpus?\b))|"
                 r"\bmi\d{3}[a-z]{0,2}\b|\bgfx\d{3,4}\w?\b|\bradeon\b|(?-i:\bHIP\b)"),
    Word("tpu", r"\btpus?\b"),
    Word("cpu", r"\bcpu[-_ ]?(backend|only|inferenc\w*|serving|mode|device|platform|build|wheel|docker|image|"
                r"environment|machine|server|node|instance)s?\b|\bx86\b|"
                r"\b(on|in|with|for|support\w*|using|run\w*|deploy\w*) (a |the |my |only )?cpus?\b"
                r"(?![-_ ]?(offload|memory|ram|usage|utili[sz]ation|time|cores?|threads?))",
         1.0, 0.3),
    Word("cpu", r"\bcpu\b(?![-_ ]?(offload\w*|usage|utili[sz]ation|memory|threads?|cores?|bound|overhead|ram|swap))",
         0.5, 0.3),
    # (and vLLM's CPU images and wheels by name: "vllm-cpu-release-repo", "vllm_cpu")
    Word("cpu", r"\b(docker|container|image) cpu\b|\bcpu avx\w*|\bavx2\b|\bvllm[-_]cpu\b"),
    Word("cpu", r"\bapple silicon\b|\bmacos\b|\bmac ?book\b|\bm[1-4] (pro|max|ultra)\b|\bavx[-_ ]?512\w*|\bppc64le\b|"
                r"\bs390x\b|"
                # vLLM's OpenVINO backend runs on the CPU (not "OpenVINO GPU")
                r"\bopenvino\b(?![-_ ]?gpu)"),
    Word("intel-gpu", r"\bxpu\b|\bintel (gpu|arc|data center gpu)\b|\barc (a|b)\d{3}\b|\bbmg\b|\bb[5-7]0\b|"
                      r"\bbattlemage\b|\barc pro\b|\bintel graphics\b|\bgaudi\d?\b|\bhpu\b"),
    Word("structured-output", r"\bstructured[-_ ]outputs?\b|"
                              r"\bguided[-_ ](decoding|generation|json|regex|choice|grammar)\b|"
                              r"\bjson[-_ ]?schema\b|\bxgrammar\b|\boutlines\b|\blm[-_ ]format[-_ ]enforcer\b|"
                              r"\bresponse_format\b|\bjson mode\b|\bjson_object\b|\bstructural[-_ ]tags?\b|"
                              r"\b(ebnf|lark|gbnf)\b|\bllguidance\b|\bguidance backend\b|"
                              r"\bconstrained (decoding|generation|sampling)\b"),
    Word("tool-calling", r"\btool[-_ ]?call\w*|\bfunction[-_ ]call\w*|\btool[-_ ]parser\b|\btool_choice\b|"
                         r"\bauto[-_ ]tool[-_ ]choice\b|\bhermes[-_ ]?(tool)?[-_ ]?parser\b|\btools? use\b"),
    Word("multi-modality", r"\bmulti[-_ ]?modal\w*|\bvlm\b|\bvision\b|(?<![a-z])vl(?![a-z])|\dvl|"
                           r"(?<![a-z])omni(?![a-z])|vl(?=for|model)|\bllava\w*|"
                           r"\binternvl\w*|\bpixtral\b|\bimage (input|embed\w*|url|token\w*)s?\b|\bvideo input\w*|"
                           r"\baudio input\w*|\bglm-?4\.?\d{0,2}v\b|"
                           r"\bminicpm[-_]?(llama\d?[-_]?|\d(\.\d)?[-_]?)?[ov](?![a-z])|"
                           r"\bqwen\d?(\.\d)?-?audio\b|"
                           r"\bflorence[-_ ]?2?\b|\bvision[-_ ]language\b|\bmolmo\b|\bidefics\w*|\bpaligemma\w*|多模态|"
                           r"\bwhisper\b|\blimit[-_ ]mm[-_ ]per[-_ ]prompt\b|"
                           # a vision encoder in a model's name ("…-CLIP-ViT", "SigLIP")
                           r"(?<![a-z])vit(?![a-z])|\bsiglip\w*"),
    # giving the model an image (a video, a sound) is a multimodal input
    Word("multi-modality", r"\b(pass\w*|send\w*|upload\w*|feed\w*|provid\w*|attach\w*|input\w*|includ\w*)"
                           r"( (an?|the|my|multiple|several|many|two|base64|local))? (images?|videos?|audio|pictures?|"
                           r"photos?|frames)\b"),
    Word("multi-modality", r"(?<!kernel )(?<!docker )(?<!container )(?<!base )\b(images?|videos?|audio)\b", 0.5, 0.3),
    Word("torch.compile", r"\btorch\.?compile\b|\b(torch)?inductor\b|\bdynamo\b|\bcompilation[-_ ]config\b|"
                          r"\bvllm[-_ ]compile\b"),
    Word("torch.compile", r"\bcuda ?graphs?\b|\bcudagraph\w*|\benforce[-_ ]eager\b", 0.5, 0.3),
    Word("lora", r"\bs?lora\b|\blora[-_ ](adapter|module)s?\b|\benable[-_ ]lora\b|\bmulti[-_ ]?lora\b"),
    # ("OpenAPI server": the OpenAI server misnamed, as no server serves only an OpenAPI spec)
    Word("frontend", r"\bopenai[-_ ]?(api|compatible|server|spec|client|endpoint|templates?|format|like|style)"
                     r"(?![a-z])|\bopen[-_ ]?api[-_ ]?(server|compatible)\b|"
                     r"\b(chat|default|jinja)[-_ ]templates?\b|\b(chat/)?completions? (api|endpoint)\b|/v1/\w+|"
                     r"\bprompt_logprobs\b|\blogprobs\b"),
    # batched inference through the offline `LLM` class is that API's question, unless the title is about what the
    # batch ran with (a parallelism, a platform, a model kind, its speed)
    Word("frontend", r"\boffline batch(ed)? inference\b|\bbatch(ed)? offline inference\b", 1.0, 0.5,
         ("tensor-parallel", "pipeline-parallel", "multi-node", "ray", "multi-modality", "speculative-decoding",
          "structured-output", "tool-calling", "quantization", "moe", "memory", "performance", "cpu", "tpu", "rocm",
          "intel-gpu")),
    Word("frontend", r"\bapi[-_ ]server\b|\bserving_chat\b|\bendpoints?\b|\bapi gateway\b|(?-i:\bLLM\b) class\b|"
                     r"\boffline inference\b",
         0.5, 0.3),
    # streaming tokens to the client; a tool parser's streaming is tool calling ("tool calls are lost when streaming",
    # "stream=True returns no tool_calls")
    Word("frontend", r"(?<!parser )(?<!parsers )(?<!tool )\bstreaming\b(?![-_ ]?(tool|function|parser))|"
                     r"(?<!parser )(?<!parsers )(?<!tool )\bstream(ing)? (the )?(tokens?|output|responses?|chat)\b",
         1.0, 0.3, ("tool-calling",)),
    # the offline `LLM` API, request parameters, CLI arguments, metrics: the user-facing surface of vLLM
    Word("frontend", r"(?-i:\bLLM\()|\bllm\.(generate|chat|encode|embed)\b|"
                     r"\bsampling[-_ ]?params\b|\breasoning[-_ ]parser\b|\benable[-_ ]reasoning\b|\bprometheus\b|"
                     r"/metrics\b|\bmetrics endpoint\b|\b(cli|command[-_ ]line) (arg\w*|options?|flags?|parameters?)\b|"
                     r"\bargparse\b|\bunrecognized arguments\b|"
                     r"\b(multiple|several|many|two|different) (llms?|(llm |base )?models)\b"
                     r"[^.?!\n]{0,40}\b(servers?|endpoints?|instances?|ports?|gateways?)\b|"
                     r"\b404\b[^\n]{0,40}\bnot found\b|\bnot found\b[^\n]{0,10}\b404\b|/generate\b"),
    # the request surface: the parameters people send, the endpoints they call, how the server answers them
    Word("frontend", r"\b(max_tokens|max_completion_tokens|top_logprobs|logit_bias|presence_penalty|frequency_penalty|"
                     r"repetition_penalty|stop_token_ids|skip_special_tokens|include_stop_str_in_output|extra_body|"
                     r"chat_template_kwargs|stream_options|include_usage|best_of|use_beam_search|ignore_eos|"
                     r"min_tokens|truncate_prompt_tokens|add_generation_prompt)\b|\bbeam[-_ ]search\b|"
                     r"\bstop (words?|strings?|sequences?|tokens?|token[-_ ]ids|criteria)\b|"
                     r"\b(temperature|top[-_]p|top[-_]k)\b|\bsampl(e|ing) (params?|parameters?|defaults?)\b|"
                     r"\bgeneration[-_ ]config\b|\bgenerat(e|ion) (params?|parameters?|args|arguments|kwargs)\b"),
    # several completions of one prompt: the `n` request parameter
    # (not a script's `--n` flag)
    Word("frontend", r"(?<![-\w.])(?-i:n)\b ?(=|==|>=?) ?\d+\b|\bmultiple (completions|choices)\b|"
                     r"\b(multiple|several|more than (one|1)|\d+) (completions?|choices|samples?|generations?|"
                     r"outputs?)\b[^.\n]{0,20}\b(per|for (each|one|a|the same)|from (one|a|the same)) "
                     r"(prompt|request|input|query)\b"),
    # the chat endpoint failing ("VLLM Chat error", "chat does not work"; not a chat model's name: "X-13B-Chat fails")
    Word("frontend", r"(?<![-_./])\bchat (errors?|fail\w*|crash\w*|(is |does not |doesn'?t |not )?work\w*)\b",
         1.0, 0.3),
    Word("frontend", r"\b(chat|completions?|embeddings?|rerank|score|pooling|tokeni[sz]e|detokeni[sz]e|"
                     r"transcriptions?|translations?|responses) (api|endpoints?|routes?|interface)\b|"
                     r"\bbatch (api|file format)\b|\brun_batch\b|"
                     r"\b(openai|chat|completions?|embeddings?)\s*(接口|服务)|流式"),
    Word("frontend", r"\bstream\s*(=|==|:)\s*\"?true\b|\bstream(ing)? (mode|requests?|calls?|api)\b",
         qualifies=("tool-calling",)),
    Word("frontend", r"\bserver[-_ ]sent events\b|\bchat\.completion(\.chunk)?\b|"
                     r"\bChatCompletion(Chunk|Message|Request|Response)?\b|\busage (info\w*|stats|field)\b|"
                     # the token counts an answer reports, and the Responses API's
                     r"\b(reasoning )?tokens? usage\b|\b\w+_tokens_details\b|\bnum_\w+_tokens\b|\bResponseUsage\b|"
                     r"\bresponses? api\b|\b(view|see|get|show|count|number of|total)( the)?( total)? "
                     r"(generated|output|prompt|input|completion) tokens\b"),
    Word("frontend", r"\bapi[-_ ]?keys?\b|\bvllm_api_key\b|\bbearer token\b|\bcors\b|\bcross[-_ ]origin\b|"
                     r"\ballowed[-_ ]origins\b|\b(routes?|endpoints?)\b[^.\n]{0,40}\bauthori[sz]\w*"),
    # reaching the API server at all (host binding, ports, WSL/Docker networking)
    Word("frontend", r"\b(can'?t|cannot|could ?n.t|unable to|fail\w* to) (be )?(access|reach|connect to)\w*\b"
                     r"[^.\n]{0,30}\b(api|openai|vllm)[-_ ]?(server|endpoint)s?\b|"
                     r"\b(api|openai|vllm)[-_ ]?(server|endpoint)s?\b[^.\n]{0,40}\b(can'?t|cannot|not|unable to) (be )?"
                     r"(access|reach|connect)\w*"),
    # the server's answer: a 4xx is the server judging the request; "bad request" says it in words
    Word("frontend", r"\b(400|422)\b[^\n]{0,3}(bad request|unprocessable)|\bbad ?request(error)?\b|"
                     r"\b(http )?(400|422) (errors?|status( code)?|responses?)\b|"
                     r"\binvalid_request_error\b|\b401\b[^\n]{0,3}unauthori[sz]ed\b(?![^\n]{0,40}(hugging|hf|hub|url))"),
    # a 500 / an exception in the ASGI app: in the title it is what the reporter saw fail, the server's answer; in the
    # description only where some failure surfaced
    Word("frontend", r"\binternal server error\b|\bexception in asgi\b|\b500 (error|status)\b", 1.0, 0.3),
    Word("frontend", r"\bprometheus\b|\bgrafana\b|\bvllm:\w+|\bhttp_\w*\*?\W{0,2}metrics\b|"
                     r"\bmetrics? (endpoint|missing|not (shown|exposed|available))\b|\bmissing( \w+)? metrics\b"),
    Word("frontend", r"(?<!benchmark )(?<!eval )(?<!evaluation )\bmetrics\b", 0.5, 0.3),
    # request tracing, observability's other half (not Dynamo's tracing of a graph)
    Word("frontend", r"\bopen[-_ ]?telemetry\b|\botlp\b|\botel\b|\b(distributed|request|exhaustive|otel) tracing\b|"
                     r"\btracing (spans?|support|exporter)\b"),
    # reasoning output is a field of the OpenAI server's answer (a reasoning parser is not tool calling)
    Word("frontend", r"\breasoning[-_ ]content\b|\benable[-_ ]thinking\b|\bthinking (mode|budget|switch)\b|"
                     r"\breasoning[-_ ]efforts?\b"),
    # the fields of the server's answer: a message's content, reasoning or tool calls that came back null, the usage
    # counts, why generation stopped
    # (with a tool call in the title they are the tool call's: "tool_calls empty with finish_reason stop")
    Word("frontend", r"\b(content|reasoning|reasoning_content)\s?[=:]\s?(null|none)\b|"
                     r"\b(prompt|completion|total)_tokens\b|\b(finish|stop)_reason\b", qualifies=("tool-calling",)),
    Word("new-model", r"支持\W{0,3}" + _FAMILIES, 1.0, 0.5),   # "(是否)支持 <model>": is <model> supported
    Word("new-model", r"^\W{0,3}(please )?(add )?(support(ing)?|add(ing)?)( for)? (the )?(new )?(model )?" + _FAMILIES +
                      r"|\b(is|are) (the )?(new )?(model )?" + _FAMILIES + r"[\w.-]*( models?)? supported\b", 1.0, 0.3),
    # "<family><version> support" ("DeepSeek V4 support", "Qwen3-Next support"; not "Llama tool calling support", nor
    # "Qwen2.5 support for tool calls": a feature on the model)
    Word("new-model", _FAMILIES + r"[\w.-]*( v?\d[\w.-]*){0,2} (models? )?support\b(?! (for|of) )", 1.0, 0.3),
    Word("new-model", r"\b(support|add)( for)? (a |the )?new model\b|\bnew models? support\b|"
                      r"\bmodel (architecture|type) .{0,40}not supported\b|"
                      r"\barchitectures? .{0,60}(are|is) not supported\b|\btrust[-_ ]remote[-_ ]code\b"),
    # the reporter isolated the model: others work, or the same model works in Hugging Face transformers (not a
    # benchmark script's `hf` backend)
    Word("new-model", r"\bother models?\b.{0,30}\b(works?|worked|working|fine|ok|run)|"
                      r"\b(works?|worked|working|runs?|fine)\b.{0,30}\b(other|another|different|smaller) models?\b|"
                      r"\bonly (happens |occurs )?(with|for|on) (this|the|that) model\b|"
                      r"\b(does not|doesn't|didn't|not) (appear|happen|occur)\w*\b.{0,20}\b(when|with|for)\b.{0,20}"
                      r"\b(load|use|run|serv)\w*|"
                      r"\b(with|in|using|via) (the )?`?(hf|huggingface|hugging face|transformers)`?(?![\w.-]| backend)"
                      r"[^.\n]{0,40}"
                      r"\b(works?|fine|correct\w*|expected|normal\w*)|"
                      r"\b(works?|worked|fine|correct\w*)\b[^.\n]{0,40}\b(with|in|using|via) `?(hf|huggingface|"
                      r"hugging face|transformers)`?(?![\w.-]| backend)", 1.0, 1.0),
    Word("performance", r"\bperformance\b|\bthroughput\b|\blatency\b|\bslow(er|ness|down)?\b|\bperf(ormance)? "
                        r"(regression|degradation|drop)\b|\btokens?/s\b|\bttft\b|\btpot\b|\b(inference|generation|"
                        r"decod\w*|serving|load(ing)?|start[-_ ]?up) speed\b|\bspeed (of|up)\b|"
                        r"\bperform(s|ed|ing)?( \w+)? (poorly|poor|worse|badly|slow\w*)\b|\boutperform\w*|"
                        r"\b(faster|slower) than\b|\b\d+(\.\d+)?x (faster|slower)\b|"
                        # how long the server takes to come up
                        r"\bcold[-_ ]?starts?\b|\b(start[-_ ]?up|boot|loading) (times?|latency)\b|"
                        r"\btak(e|es|ing) (forever|ages|hours|(so |too |very |a )?long( time)?) to (load|start)\b",
         1.0, 0.3),
    # a benchmark measures performance, unless the title says it crashed or failed: then it was only the load
    Word("performance", r"\bbenchmark\w*", 1.0, 0.3,
         unless_title=r"\b(crash\w*|\w*error\w*|exceptions?|dies|died|\w*dead\w*|fails?|failed|failure|traceback)\b"),
    Word("nvidia-compat", r"\b(tesla )?(v100|t4|p100|p40|p4|k80|m40|titan ?v|titan ?rtx|[12]0[6-8]0( ?ti)?|"
                          r"quadro \w+)\b|\bvolta\b|\bturing\b|\bpascal\b|\bcompute capability\b|"
                          r"\bsm_?(1[0-2]\d|[3-7]\d)\b|\bno kernel image\b|\bbf(loat)?16 .{0,30}not support\w*|"
                          r"\bdoes not support bf(loat)?16\b"),
    Word("nvidia-compat", r"\bgb10\b|\bdgx spark\b|\bjetson\b|\bsm_?12[01]\b"),
    Word("nvidia-compat", r"\bblackwell\b|\brtx ?50[5-9]0\b|\brtx pro 6000\b|\bb200\b|\bgb200\b", 0.5, 0.3),
)


@dataclass(frozen=True)
class Pattern:
    """A pattern over the failure (root-cause exception `Type: message`, or bare error lines)."""

    topic: str
    pattern: str
    weight: float = 1.0


FAILURE: tuple[Pattern, ...] = (
    Pattern("memory", r"out of memory|OutOfMemoryError|no available memory for the cache blocks|"
                      r"not enough (gpu |kv cache )?memory|insufficient (gpu )?memory|CUDA_ERROR_OUT_OF_MEMORY"),
    Pattern("memory", r"larger than the maximum number of tokens that can be stored in kv cache|"
                      r"kv cache is needed|available kv cache memory"),
    Pattern("kv-cache", r"stored in kv cache|kv cache is needed|available kv cache memory|kv[-_ ]cache|prefix cach"),
    Pattern("nvidia-compat", r"no kernel image is available|compute capability|bfloat16 is only supported|"
                             r"fp8e4nv not supported|not supported in this architecture|"
                             r"does not support bfloat16|cuda capability sm_\d+|is not compatible with the current "
                             r"pytorch installation|sm_\d{2,3}\w? is not (supported|compatible)"),
    Pattern("new-model", r"model architectures? .{0,200}(are|is) not supported|failed to be inspected|"
                         r"trust_remote_code|transformers does not recognize|does not recognize this architecture|"
                         r"unrecognized (configuration class|model)|architectures? .{0,80}(is |are )?not supported"),
    # the checkpoint does not fit the model's implementation: its config format or its weight names
    Pattern("new-model", r"rope_scaling|no module or parameter named|not initiali[sz]ed from (the )?checkpoint|"
                         r"^KeyError: '[\w.]{1,200}\.(weight|bias|scales?|qweight|qzeros)'"),
    Pattern("quantization", r"quantiz|\b(awq|gptq|gguf|bitsandbytes|fp8|fp4|nvfp4|mxfp4|marlin|w8a8|int4|int8|"
                            r"compressed[-_ ]tensors)\b", 0.5),
    Pattern("tensor-parallel", r"divisible by (the )?tensor[-_ ]parallel|tensor[-_ ]parallel[-_ ]size|"
                               r"tensor parallelism"),
    Pattern("tensor-parallel", r"\bnccl|all[-_ ]?reduce|\bworld[-_ ]size\b", 0.5),
    Pattern("pipeline-parallel", r"pipeline[-_ ]parallel|SupportsPP"),
    Pattern("speculative-decoding", r"speculat|spec[-_ ]?decode|num_speculative_tokens|drafter|draft[-_ ]model|"
                                    r"eagle\w*proposer|\bmtp\b"),
    Pattern("speculative-decoding", r"\beagle|proposer", 0.5),
    Pattern("lora", r"\blora"),
    Pattern("structured-output", r"xgrammar|guided[-_ ]decod|structured[-_ ]output|json[-_ ]schema|grammar|"
                                 r"outlines|failed to advance fsm"),
    Pattern("tool-calling", r"tool[-_ ]?call|tool[-_ ]?parser|function[-_ ]call|auto[-_ ]tool[-_ ]choice"),
    Pattern("multi-modality", r"multi[-_ ]?modal|pixel_values|mm[-_ ]processor|image[-_ ]token|"
                              r"allowed[-_ ]local[-_ ]media|is not a multimodal model|max_tokens_per_mm_item"),
    Pattern("multi-modality", r"\b(image|video|audio)s?\b", 0.5),
    # (and the OpenAI server's request handlers an error names: "create_chat_completion() missing an argument")
    Pattern("frontend", r"chat[-_ ]template|openai_harmony|harmonyerror|serving_chat|serving_completion|"
                        r"\bcreate_(chat_completion|completion|embedding|transcription|responses?)\b"),
    # the server refused the request (the OpenAI client's error, the error JSON's type or code)
    Pattern("frontend", r"\bBadRequestError\b|invalid_request_error|\berror code: 4(0[0-9]|22)\b|"
                        r"\bUnprocessableEntityError\b|\bjinja2\.exceptions|\bTemplate(Syntax)?Error\b"),
    Pattern("installation", r"undefined symbol|cannot open shared object file|no module named '?vllm\._C|"
                            r"vllm\._C|_C\.abi3|failed building wheel|could not build wheels|python\.h|"
                            r"subprocess-exited-with-error|cuda_home|metadata-generation-failed|"
                            r"no matching distribution found|\bvllm_ops\b|_custom_ops|"
                            r"\bvllm_flash_attn\b.{0,40}(no module|import)"),
    Pattern("torch.compile", r"backendcompilerfailed|inductor|torch\._dynamo|dynamo|torch\.compile", 1.0),
    Pattern("torch.compile", r"cuda ?graph|cudagraph|capture_end", 0.5),
    Pattern("ray", r"\bray\b|rayworker|placement group|RayActorError", 0.5),
    Pattern("rocm", r"\bhip\b|hiperror|rocm|\bgfx\d+|amdgpu|\baiter\b", 0.5),
    Pattern("cpu", r"from the .?cpu.? backend|\bcpu backend\b", 0.5),
    # (not a path: "could not create 'build/.../fused_moe/configs/E=128,…json'" is the wheel being copied)
    Pattern("moe", r"(?<![/\\])fused[-_ ]?moe\w*(?![/\\])|\bmoe (kernel|layer|backend)s?\b", 1.0),
    Pattern("moe", r"\bmoe\b|experts", 0.5),
)

# exception types (module kept as printed) -> topic
EXCEPTION_TYPES: tuple[Pattern, ...] = (
    Pattern("memory", r"(^|\.)OutOfMemoryError$"),
    Pattern("torch.compile", r"^torch\._(dynamo|inductor)\.|(^|\.)(BackendCompilerFailed|InductorError)$"),
    Pattern("ray", r"^ray\.|(^|\.)Ray\w*Error$"),
    Pattern("structured-output", r"^(xgrammar|outlines|guidance)\."),
    # openai_harmony parses gpt-oss output into reasoning / tool-call / final channels in the OpenAI server
    Pattern("frontend", r"^openai_harmony\.|(^|\.)HarmonyError$"),
    # the OpenAI client raising what the server answered: 4xx, the request; a 5xx or no answer says less
    Pattern("frontend", r"^openai\.(BadRequestError|NotFoundError|AuthenticationError|PermissionDeniedError|"
                        r"UnprocessableEntityError)$|^(BadRequestError|UnprocessableEntityError)$|^jinja2\."),
    Pattern("tool-calling", r"^openai_harmony\.|(^|\.)HarmonyError$"),
)


@dataclass(frozen=True)
class FramePattern:
    topic: str
    pattern: str            # over the frame's file path (forward slashes)
    innermost: float = 1.0  # weight when it is the innermost vLLM frame (or innermost frame, for torch files)
    any: float = 0.5        # weight when it is any frame of the root cause
    function: str | None = None  # and over its function: a raise site's qualname ("SpeculativeConfig.__post_init__"),
                                 # a traceback frame's bare function name


def _config(topic: str, module: str, cls: str) -> FramePattern:
    """A feature's configuration class, in vllm/config.py (before 0.10) or vllm/config/<module>.py: what it raises
    is about that feature (only a raise site carries the class; traceback frames show the bare function)."""
    return FramePattern(topic, rf"vllm/config(\.py$|/(__init__|{module})\.py$)", 1.0, 0.0, rf"^{cls}\.")


FRAMES: tuple[FramePattern, ...] = (
    FramePattern("speculative-decoding", r"vllm/(v1/)?spec_decode/|/(eagle|medusa)\w*\.py$|_mtp\.py$", 1.0, 1.0),
    _config("speculative-decoding", "speculative", "SpeculativeConfig"),
    FramePattern("lora", r"vllm/lora/", 1.0, 1.0),
    _config("lora", "lora", "LoRAConfig"),
    _config("multi-modality", "multimodal", "MultiModalConfig"),
    _config("torch.compile", "compilation", "CompilationConfig"),
    _config("structured-output", "structured_outputs", "(Decoding|StructuredOutputs)Config"),
    # the KV cache's own bookkeeping (sizing, blocks, prefix caching) and its transfer between engines
    FramePattern("kv-cache", r"vllm/(v1/)?core/(kv_cache_\w+|block_pool|block_manager\w*|prefix_caching\w*)\.py$|"
                             r"vllm/core/block/|vllm/distributed/kv_transfer/", 1.0, 0.0),
    # collectives between the tensor-parallel workers (also used by other parallelisms: never enough alone)
    FramePattern("tensor-parallel", r"vllm/distributed/(parallel_state|communication_op)\.py$|"
                                    r"vllm/distributed/device_communicators/(custom_all_reduce|pynccl|shm_broadcast)",
                 0.5, 0.0),
    FramePattern("structured-output", r"structured_output|guided_decoding|/xgrammar/|/outlines/", 1.0, 1.0),
    FramePattern("tool-calling", r"tool_parsers?/", 1.0, 1.0),
    # reasoning parsers split the OpenAI server's answer into reasoning and content
    FramePattern("frontend", r"vllm/reasoning/", 1.0, 1.0),
    # not api_server.py / rpc/: they start the engine and re-raise its failures ("Engine process failed to start");
    # not the tool parsers: tool calling
    FramePattern("frontend", r"vllm/entrypoints/(openai/(?!api_server\.py|rpc/|tool_parsers?/)|chat_utils|serve/|"
                             r"renderer)",
                 1.0, 0.0),
    FramePattern("quantization", r"vllm/model_executor/layers/quantization/|gguf", 1.0, 0.5),
    FramePattern("moe", r"fused_moe", 1.0, 0.5),
    FramePattern("torch.compile", r"torch/_dynamo/|torch/_inductor/|vllm/compilation/", 1.0, 0.5),
    FramePattern("multi-modality", r"vllm/multimodal/|vllm/model_executor/models/\w*(vl|vision|llava|omni)\w*\.py$",
                 1.0, 0.5),
    FramePattern("ray", r"/ray/|ray_utils\.py$|ray_distributed_executor|ray_executor", 0.5, 0.5),
    FramePattern("rocm", r"vllm/platforms/rocm\.py$|_rocm\w*\.py$|/rocm_|/aiter", 0.5, 0.5),
    FramePattern("intel-gpu", r"vllm/platforms/xpu\.py$|xpu_\w+\.py$|_xpu\.py$", 0.5, 0.5),
    FramePattern("tpu", r"vllm/platforms/tpu\.py$|tpu_\w+\.py$|_tpu\.py$|/tpu_inference/", 0.5, 0.5),
)


def _gt1(v: Any) -> bool:
    try:
        return int(v) > 1
    except (TypeError, ValueError):
        return False


def _positive(v: Any) -> bool:
    try:
        return float(v) > 0
    except (TypeError, ValueError):
        return False


def _set(v: Any) -> bool:
    return v not in (None, False, "", "none", "None", "auto", 0, {}, [])


@dataclass(frozen=True)
class FlagSignal:
    topic: str
    flag: str
    test: Callable[[Any], bool]
    weight: float = 0.5
    subject: bool = False   # the flag is what the report is about: it counts without other evidence


FLAGS: tuple[FlagSignal, ...] = (
    FlagSignal("speculative-decoding", "speculative_config", _set),
    FlagSignal("speculative-decoding", "speculative_model", _set),
    FlagSignal("pipeline-parallel", "pipeline_parallel_size", _gt1),
    FlagSignal("tensor-parallel", "tensor_parallel_size", _gt1, 0.3),
    FlagSignal("quantization", "quantization", _set),
    FlagSignal("lora", "enable_lora", _set),
    FlagSignal("lora", "lora_modules", _set),
    FlagSignal("tool-calling", "tool_call_parser", _set),
    FlagSignal("tool-calling", "enable_auto_tool_choice", _set),
    FlagSignal("structured-output", "guided_decoding_backend", _set),
    FlagSignal("structured-output", "structured_outputs_config", _set),
    FlagSignal("ray", "distributed_executor_backend", lambda v: str(v).lower() == "ray"),
    FlagSignal("moe", "enable_expert_parallel", _set, 1.0, subject=True),
    # data parallelism spread over machines: each node names the head's address and its own share of the ranks
    FlagSignal("multi-node", "data_parallel_address", _set, 1.0, subject=True),
    FlagSignal("multi-node", "data_parallel_start_rank", _set, 1.0, subject=True),
    FlagSignal("multi-node", "data_parallel_size_local", _set, 1.0, subject=True),
    FlagSignal("multi-node", "headless", _set, 1.0, subject=True),
    FlagSignal("multi-node", "nnodes", _gt1, 1.0, subject=True),
    FlagSignal("cpu", "device", lambda v: str(v).lower() == "cpu", 1.0, subject=True),
    FlagSignal("memory", "cpu_offload_gb", lambda v: _positive(v), 1.0, subject=True),
    FlagSignal("multi-modality", "limit_mm_per_prompt", _set),
    FlagSignal("kv-cache", "enable_prefix_caching", _set, 0.3),
    FlagSignal("kv-cache", "kv_cache_dtype", _set, 0.3),
    FlagSignal("torch.compile", "compilation_config", _set, 0.3),
)

# the served model (name or resolved architecture)
MODEL: tuple[Pattern, ...] = (
    Pattern("multi-modality", r"(?<![a-z])vl(?![a-z])|\dvl|vision|llava|internvl|pixtral|idefics|paligemma|"
                              r"minicpm[-_]?(llama\d?[-_]?)?[ov](?![a-z])|glm-?4(\.\d+)?v|omni|qwen\d?(\.\d)?-?audio|"
                              r"whisper|molmo|florence|"
                              r"ForConditionalGeneration", 0.6),
    Pattern("moe", MOE_MODELS + r"|moe\w*for|(mixtral|deepseekv[23]|llama4|dbrx|jamba|grok\d?)\w*for(causallm|"
                                 r"conditionalgeneration)", 0.6),
    Pattern("quantization", r"(?<![a-z])(awq|gptq|gguf|fp8|fp4|nvfp4|mxfp4|int4|int8|w8a8|w4a16|bnb|4bit|8bit)"
                            r"(?![a-z])|\.gguf$", 0.5),
)

# collect_env platform -> topic; only for kinds that report running vLLM there
PLATFORMS: dict[str, tuple[str, float]] = {
    "rocm": ("rocm", 1.0), "xpu": ("intel-gpu", 1.0), "tpu": ("tpu", 1.0), "cpu": ("cpu", 0.5),
}
PLATFORM_KINDS = ("bug", "installation", "usage", "performance")

KINDS: dict[str, str] = {"installation": "installation", "new-model": "new-model", "performance": "performance"}


# ---------------------------------------------------------------------------------------------------------------

def _compile(pattern: str) -> re.Pattern[str]:
    # ASCII: a CJK character next to an English word is a word boundary ("报错No available memory")
    return re.compile(pattern, re.IGNORECASE | re.ASCII)


# which of WORDS and FAILURE match a text: one RE2 Set pass (bot/matchset.py), the same answers as searching each
_WORD_MATCH = MatchSet([w.pattern for w in WORDS])
_UNLESS_TITLE = {k: _compile(w.unless_title) for k, w in enumerate(WORDS) if w.unless_title}
_FAILURE_MATCH = MatchSet([p.pattern for p in FAILURE])
_EXC_TYPES = [(p, re.compile(p.pattern)) for p in EXCEPTION_TYPES]
_FRAMES = [(f, _compile(f.pattern), re.compile(f.function) if f.function else None) for f in FRAMES]
_FRAME_FILES = MatchSet([f.pattern for f in FRAMES])
_MODEL = [(p, _compile(p.pattern)) for p in MODEL]
# titles and prose are corrected toward the keywords of WORDS before they are searched (typos, inflections)
_WORDING = Wording(w.pattern for w in WORDS)

# (a run of CJK characters is a word: "部署Qwen3报错" is not a placeholder)
_TITLE_WORD = re.compile(r"[A-Za-z]{3,}|[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2,}")
_PLACEHOLDER_TITLES = {"title", "bug", "issue", "error", "help", "question", "usage", "feature", "installation"}


def _placeholder_title(title: str) -> bool:
    words = _TITLE_WORD.findall(title)
    return len(words) < 2 or title.strip(" :.-[]").lower() in _PLACEHOLDER_TITLES


def _failure_texts(report: Report) -> list[str]:
    texts: list[str] = []
    root = report.root_cause
    if root is not None:
        texts.append(f"{root.type}: {root.message[:2000]}")
    texts.extend(line[:500] for line in report.error_lines[:20])
    return texts


class _Scores:
    def __init__(self) -> None:
        self.by_topic: dict[str, dict[str, float]] = {}

    def add(self, topic: str, source: str, weight: float) -> None:
        if weight <= 0:
            return
        sources = self.by_topic.setdefault(topic, {})
        sources[source] = max(sources.get(source, 0.0), weight)

    def total(self, topic: str) -> float:
        return sum(self.by_topic.get(topic, {}).values())


def topic_scores(report: Report, findings: tuple[Finding, ...]) -> dict[str, dict[str, float]]:
    """Per topic, the strongest weight each source contributed (for `explain` and for tuning)."""
    s = _Scores()
    for f in findings:
        if f.confidence >= MIN_FINDING_CONFIDENCE:
            for label in f.labels:
                s.add(label, "finding", THRESHOLD)

    if report.kind in KINDS and report.kind_source in ("title", "template"):
        s.add(KINDS[report.kind], "kind", THRESHOLD)
    elif report.kind in KINDS:
        s.add(KINDS[report.kind], "kind", 0.5)

    platform = report.environment.platform
    if platform in PLATFORMS and report.kind in PLATFORM_KINDS:
        topic, weight = PLATFORMS[platform]
        if platform == "cpu" and _cpu_chosen(report):
            weight = THRESHOLD
        s.add(topic, "platform", weight if _platform_confirmed(report) else min(weight, 0.5))
    elif report.environment.os == "macos" and report.kind in PLATFORM_KINDS:
        s.add("cpu", "platform", THRESHOLD)   # vLLM runs on macOS on the CPU only

    prose = report.prose if report.prose is not None else "\n".join(prose_lines(report.description or ""))
    title = report.title_text or ""
    if _placeholder_title(title) and prose:
        title = prose.split("\n", 1)[0].strip(" *#_>")  # the reporter's first line stands in for a placeholder title
    title, prose = _WORDING.correct(title), _WORDING.correct(prose)
    # what only says which model ran (a quantization format in its id, "a VLM") or the KV cache's type is not what
    # the report is about: the title counts it when the model is the subject, the prose not at all
    kv_title = without_kv_cache_type(title)
    plain = {"quantization": without_model_id_formats(kv_title), "multi-modality": without_model_kind(title)}
    quant_prose = without_model_id_formats(without_kv_cache_type(prose))
    in_title, in_prose = _words_in(title, title), _words_in(prose, prose)
    in_plain = {topic: _words_in(text, title, in_title) for topic, text in plain.items()}
    in_kv_title = _words_in(kv_title, title, in_title)
    in_quant_prose = _words_in(quant_prose, prose, in_prose)
    model_only: set[str] = set()
    qualifiers: list[Word] = []
    for k in sorted(in_title | in_prose | in_kv_title | in_quant_prose | set().union(*in_plain.values())):
        word = WORDS[k]
        if k in in_plain.get(word.topic, in_title):
            if k in _UNLESS_TITLE and _UNLESS_TITLE[k].search(title):
                pass            # the title uses the word for something else
            elif word.qualifies:
                qualifiers.append(word)
            else:
                s.add(word.topic, "title", word.title)
        elif word.topic in plain and k in in_kv_title:
            model_only.add(word.topic)
        if k in (in_quant_prose if word.topic == "quantization" else in_prose):
            s.add(word.topic, "prose", word.prose)
    for word in qualifiers:
        if not any(s.by_topic.get(t, {}).get("title", 0.0) >= THRESHOLD for t in word.qualifies):
            s.add(word.topic, "title", word.title)
    _kind_yields_to_title(s)
    _installation_kind_yields_to_diagnosis(s, findings)
    _gpus_yield_to_another_parallelism(s, title)
    if _gpus_in_title(title) > GPUS_PER_NODE:
        s.add("multi-node", "title", THRESHOLD)
    if _BLACKWELL_FAILS.search(title) and not _OUT_OF_MEMORY.search(f"{title}\n{report.body[:200_000]}"):
        s.add("nvidia-compat", "title", THRESHOLD)
    title_topics = word_topics = _title_topics(s)
    _platform_yields_to_title(s, title_topics)
    for topic in model_only - title_topics:
        subject = (quantized_model_is_the_subject(title_topics) if topic == "quantization"
                   else model_kind_is_the_subject(title_topics))
        if subject:
            s.add(topic, "title", THRESHOLD)
        else:
            s.add(topic, "model", 0.5)

    for text in _failure_texts(report):
        for k in _FAILURE_MATCH.matching(text):
            s.add(FAILURE[k].topic, "failure", FAILURE[k].weight)
    if title:  # titles often quote the error; only the unambiguous failure patterns count there
        for k in _FAILURE_MATCH.matching(title):
            if FAILURE[k].weight >= THRESHOLD:
                s.add(FAILURE[k].topic, "title", FAILURE[k].weight)
    root = report.root_cause
    if root is not None:
        for pat, rx in _EXC_TYPES:
            if rx.search(root.type):
                s.add(pat.topic, "failure", pat.weight)
        _frame_signals(s, root.frames)
    elif report.cut_frames:
        _cut_frame_signals(s, report.cut_frames)
    _site_signals(s, report)
    if _ACCESS_4XX.search(report.body[:200_000]):
        s.add("frontend", "failure", THRESHOLD)
    # an engine that died under a request fails the request too: the API server is where it surfaced, not the cause
    frontend = s.by_topic.get("frontend")
    if frontend and _engine_failure(report, title):
        for source in ("failure", "frame"):
            frontend.pop(source, None)

    # the title names the model that fails itself, or a mixture-of-experts model it is about
    # (the reporter's own title: a bare model name is not a placeholder here)
    own_title = _WORDING.correct(report.title_text or "")
    title_topics = _title_topics(s)
    if own_title and moe_is_the_subject(own_title, title_topics, word_topics):
        s.add("moe", "title", THRESHOLD)
    s.add("new-model", "subject", model_is_the_subject(own_title, prose, title_topics))
    # a deployment over several nodes whose log or text shows Ray runs it on Ray
    if "multi-node" in title_topics and _RAY_IN_USE.search(report.body[:200_000]):
        s.add("ray", "subject", THRESHOLD)

    # a flag says what the reporter ran, not what failed: it only adds to evidence from the failure or the title (a
    # subject flag counts alone, unless the title is about a feature the deployment only went through)
    feature_title = bool(title_topics & SUBJECT_TOPICS)
    for sig in FLAGS:
        corroborated = (sig.subject and not feature_title) or \
            set(s.by_topic.get(sig.topic, {})) & {"failure", "frame", "title"}
        if corroborated and sig.flag in report.flags and sig.test(report.flags[sig.flag]):
            s.add(sig.topic, "flag", sig.weight)
    # more GPUs than a node holds by the tensor x pipeline parallel sizes the reporter ran with: it spans nodes
    if not feature_title and _world_size(report.flags) > GPUS_PER_NODE:
        s.add("multi-node", "flag", THRESHOLD)

    # the served model, too, says what ran: it adds to evidence about what failed or what the title says, not to the
    # description alone (which mostly restates the model: "I serve Qwen3-235B FP8")
    models = [m for m in (report.model, *report.architectures) if m]
    for pat, rx in _MODEL:
        if set(s.by_topic.get(pat.topic, {})) & _CORROBORATED and any(rx.search(m) for m in models):
            s.add(pat.topic, "model", pat.weight)

    # "no kernel image" / "compute capability" on an AMD, Intel, TPU or CPU machine is not an NVIDIA question
    nvidia = s.by_topic.get("nvidia-compat")
    if nvidia and "finding" not in nvidia and _not_nvidia(report):
        del s.by_topic["nvidia-compat"]
    return s.by_topic


def _words_in(text: str, base: str, base_words: set[int] | None = None) -> set[int]:
    """The WORDS patterns matching `text`, a `base` text with some words blanked out (`base_words`: those matching
    `base`, kept when nothing was blanked)."""
    if not text:
        return set()
    if base_words is not None and text == base:
        return base_words
    return _WORD_MATCH.matching(text)


# a Blackwell card the title says fails to run something: the kernels, builds and formats that generation needs (unless
# the reporter says it ran out of memory: then it is the memory's question)
_BLACKWELL = r"(?<![:=])(?<!port )\b(rtx ?50[5-9]0|50[6-9]0|rtx pro 6000|blackwell|g?b[23]00)\b"
_FAILS = (r"\b(fail\w*|error\w*|can'?t|cannot|unable|crash\w*|broken|breaks|"
          r"not (work|run|start|used|supported|leverag|utili[sz])\w*)\b")
_BLACKWELL_FAILS = Gated(re.compile(rf"{_BLACKWELL}[^\n]{{0,80}}{_FAILS}|{_FAILS}[^\n]{{0,80}}{_BLACKWELL}",
                                    re.IGNORECASE), needles_of=_BLACKWELL)
_OUT_OF_MEMORY = re.compile(r"\bOOM\b|\bout of memory\b|\bno available memory\b|\bnot enough (gpu |v?ram |)memory\b",
                            re.IGNORECASE)

_CORROBORATED = frozenset({"finding", "kind", "title", "failure", "frame", "flag", "subject"})

# the uvicorn access log: the server answered a request with a client error (not the docs' or a browser's asset)
_ACCESS_4XX = re.compile(r'"(?:POST|GET|PUT|DELETE|PATCH) /(?!favicon|robots|docs)[^\s"]{0,200} '
                         r'HTTP/\d(?:\.\d)?" 4\d\d\b')
_ENGINE_FAILURE = re.compile(r"\bCUDA error\b|illegal memory access|\b(Async)?EngineDeadError\b|\bengine process "
                             r"\(?(pid \d+\))? ?died\b|\bMQLLMEngine is already dead\b|\bEngineCore encountered an "
                             r"issue\b|\bNCCL error\b|\bout of memory\b|\bError in model execution\b",
                             re.IGNORECASE | re.ASCII)
# topics whose cut traceback (no exception line) still says where the request failed
_CUT_FRAME_TOPICS = ("frontend", "tool-calling", "structured-output", "multi-modality")


def _engine_failure(report: Report, title: str) -> bool:
    return any(_ENGINE_FAILURE.search(text) for text in (*_failure_texts(report), title[:500]))


def _cut_frame_signals(s: _Scores, frames: tuple[Frame, ...]) -> None:
    cut = _Scores()
    _frame_signals(cut, frames)
    for topic in _CUT_FRAME_TOPICS:
        for source, weight in cut.by_topic.get(topic, {}).items():
            s.add(topic, source, weight)


_RAY_IN_USE = re.compile(r"\bray\b(?![-_ ]?tracing)|\bRay\w*(Worker|Executor|Actor)\w*|\bray_(utils|distributed)|"
                         r"\bplacement[-_ ]group", re.IGNORECASE | re.ASCII)


def _title_topics(s: _Scores) -> set[str]:
    return {t for t, sources in s.by_topic.items() if sources.get("title", 0.0) >= THRESHOLD}


# the platforms the environment can show
_PLATFORM_TOPICS = frozenset(topic for topic, _ in PLATFORMS.values())


def _platform_yields_to_title(s: _Scores, title_topics: set[str]) -> None:
    """The title says the report is about another platform than the environment shows ("in cpu mode" with TPU
    libraries installed): the title's platform is where it ran."""
    named = title_topics & _PLATFORM_TOPICS
    if not named:
        return
    for topic in _PLATFORM_TOPICS - named:
        sources = s.by_topic.get(topic, {})
        if "platform" in sources and "title" not in sources:
            del sources["platform"]


def _kind_yields_to_title(s: _Scores) -> None:
    """A template picked as the nearest one: a [Performance] template whose title asks about memory is a memory
    question; an [Installation] template whose title quotes a request error is about the request."""
    for kind_topic, title_topics in (("performance", ("memory",)),
                                     ("installation", ("frontend", "tool-calling", "structured-output"))):
        sources = s.by_topic.get(kind_topic, {})
        if "kind" in sources and "title" not in sources and \
                any(s.by_topic.get(t, {}).get("title", 0.0) >= THRESHOLD for t in title_topics):
            del sources["kind"]


def _installation_kind_yields_to_diagnosis(s: _Scores, findings: tuple[Finding, ...]) -> None:
    """An [Installation] template whose only installation evidence is the template, and whose error a rule
    diagnoses as something else (a gated model's config, a request error), is about that diagnosis."""
    sources = s.by_topic.get("installation", {})
    if set(sources) != {"kind"}:
        return
    diagnosed = [f for f in findings if f.confidence >= MIN_FINDING_CONFIDENCE]
    if diagnosed and not any("installation" in f.labels for f in diagnosed):
        del sources["kind"]


# several GPUs used another way than tensor parallelism: data parallel replicas, pipeline stages, experts, torchrun
_OTHER_PARALLELISM = re.compile(r"\bdata[-_ ]parallel\w*|(?-i:\bDP\b)|\bpipeline[-_ ]parallel\w*|(?-i:\bPP\b)|"
                                r"\bexpert[-_ ]parallel\w*|\breplicas?\b|\btorchrun\b", re.IGNORECASE | re.ASCII)
_TENSOR_PARALLEL = re.compile(r"\btensor[-_ ]parallel\w*|\btp\b", re.IGNORECASE | re.ASCII)


# the GPUs one node holds; a title whose tensor x pipeline parallel sizes ask for more spans nodes ("pp=2, tp=16",
# "tp=8, pp=4")
GPUS_PER_NODE = 8
_TP_SIZE = Gated(re.compile(r"\b(?:tp|tensor[-_ ]parallel(?:[-_ ]size)?)\s{0,3}[=:]?\s{0,3}(\d{1,3})\b",
                            re.IGNORECASE | re.ASCII))
_PP_SIZE = Gated(re.compile(r"\b(?:pp|pipeline[-_ ]parallel(?:[-_ ]size)?)\s{0,3}[=:]?\s{0,3}(\d{1,3})\b",
                            re.IGNORECASE | re.ASCII))


def _parallel_size(v: Any) -> int:
    try:
        return max(1, int(v or 1))
    except (TypeError, ValueError):
        return 1


def _world_size(flags: Mapping[str, Any]) -> int:
    return _parallel_size(flags.get("tensor_parallel_size")) * _parallel_size(flags.get("pipeline_parallel_size"))


def _gpus_in_title(title: str) -> int:
    tp, pp = _TP_SIZE.search(title), _PP_SIZE.search(title)
    return (int(tp.group(1)) if tp else 1) * (int(pp.group(1)) if pp else 1)


def _gpus_yield_to_another_parallelism(s: _Scores, title: str) -> None:
    """A title about spreading over several GPUs another way ("data parallelism with multiple GPUs") is not about
    tensor parallelism unless it names it."""
    sources = s.by_topic.get("tensor-parallel", {})
    if "title" in sources and _OTHER_PARALLELISM.search(title) and not _TENSOR_PARALLEL.search(title):
        del sources["title"]


def _cpu_chosen(report: Report) -> bool:
    """vLLM itself ran on the CPU: it says so in the log, or the reporter asked for it, or it is a Mac."""
    return ("detected platform cpu" in report.body or report.environment.os == "macos"
            or str(report.flags.get("device", "")).lower() == "cpu"
            or _CPU_BUILD.search(report.environment.vllm_version or "") is not None)


# a CPU wheel's local version tag: "0.9.1+cpu", "0.7.4.dev119+gca377cf1.cpu"
_CPU_BUILD = re.compile(r"[+.]cpu$", re.IGNORECASE)
_HIP_ERROR = re.compile(r"\bhip error\b|hipError\w+|\bHIP kernel errors\b", re.IGNORECASE)


def _not_nvidia(report: Report) -> bool:
    platform = report.environment.platform
    if platform in ("rocm", "xpu", "tpu", "cpu") and _platform_confirmed(report):
        return True
    root = report.root_cause
    return root is not None and bool(_HIP_ERROR.search(root.message[:500]))


_AMD_GPU = re.compile(r"\b(amd|radeon|instinct|mi\d{3}\w{0,2}|gfx\d{3,4})\b", re.IGNORECASE | re.ASCII)
_INTEL_GPU = re.compile(r"\b(intel|arc|xpu|data center gpu max)\b", re.IGNORECASE | re.ASCII)


def _platform_confirmed(report: Report) -> bool:
    """The platform is backed by the environment itself, not only by a word somewhere in the text."""
    env = report.environment
    torch = (env.torch_version or "").lower()
    if env.platform == "rocm":
        return bool(env.rocm_version) or "rocm" in torch or any(_AMD_GPU.search(g) for g in env.gpus)
    if env.platform == "xpu":
        return "xpu" in torch or any(_INTEL_GPU.search(g) for g in env.gpus)
    return True


def _frame_signals(s: _Scores, frames: tuple[Frame, ...]) -> None:
    if not frames:
        return
    hits: dict[tuple[str, str | None], set[int]] = {}   # a file and function -> the FRAMES patterns they match
    for f in frames:
        if (f.file, f.function) not in hits:
            hits[f.file, f.function] = _frame_hits(f)
    for k in sorted(set().union(*hits.values())):
        s.add(FRAMES[k].topic, "frame", FRAMES[k].any)
    innermost_vllm = next((f for f in reversed(frames) if f.is_vllm), None)
    for f in {innermost_vllm, frames[-1]}:
        if f is not None:
            for k in hits[f.file, f.function]:
                s.add(FRAMES[k].topic, "frame", FRAMES[k].innermost)


def _frame_hits(frame: Frame) -> set[int]:
    """The FRAMES patterns whose file (and function, when they name one) `frame` matches."""
    found = _FRAME_FILES.matching(frame.file.replace("\\", "/"))
    return {k for k in found if _FRAMES[k][2] is None or _FRAMES[k][2].search(frame.function or "")}


def _site_signals(s: _Scores, report: Report) -> None:
    """The root cause's raise site read as its innermost vLLM frame (the `frame` source: a traceback that shows the
    same place does not count twice). A wrapper's or a log call's site says nothing of the cause; tied sites give what
    they agree on."""
    sites = report.sites
    # a logged error is most often a handler reporting what it caught: the cause lies elsewhere
    if not sites or any(site.wrapper or site.kind == "log" for site in sites):
        return
    agreed: dict[str, float] | None = None
    for site in sites:
        one = _Scores()
        _frame_signals(one, (Frame(site.file, site.line, site.qualname, True),))
        found = {topic: sources["frame"] for topic, sources in one.by_topic.items()}
        agreed = found if agreed is None else {t: min(w, found[t]) for t, w in agreed.items() if t in found}
    for topic, weight in (agreed or {}).items():
        s.add(topic, "frame", weight)


def topic_labels(report: Report, findings: tuple[Finding, ...]) -> tuple[str, ...]:
    """Topic labels in taxonomy order; `needs-info` is added by the pipeline, not here."""
    scores = topic_scores(report, findings)
    chosen = {t for t, sources in scores.items() if sum(sources.values()) >= THRESHOLD - 1e-9}
    ordered = [t for t in TOPICS if t in chosen]
    # labels a rule uses that are not (yet) in the taxonomy are kept after the taxonomy ones
    extra = sorted(t for t in chosen if t not in TOPICS and t != NEEDS_INFO)
    return (*ordered, *extra)
