#!/usr/bin/env python3
"""Writes the database and JSON trace samples that no real tool produced on this machine, with
the writers in sample_writers/ (one module per format; each names the documented schema it
follows; the values are invented). Run it to regenerate the committed samples, byte for byte:

    python3 tests/data/traces/make_sqlite_samples.py          # into tests/data/traces/
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sample_writers.nsys_sqlite import write_nsys_sample  # noqa: E402
from sample_writers.rocpd import write_rocpd_sample  # noqa: E402
from sample_writers.rocprofv3_json import write_rocprofv3_json_sample  # noqa: E402
from sample_writers.rpd import write_rpd_sample  # noqa: E402


def main(out=HERE):
    out = Path(out)
    write_rocpd_sample(out / "rocpd_two_processes.db")
    write_rpd_sample(out / "rocmprofiledata.rpd")
    write_nsys_sample(out / "nsys_export.sqlite")
    write_rocprofv3_json_sample(out / "rocprofv3_results.json")
    for name in ("rocpd_two_processes.db", "rocmprofiledata.rpd", "nsys_export.sqlite",
                 "rocprofv3_results.json"):
        print(f"{out / name}: {os.path.getsize(out / name)} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
