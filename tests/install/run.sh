#!/usr/bin/env bash
# run.sh BUILD_DIR SOURCE_DIR: installs the build into a temporary prefix, builds tests/install (a project outside the
# tree that uses find_package(swgpu)) against it, and runs it on the bundled demo data. The package must need nothing
# but a C++20 compiler: its CMake files look for no other package, its headers include only each other and the
# standard library, and the consumer links swgpu's one shared library (none of HTSlib, libpng, libtiff or CUDA).
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
fail() { echo "FAIL $*"; exit 1; }
if grep -nE "^[^#]*(find_dependency|find_package|pkg_check_modules)\(" "$tmp/prefix/lib/cmake/swgpu/"*.cmake; then
  fail "the installed CMake package looks for other packages"
fi
[ "$(ls "$tmp/prefix/include")" = swgpu ] || fail "the installed headers are not all under include/swgpu"
grep -rhoE '#include <[^>]+>' "$tmp/prefix/include/swgpu" | grep -vE '<(c[a-z]+|[a-z_]+)>' && fail "an installed header includes a non-standard header"
echo "ok   the package needs no other package, its headers only the standard library"
cmake -S "$src/tests/install" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j2 > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
needed=$(readelf -d "$tmp/build/consumer" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in *libswgpu.so*) ;; *) fail "the consumer does not link libswgpu.so ($needed)";; esac
if echo "$needed" | grep -qE "hts|png|tiff|cuda"; then fail "the consumer links more than swgpu: $needed"; fi
echo "ok   the consumer links $needed"
"$tmp/build/consumer" "$src/data/demo_queries.fa" "$src/data/demo_db.fa"
"$tmp/build/numerics_only"
