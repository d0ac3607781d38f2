"""Rows whose duration cannot be right (issue #12) in the databases: rocpd, Nsight Systems
SQLite exports and rocmProfileData .rpd, the samples copied and their timestamps rewritten
per row (negative durations, real numbers, infinities, negative times); the durations that
remain are checked against the values written.
"""

import shutil
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bwprof.traces as traces
from bwprof.traces.errors import InvalidRowsError

from invalid_rows import SETTINGS, expect
from traces_common import DATA


# --- databases ----------------------------------------------------------------------------

def db_kinds(n_max):
    # The schemas declare the timestamps NOT NULL: no "empty" rows in a database.
    return st.lists(st.sampled_from(("ok", "negative", "real", "inf", "negtime")), min_size=1,
                    max_size=n_max)


def corrupt(db, table, key, kinds, start_col="start", end_col="end"):
    """Rewrite the timestamps of the rows of ``table`` (in ``key`` order) per ``kinds``;
    returns the durations of the valid ones and the keys of all."""
    con = sqlite3.connect(db)
    try:
        keys = [r[0] for r in con.execute(f'SELECT {key} FROM "{table}" ORDER BY {key}')]
    finally:
        con.close()
    return corrupt_rows(db, table, keys, kinds, key, start_col, end_col)


def corrupt_rows(db, table, keys, kinds, key="id", start_col="start", end_col="end"):
    """corrupt() for the rows of ``table`` whose ``key`` is in ``keys`` (in that order)."""
    con = sqlite3.connect(db)
    try:
        valid = []
        for i, (k, kind) in enumerate(zip(keys, kinds)):
            start, end = 10 ** 15 + 10_000 * i, 10 ** 15 + 10_000 * i + 50 + i
            if kind == "negative":
                end = start - 3
            elif kind == "real":
                start = 1.5e300
            elif kind == "inf":
                end = float("inf")
            elif kind == "negtime":
                start = -5
            else:
                valid.append(float(end - start))
            con.execute(f'UPDATE "{table}" SET "{start_col}" = ?, "{end_col}" = ? WHERE {key} = ?',
                        (start, end, k))
        con.commit()
    finally:
        con.close()
    return valid, keys


@SETTINGS
@given(kinds=db_kinds(6))
def test_rocpd_invalid_dispatches(tmp_path, kinds):
    db = tmp_path / "results.db"
    shutil.copy(DATA / "rocpd_two_processes.db", db)
    con = sqlite3.connect(db)
    table = next(n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name LIKE 'rocpd_kernel_dispatch_%'"))
    n = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    con.close()
    kinds = (kinds + ["ok"] * n)[:n]
    valid, keys = corrupt(db, table, "id", kinds)
    read = lambda p, **kw: traces.read(p, memory_copies=False, **kw)   # noqa: E731
    expect(db, kinds, read, valid, lambda i: f"kernels id {keys[i]}")


@SETTINGS
@given(kinds=db_kinds(4))
def test_nsys_invalid_kernels(tmp_path, kinds):
    db = tmp_path / "report.sqlite"
    shutil.copy(DATA / "nsys_export.sqlite", db)
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    con.close()
    kinds = (kinds + ["ok"] * n)[:n]
    valid, keys = corrupt(db, "CUPTI_ACTIVITY_KIND_KERNEL", "rowid", kinds)
    read = lambda p, **kw: traces.read(p, memory_ops=False, **kw)     # noqa: E731
    expect(db, kinds, read, valid, lambda i: f"CUPTI_ACTIVITY_KIND_KERNEL rowid {keys[i]}")


def rpd_row_ops(db):
    """Ids of the rocpd_op rows that the reader turns into trace rows (markers are not)."""
    from bwprof.traces.formats.rpd import _op_class

    con = sqlite3.connect(db)
    try:
        strings = dict(con.execute("SELECT id, string FROM rocpd_string"))
        ops = con.execute("SELECT id, opType_id, description_id FROM rocpd_op ORDER BY id").fetchall()
    finally:
        con.close()
    return [i for i, t, d in ops if _op_class(strings.get(t), strings.get(d))[0] is not None]


@SETTINGS
@given(kinds=db_kinds(6))
def test_rpd_invalid_ops(tmp_path, kinds):
    db = tmp_path / "trace.rpd"
    shutil.copy(DATA / "rocmprofiledata.rpd", db)
    rows = rpd_row_ops(db)
    assert len(rows) == len(traces.read(db))
    kinds = (kinds + ["ok"] * len(rows))[:len(rows)]
    # Only the ops that are rows are rewritten, in order.
    valid, keys = corrupt_rows(db, "rocpd_op", rows, kinds)
    expect(db, kinds, traces.read, valid, lambda i: f"rocpd_op id {keys[i]}")


def test_database_real_number_timestamp_message(tmp_path):
    db = tmp_path / "report.sqlite"
    shutil.copy(DATA / "nsys_export.sqlite", db)
    corrupt(db, "CUPTI_ACTIVITY_KIND_KERNEL", "rowid", ["real"])
    with pytest.raises(InvalidRowsError, match=r"rowid 1: start_ns holds a real number, not integer "
                                               r"nanoseconds"):
        traces.read(db)
