"""Baselines and regression checks: save a run, compare a new run with it, gate CI on the verdict.

A baseline is a versioned JSON file (``{"format": "bwprof-baseline", "version": 1, ...}``) that
holds the result rows of one run. :func:`compare` matches a new run's rows with the baseline's and
decides, per kernel, whether the median time got faster, slower or stayed the same.

How the verdict is decided
--------------------------
Each row carries the median time ``m`` of ``n`` repeats and their standard deviation ``s``.

* Within-run uncertainty of the median: ``se = 1.2533 * s / sqrt(n)`` (the large-sample standard
  error of the median of near-normal data), widened by ``t(0.975, n-1) / 1.96`` so that a spread
  estimated from few repeats is trusted less. Without ``time_std_us`` the spread is estimated from
  ``time_max_us - time_min_us`` (divided by the expected range of ``n`` normal samples); without
  either, a per-repeat CV of ``ASSUMED_CV`` (5 %) is assumed.
* Slow outliers (a GPU timing's usual flaw: a preempted or throttled repeat) inflate ``s`` but
  barely move the median, so ``s`` is capped at 3x a robust spread from the fast side,
  ``2 (m - time_min_us) / d2(n)`` (d2 = expected range of n normal samples). The factor 3 leaves
  room for the right skew of real timings (an exponential tail at n = 20 gives about 2.9x).
* Run-to-run noise: two runs of the same code differ by more than the spread within one run
  (GPU: clocks, temperature, placement; CPU: other processes, threads sharing a core). Each run
  gets a relative noise floor ``f`` per backend (``BACKEND_FLOORS``): on a GPU 1 %; on the CPU
  5 % for a row whose timings are steady in both runs and 20 % for a row whose timings show
  interference in either run (the core's ``unstable``: CV > 10 % or max > 2x median), because on
  a time-shared machine such a row's median can be off by up to 2x while its outlier-capped
  spread stays small (``noise_floor_pct``, ``unstable_floor_pct`` override them).
* Timer resolution: device events resolve about 0.5 us (CUDA's documentation of
  cudaEventElapsedTime), so each GPU run also gets an absolute floor ``a`` of 0.5 us; the CPU's
  steady clock resolves nanoseconds, and its floor is 0.05 us (two clock reads and the call)
  (``noise_floor_us``). It matters for kernels of a few microseconds: on the H100 two
  back-to-back runs of a 7 us kernel pair differed by 1 us (14 %) while each run's own spread was
  far smaller.
* The relative change ``c = m_new / m_base - 1`` has the combined relative uncertainty
  ``u = sqrt((se_b/m_b)^2 + (se_n/m_n)^2 + f_b^2 + f_n^2 + (a_b/m_b)^2 + (a_n/m_n)^2)``.
* The change needed to count is ``threshold = max(min_effect, k * u)``; ``c > threshold`` is
  "slower", ``m_base / m_new - 1 > threshold`` is "faster" (so swapping the runs swaps the
  verdicts), anything else "unchanged". A move past the threshold is "undecided" instead when
  the runs' own noise cannot separate it: the fastest repeats (``time_min_us``) did not move the
  same way past the threshold, or another row of the pair moved the other way by at least
  1/``ENVELOPE_MARGIN`` of it (log scale), or the pair is busy (``BUSY_SHARE`` of its rows moved
  by more than ``NOTABLE_MOVE``) and two rows moved notably the other way. ``k`` defaults to ``DEFAULT_K`` (3.0), chosen with the
  Monte-Carlo test in tests/python/test_baseline.py so that repeated identical runs are flagged
  (either way) in at most 1 % of trials; docs/baselines.md has the measured rates, on the GPU
  model and on runs recorded on the CPU.

Rows are matched on device, kernel, variant, dtype and shape, and also on ``cache`` (cold/hot) and
``timing`` (single/graph) when both sides have that column, because a cold and a hot measurement
(or one launch and a graph's steady state) of one kernel are different quantities and a run may
hold both. Rows on one side only are listed ("only in baseline" / "only
in new"). Two runs with no device in common are refused unless forced, which then matches
ignoring the device.

The package, one concern per module: ``files`` (save/load, versioned JSON and CSV), ``statistics``
(the noise model above), ``comparison`` (matching rows, the verdicts), ``chart`` (plot_changes)
and ``cli`` (the ``compare`` and ``baseline`` subcommands, also ``python3 -m bwprof.baseline``).
"""
from __future__ import annotations

from .chart import plot_changes
from .cli import main, register_cli
from .comparison import (EXIT_BAD_INPUT, EXIT_OK, EXIT_REGRESSION, EXIT_UNDECIDED, OUTPUT_COLUMNS, VERDICTS,
                         compare, exit_code, has_regression, has_undecided)
from .errors import BaselineError
from .files import (FORMAT, KEY_COLUMNS, OPTIONAL_KEY_COLUMNS, REQUIRED_COLUMNS, VERSION, PathLike, load,
                    save)
from .statistics import (ASSUMED_CV, BACKEND_FLOORS, DEFAULT_K, DEFAULT_MIN_EFFECT_PCT, DEFAULT_NOISE_FLOOR_PCT,
                         DEFAULT_NOISE_FLOOR_US, Floors)

__all__ = ["EXIT_BAD_INPUT", "EXIT_OK", "EXIT_REGRESSION", "EXIT_UNDECIDED", "exit_code", "has_undecided",
           "ASSUMED_CV", "BACKEND_FLOORS", "BaselineError", "Floors", "DEFAULT_K", "DEFAULT_MIN_EFFECT_PCT", "DEFAULT_NOISE_FLOOR_PCT",
           "DEFAULT_NOISE_FLOOR_US", "FORMAT", "KEY_COLUMNS", "OPTIONAL_KEY_COLUMNS", "OUTPUT_COLUMNS",
           "PathLike", "REQUIRED_COLUMNS", "VERDICTS", "VERSION", "compare", "has_regression", "load", "main",
           "plot_changes", "register_cli", "save"]
