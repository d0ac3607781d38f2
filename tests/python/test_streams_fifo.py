"""Pipes and FIFOs are read as streams (issue 45): `bwprof trace <(zcat x.csv.gz)` was "empty" and
a FIFO hung trace, load_run, compare and plot (each reader opened the file again, and waited for
a second writer). A FIFO is read once; a read still waiting for its writer stops on Ctrl-C."""
import io
import os
import signal
import threading
import time

import pytest

import bwprof.baseline as bl
import bwprof.traces as traces
from bwprof.results import load_run, save_run
from bwprof.traces import TraceFormatError

from baseline_simulation import make_rows
from traces_common import DATA

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def fifo(path, data, chunks=3):
    """A FIFO at ``path`` fed by a writer thread, in a few pieces."""
    os.mkfifo(path)

    def write():
        with open(path, "wb") as f:
            step = max(1, len(data) // chunks)
            for i in range(0, len(data), step):
                f.write(data[i:i + step])
                f.flush()
                time.sleep(0.01)
    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def csv_bytes(df):
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def test_a_trace_read_from_a_fifo(tmp_path):
    data = (DATA / "rocprofv3_kernel_trace.csv").read_bytes()
    want = traces.read(DATA / "rocprofv3_kernel_trace.csv")
    writer = fifo(tmp_path / "63", data)
    got = traces.read(tmp_path / "63")
    writer.join(5)
    assert got["duration_ns"].tolist() == want["duration_ns"].tolist()


def test_errors_name_the_fifo_not_a_temporary_copy(tmp_path):
    fifo(tmp_path / "in", b"garbage,x\n1,2\n")
    with pytest.raises(TraceFormatError) as e:
        traces.read(tmp_path / "in")
    assert e.value.path == str(tmp_path / "in") and "bwprof-stream" not in str(e.value)


@pytest.mark.parametrize("form", ["csv", "jsonl", "json", "baseline"])
def test_runs_and_baselines_read_from_a_fifo(tmp_path, form):
    df = make_rows(3)
    run = save_run(df, tmp_path / "runs")
    if form == "baseline":
        data = bl.save(df, tmp_path / "b.json").read_bytes()
    else:
        data = {"csv": csv_bytes(df), "jsonl": (run / "rows.jsonl").read_bytes(),
                "json": (run / "bandwidth_report.json").read_bytes()}[form]
    fifo(tmp_path / "a", data)
    if form != "baseline":
        assert load_run(tmp_path / "a")["kernel"].tolist() == ["kern0", "kern1", "kern2"]
        fifo(tmp_path / "b", data)
        src = tmp_path / "b"
    else:
        src = tmp_path / "a"
    assert bl.compare(src, df)["verdict"].eq("unchanged").all()


@pytest.mark.parametrize("delay_s", [0.0, 0.001, 0.01, 0.3])
@pytest.mark.parametrize("call", ["trace", "load_run", "compare"])
def test_a_read_waiting_for_a_writer_stops_on_one_ctrl_c(tmp_path, call, delay_s):
    path = tmp_path / "nobody_writes"
    os.mkfifo(path)
    fn = {"trace": traces.read, "load_run": load_run, "compare": lambda p: bl.compare(p, make_rows(1))}[call]
    # One Ctrl-C, at a delay that lands it before, at or after the FIFO's blocking open. Should the
    # read miss it, more follow after 10 s, so that a miss fails the test instead of hanging it.
    done = threading.Event()
    main = threading.main_thread().ident

    def ctrl_c():
        if not done.wait(delay_s):
            signal.pthread_kill(main, signal.SIGINT)
        if not done.wait(10):
            while not done.wait(0.5):
                signal.pthread_kill(main, signal.SIGINT)

    t0 = time.monotonic()
    sender = threading.Thread(target=ctrl_c, daemon=True)
    try:
        with pytest.raises(KeyboardInterrupt):
            sender.start()
            fn(path)
        elapsed = time.monotonic() - t0
    finally:
        done.set()
        try:  # a safety-net Ctrl-C sent just before the sender saw `done` lands here
            sender.join()
            time.sleep(0.01)
        except KeyboardInterrupt:
            pass
    assert elapsed < 10, f"one Ctrl-C was missed: the read stopped only after {elapsed:.1f} s"
