"""What the trace tests share: the folder of the samples (tests/data/traces, README.md there
says which are real and which written from a documented schema), the paths of the samples
written by tests/data/traces/sample_writers (which conftest.py makes importable), and the checks
of a frame in the kernel-trace schema."""

from pathlib import Path

import bwprof.traces as traces

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"

ROCPD = DATA / "rocpd_two_processes.db"
RPD = DATA / "rocmprofiledata.rpd"
NSYS = DATA / "nsys_export.sqlite"
V3JSON = DATA / "rocprofv3_results.json"


def assert_schema(df):
    assert list(df.columns[:len(traces.SCHEMA_COLUMNS)]) == traces.SCHEMA_COLUMNS


def kernels(df):
    return df[df["event_category"] == "kernel"].reset_index(drop=True)
