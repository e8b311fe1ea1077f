#!/usr/bin/env python3
"""Accuracy prototype (issue 26): a character language model of the unlabelled sentences (Akbik et
al. 2018's contextual string embeddings, small: one LSTM layer, 64-dim characters), one direction
per run, whose per-word states bench/torch_charlm_tagger_ref.py adds to the BiLSTM-CRF reference.
Truncated BPTT (64 streams x 200 characters), Adam 2e-3, clip 1; every character seen 20 times is
its own symbol. Resumes from OUT/ckpt.pt (saved every 5 minutes); logs train bits per character.

  P="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3"
  $P bench/torch_charlm_ref.py --dir fwd --out LM/fwd --minutes 60 &   # the two directions side
  $P bench/torch_charlm_ref.py --dir bwd --out LM/bwd --minutes 60     # by side, one thread each

--speed infer|train (bench:engine's char-lm row): characters/s of both directions' models on random
characters of one shape, B streams x --bptt characters: the forward (eval mode) or a training
chunk (forward, cross-entropy, backward, clip, Adam), one JSON line as torch_word_tagger_ref.py.
"""
import argparse, collections, json, math, os, time
import torch, torch.nn as nn

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "unlabeled", "biomed-sentences.txt")

class CharLM(nn.Module):
    def __init__(self, nc, hidden, emb=64):
        super().__init__()
        self.emb = nn.Embedding(nc, emb); self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.drop = nn.Dropout(0.1); self.out = nn.Linear(hidden, nc)
    def forward(self, x, state=None):  # x B,T -> logits B,T,V ; h B,T,H
        h, state = self.lstm(self.emb(x), state)
        return self.out(self.drop(h)), h, state

def vocab_of(text, min_count=20):
    c = collections.Counter(text)
    chars = sorted(ch for ch, n in c.items() if n >= min_count)
    return ["<unk>"] + chars

def encode(text, chars):
    idx = {ch: i for i, ch in enumerate(chars)}
    return torch.tensor([idx.get(ch, 0) for ch in text], dtype=torch.long)

def speed(a):
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_word_tagger_ref import openblas_core, time_steps
    torch.set_num_threads(a.threads); torch.manual_seed(1)
    models = [CharLM(a.chars, a.hidden) for _ in range(2)]
    opts = [torch.optim.Adam(m.parameters(), lr=a.lr) for m in models]
    x = torch.randint(1, a.chars, (a.batch, a.bptt)); y = torch.randint(1, a.chars, (a.batch, a.bptt))
    state = [(torch.zeros(1, a.batch, a.hidden), torch.zeros(1, a.batch, a.hidden)) for _ in range(2)]
    lossf = nn.CrossEntropyLoss()
    def step():
        for m, o, st in zip(models, opts, state):
            if a.speed == "infer":
                m.eval()
                with torch.no_grad():
                    m(x, st)
            else:
                m.train(); lo, _, _ = m(x, st)
                loss = lossf(lo.reshape(-1, lo.shape[-1]), y.reshape(-1))
                o.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(m.parameters(), 1.0); o.step()
    med, other = time_steps(step, 2, a.iters)
    print(json.dumps({"mode": a.speed, "batch": a.batch, "bptt": a.bptt, "hidden": a.hidden, "ms_per_batch_median": med * 1000, "tokens_per_s": 2 * a.batch * a.bptt / med,
                      "threads": a.threads, "openblas_core": openblas_core(), "other_procs_cpu_cores_avg": other}))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed", choices=["infer", "train"]); ap.add_argument("--chars", type=int, default=94); ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--dir", choices=["fwd", "bwd"]); ap.add_argument("--out")
    ap.add_argument("--hidden", type=int, default=512); ap.add_argument("--minutes", type=float, default=40)
    ap.add_argument("--threads", type=int, default=1); ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--bptt", type=int, default=200); ap.add_argument("--lr", type=float, default=2e-3)
    a = ap.parse_args()
    if a.speed:
        return speed(a)
    if not a.dir or not a.out:
        ap.error("--dir and --out are required (or --speed)")
    torch.set_num_threads(a.threads); torch.manual_seed(42)
    os.makedirs(a.out, exist_ok=True)
    text = "\n" + open(TEXT, encoding="utf-8").read().replace("\r", "")
    chars = vocab_of(text)
    if a.dir == "bwd": text = text[::-1]
    data = encode(text, chars)
    nval = len(data) // 100
    train, val = data[:-nval], data[-nval:]
    cols = len(train) // a.batch
    streams = train[: cols * a.batch].view(a.batch, cols)
    model = CharLM(len(chars), a.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    ck = os.path.join(a.out, "ckpt.pt"); pos = 0; done_s = 0.0; epoch = 0
    if os.path.exists(ck):
        s = torch.load(ck); model.load_state_dict(s["model"]); opt.load_state_dict(s["opt"]); pos, done_s, epoch = s["pos"], s["seconds"], s["epoch"]
    log = open(os.path.join(a.out, "log.txt"), "a")
    def say(m):
        print(m, flush=True); log.write(m + "\n"); log.flush()
    say(f"chars {len(chars)}, train {len(train)} chars ({cols} per stream), hidden {a.hidden}, resume pos {pos} epoch {epoch} after {done_s:.0f}s")
    lossf = nn.CrossEntropyLoss()
    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "pos": pos, "seconds": done_s, "epoch": epoch,
                    "chars": chars, "hidden": a.hidden, "dir": a.dir}, ck + ".tmp"); os.replace(ck + ".tmp", ck)
    def evaluate():
        model.eval(); tot = 0.0; n = 0
        with torch.no_grad():
            v = val[: (len(val) - 1) // 1000 * 1000 + 1]
            x = v[:-1].view(10, -1); y = v[1:].view(10, -1)
            _, _, st = None, None, None
            for s in range(0, x.shape[1], 500):
                lo, _, st = model(x[:, s:s + 500], st)
                tot += nn.functional.cross_entropy(lo.reshape(-1, lo.shape[-1]), y[:, s:s + 500].reshape(-1), reduction="sum").item(); n += y[:, s:s + 500].numel()
        model.train(); return tot / n / math.log(2)
    start = time.time(); last_save = start; state = None; run_loss = 0.0; k = 0; period = time.time()
    while done_s + (time.time() - start) < a.minutes * 60:
        if pos + a.bptt + 1 > cols:
            epoch += 1; pos = 0; state = None
            say(f"epoch {epoch} done; val bpc {evaluate():.3f}")
        x = streams[:, pos:pos + a.bptt]; y = streams[:, pos + 1:pos + a.bptt + 1]
        if state is not None: state = tuple(s.detach() for s in state)
        lo, _, state = model(x, state)
        loss = lossf(lo.reshape(-1, lo.shape[-1]), y.reshape(-1))
        opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
        pos += a.bptt; run_loss += loss.item(); k += 1
        if k % 200 == 0:
            el = done_s + time.time() - start
            say(f"{el/60:.1f} min epoch {epoch} pos {pos}/{cols} train bpc {run_loss / k / math.log(2):.3f} ({a.batch * a.bptt * k / (time.time() - period):.0f} chars/s)")
            run_loss = 0.0; k = 0; period = time.time()
        if time.time() - last_save > 300:
            done_s += time.time() - start; start = time.time(); save(); last_save = start
    done_s += time.time() - start; start = time.time(); save()
    say(f"stopped at {done_s/60:.1f} min; val bpc {evaluate():.3f}")

if __name__ == "__main__":
    main()
