from pathlib import Path

from bot.report.logs import clean_log
from bot.report.tracebacks import extract_errors, is_vllm_file

FIXTURES = Path(__file__).parent.parent / "fixtures" / "logs"


def errors(text: str, title: str = ""):
    return extract_errors(clean_log(text), title)


def fixture(name: str, title: str = ""):
    return errors((FIXTURES / name).read_text(), title)


def test_interleaved_workers_are_not_mixed_and_wrappers_are_demoted():
    tracebacks, exceptions, _ = fixture("engine_core_nested.log")
    workers = [t for t in tracebacks if t.process in ("Worker_TP0", "Worker_TP1")]
    assert len(workers) == 2
    for tb in workers:
        assert tb.final.type == "torch.OutOfMemoryError"
        assert [f.function for f in tb.final.frames] == ["worker_main", "load_model", "__torch_function__"]
    assert "GPU 0" in workers[0].final.message and "GPU 1" in workers[1].final.message
    root = exceptions[-1]
    assert root.type == "torch.OutOfMemoryError" and root.short_type == "OutOfMemoryError"
    assert root.process == "Worker_TP0"
    assert root.frames[0].is_vllm and not root.frames[-1].is_vllm
    types = [e.type for e in exceptions]
    assert "RuntimeError" in types and "Exception" in types
    # de-duplicated: the engine core printed its wrapper twice
    assert types.count("Exception") == 1


def test_ray_task_error_is_unwrapped_and_the_worker_error_is_the_root():
    tracebacks, exceptions, _ = fixture("ray_workers.log")
    assert exceptions[-1].type == "safetensors_rust.SafetensorError"
    assert exceptions[-1].first_line == "Error while deserializing header: MetadataIncompleteBuffer"
    assert not any("RayTaskError" in e.type for e in exceptions)
    by_process = {t.process: t.final.type for t in tracebacks if t.process}
    assert by_process == {"RayWorkerWrapper": "safetensors_rust.SafetensorError"} or len(by_process) == 1
    ray_tb = [t for t in tracebacks if t.process == "RayWorkerWrapper"]
    assert {t.final.type for t in ray_tb} == {"safetensors_rust.SafetensorError", "RuntimeError"}


def test_chained_exceptions_form_one_traceback_oldest_first():
    tracebacks, exceptions, _ = fixture("chained.log")
    assert len(tracebacks) == 1
    assert [e.type for e in tracebacks[0].chain] == ["KeyError", "ValueError"]
    assert [e.type for e in exceptions] == ["KeyError", "ValueError"]
    assert exceptions[-1].first_line.startswith("The checkpoint you are trying to load has model type `qwen3_vl_moe`")


def test_title_naming_the_cause_picks_it_among_equals():
    _, exceptions, _ = fixture("chained.log", title="[Bug]: KeyError: 'qwen3_vl_moe' when loading")
    assert exceptions[-1].type == "KeyError"


def test_direct_cause_chain():
    text = """Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/torch/_inductor/compile_fx.py", line 12, in compile_fx
    raise InductorError(e)
torch._inductor.exc.InductorError: AssertionError: mismatched shapes

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/vllm/compilation/backends.py", line 88, in __call__
    raise BackendCompilerFailed(self.compiler_fn, e)
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
AssertionError: mismatched shapes
"""
    tracebacks, exceptions, _ = errors(text)
    assert [e.type for e in tracebacks[0].chain] == [
        "torch._inductor.exc.InductorError", "torch._dynamo.exc.BackendCompilerFailed"]
    assert exceptions[-1].message == "backend='inductor' raised:\nAssertionError: mismatched shapes"


def test_windows_paths_and_vllm_frames():
    tracebacks, exceptions, _ = fixture("windows.log")
    frames = tracebacks[0].final.frames
    assert exceptions[-1].type == "ModuleNotFoundError"
    assert [f.is_vllm for f in frames] == [False, True, True, False, True]
    assert frames[1].file.startswith("C:\\Users\\dev")


def test_is_vllm_file():
    assert is_vllm_file("/usr/local/lib/python3.12/dist-packages/vllm/config/model.py")
    assert is_vllm_file("/vllm-workspace/vllm/v1/engine/core.py")
    assert is_vllm_file("C:\\envs\\x\\Lib\\site-packages\\vllm\\engine\\llm_engine.py")
    assert not is_vllm_file("/usr/lib/python3/site-packages/vllm_ascend/worker.py")
    assert not is_vllm_file("/home/me/vllm-fork/tests/test_x.py")
    assert not is_vllm_file("/workspace/vllm/tests/models/test_models.py")
    assert not is_vllm_file("/usr/lib/python3.12/asyncio/runners.py")


def test_logger_exception_with_header_on_every_line_and_message_mid_line():
    tracebacks, exceptions, _ = fixture("v0_worker.log")
    assert len(tracebacks) == 1
    assert tracebacks[0].process == "VllmWorkerProcess"
    assert exceptions[-1].type == "RuntimeError"
    assert exceptions[-1].message.startswith("Cannot re-initialize CUDA in forked subprocess")
    assert "\n" not in exceptions[-1].message  # the empty continuation line and the INFO line are not part of it


def test_pytest_e_lines():
    _, exceptions, error_lines = fixture("pytest.log")
    assert [e.type for e in exceptions] == ["ValueError"]
    assert exceptions[-1].message.startswith("torch.bfloat16 is not supported for quantization method gptq")


def test_build_failure_keeps_compiler_and_pip_errors_as_error_lines():
    _, exceptions, error_lines = fixture("build_failure.log")
    assert [e.short_type for e in exceptions] == ["CalledProcessError"]
    joined = "\n".join(error_lines)
    assert "fatal error: Python.h: No such file or directory" in joined
    assert "ERROR: Could not build wheels for vllm, which is required to install pyproject.toml-based" in joined
    assert "error: command '/usr/bin/gcc' failed with exit code 1" in joined
    assert "ninja: build stopped: subcommand failed." in joined


def test_nvcc_gcc_and_ninja_diagnostics_are_error_lines():
    log = """      [12/310] Building CUDA object CMakeFiles/_C.dir/csrc/attention/attention_kernels.cu.o
      FAILED: CMakeFiles/_C.dir/csrc/attention/attention_kernels.cu.o
      /usr/local/cuda/bin/nvcc -O2 -std=c++17 -c /src/vllm/csrc/attention/attention_kernels.cu
      /src/vllm/csrc/attention/attention_kernels.cu(42): error: identifier "__hmax" is undefined
      /src/vllm/csrc/cpu/utils.cpp:12:5: error: 'omp_get_max_threads' was not declared in this scope
      1 error detected in the compilation of "/src/vllm/csrc/attention/attention_kernels.cu".
      -- Detecting CUDA compile features - done
"""
    _, exceptions, error_lines = errors(log)
    assert exceptions == ()
    assert error_lines == (
        "FAILED: CMakeFiles/_C.dir/csrc/attention/attention_kernels.cu.o",
        '/src/vllm/csrc/attention/attention_kernels.cu(42): error: identifier "__hmax" is undefined',
        "/src/vllm/csrc/cpu/utils.cpp:12:5: error: 'omp_get_max_threads' was not declared in this scope",
    )


def test_ansi_coloured_engine_core_failure():
    _, exceptions, _ = fixture("ansi.log")
    assert exceptions[-1].type == "ValueError"
    assert exceptions[-1].first_line.startswith("To serve at least one request with the models's max seq len (131072)")
    assert exceptions[0].first_line.startswith("Engine core initialization failed")


def test_kubectl_log_error_lines_and_bare_exception_line():
    _, exceptions, error_lines = fixture("kubectl.log")
    assert [(e.type, e.source) for e in exceptions] == [("RuntimeError", "line")]
    assert "Segmentation fault (core dumped)" in error_lines


def test_bare_lines_titles_and_mentions():
    _, exc, _ = errors("it fails with\n\n**ValueError: Bfloat16 is only supported on GPUs with compute capability of "
                       "at least 8.0.**\n")
    assert (exc[-1].type, exc[-1].source) == ("ValueError", "line")
    assert exc[-1].message.startswith("Bfloat16 is only supported")
    _, exc, _ = errors("valueerror: loading ./ckpt-7b requires you to execute the configuration file")
    assert exc[-1].type == "ValueError"
    _, exc, _ = errors("No traceback here.", title="[Bug]: ValueError: Model architectures ['X'] are not supported")
    assert (exc[-1].type, exc[-1].source, exc[-1].message) == (
        "ValueError", "title", "Model architectures ['X'] are not supported")
    _, exc, _ = errors("The server crashes with a `torch.OutOfMemoryError` while capturing graphs.")
    assert (exc[-1].type, exc[-1].source) == ("torch.OutOfMemoryError", "mention")
    _, exc, _ = errors("I get `ValueError: bad value` from the API", title="[Bug]: thing broke")
    assert (exc[-1].type, exc[-1].message) == ("ValueError", "bad value")


def test_title_fills_in_when_the_body_shows_only_a_wrapper():
    body = """Traceback (most recent call last):
  File "/usr/lib/python3.12/subprocess.py", line 502, in check_returncode
    raise CalledProcessError(self.returncode, self.args)
subprocess.CalledProcessError: Command '['python', '-m', 'vllm.model_executor.models.registry']' returned non-zero \
exit status 1.
"""
    title = "[Bug]: ValueError: Model architectures ['Gemma2ForCausalLM'] failed to be inspected"
    _, exc, _ = errors(body, title=title)
    assert exc[-1].type == "ValueError" and exc[0].short_type == "CalledProcessError"


def test_exception_message_on_the_following_lines():
    body = "================\nRuntimeError: \n        An attempt has been made to start a new process before the\n" \
           "        current process has finished its bootstrapping phase.\n"
    _, exc, _ = errors(body)
    assert exc[-1].first_line == "An attempt has been made to start a new process before the"


def test_prose_and_code_are_not_exceptions():
    text = """Note: this is fine
Error: something in another tool
    except KeyError:
        raise ValueError(
Warning: low disk
if x: return
"""
    tracebacks, exceptions, _ = errors(text)
    assert tracebacks == () and exceptions == ()


def test_unterminated_traceback_is_dropped_but_does_not_hide_later_lines():
    text = "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n" + "noise\n" * 30 + \
           "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    tracebacks, exceptions, error_lines = errors(text)
    assert tracebacks == ()
    assert [(e.type, e.source) for e in exceptions] == [("ImportError", "line")]


def test_undefined_symbol_import_error_line():
    _, exc, _ = errors("ImportError: /opt/venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: "
                       "_ZN3c104cuda9SetDeviceEi")
    assert exc[-1].type == "ImportError" and "undefined symbol" in exc[-1].message


def test_curly_quoted_frames_and_lost_indentation():
    text = """(EngineCore_DP0 pid=59) ERROR 10-15 08:32:29 [core.py:708] Traceback (most recent call last):
(EngineCore_DP0 pid=59) ERROR 10-15 08:32:29 [core.py:708] File “/x/vllm/v1/engine/core.py”, line 699, in run_engine
(EngineCore_DP0 pid=59) ERROR 10-15 08:32:29 [core.py:708] engine_core = EngineCoreProc(*args, **kwargs)
(EngineCore_DP0 pid=59) ERROR 10-15 08:32:29 [core.py:708] ValueError: No available memory for the cache blocks."""
    tracebacks, exceptions, _ = errors(text)
    assert tracebacks[0].final.frames[0].function == "run_engine"
    assert tracebacks[0].final.frames[0].is_vllm
    assert exceptions[-1].first_line == "No available memory for the cache blocks."


def test_ipython_traceback():
    text = """---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[3], line 4
----> 4 llm = LLM(model="Qwen/Qwen2.5-1.5B-Instruct")

File /usr/local/lib/python3.11/dist-packages/vllm/entrypoints/llm.py:243, in LLM.__init__(self, model)
    241 self.llm_engine = LLMEngine.from_engine_args(engine_args)

File /usr/local/lib/python3.11/dist-packages/vllm/v1/engine/core_client.py:480, in MPClient.__init__(self)
    479 if not sync_input_socket.poll(timeout=600_000):
--> 480     raise RuntimeError("Engine core initialization failed. See root cause above.")

RuntimeError: Engine core initialization failed. See root cause above."""
    tracebacks, exceptions, _ = errors(text)
    assert [f.function for f in tracebacks[0].final.frames] == ["LLM.__init__", "MPClient.__init__"]
    assert exceptions[-1].type == "RuntimeError"


def test_exception_group_traceback_from_the_api_server():
    text = """[2025-08-07 10:13:12] ERROR:    Exception in ASGI application
  + Exception Group Traceback (most recent call last):
  |   File "/usr/local/lib/python3.12/dist-packages/starlette/_utils.py", line 77, in collapse_excgroups
  |     yield
  |   File "/usr/local/lib/python3.12/dist-packages/anyio/_backends/_asyncio.py", line 772, in __aexit__
  |     raise BaseExceptionGroup(
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/serving_chat.py", line 1001, in gen
    |     for res in parser.process(token):
    | openai_harmony.HarmonyError: Unexpected token 4710 while expecting start token 200006
    +------------------------------------
"""
    tracebacks, exceptions, _ = errors(text)
    assert [t.final.type for t in tracebacks] == ["ExceptionGroup", "openai_harmony.HarmonyError"]
    assert exceptions[-1].type == "openai_harmony.HarmonyError"
    assert exceptions[-1].first_line == "Unexpected token 4710 while expecting start token 200006"
    assert tracebacks[1].final.frames[0].is_vllm


def test_client_side_http_error_yields_to_the_server_log():
    text = """Server log:
ERROR 09-14 22:41:07 [serving_chat.py:222] ValueError: This model's maximum context length is 8192 tokens.

Client:
Traceback (most recent call last):
  File "/home/me/client.py", line 12, in <module>
    resp = client.chat.completions.create(model="m", messages=msgs)
openai.InternalServerError: Error code: 500
"""
    _, exceptions, _ = errors(text)
    assert [e.short_type for e in exceptions] == ["InternalServerError", "ValueError"]


def test_deep_recursion_keeps_outer_and_inner_frames():
    text = "Traceback (most recent call last):\n" + "".join(
        f'  File "/x/m.py", line {n}, in f{n}\n' for n in range(2000)) + "RecursionError: maximum recursion depth\n"
    tracebacks, _, _ = errors(text)
    frames = tracebacks[0].final.frames
    assert len(frames) <= 600
    assert frames[0].line == 0 and frames[-1].line == 1999


def test_a_plain_heading_that_starts_with_error_is_not_an_error_line():
    text = ("error output\n\nError log:\nERROR LOG\nerror\n"
            "error: subprocess-exited-with-error\nERROR: Could not build wheels for vllm\n"
            "error[E0425]: cannot find value `x` in this scope\nERROR 10-11 16:03:09 engine.py:157] engine died\n"
            "FAILED tests/test_x.py::test_y - AssertionError\n")
    _, _, error_lines = errors(text)
    assert error_lines == ("error: subprocess-exited-with-error", "ERROR: Could not build wheels for vllm",
                           "error[E0425]: cannot find value `x` in this scope",
                           "engine died",  # the log line, its prefix cleaned off
                           "FAILED tests/test_x.py::test_y - AssertionError")


def test_a_closing_quote_of_the_message_is_kept_and_decoration_around_the_line_is_not():
    text = ("ModuleNotFoundError: No module named 'flash_attn'\n\n**KeyError: 'model'**\n\n"
            "\"RuntimeError: boom\"\n\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
            "    import xformers\nImportError: cannot import name 'ops' from 'xformers'\n")
    _, exceptions, _ = errors(text)
    assert {(e.short_type, e.message) for e in exceptions} == {
        ("ModuleNotFoundError", "No module named 'flash_attn'"), ("KeyError", "'model'"),
        ("RuntimeError", "boom"), ("ImportError", "cannot import name 'ops' from 'xformers'")}
