"""A real step, kernel by kernel and whole (docs/step.md): ``profile_step`` runs the user's step
under the platform's tracer (PyTorch's profiler on a GPU), gives every kernel the op and module that
launched it and the bytes and FLOPs the dispatcher saw that op move, judges each on the measured
roofline with the core's one judgement, and says where the step's wall time goes (busy, idle and
why) with the step's own verdict, host-bound among them. ``region`` marks code bwprof cannot see
into (and is the whole step on the CPU).

    import bwprof
    r = bwprof.profile_step(lambda: model(x))
    print(r.verdict); r.kernels; r.summary; r.save("results")
"""
from __future__ import annotations

from typing import Any, Callable

from .regions import region
from .report import KERNEL_COLUMNS, StepReport, load_step
from .run import profile_step

_marker_handler = None


def step_marker(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Mark the step of a script for ``python3 -m bwprof step SCRIPT.py``: there the command
    profiles ``fn(*args, **kwargs)`` (and prints and saves its report); anywhere else this is a
    plain call. Returns what ``fn`` returns."""
    if _marker_handler is not None:
        return _marker_handler(fn, args, kwargs)
    return fn(*args, **kwargs)


__all__ = ["KERNEL_COLUMNS", "StepReport", "load_step", "profile_step", "region", "step_marker"]
