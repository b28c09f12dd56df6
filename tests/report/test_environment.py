from __future__ import annotations

from pathlib import Path

import pytest

from bot.report import parse
from bot.report.environment import parse_environment
from bot.report.model import Environment
from bot.report.sections import split_sections

FIXTURES = Path(__file__).parent.parent / "fixtures" / "env"


def env_of(body: str, title: str = "[Bug]: something fails") -> tuple[Environment, bool]:
    return parse_environment(title, body, split_sections(body), tuple(body.splitlines()))


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# ---- collect_env, current banner format -----------------------------------------------------------

def test_banner_format_multi_gpu():
    env, placeholder = env_of(fixture("banner_h100.md"))
    assert not placeholder
    assert env.vllm_version == "0.16.0rc1.dev136+gdad2d6a59"
    assert env.vllm_version_source == "collect_env"
    assert env.vllm_commit == "dad2d6a59"
    assert env.torch_version == "2.9.1+cu129"
    assert env.cuda_version == "12.9"
    assert env.driver_version == "570.133.20"
    assert env.gpus == ("NVIDIA H100 80GB HBM3",) * 8
    assert env.gpu_count == 8
    assert env.platform == "cuda"
    assert env.os == "linux"
    assert env.python_version == "3.12.11"
    assert env.transformers_version == "4.57.3"
    assert env.rocm_version is None


def test_banner_format_env_vars_deduplicated():
    env, _ = env_of(fixture("banner_h100.md"))
    assert env.env_vars["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert env.env_vars["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"
    assert env.env_vars["NCCL_CUMEM_ENABLE"] == "0"
    assert list(env.env_vars).count("CUDA_VISIBLE_DEVICES") == 1


def test_worked_before_version_in_prose_does_not_override_collect_env():
    env, _ = env_of(fixture("banner_h100.md"))
    assert env.vllm_version != "0.15.1"


# ---- collect_env, older PyTorch-style format -----------------------------------------------------

def test_old_format_with_glued_rocm_line_and_at_commit():
    env, _ = env_of(fixture("old_cuda_glued.md"))
    assert env.vllm_version == "0.5.4"
    assert env.vllm_commit == "4db5176d9758b720b05460c50ace3c01026eb158"
    assert env.torch_version == "2.4.0+cu121"
    assert env.cuda_version == "12.1"
    assert env.rocm_version is None
    assert env.gpus == ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB")
    assert env.driver_version == "535.183.01"
    assert env.platform == "cuda"
    assert env.python_version == "3.10.14"
    assert env.transformers_version == "4.44.0"


def test_glued_rocm_version_is_read():
    body = "[conda] Could not collectROCM Version: 6.1.40091-a8dbc0c19\nvLLM Version: 0.4.2\n"
    env, _ = env_of(body)
    assert env.rocm_version == "6.1.40091-a8dbc0c19"
    assert env.vllm_version == "0.4.2"


def test_rocm_dump_gfx942():
    env, _ = env_of(fixture("rocm_mi300x.md"), title="[Usage]: AITER on MI300X")
    assert env.vllm_version == "0.9.2.dev364+gb432b7a28.rocm641"
    assert env.vllm_commit == "b432b7a28"
    assert env.platform == "rocm"
    assert env.rocm_version == "6.4.43483-a187df25c"
    assert env.gpus == ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)",)
    assert env.cuda_version is None
    assert env.driver_version is None
    assert env.env_vars["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx942"


def test_xpu_dump():
    env, _ = env_of(fixture("xpu_arc.md"))
    assert env.platform == "xpu"
    assert env.vllm_version == "0.19.1.dev52+g0c1d2f3e4.xpu"
    assert env.vllm_commit == "0c1d2f3e4"
    assert env.gpus == ("Intel(R) Arc(TM) B580 Graphics",)
    assert env.cuda_version is None
    assert env.env_vars["ZE_AFFINITY_MASK"] == "0"


def test_cpu_only_dump():
    env, _ = env_of(fixture("cpu_only.md"))
    assert env.platform == "cpu"
    assert env.vllm_version == "0.11.0+cpu"
    assert env.gpus == ()
    assert env.cuda_version is None
    assert env.env_vars["VLLM_CPU_KVCACHE_SPACE"] == "40"


def test_windows_dump():
    env, _ = env_of(fixture("windows.md"))
    assert env.os == "windows"
    assert env.vllm_version == "0.8.4"
    assert env.gpus == ("NVIDIA GeForce RTX 4090",)
    assert env.python_version == "3.12.9"
    assert env.platform == "cuda"


def test_macos_dump():
    env, _ = env_of(fixture("macos.md"))
    assert env.os == "macos"
    assert env.platform == "cpu"
    assert env.vllm_version == "0.9.1"
    assert env.gpus == ()


def test_wsl_dump():
    env, _ = env_of(fixture("wsl.md"))
    assert env.os == "wsl"
    assert env.vllm_version == "0.7.3"
    assert env.driver_version == "566.36"
    assert env.env_vars["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"


@pytest.mark.parametrize("value, version, commit", [
    ("0.27.0", "0.27.0", None),
    ("0.16.0rc1.dev136+gdad2d6a59 (git sha: dad2d6a59)", "0.16.0rc1.dev136+gdad2d6a59", "dad2d6a59"),
    ("0.22.1rc1.dev490+g4a560dd8d (git sha: 4a560dd8d, date: 20260612)", "0.22.1rc1.dev490+g4a560dd8d", "4a560dd8d"),
    ("0.5.4@4db5176d9758b720b05460c50ace3c01026eb158", "0.5.4", "4db5176d9758b720b05460c50ace3c01026eb158"),
    ("0.6.3.post2.dev114+g4f1ba0844.d20241029", "0.6.3.post2.dev114+g4f1ba0844.d20241029", "4f1ba0844"),
    ("0.5.3.post1+cu118", "0.5.3.post1+cu118", None),
])
def test_collect_env_version_forms(value, version, commit):
    env, _ = env_of(f"vLLM Version                 : {value}\n")
    assert env.vllm_version == version
    assert env.vllm_commit == commit


@pytest.mark.parametrize("value", ["N/A (dev)", "N/A", "Could not collect"])
def test_collect_env_without_a_version(value):
    env, _ = env_of(f"vLLM Version: {value}\nvLLM Build Flags:\n")
    assert env.vllm_version is None


# ---- fallbacks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("line, version, source", [
    ("INFO 05-06 06:05:38 api_server.py:590] vLLM API server version 0.6.3.post1", "0.6.3.post1", "banner"),
    ("(APIServer pid=1) INFO 09-02 10:11:12 [api_server.py:1805] vLLM API server version 0.10.1.1",
     "0.10.1.1", "banner"),
    ("\x1b[1;36m(APIServer pid=7)\x1b[0;0m INFO 02-01 08:00:00 [startup.py:88] ▄▄ ▄█ █     █     █ ▀▄▀ █  "
     "version 0.16.0", "0.16.0", "banner"),
    ("INFO 03-01 10:00:00 [startup.py:90] vLLM server version 0.17.0, serving model Qwen/Qwen3-8B", "0.17.0", "banner"),
    ("(EngineCore_DP0 pid=129) INFO 10-06 18:54:29 [core.py:77] Initializing a V1 LLM engine "
     "(v0.11.0) with config: model='Qwen/Qwen3-8B', speculative_config=None", "0.11.0", "engine-config"),
    ("INFO 07-01 12:00:00 llm_engine.py:176] Initializing an LLM engine (v0.5.1) with config: model='x'",
     "0.5.1", "engine-config"),
])
def test_log_banners(line, version, source):
    body = f"### 🐛 Describe the bug\n\n```\n{line}\nERROR boom\n```\n"
    env, _ = env_of(body)
    assert env.vllm_version == version
    assert env.vllm_version_source == source


def test_banner_dev_version_gives_commit():
    env, _ = env_of("INFO 02-20 11:00:00 [api_server.py:912] vLLM API server version 0.7.3.dev41+g5e1f7a2c\n")
    assert env.vllm_version == "0.7.3.dev41+g5e1f7a2c"
    assert env.vllm_commit == "5e1f7a2c"


def test_pip_show():
    body = "```\n$ pip show vllm\nName: vllm\nVersion: 0.8.5.post1\nSummary: A high-throughput engine\n```\n"
    env, _ = env_of(body)
    assert env.vllm_version == "0.8.5.post1"
    assert env.vllm_version_source == "pip"


def test_pip_show_of_another_package_is_ignored():
    body = "I have this xgrammar:\n```\n$ pip show xgrammar\nName: xgrammar\nVersion: 0.1.21\n```\n"
    env, _ = env_of(body)
    assert env.vllm_version is None


@pytest.mark.parametrize("text, version", [
    ("pip install vllm==0.6.1.post2", "0.6.1.post2"),
    ("uv pip install vllm==0.10.1 --torch-backend=cu128", "0.10.1"),
    ("vllm==0.10.1.1", "0.10.1.1"),
    ("Installed vllm-0.5.3.post1+cu118-cp310-cp310-manylinux1_x86_64.whl", "0.5.3.post1+cu118"),
])
def test_pip_forms(text, version):
    env, _ = env_of(f"### Your current environment\n\n{text}\n")
    assert env.vllm_version == version


@pytest.mark.parametrize("text, version", [
    ("docker run --gpus all vllm/vllm-openai:v0.10.0 --model Qwen/Qwen3-8B", "0.10.0"),
    ("image: vllm/vllm-openai:v0.9.2", "0.9.2"),
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5"),
    ("docker pull vllm/vllm-openai:nightly", None),
    ("docker pull vllm/vllm-openai:latest", None),
    ("quay.io/ascend/vllm-ascend:v0.9.1rc1", None),
])
def test_image_tags(text, version):
    env, _ = env_of(f"### Your current environment\n\n{text}\n", title="[Bug]: crash")
    assert env.vllm_version == version
    if version:
        assert env.vllm_version_source == "image"


@pytest.mark.parametrize("title, body, version", [
    ("[Bug]: crash", "I am running vLLM 0.26.1rc1.dev693+g5a1b2c3d4 on 2 nodes.", "0.26.1rc1.dev693+g5a1b2c3d4"),
    ("[Bug]: crash", "vllm version 0.6.3, H100", "0.6.3"),
    ("[Bug]: crash", "vLLM version: v0.7.2", "0.7.2"),
    ("[Bug]: crash", "It happens on v0.9.2 with the default config.", "0.9.2"),
    ("[Bug]: v0.11.0 breaks tool calling", "see below", "0.11.0"),
    ("[Bug]: 0.11.0 vllm audio transcription fails", "see below", "0.11.0"),
    ("[Bug]: ngram drafts crash the server in 0.15.1", "", "0.15.1"),
    ("[Bug]: crash", "It works on 0.8.5 but fails on 0.9.0.", "0.9.0"),
    ("[Bug]: crash", "After upgrading from vllm 0.8.5 to vllm 0.9.0 the server crashes.", "0.9.0"),
    ("[Performance]: TTFT regression between v0.6.3 and v0.6.4", "", "0.6.4"),
    ("[Bug]: crash", "Downgrading to vLLM v0.9.1 fixes it. We run vllm 0.10.0.", "0.10.0"),
    ("[Bug]: crash", "vllm 0.8.5 -> 0.9.0 breaks the tool parser", "0.9.0"),
    ("[Bug]: crash", "The issue doesn't happen in vllm 0.8.5; it does in vllm 0.9.0.", "0.9.0"),
    ("[Bug]: 推理报错", "vllm版本：0.8.5.post1，显卡 4090", "0.8.5.post1"),
    ("[Bug]: crash", "环境：vllm 0.7.3", "0.7.3"),
    ("[Bug]: crash", "docker build --build-arg VLLM_VERSION=0.8.5 .", "0.8.5"),
    ("[Bug]: crash", "I am running vllm `0.8.5` on kubernetes", "0.8.5"),
    ("[Bug]: LMCache v0.3.1 crashes with vLLM", "", None),
    ("[Bug]: regression v0.10.2", "", "0.10.2"),
    ("[Bug]: crash", "this was fixed in v0.9.1 according to the changelog, but I am on vllm 0.9.0", "0.9.0"),
    ("[Bug]: [vLLM v0.14.1 + Kimi-K2]: streamed tool calls lose their arguments", "see below", "0.14.1"),
    ("[Bug]: [V1][Spec Decode]: ngram drafts crash", "see below", None),
    ("[Bug]: Mixtral fails to load on vllm-openai v0.7.3", "### Your current environment", "0.7.3"),
    ("[Installation]: Missing v0.13.1 wheel for ppc64le", "pip install vllm\nInstalled vllm 0.12.0 instead", "0.13.1"),
    ("[Bug]: Granite v0.3.1 template renders twice", "", None),
    ("[Bug]: crash", "the check at https://github.com/vllm-project/vllm/blob/v0.3.3/vllm/worker.py#L12 is off", None),
    ("[Bug]: crash", "see [tag](https://github.com/vllm-project/vllm/releases/tag/v0.12.0), I use vllm 0.11.2",
     "0.11.2"),
    ("[Bug]: crash", "pip install https://github.com/vllm-project/vllm/releases/download/v0.9.1/vllm-0.9.1-cp38-abi3.whl",
     "0.9.1"),
    ("[Bug]: crash", "Image: the nightly tag of last week, reporting `v0.21.1rc2.dev44+g0a1b2c3d4`.",
     "0.21.1rc2.dev44+g0a1b2c3d4"),
    ("[Usage]: GGUF", "I skipped collect_env since I use the docker container `v0.7.2.post1` of vllm.", "0.7.2.post1"),
    ("[Bug]: crash", "flashinfer v0.2.6+g1a2b3c4 is installed", None),
])
def test_prose_and_title(title, body, version):
    env, _ = env_of(body, title=title)
    assert env.vllm_version == version


@pytest.mark.parametrize("body", [
    "torch==2.5.1+cu124, transformers==4.51.3, python 3.12.3, CUDA 12.4",
    "[pip3] vllm-flash-attn==2.6.2\n[pip3] vllm_nccl_cu12==2.18.1.0.4.0",
    "vllm-ascend 0.9.1rc1 on Atlas 800I",
    "lm-eval 0.4.8 scores dropped",
    "xgrammar==0.1.19 and flashinfer 0.2.5",
    "Qwen3-0.6B and Qwen2.5-1.5B",
    "import vllm.entrypoints.openai.api_server",
    "see https://github.com/vllm-project/vllm/pull/12345",
])
def test_other_versions_are_not_vllm(body):
    env, _ = env_of(body)
    assert env.vllm_version is None


def test_placeholder_only_environment():
    body = (
        "### Your current environment\n\n<details>\n<summary>The output of <code>python collect_env.py</code>"
        "</summary>\n\n```text\nYour output of `python collect_env.py` here\n```\n\n</details>\n\n"
        "### 🐛 Describe the bug\n\nThe server crashes.\n"
    )
    env, placeholder = env_of(body)
    assert placeholder
    assert env.vllm_version is None


def test_filled_environment_is_not_placeholder():
    env, placeholder = env_of("### Your current environment\n\nvllm 0.8.3, 4x A100\n\n### 🐛 Describe the bug\n\nx\n")
    assert not placeholder
    assert env.vllm_version == "0.8.3"
    assert env.gpus == ("A100",) * 4


# ---- hardware from prose / tools -----------------------------------------------------------------

@pytest.mark.parametrize("text, gpus", [
    ("Running on 8x H100", ("H100",) * 8),
    ("2 x RTX 4090", ("RTX 4090",) * 2),
    ("single A100 80GB", ("A100 80GB",)),
    ("A10*4 OOM while loading", ("A10",) * 4),
    ("8*3090ti 24g", ("3090ti",) * 8),
    ("The model Qwen3-235B-A22B on", ()),
])
def test_gpus_from_prose(text, gpus):
    env, _ = env_of(text)
    assert env.gpus == gpus


def test_gpus_from_nvidia_smi_table():
    body = """```
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.15              Driver Version: 570.86.15      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 5090        Off |   00000000:01:00.0 Off |                  N/A |
|   1  NVIDIA GeForce RTX 5090        Off |   00000000:02:00.0 Off |                  N/A |
+-----------------------------------------+------------------------+----------------------+
```"""
    env, _ = env_of(body)
    assert env.gpus == ("NVIDIA GeForce RTX 5090",) * 2
    assert env.driver_version == "570.86.15"
    assert env.cuda_version == "12.8"
    assert env.platform == "cuda"


@pytest.mark.parametrize("text, platform", [
    ("INFO 01-23 17:05:48 [__init__.py:239] Automatically detected platform rocm.", "rocm"),
    ("(APIServer pid=1) INFO 09-10 01:02:03 [__init__.py:216] Automatically detected platform cuda.", "cuda"),
    ("torch 2.5.1+rocm6.2", "rocm"),
    ("torch==2.6.0+cpu", "cpu"),
    ("torch==2.7.0+xpu", "xpu"),
    ("Running on a TPU v5e pod", "tpu"),
    ("two MI300X cards", "rocm"),
])
def test_platform(text, platform):
    env, _ = env_of(text)
    assert env.platform == platform


def test_cuda_from_torch_local_tag():
    env, _ = env_of("I use torch 2.1.2+cu118 from the pytorch index")
    assert env.torch_version == "2.1.2+cu118"
    assert env.cuda_version == "11.8"


@pytest.mark.parametrize("text, os", [
    ("Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35", "wsl"),
    ("I run vllm inside WSL2 on Windows 11", "wsl"),
    ("on Windows 11 with a 4090", "windows"),
    ("MacBook Pro M3 Max", "macos"),
    ("Ubuntu 22.04 server", "linux"),
    ('  File "D:\\dev\\chatbot\\serve_llm.py", line 12, in <module>', "windows"),
    ("E:\\tools\\llm-env\\Lib\\site-packages\\vllm\\engine\\arg_utils.py", "windows"),
])
def test_os_from_prose(text, os):
    env, _ = env_of(text)
    assert env.os == os


def test_python_and_transformers_fallbacks():
    env, _ = env_of('File "/usr/lib/python3.10/site-packages/x.py"\ntransformers==4.46.1\n')
    assert env.python_version == "3.10"
    assert env.transformers_version == "4.46.1"


def test_secret_env_vars_are_dropped():
    body = "### Your current environment\n\n```\nHF_TOKEN=hf_abc\nVLLM_API_KEY=x\nVLLM_USE_V1=1\n```\n"
    env, _ = env_of(body)
    assert env.env_vars == {"VLLM_USE_V1": "1"}


# ---- needs_info through the whole parser --------------------------------------------------------

def test_needs_info_when_bug_has_no_version():
    body = (
        "### Your current environment\n\n```text\nThe output of `python collect_env.py`\n```\n\n"
        "### 🐛 Describe the bug\n\nCrash on start.\n"
    )
    report = parse("[Bug]: crash on start", body)
    assert report.needs_info == ("environment",)
    assert report.environment_placeholder


def test_no_needs_info_when_version_is_in_a_log():
    body = "### 🐛 Describe the bug\n\nINFO 01-02 03:04:05 api_server.py:1 vLLM API server version 0.4.0\n"
    assert parse("[Bug]: crash", body).needs_info == ()


def test_no_needs_info_for_feature_requests():
    assert parse("[Feature]: support X", "### 🚀 The feature, motivation and pitch\n\nplease").needs_info == ()


# ---- hostile input -------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "",
    "\x00\x01\x02 binary \udcff junk",
    "vllm " * 200_000,
    "0." * 300_000,
    "vLLM Version: " + "9" * 100_000,
    ("a" * 50_000 + "\n") * 20,
    "GPU models and configuration:\n" + "GPU 0: x\n" * 20_000,
    "[" * 200_000 + "vllm==0.1.0",
    ("| 0 " + " " * 5000 + "On |\n") * 100,
])
def test_hostile_input_does_not_raise(body):
    env, _ = env_of(body)
    assert isinstance(env, Environment)


@pytest.mark.parametrize("body", [
    "Same prompt, two engines on one Ryzen AI box:\n1. llama.cpp - 41 tok/sec\n2. vLLM - 6.5 tok/sec at batch 1",
    "With vLLM: 3.2 s time to first token, with TGI 1.1 s.",
    "vllm 12.5 GiB resident after warmup, which is more than expected",
])
def test_measurements_next_to_vllm_are_not_versions(body):
    assert parse("[Performance]: slow single-stream decode", body).environment.vllm_version is None


def test_another_packages_zero_zero_release_is_not_a_vllm_version():
    body = ("The Python side still pins [`tinyparse`](https://pkgs.example.invalid/tinyparse/), which is stuck at "
            "**0.0.9**; please move to the maintained fork.")
    assert parse("[Feature]: switch the tokenizer dependency", body).environment.vllm_version is None
    assert parse("[Bug]: crash on v0.9.2", "Started failing on v0.9.2.").environment.vllm_version == "0.9.2"


@pytest.mark.parametrize(("title", "body", "platform"), [
    ("[Bug][XPU]: w4a16 checkpoint fails on Arc Pro B60", "It works on an A10 and on an MI300X.", "xpu"),
    ("[Bug]: sampler crash", "VLLM_TARGET_DEVICE=cpu vllm serve Qwen/Qwen3-0.6B\nfine on MI210 though", "cpu"),
    ("[Bug]: sampler crash", "fine on an MI210, fails here", "rocm"),
])
def test_a_platform_named_outright_beats_a_gpu_from_the_prose(title, body, platform):
    env, _ = env_of(body, title=title)
    assert env.platform == platform
