"""Reports and findings in the shape the parser and the rules engine produce, built by hand."""

from __future__ import annotations

from typing import Any

from bot.decision import Finding
from bot.report.model import ExceptionInfo, Frame, Report

SITE = "/usr/local/lib/python3.12/dist-packages"

# the issue forms' bodies of a usage question and a feature request, around the reporter's words
USAGE = "### Your current environment\n\n_No response_\n\n### How would you like to use vllm\n\n{}\n"
FEATURE = "### 🚀 The feature, motivation and pitch\n\n{}\n\n### Alternatives\n\n_No response_\n"

PP_MESSAGE = ("Pipeline parallelism is not supported for this model. Supported models implement the "
              "`SupportsPP` interface.")
PP_FRAMES = (
    Frame(f"{SITE}/vllm/entrypoints/openai/api_server.py", 1893, "run_server", True),
    Frame(f"{SITE}/vllm/engine/arg_utils.py", 1327, "create_engine_config", True),
    Frame(f"{SITE}/vllm/config/model.py", 1041, "verify_with_parallel_config", True),
)

ENV_DUMP = """<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
==============================
        System Info
==============================
OS                           : Ubuntu 22.04.4 LTS (x86_64)
GCC version                  : (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
==============================
       PyTorch Info
==============================
PyTorch version              : 2.8.0+cu128
CUDA used to build PyTorch   : 12.8
[pip3] torch==2.8.0
[pip3] transformers==4.56.1
vLLM Version                 : 0.11.0
GPU Topology:
GPU0     X      NV18
```
</details>"""


def report(title: str, description: str = "", *, exceptions: tuple[tuple[str, str], ...] = (),
           frames: tuple[Frame, ...] = (), flags: dict[str, Any] | None = None,
           error_lines: tuple[str, ...] = ()) -> Report:
    excs = tuple(ExceptionInfo(t, m, frames if i == len(exceptions) - 1 else ())
                 for i, (t, m) in enumerate(exceptions))
    title_text = title.split("]:", 1)[-1].strip() if title.startswith("[") else title
    return Report(title=title, title_text=title_text, kind="bug", kind_source="title", body=description,
                  description=description, exceptions=excs, error_lines=error_lines, flags=flags or {})


def finding(rule: str) -> Finding:
    return Finding(rule=rule, title=rule, labels=(), confidence=0.9, explanation="", workaround="")


def pp_draft_report(model: str = "Qwen/Qwen3-Next-80B-A3B-Instruct") -> Report:
    """PP + an MTP draft: the draft class lacks SupportsPP."""
    return report(
        f"[Bug]: {model.split('/')[-1]} fails with --pipeline-parallel-size 2 and MTP speculative decoding",
        f"Serving {model} with pipeline parallelism and the MTP draft fails at start-up.\n\n"
        f"vllm serve {model} --pipeline-parallel-size 2 --speculative-config '{{\"method\": \"mtp\"}}'\n",
        exceptions=(("NotImplementedError", PP_MESSAGE),), frames=PP_FRAMES,
        flags={"pipeline_parallel_size": 2, "speculative_config": {"method": "mtp"}, "model": model})


def pp_target_report(model: str = "stepfun-ai/Step3p5-Flash") -> Report:
    """PP with a target model that does not implement SupportsPP (no speculation)."""
    return report(
        f"[Bug]: {model.split('/')[-1]} does not start with --pipeline-parallel-size 4",
        f"I want to split {model} over 4 nodes with pipeline parallelism, the server exits at start-up.\n",
        exceptions=(("NotImplementedError", PP_MESSAGE),), frames=PP_FRAMES,
        flags={"pipeline_parallel_size": 4, "model": model})
