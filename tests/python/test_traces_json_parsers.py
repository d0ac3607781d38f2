"""The JSON traces read the same with orjson (the fast parser, used where installed) as with the
standard library: the same document, the same errors (orjson's refusals fall back to json). One
known difference: an integer beyond 64 bits comes back from orjson as the nearest float; the
readers report such a timestamp as invalid either way (tested at the end)."""
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from bwprof.traces import source
from bwprof.traces.errors import TraceFormatError

orjson = pytest.importorskip("orjson")
# The fast parser the readers use: orjson where it refuses nesting past 1024 (source._fast_json);
# an orjson without that limit is not used (deep input would crash it), and these tests have nothing
# to compare.
FAST = source._fast_json()
if FAST is None:
    pytest.skip(f"orjson {orjson.__version__} has no depth limit: the readers do not use it",
                allow_module_level=True)

_leaf = (st.none() | st.booleans() | st.integers(min_value=-2**63, max_value=2**64 - 1)
         | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
_doc = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=5)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=5), max_leaves=30)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _read_both(tmp_path, data, monkeypatch):
    p = tmp_path / "t.json"
    p.write_bytes(data)
    out = []
    for fast in (FAST, None):
        monkeypatch.setattr(source, "_fast_json", lambda fast=fast: fast)
        try:
            out.append(("doc", source._read_json(p)))
        except TraceFormatError as e:
            out.append(("error", str(e)))
    return out


@settings(max_examples=150, deadline=None)
@given(doc=_doc)
def test_any_document_reads_the_same_with_and_without_orjson(tmp_path_factory, doc):
    tmp = tmp_path_factory.mktemp("j")
    mp = pytest.MonkeyPatch()
    try:
        (k1, a), (k2, b) = _read_both(tmp, json.dumps(doc).encode(), mp)
    finally:
        mp.undo()
    assert k1 == k2 == "doc" and _same(a, b), (doc, a, b)


@pytest.mark.parametrize("text", [
    b'{"a": NaN, "b": Infinity, "c": -Infinity}', b'{"x": 18446744073709551615, "y": -9223372036854775808}',
    b'{"a": 1e999}', b'["\\ud800"]', b'{"a": 1, "a": 2}', b"[" * 3000 + b"]" * 3000,
    b'{"traceEvents": [1, 2,]}', b'{"a": 1} trailing', b'{"a": "cut', b"[" * 3000,
])
def test_what_orjson_refuses_gives_the_standard_librarys_answer(tmp_path, monkeypatch, text):
    (k1, a), (k2, b) = _read_both(tmp_path, text, monkeypatch)
    assert k1 == k2
    assert _same(a, b) if k1 == "doc" else a == b


def test_a_timestamp_beyond_64_bits_is_invalid_with_either_parser(tmp_path, monkeypatch):
    from bwprof import traces
    huge = "123456789012345678901234567890"
    doc = ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 2, "args": {}},'
           '{"ph": "X", "cat": "kernel", "name": "k2", "ts": %s, "dur": 2, "args": {}}]}' % huge)
    p = tmp_path / "trace.json"
    p.write_text(doc)
    messages = []
    for fast in (FAST, None):
        monkeypatch.setattr(source, "_fast_json", lambda fast=fast: fast)
        with pytest.raises(TraceFormatError) as e:
            traces.read(p)
        messages.append(str(e.value))
    assert all("traceEvents[1]" in m for m in messages), messages


@pytest.mark.parametrize("value", [-2**63 - 1, -2**63 - 1024, -2**63 - 1025, -2**64, 2**63, 2**64])
@pytest.mark.parametrize("field", ["grid", "correlation"])
def test_an_integer_just_beyond_64_bits_is_invalid_with_either_parser(tmp_path, monkeypatch, value, field):
    # orjson reads -2**63 - 1 ... -2**63 - 1024 as the float -2**63, which fits in 64 bits.
    from bwprof import traces
    from bwprof.traces.errors import InvalidRowsError
    args = {"device": 0, "stream": 7, "correlation": 1, "grid": [4, 1, 1], "block": [128, 1, 1]}
    bad = dict(args, **{field: [value, 1, 1] if field == "grid" else value})
    doc = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 2, "args": args},
                           {"ph": "X", "cat": "kernel", "name": "k2", "ts": 20, "dur": 2, "args": bad}]}
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(doc))
    assert source._read_json(p) == doc          # the values json gives, orjson or not
    for fast in (FAST, None):
        monkeypatch.setattr(source, "_fast_json", lambda fast=fast: fast)
        with pytest.raises(InvalidRowsError, match=r"1 of 2 rows .*traceEvents\[1\]: "):
            traces.read(p)

