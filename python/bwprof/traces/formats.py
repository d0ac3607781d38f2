"""The trace formats that are not CSV text: SQLite databases (rocpd, rocmProfileData .rpd,
Nsight Systems exports), Nsight reports, rocprofv3 JSON; how they are recognised and which
reader takes them. readers.py consults this module before its text detection.
"""

from pathlib import Path

from .errors import TraceFormatError
from .ncu_report import read_ncu_rep
from .nsys_sqlite import read_nsys_rep, read_nsys_sqlite
from .rocpd import read_rocpd
from .rocprofv3_json import read_rocprofv3_json
from .rpd import read_rpd
from .sqlitedb import detect as detect_sqlite
from .sqlitedb import is_sqlite

READERS = {
    "rocpd": read_rocpd,
    "rocpd_rpd": read_rpd,
    "nsys_sqlite": read_nsys_sqlite,
    "nsys_rep": read_nsys_rep,
    "ncu_rep": read_ncu_rep,
    "rocprofv3_json": read_rocprofv3_json,
}
PER_DISPATCH = set(READERS)

# Files read_dir() looks at besides .csv/.json/.txt.
SUFFIXES = (".db", ".sqlite", ".sqlite3", ".rpd", ".nsys-rep", ".qdrep", ".ncu-rep")

_BY_SUFFIX = {".nsys-rep": "nsys_rep", ".qdrep": "nsys_rep", ".ncu-rep": "ncu_rep"}
_REFUSED = {
    ".pftrace": "a Perfetto trace (protobuf) is not read; use the rocpd database, JSON or CSV "
                "output of the same rocprofv3 run (--output-format rocpd|json|csv)",
    ".otf2": "OTF2 traces are not read; use rocprofv3's rocpd, JSON or CSV output",
}


def sniff(path):
    """The format of a non-text trace file, or None to let the text detection decide."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    if p.is_dir():
        return None
    name = p.name.lower()
    for suffix, fmt in _BY_SUFFIX.items():
        if name.endswith(suffix):
            return fmt
    for suffix, reason in _REFUSED.items():
        if name.endswith(suffix):
            raise TraceFormatError(p, None, reason)
    if is_sqlite(p):
        return detect_sqlite(p)
    return None


def is_rocprofv3_json(text):
    """rocprofv3's results.json begins with its "rocprofiler-sdk-tool" key."""
    return '"rocprofiler-sdk-tool"' in text[:4096]


def prefer(found):
    """Drop files in a folder that repeat another file's data, so that nothing counts twice.

    - rocprofv3 writes the same run as a rocpd database, CSV and JSON when asked for several
      output formats: the database wins, then the CSV files, then the JSON.
    - A report (``.nsys-rep``, ``.ncu-rep``) is read only when no export of it is there:
      ``nsys stats`` leaves ``report.sqlite`` and bwprof's own profile folders hold the CSV
      that ``nsys stats``/``ncu --csv`` wrote, which are read instead.
    """
    out = {fmt: list(files) for fmt, files in found.items()}
    if "rocpd" in out:
        for fmt in ("rocprofv3_kernel_trace", "rocprofv3_counter_collection", "rocprofv3_kernel_stats",
                    "rocprofv3_json"):
            out.pop(fmt, None)
    elif "rocprofv3_kernel_trace" in out or "rocprofv3_counter_collection" in out:
        out.pop("rocprofv3_json", None)
    if "nsys_sqlite" in out or "nsys_kern_sum" in out:
        out.pop("nsys_rep", None)
    if "ncu_raw" in out or "ncu_details" in out:
        out.pop("ncu_rep", None)
    return out
