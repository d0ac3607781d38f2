"""Step-by-step GPU smoke run (prints each step, so a crash shows where it happened)."""
import faulthandler
import sys

faulthandler.enable()
sys.path.insert(0, "python")
import bwprof  # noqa: E402

print("devices", bwprof.devices(), flush=True)
print("info", bwprof.device("gpu").info, flush=True)
for k, shape in [("stream_copy", dict(n=1 << 20)), ("layernorm", dict(rows=8, cols=4096)),
                 ("gemv", dict(N=64, K=4096))]:
    m = bwprof.measure(k, device="gpu", verify=True, repeats=2, min_time_s=0, **shape)
    print(k, m, flush=True)
print("peaks", bwprof.peaks("gpu"), flush=True)
