"""bwprof.profile beside plain CUDA events for calls that make the host wait on the GPU inside them
(issue #43): such a call cannot be held, so bwprof must re-time it behind the spin and report the
call's own time, never one that waited on the hold's timeout.

Prints, per call and cache state: plain events' median, bwprof's median, max and their ratio, the
row's stream_hold and host_waited. Cases: a host-bound call with .item() and a synchronize, an
.item() after a GEMM, 200 small launches without a wait (held: bwprof times the GPU alone), and
(with transformers) a 4-layer Llama-3-8B-shaped decode step at batch 4 after a 1024-token prefill,
random weights built from a config (nothing downloaded).

    PYTHONPATH=python python3 benchmarks/hold_sync_check.py [--no-llama] [--repeats 21]
"""
from __future__ import annotations

import argparse
import statistics

import torch

import bwprof


def plain_events_us(fn, n):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e3)
    return statistics.median(out)


def small_calls():
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    small = torch.randn(64, device="cuda")

    def host_bound_with_sync():
        y = x
        for _ in range(8):
            y = y * 1.0001
        y[0, 0].item()
        for _ in range(200):
            small.add_(1.0)
        torch.cuda.synchronize()

    def item_after_gemm():
        return float((x @ x).sum().item())

    def small_launches_no_wait():
        for _ in range(200):
            small.add_(1.0)

    return {"host_bound_with_sync": host_bound_with_sync, "item_after_gemm": item_after_gemm,
            "small_launches_no_wait": small_launches_no_wait}


def llama_decode_step():
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=4, num_attention_heads=32,
                      num_key_value_heads=8, vocab_size=128256, max_position_embeddings=2048)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.float16).eval()
    ids = torch.randint(0, cfg.vocab_size, (4, 1024), device="cuda")
    past = DynamicCache()
    with torch.no_grad():
        out = model(ids, past_key_values=past, use_cache=True)
    nxt = out.logits[:, -1:].argmax(-1)

    def step():
        with torch.no_grad():
            model(nxt, past_key_values=past, use_cache=True)
        past.crop(1024)

    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return step, weights


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--no-llama", action="store_true")
    args = ap.parse_args()
    calls = {k: (fn, 0) for k, fn in small_calls().items()}
    if not args.no_llama:
        try:
            calls["llama_decode_b4"] = llama_decode_step()
        except ImportError as e:
            print(f"(no Llama step: {e})")
    print(f"{'call':24s} {'cache':5s} {'events_us':>10s} {'bwprof_us':>10s} {'max_us':>10s} {'ratio':>6s} "
          f"hold  host_waited  bound")
    for name, (fn, nbytes) in calls.items():
        plain = plain_events_us(fn, args.repeats)
        for cache in ("hot", "cold"):
            r = bwprof.profile(fn, name=name, bytes_read=nbytes, bytes_written=0, flops=None if nbytes else 0,
                               device="gpu", cache=cache, repeats=args.repeats, min_time_s=0.0).to_dict()
            print(f"{name:24s} {cache:5s} {plain:10.1f} {r['time_median_us']:10.1f} {r['time_max_us']:10.1f} "
                  f"{r['time_median_us'] / plain:6.3f} {r['stream_hold']:5s} {str(r['host_waited']):12s} "
                  f"{r['bound']}: {r['bottleneck'][:110]}", flush=True)


if __name__ == "__main__":
    main()
