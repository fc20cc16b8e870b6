#!/usr/bin/env bash
# Fetches the Stanford bunny (npm package `bunny`, public domain, 1839 vertices) and writes its vertex
# positions as text to <out dir>/bunny_positions.txt: the vertex count, then one "x y z" line each.
# The native tests read that file (ctest passes --bunny <build dir>/bunny_positions.txt).
#
#   bash cuda-ops/tests/fetch_bunny.sh <out dir>      # usually the CMake build directory
#
# Needs npm and node (and the network, or an npm cache that holds bunny@1.0.1). Does nothing when the
# file is already there. Exit status non-zero on failure, with a message.
set -euo pipefail

out_dir="${1:?usage: fetch_bunny.sh <out dir>}"
version="1.0.1"
target="${out_dir}/bunny_positions.txt"
mkdir -p "${out_dir}"
if [[ -s "${target}" ]]; then
  echo "fetch_bunny: ${target} already present"
  exit 0
fi
for tool in npm node tar; do
  command -v "${tool}" >/dev/null || { echo "fetch_bunny: '${tool}' not found" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
(cd "${work}" && npm pack --silent "bunny@${version}" >/dev/null)
tarball="$(ls "${work}"/bunny-*.tgz 2>/dev/null | head -n 1)"
[[ -n "${tarball}" ]] || { echo "fetch_bunny: npm pack bunny@${version} produced no tarball" >&2; exit 1; }
tar -xzf "${tarball}" -C "${work}"

node -e '
  const b = require(process.argv[1]);
  if (!Array.isArray(b.positions) || b.positions.length === 0) throw new Error("no positions in bunny package");
  const lines = [String(b.positions.length)];
  for (const p of b.positions) {
    if (p.length !== 3 || !p.every(Number.isFinite)) throw new Error("bad vertex " + JSON.stringify(p));
    lines.push(p.join(" "));
  }
  require("fs").writeFileSync(process.argv[2], lines.join("\n") + "\n");
' "${work}/package" "${target}.tmp"
mv "${target}.tmp" "${target}"
echo "fetch_bunny: wrote $(head -n 1 "${target}") vertices to ${target}"
