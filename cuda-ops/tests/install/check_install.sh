#!/usr/bin/env bash
# The installed library as a consumer sees it (ctest pvn3d_install_c_consumer):
#   1. cmake --install into a temporary prefix gives lib/libpvn3d_ops.so and include/pvn3d/: exactly
#      pvn3d_ops.h and the headers it includes, each including the others by plain name (no path,
#      nothing that is not installed beside it);
#   2. consumer.c, compiled as C99 with warnings as errors against <prefix>/include only and linked
#      against <prefix>/lib, runs: the version, one operator, one error, the device count;
#   3. pvn3d_ops.h alone declares every function the library exports and nothing it does not export:
#      a C file that takes the address of every exported pvn3d_* symbol (nm -D) compiles with only
#      <pvn3d/pvn3d_ops.h> included, and every function in the preprocessed header is exported.
#
#   bash check_install.sh <build dir> <C compiler> <cmake> <nm> <version> [<config>]
set -euo pipefail

build=${1:?usage: check_install.sh <build dir> <C compiler> <cmake> <nm> <version> [<config>]}
cc=$2
cmake=$3
nm=${4:-nm}
[ -n "$nm" ] || nm=nm
version=$5
config=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() {
  echo "FAIL: $*"
  exit 1
}

# ---- 1. the install tree -------------------------------------------------------------------------
args=(--install "$build" --prefix "$prefix")
[ -n "$config" ] && args+=(--config "$config")
"$cmake" "${args[@]}" >/dev/null
inc=$prefix/include/pvn3d
lib=$prefix/lib/libpvn3d_ops.so
[ -e "$lib" ] || fail "no lib/libpvn3d_ops.so after cmake --install"
[ -f "$inc/pvn3d_ops.h" ] || fail "no include/pvn3d/pvn3d_ops.h after cmake --install"
echo "installed:$(cd "$prefix" && find . \( -type f -o -type l \) | sort | sed 's|^\./| |' | tr -d '\n')"

# Every header reachable from pvn3d_ops.h through its quoted includes, each by plain name.
reached=" pvn3d_ops.h "
todo=(pvn3d_ops.h)
while [ ${#todo[@]} -gt 0 ]; do
  h=${todo[0]}
  todo=("${todo[@]:1}")
  while read -r name; do
    case $name in */*) fail "$h includes \"$name\": public headers include each other by plain name" ;; esac
    [ -f "$inc/$name" ] || fail "$h includes \"$name\", which is not installed in include/pvn3d/"
    case $reached in
      *" $name "*) ;;
      *)
        reached="$reached$name "
        todo+=("$name")
        ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$inc/$h")
done
for f in "$inc"/*; do
  name=$(basename "$f")
  case $reached in *" $name "*) ;; *) fail "include/pvn3d/$name is installed but pvn3d_ops.h does not include it" ;; esac
done
echo "public headers:$reached"

# ---- 2. a C consumer of the install tree only ------------------------------------------------------
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$prefix/include" "$here/consumer.c" -o "$work/consumer" \
  -L"$prefix/lib" -lpvn3d_ops -Wl,-rpath,"$prefix/lib" || fail "consumer.c does not compile against the install tree"
"$work/consumer" "$version" || fail "the consumer failed"

# ---- 3. pvn3d_ops.h declares exactly what the library exports -------------------------------------
"$nm" -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sort -u >"$work/all_exported.txt"
grep '^pvn3d_' "$work/all_exported.txt" >"$work/exported.txt" || fail "libpvn3d_ops.so exports no pvn3d_* symbol"
if grep -qv '^pvn3d_' "$work/all_exported.txt"; then
  fail "libpvn3d_ops.so exports symbols outside pvn3d_*: $(grep -v '^pvn3d_' "$work/all_exported.txt" | tr '\n' ' ')"
fi
echo '#include <pvn3d/pvn3d_ops.h>' | "$cc" -std=c99 -E -P -I"$prefix/include" -x c - |
  grep -oE '\bpvn3d_[A-Za-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:]]*($//' | sort -u >"$work/declared.txt"
missing=$(comm -13 "$work/declared.txt" "$work/exported.txt" | tr '\n' ' ')
{
  echo '#include <pvn3d/pvn3d_ops.h>'
  echo 'typedef void (*pvn3d_any_function)(void);'
  echo 'pvn3d_any_function const pvn3d_every_export[] = {'
  sed 's/.*/  (pvn3d_any_function)\&&,/' "$work/exported.txt"
  echo '};'
} >"$work/every_export.c"
if ! "$cc" -std=c99 -Wall -Werror -I"$prefix/include" -c "$work/every_export.c" -o "$work/every_export.o"; then
  fail "exported but not declared by pvn3d_ops.h: ${missing:-(see the compiler errors above)}"
fi
[ -z "$missing" ] || fail "exported but not declared by pvn3d_ops.h: $missing"
extra=$(comm -23 "$work/declared.txt" "$work/exported.txt" | tr '\n' ' ')
[ -z "$extra" ] || fail "declared by pvn3d_ops.h but not exported: $extra"
echo "pvn3d_ops.h declares all $(wc -l <"$work/exported.txt") exported functions, and no other"
echo "PASS"
