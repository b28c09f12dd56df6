"""The extractor reads raise sites out of small modules written here: kinds, types, templates, guards, names."""

import textwrap

import pytest

from bot.sources.extract import ExtractError, extract
from bot.sources.template import Hole, render


def sites(source: str, path: str = "vllm/x.py"):
    return extract(path, textwrap.dedent(source))


def one(source: str):
    found = sites(source)
    assert len(found) == 1, found
    return found[0]


def test_raise_in_a_method_records_file_lines_qualname_type_message_and_if_guard():
    site = one("""
        class ModelConfig:
            def verify(self, parallel_config):
                size = parallel_config.pipeline_parallel_size
                if size > 1 and not self.supports_pp:
                    raise NotImplementedError(
                        "Pipeline parallelism is not supported for this model. "
                        "Supported models implement the `SupportsPP` interface."
                    )
        """)
    assert (site.file, site.line, site.end_line) == ("vllm/x.py", 6, 9)
    assert site.qualname == "ModelConfig.verify" and site.function == "verify"
    assert (site.kind, site.type) == ("raise", "NotImplementedError")
    assert site.template == ("Pipeline parallelism is not supported for this model. Supported models implement "
                             "the `SupportsPP` interface.",)
    assert (site.guard_kind, site.guard) == ("if", "size > 1 and (not self.supports_pp)")


def test_fstring_holes_are_the_expressions():
    site = one("""
        def check(heads, tp):
            if heads % tp != 0:
                raise ValueError(f"Total number of attention heads ({heads}) must be divisible by "
                                 f"tensor parallel size ({tp!r}).")
        """)
    assert site.template == ("Total number of attention heads (", Hole("heads"),
                             ") must be divisible by tensor parallel size (", Hole("tp"), ").")
    assert render(site.template) == ("Total number of attention heads ({heads}) must be divisible by tensor "
                                     "parallel size ({tp}).")
    assert site.qualname == "check"


def test_percent_format_with_tuple_single_value_names_and_escaped_percent():
    found = sites("""
        def f(a, b, d):
            raise ValueError("got %s and %d (100%%)" % (a, b))
            raise ValueError("only %r" % a)
            raise ValueError("%(name)s is %(what)s" % d)
        """)
    assert [s.template for s in found] == [
        ("got ", Hole("a"), " and ", Hole("b"), " (100%)"),
        ("only ", Hole("a")),
        (Hole("name"), " is ", Hole("what")),
    ]


def test_str_format_positional_numbered_and_keyword_fields():
    found = sites("""
        def f(x, y):
            raise TypeError("{} then {}".format(x, y))
            raise TypeError("{1} before {0}".format(x, y))
            raise TypeError("{name!r:>10} is bad; {{literal}}".format(name=x.name))
            raise TypeError("{unclosed".format(x))
        """)
    assert [s.template for s in found] == [
        (Hole("x"), " then ", Hole("y")),
        (Hole("y"), " before ", Hole("x")),
        (Hole("x.name"), " is bad; {literal}"),
        (Hole("'{unclosed'.format(x)"),),
    ]


def test_concatenation_and_implicit_joins():
    site = one("""
        def f(kind):
            raise RuntimeError("Unsupported " + kind + " backend. " "Use another one: " + str(kind))
        """)
    assert site.template == ("Unsupported ", Hole("kind"), " backend. Use another one: ", Hole("str(kind)"))


def test_local_variable_last_assignment_before_the_site_and_augmented_appends():
    found = sites("""
        def f(model, arch):
            msg = "ignored: reassigned below"
            msg = f"Model {model} is not supported."
            if arch:
                msg += " Architecture: " + arch
            raise ValueError(msg)
            msg = "after the site: never used"

        def g(value):
            raise ValueError(value)

        def h(x):
            text = compute(x)
            raise ValueError(text)
        """)
    assert found[0].template == ("Model ", Hole("model"), " is not supported. Architecture: ", Hole("arch"))
    assert found[1].template == (Hole("value"),)  # a parameter: a hole
    assert found[2].template == (Hole("text"),)   # assigned from a call: a hole


def test_module_level_constant_message():
    site = one("""
        _MSG = "CUDA is not available."

        def need_cuda():
            raise RuntimeError(_MSG)
        """)
    assert site.template == (Hole("_MSG"),)  # not this function's variable: a hole, never another scope's value
    top = one("""
        _MSG = "CUDA is not available."
        if not cuda:
            raise RuntimeError(_MSG)
        """)
    assert top.template == ("CUDA is not available.",) and top.qualname == "<module>"


def test_assert_with_message_only():
    found = sites("""
        def f(x):
            assert x > 0
            assert x < 10, f"x={x} is too large"
        """)
    assert len(found) == 1
    site = found[0]
    assert (site.kind, site.type, site.line) == ("assert", "AssertionError", 4)
    assert site.template == ("x=", Hole("x"), " is too large")
    assert (site.guard_kind, site.guard) == ("assert", "x < 10")


def test_logger_calls_at_warning_and_above():
    found = sites("""
        import logging
        logger = init_logger(__name__)

        class Worker:
            def run(self, n, err):
                logger.info("Started %d workers", n)
                logger.debug("details")
                logger.warning("Only %d of %d GPUs are visible", n, self.total)
                logger.warning_once("Falling back to eager mode")
                logger.error("Error in worker: %s", err)
                self.logger.exception("Worker %s crashed", self.name)
                logging.critical(f"fatal: {err}")
                logger.warning("100% literal when there are no arguments")
                self.errors.error("not a logger")
                logger.warning(msg)
        """)
    got = [(s.type, render(s.template)) for s in found]
    assert got == [
        ("warning", "Only {n} of {self.total} GPUs are visible"),
        ("warning", "Falling back to eager mode"),
        ("error", "Error in worker: {err}"),
        ("exception", "Worker {self.name} crashed"),
        ("critical", "fatal: {err}"),
        ("warning", "100% literal when there are no arguments"),
        ("warning", "{msg}"),
    ]
    assert {s.kind for s in found} == {"log"}
    assert all(s.qualname == "Worker.run" for s in found)


def test_guards_else_elif_except_early_exit_and_innermost():
    found = sites("""
        def f(x, y):
            if x == 1:
                return 1
            raise_me = None
            try:
                run()
            except (OSError, ValueError) as e:
                raise RuntimeError("run failed") from e
            if x == 2:
                pass
            elif x == 3:
                raise ValueError("three")
            else:
                raise ValueError("neither two nor three")
            for i in range(3):
                if y:
                    continue
                logger.warning("no y in loop")
            raise KeyError("after the loop")
        """)
    got = [(render(s.template), s.guard_kind, s.guard) for s in found]
    assert got == [
        ("run failed", "except", "(OSError, ValueError)"),
        ("three", "if", "x == 3"),
        ("neither two nor three", "else", "x == 3"),
        ("no y in loop", "early-exit", "y"),
        ("after the loop", "early-exit", "x == 1"),
    ]


def test_a_nested_function_does_not_inherit_the_outer_guard():
    found = sites("""
        def outer(flag):
            if flag:
                def inner():
                    raise ValueError("from inner")
                class Local:
                    def m(self):
                        raise ValueError("from method")
                return inner
        """)
    assert [(s.qualname, s.guard_kind) for s in found] == [
        ("outer.<locals>.inner", None), ("outer.<locals>.Local.m", None)]


def test_raise_forms():
    found = sites("""
        def f(e):
            try:
                g()
            except Exception as err:
                raise
            raise err
            raise StopIteration
            raise errors.EngineDeadError("engine died") from e
            raise self._error("built by a factory")
            raise HTTPException(status_code=400, detail="Invalid request body")
            raise OSError(2, "No such file")
        """)
    got = [(s.type, render(s.template), s.line) for s in found]
    assert got == [
        ("StopIteration", "", 8),
        ("EngineDeadError", "engine died", 9),
        (None, "built by a factory", 10),
        ("HTTPException", "Invalid request body", 11),
        ("OSError", "No such file", 12),
    ]


def test_match_case_guard():
    site = one("""
        def f(kind):
            match kind:
                case "a":
                    pass
                case _:
                    raise ValueError(f"unknown kind {kind}")
        """)
    assert (site.guard_kind, site.guard) == ("case", "_")


def test_async_functions_and_with_blocks():
    site = one("""
        class Server:
            async def handle(self, request):
                async with self.lock:
                    if request.model not in self.models:
                        raise ModelNotFound(f"The model `{request.model}` does not exist.")
        """)
    assert site.qualname == "Server.handle"
    assert site.template == ("The model `", Hole("request.model"), "` does not exist.")
    assert site.guard == "request.model not in self.models"


def test_a_module_that_does_not_parse_is_an_error_naming_it():
    with pytest.raises(ExtractError, match="vllm/broken.py"):
        extract("vllm/broken.py", "def f(:\n    pass\n")


def test_long_guards_are_cut():
    cond = " and ".join(f"flag_{i}" for i in range(100))
    site = one(f"if {cond}:\n    raise ValueError('many flags')\n")
    assert len(site.guard) == 300 and site.guard.endswith("…")
