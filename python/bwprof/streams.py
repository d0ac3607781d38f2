"""The GPU stream a profiled callable launches on, as a raw handle (an int: a cudaStream_t or
hipStream_t; 0 is the default stream).

Without ``stream=``: the current stream of PyTorch (once it has started CUDA) or of CuPy, whichever
is not on its default stream (both on different streams: an error asking for ``stream=``), else
the default stream. Neither library is imported
here (only looked up in ``sys.modules``).
"""
from __future__ import annotations

import sys
from typing import Any


def handle_of(stream: Any) -> int:
    """A stream's raw handle: an int (>= 0), an object with the CUDA stream protocol
    (``__cuda_stream__()`` returning ``(version, handle)``), or one with ``.cuda_stream``
    (PyTorch) or ``.ptr`` (CuPy). Anything else is a TypeError naming ``stream``."""
    if isinstance(stream, bool):
        raise TypeError("stream: expected a stream handle (int) or a stream object, got a bool")
    if isinstance(stream, int) or type(stream).__name__ in ("int64", "uint64", "intp", "uintp"):
        handle = int(stream)
    elif hasattr(stream, "__cuda_stream__"):
        got = stream.__cuda_stream__()
        if not (isinstance(got, tuple) and len(got) == 2):
            raise TypeError(f"stream: __cuda_stream__() must return (version, handle), got {got!r}")
        handle = got[1]
    elif isinstance(getattr(stream, "cuda_stream", None), int):
        handle = stream.cuda_stream
    elif isinstance(getattr(stream, "ptr", None), int):
        handle = stream.ptr
    else:
        raise TypeError(f"stream: expected a stream handle (int) or an object with __cuda_stream__, "
                        f".cuda_stream or .ptr, got {type(stream).__name__}")
    if not isinstance(handle, int) or isinstance(handle, bool) or handle < 0 or handle >= 1 << 64:
        raise ValueError(f"stream: a handle is an integer from 0 to 2^64 - 1, got {handle!r}")
    return int(handle)


def current_handle(device_index: int = 0) -> tuple[int, str]:
    """The stream work is launched on now, and whose it is ("torch", "cupy" or "default").

    Each imported library that can launch (PyTorch once it has started CUDA, CuPy) names its
    current stream. A library inside a stream context (a non-default stream) is where the work
    goes: ``with cupy.cuda.Stream():`` in a process where PyTorch sits on its default stream
    times CuPy's stream. Two different non-default streams are ambiguous: a ValueError asks
    for ``stream=``."""
    found = []
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                found.append((int(torch.cuda.current_stream(device_index).cuda_stream), "torch"))
        except Exception:  # noqa: BLE001 - a PyTorch without CUDA: look further
            pass
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            found.append((int(cupy.cuda.get_current_stream().ptr), "cupy"))
        except Exception:  # noqa: BLE001 - a CuPy without a GPU
            pass
    busy = [f for f in found if f[0] != 0]
    if len({h for h, _ in busy}) > 1:
        raise ValueError("stream: PyTorch's current stream (%#x) and CuPy's (%#x) are both set and differ; "
                         "pass stream= to say which one the callable launches on" % (busy[0][0], busy[1][0]))
    if busy:
        return busy[0]
    return found[0] if found else (0, "default")
