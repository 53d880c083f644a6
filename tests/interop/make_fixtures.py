#!/usr/bin/python3
"""Writes the interop and hostile-input fixtures with Debian's real PyTorch, plus expected.json:
every tensor's dtype, shape and values as Python itself reads them (the independent side).

  make_fixtures.py OUT_DIR
"""
import collections
import json
import math
import os
import pickle
import struct
import sys
import zipfile

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
expected = {}
torch.manual_seed(7)

ST_DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32", torch.float64: "F64",
             torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
             torch.uint8: "U8", torch.bool: "BOOL"}


def describe(sd):
    return {k: {"dtype": ST_DTYPES[v.dtype], "shape": list(v.shape),
                "values": [float(x) for x in v.reshape(-1).double().tolist()]}
            for k, v in sd.items() if isinstance(v, torch.Tensor)}


def save(name, obj, sd):
    torch.save(obj, os.path.join(out, name))
    expected[name] = {"tensors": describe(sd)}


# 1. an OrderedDict state dict with _metadata, from a real module
module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2, bias=False))
sd = module.state_dict()
assert hasattr(sd, "_metadata")
save("od_metadata.pt", sd, sd)
expected["od_metadata.pt"]["module_metadata_entries"] = len(sd._metadata)

# 2. an envelope: the state dict beside nested metadata of every plain kind
env = {"model": sd, "step": 734000, "lr": 3e-4, "flags": [True, False, None], "name": "omn-δ",
       "nested": {"list": [1, -2, 2.5, "x", [3, {"k": None}]], "tuple": (1, 2), "big": 2 ** 40, "neg": -7},
       "blob": b"\x00\xffab", "set": {1}}
save("envelope.pt", env, sd)
expected["envelope.pt"]["metadata"] = {
    "step": 734000, "lr": 3e-4, "flags": [True, False, None], "name": "omn-δ",
    "nested": {"list": [1, -2, 2.5, "x", [3, {"k": None}]], "tuple": [1, 2], "big": 2 ** 40, "neg": -7},
    "blob": {"$bytes": 4}, "set": [1]}

# 3. tied tensors sharing one storage
w = torch.randn(5, 4)
tied = collections.OrderedDict([("embed.weight", w), ("head.weight", w), ("bias", torch.zeros(4))])
save("tied.pt", tied, tied)

# 4. non-contiguous views with offsets into a shared base
base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
views = collections.OrderedDict([("block", base[1:4, 2:7]), ("transposed", base.t()), ("every_other", base[:, ::2]),
                                 ("row", base[5]), ("scalar", base[2, 3])])
save("views.pt", views, views)

# 5. every dtype, with awkward values (BF16 keeps its bits: 68.5, -0.050048828125, subnormal half)
dt = collections.OrderedDict()
dt["bf16"] = torch.tensor([68.5, -0.050048828125, 1.0078125, 3.0e38], dtype=torch.bfloat16)
dt["f16"] = torch.tensor([1.5, -2.0, 6.0e-8, 65504.0], dtype=torch.float16)
dt["f32"] = torch.tensor([math.pi, -1e-30, 1e30], dtype=torch.float32)
dt["f64"] = torch.tensor([math.e, -1e-300], dtype=torch.float64)
dt["i64"] = torch.tensor([-(2 ** 40), 2 ** 40], dtype=torch.int64)
dt["i32"] = torch.tensor([-5, 2 ** 31 - 1], dtype=torch.int32)
dt["i16"] = torch.tensor([-300, 300], dtype=torch.int16)
dt["i8"] = torch.tensor([-128, 127], dtype=torch.int8)
dt["u8"] = torch.tensor([0, 255], dtype=torch.uint8)
dt["bool"] = torch.tensor([True, False, True])
save("dtypes.pt", dt, dt)


# 6. safetensors, written to the format's specification (header JSON sorted by offset)
def write_safetensors(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    for k, v in tensors.items():
        data = v.contiguous().view(torch.uint8).numpy().tobytes() if v.numel() else b""
        if v.dtype == torch.bool:
            data = v.to(torch.uint8).numpy().tobytes()
        header[k] = {"dtype": ST_DTYPES[v.dtype], "shape": list(v.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


st = collections.OrderedDict([("a.weight", torch.randn(3, 4).to(torch.bfloat16)), ("b.bias", torch.arange(5, dtype=torch.int32)),
                              ("c.mask", torch.tensor([True, False])), ("d.empty", torch.zeros(0, 3))])
write_safetensors(os.path.join(out, "model.safetensors"), st, {"format": "pt", "note": "omn"})
expected["model.safetensors"] = {"tensors": describe(st), "metadata": {"format": "pt", "note": "omn"}}

shard1 = collections.OrderedDict([("x.weight", torch.randn(2, 2)), ("y.weight", torch.randn(3))])
shard2 = collections.OrderedDict([("z.weight", torch.randn(4).to(torch.float16))])
write_safetensors(os.path.join(out, "model-00001-of-00002.safetensors"), shard1, {"format": "pt"})
write_safetensors(os.path.join(out, "model-00002-of-00002.safetensors"), shard2, {"format": "pt"})
index = {"metadata": {"total_size": 32}, "weight_map": {"x.weight": "model-00001-of-00002.safetensors",
                                                        "y.weight": "model-00001-of-00002.safetensors",
                                                        "z.weight": "model-00002-of-00002.safetensors"}}
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump(index, f)
expected["model.safetensors.index.json"] = {"tensors": describe({**shard1, **shard2})}

# 7. HF-style QK-norm checkpoints for preset detection (tiny, 2 layers)
def hf(prefix_norms, q_len, k_len, extra):
    d = collections.OrderedDict()
    for i in range(2):
        p = "model.layers.%d." % i
        d[p + "self_attn.q_norm.weight"] = torch.linspace(-0.5, 0.5, q_len) + i
        d[p + "self_attn.k_norm.weight"] = torch.linspace(0.0, 1.0, k_len) + i
        for e in extra:
            d[p + e + ".weight"] = torch.ones(8)
    return d


hfs = {"qwen3.safetensors": hf(None, 16, 16, ["input_layernorm", "post_attention_layernorm"]),
       "olmo2.safetensors": hf(None, 256, 128, ["post_attention_layernorm", "post_feedforward_layernorm"]),
       "gemma3.safetensors": hf(None, 16, 16, ["input_layernorm", "pre_feedforward_layernorm",
                                               "post_feedforward_layernorm", "post_attention_layernorm"])}
for name, d in hfs.items():
    write_safetensors(os.path.join(out, name), d)
    expected[name] = {"tensors": describe(d)}

# a sharded HF checkpoint with gains (profile --digests pins each shard): layer 0 and layer 1 apart
qs = hfs["qwen3.safetensors"]
qdir = os.path.join(out, "qwen3-sharded")
os.makedirs(qdir, exist_ok=True)
qmap = {}
for i in range(2):
    part = collections.OrderedDict((k, v) for k, v in qs.items() if k.startswith("model.layers.%d." % i))
    fname = "model-%05d-of-00002.safetensors" % (i + 1)
    write_safetensors(os.path.join(qdir, fname), part, {"format": "pt"})
    qmap.update({k: fname for k in part})
with open(os.path.join(qdir, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {}, "weight_map": qmap}, f)

# 8. hostile pickles: each would create a marker file if anything executed it
class Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


def archive(name, pkl):
    with zipfile.ZipFile(os.path.join(out, name), "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


marker = os.path.join(out, "MARKER_PWNED")
import subprocess  # noqa: E402  (only its name is pickled)
archive("evil_os_system.pt", pickle.dumps(Evil(os.system, "touch " + marker), protocol=2))
archive("evil_eval.pt", pickle.dumps(Evil(eval, "open(%r,'w')" % marker), protocol=2))
archive("evil_popen.pt", pickle.dumps(Evil(subprocess.Popen, ["touch", marker]), protocol=2))
archive("evil_nested.pt", pickle.dumps({"model": collections.OrderedDict(), "meta": {"x": [1, Evil(os.system, "touch " + marker)]}},
                                       protocol=2))
# STACK_GLOBAL (protocol 4) and INST (protocol 0) forms of the same call
def uni(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


cmd = "touch " + marker
archive("evil_stack_global.pt", b"\x80\x02" + uni("posix") + uni("system") + b"\x93" + uni(cmd) + b"\x85R.")
archive("evil_inst.pt", b"\x80\x02(" + uni(cmd) + b"iposix\nsystem\n.")
archive("evil_protocol4.pt", pickle.dumps(Evil(os.system, cmd), protocol=4))

# 9. corrupt files
good = open(os.path.join(out, "od_metadata.pt"), "rb").read()
open(os.path.join(out, "truncated.pt"), "wb").write(good[: len(good) // 2])
flipped = bytearray(good)
pk = good.find(b"data.pklPK") if b"data.pklPK" in good else good.find(b"data.pkl")
# flip a byte inside the pickle record (CRC-32 catches it)
pos = good.find(b"\x80\x02")
flipped[pos + 10] ^= 0xFF
open(os.path.join(out, "flipped.pt"), "wb").write(bytes(flipped))
# a central-directory entry whose local-header offset points past the end of the file
cd = bytearray(good)
i = cd.rfind(b"PK\x01\x02")
cd[i + 42:i + 46] = struct.pack("<I", 0xFFFFFFF0 - 1)
open(os.path.join(out, "past_end.pt"), "wb").write(bytes(cd))
with open(os.path.join(out, "huge_header.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", 2 ** 63) + b"{}")
hdr = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
with open(os.path.join(out, "overlap.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 12)
torch.save(collections.OrderedDict([("w", torch.ones(2))]), os.path.join(out, "legacy.pt"),
           _use_new_zipfile_serialization=False)

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
print("fixtures written to", out)
