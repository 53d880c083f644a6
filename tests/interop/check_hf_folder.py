#!/usr/bin/python3
"""A Hugging Face model folder (config.json beside the weights) wherever a checkpoint goes:
profile, eval, intervene and track read it, config.json gives the architecture, and what it says
is checked against the tensors. The folder's model is Qwen3-named with a config that departs from
the qwen3 preset's defaults (RoPE base 5,000 and eps 1e-5, not 1e6 and 1e-6), so a result that
matches the independent reference (tests/parity/reference_model.py) with config.json's values, and
differs from the bare file read with the preset's, shows config.json was read.

usage: check_hf_folder.py OMN_AUDIT WORKDIR
"""
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Harness  # noqa: E402
from reference_model import Reference  # noqa: E402

omn, work = sys.argv[1], sys.argv[2]
H = Harness(omn, work)
torch.manual_seed(3)
VOCAB, D, NH, NKV, HD, F, L = 97, 32, 4, 2, 8, 40, 2
SEQ, NSEQ = 24, 4
THETA, EPS = 5000.0, 1e-5

NAMES = {"embedding": "model.embed_tokens.weight", "attention_norm": "model.layers.{i}.input_layernorm.weight",
         "wq": "model.layers.{i}.self_attn.q_proj.weight", "wk": "model.layers.{i}.self_attn.k_proj.weight",
         "wv": "model.layers.{i}.self_attn.v_proj.weight", "wo": "model.layers.{i}.self_attn.o_proj.weight",
         "q_norm": "model.layers.{i}.self_attn.q_norm.weight", "k_norm": "model.layers.{i}.self_attn.k_norm.weight",
         "ffn_norm": "model.layers.{i}.post_attention_layernorm.weight", "w1": "model.layers.{i}.mlp.gate_proj.weight",
         "w3": "model.layers.{i}.mlp.up_proj.weight", "w2": "model.layers.{i}.mlp.down_proj.weight",
         "final_norm": "model.norm.weight", "output": "lm_head.weight"}
ST = {torch.float32: "F32", torch.bfloat16: "BF16", torch.int32: "I32"}


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, v in tensors.items():
        data = v.contiguous().view(torch.uint8).numpy().tobytes()
        header[k] = {"dtype": ST[v.dtype], "shape": list(v.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def model(tied):
    sd = collections.OrderedDict()
    r = lambda *s: torch.randn(*s) / s[-1] ** 0.5  # noqa: E731
    sd[NAMES["embedding"]] = torch.randn(VOCAB, D)
    for i in range(L):
        n = lambda role: NAMES[role].replace("{i}", str(i))  # noqa: E731
        sd[n("attention_norm")], sd[n("ffn_norm")] = 1 + 0.2 * torch.randn(D), 1 + 0.2 * torch.randn(D)
        sd[n("wq")], sd[n("wk")], sd[n("wv")], sd[n("wo")] = r(NH * HD, D), r(NKV * HD, D), r(NKV * HD, D), r(D, NH * HD)
        sd[n("q_norm")], sd[n("k_norm")] = torch.rand(HD) * 3 - 0.2, torch.rand(HD) * 3 - 0.2
        sd[n("w1")], sd[n("w3")], sd[n("w2")] = r(F, D), r(F, D), r(D, F)
    sd[NAMES["final_norm"]] = 1 + 0.1 * torch.randn(D)
    if not tied:
        sd[NAMES["output"]] = r(VOCAB, D) * 3
    return sd


def config(tied, **change):
    c = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": D, "num_attention_heads": NH,
         "num_key_value_heads": NKV, "head_dim": HD, "intermediate_size": F, "num_hidden_layers": L, "vocab_size": VOCAB,
         "rms_norm_eps": EPS, "rope_theta": THETA, "rope_scaling": None, "tie_word_embeddings": tied, "hidden_act": "silu",
         "attention_bias": False, "use_sliding_window": False, "sliding_window": None, "torch_dtype": "float32"}
    c.update(change)
    return c


def folder(name, sd, cfg, sharded=False, extra=()):
    d = os.path.join(work, name)
    os.makedirs(d)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    if sharded:
        keys = list(sd)
        parts = [keys[: len(keys) // 2], keys[len(keys) // 2:]]
        wmap = {}
        for i, part in enumerate(parts):
            fname = "model-%05d-of-00002.safetensors" % (i + 1)
            write_safetensors(os.path.join(d, fname), collections.OrderedDict((k, sd[k]) for k in part))
            wmap.update({k: fname for k in part})
        json.dump({"metadata": {}, "weight_map": wmap}, open(os.path.join(d, "model.safetensors.index.json"), "w"))
    else:
        write_safetensors(os.path.join(d, "model.safetensors"), sd)
    for f in extra:  # what else a model folder holds: never read
        open(os.path.join(d, f), "w").write("{}\n")
    return d


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def ref_cfg(tied):
    return {"tensors": NAMES, "head_dim": HD, "n_heads": NH, "n_kv_heads": NKV, "n_layers": L, "norm_eps": EPS,
            "qk_norm_eps": EPS, "rope_theta": THETA, "rope_style": "rotate_half", "norm_cast": "multiply_then_cast",
            "qk_norm_cast": "cast_then_multiply", "qk_layout": "head", "one_plus": False, "tied_output": tied}


rng = np.random.default_rng(5)
stream = rng.integers(1, VOCAB, size=SEQ * NSEQ + 8).astype(np.uint16)  # no EOS (0): one document per row
tokpath = os.path.join(work, "tokens.bin")
stream.tofile(tokpath)
rows = [torch.tensor(stream[i * SEQ:(i + 1) * SEQ].astype(np.int64)) for i in range(NSEQ)]


def evaluate(ck, tag, *extra, expect=0):
    out, logits = os.path.join(work, tag + ".json"), os.path.join(work, tag + ".npy")
    p = H.run("eval", ck, "--tokens", tokpath, "--eos", "0", "--tokenizer-revision", "test", "--seq-len", str(SEQ),
              "--num-seqs", str(NSEQ), "--row-form", "historical", "--dtype", "fp32", "--groups", "2",
              "--bootstrap-resamples", "100", "--json", out, "--dump-logits", logits, *extra,
              expect=expect)
    if expect:
        return p
    return json.load(open(out)), np.load(logits)


def check_against_reference(doc, logits, sd, tied, tag):
    ref = Reference(sd, ref_cfg(tied))
    zeros = torch.zeros(SEQ, dtype=torch.long)
    want = [ref.nll(t, zeros)[0] for t in rows]
    got = doc["result"]["sequences"]["nll_sum"]
    rel = max(abs(g - w) / abs(w) for g, w in zip(got, want))
    H.check(rel <= 1e-6, "%s: NLL equals the reference with config.json's RoPE base and eps (rel %.2g)" % (tag, rel))
    err = float(np.abs(logits - ref.forward(rows[0], zeros).numpy()).max())
    H.check(err <= 1e-4, "%s: row 0's logits equal the reference's (max abs %.2g)" % (tag, err))
    return got


# --- 1. profile: the folder is its weights file, and config.json is recorded ----------------------
sd = model(tied=False)
qdir = folder("qwen3-like", sd, config(False), extra=["tokenizer.json", "generation_config.json"])
weights = os.path.join(qdir, "model.safetensors")
pf = os.path.join(work, "folder.profile.json")
H.run("profile", qdir, "--json", pf, "--no-tables")
prof = json.load(open(pf))
H.check(prof["preset"]["name"] == "qwen3" and not prof["preset"]["detected"],
        "profile: config.json's model_type chose the qwen3 preset (not detected from tensor names)")
H.check(prof["checkpoint"]["path"] == weights, "profile: the checkpoint read is the folder's model.safetensors")
folder_rec = prof["checkpoint"].get("folder") or {}
H.check(folder_rec.get("config_sha256") == sha(os.path.join(qdir, "config.json")) and folder_rec.get("model_type") == "qwen3",
        "profile: /checkpoint/folder records config.json's digest and model_type")
H.check(any(i["role"] == "model-config" and i["sha256"] == sha(os.path.join(qdir, "config.json"))
            for i in prof["provenance"]["inputs"]), "profile: config.json is a provenance input with its digest")
v = H.run("-v", "profile", qdir, "--no-tables")
q = H.run("profile", qdir, "--no-tables")
H.check("preset qwen3 (chosen by %s /model_type)" % os.path.join(qdir, "config.json") in v.stderr and
        "architecture rope_theta from" in v.stderr and "chosen by" not in q.stderr,
        "profile -v says how the folder was read (the preset's choice, each key config.json gave); the default does not")
pb = os.path.join(work, "file.profile.json")
H.run("profile", weights, "--json", pb, "--no-tables")
H.check(json.load(open(pb))["statistics"] == prof["statistics"], "profile: the folder's statistics are the weights file's")

# --digests over every file of the folder (sha256sum DIR/*): the weights and config.json verified, the rest not read
sums = os.path.join(work, "SUMS")
open(sums, "w").write("".join("%s  %s\n" % (sha(os.path.join(qdir, f)), os.path.join(qdir, f)) for f in sorted(os.listdir(qdir))))
H.run("profile", qdir, "--digests", sums, "--json", pf, "--force", "--no-tables")
prof = json.load(open(pf))
H.check(prof["checkpoint"]["verified"] == "all" and prof["checkpoint"]["folder"]["config_verified"],
        "profile --digests DIR/*: the weights and config.json verified, the folder's other listed files checked")
lines = open(sums).read().splitlines()
bad = [("0" * 64 + l[64:]) if l.endswith("tokenizer.json") else l for l in lines]
open(sums, "w").write("\n".join(bad) + "\n")
p = H.run("profile", qdir, "--digests", sums, "--no-tables", expect=4)
H.check("tokenizer.json" in p.stderr, "profile: another file of the folder that the list pins wrongly is exit 4 naming it")
bad = [("0" * 64 + l[64:]) if l.endswith("config.json") else l for l in lines]
open(sums, "w").write("\n".join(bad) + "\n")
p = H.run("profile", qdir, "--digests", sums, "--no-tables", expect=4)
H.check("config.json" in p.stderr, "profile: a config.json that is not the pinned one is exit 4 naming it")

# --- 2. eval: config.json's architecture, equal to the reference ---------------------------------
doc, logits = evaluate(qdir, "folder")
got = check_against_reference(doc, logits, sd, False, "eval FOLDER")
H.check(doc["checkpoint"]["folder"]["config"] == os.path.join(qdir, "config.json") and doc["model"]["config"]["rope_theta"] == THETA,
        "eval: the document records the folder and the RoPE base config.json gave")
pinned, _ = evaluate(qdir, "pinned", "--config-sha256", sha(os.path.join(qdir, "config.json")))
H.check(pinned["checkpoint"]["folder"]["config_verified"] and not doc["checkpoint"]["folder"]["config_verified"] and
        pinned["result"]["sequences"]["nll_sum"] == got, "eval --config-sha256: config.json verified and recorded as such")
p = evaluate(qdir, "pin-wrong", "--config-sha256", "0" * 64, expect=4)
H.check("config.json" in p.stderr, "eval --config-sha256 that is not config.json's: exit 4 naming it")
p = evaluate(weights, "pin-file", "--config-sha256", "0" * 64, expect=2)
H.check("is a file, not a folder" in p.stderr, "eval --config-sha256 on a weights file: exit 2")
oj = os.path.join(work, "eval-o.json")
H.run("eval", qdir, "--tokens", tokpath, "--eos", "0", "--tokenizer-revision", "test", "--seq-len", str(SEQ), "--num-seqs", str(NSEQ),
      "--row-form", "historical", "--dtype", "fp32", "--groups", "2", "--bootstrap-resamples", "100", "-o", oj)
H.check(json.load(open(oj))["result"]["sequences"]["nll_sum"] == got, "eval -o (as every command's -o/--output) writes the result")
bare, _ = evaluate(weights, "bare")
H.check(bare["result"]["sequences"]["nll_sum"] != got,
        "eval of the bare weights file (the qwen3 preset's RoPE base 1e6, eps 1e-6) differs: config.json was read")
preset = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "presets", "qwen3.json")))
preset["architecture"].update({"rope_theta": THETA, "norm_eps": EPS, "qk_norm_eps": EPS})
ppath = os.path.join(work, "preset.json")
json.dump(preset, open(ppath, "w"))
same, _ = evaluate(weights, "with-preset", "--preset", ppath)
H.check(same["result"]["sequences"]["nll_sum"] == got, "eval: the folder equals the file under a preset with config.json's values, bit for bit")

# a sharded folder with a tied head (no lm_head, tie_word_embeddings)
sdt = model(tied=True)
tdir = folder("qwen3-tied-sharded", sdt, config(True), sharded=True)
doc, logits = evaluate(tdir, "tied")
check_against_reference(doc, logits, sdt, True, "eval FOLDER (sharded, tied head)")

# tie_word_embeddings with an lm_head in the file too: the embedding is the head, as transformers ties it
sdl = collections.OrderedDict(sdt)
sdl[NAMES["output"]] = torch.randn(VOCAB, D)
ldir = folder("qwen3-tied-with-head", sdl, config(True))
doc, logits = evaluate(ldir, "tied-with-head")
check_against_reference(doc, logits, sdt, True, "eval FOLDER (tied, an lm_head present and ignored)")
p = H.run("eval", ldir, "--tokens", tokpath, "--eos", "0", "--tokenizer-revision", "test", "--seq-len", str(SEQ), "--num-seqs", "2",
          "--groups", "1", "--bootstrap-resamples", "10")
H.check("config.json /tie_word_embeddings ties the output head to the embedding (as transformers does): the weights' 'lm_head.weight' "
        "differs from the embedding and is not used" in p.stderr, "eval FOLDER (tied, a different lm_head): said in a warning (%s)" % p.stderr[-300:])
sdi = collections.OrderedDict(sdt)
sdi[NAMES["output"]] = sdt[NAMES["embedding"]].clone()
idir = folder("qwen3-tied-identical-head", sdi, config(True))
p = H.run("eval", idir, "--tokens", tokpath, "--eos", "0", "--tokenizer-revision", "test", "--seq-len", str(SEQ), "--num-seqs", "2",
          "--groups", "1", "--bootstrap-resamples", "10")
H.check("ties the output head" not in p.stderr, "eval FOLDER (tied, an lm_head equal to the embedding): no warning")
# tie_word_embeddings false and no lm_head: the config and the tensors disagree, exit 2 naming the key
udir = folder("qwen3-untied-without-head", sdt, config(False))
p = evaluate(udir, "untied-without-head", expect=2)
H.check("config.json /tie_word_embeddings is false (an output head of its own), and the weights have no 'lm_head.weight'" in p.stderr,
        "eval FOLDER (untied, no lm_head): exit 2 naming config.json's tie_word_embeddings (%s)" % p.stderr[-300:])

# --- 3. intervene: a manifest's checkpoint may be a folder ----------------------------------------
shutil.copy(tokpath, os.path.join(work, "tokens-m.bin"))
manifest = {"schema": "omn-audit/manifest@1", "checkpoint": {"path": "qwen3-like", "sha256": sha(weights),
                                                             "config_sha256": sha(os.path.join(qdir, "config.json"))},
            "tokens": {"path": "tokens-m.bin", "sha256": sha(tokpath), "eos": 0, "tokenizer_revision": "test"},
            "rows": {"seq_len": SEQ, "num_seqs": NSEQ, "form": "historical"}, "groups": 2,
            "bootstrap": {"resamples": 100, "seed": 1}, "model": {"dtype": "fp32", "attention": "masked"},
            "conditions": [{"op": "constant", "values": [1.0], "targets": ["qk"], "layers": "all"}],
            "output": {"json": "sweep.json"}}
mpath = os.path.join(work, "manifest.json")
json.dump(manifest, open(mpath, "w"))
H.run("-q", "intervene", "--manifest", mpath, "--force")
sweep = json.load(open(os.path.join(work, "sweep.json")))
H.check(sweep["control"]["open"]["result"]["sequences"]["nll_sum"] == got,
        "intervene: the control pass on the folder scores what eval scored, bit for bit")
H.check(sweep["checkpoint"]["folder"]["path"] == "qwen3-like" and sweep["checkpoint"]["folder"]["config_verified"],
        "intervene: the folder is recorded relative to the manifest, its config.json verified by /checkpoint/config_sha256")

# --- 4. track: model folders, and a Trainer's checkpoint-N/ folders ------------------------------
tr = os.path.join(work, "trainer-out")
for step in (500, 1000):
    d = os.path.join(tr, "checkpoint-%d" % step)
    shutil.copytree(qdir, d)
    open(os.path.join(d, "optimizer.pt"), "wb").write(b"not a model")  # what a Trainer writes beside the model
    json.dump({"global_step": step}, open(os.path.join(d, "trainer_state.json"), "w"))
tj = os.path.join(work, "track.json")
H.run("track", tr, "--order", "given", "--json", tj)
t = json.load(open(tj))
H.check([c["path"] for c in t["checkpoints"]] == [os.path.join(tr, "checkpoint-500"), os.path.join(tr, "checkpoint-1000")],
        "track: a directory of checkpoint-N/ model folders, one checkpoint per folder in step order (optimizer.pt not read)")
# the final model at the top of a Trainer's output, its checkpoint-N/ folders before it
for f in os.listdir(qdir):
    shutil.copy(os.path.join(qdir, f), tr)
sums = os.path.join(work, "SUMS-track")
open(sums, "w").write("".join("%s  %s\n" % (sha(os.path.join(tr, "checkpoint-500", f)), os.path.join(tr, "checkpoint-500", f))
                              for f in ("model.safetensors", "config.json")))
H.run("track", tr, "--order", "given", "--digests", sums, "--json", tj, "--force")
t = json.load(open(tj))
H.check([c["path"] for c in t["checkpoints"]] == [os.path.join(tr, "checkpoint-500"), os.path.join(tr, "checkpoint-1000"), tr] and
        [c["sha256_verified"] for c in t["checkpoints"]] == [True, False, False] and t["summary"]["verified"] == 1,
        "track TRAINER_OUT: the checkpoint-N/ folders, then the final model; sha256sum lines of a folder's files verify it")
H.run("track", os.path.join(tr, "checkpoint-1000"), os.path.join(tr, "checkpoint-500"), "--json", tj, "--force")
t = json.load(open(tj))
H.check([c["step"] for c in t["checkpoints"]] == [500, 1000], "track: a Trainer folder's step from trainer_state.json orders it")

# --- 5. what config.json says is checked, and what eval cannot compute is refused ----------------
def refused(name, change, cmd, want, expect=2):
    d = folder(name, sd, config(False, **change))
    p = H.run(*cmd(d), expect=expect) if cmd != "eval" else evaluate(d, name, expect=expect)
    H.check(want in p.stderr, "%s: exit %d naming %r (%s)" % (name, expect, want, p.stderr.strip().splitlines()[-1][:160]))


prof_cmd = lambda d: ["profile", d, "--no-tables"]  # noqa: E731
refused("layers-disagree", {"num_hidden_layers": 3}, prof_cmd, "config.json /num_hidden_layers")
refused("heads-disagree", {"num_attention_heads": 2, "head_dim": HD}, "eval", "config.json /num_attention_heads")
refused("unknown-family", {"model_type": "llama"}, prof_cmd, "/model_type")
# issue 50: a Qwen3 folder saying gemma3 was profiled as 1 + w (every gain off by one), exit 0
refused("type-contradicts", {"model_type": "gemma3"}, prof_cmd, "config.json /model_type: \"gemma3\" names preset gemma3, but the tensors' names are preset qwen3's")
refused("type-contradicts-eval", {"model_type": "gemma3"}, "eval", "config.json /model_type: \"gemma3\"")
refused("wrong-type", {"hidden_size": "32"}, prof_cmd, "config.json /hidden_size: expected a positive integer")
refused("hidden-disagree", {"hidden_size": 64}, prof_cmd, "config.json /hidden_size says d_model = 64")
refused("vocab-disagree", {"vocab_size": 5}, prof_cmd, "config.json /vocab_size says vocab_size = 5")
refused("yarn", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "eval", "config.json /rope_scaling")
d = os.path.join(work, "yarn")
yp = json.loads(H.run("profile", d, "--json", "-", "--no-tables").stdout)
H.check(yp["statistics"]["count"] == 2 * L * HD, "yarn: profile still reads the gains of a model eval cannot run")
empty = os.path.join(work, "no-config")
os.makedirs(empty)
shutil.copy(weights, empty)
p = H.run("profile", empty, "--no-tables", expect=2)
H.check("no config.json" in p.stderr, "a folder without config.json: exit 2 saying so")
noweights = os.path.join(work, "no-weights")
os.makedirs(noweights)
json.dump(config(False), open(os.path.join(noweights, "config.json"), "w"))
p = H.run("eval", noweights, "--tokens", tokpath, "--tokenizer-revision", "t", expect=2)
H.check("model.safetensors" in p.stderr, "a folder without weights: exit 2 naming what was looked for")

# --- 6. issue 50: a sharded set is verified shard by shard or not called verified; nothing read --
# through a folder (config.json, the weights, a shard, the index) is ever an output
tidx = os.path.join(tdir, "model.safetensors.index.json")
shard_names = sorted(f for f in os.listdir(tdir) if f.startswith("model-0"))
doc, _ = evaluate(tdir, "sharded-index-pin", "--sha256", sha(tidx))
c = doc["checkpoint"]
H.check(not c["sha256_verified"] and c["verified"] == "partial" and
        [s["sha256"] for s in c["shards"]] == [sha(os.path.join(tdir, f)) for f in shard_names] and
        not any(s["sha256_verified"] for s in c["shards"]),
        "eval SHARDED --sha256 <the index's>: each shard's digest recorded, the result 'partial', sha256_verified false")
bad_dir = os.path.join(work, "qwen3-tied-sharded-tampered")
shutil.copytree(tdir, bad_dir)
victim = os.path.join(bad_dir, shard_names[-1])
blob = bytearray(open(victim, "rb").read())
blob[-3] ^= 0x40  # a tensor's bytes: the file still parses, the scores move
open(victim, "wb").write(bytes(blob))
doc, _ = evaluate(bad_dir, "sharded-tampered", "--sha256", sha(tidx))
H.check(not doc["checkpoint"]["sha256_verified"] and doc["checkpoint"]["shards"][-1]["sha256"] == sha(victim),
        "eval of a tampered shard with the index's digest: never called verified, the tampered shard's digest recorded")
# eval --digests: one sha256sum list of the folder (`sha256sum DIR/*`: config.json, the index, every
# shard) pins the lot, as profile --digests does; a tampered shard it pins is exit 4 naming it
def listing(folder, path, names=None):
    with open(path, "w") as f:
        for n in sorted(names or os.listdir(folder)):
            f.write(sha(os.path.join(folder, n)) + "  " + os.path.join(folder, n) + "\n")
    return path
tlist = listing(tdir, os.path.join(work, "sharded.sha256"))
doc, _ = evaluate(tdir, "sharded-digests", "--digests", tlist)
c = doc["checkpoint"]
H.check(c["sha256_verified"] and c["verified"] == "all" and all(s["sha256_verified"] for s in c["shards"]) and c["folder"]["config_verified"],
        "eval SHARDED --digests LIST: the index, every shard and config.json verified (verified: all)")
doc, _ = evaluate(tdir, "sharded-digests-part", "--digests", listing(tdir, os.path.join(work, "part.sha256"),
                                                                      ["model.safetensors.index.json", shard_names[0]]))
c = doc["checkpoint"]
H.check(not c["sha256_verified"] and c["verified"] == "partial" and [s["sha256_verified"] for s in c["shards"]] == [True] + [False] * (len(shard_names) - 1),
        "eval --digests pinning one shard of two: that shard verified, the result 'partial', never sha256_verified")
bad_list = os.path.join(work, "tampered.sha256")  # the untouched folder's digests, naming the tampered copy's files
open(bad_list, "w").write(open(tlist).read().replace(tdir, bad_dir))
p = evaluate(bad_dir, "sharded-digests-tampered", "--digests", bad_list, expect=4)
H.check(shard_names[-1] + ": SHA-256 mismatch" in p.stderr, "eval --digests: a tampered shard the list pins is exit 4 naming it")
# a shard tampered so that it no longer parses: the pin outranks the format error it causes (exit 4
# naming the shard, as profile), from a --digests list and from a manifest's /checkpoint/shards alike
broken_dir = os.path.join(work, "qwen3-tied-sharded-broken")
shutil.copytree(tdir, broken_dir)
head = os.path.join(broken_dir, shard_names[-1])
blob = bytearray(open(head, "rb").read())
blob[9] ^= 0x20  # a byte of the JSON header: the shard no longer parses
open(head, "wb").write(bytes(blob))
broken_list = os.path.join(work, "broken.sha256")
open(broken_list, "w").write(open(tlist).read().replace(tdir, broken_dir))
p = evaluate(broken_dir, "sharded-digests-broken", "--digests", broken_list, expect=4)
H.check(shard_names[-1] + ": SHA-256 mismatch" in p.stderr, "eval --digests: a pinned shard that no longer parses is exit 4 naming it, not a format error")
# another file of the folder the list pins (tokenizer.json) is checked, as profile checks it; a
# misspelt shard name cannot be hashed: exit 2; two lists: exit 2, neither silently wins
extra_dir = os.path.join(work, "qwen3-tied-sharded-extra")
shutil.copytree(tdir, extra_dir)
open(os.path.join(extra_dir, "tokenizer.json"), "w").write("{}")
extra_list = os.path.join(work, "extra.sha256")
open(extra_list, "w").write(open(tlist).read().replace(tdir, extra_dir) + "0" * 64 + "  " + os.path.join(extra_dir, "tokenizer.json") + "\n")
p = evaluate(extra_dir, "sharded-digests-extra", "--digests", extra_list, expect=4)
H.check("tokenizer.json: SHA-256 mismatch" in p.stderr, "eval --digests: a listed file of the folder that differs is exit 4, as in profile")
typo_list = os.path.join(work, "typo.sha256")
open(typo_list, "w").write(open(tlist).read().replace(shard_names[0], shard_names[0].replace("00001", "0001")))
p = evaluate(tdir, "sharded-digests-typo", "--digests", typo_list, expect=2)
H.check("0001-of" in p.stderr, "eval --digests: a misspelt shard name is exit 2 naming it, not an unpinned shard")
p = evaluate(tdir, "sharded-digests-twice", "--digests", tlist, "--digests", tlist, expect=2)
H.check("--digests" in p.stderr, "eval --digests twice: exit 2")
stray = os.path.join(work, "stray.sha256")
open(stray, "w").write(open(tlist).read() + "0" * 64 + "  " + os.path.join(work, "elsewhere.safetensors") + "\n")
p = evaluate(tdir, "sharded-digests-stray", "--digests", stray, expect=2)
H.check("elsewhere.safetensors is not" in p.stderr, "eval --digests: a line naming a file outside the model is exit 2")
p = evaluate(tdir, "sharded-digests-disagree", "--digests", tlist, "--config-sha256", "0" * 64, expect=2)
H.check("disagree about" in p.stderr and "config.json" in p.stderr, "eval --digests and --config-sha256 disagreeing: exit 2 naming config.json")
before_list = open(tlist).read()
p = evaluate(tdir, "over-list", "--digests", tlist, "--json", tlist, "--force", expect=2)
H.check("is the input" in p.stderr and open(tlist).read() == before_list, "eval --json THE_DIGEST_LIST --force: exit 2, the list intact")
shutil.copy(tokpath, os.path.join(work, "tokens-m.bin"))
sm = dict(manifest, checkpoint={"path": "qwen3-tied-sharded", "sha256": sha(tidx),
                                "shards": {f: sha(os.path.join(tdir, f)) for f in shard_names}},
          output={"json": "sharded-sweep.json"})
smp = os.path.join(work, "manifest-sharded.json")
json.dump(sm, open(smp, "w"))
H.run("-q", "intervene", "--manifest", smp, "--force")
c = json.load(open(os.path.join(work, "sharded-sweep.json")))["checkpoint"]
H.check(c["sha256_verified"] and c["verified"] == "all" and all(s["sha256_verified"] for s in c["shards"]),
        "intervene: a manifest pinning the index and every shard (/checkpoint/shards) is verified whole")
json.dump(dict(sm, checkpoint=dict(sm["checkpoint"], path="qwen3-tied-sharded-tampered")), open(smp, "w"))
p = H.run("-q", "intervene", "--manifest", smp, "--force", expect=4)
H.check(shard_names[-1] + ": SHA-256 mismatch" in p.stderr, "intervene: a tampered shard the manifest pins is exit 4 naming it")
json.dump(dict(sm, checkpoint=dict(sm["checkpoint"], path="qwen3-tied-sharded-broken")), open(smp, "w"))
p = H.run("-q", "intervene", "--manifest", smp, "--force", expect=4)
H.check(shard_names[-1] + ": SHA-256 mismatch" in p.stderr, "intervene: a pinned shard that no longer parses is exit 4 naming it, not a format error")
json.dump(dict(sm, checkpoint=dict(sm["checkpoint"], shards={"model-9.safetensors": "0" * 64})), open(smp, "w"))
p = H.run("-q", "intervene", "--manifest", smp, "--force", expect=2)
H.check("/checkpoint/shards/model-9.safetensors: not a shard" in p.stderr, "intervene: a pinned shard the index does not name is exit 2")
before = {f: sha(os.path.join(tdir, f)) for f in os.listdir(tdir)}
json.dump(dict(sm, output={"json": "qwen3-tied-sharded/config.json"}), open(smp, "w"))
p = H.run("-q", "intervene", "--manifest", smp, "--force", expect=2)
H.check("is the input" in p.stderr, "intervene: /output/json naming the folder's config.json is exit 2, even with --force")
p = evaluate(tdir, "over-shard", "--json", os.path.join(tdir, shard_names[0]), "--force", expect=2)
H.check("is the input" in p.stderr, "eval --json SHARD_OF_THE_FOLDER --force: exit 2")
p = evaluate(tdir, "over-index", "--json", tidx, "--force", expect=2)
H.check("is the input" in p.stderr, "eval --json THE_INDEX --force: exit 2")
H.check(before == {f: sha(os.path.join(tdir, f)) for f in os.listdir(tdir)}, "nothing in the folder was written over")

# --- 7. issue 50: the hub cache's layout, and what a folder lacks or holds wrongly, named ----------
# the Hugging Face hub cache: each snapshot file a link into ../../blobs/ (two files may share a blob)
hub = os.path.join(work, "hub", "models--t--q")
snap = os.path.join(hub, "snapshots", "0123abc")
os.makedirs(os.path.join(hub, "blobs"))
os.makedirs(snap)
for f in sorted(os.listdir(qdir)):
    blob = os.path.join(hub, "blobs", sha(os.path.join(qdir, f)))
    if not os.path.exists(blob):
        shutil.copy(os.path.join(qdir, f), blob)
    os.symlink(os.path.join("..", "..", "blobs", os.path.basename(blob)), os.path.join(snap, f))
hsums = os.path.join(work, "SUMS-hub")
open(hsums, "w").write("".join("%s  %s\n" % (sha(os.path.join(snap, f)), os.path.join(snap, f)) for f in sorted(os.listdir(snap))))
hp = json.loads(H.run("profile", snap, "--digests", hsums, "--json", "-", "--no-tables").stdout)
H.check(hp["checkpoint"]["verified"] == "all", "profile --digests over the hub cache layout (links into blobs/): verified")
ht = json.loads(H.run("track", snap, "--order", "given", "--digests", hsums, "--json", "-").stdout)
H.check([c["sha256_verified"] for c in ht["checkpoints"]] == [True] and ht["summary"]["verified"] == 1,
        "track --digests over the hub cache layout (links into blobs/): accepted and verified, as profile does")
# `sha256sum blobs/*` lists the links' targets: the same files, each taken as the snapshot's (it read:
# "... is not model.safetensors" for config.json's blob), and eval takes the list's line for the tokens
bsums = os.path.join(work, "SUMS-blobs")
blobs = [os.path.join(hub, "blobs", b) for b in sorted(os.listdir(os.path.join(hub, "blobs")))]
open(bsums, "w").write("".join("%s  %s\n" % (sha(b), b) for b in blobs))
hp = json.loads(H.run("profile", snap, "--digests", bsums, "--json", "-", "--no-tables").stdout)
H.check(hp["checkpoint"]["verified"] == "all" and hp["checkpoint"]["folder"]["config_verified"],
        "profile --digests listing the hub cache's blobs/ (the links' targets): the weights and config.json verified")
ht = json.loads(H.run("track", snap, "--order", "given", "--digests", bsums, "--json", "-").stdout)
H.check([c["sha256_verified"] for c in ht["checkpoints"]] == [True], "track --digests listing blobs/: accepted and verified, as profile")
esums = os.path.join(work, "SUMS-blobs-and-tokens")
open(esums, "w").write(open(bsums).read() + "%s  %s\n" % (sha(tokpath), tokpath))
doc, _ = evaluate(snap, "hub-blobs", "--digests", esums)
tok_in = [i for i in doc["provenance"]["inputs"] if i["role"] == "tokens"]
H.check(doc["checkpoint"]["sha256_verified"] and doc["checkpoint"]["folder"]["config_verified"] and tok_in and tok_in[0]["verified"],
        "eval --digests listing blobs/ and the token file: the weights, config.json and the tokens verified")
os.unlink(os.path.join(hub, "blobs", sha(os.path.join(qdir, "model.safetensors"))))
p = H.run("profile", snap, "--no-tables", expect=2)
H.check(os.path.join(snap, "model.safetensors") + ": a dangling link" in p.stderr,
        "a weights file linking to a blob that is gone: exit 2 saying it is a dangling link")
dang = os.path.join(work, "dangling-config")
os.makedirs(dang)
shutil.copy(weights, dang)
os.symlink(os.path.join(work, "no-such-blob"), os.path.join(dang, "config.json"))
for cmd in (["profile", dang, "--no-tables"], ["eval", dang, "--tokens", tokpath, "--tokenizer-revision", "t"]):
    p = H.run(*cmd, expect=2)
    H.check(os.path.join(dang, "config.json") + ": a dangling link" in p.stderr and "has no config.json" not in p.stderr,
            "%s: a dangling config.json link is named as one (it read: has no config.json (it holds config.json, ...))" % cmd[0])
# a folder without the embedding, a projection of the wrong shape, an integer gain: each names the file
noemb = collections.OrderedDict((k, v) for k, v in sd.items() if k != NAMES["embedding"])
badshape = collections.OrderedDict(sd)
badshape[NAMES["wv"].replace("{i}", "1")] = torch.randn(NKV * HD // 2, D)
intgain = collections.OrderedDict(sd)
intgain[NAMES["q_norm"].replace("{i}", "0")] = torch.ones(HD, dtype=torch.int32)
for name, state, want in [("no-embedding", noemb, "tensor '%s' (embedding) is missing" % NAMES["embedding"]),
                          ("bad-shape", badshape, "tensor '%s': expected shape [16, 32], got [8, 32]" % NAMES["wv"].replace("{i}", "1")),
                          ("int-gain", intgain, "tensor '%s': expected a floating-point" % NAMES["q_norm"].replace("{i}", "0"))]:
    d = folder(name, state, config(False))
    p = evaluate(d, name, expect=2)
    H.check(os.path.join(d, "model.safetensors") + ": " + want in p.stderr,
            "eval %s: exit 2 naming the file and the tensor (%s)" % (name, p.stderr.strip().splitlines()[-1][:200]))
p = H.run("profile", os.path.join(work, "no-embedding"), "--no-tables", expect=2)
H.check(os.path.join(work, "no-embedding", "model.safetensors") + ": tensor '%s' (embedding) is missing" % NAMES["embedding"] in p.stderr,
        "profile of a folder without the embedding: exit 2 naming the file it looked in")
H.finish()
