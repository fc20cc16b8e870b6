#!/usr/bin/env bash
# The device tool carries at most 64 MiB a call: the tracked tree (about 20 MB now) plus the carried
# folder. make-kit.sh (../shared/gpu-kit) writes three parts of up to 50 MB, which no longer fit beside
# the tree. This re-cuts .gpukit/{a,b,c} into .gpukit/p0 ... pN of PART_MB (default 34) MB each, in
# the same byte order, with the same install script: carry one folder a call and run
#   bash .gpukit/p0/install-kit.sh .gpukit/p0      (... the same for p1 ... pN-1)
#   bash .gpukit/pN/install-kit.sh --finish .gpukit/pN
# (a small last part can travel with the one before it: install-kit.sh --finish .gpukit/pN-1 .gpukit/pN)
# (install-kit.sh joins kit.part* in name order: kit.part00, kit.part01, ...).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kit=$top/.gpukit
[ -f "$kit/a/install-kit.sh" ] || { echo "resplit-kit: no $kit/a (run ../shared/gpu-kit/make-kit.sh first)" >&2; exit 1; }
rm -rf "$kit"/p[0-9]* "$kit/split"
mkdir -p "$kit/split"
cat "$kit"/a/kit.part* "$kit"/b/kit.part* "$kit"/c/kit.part* | split -b "$(( ${PART_MB:-34} * 1000000 ))" -d -a 2 - "$kit/split/kit.part"
i=0
for part in "$kit"/split/kit.part*; do
  mkdir -p "$kit/p$i"
  mv "$part" "$kit/p$i/"
  cp "$kit/a/install-kit.sh" "$kit/p$i/"
  i=$((i + 1))
done
rmdir "$kit/split"
echo "resplit-kit: $i parts: $(cd "$kit" && ls -d p[0-9]* | tr '\n' ' ')(the last with --finish)"
