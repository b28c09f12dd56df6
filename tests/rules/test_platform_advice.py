"""Workarounds follow the reporter's platform: no nvidia-smi for a TPU, XPU or ROCm machine."""

from __future__ import annotations

import pytest

from bot.report import parse
from bot.rules import load_rules

INFER = """### Your current environment

{env}

### 🐛 Describe the bug

```
$ vllm serve Qwen/Qwen3-0.6B
Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/vllm/engine/arg_utils.py", line 1100, in create_engine_config
    device_config = DeviceConfig(device=self.device)
RuntimeError: Failed to infer device type
```
"""

WORLD = """### Your current environment

{env}

### 🐛 Describe the bug

```
vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 8
(APIServer pid=12) ValueError: World size (8) is larger than the number of available GPUs (4) in this node.
```
"""


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def advice(rules, rule_id, body):
    found = next((f for f in rules.evaluate(parse("[Bug]: server does not start", body)) if f.rule == rule_id), None)
    assert found is not None, [f.rule for f in rules.evaluate(parse("[Bug]: server does not start", body))]
    return found.workaround


@pytest.mark.parametrize(("env", "wanted", "unwanted"), [
    ("A TPU v6e-8 VM from GCP, installed with `pip install vllm-tpu`.", "jax.devices()", "nvidia-smi"),
    ("Two Intel Arc B580 cards, torch 2.8.0+xpu.", "xpu-smi", "nvidia-smi"),
    ("An AMD MI300X node with ROCm 6.4, torch 2.7.0+rocm6.4.", "amd-smi", "nvidia-smi"),
    ("One RTX 4090, driver 570.86, CUDA 12.8, torch 2.7.0+cu128.", "nvidia-smi", "jax"),
])
def test_failed_to_infer_device_type_checks_the_reporters_hardware(rules, env, wanted, unwanted):
    text = advice(rules, "failed-to-infer-device-type", INFER.format(env=env))
    assert wanted in text and unwanted not in text


@pytest.mark.parametrize(("env", "wanted", "unwanted"), [
    ("Intel Arc Pro B60 x4, torch 2.8.0+xpu, oneAPI 2025.1.", "ZE_AFFINITY_MASK", "nvidia-smi"),
    ("A TPU v5e-4 VM, vllm-tpu.", "TPU_VISIBLE_CHIPS", "nvidia-smi"),
    ("4x L40S, driver 550.54, torch 2.6.0+cu124.", "nvidia-smi -L", "xpu-smi"),
])
def test_world_size_advice_names_the_platforms_device_tools(rules, env, wanted, unwanted):
    text = advice(rules, "world-size-exceeds-available-gpus", WORLD.format(env=env))
    assert wanted in text and unwanted not in text
