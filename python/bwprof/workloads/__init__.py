"""Where a model's GPU time goes: a workload (the seeds' encoder block, an LLM decode step, or a
list of ops the user describes) built from bwprof's kernels and the user's callables, every op
timed on its own, every step timed whole as one graph, and the report: ops, steps against the sum
of their parts, categories, Amdahl, bounds and what each fusion buys (docs/model.md).

    import bwprof
    r = bwprof.model("encoder", batch=64)                 # separate and fused forms, one run
    r = bwprof.model("decode", llm="8b", weights="q4_0", batch=1, kv=4096)
    r = bwprof.model(ops=[bwprof.Op("norm", "layernorm", {"rows": 64, "cols": 768}, count=12),
                          bwprof.Op("mine", fn=my_kernel, bytes_read=1e6, bytes_written=1e6, count=12)])
    print(r.text()); r.ops; r.steps; r.whatif; r.save("results")
"""
from __future__ import annotations

from typing import Any

from .. import _core
from .. import arguments as _args
from . import models as _models
from .ops import Fusion, Op, Workload, workload
from .report import Report
from .run import run_workload

MODELS = ("encoder", "decode")


def build(name: str = "encoder", *, device: str = "auto", dtype: str | None = None, batch: int | None = None,
          kv: int | None = None, weights: str = "fp16", llm: str = "ft054", quick: bool = False) -> Workload:
    """The op list of one of the issue's workloads, as it would run on ``device`` (its preferred
    variants), without running anything."""
    name = _args.text("model", name, MODELS)
    dev = _core.device_info(_args.text("device", device))
    features = list(_core.build_features())
    quick = _args.flag("quick", quick)
    if name == "encoder":
        if kv is not None:
            raise ValueError("kv: the encoder has no KV cache (kv is for 'decode')")
        if weights != "fp16":
            raise ValueError("weights: the encoder runs in its dtype; weights='q4_0' is for 'decode'")
        return _models.encoder(batch, dtype=dtype or "fp16", quick=quick, device_kind=dev["kind"], features=features)
    if dtype not in (None, "fp16"):
        raise ValueError(f"dtype: the decode step runs FP16 activations (weights= picks fp16 or q4_0), got {dtype!r}")
    return _models.decode(llm, batch=1 if batch is None else batch, kv=kv, weights=weights, quick=quick,
                          device_kind=dev["kind"], features=features)


def model(name: Any = None, *, ops: Any = None, fusions: Any = None, device: str = "auto", dtype: str | None = None,
          batch: int | None = None, kv: int | None = None, weights: str = "fp16", llm: str = "ft054",
          quick: bool = False, op_timing: str = "auto", cache: str = "cold", repeats: int | None = None,
          warmup: int | None = None, min_time_s: float | None = None, sets: Any = "auto", verify: bool = True,
          graph: bool = True, progress: bool = False) -> Report:
    """Run a workload and return its :class:`Report`.

    ``name``: "encoder" (the lc0 T82 block: ``batch`` positions of 64 tokens, 15 blocks, ``dtype``
    fp16 or fp32; separate and fused forms), "decode" (``llm`` "ft054" or "8b", ``weights`` "fp16"
    or "q4_0", ``batch`` sequences at KV length ``kv``; separate and fused Q/K/V and gate/up), or a
    :class:`Workload`; or ``ops=[...]`` (:class:`Op` or dicts) with optional ``fusions``.
    ``quick``: reduced sizes and repeats (a CPU runs them in seconds): ``repeats`` 3 (else 10),
    ``warmup`` 1 (else 2), ``min_time_s`` 0 (else 0.05); an explicit ``repeats=``, ``warmup=`` or
    ``min_time_s=`` wins over ``quick`` either way. Per op: ``op_timing``
    ("auto", the default: "graph" when the step is one graph, "single" with ``graph=False``;
    "graph": the steady state, launches back to back in one graph over rotated input sets, the
    time per launch, the way the step runs them; "single": one launch after the cache flush,
    bwprof's standard row, which pays the launch and timing floor a graph does not), ``cache``,
    ``repeats``, ``warmup``; the whole step: one graph on a GPU (``graph=False``: launches on the
    stream), its instances rotated (``sets``: "auto" keeps each launch's data out of the
    last-level cache, "every": one per layer, or a count).
    Bad input is a ValueError naming the argument; a step that does not fit the host's or the
    device's memory a MemoryError saying what it needs, before anything is allocated."""
    quick = _args.flag("quick", quick)
    if ops is not None:
        if name is not None:
            raise ValueError("model: give a model name or ops=, not both")
        w = workload(ops, fusions=fusions, dtype=dtype or "fp16")
    elif isinstance(name, Workload):
        w = name
    else:
        if fusions is not None:
            raise ValueError("fusions: only with ops= (the built-in models name their own)")
        w = build("encoder" if name is None else name, device=device, dtype=dtype, batch=batch, kv=kv,
                  weights=weights, llm=llm, quick=quick)
    if repeats is None:
        repeats = 3 if quick else 10
    if min_time_s is None:
        min_time_s = 0.0 if quick else 0.05
    if warmup is None:  # an explicit warmup= is kept, with quick=True too
        warmup = 1 if quick else 2
    return run_workload(w, device=device, op_timing=op_timing, cache=cache, warmup=warmup,
                        repeats=repeats, min_time_s=min_time_s, max_time_s=0.5 if quick else 2.0, sets=sets,
                        verify=verify, graph=graph, progress=progress)


__all__ = ["Fusion", "MODELS", "Op", "Report", "Workload", "build", "model", "workload"]
