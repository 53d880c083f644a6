#!/usr/bin/env bash
# Untrusted documents: the profiles, sweep results, shards and tracks omn-audit reads back are
# damaged every way a careless edit or a hostile author would, and every reader must refuse them
# with exit 2 naming the JSON pointer (tests/cli/check_documents.py does the damage).
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini_manifest 3
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/m.json" --mechanism
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/m.json" --shard 0/2 -o "$tmp/shard0.json"
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/m.json" --shard 1/2 -o "$tmp/shard1.json"
expect 0 "" -- "$omn" profile "$tmp/omn1-mini.pt" --json "$tmp/profile.json" --no-tables
expect 0 "" -- "$omn" track "$tmp/omn1-mini.pt" "$fx/omn1-mini-perturbed.pt" --order given --json "$tmp/track.json"
check "damaged documents: exit 0 or 2 naming the pointer, never 1, a signal or a hang" -- \
  /usr/bin/python3 "$src/tests/cli/check_documents.py" "$omn" "$tmp/omn1-mini.pt" "$tmp/profile.json" "$tmp/sweep.json" \
  "$tmp/shard0.json" "$tmp/shard1.json" "$tmp/track.json" "$tmp/work"
finish
