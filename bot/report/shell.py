"""A forgiving shell tokenizer and vLLM flag normaliser (`-tp 4`, `--tensor-parallel-size=4` → tensor_parallel_size).

Never raises: unbalanced quotes take the rest of the line, unknown values stay strings.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

# a shell operator token: the command ends there (`&&`, `|`, `;`, `&`, `> file`, `2>&1`)
OPERATOR = None

_OPERATOR_CHARS = "|&;<>"
# a template placeholder in a pasted command: `<model>`, `<YOUR_HF_TOKEN>`, `<path to model>`
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w.:/ -]{0,60}>(?![>&])")
_MAX_TOKENS = 2000

SHORT_ALIASES = {
    "tp": "tensor_parallel_size",
    "pp": "pipeline_parallel_size",
    "dp": "data_parallel_size",
    "dpn": "data_parallel_rank",
    "dpr": "data_parallel_start_rank",
    "dpl": "data_parallel_size_local",
    "dpa": "data_parallel_address",
    "dpp": "data_parallel_rpc_port",
    "dpb": "data_parallel_backend",
    "dcp": "decode_context_parallel_size",
    "pcp": "prefill_context_parallel_size",
    "ep": "enable_expert_parallel",
    "q": "quantization",
    "O": "compilation_config",
    "cc": "compilation_config",
    "ac": "attention_config",
    "spec_draft_tp": "speculative_draft_tensor_parallel_size",
}
# long spellings people use that vLLM itself does not define
LONG_ALIASES = {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size", "dp": "data_parallel_size",
                "tp_size": "tensor_parallel_size", "pp_size": "pipeline_parallel_size"}

# flags that take no value (store_true / BooleanOptionalAction); `--no-X` sets X to False
BOOLEAN_FLAGS = frozenset({
    "enforce_eager", "trust_remote_code", "enable_prefix_caching", "enable_chunked_prefill", "enable_auto_tool_choice",
    "enable_lora", "disable_log_requests", "disable_log_stats", "enable_log_requests", "enable_log_outputs",
    "enable_expert_parallel", "enable_reasoning", "disable_custom_all_reduce", "async_scheduling", "headless",
    "enable_sleep_mode", "disable_frontend_multiprocessing", "enable_prompt_tokens_details",
    "enable_force_include_usage", "enable_server_load_tracking", "skip_tokenizer_init", "disable_sliding_window",
    "enable_eplb", "enable_dbo", "enable_lora_bias", "use_v2_block_manager", "disable_async_output_proc",
    "disable_cascade_attn", "enable_return_routed_experts", "fully_sharded_loras", "enable_mm_embeds",
    "disable_fastapi_docs", "enable_request_id_headers", "disable_uvicorn_access_log", "enable_tokenizer_info_endpoint",
    "enable_log_deltas", "enable_prompt_embeds", "disable_mm_preprocessor_cache", "disable_hybrid_kv_cache_manager",
    "enable_multimodal_encoder_data_parallel",
    "kv_cache_metrics", "enable_layerwise_nvtx_tracing", "allow_credentials", "return_tokens_as_token_ids",
    "use_tqdm_on_load", "enable_ssl_refresh", "api_server_count_auto", "multi_step_stream_outputs",
    "enable_prompt_adapter", "speculative_disable_mqa_scorer", "worker_use_ray", "engine_use_ray",
    "disable_chunked_mm_input", "structured_outputs_config_disable_fallback", "guided_decoding_disable_fallback",
    "enable_dual_chunk_attention", "pt_load_map_location_auto", "expand_tools_even_if_tool_choice_none",
    "exclude_tools_when_tool_choice_none", "enable_elastic_ep", "data_parallel_hybrid_lb",
    "data_parallel_external_lb", "ray_workers_use_nsight", "use_tqdm", "save_result", "save_detailed",
    "disable_tqdm", "ignore_eos", "profile", "seed_random", "skip_mm_profiling", "calculate_kv_scales",
    "enable_expert_parallel_load_balancer",
})
# flags that take several values (`nargs="+"`)
LIST_FLAGS = frozenset({"served_model_name", "lora_modules", "prompt_adapters", "middleware", "allowed_origins",
                        "allowed_methods", "allowed_headers", "api_key", "tool_server"})

_INT = re.compile(r"[+-]?\d{1,30}")
_FLOAT = re.compile(r"[+-]?(?:\d{1,30}\.\d{0,30}|\.\d{1,30})(?:[eE][+-]?\d{1,3})?|[+-]?\d{1,30}[eE][+-]?\d{1,3}")


def tokenize(text: str, *, posix: bool = True) -> list[str | None]:
    """Split like a POSIX shell, forgivingly; shell operators become `OPERATOR` (None).

    `posix=False` keeps backslashes (Windows paths)."""
    tokens: list[str | None] = []
    cur: list[str] = []
    has_word = False
    i, n = 0, len(text)
    while i < n and len(tokens) < _MAX_TOKENS:
        c = text[i]
        if c in " \t\n":
            if has_word:
                tokens.append("".join(cur))
                cur, has_word = [], False
            i += 1
        elif c in "'\"":
            end = text.find(c, i + 1)
            if c == '"':
                # backslash-escaped quotes inside double quotes
                j = i + 1
                while end != -1 and text[end - 1] == "\\" and end > j:
                    end = text.find(c, end + 1)
            if end == -1:
                end = n
            chunk = text[i + 1:end]
            cur.append(chunk.replace('\\"', '"') if c == '"' else chunk)
            has_word = True
            i = end + 1
        elif c == "\\" and posix and i + 1 < n:
            cur.append(text[i + 1])
            has_word = True
            i += 2
        elif c == "<" and (m := _PLACEHOLDER.match(text, i)) is not None:
            cur.append(m.group())   # `<your-model>`, `/models/<MODEL_NAME>`: a placeholder, not a redirection
            has_word = True
            i = m.end()
        elif c in _OPERATOR_CHARS:
            word = "".join(cur)
            if has_word and not (word.isdigit() and c in "<>"):
                tokens.append(word)
            cur, has_word = [], False
            tokens.append(OPERATOR)
            i += 1
            while i < n and text[i] in _OPERATOR_CHARS:
                i += 1
        else:
            cur.append(c)
            has_word = True
            i += 1
    if has_word:
        tokens.append("".join(cur))
    return tokens


def convert(value: str) -> Any:
    """A flag value as int / float / bool / JSON / Python literal, else the string."""
    s = value.strip()
    if not s:
        return s
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if len(s) <= 40:
        if _INT.fullmatch(s):
            return int(s)
        if _FLOAT.fullmatch(s):
            try:
                return float(s)
            except ValueError:
                return s
    if s[0] in "{[" and len(s) <= 100_000:
        try:
            return json.loads(s)
        except ValueError:
            pass
        try:
            return ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return s


def flag_name(raw: str) -> str:
    """`--tensor-parallel-size` / `--tensor_parallel_size` / `-tp` → tensor_parallel_size."""
    long = raw.startswith("--")
    name = raw.lstrip("-").replace("-", "_")
    head, dot, rest = name.partition(".")
    head = (LONG_ALIASES if long else SHORT_ALIASES).get(head, head)
    return head + dot + rest


def _set(flags: dict[str, Any], name: str, value: Any) -> None:
    """Store a value; `a.b.c` names (vLLM's dotted JSON args) nest into dicts."""
    if "." not in name:
        flags[name] = value
        return
    parts = [p for p in name.split(".") if p]
    if not parts:  # `--.` or `--...`: no name at all
        return
    head, *rest = parts
    if not rest:
        flags[head] = value
        return
    node = flags.get(head)
    if not isinstance(node, dict):
        node = {}
        flags[head] = node
    for part in rest[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[rest[-1]] = value


def _is_flag(tok: str) -> bool:
    return tok.startswith("-") and len(tok) > 1 and not _INT.fullmatch(tok) and not _FLOAT.fullmatch(tok)


def parse_flags(tokens: list[str]) -> tuple[list[str], dict[str, Any]]:
    """(positional arguments, normalised flags) of one command's arguments."""
    positional: list[str] = []
    flags: dict[str, Any] = {}
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        i += 1
        if not _is_flag(tok) or tok == "--":
            if tok != "--":
                positional.append(tok)
            continue
        value: str | None = None
        if "=" in tok and tok.startswith("--"):
            tok, value = tok.split("=", 1)
        elif not tok.startswith("--") and len(tok) > 2 and tok[1] == "O":
            # -O3, -O.level=3, -O{"level":3}
            value = tok[2:]
            tok = "-O"
            if value.startswith(".") and "=" in value:
                sub, value = value[1:].split("=", 1)
                _set(flags, "compilation_config." + sub, convert(value))
                continue
            value = value.lstrip("=")
        elif "=" in tok and not tok.startswith("--"):
            tok, value = tok.split("=", 1)
        name = flag_name(tok)
        negated = name.startswith("no_") and name[3:] in BOOLEAN_FLAGS
        if negated:
            name = name[3:]
        if value is not None:
            _set(flags, name, convert(value))
            continue
        nxt = tokens[i] if i < n else None
        if negated:
            _set(flags, name, False)
            continue
        if name in BOOLEAN_FLAGS:
            if nxt is not None and nxt.lower() in ("true", "false", "1", "0"):
                _set(flags, name, nxt.lower() in ("true", "1"))
                i += 1
            else:
                _set(flags, name, True)
            continue
        if name.startswith("no_") and (nxt is None or _is_flag(nxt)):
            _set(flags, name[3:], False)
            continue
        if nxt is None or _is_flag(nxt):
            _set(flags, name, True)
            continue
        if name in LIST_FLAGS:
            values = []
            while i < n and not _is_flag(tokens[i]):
                values.append(tokens[i])
                i += 1
            _set(flags, name, values)
            continue
        _set(flags, name, convert(nxt))
        i += 1
    return positional, flags
