#!/usr/bin/python3
"""A Qwen3-shaped Hugging Face model folder for the CLI tests: Qwen3's config.json keys and tensor
names, tiny sizes (2 layers, d 32), random weights (numpy, written as safetensors), and the
tokenizer files given copied beside them.

usage: make_qwen3_folder.py DIR VOCAB GAIN_SCALE [TOKENIZER_FILE...]
"""
import json, os, shutil, sys
import numpy as np
d, vocab, gscale, tok = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
os.makedirs(d)
D, NH, NKV, HD, F, L = 32, 4, 2, 8, 64, 2
rng = np.random.default_rng(7)
r = lambda *s: (rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32)  # noqa: E731
sd = {"model.embed_tokens.weight": (0.5 * rng.standard_normal((vocab, D))).astype(np.float32)}
for i in range(L):
    p = "model.layers.%d." % i
    sd[p + "input_layernorm.weight"] = np.ones(D, np.float32)
    sd[p + "self_attn.q_proj.weight"], sd[p + "self_attn.k_proj.weight"] = r(NH * HD, D), r(NKV * HD, D)
    sd[p + "self_attn.v_proj.weight"], sd[p + "self_attn.o_proj.weight"] = r(NKV * HD, D), r(D, NH * HD)
    sd[p + "self_attn.q_norm.weight"] = (gscale * (1 + 2 * rng.random(HD))).astype(np.float32)
    sd[p + "self_attn.k_norm.weight"] = (gscale * (1 + 2 * rng.random(HD))).astype(np.float32)
    sd[p + "post_attention_layernorm.weight"] = np.ones(D, np.float32)
    sd[p + "mlp.gate_proj.weight"], sd[p + "mlp.up_proj.weight"], sd[p + "mlp.down_proj.weight"] = r(F, D), r(F, D), r(D, F)
sd["model.norm.weight"] = np.ones(D, np.float32)
header, blobs, off = {}, [], 0
for k, v in sd.items():
    b = v.tobytes()
    header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
    blobs.append(b)
    off += len(b)
header["__metadata__"] = {"format": "pt"}
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(d, "model.safetensors"), "wb") as f:
    f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))
json.dump({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": D, "num_attention_heads": NH,
           "num_key_value_heads": NKV, "head_dim": HD, "intermediate_size": F, "num_hidden_layers": L,
           "vocab_size": vocab, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
           "rope_scaling": None, "tie_word_embeddings": True, "hidden_act": "silu", "attention_bias": False,
           "use_sliding_window": False, "sliding_window": None, "torch_dtype": "float32"},
          open(os.path.join(d, "config.json"), "w"), indent=2)
for t in tok:
    shutil.copy(t, d)
