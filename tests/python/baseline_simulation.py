"""The simulations behind the baseline statistics: synthetic runs on a GPU-like clock and on the
CPU backend's time-shared machine, and the recorded CPU runs.

Run as a script (PYTHONPATH=python python3 tests/python/baseline_simulation.py) to print the
false-alarm and detection rates per noise level that docs/baselines.md quotes.
"""
import itertools
import os

import numpy as np
import pandas as pd

from bwprof import baseline as bl

# ---------------------------------------------------------------------------------------------
# Synthetic runs

def make_rows(n_rows=3, device="Sim GPU", time_us=100.0, std_us=1.0, repeats=50, **extra):
    """A small results table with the columns bwprof writes."""
    rows = []
    for i in range(n_rows):
        t = time_us * (1 + i)
        rows.append({
            "kernel": f"kern{i}", "variant": "" if i % 2 == 0 else "vec4", "dtype": "fp16",
            "shape": f"M=128,N={896 * (i + 1)},K=896", "device": device, "backend": "cuda",
            "time_median_us": t, "time_min_us": t - 2 * std_us, "time_max_us": t + 3 * std_us,
            "time_std_us": std_us, "repeats": repeats, "cache": "cold",
            "bytes_read": 1000 * (i + 1), "bytes_written": 500, "flops": 2.0e6,
            "bandwidth_gbs": 15.0, "bandwidth_pct_peak": 0.5, "gflops": 20.0,
            "compute_pct_peak": 0.1, "intensity_flop_per_byte": 1.33, "grade": "C",
            "bottleneck": "latency", "verified": True, "max_rel_error": 1e-4,
        })
    df = pd.DataFrame(rows)
    for key, value in extra.items():
        df[key] = value
    return df


def simulate_runs(rng, trials, repeats, cv, slowdown=0.0, run_shift=0.01, outlier_p=0.01,
                  skew_shape=4.0, abs_shift_us=0.3, true_us=(5.0, 500.0)):
    """One run of `trials` kernels, each timed `repeats` times, summarised as bwprof does.

    Per-repeat noise is right-skewed (standardised gamma, shape `skew_shape`) with coefficient of
    variation `cv`; a fraction `outlier_p` of repeats is 10-50 % slow (preemption, throttling);
    the whole run is shifted by a normal factor with sd `run_shift` (clocks, temperature) and by a
    normal offset with sd `abs_shift_us` (launch and timer jitter: on the H100 two back-to-back
    runs of a 7 us kernel pair differed by 1 us).
    """
    repeats = np.broadcast_to(np.asarray(repeats), (trials,))
    cv = np.broadcast_to(np.asarray(cv, dtype=float), (trials,))
    true_us = np.linspace(true_us[0], true_us[1], trials)
    shift = 1.0 + rng.normal(0.0, run_shift, trials)
    offset = rng.normal(0.0, abs_shift_us, trials)
    width = int(repeats.max())
    x = (rng.gamma(skew_shape, 1.0, (trials, width)) - skew_shape) / np.sqrt(skew_shape)
    samples = (true_us * (1.0 + slowdown) * shift + offset)[:, None] * (1.0 + cv[:, None] * x)
    slow = rng.random((trials, width)) < outlier_p
    samples = np.where(slow, samples * (1.0 + rng.uniform(0.1, 0.5, (trials, width))), samples)
    samples = np.where(np.arange(width)[None, :] < repeats[:, None], samples, np.nan)
    return pd.DataFrame({
        "device": "Sim GPU", "kernel": [f"k{i}" for i in range(trials)], "variant": "",
        "dtype": "fp32", "shape": "N=4096", "time_median_us": np.nanmedian(samples, axis=1),
        "time_min_us": np.nanmin(samples, axis=1), "time_max_us": np.nanmax(samples, axis=1),
        "time_std_us": np.nanstd(samples, axis=1, ddof=1), "repeats": repeats.astype(int),
    })


def flag_rates(seed, trials, repeats, cv, slowdown, noise_floor_pct=1.0, k=bl.DEFAULT_K, **kw):
    """(fraction past the threshold either way: slower, faster or undecided; fraction slower)
    over `trials` paired runs."""
    rng = np.random.default_rng(seed)
    base = simulate_runs(rng, trials, repeats, cv, **kw)
    new = simulate_runs(rng, trials, repeats, cv, slowdown=slowdown, **kw)
    verdict = bl.compare(new, base, noise_floor_pct=noise_floor_pct, k=k)["verdict"]
    return float((verdict != "unchanged").mean()), float((verdict == "slower").mean())



# ---------------------------------------------------------------------------------------------
# The CPU backend: a steady clock on a time-shared machine

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "baselines")


def recorded_runs(name):
    """Runs of one suite recorded back to back on the 2-core test machine (same code, same build)."""
    runs = pd.read_csv(os.path.join(DATA, name))
    return {r: d.drop(columns="run").reset_index(drop=True) for r, d in runs.groupby("run")}


def slowed(df, kernel, factor):
    """``df`` with every timing of ``kernel`` multiplied by ``factor`` (a real slowdown)."""
    df = df.copy()
    rows = df["kernel"] == kernel
    for c in ("time_median_us", "time_min_us", "time_max_us", "time_mean_us", "time_std_us"):
        if c in df:
            df.loc[rows, c] *= factor
    return df


def simulate_cpu_runs(rng, trials, slowdown=0.0, p_interfere=0.55, episode_steady=0.06, episode_noisy=0.08,
                      true_us=(5.0, 5000.0)):
    """One CPU run of ``trials`` kernels of 5 us to 5 ms, summarised as the core does.

    Fitted to the recorded 2-core runs: a row is measured while other processes interfere with
    probability ``p_interfere``; then at least one repeat (2-10 % of them) is preempted for a
    scheduler slice (0.5-5 ms added), its run-to-run shift has sd 2 %, and with probability
    ``episode_noisy`` the whole row runs 20-70 % (log) off (two threads sharing one core). A
    steady row shifts by sd 0.7 %, and with probability ``episode_steady`` by 5-20 %. Per-repeat
    noise: right-skewed, CV 1-5 %. Repeats: 5 ms of kernel time, 3 to 1000 (the quick suite's).
    """
    t = np.geomspace(true_us[0], true_us[1], trials)
    noisy = rng.random(trials) < p_interfere
    shift = np.exp(rng.normal(0.0, np.where(noisy, 0.02, 0.007)))
    episode = rng.random(trials) < np.where(noisy, episode_noisy, episode_steady)
    size = np.where(noisy, rng.uniform(0.2, 0.7, trials), rng.uniform(0.05, 0.2, trials))
    shift = shift * np.where(episode, np.exp(rng.choice([-1.0, 1.0], trials) * size), 1.0)
    n = np.clip((5000.0 / t).astype(int), 3, 1000)
    cv = rng.uniform(0.01, 0.05, trials)
    width = int(n.max())
    x = (rng.gamma(4.0, 1.0, (trials, width)) - 4.0) / 2.0
    samples = (t * (1.0 + slowdown) * shift)[:, None] * (1.0 + cv[:, None] * x)
    hit = rng.random((trials, width)) < np.where(noisy, rng.uniform(0.02, 0.1, trials), 0.0)[:, None]
    hit[:, 0] |= noisy
    samples = np.where(hit, samples + rng.uniform(500.0, 5000.0, (trials, width)), samples)
    samples = np.where(np.arange(width)[None, :] < n[:, None], samples, np.nan)
    mean, std = np.nanmean(samples, axis=1), np.nanstd(samples, axis=1, ddof=1)
    return pd.DataFrame({
        "device": "cpu", "backend": "cpu", "kernel": [f"k{i}" for i in range(trials)], "variant": "cpu",
        "dtype": "fp32", "shape": "n=1", "time_median_us": np.nanmedian(samples, axis=1),
        "time_min_us": np.nanmin(samples, axis=1), "time_max_us": np.nanmax(samples, axis=1),
        "time_mean_us": mean, "time_std_us": std, "time_cv": std / mean, "repeats": n})


def cpu_flag_rates(seed, trials, slowdown, **kw):
    """(fraction slower or faster, fraction slower, fraction undecided) of simulated CPU rows."""
    rng = np.random.default_rng(seed)
    base = simulate_cpu_runs(rng, trials, **kw)
    new = simulate_cpu_runs(rng, trials, slowdown=slowdown, **kw)
    verdict = bl.compare(new, base)["verdict"]
    return (float(verdict.isin(["slower", "faster"]).mean()), float((verdict == "slower").mean()),
            float((verdict == "undecided").mean()))


# ---------------------------------------------------------------------------------------------

if __name__ == "__main__":
    # The table docs/baselines.md quotes: rates per (repeats, CV) cell, 4000 trials each.
    print("repeats  cv    false-alarm  detect-10%-slower   (run shift 1 %, 1 % slow outliers)")
    for n in (5, 10, 20, 50, 100):
        for cv in (0.01, 0.03, 0.05):
            fa, _ = flag_rates(1, 4000, n, cv, 0.0)
            _, det = flag_rates(2, 4000, n, cv, 0.10)
            print(f"{n:7d}  {cv:.2f}  {fa * 100:9.2f} %  {det * 100:12.1f} %")
    print("\nreal run-to-run shift vs the noise floor (repeats 20, CV 3 %):")
    for shift in (0.01, 0.015, 0.02, 0.03):
        fa, _ = flag_rates(3, 4000, 20, 0.03, 0.0, run_shift=shift)
        fa_set, _ = flag_rates(3, 4000, 20, 0.03, 0.0, run_shift=shift,
                               noise_floor_pct=shift * 100)
        _, det_set = flag_rates(4, 4000, 20, 0.03, 0.10, run_shift=shift,
                                noise_floor_pct=shift * 100)
        print(f"  shift {shift * 100:.1f} %: false alarms {fa * 100:.2f} % with floor 1 %; "
              f"floor = shift: false alarms {fa_set * 100:.2f} %, detect-10% {det_set * 100:.1f} %")
    print("\nchoice of k: worst false-alarm rate over a stress grid (repeats 10/20/50, CV 1/3/5 %,")
    print("skew shape 1/4/normal, slow outliers 0/1/5 %; 2000 trials per cell), and the detection")
    print("of a 10 % slowdown at repeats 20, CV 5 %, 1 % outliers:")
    for k in (2.5, 2.75, 3.0, 3.5):
        worst = 0.0
        for shape in (1.0, 4.0, 1e6):
            for outliers in (0.0, 0.01, 0.05):
                for n in (10, 20, 50):
                    for cv in (0.01, 0.03, 0.05):
                        fa, _ = flag_rates(5, 2000, n, cv, 0.0, k=k, skew_shape=shape,
                                           outlier_p=outliers)
                        worst = max(worst, fa)
        _, det = flag_rates(6, 4000, 20, 0.05, 0.10, k=k)
        print(f"  k={k:<4}: worst false alarms {worst * 100:.2f} %, detect-10% {det * 100:.1f} %")
    print("\nCPU backend (docs/baselines.md, 'The CPU backend'):")
    for name in ("cpu_quick_runs_2core.csv", "cpu_full_runs_2core.csv"):
        runs = recorded_runs(name)
        flagged = undecided = total = caught = held = cases = 0
        for a, b in itertools.permutations(runs, 2):
            cmp = bl.compare(runs[b], runs[a])
            flagged += int(cmp["verdict"].isin(["slower", "faster"]).sum())
            undecided, total = undecided + int((cmp["verdict"] == "undecided").sum()), total + len(cmp)
            for kernel in sorted(set(runs[a]["kernel"])):
                v = bl.compare(slowed(runs[b], kernel, 2.0), runs[a])
                mine = v[v["kernel"] == kernel]["verdict"]
                caught, cases = caught + int((mine == "slower").any()), cases + 1
                held += int((mine != "slower").all() and (mine == "undecided").any())
        print(f"  {name}: identical runs: {flagged} of {total} rows slower or faster, {undecided} undecided; "
              f"a kernel made 2x slower: slower in {caught} of {cases} cases, undecided in {held}")
    fa, _, und = cpu_flag_rates(20251122, 4000, 0.0)
    print(f"  simulated (fitted to those runs), 4000 rows: slower or faster {100 * fa:.2f} %, undecided {100 * und:.2f} %")
    for slowdown in (1.0, 0.5, 0.3):
        _, det, und = cpu_flag_rates(20251123, 4000, slowdown)
        _, det_quiet, und_quiet = cpu_flag_rates(20251124, 4000, slowdown, p_interfere=0.0)
        print(f"    {100 * slowdown:.0f} % slower (every row): slower {100 * det:.1f} %, undecided {100 * und:.1f} % "
              f"(steady machine: {100 * det_quiet:.1f} %, {100 * und_quiet:.1f} %)")
