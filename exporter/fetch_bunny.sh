#!/usr/bin/env bash
# Fetch the Stanford bunny (npm package `bunny` 1.0.1, public domain; a low-resolution mesh of
# the Stanford 3D Scanning Repository's bunny: 1839 vertices, 3674 triangles) into a temporary
# folder (or the folder given as $1), convert it to JSON {"positions": [[x,y,z],...],
# "cells": [[i,j,k],...]} and print the path of that JSON file on stdout.
# Nothing is installed anywhere else; node_modules is never created.
#   usage: exporter/fetch_bunny.sh [DIR]     (needs npm and /usr/bin/python3)
set -euo pipefail
VERSION=1.0.1
SHA256=381e02c74b98cf18814d7bec794726ef70b9c67e037273e82054d0043f6ae303
dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bunny.XXXXXX")}
mkdir -p "$dir"
cd "$dir"
if [ ! -f "bunny-$VERSION.tgz" ]; then
  npm pack "bunny@$VERSION" --silent >/dev/null
fi
echo "$SHA256  bunny-$VERSION.tgz" | sha256sum -c --quiet - >&2 || {
  echo "fetch_bunny.sh: bunny-$VERSION.tgz does not have the expected sha256" >&2; exit 1; }
tar xzf "bunny-$VERSION.tgz" package/index.js
/usr/bin/python3 - "$dir/package/index.js" "$dir/bunny.json" <<'PY'
import json, re, sys
src = open(sys.argv[1]).read()
out = {}
for key in ("positions", "cells"):
    m = re.search(r"exports\.%s\s*=\s*(\[.*?\]\])" % key, src, re.S)
    out[key] = json.loads(m.group(1))
json.dump(out, open(sys.argv[2], "w"))
PY
echo "$dir/bunny.json"
