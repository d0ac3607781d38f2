"""Run folders (issue #12): folders claimed atomically by concurrent runs, rows appended at a cost
that does not grow with the run, every measured row kept when the writer is killed, and files
cut at any byte read back as a prefix of their rows or a clear error."""
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import bwprof
from bwprof import results

# (getattr: the tests also run, and fail, against the code before issue #12)
TruncatedRowWarning = getattr(results, "TruncatedRowWarning", UserWarning)

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["kernel", "dtype", "shape", "time_median_us", "verified", "bottleneck", "label"]


def row(i: int) -> dict:
    # A comma, quotes and a newline in the text: the CSV must quote them, and a cut inside the
    # quoted field must be seen.
    return {"kernel": f"k{i}", "dtype": "fp32", "shape": f"n={i}", "time_median_us": i + 0.25,
            "verified": i % 2 == 0, "bottleneck": f'memory-bound, "{i}"\nsecond line', "label": "x"}


# ---- folders claimed atomically ------------------------------------------------------------------

def test_many_threads_starting_in_the_same_second_get_separate_folders(tmp_path):
    n = 32
    barrier = threading.Barrier(n)
    made, errors = [], []

    def start():
        barrier.wait()
        try:
            w = results.RunWriter(tmp_path, {"id": "cpu"}, run_id="20250101-000000-cpu", columns=COLUMNS)
            w.add(row(len(made)))
            made.append(w.path)
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=start) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(made)) == n == len(list(tmp_path.iterdir()))
    assert all(len(bwprof.load_run(p)) == 1 for p in made)


def _start_run(args):
    base, barrier = args
    barrier.wait()
    w = results.RunWriter(base, {"id": "cpu"}, run_id="same-second", columns=COLUMNS)
    w.add(row(0))
    w.close()
    return str(w.path)


def test_many_processes_and_save_run_calls_at_once_get_separate_folders(tmp_path):
    n = 12
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(n)
        with ctx.Pool(n) as pool:
            paths = pool.map(_start_run, [(str(tmp_path), barrier)] * n)
    assert len(set(paths)) == n
    # save_run from threads: the same claim, through the public function
    df = pd.DataFrame([row(1)])
    out, barrier = [], threading.Barrier(8)

    def save():
        barrier.wait()
        out.append(bwprof.save_run(df, tmp_path / "saved", device={"id": "cpu"}))

    threads = [threading.Thread(target=save) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 8 and all(len(bwprof.load_run(p)) == 1 for p in out)


# ---- the cost of a row -------------------------------------------------------------------------

def _bytes_written() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("wchar:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux's per-process I/O counters")
def test_adding_a_row_writes_the_same_bytes_at_row_10_and_at_row_400(tmp_path, monkeypatch):
    cols = bwprof.columns() + ["label"]
    record = bwprof.measure("stream_copy", device="cpu", n=256, repeats=1, min_time_s=0).to_dict()
    rewrites = []
    monkeypatch.setattr(results, "_atomic_write_text", lambda p, t: rewrites.append(p))
    w = results.RunWriter(tmp_path, {"id": "cpu"}, columns=cols)
    per_row = []
    for i in range(400):
        before = _bytes_written()
        w.add(dict(record, label=f"row {i}"))
        per_row.append(_bytes_written() - before)
    assert rewrites == []  # nothing is rewritten while rows come in
    early, late = sorted(per_row[:20])[10], max(per_row[-50:])
    assert late <= 1.2 * early, (early, late)  # quadratic writing would make row 400 ~400x row 1
    w.close()
    assert len(rewrites) == 1  # the report, once


# ---- killed writers keep their rows -------------------------------------------------------------

_WRITER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from bwprof import results
sys.path.insert(0, sys.argv[2])
from test_run_folders import COLUMNS, row
w = results.RunWriter(sys.argv[3], {"id": "cpu"}, run_id="killed", columns=COLUMNS)
print("ready", flush=True)
mode = sys.argv[4]
for i in range(10**6):
    if mode == "step":
        sys.stdin.readline()   # the parent says when to write the next row
    w.add(row(i))
    print(i + 1, flush=True)
"""


def _writer(tmp_path, mode):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(ROOT / "python"), str(Path(__file__).parent),
                             str(tmp_path), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 40])
def test_a_writer_killed_after_n_rows_leaves_n_rows(tmp_path, n):
    p = _writer(tmp_path, "step")
    assert p.stdout.readline().strip() == "ready"
    for i in range(n):
        p.stdin.write("go\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == str(i + 1)
    p.send_signal(signal.SIGKILL)
    p.wait()
    folder = tmp_path / "killed"
    assert not (folder / "bandwidth_report.json").exists()
    df = bwprof.load_run(folder)
    assert df["kernel"].tolist() == [f"k{i}" for i in range(n)]
    assert df["bottleneck"].tolist() == [row(i)["bottleneck"] for i in range(n)]
    assert len(bwprof.load_run(folder / "results.csv")) == n


@pytest.mark.parametrize("acked", [3, 50, 200])
def test_a_writer_killed_mid_row_leaves_a_prefix_of_its_rows(tmp_path, acked):
    p = _writer(tmp_path, "free")
    assert p.stdout.readline().strip() == "ready"
    for _ in range(acked):  # kill while it keeps writing: anywhere inside a row
        p.stdout.readline()
    p.send_signal(signal.SIGKILL)
    p.wait()
    folder = tmp_path / "killed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncatedRowWarning)
        df = bwprof.load_run(folder)
        csv_df = bwprof.load_run(folder / "results.csv")
    k = len(df)
    assert k >= acked
    assert df["kernel"].tolist() == [f"k{i}" for i in range(k)]
    assert csv_df["kernel"].tolist() == [f"k{i}" for i in range(len(csv_df))] and len(csv_df) >= acked


def test_an_interrupted_writer_writes_the_report_from_what_is_there(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with results.RunWriter(tmp_path, {"id": "cpu"}, run_id="r", columns=COLUMNS) as w:
            w.add(row(0))
            w.add(row(1))
            raise KeyboardInterrupt
    report = json.loads((tmp_path / "r" / "bandwidth_report.json").read_text())
    assert [r["kernel"] for r in report["rows"]] == ["k0", "k1"]


def test_a_stale_or_damaged_report_is_not_trusted(tmp_path):
    w = results.RunWriter(tmp_path, {"id": "cpu"}, run_id="r", columns=COLUMNS)
    w.add(row(0))
    w.close()
    w2 = results.RunWriter(tmp_path, {"id": "cpu"}, run_id="s", columns=COLUMNS)
    (w2.path / "bandwidth_report.json").write_text((w.path / "bandwidth_report.json").read_text())
    for i in range(3):
        w2.add(row(i))
    assert len(bwprof.load_run(w2.path)) == 3  # the copied report holds 1 row, the log 3
    (w2.path / "bandwidth_report.json").write_text('{"rows": [')
    assert len(bwprof.load_run(w2.path)) == 3


# ---- files cut at every byte ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """Two rows of a real measurement (every schema column), saved as a run folder."""
    df = bwprof.run_suite(device="cpu", kernels=["stream_copy"], dtypes=["fp32", "fp16"], quick=True,
                          progress=False)
    df.loc[0, "bottleneck"] = 'cut "here",\nor here'  # quoted text across a line
    folder = bwprof.save_run(df, tmp_path_factory.mktemp("real"))
    return folder, bwprof.load_run(folder)


def _complete_records(data: bytes) -> int:
    """Rows whose line (and quoted newlines) the cut left whole: lines ended by a newline, minus
    the header, minus a record whose quotes are still open."""
    text = data[:data.rfind(b"\n") + 1].decode("utf-8", "replace")
    open_quote, records = False, 0
    for ch in text:
        if ch == '"':
            open_quote = not open_quote
        elif ch == "\n" and not open_quote:
            records += 1
    return max(records - 1, 0)


@pytest.mark.parametrize("name", ["results.csv", "rows.jsonl"])
def test_a_file_cut_at_every_byte_loads_a_prefix_or_fails_clearly(tmp_path, real_run, name):
    folder, full = real_run
    data = (folder / name).read_bytes()
    cut = tmp_path / name
    header_end = data.index(b"\n") + 1
    for offset in range(len(data) + 1):
        cut.write_bytes(data[:offset])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = bwprof.load_run(cut)
            except ValueError as e:
                assert offset < header_end, (offset, e)  # only a file cut inside its first line
                assert name in str(e)
                continue
        assert offset >= header_end
        k = len(got)
        if name == "results.csv":
            assert k == _complete_records(data[:offset]), offset
        else:
            assert k == data[:offset].count(b"\n") - 1, offset
        whole = offset == len(data) or data[offset - 1:offset] == b"\n"
        truncated = [w for w in caught if issubclass(w.category, TruncatedRowWarning)]
        if k < len(full) and not whole:
            assert truncated and name in str(truncated[0].message) and "line" in str(truncated[0].message), offset
        assert got["kernel"].tolist() == full["kernel"].iloc[:k].tolist(), offset
        assert got["time_median_us"].tolist() == full["time_median_us"].iloc[:k].tolist(), offset
        assert got["bottleneck"].tolist() == full["bottleneck"].iloc[:k].tolist(), offset


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({
    "kernel": st.text(min_size=1, max_size=6), "time_median_us": st.floats(0.001, 1e6),
    "bottleneck": st.text(max_size=20), "verified": st.booleans()}), min_size=1, max_size=4),
    data=st.data())
def test_any_rows_cut_anywhere_load_as_a_prefix(tmp_path_factory, rows, data):
    """Rows with any text (commas, quotes, newlines, non-ASCII), written and cut at a drawn byte."""
    folder = tmp_path_factory.mktemp("any")
    with results.RunWriter(folder, {"id": "cpu"}, run_id="r", columns=list(rows[0])) as w:
        for r in rows:
            w.add(r)
    for name in ("results.csv", "rows.jsonl"):
        blob = (w.path / name).read_bytes()
        offset = data.draw(st.integers(0, len(blob)), label=name)
        cut = folder / f"cut_{name}"
        cut.write_bytes(blob[:offset])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedRowWarning)
            try:
                got = bwprof.load_run(cut)
            except ValueError as e:
                assert offset <= blob.index(b"\n"), (name, offset, e)
                continue
        assert 0 <= len(got) <= len(rows)
        assert [float(t) for t in got["time_median_us"]] == [r["time_median_us"] for r in rows[:len(got)]]
        if name == "rows.jsonl":
            assert got["bottleneck"].tolist() == [r["bottleneck"] for r in rows[:len(got)]]


def test_a_malformed_line_in_the_middle_is_an_error_naming_it(tmp_path):
    w = results.RunWriter(tmp_path, {"id": "cpu"}, run_id="r", columns=COLUMNS)
    for i in range(3):
        w.add(row(i))
    text = (w.path / "rows.jsonl").read_text().splitlines(keepends=True)
    (w.path / "rows.jsonl").write_text("".join(text[:2] + ["{not json\n"] + text[3:]))
    with pytest.raises(ValueError, match=r"rows.jsonl: line 3"):
        bwprof.load_run(w.path)
    csv_path = tmp_path / "bad.csv"
    csv_path.write_text("a,b\n1,2\n1,2,3\n4,5\n")
    with pytest.raises(ValueError, match=r"bad.csv: line 3 has 3 fields"):
        bwprof.load_run(csv_path)
