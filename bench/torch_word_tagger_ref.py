#!/usr/bin/env python3
"""Speed of the PyTorch reference word tagger (../shared/bench/torch_bilstm_ref.py's Tagger: word
embedding + character CNN + shape flags -> BiLSTM 2 x --hidden -> CRF) on random inputs of one shape,
for bench:engine's word-lstm row. Prints one JSON line like torch_bert_ref.py: words/s of the
forward (emissions, eval mode) or of a training step (forward, CRF NLL, backward, Adam), the
median ms per batch, the OpenBLAS kernel and how busy the other cores were.

  python3 bench/torch_word_tagger_ref.py --batch 16 --words 32 --mode train --threads 2
"""
import argparse, json, os, sys, time
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench"))
from torch_bilstm_ref import Tagger  # noqa: E402


def busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / os.sysconf("SC_CLK_TCK")


def openblas_core():
    try:
        import ctypes
        for name in ("libopenblas.so.0", "libopenblasp-r0.3.21.so"):
            try:
                lib = ctypes.CDLL(name)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                return lib.openblas_get_corename().decode()
            except OSError:
                continue
    except Exception:
        pass
    return None


def time_steps(step, warmup, iters):
    """Median seconds of `iters` calls of step() after `warmup`, and how busy the other cores were meanwhile."""
    for _ in range(warmup):
        step()
    times = []
    b0 = busy(); c0 = time.process_time(); t0 = time.perf_counter()
    for _ in range(iters):
        s = time.perf_counter(); step(); times.append(time.perf_counter() - s)
    total = time.perf_counter() - t0
    other = max(0.0, (busy() - b0 - (time.process_time() - c0)) / total)
    return sorted(times)[len(times) // 2], other

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16); ap.add_argument("--words", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=8387); ap.add_argument("--chars", type=int, default=86); ap.add_argument("--max-chars", type=int, default=12)
    ap.add_argument("--labels", type=int, default=3); ap.add_argument("--hidden", type=int, default=200); ap.add_argument("--mode", choices=["infer", "train"], default="train")
    ap.add_argument("--threads", type=int, default=2); ap.add_argument("--iters", type=int, default=20); ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads); torch.manual_seed(1)
    B, T, L = a.batch, a.words, a.max_chars
    model = Tagger(a.vocab, a.chars, a.labels)
    if a.hidden != model.lstm.hidden_size:  # the shared Tagger's BiLSTM is 2 x 200; the recipe's is wider
        model.lstm = torch.nn.LSTM(model.lstm.input_size, a.hidden, batch_first=True, bidirectional=True)
        model.out = torch.nn.Linear(2 * a.hidden, a.labels)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    W = torch.randint(2, a.vocab, (B, T)); C = torch.randint(2, a.chars, (B, T, L)); F = torch.zeros(B, T, 4)
    Y = torch.randint(0, a.labels, (B, T)); M = torch.ones(B, T, dtype=torch.bool)

    def step():
        if a.mode == "infer":
            model.eval()
            with torch.no_grad():
                model.emissions(W, C, F)
        else:
            model.train()
            loss = model.crf.nll(model.emissions(W, C, F), Y, M) / B
            opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0); opt.step()

    med, other = time_steps(step, a.warmup, a.iters)
    print(json.dumps({"mode": a.mode, "batch": B, "words": T, "ms_per_batch_median": med * 1000, "tokens_per_s": B * T / med,
                      "threads": a.threads, "openblas_core": openblas_core(), "other_procs_cpu_cores_avg": other}))


if __name__ == "__main__":
    main()
