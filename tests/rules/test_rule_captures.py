"""What shipped rules capture from real-shaped reports: the values their texts and duplicate keys are built from."""

from __future__ import annotations

import pytest

from bot.report import parse
from bot.rules import load_rules


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def finding(rules, rule_id, title, body):
    return next((f for f in rules.evaluate(parse(title, body)) if f.rule == rule_id), None)


@pytest.mark.parametrize("quoted", ["zeta4_moe", "`zeta4_moe`", "'zeta4_moe'", '"zeta4_moe"'])
def test_model_type_is_captured_whole_with_or_without_quotes(rules, quoted):
    error = (f"ValueError: The checkpoint you are trying to load has model type {quoted} but Transformers does not "
             "recognize this architecture. This could be because of an issue with the checkpoint")
    body = f"""### How would you like to use vllm

Loading the checkpoint on our old server fails:
```
INFO 06-18 09:12:01 [config.py:520] Resolving the config of /data/zeta4-30b-moe
{error}
```
"""
    f = finding(rules, "transformers-too-old-for-model", "[Usage]: zeta4 fails to load", body)
    assert f is not None
    assert f.captures["model_type"] == "zeta4_moe"
    assert "model_type: zeta4_moe`" in f.explanation


def test_keyerror_on_a_config_class_name_is_not_a_model_type(rules):
    body = """\
  File "/usr/lib/python3/dist-packages/transformers/models/auto/configuration_auto.py", line 731, in __getitem__
    model_type = self._reverse_config_mapping[key.__name__]
KeyError: 'OrcaVisionChatConfig'
"""
    assert finding(rules, "transformers-config-keyerror-model-type", "Serving OrcaVision-20B fails", body) is None


def test_keyerror_on_a_lowercase_model_type_is_still_diagnosed(rules):
    body = """\
  File "/opt/venv/lib/python3.12/site-packages/transformers/models/auto/configuration_auto.py", line 1071, in get
    raise KeyError(key)
KeyError: 'orcavision'
"""
    assert finding(rules, "transformers-config-keyerror-model-type", "Serving OrcaVision-20B fails", body) is not None
