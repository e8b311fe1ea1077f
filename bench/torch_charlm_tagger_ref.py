#!/usr/bin/env python3
"""Accuracy prototype (issue 26): ../shared/bench/torch_bilstm_ref.py's tagger with, per word, the
states of the two character language models of bench/torch_charlm_ref.py (forward: after the
word's last character; backward: after its first) concatenated to its word features (frozen,
computed once per corpus split and cached in the LM folder). Devel F1 after each epoch; test only
with --test. Without --charlm it is the reference tagger (with --w2v vectors) on the same footing.

  P="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 /usr/bin/python3"
  $P bench/torch_charlm_tagger_ref.py --corpus NCBI-disease-IOB --w2v V.vec --minutes 15 --seed 42 --out A
  $P bench/torch_charlm_tagger_ref.py --corpus NCBI-disease-IOB --w2v V.vec --minutes 15 --seed 42 --charlm LM --out B
"""
import argparse, collections, json, os, random, sys, time
import torch, torch.nn as nn
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "shared", "bench")); sys.path.insert(0, HERE)
import torch_bilstm_ref as R  # noqa: E402
import conlleval_ref as CE  # noqa: E402
from torch_charlm_ref import CharLM  # noqa: E402

def load_lm(path):
    s = torch.load(path); m = CharLM(len(s["chars"]), s["hidden"]); m.load_state_dict(s["model"]); m.eval()
    return m, {c: i for i, c in enumerate(s["chars"])}

def lm_features(sents, lmdir, cache):
    if os.path.exists(cache): return torch.load(cache)
    fwd, idx = load_lm(os.path.join(lmdir, "fwd", "ckpt.pt")); bwd, _ = load_lm(os.path.join(lmdir, "bwd", "ckpt.pt"))
    enc = lambda text: [idx.get(ch, 0) for ch in text]
    out = [None] * len(sents)
    order = sorted(range(len(sents)), key=lambda i: len(" ".join(w for w, _ in sents[i])))
    with torch.no_grad():
        for b0 in range(0, len(order), 64):
            ids = order[b0:b0 + 64]; texts = [" ".join(w for w, _ in sents[i]) for i in ids]
            L = max(len(t) for t in texts) + 1
            xf = torch.zeros(len(ids), L, dtype=torch.long); xb = torch.zeros(len(ids), L, dtype=torch.long)
            for r, t in enumerate(texts):
                f = enc("\n" + t); b = enc(("\n" + t[::-1])); xf[r, :len(f)] = torch.tensor(f); xb[r, :len(b)] = torch.tensor(b)
            _, hf, _ = fwd(xf); _, hb, _ = bwd(xb)
            for r, i in enumerate(ids):
                n = len(texts[r]); feats = []; pos = 0
                for w, _ in sents[i]:
                    s, e = pos, pos + len(w); pos = e + 1
                    # forward: state after the word's last character ("\n" shifts by one);
                    # backward: state after reading (right to left) the word's first character.
                    feats.append(torch.cat([hf[r, e], hb[r, n - s]]))
                out[i] = torch.stack(feats).half()
    torch.save(out, cache); return out

class TaggerLM(R.Tagger):
    def __init__(self, nw, nc, nl, fdim, **kw):
        super().__init__(nw, nc, nl, **kw)
        self.fdim = fdim
        if fdim: self.lstm = nn.LSTM(self.wemb.embedding_dim + 50 + 4 + fdim, 200, batch_first=True, bidirectional=True)
    def emissions(self, w, c, f, lm=None):
        B, T, L = c.shape
        ce = self.cemb(c.view(B * T, L)).transpose(1, 2)
        ch = self.cnn(ce).max(2).values.view(B, T, 50)
        parts = [self.wemb(w), ch, f] + ([lm] if self.fdim else [])
        h, _ = self.lstm(self.drop(torch.cat(parts, 2)))
        return self.out(self.drop(h))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="NCBI-disease-IOB"); ap.add_argument("--out", required=True)
    ap.add_argument("--charlm"); ap.add_argument("--w2v"); ap.add_argument("--epochs", type=int, default=40); ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--seed", type=int, default=42); ap.add_argument("--threads", type=int, default=1); ap.add_argument("--test", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads); torch.manual_seed(a.seed); random.seed(a.seed)
    os.makedirs(a.out, exist_ok=True); logf = open(os.path.join(a.out, "log.txt"), "a")
    def log(m):
        line = time.strftime("%H:%M:%S ") + m; print(line, flush=True); logf.write(line + "\n"); logf.flush()
    tr, dv, te = (R.read_iob(f"{R.DATA}/{a.corpus}/{s}.tsv") for s in ("train", "devel", "test"))
    feats = {}
    if a.charlm:
        t = time.time()
        for name, ss in (("train", tr), ("devel", dv)) + ((("test", te),) if a.test else ()):
            feats[name] = lm_features(ss, a.charlm, os.path.join(a.charlm, f"feats-{a.corpus}-{name}.pt"))
        log(f"char-LM features in {time.time() - t:.0f}s")
    labels = sorted({t for s in tr for _, t in s}); lab2id = {l: i for i, l in enumerate(labels)}
    wc = collections.Counter(w.lower() for s in tr for w, _ in s)
    words = ["<pad>", "<unk>"] + sorted(wc); vectors = None
    if a.w2v:
        vec = {}
        with open(a.w2v, encoding="utf-8") as fh:
            first = fh.readline().split()
            for line in fh:
                p = line.rstrip().split(" ")
                if len(p) == int(first[1]) + 1: vec[p[0]] = [float(x) for x in p[1:]]
        words += sorted(set(vec) - set(words)); dim = int(first[1]); vectors = torch.randn(len(words), dim) * 0.1
        for i, w in enumerate(words):
            if w in vec: vectors[i] = torch.tensor(vec[w])
        vectors[0] = 0
    w2i = {w: i for i, w in enumerate(words)}
    chars = ["<pad>", "<unk>"] + sorted({ch for s in tr for w, _ in s for ch in w}); c2i = {c: i for i, c in enumerate(chars)}
    singles = {w for w, n in wc.items() if n == 1}
    fdim = feats["train"][0].shape[1] if feats else 0

    def tensors(batch, train, fl):
        T = max(len(s) for s in batch); L = min(25, max(len(w) for s in batch for w, _ in s))
        W = torch.zeros(len(batch), T, dtype=torch.long); C = torch.zeros(len(batch), T, L, dtype=torch.long)
        Fe = torch.zeros(len(batch), T, 4); Y = torch.zeros(len(batch), T, dtype=torch.long); M = torch.zeros(len(batch), T, dtype=torch.bool)
        LM = torch.zeros(len(batch), T, fdim) if fdim else None
        for b, s in enumerate(batch):
            if fdim: LM[b, :len(s)] = fl[b].float()
            for t, (w, tag) in enumerate(s):
                lw = w.lower(); wi = w2i.get(lw, 1)
                if train and lw in singles and random.random() < 0.5: wi = 1
                W[b, t] = wi; M[b, t] = True; Y[b, t] = lab2id.get(tag, lab2id["O"])
                for k, ch in enumerate(w[:L]): C[b, t, k] = c2i.get(ch, 1)
                Fe[b, t] = torch.tensor(R.shape(w))
        return W, C, Fe, Y, M, LM

    model = TaggerLM(len(words), len(chars), len(labels), fdim, wdim=vectors.shape[1] if vectors is not None else 100, vectors=vectors)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    def predict(sents, name):
        model.eval(); out = []
        with torch.no_grad():
            for i in range(0, len(sents), 64):
                bt = sents[i:i + 64]; W, C, Fe, _, M, LM = tensors(bt, False, feats[name][i:i + 64] if fdim else None)
                for s, p in zip(bt, model.crf.decode(model.emissions(W, C, Fe, LM), M)):
                    out.append([(w, labels[k]) for (w, _), k in zip(s, p)])
        return out
    t0 = time.time(); best = (-1, 0, None); deadline = t0 + a.minutes * 60; ntok = sum(len(s) for s in tr)
    for ep in range(1, a.epochs + 1):
        model.train(); order = sorted(range(len(tr)), key=lambda i: (len(tr[i]), random.random()))
        batches = [order[i:i + 16] for i in range(0, len(order), 16)]; random.shuffle(batches)
        te0 = time.time(); tot = 0.0
        for bi in batches:
            W, C, Fe, Y, M, LM = tensors([tr[i] for i in bi], True, [feats["train"][i] for i in bi] if fdim else None)
            loss = model.crf.nll(model.emissions(W, C, Fe, LM), Y, M) / len(bi)
            opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(model.parameters(), 5.0); opt.step(); tot += float(loss)
        tps = ntok / (time.time() - te0)
        f1 = CE.score(dv, predict(dv, "devel"))["overall"]["f1"]
        if f1 > best[0]: best = (f1, ep, {k: v.clone() for k, v in model.state_dict().items()})
        log(f"epoch {ep} loss {tot / len(batches):.3f} devel F1 {f1:.4f} ({tps:.0f} words/s train) best {best[0]:.4f}@{best[1]}")
        if time.time() > deadline: log("time budget reached"); break
    res = {"corpus": a.corpus, "charlm": a.charlm, "w2v": a.w2v, "seed": a.seed, "best_epoch": best[1], "devel_f1": best[0], "minutes": (time.time() - t0) / 60}
    if a.test:
        model.load_state_dict(best[2]); res["test"] = CE.score(te, predict(te, "test"))["overall"]
    json.dump(res, open(os.path.join(a.out, "result.json"), "w"), indent=1)
    log("RESULT " + json.dumps(res))

if __name__ == "__main__":
    main()
