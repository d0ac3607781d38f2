"""Profiling the user's own code: any Python callable (a PyTorch op, a Triton or CuPy kernel, a
NumPy function), measured with bwprof's method (cold caches flushed on the callable's stream,
warm-up, repeats, the median, the same peaks and roofline judgement) into the same row as bwprof's
own kernels. ``sweep`` (sweeps.py) runs one over a grid of parameters into a DataFrame.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
import warnings
from typing import Any, Callable

from . import _core
from . import arguments as _args
from . import spread as _spread
from .arrays import ArrayInfo, arrays_in, span, unique_bytes
from .streams import current_handle, handle_of

class BytesUnknownWarning(UserWarning):
    """``profile`` timed a callable whose arrays it cannot see: its bytes and bound are unknown."""


class NotRunWarning(UserWarning):
    """``profile`` timed a callable that returned a generator or a coroutine: calling it made the
    object and ran none of its work."""


class ArgumentNameWarning(UserWarning):
    """A keyword of bwprof's ``profile`` (``device=``, ``name=`` ...) is also a parameter of the
    callable: bwprof took it; ``kwargs={...}`` gives it to the callable."""


# The bound on one profile or measure call (seconds; math.inf: none).
DEFAULT_MAX_TOTAL_S = 120.0


_HALF_KINDS = {"f2", "bf16", "V2"}
_DTYPE_NAMES = {"fp32": "fp32", "float32": "fp32", "f4": "fp32", "fp16": "fp16", "float16": "fp16",
                "half": "fp16", "f2": "fp16", "bf16": "bf16", "bfloat16": "bf16"}


def _name_of(fn: Any) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "lambda" if name == "<lambda>" else str(name)


def add_note(err: BaseException, text: str) -> None:
    """bwprof's context on the user's own exception (PEP 678), which goes on with its own type."""
    try:
        err.add_note(text)
    except (AttributeError, TypeError):  # a __notes__ the user's code set to something not a list
        pass


def bound_seconds(name: str, value: Any) -> float:
    """A bound on a call's time: seconds > 0, or math.inf (no bound)."""
    v = _args._real(name, value, "a number of seconds (math.inf: no bound)")
    if not v > 0:  # NaN too
        raise ValueError(f"{name}: must be a number of seconds > 0 (math.inf: no bound), got {_args.show(value)}")
    return v


def _call_keywords(fn: Any, given: dict, explicit: Any, extra: dict) -> dict:
    """The callable's keywords: ``kwargs=`` (explicit) and every keyword bwprof does not take
    (``extra``). Without ``kwargs=``, a parameter of the callable named as one of bwprof's that the
    user set (``given``) is told by an ArgumentNameWarning."""
    if explicit is None:
        clash = sorted(n for n in given if n in _parameters_of(fn))
        if clash:
            names = ", ".join(f"{n}=" for n in clash)
            warnings.warn(f"profile: {_name_of(fn)} has a parameter named {', '.join(map(repr, clash))}, and {names} "
                          f"went to bwprof (its own option{'s' if len(clash) > 1 else ''}), not to the callable; pass "
                          f"kwargs={{{clash[0]!r}: ...}} to give it to the callable (kwargs={{}} keeps it bwprof's "
                          f"and silences this)", ArgumentNameWarning, stacklevel=3)
        return extra
    if not isinstance(explicit, dict) or not all(isinstance(k, str) for k in explicit):
        raise TypeError(f"kwargs: expected a dict of the callable's keyword arguments (names to values), "
                        f"got {_args.show(explicit)}")
    both = sorted(set(explicit) & set(extra))
    if both:
        raise ValueError(f"kwargs: {', '.join(map(repr, both))} given both in kwargs= and as a keyword of profile; "
                         f"give each once")
    return {**extra, **explicit}


def _parameters_of(fn: Any) -> set:
    """Names the callable takes by keyword (empty where its signature cannot be read)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return set()
    return {p.name for p in sig.parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def _not_run(result: Any) -> str:
    """What kind of not-yet-run work ``result`` is ("generator", "coroutine"), or ""."""
    import inspect

    if inspect.iscoroutine(result):
        return "coroutine"
    if inspect.isasyncgen(result):
        return "asynchronous generator"
    if inspect.isgenerator(result):
        return "generator"
    return ""


def _bytes_arg(name: str, value: Any) -> float | None:
    if value is None:
        return None
    return _args.number(name, value)


def _dtype_of(dtype: Any, inputs: list[ArrayInfo]) -> str:
    """The storage type whose compute roof judges the row: given ("fp16", "bf16", numpy/torch dtypes
    ...) or, from the inputs, bf16 when every floating-point input is bfloat16, fp16 when every one
    is 16-bit, else fp32."""
    if dtype is not None:
        if isinstance(dtype, str):
            key = dtype
        else:  # a numpy dtype (.name), a numpy scalar type (__name__) or a torch dtype ("torch.float16")
            key = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
        key = str(key).replace("torch.", "").lower()
        if key not in _DTYPE_NAMES:
            raise ValueError(f"dtype: expected 'fp32', 'fp16' or 'bf16' (or a float32/float16/bfloat16 dtype), "
                             f"got {_args.show(dtype)}")
        return _DTYPE_NAMES[key]
    floats = [a.kind for a in inputs if a.kind.startswith(("f", "bf", "V"))]
    if floats and all(k == "bf16" for k in floats):
        return "bf16"
    return "fp16" if floats and all(k in _HALF_KINDS for k in floats) else "fp32"


def _device_of(device: str, arrays: list[ArrayInfo]) -> str:
    """"auto" follows the data: the GPU its arrays live on, the CPU for host arrays only."""
    gpus = [a.location for a in arrays if a.location != "host"]
    if device == "auto":
        if gpus:
            return gpus[0]
        return "cpu" if arrays else "auto"
    if device == "cpu" and gpus:
        raise ValueError(f"device: 'cpu' cannot time work on {gpus[0]} (its arguments live there); "
                         f"use device='auto' or '{gpus[0]}'")
    return device


def _shape_text(inputs: list[ArrayInfo], outputs: list[ArrayInfo]) -> str:
    part = lambda xs: "+".join(a.shape_text for a in xs[:6]) + ("+..." if len(xs) > 6 else "")  # noqa: E731
    out = []
    if inputs:
        out.append("in=" + part(inputs))
    if outputs:
        out.append("out=" + part(outputs))
    return ",".join(out)


def _host_spans(arrays: list[ArrayInfo]) -> list[tuple[int, int]]:
    spans = []
    for a in arrays:
        if a.location == "host" and a.nbytes > 0:
            lo, hi = span(a)
            spans.append((lo, hi - lo))
    return spans


def _torch_op_counter(declared_flops, args: tuple, kwargs: dict):
    """An op counter for the first call when its arguments are PyTorch tensors and no FLOPs were
    declared, else None."""
    from .framework.torch_ops import OpCounter, uses_torch

    if declared_flops is not None or not uses_torch(args, kwargs):
        return None
    return OpCounter(modules=False)


def profile(fn: Callable, *args: Any, name: str | None = None, bytes_read: Any = None,
            bytes_written: Any = None, flops: Any = None, inputs: Any = None, outputs: Any = None,
            dtype: Any = None, device: str = "auto", cache: str = "cold", warmup: int = 2,
            repeats: int = 10, stream: Any = None, rotate: Any = None, matrix_units: bool | None = None,
            min_time_s: float = 0.05, max_repeats: int = 1000, max_time_s: float = 2.0,
            stream_hold: str | None = None, max_total_s: float = DEFAULT_MAX_TOTAL_S,
            target_rel_spread: float | None = None, kwargs: Any = None, **call_kwargs: Any):
    """Time ``fn(*args, **kwargs)`` with bwprof's method and return its Measurement, whose record
    has the same columns as bwprof's own kernels (``kernel`` = ``name``, default the callable's
    name; ``variant`` = "user"), so ``save_run``, the plots, baselines and ``compare`` take it.

    Bytes: ``bytes_read``/``bytes_written`` as given, else counted from ``inputs``/``outputs`` (default:
    the arguments and the return value of a first call) for anything exposing
    ``__cuda_array_interface__``, ``__array_interface__``, DLPack or the buffer protocol: each
    input read once, each output written once, the bytes every element occupies counted once
    (a buffer passed twice, an array and an overlapping view of it, a broadcast view, whose
    stride 0 spans only the memory it repeats; :func:`bwprof.arrays.unique_bytes`); an argument
    that is also returned counts as written only (the destination of ``copy_`` or ``out=``: a
    call that reads and rewrites it in place declares ``inputs=`` or ``bytes_read=``). The row's
    ``bytes_source`` says "declared", "inferred" or "mixed". A callable whose arrays bwprof cannot
    see (a closure, as ``triton.testing.do_bench`` takes, or a call that returns nothing) is timed
    anyway: the side it cannot count is NaN, ``bytes_source`` "unknown", the bandwidth and the bound
    unknown, and one :class:`BytesUnknownWarning` says what to pass. ``flops`` places the row on the
    roofline (0: pure data movement, judged by bandwidth). Without it, PyTorch work gets its ops'
    FLOPs by their formulas (matmul, convolution, attention; ``flops_source`` "inferred"); otherwise
    the FLOPs are unknown (``flops_source`` "unknown", ``flops`` NaN) and the row is judged only where
    bandwidth alone proves it memory-bound, else its bound is "unknown" and its bottleneck says to
    pass ``flops=``. ``dtype`` picks the compute roof ("fp32"/"fp16"/"bf16"; default from the inputs)
    and ``matrix_units=True`` judges FP16 work against the tensor cores' roof (default: when the
    FLOPs were inferred from matmul, convolution or attention ops, else not).

    ``device="auto"`` follows the data (a GPU for device arrays, the CPU for host arrays). On a
    GPU the calls are timed by events on ``stream`` (a raw handle or an object with
    ``__cuda_stream__``, ``.cuda_stream`` or ``.ptr``; default: the current stream of PyTorch
    (once it has started CUDA) or CuPy that is not a default stream, else the default stream), where the L2 flush and the
    stream hold go too. ``rotate``: a list of argument tuples used in turn (so that even hot runs
    read from memory), all of one size: sets whose arrays hold different bytes are a ValueError
    (a row has one byte count) unless ``bytes_read=`` declares it. The stream is held until each call has queued its work (``stream_hold``
    "block"), so the host's launch time is not timed; a call that makes the host wait on the GPU
    (``.item()``, a synchronize) cannot be held, and the whole run is timed again behind the spin:
    its row says ``stream_hold`` "spin" and ``host_waited`` True, and its time includes the host's
    work between launches.

    Keywords: those of :data:`PROFILE_ARGUMENTS` are bwprof's; every other keyword goes to the
    callable. ``kwargs={...}`` passes the callable's own keywords explicitly, whatever their names
    (``profile(f, x, kwargs={"device": "cuda", "name": "mine"})``); a name given both ways is a
    ValueError. Where ``kwargs=`` is not given and the callable's signature names a parameter that
    bwprof took (``device=``, ``name=`` ...), a :class:`ArgumentNameWarning` says so.

    ``max_total_s`` bounds the whole call (default 120 s; ``math.inf`` lifts it): the first warm-up
    call the core makes (after the first call above, which pays one-time costs such as compiles),
    timed to the end of its work, times the calls still to come (the warm-up and ``repeats``); an
    estimate past the bound is a ValueError before they run, saying how to allow it. The estimate
    counts the minimum repeats only; repeats a spread target adds stop where the call would pass it.

    ``target_rel_spread`` (None: no target; else a fraction in (0, 1]) repeats past ``repeats`` and
    ``min_time_s`` until the calls' relative spread (``time_cv``) is at most the target, within
    ``max_repeats``, ``max_time_s`` and ``max_total_s``, as :func:`bwprof.measure` does; the row
    says ``spread_target_met``, and a :class:`bwprof.SpreadTargetWarning` says when the budget ran
    out first. Calls timed while the GPU throttled are timed again (``throttled_retaken``).

    A callable that raises propagates its own exception, of its own type (``except MyError``
    still catches it), with bwprof's context added as a note (PEP 678, ``exc.__notes__``); the
    device stays usable. A callable that returns a generator or a coroutine did not run its work
    (only made the object): a :class:`NotRunWarning` says so, and the timing is of the call alone.
    One that queues no GPU work on the timed stream is a ValueError.
    """
    given = {k: v for k, v in locals().items() if k in _PROFILE_DEFAULTS and v is not _PROFILE_DEFAULTS[k]}
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {_args.show(fn)} ({type(fn).__name__})")
    name = _args.text("name", name) if name is not None else _name_of(fn)
    if not name:
        raise ValueError("name: must not be empty")
    declared_read = _bytes_arg("bytes_read", bytes_read)
    declared_written = _bytes_arg("bytes_written", bytes_written)
    declared_flops = _bytes_arg("flops", flops)
    flops = declared_flops  # None: unknown (0 declares pure data movement)
    device = _args.text("device", device)
    cache = _args.text("cache", cache, ("cold", "hot"))
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    max_repeats = _args.count("max_repeats", max_repeats, 1, _args.MAX_REPEATS)
    if max_repeats < repeats:
        raise ValueError(f"max_repeats: must be at least repeats ({repeats}), got {max_repeats}")
    min_time_s = _args.seconds("min_time_s", min_time_s)
    max_time_s = _args.seconds("max_time_s", max_time_s)
    matrix_units = _args.flag("matrix_units", matrix_units) if matrix_units is not None else None
    hold = _args.text("stream_hold", stream_hold, ("block", "spin")) if stream_hold is not None else ""
    max_total_s = bound_seconds("max_total_s", max_total_s)
    target_rel_spread = _spread.target("target_rel_spread", target_rel_spread)
    kwargs = _call_keywords(fn, given, kwargs, call_kwargs)

    if rotate is not None:
        if args:
            raise ValueError("rotate: it replaces the positional arguments; pass either *args or rotate=")
        if not isinstance(rotate, (list, tuple)) or not rotate:
            raise ValueError(f"rotate: expected a non-empty list of argument tuples, got {_args.show(rotate)}")
        for i, a in enumerate(rotate):
            if not isinstance(a, (tuple, list)):
                raise TypeError(f"rotate[{i}]: expected a tuple of arguments, got {type(a).__name__}")
        sets = [tuple(a) for a in rotate]
    else:
        sets = [tuple(args)]

    failure: dict = {"error": None}

    def guarded(call_args: tuple):
        try:
            return fn(*call_args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - kept to tell the callable's errors from bwprof's
            failure["error"] = e
            raise

    def run(step: Callable[[], Any], phase: str) -> Any:
        # The callable's own exception goes on as itself, bwprof's context added as a note.
        try:
            return step()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001
            err = failure["error"]
            if err is None:
                raise
            if e is not err:  # bwprof's layers wrapped it: the user's exception is what goes on
                add_note(err, f"bwprof.profile: bwprof saw it as {type(e).__name__}: {e}")
        add_note(err, f"bwprof.profile: raised by {name!r} in {phase} while bwprof timed it "
                      f"(bwprof stopped; the device is usable)")
        if isinstance(err, TypeError) and "keyword argument" in str(err):
            add_note(err, "bwprof.profile: keywords that are not bwprof's go to the callable; bwprof's are "
                          f"{', '.join(PROFILE_ARGUMENTS)} (kwargs={{...}} passes any name to the callable)")
        raise err

    # Inputs: what one call reads (the set it is given); outputs: what it writes.
    per_set_inputs = [arrays_in(inputs) if inputs is not None else arrays_in((s, kwargs)) for s in sets]
    first_inputs = per_set_inputs[0]
    had_inputs = bool(first_inputs)
    # A first call: its return value, JIT compiles, errors; and for PyTorch work the FLOPs of its
    # ops (bwprof.framework.torch_ops), where the user declared none.
    counter = _torch_op_counter(declared_flops, sets[0], kwargs)
    with counter if counter is not None else contextlib.nullcontext():
        result = run(lambda: guarded(sets[0]), "its first call")
    not_run = _not_run(result)
    if not_run:
        # Calling it made the object; the work runs only when it is iterated or awaited.
        how = "awaited (asyncio.run(...))" if "coroutine" in not_run or "asynchronous" in not_run else \
            "iterated (lambda: list(fn(...)))"
        warnings.warn(f"profile: {name} returned a {not_run}, so calling it ran none of its work: bwprof times "
                      f"only making the {not_run}; profile a callable that runs the work (its {not_run} "
                      f"{how})", NotRunWarning, stacklevel=2)
        _close(result)
    flops_inferred = counter is not None and counter.counted
    if flops_inferred:
        flops = counter.total_flops
    if matrix_units is None:  # FLOPs of matmul/convolution/attention formulas are the matrix units' work
        matrix_units = flops_inferred and any(r.matrix for r in counter.records if r.has_flops)
    out_arrays = arrays_in(outputs) if outputs is not None else arrays_in(result)
    del result
    if inputs is None and outputs is None:
        # An argument handed back as the result is the call's destination (``out=``, ``copy_``):
        # written, not read. Read-modify-write calls (``x.mul_(2)``) declare it: inputs=/bytes_read=.
        returned = {(a.location, a.address, a.shape, a.strides, a.itemsize) for a in out_arrays}
        dest = [i for i, a in enumerate(first_inputs)
                if (a.location, a.address, a.shape, a.strides, a.itemsize) in returned]
        if dest:
            per_set_inputs = [[a for i, a in enumerate(xs) if i not in dest] if len(xs) == len(first_inputs) else xs
                              for xs in per_set_inputs]
            first_inputs = per_set_inputs[0]

    # A side bwprof cannot see (a closure over its arrays, a call that returns nothing) is unknown:
    # the call is timed anyway, its row has no bandwidth, and one warning says what to pass.
    # Arrays named explicitly (inputs=, outputs=) that hold none are a mistake, not a closure.
    missing = []
    if declared_read is None:
        if not had_inputs:
            if inputs is not None:
                raise ValueError("bytes_read: nothing to infer it from (inputs= holds no array); pass "
                                 "bytes_read= or arrays in inputs=[...]")
            missing.append("bytes_read= (or inputs=[...])")
            bytes_r = math.nan
        else:
            counts = [unique_bytes(x) for x in per_set_inputs]
            if len(set(counts)) > 1:
                # One row has one byte count: sets of other sizes would each need their own.
                sizes = ", ".join(f"set {i}: {c} bytes" for i, c in enumerate(counts[:4])) + \
                    (", ..." if len(counts) > 4 else "")
                raise ValueError(f"rotate: the argument sets read different bytes ({sizes}); a row has one byte "
                                 f"count, so rotate sets of one size (sweep over the sizes), or declare "
                                 f"bytes_read= per call")
            bytes_r = float(counts[0])
    else:
        bytes_r = declared_read
    if declared_written is None:
        if not out_arrays:
            if outputs is not None:
                raise ValueError("bytes_written: nothing to infer it from (outputs= holds no array); pass "
                                 "bytes_written= or arrays in outputs=[...]")
            missing.append("bytes_written= (0 if it writes nothing; or outputs=[...])")
            bytes_w = math.nan
        else:
            bytes_w = float(unique_bytes(out_arrays))
    else:
        bytes_w = declared_written
    declared = (declared_read is not None, declared_written is not None)
    source = "unknown" if missing else "declared" if all(declared) else "inferred" if not any(declared) else "mixed"
    if missing:
        where = " and ".join(w for w, gone in (("its arguments", not had_inputs and declared_read is None),
                                                ("its return value", not out_arrays and declared_written is None))
                             if gone)
        warnings.warn(f"profile: bwprof finds no array in {where} of {name}, so it times the call but its bytes "
                      f"and bound are unknown; pass {' and '.join(missing)} to judge it against the roofs",
                      BytesUnknownWarning, stacklevel=2)

    every_input = [a for xs in per_set_inputs for a in xs]
    device = _device_of(device, every_input + out_arrays)
    resolved = _core.device_info(device)  # an unknown device fails here, before timing
    handle = None
    if resolved["kind"] != "cpu":
        index = int(resolved["id"].split(":")[1])
        handle = handle_of(stream) if stream is not None else current_handle(index)[0]
    elif stream is not None:
        handle_of(stream)  # checked, and meaningless on the CPU
    row_dtype = _dtype_of(dtype, first_inputs)
    # What a cold CPU run evicts: memory the caller keeps alive (the inputs, and outputs it passed);
    # the first call's return value is gone by then, and each call returns a new one anyway.
    alive = every_input + (out_arrays if outputs is not None else [])
    buffers = _host_spans(alive) if resolved["kind"] == "cpu" else []

    turn = itertools.count()

    def call() -> None:
        guarded(sets[next(turn) % len(sets)])

    def call_and_close() -> None:  # each coroutine made is closed, not left to warn "never awaited"
        _close(guarded(sets[next(turn) % len(sets)]))

    # max_total_s: the core's first launch (its work finished) times the launches to come; the first
    # call above pays one-time costs (compiles, autotuning) and would overestimate them.
    m = run(lambda: _core.profile(
        call_and_close if not_run else call, name, device, bytes_r, bytes_w, source, flops,
        "inferred" if flops_inferred else "declared", row_dtype, matrix_units,
        _shape_text(first_inputs, out_arrays), cache, warmup, repeats, min_time_s, max_repeats,
        max_time_s, handle, hold, buffers, max_total_s, target_rel_spread), "a timed call")
    _spread.check(m, "profile")  # the budget ran out before the target: said once
    return m


def _close(obj: Any) -> None:
    close = getattr(obj, "close", None) or getattr(obj, "aclose", None)
    if callable(close):
        try:
            r = close()
            if _not_run(r):  # aclose() gives a coroutine of its own
                r.close()
        except Exception:  # noqa: BLE001 - closing is a courtesy
            pass


_PROFILE_DEFAULTS = {p.name: p.default for p in __import__("inspect").signature(profile).parameters.values()
                     if p.kind == p.KEYWORD_ONLY}
# The keywords bwprof's profile takes for itself; every other keyword goes to the callable.
PROFILE_ARGUMENTS = tuple(_PROFILE_DEFAULTS)
