"""benchmarks/gemm_sweep.py's point selection and grid columns (the GPU run's subsets)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gemm_sweep as sweep  # noqa: E402


def test_misses_are_points_of_the_whole_sweep():
    every = {(dt, p["M"], p["N"], p["K"]) for dt, p in sweep.points(False)}
    misses = sweep.points(False, misses=True)
    assert len(misses) == len(sweep.MISSES)
    assert all((dt, p["M"], p["N"], p["K"]) in every for dt, p in misses)
    assert all(p["M"] <= 33 for _, p in sweep.points(False, max_m=33, misses=True))


def test_grid_sets_tile_and_split_together_above_16_rows():
    assert sweep.grid(dict(M=16, N=4096, K=4096)) == []
    cols = dict(sweep.grid(dict(M=128, N=4096, K=4096)))
    assert len(cols) == len(sweep.WG_TILES) * len(sweep.GRID_SPLITS)
    assert cols["128x128s4"] == {"engine": "wgmma", "tile": "128x128", "splits": 4}
    assert cols["64x64s1"] == {"engine": "wgmma", "tile": "64x64", "splits": 1}


def test_candidates_are_the_gemm_familys_choices():
    # Every candidate column is a setting of the family's parameters (engine, tile, splits), each of
    # them a value the family declares.
    spec = {p["name"]: p for k in __import__("bwprof").kernels() if k["name"] == "gemm" for p in k["params"]}
    for m in (1, 16, 33, 128):
        for name, choice in sweep.candidates(dict(M=m, N=4096, K=4096)) + sweep.grid(dict(M=m, N=4096, K=4096)):
            for key, value in choice.items():
                assert key in spec, (name, key)
                if spec[key]["kind"] == "choice":
                    assert value in spec[key]["choices"], (name, key, value)
                else:
                    assert spec[key]["min"] <= value <= spec[key]["max"], (name, key, value)
    assert dict(sweep.candidates(dict(M=1, N=4096, K=4096)))["tc"] == {"engine": "skinny"}
