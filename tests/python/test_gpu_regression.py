"""Regression detection end to end on a real kernel: the same work profiled twice compares as
unchanged, and the same work done twice per call (a deliberately slowed kernel, made here in the
test: bwprof has no hook that slows its own kernels) is flagged slower. Skips without a GPU and
PyTorch."""
import pandas as pd
import pytest

import bwprof
from bwprof import baseline as bl

pytestmark = pytest.mark.gpu


def test_a_kernel_slowed_twofold_is_caught_and_the_same_one_is_not(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU for PyTorch")
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    norm = torch.nn.LayerNorm(4096, device="cuda", dtype=torch.float16)

    def once():
        return norm(x)

    def twice():
        norm(x)
        return norm(x)

    def run(fn):
        return pd.DataFrame([bwprof.profile(fn, name="layer_norm", device="gpu", inputs=[x], outputs=[x],
                                            repeats=30).to_dict()])

    base = bl.save(run(once), tmp_path / "base.json")
    assert not bl.has_regression(bl.compare(run(once), base))
    cmp = bl.compare(run(twice), base)
    assert bl.has_regression(cmp) and cmp["verdict"].tolist() == ["slower"], cmp
