"""Templates: formatting directives to holes, and fitting messages (whole, cut short, quoted in free text)."""

import time

from bot.sources.template import (
    Compiled,
    Hole,
    fit_message,
    fit_within,
    format_pieces,
    from_json,
    key_words,
    normalise,
    percent_pieces,
    render,
    to_json,
)

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.",)
MOE = ("moe_backend='", Hole("runner_backend"), "' is not supported for unquantized MoE. Expected one of ",
       Hole("list(mapping.keys())"), ".")
HEADS = ("Total number of attention heads (", Hole("heads"), ") must be divisible by tensor parallel size (",
         Hole("tp"), ").")


def fit(message, template):
    return fit_message(message, Compiled.of(template))


def test_percent_directives():
    assert percent_pieces("%s of %5.2f%% at %(where)s", ["a", "b"]) == [
        "", Hole("a"), " of ", Hole("b"), "", "%", " at ", Hole("where"), ""]
    assert normalise(percent_pieces("%s of %5.2f%% at %(where)s", ["a", "b"])) == (
        Hole("a"), " of ", Hole("b"), "% at ", Hole("where"))
    assert normalise(percent_pieces("%d items", None)) == (Hole("%d"), " items")


def test_format_fields_and_invalid_strings():
    assert normalise(format_pieces("{0.name}[{1}] {x[2]}", ["a", "b"], {"x": "xs"})) == (
        Hole("a.name"), "[", Hole("b"), "] ", Hole("xs[2]"))
    assert format_pieces("{", [], {}) is None


def test_normalise_joins_neighbours_and_json_round_trips():
    t = normalise(["a", "", "b", Hole("x"), Hole("y"), "c"])
    assert t == ("ab", Hole("x y"), "c")
    assert from_json(to_json(MOE)) == MOE
    assert render(MOE) == ("moe_backend='{runner_backend}' is not supported for unquantized MoE. Expected one of "
                           "{list(mapping.keys())}.")


def test_exact_fit_ignores_case_and_whitespace():
    f = fit("Total number of attention heads (40) must be divisible by\n  tensor parallel size (3).", HEADS)
    assert f is not None and f.how == "exact"
    assert f.chars == Compiled.of(HEADS).literal_chars
    assert fit("TOTAL NUMBER OF ATTENTION HEADS (40) MUST BE DIVISIBLE BY TENSOR PARALLEL SIZE (3).",
               HEADS).how == "exact"


def test_values_may_hold_anything_even_the_next_literal():
    f = fit("moe_backend='x' is not supported for unquantized MoE. Expected one of ['a', 'b'].", MOE)
    assert f.how == "exact"
    # the hole's value contains the literal that follows it: the walk tries the later occurrence
    tricky = ("Total number of attention heads () must be divisible by tensor parallel size (2)) must be "
              "divisible by tensor parallel size (4).")
    assert fit(tricky, HEADS).how == "exact"


def test_a_message_cut_short_fits_as_cut():
    f = fit("Pipeline parallelism is not supported for this model. Supported mod", PP)
    assert f.how == "cut" and f.chars == len("pipelineparallelismisnotsupportedforthismodel.supportedmod")
    f = fit("moe_backend='marlin' is not supported for unquantized", MOE)
    assert f.how == "cut"
    f = fit("Total number of attention heads (40) must be divi", HEADS)
    assert f.how == "cut"
    f = fit("Total number of attention heads (4", HEADS)  # inside the hole
    assert f.how == "cut"


def test_other_messages_do_not_fit():
    assert fit("Pipeline parallelism is supported for this model.", PP) is None
    assert fit("The model's max seq len (4096) is larger than the maximum number of tokens", HEADS) is None
    # the whole template, then more text: not this message
    assert fit(PP[0] + " Also something else entirely.", PP) is None
    assert fit("", PP) is None


def test_free_text_finds_a_quote_anywhere():
    title = "[Bug]: Qwen3 MoE fails: ValueError: moe_backend='marlin' is not supported for unquantized MoE"
    f = fit_within(title, Compiled.of(MOE))
    assert f is not None and f.how == "cut" and f.start > 0
    f = fit_within("pp fails: Pipeline parallelism is not supported for this model (Qwen3.5 MTP)", Compiled.of(PP))
    assert f is not None and f.how == "partial"
    assert fit_within("Pipeline parallel on two nodes", Compiled.of(PP)).chars < 20


def test_matching_untrusted_text_is_bounded():
    template = tuple(x for i in range(30) for x in (Hole(f"v{i}"), "ab"))
    text = "ab" * 5000
    start = time.perf_counter()
    fit_message(text + "zz", Compiled.of(template))
    fit_within(text, Compiled.of(template))
    assert time.perf_counter() - start < 0.5


def test_key_words_leave_out_words_that_touch_a_hole():
    template = ("model", Hole("name"), "s is not supported by backend_", Hole("b"), " (", Hole("c"), "x) now")
    assert key_words(template) == ["not", "supported", "now"]
    assert key_words(PP)[:4] == ["pipeline", "parallelism", "not", "supported"]


def test_templates_that_are_mostly_holes_are_not_specific():
    assert not Compiled.of((Hole("a"), ": ", Hole("b"))).specific()
    assert not Compiled.of(("Invalid ", Hole("x"))).specific()
    assert not Compiled.of((Hole("a"), " x ", Hole("b"), " y ", Hole("c"), " is bad ", Hole("d"))).specific()
    assert Compiled.of(MOE).specific() and Compiled.of(PP).specific()
    assert Compiled.of((Hole("name"), " is not supported yet")).specific()
