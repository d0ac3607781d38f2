"""The default suite of reference-kernel configurations and the loop that runs it."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import pandas as pd

from . import _core
from . import arguments as _args
from .api import measure


@dataclass(frozen=True)
class Config:
    """One suite entry: a kernel, a label, its full parameters and the --quick ones."""

    kernel: str
    label: str
    params: dict
    quick: dict
    variants: tuple = ()  # implementations to compare where the backend has them; () = its default
    dtypes: tuple = ("fp32", "fp16")


DTYPES = ("fp32", "fp16", "bf16")  # every dtype the kernels know (bwprof.kernels() says which takes which)


def default_suite() -> list[Config]:
    """Every reference kernel at the shapes inference engineers care about.

    Each kernel family declares its own configurations (kernels/<family>/family.cpp); the suite
    takes them in the order the kernels declare (``suite_order``)."""
    kernels = sorted(_core.kernels(), key=lambda k: k["suite_order"])  # stable: a folder keeps its order
    return [Config(k["name"], c["label"], dict(c["params"]), dict(c["quick"]), tuple(c["variants"]),
                   tuple(c["dtypes"]))
            for k in kernels for c in k["suite"]]


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


def run_suite(device: str = "auto", kernels=None, dtypes=DTYPES, quick: bool = False,
              cache: str = "cold", progress: bool = True,
              on_row: Callable[[dict], None] | None = None, configs: Iterable[Config] | None = None
              ) -> pd.DataFrame:
    """Measure every selected suite configuration in every dtype; one row per measurement.

    ``kernels`` filters by kernel or family name; ``quick`` shrinks every shape and the repeat
    counts so a CPU run takes seconds. ``on_row(row)`` is called as each row is measured (the CLI
    writes the run folder row by row with it). A configuration that fails (e.g. out of memory) is
    reported on stderr and listed in ``df.attrs["errors"]``; the rest still run.
    """
    # A suite measures for minutes: a bad argument must fail before the first measurement.
    device = _args.text("device", device)
    kernels = None if kernels is None else _args.texts("kernels", kernels)
    dtypes = _args.texts("dtypes", dtypes)
    quick, progress = _args.flag("quick", quick), _args.flag("progress", progress)
    cache = _args.text("cache", cache, ("cold", "hot"))
    if on_row is not None and not callable(on_row):
        raise ValueError(f"on_row: expected a function of one row (a dict) or None, got {_args.show(on_row)}")
    if configs is not None:
        if isinstance(configs, (str, bytes)) or not isinstance(configs, Iterable):
            raise ValueError(f"configs: expected a list of bwprof.suite.Config, got {_args.show(configs)}")
        configs = list(configs)
        for c in configs:
            if not isinstance(c, Config):
                raise ValueError(f"configs: expected bwprof.suite.Config entries, got {_args.show(c)}")
    for dt in dtypes:
        if dt not in DTYPES:
            raise ValueError(f"dtypes: unknown dtype {dt!r} (known: {', '.join(DTYPES)})")
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
