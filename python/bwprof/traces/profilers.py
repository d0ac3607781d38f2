"""Build and run profiler command lines (rocprofv3, rocprof, ncu, nsys) and read what they wrote.

A run never crashes on the things users meet every day: a profiler that is not installed, or
hardware counters that are refused (consumer RDNA GPUs have no counter access; ncu needs
counter permission). Each gets one clear sentence, then the run falls back to a kernel trace,
or to running the command un-profiled (timing only).
"""

import datetime as _dt
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TraceFormatError
from .readers import read_dir

TOOLS = ("rocprofv3", "rocprof", "ncu", "nsys")

from .kernels import NCU_FLOP_METRICS, ROCPROF_FLOP_COUNTERS

# Counter sets for AMD tools. "basic": how many waves and what they execute, plus L2 hits;
# "extended" adds LDS waits/bank conflicts, wave cycles and DRAM bytes (FETCH_SIZE/WRITE_SIZE,
# in kilobytes); "bandwidth": DRAM bytes alone (the per-kernel roofline table); "roofline" adds
# the VALU and MFMA FLOP counts (MI200 and later). Large sets may need several passes on some GPUs;
# rocprofv3 then refuses them.
ROCPROF_COUNTERS = {
    "bandwidth": ["FETCH_SIZE", "WRITE_SIZE"],
    "roofline": ["FETCH_SIZE", "WRITE_SIZE"] + ROCPROF_FLOP_COUNTERS,
    "basic": ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_VMEM", "SQ_INSTS_LDS",
              "TCC_HIT", "TCC_MISS"],
    "extended": ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_VMEM", "SQ_INSTS_LDS",
                 "SQ_INSTS_SMEM", "SQ_WAIT_INST_LDS", "SQ_WAVE_CYCLES", "SQ_LDS_BANK_CONFLICT",
                 "TCC_HIT", "TCC_MISS", "FETCH_SIZE", "WRITE_SIZE"],
}

# Metric sets for ncu; gpu__time_duration.sum gives every kernel its duration. "bandwidth" also
# counts the FLOPs (SASS add/mul/fma per precision, and tensor-pipe activity, whose FLOPs those
# counts leave out), so that every kernel can be placed on the roofline; "roofline" is the same set.
_NCU_BANDWIDTH = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                  "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                  "lts__t_sector_hit_rate.pct", "lts__t_bytes.sum", "l1tex__t_bytes.sum"] + NCU_FLOP_METRICS
NCU_METRICS = {
    "bandwidth": _NCU_BANDWIDTH,
    "roofline": _NCU_BANDWIDTH,
    "occupancy": ["gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
                  "sm__maximum_warps_per_active_cycle_pct", "launch__waves_per_multiprocessor",
                  "launch__registers_per_thread", "launch__occupancy_limit_registers",
                  "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
                  "launch__occupancy_limit_blocks"],
    "sol": ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "lts__throughput.avg.pct_of_peak_sustained_elapsed",
            "l1tex__throughput.avg.pct_of_peak_sustained_active"],
}

# What tools print when counters are refused (permissions, unsupported GPU or counter).
_REFUSAL = re.compile(
    r"ERR_NVGPUCTRPERM|permission to access NVIDIA GPU Performance Counters"
    r"|aqlprofile API table load failed|counter[s]? (is |are )?not (available|supported)"
    r"|not supported on this (agent|device|GPU)|unsupported counter|invalid counter"
    r"|(unable to find|could not find|unknown|bad) counter|counter .{0,80} not found"
    r"|no (hardware )?counters? (are )?available|Permission denied.{0,40}(counter|perf)",
    re.IGNORECASE)


def counter_list(tool, counters):
    """The counter/metric names for ``counters`` ("basic", "extended", ncu set name, a list)."""
    if counters is None or counters == "none":
        return []
    if isinstance(counters, str):
        table = NCU_METRICS if tool == "ncu" else ROCPROF_COUNTERS
        if counters in table:
            return list(table[counters])
        names = [c for c in re.split(r"[,\s]+", counters) if c]
        if not all(re.fullmatch(r"[A-Za-z_][\w.\[\]]*", c) for c in names):
            raise ValueError(f"unknown counter set {counters!r} for {tool}; "
                             f"choose one of {', '.join(table)} or list counter names")
        return names
    return [str(c) for c in counters]


def build_command(tool, command, out_dir, counters=None):
    """The argv that profiles ``command`` with ``tool``, writing into ``out_dir``.

    Returns (argv, follow_up) where follow_up is a second argv to run afterwards (nsys stats)
    or None. ``counters``: None = the tool's default (kernel trace only; ncu: "bandwidth").
    """
    out = Path(out_dir)
    command = [str(c) for c in command]
    if tool == "rocprofv3":
        argv = ["rocprofv3", "--kernel-trace", "--stats", "--output-format", "csv",
                "-d", str(out), "-o", "bwprof"]
        names = counter_list(tool, counters)
        if names:
            argv += ["--pmc"] + names
        return argv + ["--"] + command, None
    if tool == "rocprof":
        argv = ["rocprof", "--stats", "--timestamp", "on"]
        names = counter_list(tool, counters)
        if names:
            # Legacy rocprof takes counters from an input file, one "pmc:" line per pass.
            out.mkdir(parents=True, exist_ok=True)
            (out / "input.txt").write_text("pmc: " + " ".join(names) + "\n")
            argv += ["-i", str(out / "input.txt")]
        return argv + ["-o", str(out / "results.csv")] + command, None
    if tool == "ncu":
        names = counter_list(tool, "bandwidth" if counters is None else counters)
        argv = ["ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
                "--log-file", str(out / "ncu_raw.csv")]
        if names:
            argv += ["--metrics", ",".join(names)]
        return argv + command, None
    if tool == "nsys":
        report = out / "report"
        argv = ["nsys", "profile", "--trace", "cuda", "--force-overwrite", "true",
                "-o", str(report)] + command
        follow = ["nsys", "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv",
                  "--force-export", "true", "--output", str(report), str(report) + ".nsys-rep"]
        return argv, follow
    raise ValueError(f"unknown profiler {tool!r}; choose one of {', '.join(TOOLS)}")


def make_run_dir(base="bwprof_profiles", tool="run"):
    """A new folder ``<base>/<YYYYmmdd-HHMMSS>_<tool>`` (suffixed -2, -3 ... if taken)."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(base) / f"{stamp}_{tool}"
    k = 2
    while path.exists():
        path = Path(base) / f"{stamp}_{tool}-{k}"
        k += 1
    path.mkdir(parents=True)
    return path


@dataclass
class ProfileRun:
    """What a profiling run did: exit code, folder, the kernel trace read back, and messages."""

    tool: str
    command: list
    returncode: int
    out_dir: object = None
    trace: object = None
    wall_time_s: float = 0.0
    timing_only: bool = False
    counters_refused: bool = False
    messages: list = field(default_factory=list)


def _run(argv, echo=True, log_prefix=None):
    """Run argv; returns (returncode, stdout, stderr, seconds). A missing program is rc 127."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace")
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except FileNotFoundError:
        rc, out, err = 127, "", f"{argv[0]}: command not found\n"
    except OSError as exc:
        rc, out, err = 126, "", f"{argv[0]}: cannot run ({exc.strerror})\n"
    seconds = time.perf_counter() - t0
    if echo:
        sys.stdout.write(out)
        sys.stderr.write(err)
    if log_prefix is not None:
        Path(str(log_prefix) + ".stdout.txt").write_text(out)
        Path(str(log_prefix) + ".stderr.txt").write_text(err)
    return rc, out, err, seconds


def _refusal(text):
    m = _REFUSAL.search(text or "")
    return m.group(0) if m else None


def _timing_only(run, command, echo):
    rc, _, _, seconds = _run(command, echo=echo)
    run.returncode, run.wall_time_s, run.timing_only = rc, seconds, True
    run.messages.append(f"The command ran un-profiled in {seconds:.3f} s (exit code {rc}).")
    return run


def run_profile(tool, command, out_dir=None, counters=None, base_dir="bwprof_profiles", echo=True):
    """Profile ``command`` with ``tool`` into a timestamped folder and read the kernel trace back.

    Missing tool -> the command runs un-profiled (timing only). Refused counters -> one more
    run with a kernel trace only (ncu falls back to nsys, else timing only). Never raises for
    tool failures; read ProfileRun.messages.
    """
    if tool not in TOOLS:
        raise ValueError(f"unknown profiler {tool!r}; choose one of {', '.join(TOOLS)}")
    command = [str(c) for c in command]
    if not command:
        raise ValueError("no command to profile")
    run = ProfileRun(tool=tool, command=command, returncode=0)
    if shutil.which(tool) is None:
        run.messages.append(f"{tool} was not found on PATH, so the command runs without a profiler"
                            " (timing only).")
        return _timing_only(run, command, echo)
    out = Path(out_dir) if out_dir is not None else make_run_dir(base_dir, tool)
    out.mkdir(parents=True, exist_ok=True)
    run.out_dir = out
    argv, follow = build_command(tool, command, out, counters)
    rc, stdout, stderr, seconds = _run(argv, echo=echo, log_prefix=out / tool)
    run.returncode, run.wall_time_s = rc, seconds
    text = stdout + stderr
    log = out / "ncu_raw.csv"
    if tool == "ncu" and log.exists():
        text += log.read_text(errors="replace")       # ncu writes its errors to --log-file too
    # ncu always reads counters (even a kernel's duration); nsys never does.
    wants_counters = tool == "ncu" or (tool != "nsys" and bool(counter_list(tool, counters)))
    reason = _refusal(text) if wants_counters else None
    if reason:
        run.counters_refused = True
        if tool == "ncu":
            if log.exists():
                log.rename(out / "ncu_refused.log")
            if shutil.which("nsys") is None:
                run.messages.append(f"ncu was refused hardware counters ({reason}) and nsys is not"
                                    " installed, so the command runs without a profiler (timing only).")
                return _timing_only(run, command, echo)
            run.messages.append(f"ncu was refused hardware counters ({reason}); falling back to an"
                                " nsys kernel trace (timing only, no counters).")
            tool = "nsys"
            argv, follow = build_command(tool, command, out, None)
        else:
            run.messages.append(f"{tool} was refused hardware counters ({reason}); falling back to a"
                                " kernel trace only.")
            argv, follow = build_command(tool, command, out, None)
        rc, stdout, stderr, seconds = _run(argv, echo=echo, log_prefix=out / (tool + "_fallback"))
        run.returncode, run.wall_time_s = rc, seconds
    if follow is not None:
        frc, _, ferr, _ = _run(follow, echo=False, log_prefix=out / (tool + "_stats"))
        if frc != 0:
            run.messages.append(f"'{' '.join(follow[:4])}' failed (exit code {frc}); see "
                                f"{out / (tool + '_stats.stderr.txt')}.")
    if rc != 0:
        run.messages.append(f"{tool} exited with code {rc}; its messages are in {out}.")
    try:
        run.trace = read_dir(out)
    except TraceFormatError as exc:
        run.messages.append(f"No kernel trace could be read from {out} ({exc.reason}).")
    return run
