"""Text from outside made valid: lone surrogates and NULs become U+FFFD; everything else is left alone."""

import json

from bot.validtext import REPLACEMENT, may_hold_invalid, valid_text


def test_lone_surrogates_and_nul_are_replaced_in_values_and_keys_and_pairs_are_kept():
    raw = '{"t": "ok \\ud83d\\ude00", "b": ["\\ud83d x", {"\\udc00k": "\\u0000"}], "n": 3}'
    assert may_hold_invalid(raw) and may_hold_invalid(raw.encode())
    data = valid_text(json.loads(raw))
    assert data == {"t": "ok 😀", "b": [f"{REPLACEMENT} x", {f"{REPLACEMENT}k": REPLACEMENT}], "n": 3}
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # encodes now
    assert valid_text("a\ud800b") == f"a{REPLACEMENT}b"
    assert not may_hold_invalid('{"t": "caf\\u00e9 \\\\ 😀"}')


def test_nesting_as_deep_as_the_decoder_allows_does_not_exhaust_the_stack():
    depth = 900
    data = json.loads("[" * depth + '"\\udfff"' + "]" * depth)
    inner = valid_text(data)
    for _ in range(depth - 1):
        inner = inner[0]
    assert inner == [REPLACEMENT]
