"""Probe: why is the hot, rotated FP16 GEMV slower than the flushed one? Idle GPU between runs?

(a) PyTorch GEMV over 4 rotated copies, events per run, no flush: plain, and with
    torch.cuda._sleep (a spinning kernel, no memory traffic) queued before each timed run.
(b) bwprof's GEMV hot+rotated and cold, plain and while a 1-block spinning kernel keeps the GPU
    busy on another stream.
"""
import statistics
import torch
import bwprof

dev = torch.device("cuda")
N = K = 4096
Ws = [torch.randn(N, K, device=dev, dtype=torch.float16) for _ in range(4)]
x = torch.randn(1, K, device=dev, dtype=torch.float16)
nbytes = N * K * 2 + K * 2 + N * 2


def torch_rot(spin_cycles):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for i in range(60):
        if spin_cycles:
            torch.cuda._sleep(spin_cycles)
        s.record()
        torch.matmul(x, Ws[i % 4].t())
        e.record()
        e.synchronize()
        if i >= 10:
            ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)


for spin in (0, 20000, 200000):
    us = torch_rot(spin)
    print(f"torch rotated, sleep {spin} cycles before each: {us:.1f} us {nbytes / us / 1e6:.3f} TB/s", flush=True)

for cache, extra in (("cold", {}), ("hot", dict(rotate=4))):
    for busy in (False, True):
        side = torch.cuda.Stream()
        if busy:
            with torch.cuda.stream(side):
                torch.cuda._sleep(4_000_000_000)  # ~2 s on one SM
        d = bwprof.measure("gemv", dtype="fp16", device="gpu", N=N, K=K, cache=cache, repeats=50, warmup=3,
                           min_time_s=0.0, **extra).to_dict()
        print(f"bwprof {cache} {extra} busy={busy}: {d['time_median_us']:.1f} us {d['bandwidth_gbs'] / 1e3:.3f} TB/s",
              flush=True)
        torch.cuda.synchronize()
