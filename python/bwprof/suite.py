"""The default suite of reference-kernel configurations and the loop that runs it."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import pandas as pd

from . import _core
from . import arguments as _args
from . import spread as _spread
from .api import TIMINGS, measure

@dataclass(frozen=True)
class Config:
    """One suite entry: a kernel, a label, its full parameters and the --quick ones, and the
    label of the --quick shape (empty: the same label)."""

    kernel: str
    label: str
    params: dict
    quick: dict
    variants: tuple = ()  # implementations to compare where the backend has them; () = its default
    dtypes: tuple = ("fp32", "fp16")
    quick_label: str = ""
    default: bool = True  # run by a plain `bench`; False: only when its kernel or family is asked for

    def label_for(self, quick: bool) -> str:
        """The label of the shape that runs: the --quick one's when ``quick``."""
        return (self.quick_label or self.label) if quick else self.label


def all_configs() -> list[Config]:
    """Every configuration every family declares (kernels/<family>/family.cpp), in the order the
    kernels declare (``suite_order``); ``default`` is False for those that run only when asked
    for by name (peer copies, collectives)."""
    kernels = sorted(_core.kernels(), key=lambda k: k["suite_order"])  # stable: a folder keeps its order
    return [Config(k["name"], c["label"], dict(c["params"]), dict(c["quick"]), tuple(c["variants"]),
                   tuple(c["dtypes"]), c["quick_label"], bool(k.get("default_suite", True)))
            for k in kernels for c in k["suite"]]


DTYPES = ("fp32", "fp16", "bf16")  # every dtype the kernels know (bwprof.kernels() says which takes which)


def default_suite() -> list[Config]:
    """Every reference kernel at the shapes inference engineers care about: what a plain `bench` runs.

    Each kernel family declares its own configurations (kernels/<family>/family.cpp); the suite
    takes them in the order the kernels declare (``suite_order``)."""
    return [c for c in all_configs() if c.default]


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
    """Configurations whose kernel or family is in ``kernels`` (when None: those of the default suite).
    A name may leave out its underscores ("allreduce" for all_reduce)."""
    configs = list(configs)
    if kernels is None:
        return [c for c in configs if c.default]
    if isinstance(kernels, str):
        kernels = [kernels]
    known = {c.kernel for c in configs} | {_family_of(c.kernel) for c in configs}
    squeezed = {k.replace("_", ""): k for k in known}
    wanted = {k if k in known else squeezed.get(k.replace("_", "").replace("-", ""), k) for k in kernels}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"kernels: unknown kernel or family {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")
    return [c for c in configs if c.kernel in wanted or _family_of(c.kernel) in wanted]


class _Progress:
    """A one-line progress bar on stderr (a plain line per step when stderr is not a terminal); in
    a Jupyter notebook, a bar that updates in place in the cell's output."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done = total, enabled, 0
        self.tty = enabled and sys.stderr.isatty()
        self.t0 = time.monotonic()
        self.notebook = None
        if enabled:
            from .display import NotebookBar, in_notebook
            if in_notebook():
                try:
                    self.notebook = NotebookBar(total)
                except Exception:  # noqa: BLE001 - no display: the text lines instead
                    self.notebook = None

    def step(self, text: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        if self.notebook is not None:
            self.notebook.update(self.done, time.monotonic() - self.t0, text)
            return
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
              cache: str = "cold", progress: bool = True, timing: str = "single",
              on_row: Callable[[dict], None] | None = None, configs: Iterable[Config] | None = None,
              target_rel_spread: float | None = None) -> pd.DataFrame:
    """Measure every selected suite configuration in every dtype; one row per measurement.

    ``device="all"`` measures every GPU in turn (the CPU where there is none), one row per device.
    ``kernels`` filters by kernel or family name; ``quick`` shrinks every shape and the repeat
    counts so a CPU run takes seconds; ``timing`` is "single" or "graph" (see
    :func:`bwprof.measure`). ``on_row(row)`` is called as each row is measured (the CLI writes the
    run folder row by row with it). ``target_rel_spread`` (None, or a fraction in (0, 1]) repeats each
    measurement until its relative spread is under it, within the suite's time budget per row (see
    :func:`bwprof.measure`); one :class:`bwprof.SpreadTargetWarning` names the rows that missed it.
    A configuration that fails (e.g. out of memory) is reported on stderr and listed in
    ``df.attrs["errors"]``; the rest still run.
    """
    # A suite measures for minutes: a bad argument must fail before the first measurement.
    device = _args.text("device", device)
    kernels = None if kernels is None else _args.texts("kernels", kernels)
    dtypes = _args.texts("dtypes", dtypes)
    quick, progress = _args.flag("quick", quick), _args.flag("progress", progress)
    cache = _args.text("cache", cache, ("cold", "hot"))
    timing = _args.text("timing", timing, TIMINGS)
    target_rel_spread = _spread.target("target_rel_spread", target_rel_spread)
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
    if device == "all":
        with _spread.gathered("run_suite", stacklevel=4):
            return _on_every_device(kernels=kernels, dtypes=dtypes, quick=quick, cache=cache, progress=progress,
                                    timing=timing, on_row=on_row, configs=configs,
                                    target_rel_spread=target_rel_spread or None)
    info = _core.require_device(device)  # validates the device (and its code) before any work
    chosen = select(configs if configs is not None else all_configs(), kernels)
    backend = "cpu" if info["kind"] == "cpu" else "gpu"
    jobs, unsupported = [], {}
    for c in chosen:
        have = _variants_on(c.kernel, backend)
        if not have:
            unsupported.setdefault(c.kernel, []).append(c.label_for(quick))
            continue
        wanted = [v for v in c.variants if v in have] or [have[0]]
        # A variant that does not take a dtype (the FP16-only tensor GEMM in FP32) is left out.
        jobs += [(c, v, dt) for v in wanted for dt in dtypes
                 if dt in c.dtypes and v in _variants_on(c.kernel, backend, dt)]
    skipped = [f"{k} ({', '.join(labels)}): no {backend} implementation in this build" for k, labels in unsupported.items()]
    counts = dict(warmup=1, repeats=3, min_time_s=0.005, max_time_s=0.5) if quick else \
        dict(warmup=2, repeats=10, min_time_s=0.05, max_time_s=2.0)
    counts["target_rel_spread"] = target_rel_spread or None  # 0.0: no target
    with _spread.gathered("run_suite", stacklevel=4):  # one warning for the rows that missed it
        rows, errors = _run_jobs(jobs, quick, device, cache, timing, counts, on_row, progress)
    df = pd.DataFrame(rows, columns=list(_core.columns()) + ["label"])
    df.attrs["errors"] = errors
    df.attrs["skipped"] = skipped
    return df


def _run_jobs(jobs, quick, device, cache, timing, counts, on_row, progress):
    """Each (config, variant, dtype) measured in turn: the rows, and the errors of those that failed."""
    bar = _Progress(len(jobs), progress)
    rows, errors = [], []
    for c, variant, dt in jobs:
        params = c.quick if quick else c.params
        label = c.label_for(quick)  # it names the shape that runs
        try:
            m = measure(c.kernel, dtype=dt, device=device, variant=variant, cache=cache, timing=timing,
                        **counts, **params)
        except (ValueError, MemoryError, RuntimeError) as e:
            errors.append({"kernel": c.kernel, "dtype": dt, "label": label, "error": f"{type(e).__name__}: {e}"})
            if progress:
                sys.stderr.write(f"\nbwprof: {c.kernel} {dt} ({label}) failed: {e}\n")
            bar.step(f"{c.kernel} {dt} FAILED")
            continue
        row = m.to_dict()
        row["label"] = label
        rows.append(row)
        if on_row is not None:
            on_row(row)
        bar.step(f"{c.kernel} {dt} {label}: {row['bandwidth_gbs']:.1f} GB/s")
    return rows, errors


def all_devices() -> list[str]:
    """What ``device="all"`` measures: every GPU, or the CPU on a machine without one."""
    gpus = [d["id"] for d in _core.devices() if d["kind"] == "gpu"]
    return gpus or ["cpu"]


def _on_every_device(**kw) -> pd.DataFrame:
    """The suite on each device of :func:`all_devices` in turn; one row per device and measurement
    (the ``device`` column tells them apart)."""
    frames, errors, skipped = [], [], []
    for dev in all_devices():
        df = run_suite(device=dev, **kw)
        frames.append(df)
        errors += [dict(e, device=dev) for e in df.attrs.get("errors", [])]
        skipped += [f"{dev}: {s}" for s in df.attrs.get("skipped", [])]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(_core.columns()) + ["label"])
    out.attrs["errors"] = errors
    out.attrs["skipped"] = skipped
    return out
