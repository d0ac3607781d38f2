"""Reading a ``.ncu-rep`` with NVIDIA's ``ncu_report`` module, standard library only, so that it
can run in a child process: a crash inside the vendor module (it has segfaulted Python 3.12
with Nsight Compute 2025.3.1) then ends the child, not the user's process.

    python3 ncu_report_child.py REPORT OUT.pickle

writes {"rows": [(kernel name, {metric: (value, unit)}), ...]} to OUT.pickle and exits 0. It
exits 3 when load_report or a later call raises ({"error": ..., "stage": ...} in OUT.pickle),
4 when no ncu_report module is found. Before each call into the module it writes the stage
to stderr ("stage: load_report", "stage: action 2 metric dram__bytes_read.sum value"), so the
parent can say where a crash happened.

The module's API: ``load_report(path)`` gives a context of ranges, each range holds actions
(one per profiled kernel launch), and an action's metrics are read by name
(``metric_by_name``), each with a ``value()`` and a ``unit()``.
"""

import glob
import importlib
import importlib.util
import os
import pickle
import shutil
import sys
from pathlib import Path

# Launch metrics only: device attributes repeat per launch and make frames wide.
DEVICE_PREFIXES = ("device__attribute_", "nvlink__", "numa__", "c2clink__")


def candidate_dirs():
    """Folders that may hold ncu_report.py, most specific first: $BWPROF_NCU_REPORT_PATH alone when
    it is set, else beside the ``ncu`` on PATH, then the usual install folders."""
    dirs = []
    env = os.environ.get("BWPROF_NCU_REPORT_PATH")
    if env:
        # Named by the user: only there (an install elsewhere must not stand in for it).
        return list(dict.fromkeys(d for d in env.split(os.pathsep) if d))
    ncu = shutil.which("ncu")
    if ncu:
        real = Path(os.path.realpath(ncu))
        for base in (real.parent, real.parent.parent):
            dirs.append(str(base / "extras" / "python"))
            dirs.extend(sorted(glob.glob(str(base / "nsight-compute*" / "extras" / "python")), reverse=True))
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python",
                    "/usr/local/cuda*/nsight-compute*/extras/python",
                    "/usr/local/NVIDIA-Nsight-Compute*/extras/python"):
        dirs.extend(sorted(glob.glob(pattern), reverse=True))
    return list(dict.fromkeys(dirs))


def locate_ncu_report():
    """Where ncu_report would be imported from (a folder, or "" when it is on sys.path), or
    None. Nothing is imported."""
    for folder in candidate_dirs():
        if (Path(folder) / "ncu_report.py").exists():
            return folder
    try:
        if importlib.util.find_spec("ncu_report") is not None:
            return ""
    except (ImportError, ValueError):
        pass
    return None


def find_ncu_report():
    """NVIDIA's ncu_report module (imported), or None when no Nsight Compute install provides it."""
    for folder in candidate_dirs():
        if (Path(folder) / "ncu_report.py").exists():
            sys.path.insert(0, folder)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(folder)
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        return None


def _stage(text):
    sys.stderr.write(f"stage: {text}\n")
    sys.stderr.flush()


def _raw_value(metric, stage):
    """(value, unit) of one metric: value a float, a str or None, as the module gives it."""
    if metric is None:
        return None, ""
    try:
        if hasattr(metric, "has_value"):
            stage("has_value")
            if not metric.has_value():
                return None, ""
        stage("value")
        value = metric.value()
    except Exception:                   # the module raises its own types for odd metrics
        return None, ""
    if isinstance(value, str):
        return value, ""
    if isinstance(value, bool):
        return float(value), ""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return str(value), ""
    stage("unit")
    try:
        unit = metric.unit() if hasattr(metric, "unit") else ""
    except Exception:
        unit = ""
    return number, str(unit or "")


def _action_name(ncu_report, action):
    base = getattr(getattr(ncu_report, "IAction", None), "NameBase_DEMANGLED", None)
    if base is not None:
        try:
            return action.name(base)
        except TypeError:
            pass
    return action.name()


def extract(ncu_report, path, trace=None):
    """[(kernel name, {metric: (value, unit)})] of every profiled launch in the report.

    Raises LoadError when load_report fails, ReadError when a later call does. ``trace``
    (a callable) is told each stage before the call into the module.
    """
    trace = trace or (lambda text: None)
    trace("load_report")
    try:
        context = ncu_report.load_report(str(path))
    except Exception as exc:
        raise LoadError(str(exc)) from None
    rows = []
    where = "ranges"
    try:
        trace("num_ranges")
        for r in range(context.num_ranges()):
            where = f"range {r}"
            trace(where)
            rng = context.range_by_idx(r)
            for a in range(rng.num_actions()):
                where = f"range {r} action {a}"
                trace(where)
                action = rng.action_by_idx(a)
                trace(f"{where} name")
                name = _action_name(ncu_report, action)
                trace(f"{where} metric_names")
                metrics = {}
                for metric_name in action.metric_names():
                    if metric_name.startswith(DEVICE_PREFIXES):
                        continue
                    step = f"{where} metric {metric_name}"
                    trace(f"{step} metric_by_name")
                    metrics[metric_name] = _raw_value(action.metric_by_name(metric_name),
                                                      lambda s, step=step: trace(f"{step} {s}"))
                rows.append((str(name), metrics))
    except Exception as exc:
        raise ReadError(f"{exc} (at {where})") from None
    return rows


class LoadError(Exception):
    """load_report raised."""


class ReadError(Exception):
    """A call after load_report raised."""


def main(argv):
    report, out = argv[1], argv[2]
    extra = os.environ.get("BWPROF_NCU_CHILD_SYS_PATH")
    if extra:
        sys.path.extend(p for p in extra.split(os.pathsep) if p and p not in sys.path)
    try:
        import faulthandler
        faulthandler.enable()           # a crash prints the Python stack to stderr
    except Exception:
        pass
    module = find_ncu_report()
    if module is None:
        return 4
    try:
        rows = extract(module, report, trace=_stage)
    except LoadError as exc:
        with open(out, "wb") as f:
            pickle.dump({"error": "load", "detail": str(exc)}, f)
        return 3
    except ReadError as exc:
        with open(out, "wb") as f:
            pickle.dump({"error": "read", "detail": str(exc)}, f)
        return 3
    with open(out + ".part", "wb") as f:
        pickle.dump({"rows": rows, "module": getattr(module, "__file__", None)}, f)
    os.replace(out + ".part", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
