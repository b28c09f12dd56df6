import pytest
from dupes_reports import PP_FRAMES, PP_MESSAGE, report

from bot.dupes.normalise import normalise_message, short_type
from bot.dupes.signature import exception_signature, line_signature, signatures
from bot.report.model import ExceptionInfo, Frame


def test_sizes_numbers_and_ranks_become_placeholders():
    a = normalise_message("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB "
                          "of which 1.06 GiB is free. Process 3170 has 78.12 GiB memory in use.")
    b = normalise_message("CUDA out of memory. Tried to allocate 512.00 MiB. GPU 3 has a total capacity of 23.65 GiB "
                          "of which 96.06 MiB is free. Process 88 has 23.55 GiB memory in use.")
    assert a == b
    assert "<size>" in a and "<rank>" in a and "2.00" not in a


def test_paths_hex_quoted_and_model_ids():
    m = normalise_message("Error in model execution at 0x7f3a2c001e40: cannot open '/root/.cache/huggingface/x.bin' "
                          "for meta-llama/Llama-3.1-8B-Instruct")
    assert "<hex>" in m and "<q>" in m and "<model>" in m
    assert "/root" not in m and "meta-llama" not in m
    win = normalise_message(r"FileNotFoundError at C:\Users\me\vllm\model.safetensors")
    assert "<path>" in win and "Users" not in win


def test_relative_paths_of_three_components_are_paths_and_model_ids_stay_ids():
    a = normalise_message("src/vllm/_C.abi3.so: undefined symbol: _ZN3c104impl8GPUTrace9haveStateE")
    b = normalise_message("/opt/conda/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jitE")
    assert a == b == "<path>: undefined symbol: <id>"
    assert normalise_message("could not load Qwen/Qwen2-7B-Instruct") == "could not load <model>"


def test_architecture_names_and_mixed_identifiers():
    a = normalise_message("GGUF model with architecture starcoder2 is not supported yet.")
    b = normalise_message("GGUF model with architecture deepseek2 is not supported yet.")
    assert a == b and "<id>" in a and "starcoder" not in a
    c = normalise_message("Model architectures ['JambaForSequenceClassification'] are not supported for now. "
                          "Supported architectures: dict_keys(['AquilaModel', 'ArcticForCausalLM'])")
    d = normalise_message("Model architectures ['Exaone4ForCausalLM'] are not supported for now. "
                          "Supported architectures: dict_keys(['AquilaModel', 'ArcticForCausalLM'])")
    assert c == d and "Jamba" not in c and "Exaone" not in d
    e = normalise_message("Starcoder2ForCausalLM has no vLLM implementation and the Transformers implementation is "
                          "not compatible with vLLM.")
    f = normalise_message("BertForSequenceClassification has no vLLM implementation and the Transformers "
                          "implementation is not compatible with vLLM.")
    assert e == f and e.startswith("<arch> has no vLLM implementation")


@pytest.mark.timeout(30)
def test_long_and_hostile_lines_are_bounded():
    text = "a" * 100_000 + " 1" * 50_000
    assert len(normalise_message(text)) <= 160
    assert normalise_message("x/" * 20_000)  # no catastrophic backtracking on path-like junk


def test_short_type():
    assert short_type("torch.OutOfMemoryError") == "OutOfMemoryError"
    assert short_type("NotImplementedError") == "NotImplementedError"


def test_same_error_from_different_models_shares_a_signature():
    a = exception_signature(ExceptionInfo("NotImplementedError", PP_MESSAGE, PP_FRAMES))
    b = exception_signature(ExceptionInfo("NotImplementedError", PP_MESSAGE, PP_FRAMES[1:]))
    assert a is not None and b is not None
    assert a.key == b.key
    assert a.frame_key is not None and a.describe().startswith("NotImplementedError: Pipeline parallelism")


def test_frames_key_uses_innermost_vllm_frames_only():
    frames = (*PP_FRAMES, Frame("/usr/lib/python3.12/site-packages/torch/nn/modules/module.py", 1, "forward", False))
    a = exception_signature(ExceptionInfo("NotImplementedError", PP_MESSAGE, frames))
    b = exception_signature(ExceptionInfo("NotImplementedError", PP_MESSAGE, PP_FRAMES))
    assert a is not None and b is not None and a.frame_key == b.frame_key


def test_wrapper_errors_have_no_signature():
    assert exception_signature(ExceptionInfo(
        "RuntimeError", "Engine core initialization failed. See root cause above. Failed core proc(s): {}")) is None
    assert exception_signature(ExceptionInfo("vllm.v1.engine.exceptions.EngineDeadError", "EngineCore died")) is None
    assert exception_signature(ExceptionInfo("KeyError", "'exaone4'")) is None  # only a quoted value


def test_error_lines_and_root_cause_first():
    r = report("x", exceptions=(("ValueError", "first problem happened here in the config"),
                                ("RuntimeError", "Engine core initialization failed. See root cause above.")),
               error_lines=("fatal error: Python.h: No such file or directory",))
    sigs = signatures(r)
    assert [s.type for s in sigs] == ["ValueError", ""]
    assert line_signature("ERROR: 12") is None


def test_pip_summary_lines_are_not_signatures():
    from bot.dupes.signature import line_signature

    for line in ("× Building wheel for vllm (pyproject.toml) did not run successfully.",
                 "error: subprocess-exited-with-error",
                 "ERROR: Failed building wheel for vllm",
                 "  ╰─> [134 lines of output]",
                 "ERROR: Could not build wheels for vllm, which is required to install pyproject.toml-based projects"):
        assert line_signature(line) is None, line
    assert line_signature("fatal error: Python.h: No such file or directory") is not None
