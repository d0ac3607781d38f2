"""How fast bwprof reads a large rocpd database (issue #17: 1 million dispatches in at most 5 s
on a 2-core machine).

Writes a rocpd (rocprofiler-sdk schema 3) database with N kernel dispatches into a temporary
folder (tests/data/traces/make_sqlite_samples.py, the same writer as the test samples), then
times ``bwprof.traces.read`` on it and reports the peak memory: the Python heap's peak
(tracemalloc, a separate run so that tracing does not slow the timed one) and the process's
peak resident size.

    PYTHONPATH=python python3 benchmarks/trace_read_speed.py [--dispatches 1000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "data" / "traces"))

from bwprof import traces                      # noqa: E402
from make_sqlite_samples import write_big_rocpd  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dispatches", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed reads; the best is reported")
    ap.add_argument("--limit-s", type=float, default=5.0, help="target read time (exit 1 above it)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.db"
        t0 = time.perf_counter()
        write_big_rocpd(path, args.dispatches)
        print(f"wrote {args.dispatches} dispatches in {time.perf_counter() - t0:.1f} s "
              f"({os.path.getsize(path) / 1e6:.0f} MB)")
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            df = traces.read(path)
            times.append(time.perf_counter() - t0)
            del df
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()
        df = traces.read(path)
        heap_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        assert len(df) == args.dispatches, len(df)
        gpu_ms = df["duration_ns"].sum() / 1e6
    best = min(times)
    print(f"read {len(df)} rows ({gpu_ms:.1f} ms of GPU time): best {best:.2f} s, "
          f"all {', '.join(f'{t:.2f}' for t in times)} s; cores {os.cpu_count()}")
    print(f"peak Python heap {heap_mb:.0f} MB (tracemalloc); peak resident {rss_mb:.0f} MB")
    ok = best <= args.limit_s
    print(f"target: at most {args.limit_s:.1f} s -> {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
