"""What the tests of rows with an impossible duration share (test_traces_invalid*.py): the
kinds of bad row a writer plants, a Hypothesis strategy that places them anywhere, and the
check of a read: an error naming the file and the first bad rows, or with drop_invalid=True
the valid rows with their durations and one warning that counts the rest."""

import warnings

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bwprof.traces import TraceFormatError
from bwprof.traces.errors import InvalidRowsError, InvalidRowsWarning

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# What a bad row holds: (kind, how the writer spells it). "ok" rows are valid.
KINDS = ("ok", "negative", "empty", "nan", "inf", "huge", "negtime")


def rows_strategy(max_rows=12):
    """A list of row kinds, at least one row, bad ones anywhere."""
    return st.lists(st.sampled_from(KINDS), min_size=1, max_size=max_rows)


def expect(path, kinds, read, valid_durations, label):
    """Reading fails naming the first bad rows (``label(i)``) and their count; with
    drop_invalid=True the valid rows remain with their durations, and one warning counts
    the rest."""
    bad = [i for i, k in enumerate(kinds) if k != "ok"]
    if not bad:
        df = read(path)
        assert df["duration_ns"].tolist() == valid_durations
        return
    with pytest.raises(InvalidRowsError) as info:
        read(path)
    err = info.value
    assert isinstance(err, TraceFormatError) and isinstance(err, ValueError)
    message = str(err)
    assert message.startswith(f"{path}: {len(bad)} of {len(kinds)} rows have an invalid duration")
    assert err.count == len(bad)
    assert err.rows == [label(i) for i in bad[:5]]
    for i in bad[:5]:
        assert f"{label(i)}: " in message
    assert "drop_invalid=True" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read(path, drop_invalid=True)
    ours = [w for w in caught if issubclass(w.category, InvalidRowsWarning)]
    assert len(ours) == 1
    assert f"left out {len(bad)} of {len(kinds)} rows" in str(ours[0].message)
    assert df["duration_ns"].tolist() == valid_durations
    assert (df["duration_ns"] >= 0).all()
