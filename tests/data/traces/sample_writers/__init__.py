"""The writers of the trace samples that no real tool produced on this machine, one module per
format: each follows the tool's documented schema (its docstring names the source), the values
are invented. ``make_sqlite_samples.py`` (beside this folder) runs them all into
tests/data/traces/; the tests and benchmarks/trace_read_speed.py import the writers they need.
"""


def fast_writes(con):
    """No fsync per statement: these files are written once, by a script."""
    con.execute("PRAGMA synchronous = OFF")
    con.execute("PRAGMA journal_mode = MEMORY")
