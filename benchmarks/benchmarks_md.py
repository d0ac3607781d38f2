"""docs/BENCHMARKS.md from the result files in docs/results/: one table per family and machine.

Each table holds the current figure of every configuration measured on that machine (a later
measurement of the same thing replaces an earlier one; git keeps how the figures moved), with the date
and commit it was measured at and what ran it. A test checks that the committed doc is this output.

    PYTHONPATH=python python3 benchmarks/benchmarks_md.py            # rewrite docs/BENCHMARKS.md
    PYTHONPATH=python python3 benchmarks/benchmarks_md.py --check    # exit 1 if it is not current
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import result_files as rf

DOC = rf.ROOT / "docs" / "BENCHMARKS.md"

# Families in the order a reader meets them, each with what its table shows.
FAMILIES = {
    "stream": "the STREAM kernels and the clean read that set the memory peak",
    "fill": "writing only",
    "gemm": "matrix products: GEMM (`tiled`, `tensor`, the vendor's), GEMV, the Q/K/V projection",
    "q4_0": "Q4_0 weights: dequantization and the fused matmul (one row of X is a GEMV)",
    "kv_cache": "appending new keys and values to a contiguous or paged cache",
    "layernorm": "layer normalization",
    "bias_act": "bias + activation, fused into one pass or not",
    "attention": "flash attention, prefill and decode, contiguous and paged K/V",
    "roofline": "the intensity sweep that walks from the memory roof to the compute roof",
    "peaks": "every roof bwprof measures: memory, caches, vector and matrix units, the size curve",
    "transfer": "copies between host and GPU, in the GPU and memset",
    "p2p": "copies between two GPUs",
    "collective": "NCCL collectives (bus bandwidth as nccl-tests defines it)",
    "model": "a model's whole step, captured as one CUDA graph",
    "user": "`bwprof.profile` timing other people's kernels",
    "traces": "reading large profiler traces (no GPU)",
}

# (column, header, kind) of every column a table may show.
COLUMNS = {c: (h, k) for c, h, k in [
    ("label", "label", "text"), ("kernel", "kernel", "code"), ("variant", "variant", "text"),
    ("dtype", "dtype", "text"), ("shape", "shape", "code"), ("_how", "timing", "text"),
    ("time_median_us", "us", "num"), ("time_min_us", "best us", "num"),
    ("bandwidth_gbs", "GB/s", "num"), ("bandwidth_pct_peak", "% peak", "pct"),
    ("bandwidth_pct_attainable", "% attainable", "pct"), ("bandwidth_pct_theoretical", "% datasheet", "pct"),
    ("size_fixed_cost_us", "t0 us", "num"), ("size_bandwidth_gbs", "BW GB/s", "num"),
    ("_tflops", "TFLOP/s", "num"), ("compute_pct_peak", "% compute", "pct"), ("bound", "bound", "text"),
    ("peer", "peer", "text"), ("peer_time_us", "peer us", "num"), ("_vs_peer", "x peer", "ratio"),
    ("peer_bandwidth_gbs", "peer GB/s", "num"), ("_peer_tflops", "peer TFLOP/s", "num"),
    ("_checked", "checked", "text"), ("note", "note", "text"), ("_commit", "commit", "code")]}
# What a family's table shows (of the columns any of its rows fills); "best us" only where a row has
# no median.
_MEMORY = ["label", "kernel", "variant", "dtype", "shape", "_how", "time_median_us", "time_min_us",
           "bandwidth_gbs", "bandwidth_pct_peak", "bandwidth_pct_attainable", "bound", "peer", "peer_time_us",
           "_vs_peer", "peer_bandwidth_gbs", "_checked", "note", "_commit"]
_COMPUTE = _MEMORY[:11] + ["_tflops", "compute_pct_peak"] + _MEMORY[11:]
SHOWN = {"gemm": _COMPUTE, "q4_0": _COMPUTE, "attention": _COMPUTE, "roofline": _COMPUTE,
         "peaks": ["kernel", "variant", "dtype", "shape", "bandwidth_gbs", "_tflops", "bandwidth_pct_theoretical",
                   "size_fixed_cost_us", "size_bandwidth_gbs", "peer", "peer_bandwidth_gbs", "_peer_tflops", "note",
                   "_commit"]}


def _float(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _num(v: float) -> str:
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _derived(r: dict, commits: int) -> dict:
    """The cells a row shows that its file does not hold as such."""
    out = dict(r)
    cache, timing = r.get("cache", "cold"), r.get("timing", "single")
    out["_how"] = f"{timing}, {cache}" if (cache, timing) != ("cold", "single") else None
    g, pg = _float(r.get("gflops")), _float(r.get("peer_gflops"))
    out["_tflops"] = g / 1e3 if g is not None else None
    out["_peer_tflops"] = pg / 1e3 if pg is not None else None
    t, pt = _float(r.get("time_median_us")), _float(r.get("peer_time_us"))
    out["_vs_peer"] = pt / t if t and pt else None
    out["_checked"] = {"True": "yes", "False": "**no**"}.get(r.get("verified"))
    out["_commit"] = r["commit"] if commits > 1 else None
    return out


def _cell(v, kind: str) -> str:
    if v is None or v == "":
        return ""
    if kind in ("num", "pct", "ratio"):
        f = _float(v)
        if f is None:
            return str(v)
        return f"{f:.1f}" if kind == "pct" else f"{f:.2f}x" if kind == "ratio" else _num(f)
    text = str(v).replace("|", "\\|")
    return f"`{text}`" if kind == "code" else text


def _table(family: str, rows: list[dict]) -> list[str]:
    commits = len({r["commit"] for r in rows})
    rows = [_derived(r, commits) for r in rows]
    if all(r["_checked"] != "**no**" for r in rows):
        for r in rows:
            r["_checked"] = None
    if all(r.get("time_median_us") for r in rows):
        for r in rows:
            r.pop("time_min_us", None)
    cols = [(c, *COLUMNS[c]) for c in SHOWN.get(family, _MEMORY) if any(r.get(c) not in (None, "") for r in rows)]
    lines = ["| " + " | ".join(h for _, h, _ in cols) + " |",
             "|" + "|".join("---:" if k in ("num", "pct", "ratio") else "---" for _, _, k in cols) + "|"]
    lines += ["| " + " | ".join(_cell(r.get(c), k) for c, _, k in cols) + " |" for r in rows]
    return lines


def _anchor(title: str) -> str:
    return "".join(ch for ch in title.lower().replace(" ", "-") if ch.isalnum() or ch in "-_")


def render(folder: str | Path = rf.FOLDER) -> str:
    """The whole doc, from the folder's current rows."""
    rows = rf.current(folder)
    families = list(FAMILIES) + sorted({r["family"] for r in rows} - set(FAMILIES))
    newest: dict[str, str] = {}
    for r in rows:
        newest[r["machine"]] = max(newest.get(r["machine"], ""), r["date"])
    machines = sorted(newest, key=lambda m: (-int(newest[m][:10].replace("-", "")), m))
    names = {r["machine"]: r["device_name"] for r in rows}
    out = ["# Measured results", "",
           "Generated by `benchmarks/benchmarks_md.py` from the result files in `docs/results/` (their format:",
           "`docs/results/README.md`); regenerate it, do not edit it. Each table holds the current figure of every",
           "configuration measured on one machine, with the date and commit it was measured at and what ran it;",
           "how the figures moved over time is in git's history of `docs/results/`. Speed targets are checked by",
           "the benchmark scripts, never by unit tests.", "",
           "Units: us = microseconds (the median of the timed runs unless the column says best); GB/s = 10^9",
           "bytes a second (each input read once, each output written once); TFLOP/s = 10^12 FLOP a second;",
           "x peer = the peer's time over bwprof's (above 1: bwprof is faster). `timing` is empty for",
           "single launches after an L2 flush (`single, cold`), the default.", "",
           "Machines: " + "; ".join(f"`{m}` {names[m]}" for m in machines) + ".", ""]
    present = [f for f in families if any(r["family"] == f for r in rows)]
    out += [f"- [`{f}`](#{_anchor(f)}): {FAMILIES.get(f, '')}".rstrip(": ") for f in present] + [""]
    for fam in present:
        out += [f"## {fam}", ""]
        if fam in FAMILIES:
            out += [FAMILIES[fam][0].upper() + FAMILIES[fam][1:] + ".", ""]
        for m in machines:
            sel = [r for r in rows if r["family"] == fam and r["machine"] == m]
            if not sel:
                continue
            out += [f"### {fam} on {names[m]} (`{m}`)", ""]
            suites: dict[str, dict] = {}
            for r in sel:
                suites.setdefault(r["suite"], r)
            for s, r in suites.items():
                out.append(f"- `{s}`: {r['date']}, commit `{r['commit']}`; {r['source']}.")
            out += [""] + _table(fam, sel) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=str(rf.FOLDER), help="the result files (default docs/results)")
    ap.add_argument("--out", default=str(DOC), help="the doc to write (default docs/BENCHMARKS.md)")
    ap.add_argument("--check", action="store_true", help="only say whether the doc is current (exit 1 if not)")
    args = ap.parse_args(argv)
    try:
        text = render(args.folder)
    except ValueError as e:
        print(f"benchmarks_md: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print(f"{out} is not the output of benchmarks/benchmarks_md.py: run it", file=sys.stderr)
            return 1
        return 0
    from bwprof.files import atomic_write_text

    atomic_write_text(out, text)
    print(f"wrote {out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
