#!/usr/bin/python3
"""Independent check: `omn-audit profile --json` against the same statistics computed in Python
(torch.load + float64 arithmetic) on the same file.  check_profile.py OMN_AUDIT CKPT WORKDIR"""
import json
import os
import subprocess
import sys

import torch

omn, ckpt, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "profile.json")
subprocess.run([omn, "profile", ckpt, "--json", out, "--force", "--no-tables"], check=True)
doc = json.load(open(out))

sd = torch.load(ckpt)["model"]
vecs = [(i, r, sd["layers.%d.attention.%s_norm.weight" % (i, r)].double()) for i in range(28) for r in "qk"]
g = torch.cat([v for _, _, v in vecs])
n = g.numel()
mean = g.sum().item() / n
std = ((g - mean) ** 2).sum().item() / n
std = std ** 0.5
want = {
    "count": n, "mean": mean, "std": std, "min": g.min().item(), "max": g.max().item(),
    "share_above_threshold": (g > 1.43).sum().item() / n, "count_negative": (g < 0).sum().item(),
}
counts = {"[1,2]": ((g >= 1) & (g <= 2)).sum().item(), "(32,inf)": (g > 32).sum().item()}  # the default ranges
bad = []
for k, v in want.items():
    got = doc["statistics"][k]
    if abs(got - v) > 1e-12 * max(1.0, abs(v)):
        bad.append("%s: omn-audit %r, python %r" % (k, got, v))
for label, v in counts.items():
    got = doc["statistics"]["counts"][label]["count"]
    if got != v:
        bad.append("count in %s: omn-audit %r, python %r" % (label, got, v))
# the data's own bins: equal width over [min, max], ceil(2 n^(1/3)) of them between 8 and 40
import math  # noqa: E402
k = min(40, max(8, math.ceil(2 * n ** (1 / 3))))
lo, hi = g.min().item(), g.max().item()
w = (hi - lo) / k
want_bins = [0] * k
for x in g.tolist():
    want_bins[min(int((x - lo) / w), k - 1)] += 1
got_bins = [b["count"] for b in doc["distribution"]["bins"]]
if got_bins != want_bins or abs(doc["distribution"]["bins"][-1]["hi"] - hi) > 0:
    bad.append("distribution: omn-audit %r, python %r" % (got_bins, want_bins))
for i, r, v in vecs:
    L = doc["layers"][i][r]
    for k, ref in (("mean", v.mean().item()), ("min", v.min().item()), ("max", v.max().item()),
                   ("std", v.std(unbiased=False).item())):
        if abs(L[k] - ref) > 1e-12 * max(1.0, abs(ref)):
            bad.append("layer %d %s %s: omn-audit %r, python %r" % (i, r, k, L[k], ref))
    half = v.numel() // 2
    asym = (v[:half] - v[half:]).abs().mean().item()
    if abs(L["rope_pair_asymmetry"]["mean_abs_diff"] - asym) > 1e-12 * max(1.0, asym):
        bad.append("layer %d %s asymmetry" % (i, r))
print("%d passed, %d failed" % (len(want) + len(counts) + 1 + 5 * len(vecs) - len(bad), len(bad)))
for b in bad:
    print("MISMATCH", b)
sys.exit(1 if bad else 0)
