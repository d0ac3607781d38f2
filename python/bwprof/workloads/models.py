"""The issue's two workloads, built from bwprof's kernels: the seeds' encoder block (lc0's T82
network) and an LLM decode step (the FT-054 model and an 8-billion-parameter class model), each
with its separate and fused forms. ``quick=True`` gives the same structure at sizes a CPU runs in
a second (tests, notebooks)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import arguments as _args
from .ops import Fusion, Op, workload

# The seeds' estimates, quoted as they gave them (the measured gains stand beside them).
SEEDS_QKV = Fusion("qkv", "Q/K/V projections as one GEMM", "about +7 % overall", 7.0, "overall")
SEEDS_EPILOGUE = Fusion("epilogue", "bias + activation in the GEMM epilogue", "+10-20 % on the FFN", 15.0,
                        "on its ops")


@dataclass(frozen=True)
class EncoderShape:
    width: int = 768
    heads: int = 24
    head_dim: int = 32
    ffn: int = 2304
    tokens_per_position: int = 64
    blocks: int = 15


@dataclass(frozen=True)
class DecoderShape:
    name: str
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    head_dim: int
    layers: int


ENCODER = EncoderShape()
ENCODER_QUICK = EncoderShape(width=128, heads=4, head_dim=32, ffn=384, tokens_per_position=16, blocks=2)
DECODERS = {
    "ft054": DecoderShape("FT-054", 896, 4864, 14, 2, 64, 24),
    "8b": DecoderShape("8B-class", 4096, 14336, 32, 8, 128, 32),
}
DECODERS_QUICK = {
    "ft054": DecoderShape("FT-054 (quick)", 128, 256, 4, 2, 32, 2),
    "8b": DecoderShape("8B-class (quick)", 256, 512, 4, 2, 64, 2),
}
ENCODER_DEFAULT_BATCH, ENCODER_QUICK_BATCH = 256, 2
DECODE_DEFAULT_KV, DECODE_QUICK_KV = 1024, 64
WEIGHTS = ("fp16", "q4_0")
Q4_0_BYTES_PER_WEIGHT = 18 / 32  # an FP16 scale and 32 4-bit values per block


def _gpu_variants(device_kind: str, features: list[str]) -> dict:
    """The implementations a model takes on a GPU (None: the backend's default): the fastest of
    bwprof's Q4_0 products, flash attention, a contiguous KV cache; GEMMs with an epilogue on the
    vendor's library where it has one (cuBLASLt), else bwprof's matrix-unit kernel (rocBLAS has none)."""
    if device_kind == "cpu":
        return {}
    return {"q4_0_matmul": "tiled", "attention": "flash", "kv_cache_append": "contiguous",
            "gemm_epilogue": "tensor" if "hip" in features else None}


def encoder(batch: int | None = None, *, dtype: str = "fp16", quick: bool = False, device_kind: str = "gpu",
            features: list | None = None) -> "Workload":
    """The lc0 T82 encoder block, repeated over its blocks: ``batch`` positions of 64 tokens,
    width 768, 24 heads of 32, FFN 768 -> 2304 -> 768. Separate form: three Q/K/V GEMMs, the FFN's
    bias and activation as kernels of their own; fused: one QKV GEMM over the concatenated weights,
    bias and activation in the GEMM epilogue. No biases on the attention projections (the issue's
    block names them on the FFN only); GELU stands for the network's activation."""
    s = ENCODER_QUICK if quick else ENCODER
    if batch is None:
        batch = ENCODER_QUICK_BATCH if quick else ENCODER_DEFAULT_BATCH
    batch = _args.count("batch", batch, 1, 1 << 16)
    dtype = _args.text("dtype", dtype, ("fp32", "fp16"))
    v = _gpu_variants(device_kind, features or [])
    T, W, F, n = batch * s.tokens_per_position, s.width, s.ffn, s.blocks
    ep = v.get("gemm_epilogue")

    def gemm(name, N, K, *, bias=False, act="none", fusion=None, form=None, variant=None):
        return Op(name, "gemm", {"M": T, "N": N, "K": K, "bias": bias, "act": act}, count=n, fusion=fusion,
                  form=form, variant=variant)

    ops = [
        gemm("q_proj", W, W, fusion="qkv", form="separate"),
        gemm("k_proj", W, W, fusion="qkv", form="separate"),
        gemm("v_proj", W, W, fusion="qkv", form="separate"),
        gemm("qkv_proj", 3 * W, W, fusion="qkv", form="fused"),
        Op("attention", "attention", {"batch": batch, "heads": s.heads, "seq_q": s.tokens_per_position,
                                      "seq_kv": s.tokens_per_position, "head_dim": s.head_dim},
           variant=v.get("attention"), count=n),
        gemm("out_proj", W, W),
        Op("residual_add_1", "stream_add", {"n": T * W}, count=n),
        Op("layernorm_1", "layernorm", {"rows": T, "cols": W}, count=n),
        gemm("ffn1", F, W, fusion="epilogue", form="separate"),
        Op("ffn1_bias_act", "bias_act", {"rows": T, "cols": F, "act": "gelu"}, count=n, fusion="epilogue",
           form="separate"),
        gemm("ffn1_bias_act_fused", F, W, bias=True, act="gelu", fusion="epilogue", form="fused", variant=ep),
        gemm("ffn2", W, F, fusion="epilogue", form="separate"),
        Op("ffn2_bias", "bias_act", {"rows": T, "cols": W, "act": "none"}, count=n, fusion="epilogue",
           form="separate"),
        gemm("ffn2_bias_fused", W, F, bias=True, fusion="epilogue", form="fused", variant=ep),
        Op("residual_add_2", "stream_add", {"n": T * W}, count=n),
        Op("layernorm_2", "layernorm", {"rows": T, "cols": W}, count=n),
    ]
    info = {"model": "encoder", "title": f"lc0 T82 encoder, {n} blocks, {batch} positions of "
            f"{s.tokens_per_position} tokens" + (" (quick)" if quick else ""),
            "blocks": n, "batch": batch, "tokens": T, "item": "position", "items_per_step": batch,
            "quick": quick}
    return workload(ops, name="encoder", dtype=dtype, fusions=[SEEDS_QKV, SEEDS_EPILOGUE], info=info)


def decode(model: str = "ft054", *, batch: int = 1, kv: int | None = None, weights: str = "fp16",
           quick: bool = False, device_kind: str = "gpu", features: list | None = None) -> "Workload":
    """One decode step: ``batch`` sequences each adding one token at KV length ``kv``, over every
    layer of ``model`` ("ft054": hidden 896, FFN 4864, 14 query and 2 KV heads of 64, 24 layers;
    "8b": 4096, 14336, 32 and 8 heads of 128, 32 layers), weights in FP16 or Q4_0 (activations and
    the KV cache FP16). Per layer: norm, QKV projection, KV-cache append, decode attention, output
    projection, residual add, norm, FFN gate/up, activation, FFN down, residual add. Separate form:
    Q, K and V (and gate and up) as GEMMs of their own. A linear layer is a GEMV at batch 1 and a
    GEMM above it (FP16), bwprof's Q4_0 product at any batch (Q4_0). SwiGLU's activation is the
    bias + SiLU kernel over the FFN width (its multiply by the up half, B x FFN x 2 bytes more,
    is not modelled); layer norm stands for RMSNorm (the same traffic)."""
    table = DECODERS_QUICK if quick else DECODERS
    model = _args.text("model", model, list(table))
    s = table[model]
    batch = _args.count("batch", batch, 1, 1 << 16)
    if kv is None:
        kv = DECODE_QUICK_KV if quick else DECODE_DEFAULT_KV
    kv = _args.count("kv", kv, 1, 1 << 24)
    weights = _args.text("weights", weights, WEIGHTS)
    v = _gpu_variants(device_kind, features or [])
    B, H, F, L = batch, s.hidden, s.ffn, s.layers
    q, kvd = s.heads * s.head_dim, s.kv_heads * s.head_dim

    def linear(name, N, K, *, fusion=None, form=None):
        if weights == "q4_0":
            return Op(name, "q4_0_matmul", {"M": B, "N": N, "K": K}, variant=v.get("q4_0_matmul"), count=L,
                      fusion=fusion, form=form)
        if B == 1:
            return Op(name, "gemv", {"N": N, "K": K}, count=L, fusion=fusion, form=form)
        return Op(name, "gemm", {"M": B, "N": N, "K": K}, count=L, fusion=fusion, form=form)

    ops = [
        Op("attn_norm", "layernorm", {"rows": B, "cols": H}, count=L),
        linear("q_proj", q, H, fusion="qkv", form="separate"),
        linear("k_proj", kvd, H, fusion="qkv", form="separate"),
        linear("v_proj", kvd, H, fusion="qkv", form="separate"),
        linear("qkv_proj", q + 2 * kvd, H, fusion="qkv", form="fused"),
        Op("kv_append", "kv_cache_append", {"batch": B, "kv_heads": s.kv_heads, "head_dim": s.head_dim,
                                            "max_seq": kv, "new_tokens": 1}, variant=v.get("kv_cache_append"),
           count=L),
        Op("attention", "attention", {"batch": B, "heads": s.heads, "kv_heads": s.kv_heads, "seq_q": 1,
                                      "seq_kv": kv, "head_dim": s.head_dim}, variant=v.get("attention"), count=L),
        linear("o_proj", H, q),
        Op("attn_residual", "stream_add", {"n": B * H}, count=L),
        Op("ffn_norm", "layernorm", {"rows": B, "cols": H}, count=L),
        linear("gate_proj", F, H, fusion="gate_up", form="separate"),
        linear("up_proj", F, H, fusion="gate_up", form="separate"),
        linear("gate_up_proj", 2 * F, H, fusion="gate_up", form="fused"),
        Op("act", "bias_act", {"rows": B, "cols": F, "act": "silu"}, count=L),
        linear("down_proj", H, F),
        Op("ffn_residual", "stream_add", {"n": B * H}, count=L),
    ]
    per_weight = 2.0 if weights == "fp16" else Q4_0_BYTES_PER_WEIGHT
    weight_bytes = L * per_weight * (H * (q + 2 * kvd) + q * H + 2 * F * H + F * H)
    kv_bytes = L * 2 * B * kvd * kv * 2.0  # K and V of every sequence, FP16, read by the attention
    info = {"model": "decode", "title": f"{s.name} decode step, {weights} weights, batch {B}, KV {kv}, {L} layers",
            "decoder": model, "decoder_name": s.name, "layers": L, "batch": B, "kv": kv, "weights": weights,
            "item": "token", "items_per_step": B, "quick": quick,
            "weight_bytes": weight_bytes, "kv_bytes": kv_bytes, "model_bytes": weight_bytes + kv_bytes}
    fusions = [Fusion("qkv", "Q/K/V projections as one product"),
               Fusion("gate_up", "FFN gate and up projections as one product")]
    return workload(ops, name="decode", dtype="fp16", fusions=fusions, info=info)
