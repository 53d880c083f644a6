#!/usr/bin/python3
"""Untrusted documents (issue 9, class 6): every document omn-audit reads back -- profiles, sweep
results, tracks -- is damaged in every way a careless edit or a hostile author would (each field
removed, each field given the wrong type, each array emptied, nesting made absurd), and handed to
every command that reads it: plot, report, compare, merge, --baseline. Each must end in exit 0 with
a correct result or exit 2 naming the file and a JSON pointer -- never exit 1, a signal or a hang.

usage: check_documents.py OMN_AUDIT CHECKPOINT PROFILE.json SWEEP.json SHARD0.json SHARD1.json TRACK.json WORKDIR
"""
import copy
import json
import os
import subprocess
import sys

omn, ckpt, profile, sweep, shard0, shard1, track, work = sys.argv[1:9]
os.makedirs(work, exist_ok=True)
fails = passes = 0


def check(ok, what):
    global fails, passes
    if ok:
        passes += 1
    else:
        fails += 1
        print("FAIL:", what)


def paths(doc, prefix=(), depth=0):
    """Every place in the document down to depth 4, arrays through their first and last element."""
    if depth >= 4:
        return
    items = []
    if isinstance(doc, dict):
        items = list(doc.items())
    elif isinstance(doc, list) and doc:
        items = [(0, doc[0])] + ([(len(doc) - 1, doc[-1])] if len(doc) > 1 else [])
    for k, v in items:
        yield prefix + (k,)
        yield from paths(v, prefix + (k,), depth + 1)


def mutations(doc):
    """(label, damaged document): each place removed and given each wrong type."""
    for p in paths(doc):
        if p == ("schema",):
            continue
        parent = doc
        for k in p[:-1]:
            parent = parent[k]
        original = parent[p[-1]]
        label = "/" + "/".join(str(k) for k in p)
        wrong = ["x", None, [], {}, -1, 1e308]
        if isinstance(original, (dict, list)):
            wrong = ["x", None, 3] + ([[]] if isinstance(original, list) else [{}])
        elif isinstance(original, str):
            wrong = [None, 7, []]
        elif isinstance(original, bool):
            wrong = ["x", 2]
        elif isinstance(original, (int, float)):
            wrong = ["x", None, -1, 1e308]
        for w in wrong:
            if w == original and type(w) is type(original):
                continue
            d = copy.deepcopy(doc)
            q = d
            for k in p[:-1]:
                q = q[k]
            q[p[-1]] = w
            yield f"{label} = {json.dumps(w)}", d
        if isinstance(parent, dict):
            d = copy.deepcopy(doc)
            q = d
            for k in p[:-1]:
                q = q[k]
            del q[p[-1]]
            yield f"{label} removed", d


def run(args, label):
    try:
        r = subprocess.run([omn] + args, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        check(False, f"{label}: {' '.join(args[:2])}: hung (30 s)")
        return None
    ok = r.returncode in (0, 2, 3)
    if r.returncode == 2:
        ok = ok and ("/" in r.stderr) and "error:" in r.stderr  # names a pointer (or a path)
    check(ok, f"{label}: {' '.join(args[:1])}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return r


def sweep_cases(name, doc, commands, budget):
    """Runs each command on up to `budget` damaged copies of `doc` (an even spread over all of them)."""
    all_m = list(mutations(doc))
    if os.environ.get("OMN_DOCUMENTS_ALL"):  # every damaged document (minutes; CI runs an even sample)
        budget = len(all_m)
    step = max(1, len(all_m) // budget)
    chosen = all_m[::step][:budget]
    path = os.path.join(work, name)
    for label, d in chosen:
        with open(path, "w") as f:
            json.dump(d, f)
        for cmd in commands:
            run(cmd(path), f"{name} {label}")
    print(f"{name}: {len(chosen)} of {len(all_m)} damaged documents, {len(commands)} commands each")


load = lambda p: json.load(open(p))
figs = os.path.join(work, "figs")
rep = os.path.join(work, "r.html")
plot = lambda p: ["plot", p, "-o", figs, "--force"]
report = lambda p: ["report", p, "-o", rep, "--force"]
sweep_cases("profile.json", load(profile), [plot, report, lambda p: ["compare", p, profile],
                                             lambda p: ["profile", ckpt, "--baseline", p, "--no-tables"]], 40)
sweep_cases("sweep.json", load(sweep), [plot, report], 50)
sweep_cases("track.json", load(track), [plot], 30)
merged = os.path.join(work, "merged.json")
sweep_cases("shard.json", load(shard1), [lambda p: ["merge", shard0, p, "-o", merged, "--force"]], 30)

# absurd nesting, an empty object, a bare schema: refused, never a crash and never "OK"
for name, text in [("deep.json", "[" * 200000 + "]" * 200000), ("deep-object.json", '{"a":' * 100000 + "1" + "}" * 100000),
                   ("empty.json", "{}"), ("bare.json", '{"schema":"omn-audit/profile@1"}'),
                   ("layers-empty-object.json", '{"schema":"omn-audit/profile@1","layers":[{}]}')]:
    p = os.path.join(work, name)
    open(p, "w").write(text)
    for cmd in (plot, report, lambda p: ["compare", p, profile], lambda p: ["profile", ckpt, "--baseline", p, "--no-tables"]):
        r = run(cmd(p), name)
        check(r is not None and r.returncode == 2, f"{name}: {cmd(p)[0]}: refused with exit 2")

# a valid profile of a diverged model: layer 3's Q gains all NaN, so its statistics are null
nan = load(profile)
for k in ("mean", "std", "min", "max"):
    nan["layers"][3]["q"][k] = None
nan["layers"][3]["mean"] = nan["layers"][3]["q_minus_k"] = None
p = os.path.join(work, "nan-layer.json")
json.dump(nan, open(p, "w"))
for cmd in (plot, report):
    r = run(cmd(p), "nan-layer.json")
    check(r is not None and r.returncode == 0, f"a layer with no finite gain: {cmd(p)[0]} draws the others (exit 0)")

# names with ESC, BEL and invalid UTF-8: every output format stays valid and shows them as escapes
import xml.etree.ElementTree as ET  # noqa: E402
hostile = load(sweep)
for c in hostile["conditions"]:
    c["label"] = "evil \x1b[31mred\x07 <b>&" + c["label"]
hostile["manifest"]["path"] = "m\x1b]0;title\x07.json"
p = os.path.join(work, "hostile.json")
json.dump(hostile, open(p, "w"))
hfigs = os.path.join(work, "hostile-figs")
os.makedirs(hfigs, exist_ok=True)
r1 = run(["plot", p, "-o", hfigs, "--force"], "hostile names: plot")
r2 = run(["report", p, "-o", os.path.join(work, "hostile.html"), "--force"], "hostile names: report")
r3 = run(["report", p, "-o", os.path.join(work, "hostile.md"), "--force"], "hostile names: markdown report")
svgs = [f for f in os.listdir(hfigs) if f.endswith(".svg")]
bad = []
for f in svgs:
    try:
        ET.parse(os.path.join(hfigs, f))
    except ET.ParseError as e:
        bad.append("%s: %s" % (f, e))
raw = [f for f in os.listdir(hfigs) + ["hostile.html", "hostile.md"]
       if b"\x1b" in open(os.path.join(hfigs if not f.startswith("hostile.") else work, f), "rb").read()
       or b"\x07" in open(os.path.join(hfigs if not f.startswith("hostile.") else work, f), "rb").read()]
check(all(r is not None and r.returncode == 0 for r in (r1, r2, r3)) and svgs and not bad and not raw,
      "names with ESC/BEL: %d SVGs parse as XML, no raw control byte in SVG, CSV, HTML or Markdown %s" % (len(svgs), bad[:1] + raw[:2]))

# big but flat: 300,000 empty objects in a free-form field parse in linear time (nlohmann's depth
# callback made this O(n^2): 26 s for 620 kB) -- run() gives each command 30 s
flat = load(profile)
flat["checkpoint"]["metadata"] = {"x": [{}] * 300000}
p = os.path.join(work, "flat.json")
json.dump(flat, open(p, "w"))
r = run(["compare", p, profile], "flat.json")
check(r is not None and r.returncode == 0, "300,000 objects in a field: compare answers (exit 0), no quadratic parse")

# merged shards: the statistics' settings are checked like the manifest's (2^32+1 resamples had become 1)
for key, val, ptr in (("bootstrap", {"resamples": 2**32 + 1}, "/bootstrap/resamples"), ("groups", 2**32 + 2, "/groups")):
    docs = [load(shard0), load(shard1)]
    for i, d in enumerate(docs):
        d["manifest"]["verbatim"][key] = val
        json.dump(d, open(os.path.join(work, f"wrap{i}.json"), "w"))
    r = run(["merge", os.path.join(work, "wrap0.json"), os.path.join(work, "wrap1.json"), "-o", merged, "--force"], "wrapping " + key)
    check(r is not None and r.returncode == 2 and ptr in r.stderr, f"merge: {ptr} that would wrap is exit 2 naming it")

# a tolerance pattern of 40 stars: the matcher is linear, the answer the same as with one star
tol = os.path.join(work, "tol.json")
json.dump({"schema": "omn-audit/tolerance@1", "rules": [{"pointer": "/" + "*" * 40 + "x/*", "abs": 1}],
           "default": {"rel": 1e-9}}, open(tol, "w"))
r = run(["profile", ckpt, "--baseline", profile, "--tolerance", tol, "--no-tables"], "40-star tolerance")
check(r is not None and r.returncode == 0 and "OK: every statistic" in r.stdout, "40-star tolerance: same verdict, in time")

print(f"{passes} passed, {fails} failed")
sys.exit(1 if fails else 0)
