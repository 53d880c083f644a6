#!/usr/bin/env bash
# omn-audit tokenize from the outside: the token set it writes is one eval reads as it is (each file
# one document), the tokenizer revision is the tokenizer's SHA-256, nothing is added unless asked,
# and what it cannot do is exit 2 naming the file and the JSON pointer. Needs no network: the demo's
# SentencePiece model and small tokenizer.json files made here (the comparison with transformers.js
# on the real Qwen3 and Gemma 3 tokenizers is tests/tokenizer/check_tokenize.sh).
set -u
omn="$1" src="$3"
source "$(dirname "$0")/lib.sh"
spm="$src/demo/tiny-sotu/tokenizer.model"
printf 'The Congress of the United States.\nFellow citizens.\n' >"$tmp/a.txt"
printf 'A second document, with caf\xc3\xa9 and \xe6\x97\xa5\xe6\x9c\xac.\n' >"$tmp/b.txt"
: >"$tmp/empty.txt"

# SentencePiece: two documents, offsets at their starts, the digest as the revision
expect 0 "wrote .*a.npy" -- "$omn" tokenize "$tmp/a.txt" "$tmp/empty.txt" "$tmp/b.txt" --tokenizer "$spm" -o "$tmp/a.npy"
rev="$(sha256sum "$spm" | cut -c1-64)"
check "the record names the tokenizer's SHA-256 as the revision and each document" -- /usr/bin/python3 - "$tmp/a.tokens.json" "$rev" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "omn-audit/tokens@1" and r["tokenizer_revision"] == sys.argv[2], r["tokenizer_revision"]
d = r["documents"]
assert [x["tokens"] > 0 for x in d] == [True, False, True] and d[2]["start"] == d[0]["tokens"], d
assert r["offsets"]["n_documents"] == 2 and r["special_tokens"]["added_after_each_document"] == []
assert r["eval_arguments"][-1] == sys.argv[2]
PY
expect 2 "exists" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/a.npy"
expect 0 "wrote" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/a.npy" --force
# --add-eos: the model's EOS after each document; the demo model has no BOS
expect 0 "wrote" -- "$omn" tokenize "$tmp/a.txt" "$tmp/b.txt" --tokenizer "$spm" -o "$tmp/eos.bin" --add-eos
check "--add-eos ends each document with EOS (id 1), u16 raw" -- /usr/bin/python3 -c "
import struct, sys; b = open('$tmp/eos.bin','rb').read(); ids = struct.unpack('<%dH' % (len(b)//2), b)
assert ids[-1] == 1 and ids.count(1) == 2, ids"
expect 2 "names no bos token.*--bos-token" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/bos.npy" --add-bos
expect 2 "not a token of this tokenizer" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/bos.npy" --bos-token "<nope>"

# tokenizer.json in a model folder; what is not supported names its pointer
mkdir -p "$tmp/model"
/usr/bin/python3 - "$tmp/model/tokenizer.json" <<'PY'
import json, sys
letters = sorted(set("thecongressofunitdaFlwizAcd,."))
vocab = {c: i for i, c in enumerate(letters)}
for b in range(256):
    vocab["<0x%02X>" % b] = len(vocab)
vocab["\u2581"] = len(vocab); vocab["\u2581t"] = len(vocab); vocab["th"] = len(vocab); vocab["<unk>"] = len(vocab)
json.dump({"version": "1.0", "added_tokens": [{"id": vocab["<unk>"], "content": "<unk>", "special": True}],
           "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                             {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
           "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "vocab": vocab, "merges": [["\u2581", "t"], ["t", "h"]], "unk_token": "<unk>",
                     "byte_fallback": True, "fuse_unk": True}}, open(sys.argv[1], "w"))
PY
expect 0 "wrote" -- "$omn" tokenize "$tmp/a.txt" "$tmp/b.txt" --tokenizer "$tmp/model" -o "$tmp/f.npy"
check "a folder's tokenizer.json is the one read and hashed" -- grep -q "$(sha256sum "$tmp/model/tokenizer.json" | cut -c1-64)" "$tmp/f.tokens.json"
sed 's/"type": "BPE"/"type": "WordPiece"/' "$tmp/model/tokenizer.json" >"$tmp/wp.json"
expect 2 "wp.json: /model/type: \"WordPiece\" is not supported" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$tmp/wp.json" -o "$tmp/wp.npy"
sed 's/"type": "Prepend"/"type": "Precompiled"/' "$tmp/model/tokenizer.json" >"$tmp/pc.json"
expect 2 "/normalizer/normalizers/0/type: \"Precompiled\" is not supported" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$tmp/pc.json" -o "$tmp/pc.npy"
printf '{"model": ' >"$tmp/cut.json"
expect 2 "cut.json.*not valid JSON" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$tmp/cut.json" -o "$tmp/cut.npy"
expect 2 "no such file or folder" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$tmp/nothing" -o "$tmp/n.npy"
mkdir -p "$tmp/bare"
expect 2 "without tokenizer.json or tokenizer.model" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$tmp/bare" -o "$tmp/n.npy"
printf 'bad \xff byte' >"$tmp/latin1.txt"
expect 2 "latin1.txt: byte 4 is not UTF-8" -- "$omn" tokenize "$tmp/latin1.txt" --tokenizer "$spm" -o "$tmp/l.npy"
expect 2 "name the token file" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/out.json"
expect 2 "same file|is an input|input" -- "$omn" tokenize "$tmp/a.txt" --tokenizer "$spm" -o "$tmp/a.txt" --force

# eval reads it with no conversion: the demo model on the demo tokenizer's ids
if [ -f "$src/demo/tiny-sotu/final.pt" ] && "$omn" --help 2>/dev/null | grep -q " eval"; then
  expect 0 "perplexity|Perplexity|ppl" -- "$omn" eval "$src/demo/tiny-sotu/final.pt" --tokens "$tmp/a.npy" --offsets "$tmp/a.offsets.npy" \
    --tokenizer-revision "$rev" --seq-len 8 --num-seqs 2 --groups 1 --row-form per-document --bootstrap-resamples 100 --threads 1
fi
finish
