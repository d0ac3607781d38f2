"""Tests for bwprof.baseline's verdicts: the statistics against simulated and recorded noise."""
import itertools

import numpy as np
import pytest

from bwprof import baseline as bl

from baseline_simulation import make_rows, recorded_runs, simulate_cpu_runs, simulate_runs, slowed

# ---------------------------------------------------------------------------------------------
# Verdicts

def test_known_slowdown_and_speedup_are_flagged():
    base = make_rows(3, std_us=2.0, repeats=30)
    new = base.copy()
    new.loc[0, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.10   # 10 % slower
    new.loc[1, ["time_median_us", "time_min_us", "time_max_us"]] *= 0.85   # 15 % faster
    new.loc[2, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.01   # within noise
    cmp = bl.compare(new, base).set_index("kernel")
    assert cmp.loc["kern0", "verdict"] == "slower"
    assert cmp.loc["kern0", "change_pct"] == pytest.approx(10.0)
    assert cmp.loc["kern1", "verdict"] == "faster"
    assert cmp.loc["kern2", "verdict"] == "unchanged"
    assert bl.has_regression(cmp.reset_index())
    assert cmp.index[0] == "kern0"  # regressions are listed first


def test_threshold_follows_the_formula():
    base = make_rows(1, time_us=100.0, std_us=4.0, repeats=50)
    base["time_min_us"] = 90.0  # robust spread 2*10/d2(50) = 4.45 > std: no cap
    t = 2.010 / 1.96  # t(0.975, 49) / 1.96, interpolated in the module's table
    se = 1.2533 * 4.0 / np.sqrt(50) * t / 100.0
    a = bl.DEFAULT_NOISE_FLOOR_US  # the timer's resolution, as a share of each run's median
    expected = 3.0 * np.sqrt(2 * se ** 2 + 2 * 0.01 ** 2 + 2 * (a / 100.0) ** 2) * 100.0
    cmp = bl.compare(base, base)
    assert cmp["threshold_pct"].iloc[0] == pytest.approx(expected, rel=2e-3)


def test_min_effect_applies_when_runs_are_very_quiet():
    base = make_rows(1, std_us=0.01, repeats=1000)
    new = base.copy()
    new[["time_median_us", "time_min_us", "time_max_us"]] *= 1.015
    quiet = bl.compare(new, base, noise_floor_pct=0.0, noise_floor_us=0.0)
    assert quiet["threshold_pct"].iloc[0] == pytest.approx(2.0)
    assert quiet["verdict"].iloc[0] == "unchanged"
    strict = bl.compare(new, base, noise_floor_pct=0.0, noise_floor_us=0.0, min_effect_pct=1.0)
    assert strict["verdict"].iloc[0] == "slower"


def test_a_single_slow_outlier_does_not_hide_a_regression():
    # 30 repeats with CV 1 % and one repeat 50 % slow: the std is ~9 % but the median is fine.
    base = make_rows(1, time_us=100.0, std_us=9.0, repeats=30)
    base["time_min_us"] = 98.0
    new = base.copy()
    new[["time_median_us", "time_min_us", "time_max_us"]] *= 1.10
    assert bl.compare(new, base)["verdict"].iloc[0] == "slower"


def test_missing_spread_falls_back_to_range_then_assumed_cv():
    base = make_rows(1, time_us=100.0).drop(columns=["time_std_us"])
    by_range = bl.compare(base, base)["threshold_pct"].iloc[0]
    base_no_spread = base.drop(columns=["time_min_us", "time_max_us", "repeats"])
    assumed = bl.compare(base_no_spread, base_no_spread)["threshold_pct"].iloc[0]
    assert 2.0 <= by_range < assumed
    se = 1.2533 * bl.ASSUMED_CV
    a = bl.DEFAULT_NOISE_FLOOR_US / 100.0  # the timer floor at a 100 us median
    assert assumed == pytest.approx(3.0 * np.sqrt(2 * se ** 2 + 2 * 0.01 ** 2 + 2 * a ** 2) * 100.0, rel=1e-4)


def test_false_alarm_rate_over_many_identical_runs_is_at_most_1_percent():
    rng = np.random.default_rng(20250101)
    trials = 2000
    repeats = rng.choice([10, 20, 30, 50, 100], trials)
    cv = rng.uniform(0.01, 0.05, trials)
    base = simulate_runs(rng, trials, repeats, cv)
    new = simulate_runs(rng, trials, repeats, cv)
    verdict = bl.compare(new, base)["verdict"]
    false_alarms = float((verdict != "unchanged").mean())
    print(f"false-alarm rate: {false_alarms:.4f} over {trials} trials")
    assert false_alarms <= 0.01


def test_ten_percent_slowdown_with_20_plus_repeats_is_caught():
    # Kernels of 50 us and more: a 10 % change is then 5 us or more, far above the events'
    # 0.5 us resolution (from 20 us up the rate measured 94.9 %; shorter kernels: the 2x test).
    rng = np.random.default_rng(20250102)
    trials = 2000
    repeats = rng.choice([20, 30, 50, 100], trials)
    cv = rng.uniform(0.01, 0.05, trials)
    base = simulate_runs(rng, trials, repeats, cv, true_us=(50.0, 500.0))
    new = simulate_runs(rng, trials, repeats, cv, slowdown=0.10, true_us=(50.0, 500.0))
    verdict = bl.compare(new, base)["verdict"]
    detected = float((verdict == "slower").mean())
    seen = float(verdict.isin(["slower", "undecided"]).mean())
    print(f"detection rate (10 % slower): {detected:.4f} slower, {seen:.4f} slower or undecided, over {trials} trials")
    # Issue 45: a move the sampling noise puts within 5 standard errors (CV 5 %, 20 repeats) is
    # undecided, not slower; the earlier contract (slower >= 95 %) holds for slower-or-undecided.
    assert seen >= 0.95 and detected >= 0.8
    assert (verdict == "faster").sum() == 0


def test_a_doubled_short_kernel_is_caught():
    # 4-10 us kernels, as the layer norms of a decode step: twice as slow is always flagged.
    rng = np.random.default_rng(20250103)
    trials = 1000
    base = simulate_runs(rng, trials, 10, 0.03, true_us=(4.0, 10.0))
    new = simulate_runs(rng, trials, 10, 0.03, slowdown=1.0, true_us=(4.0, 10.0))
    verdict = bl.compare(new, base)["verdict"]
    assert (verdict == "slower").all()


def test_cpu_rows_get_the_cpu_floors_and_interference_widens_them():
    base = make_rows(1, device="cpu", time_us=100.0, std_us=0.5, repeats=50)
    base["backend"] = "cpu"
    base["time_min_us"] = 99.0
    steady = bl.compare(base, base)["threshold_pct"].iloc[0]
    cpu = bl.BACKEND_FLOORS["cpu"]
    assert steady == pytest.approx(3 * np.sqrt(2 * (cpu.steady_pct / 100) ** 2 + 2 * (0.05 / 100) ** 2
                                                 + 2 * bl.statistics._median_rel_se(base)[0] ** 2) * 100, rel=1e-6)
    shaky = base.copy()
    shaky["time_max_us"] = 250.0  # one repeat 2.5x the median: the core's "unstable"
    assert bl.compare(shaky, base)["threshold_pct"].iloc[0] > 3 * np.sqrt(2) * cpu.unstable_pct * 0.99
    assert bl.compare(base, shaky)["threshold_pct"].iloc[0] == bl.compare(shaky, base)["threshold_pct"].iloc[0]
    # GPU rows keep the GPU's floors; given floors apply to every backend
    gpu = make_rows(1, time_us=100.0)
    assert bl.compare(gpu, gpu)["threshold_pct"].iloc[0] < steady / 2
    assert bl.compare(base, base, noise_floor_pct=1.0, noise_floor_us=0.5)["threshold_pct"].iloc[0] < steady / 2


def test_verdicts_swap_when_the_runs_swap():
    base = make_rows(3, device="cpu", time_us=100.0)
    base["backend"] = "cpu"
    for factor in np.round(np.arange(1.01, 2.5, 0.02), 2):  # through every row's threshold
        new = slowed(base, "kern0", factor)
        there = bl.compare(new, base).set_index("kernel")["verdict"]
        back = bl.compare(base, new).set_index("kernel")["verdict"]
        flip = {"slower": "faster", "faster": "slower", "unchanged": "unchanged"}
        assert all(back[k] == flip[v] for k, v in there.items()), factor


def test_identical_back_to_back_cpu_runs_are_never_slower_or_faster():
    # Six quick-suite runs recorded back to back on the 2-core machine; the first while other
    # work kept both cores busy (two threads then share one core: rows up to 2x off). Identical
    # code: no pair may say slower or faster (issue 45; the model before "undecided" flagged 78
    # of 2640 rows); a move the runs' noise cannot separate is "undecided".
    runs = recorded_runs("cpu_quick_runs_2core.csv")
    undecided = total = 0
    for a, b in itertools.permutations(runs, 2):
        cmp = bl.compare(runs[b], runs[a])
        decided = cmp[cmp["verdict"].isin(["slower", "faster"])]
        assert decided.empty, (a, b, decided)
        undecided, total = undecided + int((cmp["verdict"] == "undecided").sum()), total + len(cmp)
        if a >= 3 and b >= 3:
            assert (cmp["verdict"] == "unchanged").all(), (a, b)
    print(f"identical CPU runs: {undecided} of {total} rows undecided, none slower or faster")
    assert undecided / total <= 0.035


def test_a_doubled_kernel_is_caught_in_recorded_cpu_runs():
    # A kernel made 2x slower is never called faster; in the quietest pairs (runs 2-5: no row of
    # identical code moved by more than 1.7x) it is called slower; where identical code moved
    # rows 2x (pairs with the busy run 1, or run 6) it may be undecided instead.
    runs = recorded_runs("cpu_quick_runs_2core.csv")
    caught = cases = quiet_cases = quiet_caught = rows = rows_caught = others = others_decided = 0
    for a, b in itertools.permutations(runs, 2):
        for kernel in sorted(set(runs[a]["kernel"])):
            cmp = bl.compare(slowed(runs[b], kernel, 2.0), runs[a])
            mine = cmp[cmp["kernel"] == kernel]["verdict"]
            assert not (mine == "faster").any(), (a, b, kernel)
            # A change moves the pair's envelope: other rows of identical code rarely get decided.
            rest = cmp[cmp["kernel"] != kernel]["verdict"]
            others, others_decided = others + len(rest), others_decided + int(rest.isin(["slower", "faster"]).sum())
            hit = bool((mine == "slower").any())
            cases, caught = cases + 1, caught + int(hit or (mine == "undecided").any())
            rows, rows_caught = rows + len(mine), rows_caught + int(mine.isin(["slower", "undecided"]).sum())
            if {a, b} in ({2, 3}, {3, 4}, {2, 4}):
                quiet_cases, quiet_caught = quiet_cases + 1, quiet_caught + int(hit)
    print(f"2x slower kernel slower or undecided in {caught} of {cases} cases ({rows_caught} of {rows} rows); "
          f"slower in {quiet_caught} of {quiet_cases} cases of the quietest pairs")
    assert caught / cases >= 0.9 and rows_caught / rows >= 0.8
    assert quiet_caught / quiet_cases >= 0.9
    assert others_decided / others <= 0.002, others_decided


def test_cpu_monte_carlo_false_alarms_and_detection():
    # Every row of the new run slowed: with interference moving rows up to 2x both ways, the
    # runs' noise cannot separate a 2x change (undecided, never faster); without it, it can.
    # Rows of fewer than MIN_DECIDING_REPEATS repeats (the sim's kernels of 1.25 ms and more get
    # 3-4) are undecided past their threshold; the others are measured as before.
    rates = {}
    for name, seed, slowdown, kw in (("same", 20251122, 0.0, {}), ("2x", 20251123, 1.0, {}),
                                     ("quiet 30 %", 20251124, 0.3, {"p_interfere": 0.0}),
                                     ("quiet 2x", 20251125, 1.0, {"p_interfere": 0.0})):
        rng = np.random.default_rng(seed)
        base = simulate_cpu_runs(rng, 4000, **kw)
        new = simulate_cpu_runs(rng, 4000, slowdown=slowdown, **kw)
        cmp = bl.compare(new, base).merge(base[["kernel", "repeats"]], on="kernel")
        enough = cmp["repeats"] >= bl.comparison.MIN_DECIDING_REPEATS
        v = cmp["verdict"]
        assert not v[~enough].isin(["slower", "faster"]).any(), name
        assert slowdown == 0.0 or not (v == "faster").any(), name
        rates[name] = (float(v.isin(["slower", "faster"]).mean()), float((v[enough] == "slower").mean()),
                       float((v == "undecided").mean()))
    print("CPU sim (decided, slower of rows with enough repeats, undecided):", rates)
    assert rates["same"][0] == 0.0 and rates["same"][2] <= 0.03
    assert rates["quiet 30 %"][1] >= 0.85
    assert rates["quiet 2x"][1] >= 0.99


def test_the_noise_the_runs_show_is_reported(capsys):
    runs = recorded_runs("cpu_quick_runs_2core.csv")
    quiet = bl.compare(runs[4], runs[3])
    busy = bl.compare(runs[2], runs[1])  # run 1: other work kept both cores busy
    for cmp, warned in ((quiet, False), (busy, True)):
        n = cmp.attrs["noise"]
        assert n["rows"] == 88 and 0 < n["unstable_baseline"] < 88 and 0 < n["unstable_new"] < 88
        note = bl.comparison.noise_note(cmp)
        assert note.startswith("noise: ") and (("busy machine" in note) == warned), note
    assert busy.attrs["noise"]["moved"] > quiet.attrs["noise"]["moved"]
