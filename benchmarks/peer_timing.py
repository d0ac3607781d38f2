"""How the benchmarks time a PyTorch peer: exactly as bwprof times its own kernels.

Before every timed run the L2 is flushed the way bwprof's GPU backend does it (a buffer twice the
L2 written, then another one read, so that no dirty lines are left for the timed work to write
back) and the GPU spins while the work is submitted; CUDA events around the work alone; three
warm-ups; the median.
"""
from __future__ import annotations

import statistics


class TorchTimer:
    """Times callables on the current CUDA device with bwprof's flush and statistics."""

    def __init__(self):
        import torch

        self.torch = torch
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        size = max(2 * l2, 32 << 20)
        self.scrub = torch.empty(size, dtype=torch.uint8, device="cuda")
        self.clean = torch.zeros(size // 4, dtype=torch.int32, device="cuda")
        clock_hz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 1_980_000) * 1e3  # kHz
        self.spin_cycles = int(50e-6 * clock_hz)

    def flush(self, i: int = 0) -> None:
        self.scrub.fill_(i & 0xff)
        self.clean.sum()

    def median_us(self, fn, repeats: int, warmup: int = 3, flush: bool = True) -> float:
        """Median microseconds of ``fn()`` over ``repeats`` timed runs, each after a flush (unless
        ``flush`` is False: the caller keeps its data out of the L2 itself, e.g. by rotating copies)."""
        start = self.torch.cuda.Event(enable_timing=True)
        stop = self.torch.cuda.Event(enable_timing=True)
        times = []
        for i in range(repeats + warmup):
            if flush:
                self.flush(i)
            # As bwprof does: the GPU spins (no memory traffic) while Python submits the work, so the
            # events time the work rather than the submission. ~50 us covers PyTorch's dispatch.
            self.torch.cuda._sleep(self.spin_cycles)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(stop) * 1e3)
        return statistics.median(times)


_shared = None


def shared_timer() -> TorchTimer:
    """One TorchTimer per process: its flush buffers (twice the L2 each) are allocated once."""
    global _shared
    if _shared is None:
        _shared = TorchTimer()
    return _shared
