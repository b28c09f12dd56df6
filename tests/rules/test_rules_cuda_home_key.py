"""cuda-home-not-set keys the platform the build targets: a CUDA build without a toolkit on an NVIDIA machine is
another root cause than a build that fell back to the CUDA target on ROCm or a CPU-only machine."""

from __future__ import annotations

import pytest

from bot.report import parse
from bot.rules import load_rules

BODY = """\
### Your current environment

{env}

### How you are installing vllm

```
pip install vllm
...
      RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.
      [end of output]
  ERROR: Failed building wheel for vllm
```
"""


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def key(rules, title: str, env: str) -> str | None:
    found = {f.rule: f for f in rules.evaluate(parse(title, BODY.format(env=env)))}
    assert "cuda-home-not-set" in found
    return found["cuda-home-not-set"].duplicate_key


@pytest.mark.parametrize(("title", "env", "expected"), [
    ("[Installation]: pip install fails", "Ubuntu 22.04, an RTX 4090, driver 550", "cuda"),
    ("[Installation]: building on my AMD server with ROCm 6.1", "Ubuntu 22.04, MI210", "rocm"),
    ("[Installation]: pip install fails", "PyTorch version: 2.4.0+rocm6.1\nROCM used to build PyTorch: 6.1", "rocm"),
    ("[Installation]: install fails", "Ubuntu 22.04, an A100", "cuda"),
    ("[Installation]: CPU only machine, install fails", "Ubuntu 22.04, no GPU", "cpu"),
])
def test_key_is_the_platform_the_build_targets(rules, title, env, expected):
    assert key(rules, title, env) == expected
