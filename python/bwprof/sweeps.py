"""``sweep``: the user's callable profiled at every point of a grid, one DataFrame of rows, as
Triton's ``perf_report`` does; the rows measured before a failing point kept on its exception, and
the whole sweep bounded by ``max_total_s``."""
from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable

import pandas as pd

from . import _core
from . import spread as _spread
from .usercode import _name_of, add_note, bound_seconds, profile

# The bound on a whole sweep (seconds; math.inf: none).
DEFAULT_SWEEP_MAX_TOTAL_S = 3600.0
# Where sweep leaves the rows it measured before a point failed (the exception's attribute).
PARTIAL = "bwprof_partial"


class _Points:
    """A grid's points, made one at a time (a product of 10^9 is never held), with their count and
    every key they have."""

    def __init__(self, keys: list, make, count: int):
        self.keys, self._make, self.count = keys, make, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return iter(self._make())

    def __getitem__(self, i: int) -> dict:
        return next(itertools.islice(self._make(), i, None))


def _product(values: list):
    """itertools.product of sequences, which never copies them (it holds each input as a tuple)."""
    index = [0] * len(values)
    while True:
        yield tuple(v[i] for v, i in zip(values, index))
        k = len(values) - 1
        while k >= 0:
            index[k] += 1
            if index[k] < len(values[k]):
                break
            index[k] = 0
            k -= 1
        if k < 0:
            return


def _grid_points(grid: Any) -> _Points:
    if isinstance(grid, dict):
        if not grid:
            raise ValueError("grid: empty")
        keys = list(grid)
        values = []
        for k in keys:
            v = grid[k]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise TypeError(f"grid[{k!r}]: expected a list of values, got {type(v).__name__}")
            v = v if isinstance(v, range) else list(v)  # a range of 10^12 stays a range
            if not len(v):
                raise ValueError(f"grid[{k!r}]: empty list")
            values.append(v)
        return _Points(keys, lambda: (dict(zip(keys, combo)) for combo in _product(values)),
                       math.prod(len(v) for v in values))
    if isinstance(grid, (list, tuple)) and grid and all(isinstance(p, dict) for p in grid):
        points = [dict(p) for p in grid]
        return _Points(list(dict.fromkeys(k for p in points for k in p)), lambda: iter(points), len(points))
    raise TypeError("grid: expected a dict of lists (every combination) or a non-empty list of dicts")


def _cell(v: Any) -> Any:
    return v if isinstance(v, (bool, int, float, str)) or v is None else str(v)


def sweep(fn_factory: Callable, grid: Any, *, name: str | None = None,
          max_total_s: float = DEFAULT_SWEEP_MAX_TOTAL_S, **profile_kwargs: Any) -> pd.DataFrame:
    """Profile the callable ``fn_factory(**point)`` builds at every point of ``grid`` (a dict of
    lists, taken as every combination, or a list of dicts), as Triton's ``perf_report`` does, and
    return one DataFrame: the grid's columns (prefixed ``grid_`` where a name is a result column),
    then the result columns. The factory returns a callable, a tuple ``(fn, *args)``, or a dict of
    ``profile`` arguments with ``fn`` (and ``args``); ``profile_kwargs`` apply to every point.
    Each row's ``shape`` is the point, e.g. ``n=4096,dtype=float16``.

    ``max_total_s`` bounds the whole sweep (default 3600 s; ``math.inf`` lifts it): after its first
    points (the faster of the first two, the first paying one-time costs such as compiles and the
    device's peaks), and after each point from then on, the time so far plus the points left at
    the fastest point's time is the estimate; past the bound the sweep stops with a ValueError
    saying how to allow it. Each point's ``profile`` is bounded by what is left of it. With
    ``target_rel_spread=`` (see :func:`profile`), the points that missed it are named in one
    :class:`bwprof.SpreadTargetWarning` at the end.

    A point that fails (the factory or the callable raises, bwprof refuses an argument, the bound
    is reached, Ctrl-C) stops the sweep with that exception, of its own type, and keeps the rows
    measured before it: the exception's ``bwprof_partial`` attribute holds them as the DataFrame
    the sweep would have returned, and a note (PEP 678) names the point."""
    if not callable(fn_factory):
        raise TypeError(f"fn_factory: expected a callable, got {type(fn_factory).__name__}")
    points = _grid_points(grid)
    max_total_s = bound_seconds("max_total_s", max_total_s)
    columns = list(_core.columns())
    base_name = name if name is not None else _name_of(fn_factory)
    grid_cols = [f"grid_{k}" if k in columns else k for k in points.keys]
    rows: list = []
    fastest = math.inf
    start = time.perf_counter()
    if "target_rel_spread" in profile_kwargs:  # checked before the first point, as profile checks it
        _spread.target("target_rel_spread", profile_kwargs["target_rel_spread"])
    # Points whose rows missed a spread target are named in one warning, at the end.
    with _spread.gathered("sweep", stacklevel=4):
        for i, point in enumerate(points):
            t0 = time.perf_counter()
            try:
                left = max_total_s - (t0 - start)
                rows.append(_sweep_point(fn_factory, point, profile_kwargs, base_name, columns,
                                         left if left > 0 else 1e-9))
            except BaseException as e:  # noqa: BLE001 - every failure keeps the rows measured
                _keep_partial(e, pd.DataFrame(rows, columns=grid_cols + columns), i, len(points), point)
                raise
            fastest = min(fastest, time.perf_counter() - t0)
            done = i + 1
            if done < len(points) and (done >= 2 or len(points) <= 2):
                elapsed = time.perf_counter() - start
                estimate = elapsed + fastest * (len(points) - done)
                if estimate > max_total_s:
                    err = ValueError(f"max_total_s: this sweep of {len(points)} points would take about "
                                     f"{estimate:.3g} s ({done} took {elapsed:.3g} s, the fastest {fastest:.3g} s), "
                                     f"more than max_total_s={max_total_s:g} s; pass a larger max_total_s= (math.inf "
                                     f"lifts the bound) or sweep fewer points")
                    _keep_partial(err, pd.DataFrame(rows, columns=grid_cols + columns), done, len(points), points[done],
                                  stopped=True)
                    raise err
    return pd.DataFrame(rows, columns=grid_cols + columns)


def _keep_partial(err: BaseException, partial: pd.DataFrame, index: int, total: int, point: dict,
                  stopped: bool = False) -> None:
    try:
        setattr(err, PARTIAL, partial)
    except (AttributeError, TypeError):  # an exception type that takes no attributes
        pass
    what = "stopped before" if stopped else "failed at"
    add_note(err, f"bwprof.sweep: {what} point {index + 1} of {total} ({_point_text(point)}); the {len(partial)} "
                  f"row(s) measured before it are kept as this exception's .{PARTIAL} (a DataFrame)")


def _point_text(point: dict) -> str:
    return ", ".join(f"{k}={_cell(v)}" for k, v in point.items())


def _sweep_point(fn_factory: Callable, point: dict, profile_kwargs: dict, base_name: str, columns: list,
                 bound_s: float) -> dict:
    made = fn_factory(**point)
    kw = dict(profile_kwargs)
    if isinstance(made, dict):
        if "fn" not in made:
            raise ValueError(f"sweep: the factory's dict for {point} has no 'fn'")
        made = dict(made)
        fn, args = made.pop("fn"), tuple(made.pop("args", ()))
        kw.update(made)
    elif isinstance(made, tuple) and made and callable(made[0]):
        fn, args = made[0], tuple(made[1:])
    elif callable(made):
        fn, args = made, ()
    else:
        raise TypeError(f"sweep: the factory returned {type(made).__name__} for {point}; expected a "
                        f"callable, (fn, *args) or a dict with 'fn'")
    kw.setdefault("name", base_name)
    own = bound_seconds("max_total_s", kw["max_total_s"]) if "max_total_s" in kw else math.inf  # the factory's
    kw["max_total_s"] = min(own, bound_s)
    m = profile(fn, *args, **kw)
    rec = m.to_dict()
    rec["shape"] = ",".join(f"{k}={_cell(v)}" for k, v in point.items())
    row = {(f"grid_{k}" if k in columns else k): _cell(v) for k, v in point.items()}
    row.update(rec)
    return row
