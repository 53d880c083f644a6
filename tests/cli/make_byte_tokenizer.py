#!/usr/bin/python3
"""A byte-level BPE tokenizer.json as GPT-2, Qwen3 and Llama 3 write them (ByteLevel pre-tokenizer
with its split regex, the byte-to-character map as the vocabulary), 256 byte tokens, a few merges and <|endoftext|> as the BOS its post-processor adds:
a real format at a test's size, offline.

usage: make_byte_tokenizer.py OUT.json
"""
import json
import sys


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


chars = bytes_to_unicode()
vocab = {chars[b]: b for b in range(256)}
merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("e", "r")]
for a, b in merges:
    vocab[a + b] = len(vocab)
eot = "<|endoftext|>"  # a special token, and the BOS the post-processor adds (as Llama 3's names its own)
doc = {
    "version": "1.0", "truncation": None, "padding": None, "normalizer": None,
    "added_tokens": [{"id": len(vocab), "content": eot, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                      "special": True}],
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": eot, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [{"SpecialToken": {"id": eot, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                {"Sequence": {"id": "B", "type_id": 1}}],
                       "special_tokens": {eot: {"id": eot, "ids": [len(vocab)], "tokens": [eot]}}},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
              "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": [a + " " + b for a, b in merges]},
}
json.dump(doc, open(sys.argv[1], "w", encoding="utf-8"), ensure_ascii=False)
