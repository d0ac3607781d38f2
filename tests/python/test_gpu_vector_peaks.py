"""The GPU's vector roofs with the packed instructions (issue #45): FP16 as HFMA2 pairs, BF16 as
packed BF16 FMAs on NVIDIA sm_80 and later, each chain checked against the host's emulation of it
and each row judged against the roof of its own chain. Needs a GPU (skipped without one)."""
import pytest

import bwprof

pytestmark = pytest.mark.gpu


def _gpu():
    info = bwprof.device("gpu").info
    arch = str(info["arch"])
    sm = int(arch[3:]) if info["vendor"] == "nvidia" and arch.startswith("sm_") and arch[3:].isdigit() else 0
    return info, sm


def test_the_fp16_vector_peak_reaches_the_packed_rate_of_the_architecture_table():
    info, _ = _gpu()
    f16 = bwprof.peaks("gpu")["vector"]["fp16"]
    assert f16["source"] == "measured:fma_chain_fp16", f16
    theo = (info.get("vector_gflops_theoretical") or {}).get("fp16", 0.0)
    if not theo:
        pytest.skip(f"the architecture table has no FP16 vector rate for {info['arch']}")
    # One half a lane (the chain before) reaches half the rate; packed HFMA2 on both pipes all of it.
    assert f16["gflops"] > 0.8 * theo, (f16, theo)


def test_bf16_has_a_vector_peak_on_sm80_and_later():
    info, sm = _gpu()
    p = bwprof.peaks("gpu")
    bf = p["vector"].get("bf16", {})
    if sm < 80:
        assert bf.get("gflops", 0.0) == 0.0, bf  # no packed BF16 FMA: no such roof
        with pytest.raises(ValueError, match="^dtype: bf16 FMA chains need packed BF16"):
            bwprof.measure("fma_chain", dtype="bf16", device="gpu", workers=1, iters=4096, repeats=1)
        return
    assert bf["source"] == "measured:fma_chain_bf16" and bf["gflops"] > 0, bf
    theo = (info.get("vector_gflops_theoretical") or {}).get("bf16", 0.0)
    if theo:
        assert bf["gflops"] > 0.8 * theo, (bf, theo)


@pytest.mark.parametrize("dtype,math", [("fp32", "dtype"), ("fp16", "dtype"), ("bf16", "dtype"), ("fp32", "fp64")])
def test_each_chain_passes_its_check_and_is_judged_against_its_own_roof(dtype, math):
    info, sm = _gpu()
    if dtype == "bf16" and sm < 80:
        pytest.skip("no packed BF16 FMA on this GPU")
    arith = "fp64" if math == "fp64" else dtype
    p = bwprof.peaks("gpu")
    m = bwprof.measure("fma_chain", dtype=dtype, device="gpu", math=math, workers=8 * info["compute_units"],
                       iters=4096, repeats=5)
    d = m.to_dict()
    assert m.verified, (d["max_rel_error"], d["tolerance"])
    assert d["peak_compute_arithmetic"] == f"{arith} vector"
    assert d["peak_gflops"] == p["vector"][arith]["gflops"] > 0
    assert d["peak_compute_source"] == f"measured:fma_chain_{arith}"
    assert d["bound"] == "compute" and 50 < d["compute_pct_peak"] < 115, d["bottleneck"]
