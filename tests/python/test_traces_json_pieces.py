"""traceEvents parsed a piece at a time (source._json_array_pieces) gives what one parse of the
whole document gives, in any layout a writer may choose, or sends the document to the whole
parse: objects cut anywhere (pieces of a few bytes), names holding "}, {", "]" and escaped
quotes, arrays of objects inside events, keys after the array that hold arrays, a key given
twice, the key spelled with an escape, NaN, integers beyond 64 bits, and documents damaged
anywhere (the same error as before, from the whole parse). The PyTorch reader built on it
reads every such trace as the plain reader did.
"""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bwprof.traces import source
from bwprof.traces.formats import pytorch

from pytorch_trace_oracle import read_pytorch_trace_plain
from test_traces_pytorch_fast import assert_same, trace_doc

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PIECES = st.sampled_from([1, 2, 5, 17, 64, 1 << 16])


# --- layouts ------------------------------------------------------------------------------------

def kineto_text(doc):
    """The layout of Kineto's writer: each event over several lines, its args indented."""
    def event(ev):
        if not isinstance(ev, dict):
            return "  " + json.dumps(ev)
        fields = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in ev.items() if k != "args"]
        text = "  {\n    " + ", ".join(fields)
        if "args" in ev:
            args = ev["args"]
            inner = (",\n      ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args.items())
                     if isinstance(args, dict) else None)
            text += (",\n" if fields else "\n") + "    \"args\": " + (
                "{\n      " + inner + "\n    }" if inner is not None else json.dumps(args))
        return text + "\n  }"
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    parts = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    events = ",".join("\n" + event(ev) for ev in doc["traceEvents"])
    parts.insert(len(parts) // 2, f'  "traceEvents": [{events}\n  ]')
    return "{\n" + ",\n".join(parts) + "\n}"


LAYOUTS = {
    "spaced": lambda d: json.dumps(d),
    "compact": lambda d: json.dumps(d, separators=(",", ":")),
    "indent": lambda d: json.dumps(d, indent=1),
    "tabs": lambda d: json.dumps(d, indent="\t"),
    "crlf": lambda d: json.dumps(d, indent=2).replace("\n", "\r\n"),
    "odd": lambda d: json.dumps(d, separators=(" ,\n\t ", " :  ")),
    "kineto": lambda d: kineto_text(d) if isinstance(d, dict) and "traceEvents" in d else json.dumps(d),
}


def twists(text, how):
    """Text-level variants json.dumps cannot write: the key twice, the key spelled with an
    escape (both parsers read it as the same key)."""
    if not text.startswith("{") or '"traceEvents"' not in text:
        return text
    if how == "twice before":
        return '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "first", "ts": 1, "dur": 2}], ' + text[1:]
    if how == "twice after":
        return text.rstrip()[:-1].rstrip() + ', "traceEvents": [{"cat": "kernel", "ts": 5, "dur": 1}]}'
    if how == "escaped key":
        return text.replace('"traceEvents"', '"trace\\u0045vents"', 1)
    return text


EXTRAS = st.dictionaries(
    st.sampled_from(["deviceProperties", "distributedInfo", "traceName", "z", "displayTimeUnit"]),
    st.sampled_from([
        [{"id": 0, "name": "NVIDIA H100", "numSms": 132}],
        {"backend": "nccl", "pg_config": [{"pg_name": "0", "ranks": [0, 1]}, {"pg_name": "1"}]},
        'a name with "}, {" and ] and "traceEvents": [ inside',
        [[1, 2], [3]], "ms", None]), max_size=3)


@st.composite
def trace_text(draw):
    doc = draw(trace_doc())
    if isinstance(doc, dict):
        extras = draw(EXTRAS)
        before = {k: v for k, v in extras.items() if k < "t"}
        doc = {**before, **doc, **{k: v for k, v in extras.items() if k >= "t"}}
    text = LAYOUTS[draw(st.sampled_from(sorted(LAYOUTS)))](doc)
    return twists(text, draw(st.sampled_from(["none"] * 5 + ["twice before", "twice after", "escaped key"])))


# --- the reader -------------------------------------------------------------------------------

@SETTINGS
@given(text=trace_text(), piece=PIECES)
def test_any_layout_reads_as_the_plain_reader_read_it(tmp_path, text, piece):
    path = tmp_path / "trace.json"
    path.write_text(text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(source, "_PIECE_BYTES", piece)
        assert_same(path)


@SETTINGS
@given(text=trace_text(), piece=PIECES, seed=st.integers(0, 2 ** 32 - 1))
def test_a_damaged_trace_reads_or_fails_as_the_plain_reader(tmp_path, text, piece, seed):
    rng = random.Random(seed)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        how = rng.choice(["delete", "insert", "replace", "cut"])
        char = rng.choice('{}[],:"\\ \n0e-.tnx')
        if how == "delete":
            text = text[:at] + text[at + 1:]
        elif how == "insert":
            text = text[:at] + char + text[at:]
        elif how == "replace":
            text = text[:at] + char + text[at + 1:]
        else:
            text = text[:at]
    path = tmp_path / "trace.json"
    path.write_text(text or " ")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(source, "_PIECE_BYTES", piece)
        assert_same(path)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("piece", [1, 300, 1 << 16])
def test_real_layouts_go_by_pieces(tmp_path, monkeypatch, layout, piece):
    # Not the whole parse: the reader's fallback is made to fail, and the rows still come.
    events = []
    for i in range(200):
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": i, "dur": 1.5,
                       "args": {"Input Dims": [[2, 3], [3, 4]], "Ev Idx": i}})
        events.append({"ph": "X", "cat": "kernel", "name": f"void k<{{lambda()#{i}}}, \"}}, {{\">()",
                       "pid": 0, "tid": 7, "ts": i + 0.5, "dur": 0.25,
                       "args": {"device": 0, "stream": 7, "grid": [i, 1, 1], "block": [64, 1, 1]}})
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": events,
           "distributedInfo": {"pg_config": [{"ranks": [0]}]}, "baseTimeNanoseconds": 10 ** 18}
    path = tmp_path / "trace.json"
    path.write_text(LAYOUTS[layout](doc))
    monkeypatch.setattr(source, "_PIECE_BYTES", piece)
    plain = read_pytorch_trace_plain(path)
    monkeypatch.setattr(pytorch, "_read_json", lambda *a, **k: pytest.fail("parsed whole"))
    df = pytorch.read_pytorch_trace(path)
    assert len(df) == 200 and df["grid_x"].tolist() == list(range(200))
    assert df["start_ns"].iloc[3] == 10 ** 18 + 3500
    assert df.equals(plain)


# --- the splitter itself, on any JSON -------------------------------------------------------

# Text without lone surrogates, which orjson refuses (such documents are parsed whole).
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4) | st.text(
    alphabet=st.sampled_from('ab}{][,: "\\\n\t\u00e9\u212a'), max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12)
_element = st.dictionaries(_text, _json, max_size=4) | _json


def test_the_pieces_are_the_array():
    counts = {"pieces": 0, "whole": 0}

    @SETTINGS
    @given(elements=st.lists(_element, max_size=30), layout=st.sampled_from(sorted(LAYOUTS)),
           piece=PIECES, tail=st.sampled_from([{}, {"after": [{"x": [1]}, {"y": "]"}]}]))
    def check(elements, layout, piece, tail):
        doc = {"before": {"k": "}, {"}, "traceEvents": elements, **tail}
        data = LAYOUTS[layout](doc).encode()
        whole = json.loads(data)
        seen = []

        def take(items, first):
            assert first == len(seen)
            seen.extend(items)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(source, "_PIECE_BYTES", piece)
            rest = source._json_array_pieces(data, "traceEvents", take)
        big = len(LAYOUTS[layout](elements)) > 0.8 * len(data)
        if rest is None:                # the caller parses the whole document
            counts["whole"] += big
            return
        counts["pieces"] += big
        assert seen == whole.pop("traceEvents") and rest == whole

    check()
    # Where the array is most of the document, most documents split (the others: arrays of
    # many objects inside its elements exhausted the joins).
    assert counts["pieces"] > 2 * counts["whole"], counts


_K = '{"ph": "X", "cat": "kernel", "name": "k%d", "ts": %d, "dur": 1}'


@pytest.mark.parametrize("text", [
    # Not JSON, though every piece and the document without the array may parse.
    '{"traceEvents": [%s, %s], [%s]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"traceEvents": [%s, %s]], "x": [1]}' % (_K % (1, 1), _K % (2, 2)),
    '{"traceEvents": [%s, %s, "x": [%s]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"traceEvents": [%s, %s}, {"x": [%s]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"traceEvents": [%s, %s], "traceEvents": [%s], }' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    # JSON: the last of two keys, an array after the events, nothing after them.
    '{"traceEvents": [%s, %s], "traceEvents": [%s]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"traceEvents": [%s, %s], "after": [%s, {"y": "]"}]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"a": [%s], "traceEvents": [%s, %s]}' % (_K % (1, 1), _K % (2, 2), _K % (3, 3)),
    '{"traceEvents": []}', '{"traceEvents": [ ]}', '{"traceEvents": [%s]}' % (_K % (1, 1)),
])
@pytest.mark.parametrize("piece", [1, 40, 1 << 16])
def test_documents_built_to_mislead_the_split(tmp_path, monkeypatch, text, piece):
    path = tmp_path / "trace.json"
    path.write_text(text)
    monkeypatch.setattr(source, "_PIECE_BYTES", piece)
    assert_same(path)
