"""The difference between two traces: what got slower or faster, what appeared or disappeared,
and which changes explain the change in total GPU time.

Kernels are matched by their short name (templates, arguments and namespaces trimmed), so the
same kernel with other template arguments or a renamed clone still matches; categories are
matched by name, which is what makes a rocpd database of one vendor comparable with an Nsight
Systems export of another: few kernel names are shared, the categories are.

GPU time is the sum of durations as in breakdown(); copies and fills count when the trace
holds them. Times are totals over the whole trace: compare traces of the same work (same
number of steps), or look at calls and the average per call.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .categories import categorize
from .table import check_frame, drop_invalid_flag

# Explaining the change: the largest changes until they account for this share of it.
EXPLAIN_SHARE = 0.8


@dataclass
class TraceDiff:
    """diff() result: DataFrames and the totals. ``summary()`` is a one-paragraph text."""

    kernels: pd.DataFrame
    categories: pd.DataFrame
    appeared: pd.DataFrame
    disappeared: pd.DataFrame
    explain: pd.DataFrame
    totals: dict = field(default_factory=dict)
    labels: tuple = ("a", "b")

    def summary(self):
        t = self.totals
        a, b = self.labels
        lines = [f"GPU time {a}: {t['time_a_ns'] / 1e6:.3f} ms in {t['calls_a']} calls; "
                 f"{b}: {t['time_b_ns'] / 1e6:.3f} ms in {t['calls_b']} calls; "
                 f"change {t['delta_ns'] / 1e3:+.1f} us ({_pct_text(t['delta_pct'])})."]
        if not self.explain.empty and t["delta_ns"] != 0:
            names = ", ".join(str(x) for x in self.explain["kernel"].head(5))
            share = self.explain["cumulative_pct_of_change"].iloc[-1]
            lines.append(f"{len(self.explain)} kernel change(s) explain {share:.0f}% of it: {names}"
                         + (" ..." if len(self.explain) > 5 else "") + ".")
        if t.get("matched_kernels", 0) == 0 and t["kernels_a"] and t["kernels_b"]:
            lines.append("No kernel name is in both traces (another vendor or library?): "
                         "compare them by category.")
        return "\n".join(lines)


def _pct_text(value):
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "new"
    return f"{value:+.1f}%"


def _as_trace(x, drop_invalid=False):
    if isinstance(x, pd.DataFrame):
        return check_frame(x, drop_invalid)
    if isinstance(x, (str, Path)):
        from .readers import read
        return read(x, drop_invalid=drop_invalid)
    raise TypeError(f"diff() takes kernel-trace DataFrames or paths, not {type(x).__name__}")


def _totals(df, key, extra=()):
    """Per ``key``: time_ns, calls (and the first of each ``extra`` column)."""
    work = pd.DataFrame({
        key: df[key].astype(object),
        "time_ns": pd.to_numeric(df["duration_ns"], errors="coerce").fillna(0.0).astype(float),
        "calls": pd.to_numeric(df["calls"], errors="coerce").fillna(1).astype("int64"),
    })
    for col in extra:
        work[col] = df[col].astype(object)
    agg = {"time_ns": "sum", "calls": "sum", **{c: "first" for c in extra}}
    return work.groupby(key, sort=False, dropna=False).agg(agg)


def _compare(ta, tb, key, net):
    """Outer join of two per-key total tables with the change columns."""
    out = ta.merge(tb, how="outer", left_index=True, right_index=True, suffixes=("_a", "_b"))
    for col in ("time_ns", "calls"):
        for side in "ab":
            out[f"{col}_{side}"] = out[f"{col}_{side}"].fillna(0)
    out["calls_a"] = out["calls_a"].astype("int64")
    out["calls_b"] = out["calls_b"].astype("int64")
    out["delta_ns"] = out["time_ns_b"] - out["time_ns_a"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["delta_pct"] = np.where(out["time_ns_a"] > 0, 100.0 * out["delta_ns"] / out["time_ns_a"],
                                    np.where(out["time_ns_b"] > 0, np.inf, 0.0))
        out["avg_a_ns"] = out["time_ns_a"] / out["calls_a"].where(out["calls_a"] > 0)
        out["avg_b_ns"] = out["time_ns_b"] / out["calls_b"].where(out["calls_b"] > 0)
    in_a = out["calls_a"] > 0
    in_b = out["calls_b"] > 0
    out["status"] = np.select([in_a & in_b, in_b], ["both", "appeared"], "disappeared")
    out["pct_of_change"] = 100.0 * out["delta_ns"] / net if net else np.nan
    out.index.name = key
    out = out.reset_index()
    out["_abs"] = out["delta_ns"].abs()
    out = out.sort_values(["_abs", key], ascending=[False, True], kind="stable").drop(columns="_abs")
    return out.reset_index(drop=True)


def diff(a, b, rules=None, extra_rules=None, labels=("a", "b"), drop_invalid=False):
    """Compare trace ``b`` with trace ``a`` (DataFrames from read(), or paths).

    Returns a TraceDiff with:
    - ``kernels``: per kernel short name: category, time_ns_a/b, calls_a/b, avg_a/b_ns,
      delta_ns (b - a), delta_pct (of a; inf when new), status ("both", "appeared",
      "disappeared"), pct_of_change (share of the net change in total GPU time); largest
      changes first.
    - ``categories``: the same per category.
    - ``appeared`` / ``disappeared``: the kernels found only in b / only in a.
    - ``explain``: the largest kernel changes that together make up most (80%) of the net
      change, with their cumulative share.
    - ``totals``: time_a_ns, time_b_ns, calls_a, calls_b, delta_ns, delta_pct, kernels_a,
      kernels_b, matched_kernels.
    The kernel and category deltas each add up to the total delta. Rows with an invalid
    duration are an error naming them, or left out (with a warning) under
    ``drop_invalid=True``.
    """
    drop = drop_invalid_flag(drop_invalid)
    da = categorize(_as_trace(a, drop), rules=rules, extra_rules=extra_rules)
    db = categorize(_as_trace(b, drop), rules=rules, extra_rules=extra_rules)
    ka = _totals(da, "short_name", ("category",))
    kb = _totals(db, "short_name", ("category",))
    time_a, time_b = float(ka["time_ns"].sum()), float(kb["time_ns"].sum())
    net = time_b - time_a
    kernels = _compare(ka, kb, "short_name", net)
    kernels["category"] = kernels["category_b"].where(kernels["category_b"].notna(), kernels["category_a"])
    kernels = kernels.drop(columns=["category_a", "category_b"]).rename(columns={"short_name": "kernel"})
    kernels = kernels[["kernel", "category", "status", "time_ns_a", "time_ns_b", "delta_ns", "delta_pct",
                       "calls_a", "calls_b", "avg_a_ns", "avg_b_ns", "pct_of_change"]]
    categories = _compare(_totals(da, "category"), _totals(db, "category"), "category", net)
    categories = categories[["category", "status", "time_ns_a", "time_ns_b", "delta_ns", "delta_pct",
                             "calls_a", "calls_b", "avg_a_ns", "avg_b_ns", "pct_of_change"]]
    appeared = kernels[kernels["status"] == "appeared"].reset_index(drop=True)
    disappeared = kernels[kernels["status"] == "disappeared"].reset_index(drop=True)
    totals = {
        "time_a_ns": time_a, "time_b_ns": time_b,
        "calls_a": int(ka["calls"].sum()), "calls_b": int(kb["calls"].sum()),
        "delta_ns": net,
        "delta_pct": 100.0 * net / time_a if time_a > 0 else (np.inf if time_b > 0 else 0.0),
        "kernels_a": int(len(ka)), "kernels_b": int(len(kb)),
        "matched_kernels": int((kernels["status"] == "both").sum()),
    }
    return TraceDiff(kernels=kernels, categories=categories, appeared=appeared,
                     disappeared=disappeared, explain=_explain(kernels, net), totals=totals,
                     labels=tuple(labels))


def _explain(table, net, share=EXPLAIN_SHARE):
    """The largest changes (by size) until their sum reaches ``share`` of the net change."""
    cols = ["kernel", "category", "status", "delta_ns", "pct_of_change", "cumulative_pct_of_change"]
    if net == 0 or table.empty:
        return pd.DataFrame(columns=cols)
    cumulative = table["delta_ns"].cumsum() / net
    reached = np.flatnonzero(cumulative.to_numpy() >= share)
    k = int(reached[0]) + 1 if len(reached) else len(table)
    out = table.head(k).copy()
    out["cumulative_pct_of_change"] = 100.0 * cumulative.head(k).to_numpy()
    return out[cols].reset_index(drop=True)


def plot_diff(result, path, by="kernel", top=15):
    """Save a horizontal bar chart of the largest changes (microseconds, b - a) to ``path``."""
    from ..plots.bars import hbars
    from ..plots.figure import _figure

    table = result.kernels if by == "kernel" else result.categories
    label = "kernel" if by == "kernel" else "category"
    rows = table.head(top)
    fig = _figure(8, 0.35 * max(len(rows), 1) + 1.4)
    ax = fig.add_subplot(1, 1, 1)
    colors = ["#c0392b" if d > 0 else "#2e86c1" for d in rows["delta_ns"]]
    hbars(ax, rows["delta_ns"] / 1e3, [str(x)[:50] for x in rows[label]], colors=colors)
    ax.axvline(0, color="black", linewidth=0.8)
    a, b = result.labels
    ax.set_xlabel(f"change in GPU time, {b} - {a} (us); red: slower, blue: faster")
    ax.set_title(f"Largest changes by {label} (total {result.totals['delta_ns'] / 1e3:+.1f} us)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
