"""The default suite of reference-kernel configurations and the loop that runs it."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import pandas as pd

from . import _core
from .api import measure

# A 0.5-billion-parameter LLM's layers (the seeds' benchmark table): hidden 896, FFN 4864,
# 14 query heads and 2 KV heads of 64.
HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM = 896, 4864, 14, 2, 64
# A transformer encoder's 768-wide layers: 24 heads of 32, 64 tokens.
ENC_HIDDEN, ENC_HEADS, ENC_HEAD_DIM, ENC_TOKENS = 768, 24, 32, 64


@dataclass(frozen=True)
class Config:
    """One suite entry: a kernel, a label, its full parameters and the --quick ones."""

    kernel: str
    label: str
    params: dict
    quick: dict
    variants: tuple = ()  # implementations to compare where the backend has them; () = its default
    dtypes: tuple = ("fp32", "fp16")


def _c(kernel, label, params, quick=None, **kw) -> Config:
    return Config(kernel, label, dict(params), dict(quick if quick is not None else params), **kw)


def default_suite() -> list[Config]:
    """Every reference kernel at the shapes inference engineers care about."""
    s = []
    for op in ("copy", "scale", "add", "triad", "dot"):
        s.append(_c(f"stream_{op}", "stream 64 MiB", {"n": 1 << 24}, {"n": 1 << 20}))
    gemms = [("decode", 1, HIDDEN, HIDDEN), ("prefill", 32, HIDDEN, HIDDEN),
             ("prefill", 128, HIDDEN, HIDDEN), ("ffn", 128, FFN, HIDDEN)]
    s.append(_c("gemv", "decode 896x896", {"N": HIDDEN, "K": HIDDEN}, {"N": 256, "K": 256}))
    s.append(_c("gemv", "decode ffn 4864x896", {"N": FFN, "K": HIDDEN}, {"N": 512, "K": 256}))
    s.append(_c("gemv", "4096x4096", {"N": 4096, "K": 4096}, {"N": 512, "K": 512}))
    # GEMM implementations side by side where the GPU has them: the vendor library, bwprof's kernel
    # on the matrix units (FP16) and its shared-memory tiled kernel.
    impls = ("vendor", "tensor", "tiled")
    for label, m, n, k in gemms:
        s.append(_c("gemm", label, {"M": m, "N": n, "K": k},
                    {"M": max(1, m // 4), "N": max(n // 4, 64), "K": max(k // 4, 64)}, variants=impls))
    s.append(_c("gemm", "ffn+bias+gelu", {"M": 128, "N": FFN, "K": HIDDEN, "bias": True, "act": "gelu"},
                {"M": 32, "N": 512, "K": 256, "bias": True, "act": "gelu"},
                variants=("vendor", "tensor", "unfused")))
    s.append(_c("gemm", "encoder qkv", {"M": ENC_TOKENS, "N": 3 * ENC_HIDDEN, "K": ENC_HIDDEN},
                {"M": 16, "N": 384, "K": 256}, variants=impls))
    s.append(_c("qkv_projection", "encoder qkv", {"tokens": ENC_TOKENS, "hidden": ENC_HIDDEN},
                {"tokens": 16, "hidden": 256}, variants=("fused", "separate")))
    attn = dict(heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM)
    s.append(_c("attention", "decode kv=1024", dict(attn, seq_q=1, seq_kv=1024),
                dict(attn, seq_q=1, seq_kv=256)))
    s.append(_c("attention", "decode kv=4096 b=4", dict(attn, batch=4, seq_q=1, seq_kv=4096),
                dict(attn, batch=2, seq_q=1, seq_kv=512)))
    s.append(_c("attention", "decode paged kv=4096 b=4", dict(attn, batch=4, seq_q=1, seq_kv=4096),
                dict(attn, batch=2, seq_q=1, seq_kv=512), variants=("paged", "flash_paged")))
    s.append(_c("attention", "prefill causal 512", dict(attn, seq_q=512, causal=True),
                dict(attn, seq_q=64, causal=True)))
    s.append(_c("attention", "encoder", dict(heads=ENC_HEADS, head_dim=ENC_HEAD_DIM, seq_q=ENC_TOKENS),
                dict(heads=ENC_HEADS, head_dim=ENC_HEAD_DIM, seq_q=32)))
    kv = dict(kv_heads=KV_HEADS, head_dim=HEAD_DIM)
    both = ("contiguous", "paged")
    s.append(_c("kv_cache_append", "decode step", dict(kv, max_seq=4096, new_tokens=1),
                dict(kv, max_seq=512, new_tokens=1), variants=both))
    s.append(_c("kv_cache_append", "decode b=32", dict(kv, batch=32, max_seq=4096, new_tokens=1),
                dict(kv, batch=8, max_seq=512, new_tokens=1), variants=both))
    s.append(_c("kv_cache_append", "prefill 2048 b=8", dict(kv, batch=8, max_seq=4096, new_tokens=2048),
                dict(kv, batch=2, max_seq=512, new_tokens=256), variants=both))
    s.append(_c("q4_0_dequant", "ffn weight", {"rows": FFN, "cols": HIDDEN}, {"rows": 512, "cols": 256}))
    s.append(_c("q4_0_dequant", "ffn down weight", {"rows": HIDDEN, "cols": FFN}, {"rows": 256, "cols": 512}))
    layouts = ("cpu", "llama", "tiled")
    for m in (1, 8):
        s.append(_c("q4_0_matmul", f"ffn up M={m}", {"M": m, "N": FFN, "K": HIDDEN},
                    {"M": m, "N": 512, "K": 256}, variants=layouts))
        s.append(_c("q4_0_matmul", f"ffn down M={m}", {"M": m, "N": HIDDEN, "K": FFN},
                    {"M": m, "N": 256, "K": 512}, variants=layouts))
    s.append(_c("layernorm", "prefill 128", {"rows": 128, "cols": HIDDEN}, {"rows": 32, "cols": HIDDEN}))
    s.append(_c("layernorm", "encoder", {"rows": ENC_TOKENS, "cols": ENC_HIDDEN},
                {"rows": 16, "cols": ENC_HIDDEN}))
    s.append(_c("layernorm", "4096x4096", {"rows": 4096, "cols": 4096}, {"rows": 64, "cols": 1024}))
    for act in ("relu", "gelu", "silu"):
        s.append(_c("bias_act", f"ffn {act}", {"rows": 128, "cols": FFN, "act": act},
                    {"rows": 16, "cols": 1024, "act": act}, variants=("fused", "unfused")))
    # The empirical roofline: FP32, 2^k FMAs per element read and written, i.e. from 0.25 to 512
    # FLOP/byte (the roofline chart draws these rows as the measured curve).
    for k in range(12):
        fmas = 1 << k
        s.append(_c("intensity_sweep", f"I={fmas / 4:g}", {"n": 1 << 24, "fmas": fmas},
                    {"n": 1 << 18, "fmas": fmas}, dtypes=("fp32",)))
    return s


def _family_of(kernel: str) -> str:
    for k in _core.kernels():
        if k["name"] == kernel:
            return k["family"]
    return kernel


def _variants_on(kernel: str, backend: str, dtype: str | None = None) -> list[str]:
    """The backend's variants of ``kernel`` (those that take ``dtype``, when given)."""
    for k in _core.kernels():
        if k["name"] == kernel:
            return [v["name"] for v in k["variants"]
                    if v["backend"] == backend and (dtype is None or dtype in v.get("dtypes", [dtype]))]
    return []


def select(configs: Iterable[Config], kernels: Iterable[str] | None) -> list[Config]:
    """Configurations whose kernel or family is in ``kernels`` (all when None)."""
    configs = list(configs)
    if kernels is None:
        return configs
    if isinstance(kernels, str):
        kernels = [kernels]
    wanted = set(kernels)
    known = {c.kernel for c in configs} | {_family_of(c.kernel) for c in configs}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"kernels: unknown kernel or family {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")
    return [c for c in configs if c.kernel in wanted or _family_of(c.kernel) in wanted]


class _Progress:
    """A one-line progress bar on stderr (a plain line per step when stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done = total, enabled, 0
        self.tty = enabled and sys.stderr.isatty()
        self.t0 = time.monotonic()

    def step(self, text: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.t0
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {elapsed:5.1f}s {text}"
        if self.tty:
            sys.stderr.write("\r\033[K" + line[:150])
            if self.done == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def run_suite(device: str = "auto", kernels=None, dtypes=("fp32", "fp16"), quick: bool = False,
              cache: str = "cold", progress: bool = True,
              on_row: Callable[[dict], None] | None = None, configs: Iterable[Config] | None = None
              ) -> pd.DataFrame:
    """Measure every selected suite configuration in every dtype; one row per measurement.

    ``kernels`` filters by kernel or family name; ``quick`` shrinks every shape and the repeat
    counts so a CPU run takes seconds. ``on_row(row)`` is called as each row is measured (the CLI
    writes the run folder row by row with it). A configuration that fails (e.g. out of memory) is
    reported on stderr and listed in ``df.attrs["errors"]``; the rest still run.
    """
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    for dt in dtypes:
        if dt not in ("fp32", "fp16"):
            raise ValueError(f"dtypes: unknown dtype {dt!r} (known: fp32, fp16)")
    if cache not in ("cold", "hot"):
        raise ValueError(f"cache: expected 'cold' or 'hot', got {cache!r}")
    info = _core.device_info(device)  # validates the device before any work
    chosen = select(configs if configs is not None else default_suite(), kernels)
    backend = "cpu" if info["kind"] == "cpu" else "gpu"
    jobs, skipped = [], []
    for c in chosen:
        have = _variants_on(c.kernel, backend)
        if not have:
            skipped.append(f"{c.kernel} ({c.label}): no {backend} implementation in this build")
            continue
        wanted = [v for v in c.variants if v in have] or [have[0]]
        # A variant that does not take a dtype (the FP16-only tensor GEMM in FP32) is left out.
        jobs += [(c, v, dt) for v in wanted for dt in dtypes
                 if dt in c.dtypes and v in _variants_on(c.kernel, backend, dt)]
    timing = dict(warmup=1, repeats=3, min_time_s=0.005, max_time_s=0.5) if quick else \
        dict(warmup=2, repeats=10, min_time_s=0.05, max_time_s=2.0)
    bar = _Progress(len(jobs), progress)
    rows, errors = [], []
    for c, variant, dt in jobs:
        params = c.quick if quick else c.params
        try:
            m = measure(c.kernel, dtype=dt, device=device, variant=variant, cache=cache, **timing, **params)
        except (ValueError, MemoryError, RuntimeError) as e:
            errors.append({"kernel": c.kernel, "dtype": dt, "label": c.label, "error": f"{type(e).__name__}: {e}"})
            if progress:
                sys.stderr.write(f"\nbwprof: {c.kernel} {dt} ({c.label}) failed: {e}\n")
            bar.step(f"{c.kernel} {dt} FAILED")
            continue
        row = m.to_dict()
        row["label"] = c.label
        rows.append(row)
        if on_row is not None:
            on_row(row)
        bar.step(f"{c.kernel} {dt} {c.label}: {row['bandwidth_gbs']:.1f} GB/s")
    df = pd.DataFrame(rows, columns=list(_core.columns()) + ["label"])
    df.attrs["errors"] = errors
    df.attrs["skipped"] = skipped
    return df
