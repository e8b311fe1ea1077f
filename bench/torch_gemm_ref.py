#!/usr/bin/env python3
"""PyTorch's side of bench/gemm.ts: the matrix products of a training step, each timed alone.

A case is "name:m:k:n:ta:tb", C[m, n] = op(A)·op(B), op a transpose where ta / tb is 1: A stored
[k, m] when transposed (a weight gradient Xᵀ·dY reads X [tokens, in]), B stored [n, k] when
transposed (dX = dY·Wᵀ reads W [in, out] as [n, k]). Prints one JSON line: per case the median
seconds of torch.mm into a preallocated output, the OpenBLAS kernel and how busy the other cores were.

  python3 bench/torch_gemm_ref.py --threads 2 ffn1:2048:768:3072:0:0 ffn1.dW:768:2048:3072:1:0
"""
import argparse, json, os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_word_tagger_ref import openblas_core, time_steps  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2); ap.add_argument("--iters", type=int, default=10); ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    torch.set_num_threads(a.threads); torch.manual_seed(1)
    seconds, busiest = {}, 0.0
    for case in a.cases:
        name, m, k, n, ta, tb = case.split(":")
        m, k, n, ta, tb = int(m), int(k), int(n), int(ta), int(tb)
        A = torch.randn(k, m).t() if ta else torch.randn(m, k)
        B = torch.randn(n, k).t() if tb else torch.randn(k, n)
        C = torch.empty(m, n)
        med, other = time_steps(lambda: torch.mm(A, B, out=C), a.warmup, a.iters)
        seconds[name] = med
        busiest = max(busiest, other)
    print(json.dumps({"seconds": seconds, "threads": a.threads, "openblas_core": openblas_core(), "other_procs_cpu_cores_avg": busiest}))


if __name__ == "__main__":
    main()
