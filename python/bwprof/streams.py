"""The GPU stream a profiled callable launches on, as a raw handle (an int: a cudaStream_t or
hipStream_t; 0 is the default stream).

Without ``stream=``: PyTorch's current stream when PyTorch is imported and has started CUDA, else
CuPy's current stream when CuPy is imported, else the default stream. Neither library is imported
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
    """The stream work is launched on now, and whose it is ("torch", "cupy" or "default")."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_stream(device_index).cuda_stream), "torch"
        except Exception:  # noqa: BLE001 - a PyTorch without CUDA: look further
            pass
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            return int(cupy.cuda.get_current_stream().ptr), "cupy"
        except Exception:  # noqa: BLE001 - a CuPy without a GPU
            pass
    return 0, "default"
