"""benchmarks/attention_sweep.py's point selection (--only, --d, --max-s): the GPU run's subsets."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import attention_sweep as sweep  # noqa: E402


def test_selection_keeps_only_the_asked_points():
    every = sweep.points(False)
    d256 = sweep.points(False, {"prefill"}, [256])
    assert len(d256) == len(sweep.PREFILL)
    assert all(k == "prefill" and v == "flash" and p["head_dim"] == 256 for k, v, _, p in d256)
    short = sweep.points(False, {"prefill"}, [64, 128], 512)
    assert short and all(p["seq_kv"] <= 512 and p["head_dim"] in (64, 128) for _, _, _, p in short)
    assert {p["seq_kv"] for _, _, _, p in short} == {128, 512}
    long = sweep.points(False, {"prefill"}, [64], None, 1024)
    assert long and {p["seq_kv"] for _, _, _, p in long} == {s for _, _, _, s, _ in sweep.PREFILL if s >= 1024}
    paged = sweep.points(False, {"paged"})
    assert paged and all(v == "flash_paged" for _, v, _, _ in paged)
    assert len(sweep.points(False, {"prefill", "decode", "paged"})) == len(every)


@pytest.mark.parametrize("argv,msg", [(["--only", "prefil"], "--only"), (["--max-s", "0"], "--max-s"), (["--min-s", "0"], "--min-s"),
                                      (["--only", "paged", "--d", "64", "--max-s", "128"], "no point"),
                                      (["--only", "prefill", "--max-s", "512", "--min-s", "1024"], "no point")])
def test_bad_selection_is_a_usage_error(argv, msg, capsys):
    with pytest.raises(SystemExit) as e:
        sweep.main(argv)
    assert e.value.code == 2 and msg in capsys.readouterr().err


def test_decode_grid_columns_ask_the_decode_kernel_and_its_splits():
    name, more, where = sweep.grid_column("sp12")
    assert name == "sp12" and more == {"engine": "decode", "splits": 12} and where is None
    for bad in ("s5w1", "sp0", "sp", "sp12x", "w1x"):
        assert sweep.grid_column(bad) is None, bad


def test_candidates_are_the_attention_familys_choices():
    spec = {p["name"]: p for k in __import__("bwprof").kernels() if k["name"] == "attention" for p in k["params"]}
    for cands in sweep.CANDIDATES.values():
        for name, more, _ in cands:
            for key, value in more.items():
                assert key in spec, (name, key)
                if spec[key]["kind"] == "choice":
                    assert value in spec[key]["choices"], (name, key, value)


def test_unknown_candidate_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        sweep.main(["--only", "decode", "--candidates", "sp5,bogus"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "bogus" in err and "sp5" not in err.split("unknown")[1].split("(")[0]
