"""bwprof's model workloads beside PyTorch on the same GPU, in one run (make gpu-bench SUITE=model).

bwprof: `bwprof.model("encoder")` (separate and fused forms) and `bwprof.model("decode")` for the
FT-054 and 8B-class models with FP16 and Q4_0 weights, each saved as a run folder under --out.
PyTorch: the same steps built from torch ops (F.linear, scaled_dot_product_attention, layer_norm,
GELU/SiLU, the residual adds, the KV append as an indexed copy), every layer's weights distinct,
captured in one CUDA graph and replayed; median of the replays timed by CUDA events. Printed side
by side: step time, tokens (positions) per second, and bwprof's bandwidth bound.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import bwprof
from bwprof.workloads import models as M


def torch_graph_us(step, replays: int = 20) -> float:
    """Median microseconds of one replay of ``step`` captured in a CUDA graph."""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    for _ in range(replays):
        start.record()
        g.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    del g
    return statistics.median(times)


def torch_encoder(batch: int, fused: bool) -> float:
    import torch
    import torch.nn.functional as F

    s, dev, dt = M.ENCODER, "cuda", torch.float16
    T, W, Fd, P = batch * s.tokens_per_position, s.width, s.ffn, s.tokens_per_position
    r = lambda *shape: torch.randn(*shape, device=dev, dtype=dt) * 0.05  # noqa: E731
    blocks = []
    for _ in range(s.blocks):
        b = {"wo": r(W, W), "w1": r(Fd, W), "b1": r(Fd), "w2": r(W, Fd), "b2": r(W),
             "g1": torch.ones(W, device=dev, dtype=dt), "g2": torch.ones(W, device=dev, dtype=dt)}
        if fused:
            b["wqkv"] = r(3 * W, W)
        else:
            b["wq"], b["wk"], b["wv"] = r(W, W), r(W, W), r(W, W)
        blocks.append(b)
    x = r(T, W)

    def heads(t):
        return t.view(batch, P, s.heads, s.head_dim).transpose(1, 2)

    def step():
        h = x
        for b in blocks:
            if fused:
                q, k, v = F.linear(h, b["wqkv"]).split(W, dim=-1)
            else:
                q, k, v = F.linear(h, b["wq"]), F.linear(h, b["wk"]), F.linear(h, b["wv"])
            a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v))
            a = a.transpose(1, 2).reshape(T, W)
            h = F.layer_norm(h + F.linear(a, b["wo"]), (W,), b["g1"])
            if fused:
                f = F.gelu(F.linear(h, b["w1"], b["b1"]))
                f = F.linear(f, b["w2"], b["b2"])
            else:
                f = F.gelu(F.linear(h, b["w1"]) + b["b1"])
                f = F.linear(f, b["w2"]) + b["b2"]
            h = F.layer_norm(h + f, (W,), b["g2"])
        return h

    with torch.no_grad():
        return torch_graph_us(step)


def torch_decode(llm: str, batch: int, kv: int) -> float:
    import torch
    import torch.nn.functional as F

    s, dev, dt = M.DECODERS[llm], "cuda", torch.float16
    H, Fd, D, Hq, Hkv = s.hidden, s.ffn, s.head_dim, s.heads, s.kv_heads
    q, kvd = Hq * D, Hkv * D
    r = lambda *shape: torch.randn(*shape, device=dev, dtype=dt) * 0.05  # noqa: E731
    layers = [{"wqkv": r(q + 2 * kvd, H), "wo": r(H, q), "wgu": r(2 * Fd, H), "wd": r(H, Fd),
               "g1": torch.ones(H, device=dev, dtype=dt), "g2": torch.ones(H, device=dev, dtype=dt),
               "kc": r(batch, Hkv, kv, D), "vc": r(batch, Hkv, kv, D)} for _ in range(s.layers)]
    x = r(batch, H)
    pos = kv - 1

    def step():
        h = x
        for w in layers:
            a = F.layer_norm(h, (H,), w["g1"])
            qq, kk, vv = F.linear(a, w["wqkv"]).split([q, kvd, kvd], dim=-1)
            w["kc"][:, :, pos] = kk.view(batch, Hkv, D)
            w["vc"][:, :, pos] = vv.view(batch, Hkv, D)
            o = F.scaled_dot_product_attention(qq.view(batch, Hq, 1, D), w["kc"], w["vc"], enable_gqa=True)
            h = h + F.linear(o.reshape(batch, q), w["wo"])
            a = F.layer_norm(h, (H,), w["g2"])
            g, u = F.linear(a, w["wgu"]).chunk(2, dim=-1)
            h = h + F.linear(F.silu(g) * u, w["wd"])
        return h

    with torch.no_grad():
        return torch_graph_us(step)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="results", help="folder for bwprof's run folders")
    p.add_argument("--device", default="gpu")
    p.add_argument("--batch", type=int, default=M.ENCODER_DEFAULT_BATCH, help="encoder positions")
    p.add_argument("--kv", type=int, default=M.DECODE_DEFAULT_KV)
    p.add_argument("--decode-batch", type=int, default=1)
    p.add_argument("--llm", nargs="+", default=["ft054", "8b"])
    p.add_argument("--weights", nargs="+", default=["fp16", "q4_0"])
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--no-encoder", action="store_true")
    args = p.parse_args(argv)
    try:
        import torch
        have_torch = not args.no_torch and torch.cuda.is_available()
    except ImportError:
        have_torch = False
    table, floors = [], []

    def peer(fn, *a):
        if not have_torch:
            return float("nan")
        try:
            us = fn(*a)
        except Exception as e:  # noqa: BLE001 - the peer is a comparison, not the measurement
            print(f"torch peer failed: {type(e).__name__}: {e}")
            return float("nan")
        import torch
        torch.cuda.empty_cache()
        return us

    if not args.no_encoder:
        t0 = time.time()
        r = bwprof.model("encoder", device=args.device, batch=args.batch, progress=True)
        print(r.text())
        print(f"run folder: {r.save(args.out)} ({time.time() - t0:.0f} s)\n", flush=True)
        st = r.steps.set_index("step")
        for form in ("separate", "fused"):
            tus = peer(torch_encoder, args.batch, form == "fused")
            table.append((f"encoder {form}, {args.batch} positions", st.loc[form, "time_us"], tus,
                          st.loc[form, "items_per_s"], args.batch / (tus * 1e-6), st.loc[form, "bound_us"],
                          st.loc[form, "parts_us"], st.loc[form, "gap_pct"]))
    for llm in args.llm:
        for weights in args.weights:
            t0 = time.time()
            r = bwprof.model("decode", device=args.device, llm=llm, weights=weights, batch=args.decode_batch,
                             kv=args.kv, progress=True)
            print(r.text())
            print(f"run folder: {r.save(args.out)} ({time.time() - t0:.0f} s)\n", flush=True)
            st = r.steps.set_index("step").loc["fused"]
            tus = peer(torch_decode, llm, args.decode_batch, args.kv) if weights == "fp16" else float("nan")
            table.append((f"decode {llm} {weights}, batch {args.decode_batch}, kv {args.kv}", st["time_us"], tus,
                          st["items_per_s"], args.decode_batch / (tus * 1e-6), st["bound_us"], st["parts_us"],
                          st["gap_pct"]))
            if llm == args.llm[0] and weights == args.weights[0]:
                # The same step with its parts timed as single cold launches: what the timing floor
                # of one launch adds to each op, beside the parts timed as graphs.
                one = bwprof.model("decode", device=args.device, llm=llm, weights=weights, batch=args.decode_batch,
                                   kv=args.kv, op_timing="single").steps.set_index("step").loc["fused"]
                floors.append((f"decode {llm} {weights}", st["time_us"], st["parts_us"], st["gap_pct"],
                               one["time_us"], one["parts_us"], one["gap_pct"]))
    print("bwprof beside PyTorch (whole step, one CUDA graph each; PyTorch: the same ops from torch, fp16; "
          "decode: torch has no Q4_0 path, nan)")
    print("(parts: bwprof's ops each timed on its own as a graph, launches back to back over rotated inputs; "
          "gap % = (step - parts) / step)")
    print(f"{'workload':48s} {'bwprof us':>10s} {'torch us':>10s} {'bwprof /s':>11s} {'torch /s':>11s} "
          f"{'bound us':>9s} {'parts us':>9s} {'gap %':>6s}")
    for name, b, t, bi, ti, bound, parts, gap in table:
        print(f"{name:48s} {b:10.1f} {t:10.1f} {bi:11.5g} {ti:11.5g} {bound:9.1f} {parts:9.1f} {gap:+6.1f}")
    if floors:
        print("\nthe parts timed two ways (step 'fused'): as graphs (the default) and as single cold launches")
        print(f"{'workload':24s} {'step us':>9s} {'graph parts':>12s} {'gap %':>7s} {'step us':>9s} "
              f"{'single parts':>13s} {'gap %':>7s}")
        for name, s1, p1, g1, s2, p2, g2 in floors:
            print(f"{name:24s} {s1:9.1f} {p1:12.1f} {g1:+7.1f} {s2:9.1f} {p2:13.1f} {g2:+7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
