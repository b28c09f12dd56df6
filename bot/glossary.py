"""Chinese words of vLLM reports, in English: a title such as "vllm推理如何指定某块gpu" is searched and keyed as
"inference how specify gpu".

The tokenisers keep Latin letters and digits only, so a report written in Chinese was invisible to the duplicate
index but for the product names it quotes. The glossary holds the commonest words of questions about running
and installing an inference engine (actions, resources, symptoms), not the wording of particular reports; the
English it adds goes through the same tokenising, stop words and vocabulary as any English text.

Pure and linear: one alternation of literal strings, longest first, run only over lines holding CJK characters.
"""

from __future__ import annotations

import re

GLOSSARY: tuple[tuple[str, str], ...] = (
    # questions
    ("如何", "how"), ("怎么", "how"), ("怎样", "how"), ("是否", "whether"), ("能否", "can"), ("可以", "can"),
    ("为什么", "why"), ("请问", ""),
    # actions
    ("指定", "specify"), ("选择", "choose"), ("释放", "release"), ("清理", "clear"), ("卸载", "unload"),
    ("关闭", "disable"), ("禁用", "disable"), ("开启", "enable"), ("启用", "enable"), ("部署", "deploy"),
    ("安装", "install"), ("编译", "compile"), ("加载", "load"), ("下载", "download"), ("启动", "start"),
    ("获取", "get"), ("返回", "return"), ("限制", "limit"), ("减少", "reduce"), ("设置", "set"),
    ("适配", "adapt"), ("兼容", "compatible"),
    # things
    ("显存", "gpu memory"), ("内存", "memory"), ("显卡", "gpu"), ("多卡", "multiple gpu"), ("单卡", "single gpu"),
    ("多机", "multi node"), ("多节点", "multi node"), ("分布式", "distributed"), ("推理", "inference"),
    ("模型", "model"), ("输出", "output"), ("回答", "answer"), ("服务", "server"), ("接口", "api"),
    ("思考", "thinking"), ("流式", "stream"), ("量化", "quantization"), ("多模态", "multimodal"),
    ("图片", "image"), ("图像", "image"), ("视频", "video"), ("工具调用", "tool call"), ("函数调用", "function call"),
    ("上下文", "context"), ("长度", "length"), ("本地", "local"), ("离线", "offline"), ("版本", "version"),
    ("并发", "concurrency"), ("吞吐", "throughput"), ("速度", "speed"), ("日志", "log"), ("镜像", "image docker"),
    # symptoms
    ("报错", "error"), ("错误", "error"), ("失败", "failed"), ("截断", "truncated"), ("不完整", "incomplete"),
    ("重复", "repeat"), ("停不下来", "endless"), ("不停", "endless"), ("卡住", "stuck"), ("卡死", "stuck"),
    ("很慢", "slow"), ("变慢", "slow"), ("乱码", "garbled"), ("不支持", "not supported"), ("支持", "support"),
)
_MAP = dict(GLOSSARY)
_CJK = re.compile(r"[\u3400-\u9fff]")
_TERMS = re.compile("|".join(sorted((re.escape(w) for w, _ in GLOSSARY), key=len, reverse=True)))
MAX_TEXT = 20_000


def english(text: str) -> str:
    """The glossary's English for the Chinese words of `text`, space-separated ("" when it holds no CJK)."""
    if not _CJK.search(text[:MAX_TEXT]):
        return ""
    return " ".join(w for w in (_MAP[m.group(0)] for m in _TERMS.finditer(text[:MAX_TEXT])) if w)


# where Chinese meets a Latin letter or a digit: "支持internlm2" names `internlm2` as a word of its own
_SCRIPT_EDGE = re.compile(r"(?<=[\u3400-\u9fff])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[\u3400-\u9fff])")


def with_english(text: str) -> str:
    """`text` followed by the glossary's English for its Chinese words (unchanged when it holds none), a space
    between Chinese and the Latin words it runs into."""
    extra = english(text)
    return f"{_SCRIPT_EDGE.sub(' ', text[:MAX_TEXT])} {extra}" if extra else text
