"""The "undecided" verdict: a move past its threshold that the runs' own noise cannot separate.

Identical code must never be called slower or faster: generated samples from one distribution
(Hypothesis picks the distribution, the repeats and the backend) are summarised as the core
summarises a row, twice, and compared."""
import argparse

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bwprof import baseline as bl

from baseline_simulation import make_rows


def summarise(samples: np.ndarray) -> dict:
    """One row's statistics as the core records them."""
    mean, std = float(np.mean(samples)), float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0
    median = float(np.median(samples))
    return {"time_median_us": median, "time_min_us": float(samples.min()), "time_max_us": float(samples.max()),
            "time_mean_us": mean, "time_std_us": std, "time_cv": std / mean, "repeats": len(samples),
            "unstable": bool(std / mean > 0.10 or samples.max() > 2 * median)}


# One kernel's timing distribution: a base time, a shape, a spread and slow outliers.
distribution = st.fixed_dictionaries({
    "time_us": st.floats(0.5, 1e5), "repeats": st.integers(2, 200),
    "shape": st.sampled_from(["normal", "gamma", "lognormal", "uniform", "exponential"]),
    "cv": st.floats(0.0, 0.4), "outlier_p": st.sampled_from([0.0, 0.0, 0.01, 0.05]),
    "outlier_x": st.floats(1.1, 10.0)})


def draw(rng: np.random.Generator, d: dict) -> np.ndarray:
    n, cv = d["repeats"], d["cv"]
    x = {"normal": lambda: rng.normal(0, 1, n),
         "gamma": lambda: (rng.gamma(2.0, 1.0, n) - 2.0) / np.sqrt(2.0),
         "lognormal": lambda: (rng.lognormal(0, 0.5, n) - np.exp(0.125)) / 0.6,
         "uniform": lambda: rng.uniform(-1.7, 1.7, n),
         "exponential": lambda: rng.exponential(1.0, n) - 1.0}[d["shape"]]()
    samples = d["time_us"] * np.maximum(1.0 + cv * x, 0.05)
    slow = rng.random(n) < d["outlier_p"]
    return np.where(slow, samples * d["outlier_x"], samples)


def run(rng, dists, backend):
    rows = []
    for i, d in enumerate(dists):
        rows.append({"device": "cpu" if backend == "cpu" else "Sim GPU", "backend": backend,
                     "kernel": f"k{i}", "variant": "", "dtype": "fp32", "shape": "n=1",
                     **summarise(draw(rng, d))})
    return pd.DataFrame(rows)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(distribution, min_size=1, max_size=12), st.sampled_from(["cpu", "cuda", "hip"]),
       st.integers(0, 2**32 - 1))
def test_samples_of_one_distribution_are_never_slower_or_faster(dists, backend, seed):
    rng = np.random.default_rng(seed)
    base, new = run(rng, dists, backend), run(rng, dists, backend)
    cmp = bl.compare(new, base)
    decided = cmp[cmp["verdict"].isin(["slower", "faster"])]
    assert decided.empty, decided
    assert bl.exit_code(cmp) in (bl.EXIT_OK, bl.EXIT_UNDECIDED)


@settings(max_examples=100, deadline=None)
@given(st.lists(distribution, min_size=1, max_size=8), st.integers(0, 2**32 - 1), st.floats(1.5, 4.0))
def test_a_steady_kernel_made_much_slower_is_never_unchanged_or_faster(dists, seed, factor):
    # Every repeat of every kernel slower by a factor far beyond its spread (quiet GPU-like rows):
    # "slower", or at worst "undecided", never "unchanged" or "faster".
    dists = [dict(d, cv=min(d["cv"], 0.05), outlier_p=0.0, repeats=max(d["repeats"], 10), time_us=max(d["time_us"], 20.0))
             for d in dists]
    rng = np.random.default_rng(seed)
    base = run(rng, dists, "cuda")
    slowed = [dict(d, time_us=d["time_us"] * factor) for d in dists]
    new = run(rng, slowed, "cuda")
    cmp = bl.compare(new, base)
    assert cmp["verdict"].isin(["slower", "undecided"]).all(), cmp
    if factor >= 2.0 and min(d["repeats"] for d in dists) >= 20:
        assert (cmp["verdict"] == "slower").all(), cmp


def test_a_move_whose_fastest_repeats_stayed_is_undecided():
    base = make_rows(3, std_us=1.0, repeats=30)
    new = base.copy()
    new.loc[0, ["time_median_us", "time_max_us"]] *= 1.5   # the median moved, the minimum did not
    cmp = bl.compare(new, base).set_index("kernel")
    assert cmp.loc["kern0", "verdict"] == "undecided"
    assert cmp.loc["kern0", "change_pct"] == pytest.approx(50.0)
    assert not bl.has_regression(cmp) and bl.has_undecided(cmp)
    assert bl.exit_code(cmp) == bl.EXIT_UNDECIDED == 3
    # The same move with the minimum following it is a regression.
    new.loc[0, "time_min_us"] *= 1.5
    assert bl.compare(new, base).set_index("kernel").loc["kern0", "verdict"] == "slower"


def test_a_move_no_larger_than_the_noise_the_other_way_is_undecided():
    # Row 1 moved 40 % faster while its fastest repeats stayed (noise, as the pair shows); row 0
    # moved 30 % slower: the pair's noise reaches that far, so it cannot be told apart.
    base = make_rows(4, std_us=1.0, repeats=30)
    base.loc[1, "time_min_us"] = 100.0  # kern1's fastest repeats far below its median of 200 us
    new = base.copy()
    new.loc[0, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.30
    new.loc[1, ["time_median_us", "time_max_us"]] /= 1.40
    cmp = bl.compare(new, base).set_index("kernel")
    assert cmp.loc["kern0", "verdict"] == "undecided"
    assert cmp.loc["kern1", "verdict"] == "undecided"
    # Swapping the runs swaps nothing here: undecided both ways.
    back = bl.compare(base, new).set_index("kernel")
    assert back.loc["kern0", "verdict"] == back.loc["kern1", "verdict"] == "undecided"
    # A real speed-up elsewhere (its fastest repeats moved too) is a change, not noise.
    new.loc[1, "time_min_us"] = 199.0 / 1.40
    base.loc[1, "time_min_us"] = 199.0
    cmp = bl.compare(new, base).set_index("kernel")
    assert cmp.loc["kern0", "verdict"] == "slower" and cmp.loc["kern1", "verdict"] == "faster"


def test_a_move_seen_in_too_few_repeats_is_undecided():
    base = make_rows(2, std_us=1.0, repeats=4)
    new = base.copy()
    new.loc[0, ["time_median_us", "time_min_us", "time_max_us"]] *= 2.0
    assert bl.compare(new, base)["verdict"].tolist() == ["undecided", "unchanged"]
    base["repeats"] = new["repeats"] = bl.comparison.MIN_DECIDING_REPEATS
    assert bl.compare(new, base)["verdict"].tolist() == ["slower", "unchanged"]


def test_undecided_is_listed_after_the_decided_and_explained():
    base = make_rows(3, std_us=1.0, repeats=30)
    new = base.copy()
    new.loc[0, ["time_median_us", "time_max_us"]] *= 1.5
    new.loc[2, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.5
    cmp = bl.compare(new, base)
    assert cmp["verdict"].tolist() == ["slower", "undecided", "unchanged"]
    note = bl.comparison.noise_note(cmp)
    assert "undecided: 1 row(s)" in note
    assert "undecided" in bl.VERDICTS


def run_cli(argv):
    parser = argparse.ArgumentParser(prog="bwprof")
    bl.register_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_exit_code_3_when_only_undecided(tmp_path, capsys):
    base = make_rows(3, std_us=1.0, repeats=30)
    new = base.copy()
    new.loc[0, ["time_median_us", "time_max_us"]] *= 1.5
    base.to_csv(tmp_path / "a.csv", index=False)
    new.to_csv(tmp_path / "b.csv", index=False)
    assert run_cli(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 3
    captured = capsys.readouterr()
    assert "undecided" in captured.out and "exit 3" in captured.err and "regression" not in captured.err
    new.loc[2, ["time_median_us", "time_min_us", "time_max_us"]] *= 1.5   # and a real regression: 1 wins
    new.to_csv(tmp_path / "b.csv", index=False)
    assert run_cli(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 1
