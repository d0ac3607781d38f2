"""How profile() holds the stream while the timed calls are queued (stream_hold="block": a kernel
that waits for the host; "spin": ~20 us of busy GPU ahead of the start event): both give the same
time for the same work, and a bad value is a clear error (GPU cases skip without a GPU and PyTorch)."""
import pytest

import bwprof


def test_a_bad_stream_hold_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="stream_hold: expected one of block, spin"):
        bwprof.profile(lambda: None, device="cpu", bytes_read=8, stream_hold="sometimes")


@pytest.mark.gpu
@pytest.mark.parametrize("cache", ["cold", "hot"])
def test_held_and_spun_calls_time_the_same_work(cache):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU for PyTorch")
    src = torch.randn(1 << 24, device="cuda")
    dst = torch.empty_like(src)
    rows = {hold: bwprof.profile(dst.copy_, src, device="gpu", cache=cache, repeats=20, stream_hold=hold).to_dict()
            for hold in ("block", "spin")}
    for hold, d in rows.items():
        assert d["time_median_us"] > 0 and d["bytes_read"] == src.numel() * 4, (hold, d)
    block, spin = rows["block"]["time_median_us"], rows["spin"]["time_median_us"]
    assert 0.8 < block / spin < 1.25, rows
